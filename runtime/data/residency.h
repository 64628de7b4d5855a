/* residency.h - per device, the copies of host columns kept in device memory
 * (the residency cache), within the device's budget. Least-recently-used
 * copies are evicted first; a pinned copy (one a running operator uses) is
 * never evicted. On a host-unified device with zero-copy the "copy" is a buffer
 * over the host memory itself: nothing moves and nothing counts against the
 * budget. Thread-safe. */
#ifndef COPROC_RESIDENCY_H
#define COPROC_RESIDENCY_H

#include <stdatomic.h>
#include <stdint.h>

#include "data/column.h"

typedef struct coproc__resident {
    uint64_t col_id;   /* host column's id */
    cl_mem mem;
    size_t bytes;      /* counted against the budget (0 for zero-copy) */
    int pins;
    int loading;       /* being copied in: mem not usable yet (wait on `loaded`) */
    uint64_t stamp;    /* last use */
} coproc__resident;

typedef struct coproc__residency {
    pthread_mutex_t lock;
    pthread_cond_t loaded;  /* an entry finished (or failed) loading */
    coproc__resident *e;
    size_t n, cap;
    uint64_t used;     /* sum of bytes */
    uint64_t reserved; /* working memory running operators hold (coproc__residency_reserve) */
    uint64_t clock;
    atomic_uint_fast64_t hits, misses, evictions, prefetches;
    /* Admission of query pipelines by their memory footprint (admission.c). */
    pthread_cond_t released;  /* an admitted pipeline gave its bytes back */
    uint64_t admitted;        /* footprints of the pipelines running now */
    uint64_t admitted_peak;   /* the most `admitted` has been */
    uint64_t admission_waits; /* pipelines that waited for room */
    int admitted_n;           /* pipelines running now */
    double busy_until;        /* runtime clock: when they are estimated to end */
} coproc__residency;

coproc_status coproc__residency_init(coproc__residency *r);
void coproc__residency_release_all(coproc__residency *r);

/* The device buffer holding host column `col` on dev, copied there (counted,
 * staged) if it is not cached yet; pinned until coproc__residency_unpin.
 * *hit (may be NULL) tells whether it was cached. DEVICE_OUT_OF_MEMORY when it
 * cannot fit in the budget even after evicting every unpinned copy. A copy
 * another thread is making is waited for, not made twice. */
coproc_status coproc__residency_acquire(coproc_runtime *rt, coproc__device *dev,
                                        const coproc_column *col, cl_mem *out, int *hit);

/* Copy col to dev ahead of use, on the device's copy queue, if it is not
 * cached and fits in the budget without evicting anything; else do nothing.
 * Never fails: it only saves a later acquire its copy. */
void coproc__residency_prefetch(coproc_runtime *rt, coproc__device *dev, const coproc_column *col);
void coproc__residency_unpin(coproc__device *dev, const coproc_column *col);

/* Keep `mem` (owned from now on; its contents equal host column col's) as
 * col's copy on dev, if it fits without evicting pinned copies; else release
 * it. Results stay on the device where they were made this way. */
void coproc__residency_adopt(coproc__device *dev, const coproc_column *col, cl_mem mem,
                             size_t bytes);

/* Whether col is cached on dev now. */
int coproc__residency_has(coproc__device *dev, const coproc_column *col);

/* Evict unpinned copies (and drain the buffer pool) until `bytes` more fit in
 * the budget beside the cached copies, the reserved working memory and the
 * pool; 0 if they fit. */
int coproc__residency_make_room(coproc__device *dev, uint64_t bytes);

/* As make_room, then hold the bytes for an operator's working memory (outputs,
 * temporaries, stream buffers), so neither the prefetcher nor cached results
 * take them. Returns the bytes reserved: `bytes`, or what is free when pinned
 * copies hold the rest. Give them back with coproc__residency_unreserve. */
uint64_t coproc__residency_reserve(coproc__device *dev, uint64_t bytes);
void coproc__residency_unreserve(coproc__device *dev, uint64_t bytes);

/* Drop col's copy on dev (the column is being freed; it must not be pinned). */
void coproc__residency_forget(coproc__device *dev, const coproc_column *col);

#endif
