/* transfer.h - moving bytes between host memory and a device buffer, counted
 * per device (dev->bytes_h2d, dev->bytes_d2h). Pageable host memory goes
 * through two pinned staging buffers in chunks, so the bus runs at pinned speed
 * while the CPU fills the next chunk; pinned sources and host-unified devices
 * (where a "transfer" is a memcpy) are copied directly. */
#ifndef COPROC_TRANSFER_H
#define COPROC_TRANSFER_H

#include <stddef.h>

#include "backend/opencl/device.h"

/* Staging chunk: large enough that per-command latency is small next to it. */
#define COPROC__STAGING_BYTES ((size_t)8 << 20)

typedef struct coproc__staging {
    pthread_mutex_t lock;     /* one staged transfer at a time per device */
    cl_mem mem[2];            /* CL_MEM_ALLOC_HOST_PTR buffers, mapped */
    void *ptr[2];
    int ready;                /* 1: created; -1: creation failed, copy directly */
} coproc__staging;

void coproc__staging_init(coproc__staging *s);
void coproc__staging_release(coproc__device *dev, coproc__staging *s);

/* memcpy split over a few threads for large copies: one core cannot fill a
 * pinned buffer as fast as a PCIe 5 bus drains it. */
void coproc__memcpy_parallel(void *dst, const void *src, size_t bytes);

/* Copy `bytes` from host `src` into dst at dst_off on queue q (NULL: dev->queue)
 * and wait for it. src_pinned: src is pinned memory, skip staging. */
coproc_status coproc__h2d(coproc_runtime *rt, coproc__device *dev, cl_command_queue q, cl_mem dst,
                          size_t dst_off, const void *src, size_t bytes, int src_pinned);

/* Copy `bytes` of src from src_off into host `dst` on queue q (NULL: dev->queue)
 * and wait for it. */
coproc_status coproc__d2h(coproc_runtime *rt, coproc__device *dev, cl_command_queue q, void *dst,
                          cl_mem src, size_t src_off, size_t bytes, int dst_pinned);

/* Start copying host->device without waiting: *done (never NULL on success)
 * completes when the bytes are on the device; src must stay untouched until
 * then. No staging (the caller overlaps the copy with other work instead). */
coproc_status coproc__h2d_async(coproc_runtime *rt, coproc__device *dev, cl_command_queue q,
                                cl_mem dst, size_t dst_off, const void *src, size_t bytes,
                                cl_event *done);

/* Start copying host->device on dev->copy_queue once the events in wait are
 * complete, beside the kernels on dev->queue, without waiting: *done (never
 * NULL on success) completes when the bytes are on the device, which is *at
 * on the backend's clock (backend.h copy_queued; -1: the events alone tell).
 * src must stay untouched until then. Submitted at once. */
coproc_status coproc__h2d_beside(coproc_runtime *rt, coproc__device *dev, cl_mem dst,
                                 size_t dst_off, const void *src, size_t bytes, int src_pinned,
                                 cl_uint nwait, const cl_event *wait, cl_event *done, double *at);

/* dev->queue's commands from now on wait for `copied` (a copy on another of
 * its queues, ending at `at` on the backend's clock): a barrier. */
coproc_status coproc__queue_wait_copy(coproc_runtime *rt, coproc__device *dev, cl_event copied,
                                      double at);

#endif
