/* program.h - embedded kernel sources, building per device, the binary cache. */
#ifndef COPROC_PROGRAM_H
#define COPROC_PROGRAM_H

#include <stddef.h>

#include "backend/opencl/device.h"

/* One cl/<name>.cl file, embedded at build time by cmake/embed_cl.cmake. */
typedef struct coproc__cl_source {
    const char *name;   /* base name, "reduce" for cl/reduce.cl */
    const char *source;
    size_t length;
} coproc__cl_source;

extern const coproc__cl_source coproc__cl_sources[]; /* ends with a NULL name */
extern const int coproc__cl_source_count;

/* cl/prelude.cl is not a program of its own: it is prepended to every other one. */
#define COPROC__PRELUDE_NAME "prelude"

/*
 * The built program cl/<name>.cl for dev, built on first use (once per device
 * per runtime, thread-safe) from the on-disk binary cache when it holds a
 * binary for this device fingerprint, source and options, else from source.
 * The program stays owned by the device. BUILD_FAILED carries the build log.
 */
coproc_status coproc__program_get(coproc_runtime *rt, coproc__device *dev, const char *name,
                                  cl_program *out);

/*
 * cl/<name>.cl specialised at build time: `defines` (lines such as
 * "#define SEL_T int\n") are put before its source. Built once per device and
 * defines string (kept on the device, thread-safe), through the binary cache,
 * so a caller keeps the set of distinct defines small: a shape (type,
 * comparison), never a value that changes from call to call. At most
 * COPROC__MAX_VARIANTS per device (INTERNAL past that).
 */
#define COPROC__MAX_VARIANTS 256
coproc_status coproc__program_variant(coproc_runtime *rt, coproc__device *dev, const char *name,
                                      const char *defines, cl_program *out);

/* Release the variants built on dev (coproc__device_release). */
void coproc__program_variants_release(coproc__device *dev);

/*
 * Build `source` (prelude prepended) for dev, through the binary cache.
 * *out is owned by the caller. `name` labels messages and cache files.
 */
coproc_status coproc__program_build(coproc_runtime *rt, coproc__device *dev, const char *name,
                                    const char *source, size_t length, cl_program *out);

/* The options every program is built with on dev: "-cl-std=CL1.2", the
 * device's build options (kernel path, fp64, quirks) and $COPROC_CL_OPTIONS. */
void coproc__program_options(const coproc__device *dev, char *out, size_t size);

/* A new kernel object (caller releases) for kernel `kernel` of program `program`. */
coproc_status coproc__kernel_create(coproc_runtime *rt, coproc__device *dev, const char *program,
                                    const char *kernel, cl_kernel *out);

/* The same for the variant `defines` of program `program` (coproc__program_variant). */
coproc_status coproc__kernel_create_variant(coproc_runtime *rt, coproc__device *dev,
                                            const char *program, const char *defines,
                                            const char *kernel, cl_kernel *out);

/*
 * A kernel object lent to one caller at a time. A cl_kernel's arguments are
 * not thread-safe, and making one (clCreateKernel) costs more than a small
 * operator's kernel runs: each device keeps the kernels it made, idle ones in
 * a pool per (program, kernel name), and lends one to each call, a new one
 * only when every one of that name is out (calls in parallel). With the
 * kernel goes a scratch buffer of the caller's use (e.g. a reduction's
 * partials) and a host copy of it, both kept and grown, never shrunk.
 * Arguments set by an earlier borrower stay set: set every one used. A
 * borrower may return a lease while its commands on dev->queue (in order)
 * still use the scratch buffer: the next borrower's commands come after them.
 */
typedef struct coproc__kernel_lease {
    cl_kernel kernel;
    cl_mem scratch;       /* NULL until coproc__lease_scratch */
    void *scratch_host;   /* scratch_bytes of host memory beside it */
    size_t scratch_bytes;
    struct coproc__kernel_lease *next; /* the pool's: next idle one of its name */
    int entry;                         /* the pool's: which name */
} coproc__kernel_lease;

/* Borrow a kernel `kernel` of program `program` on dev (thread-safe); give it
 * back with coproc__kernel_return. */
coproc_status coproc__kernel_borrow(coproc_runtime *rt, coproc__device *dev, const char *program,
                                    const char *kernel, coproc__kernel_lease **out);

/* Make l's scratch buffer (and its host copy) at least `bytes` long. */
coproc_status coproc__lease_scratch(coproc_runtime *rt, coproc__device *dev,
                                    coproc__kernel_lease *l, size_t bytes);

/* Return a borrowed kernel to dev's pool (NULL: nothing). */
void coproc__kernel_return(coproc__device *dev, coproc__kernel_lease *l);

/* Release every pooled kernel and scratch buffer of dev (the device closes;
 * none may be out). */
void coproc__kernel_pool_release(coproc__device *dev);

/* The binary a cache file of len bytes holds for key: 1 with *bin, *binlen
 * inside data when the header is whole, of key, and its hash matches; else 0
 * (load_cached's check before a driver sees the bytes; fuzz/fuzz_kernel_cache.c
 * feeds it directly). */
int coproc__program_cache_parse(const unsigned char *data, size_t len, uint64_t key,
                                const unsigned char **bin, size_t *binlen);

#endif
