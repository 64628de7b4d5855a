/* memory.h - device buffers, with a small per-device pool of freed large
 * buffers: reusing one skips the driver's allocation and, on host-unified
 * devices (PoCL), the page faults of first touching fresh memory, which cost
 * more than the operators that write their outputs there. */
#ifndef COPROC_MEMORY_H
#define COPROC_MEMORY_H

#include <pthread.h>
#include <stdint.h>

#include <CL/cl.h>

/* Buffers the pool holds at most (within its byte budget). Reuse needs an exact
 * size, so a workload cycling through more output sizes than slots misses
 * every time: with 8, coproc-calibrate --check's batches of 10 sizes made
 * some scans fault in fresh pages on every run (up to 12x their fastest run). */
#define COPROC__POOL_SLOTS 32
#define COPROC__POOL_MIN_BYTES ((size_t)1 << 20) /* smaller buffers are cheap to allocate */

typedef struct coproc__pool {
    pthread_mutex_t lock;
    size_t bytes_held;
    size_t budget;                         /* at most this much held (1/8 of device memory) */
    cl_mem mem[COPROC__POOL_SLOTS];
    size_t size[COPROC__POOL_SLOTS];
    uint64_t stamp[COPROC__POOL_SLOTS];     /* when given back: the oldest goes first */
    uint64_t clock;
} coproc__pool;

void coproc__pool_init(coproc__pool *p, uint64_t device_mem_bytes);
void coproc__pool_release_all(coproc__pool *p);

/* A pooled buffer of exactly `bytes` (as coproc__pool_round gives), or NULL. */
cl_mem coproc__pool_take(coproc__pool *p, size_t bytes);
/* Allocation size for a request: large requests round up to 64 KiB so that
 * similar sizes share pooled buffers. */
size_t coproc__pool_round(size_t bytes);
/* Bytes the pool holds now. */
size_t coproc__pool_held(coproc__pool *p);
/* Release every pooled buffer (the device ran out of memory). */
void coproc__pool_drain(coproc__pool *p);
/* Give a buffer no longer used back: pooled if large, evicting the oldest
 * pooled buffers to stay within the slots and the budget; else released. */
void coproc__pool_give(coproc__pool *p, cl_mem mem);

#endif
