/* column.h - a typed array, as operators see it: either in one device's memory
 * (dev != NULL, mem) or in host memory (dev == NULL, host), in which case the
 * residency cache (residency.h) keeps copies of it on devices. */
#ifndef COPROC_COLUMN_H
#define COPROC_COLUMN_H

#include "backend/opencl/device.h"

struct coproc_column {
    coproc_runtime *rt;
    coproc__device *dev;  /* NULL: a host column */
    coproc_type type;
    size_t length;   /* elements */
    cl_mem mem;      /* device columns: never NULL (an empty column holds a small
                        placeholder buffer); host columns: NULL */
    /* Host columns: the rows; borrowed (coproc_column_wrap) or owned (results,
     * coproc_column_host_alloc). NULL only when length is 0. */
    void *host;
    int host_owned;  /* free(host) on free */
    cl_mem pinned;   /* host lies in this mapped pinned buffer (released on free) */
    coproc__device *pinned_dev; /* the device whose context made `pinned` */
    uint64_t id;     /* host columns: unique in the runtime, the residency cache's key */
    /* mem wraps caller memory (CL_MEM_USE_HOST_PTR): released, never pooled. */
    int host_wrapped;
    /* Optional hook called once by coproc_column_free after mem is released,
     * e.g. to release the Arrow array whose buffer mem wraps. */
    void (*on_free)(void *ctx);
    void *on_free_ctx;
    /* A dictionary-encoded string column: its strings (INT32 codes index
     * them); a reference, dropped on free. NULL for other columns. */
    struct coproc__dict *dict;
    /* Nulls (coproc.h, coproc_column_set_validity): NULL when every row is
     * valid, else a UINT32 bitmap column of ceil(length / 32) words of the same
     * runtime and place (the same device; a host column for a host column),
     * bit i % 32 of word i / 32 set when row i is valid. Owned: freed with the
     * column. A bitmap never has a validity of its own. */
    coproc_column *validity;
    int is_validity; /* this column is another column's validity (owned by it) */
};

/* Whether a column (NULL: no) carries a validity bitmap. Operators that run
 * on device columns test their inputs with it; without one they take their
 * null-free path unchanged. */
static inline int coproc__has_nulls(const coproc_column *c)
{
    return c && c->validity;
}

/* The column as if it had no validity: a shallow copy (the same buffers) for
 * handing to a null-free run. Never freed. */
static inline coproc_column coproc__without_nulls(const coproc_column *c)
{
    coproc_column v = *c;
    v.validity = NULL;
    return v;
}

/* Attach `bitmap` (owned from now on) as col's validity, with no checks
 * (internal: operators' outputs, made right). */
static inline void coproc__attach_validity(coproc_column *col, coproc_column *bitmap)
{
    col->validity = bitmap;
    if (bitmap)
        bitmap->is_validity = 1;
}

/* A new column of `length` elements of type t on dev, uninitialised (internal: no checks on rt). */
coproc_status coproc__column_new(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                 size_t length, coproc_column **out);

/* A column around an existing buffer of at least length elements; takes
 * ownership of mem (released on failure too). */
coproc_status coproc__column_wrap_mem(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                      size_t length, cl_mem mem, coproc_column **out);

/* A column over `length` elements of caller memory at host (CL_MEM_USE_HOST_PTR:
 * zero-copy on host-unified devices). host must stay valid and unchanged until
 * the column is freed (set on_free to learn when); length must be > 0. */
coproc_status coproc__column_wrap_host(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                       size_t length, void *host, coproc_column **out);

/* A new device buffer of `bytes` (at least 16 bytes are allocated). */
coproc_status coproc__buffer_new(coproc_runtime *rt, coproc__device *dev, size_t bytes,
                                 cl_mem *out);

/* A new host column of `length` rows owning malloc'd memory (uninitialised). */
coproc_status coproc__host_column_new(coproc_runtime *rt, coproc_type t, size_t length,
                                      coproc_column **out);

/* A new device column on dev holding a copy of the device column src. */
coproc_status coproc__column_copy(coproc_runtime *rt, coproc__device *dev,
                                  const coproc_column *src, coproc_column **out);

/* The host memory of host column col was written in place (an internal
 * temporary the query engine fixes up on the host): drop the copies the
 * devices' residency caches keep of it, which would be stale. None may be
 * pinned (no operator is reading col). */
void coproc__column_host_changed(coproc_column *col);

/* Check a column argument: non-NULL, of rt, optionally on `dev` (NULL: any). */
coproc_status coproc__column_check(coproc_runtime *rt, const coproc_column *col,
                                   const coproc__device *dev, const char *what);

#endif
