/* transfer.c - host<->device copies, counted per device, pageable memory
 * staged through pinned buffers. */
#include "core/fault.h"
#include "backend/opencl/transfer.h"

#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cost/bandwidth.h"
#include "cost/profile.h"
#include "core/error.h"
#include "backend/opencl/sync.h"

typedef struct copy_part {
    void *dst;
    const void *src;
    size_t bytes;
} copy_part;

static void *copy_part_main(void *arg)
{
    copy_part *p = arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

void coproc__memcpy_parallel(void *dst, const void *src, size_t bytes)
{
    enum { MAX_PARTS = 8 };
    const size_t min_part = (size_t)2 << 20; /* below this a thread costs more than it saves */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t parts = bytes / min_part;
    if (parts > MAX_PARTS)
        parts = MAX_PARTS;
    if (cores > 0 && parts > (size_t)cores)
        parts = (size_t)cores;
    if (parts < 2) {
        memcpy(dst, src, bytes);
        return;
    }
    copy_part part[MAX_PARTS];
    pthread_t th[MAX_PARTS];
    int started[MAX_PARTS] = {0};
    size_t each = (bytes / parts + 63) & ~(size_t)63;
    for (size_t i = 0, off = 0; i < parts; i++, off += each) {
        size_t n = off >= bytes ? 0 : (bytes - off < each ? bytes - off : each);
        part[i] = (copy_part){(char *)dst + off, (const char *)src + off, n};
        if (i > 0 && n > 0)
            started[i] = pthread_create(&th[i], NULL, copy_part_main, &part[i]) == 0;
    }
    copy_part_main(&part[0]);
    for (size_t i = 1; i < parts; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            copy_part_main(&part[i]); /* no thread: copy it here */
    }
}

void coproc__staging_init(coproc__staging *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

void coproc__staging_release(coproc__device *dev, coproc__staging *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->mem[i] && s->ptr[i]) {
            coproc__submit_begin(dev);
            clEnqueueUnmapMemObject(dev->queue, s->mem[i], s->ptr[i], 0, NULL, NULL);
            coproc__submit_end(dev);
        }
    }
    if (dev->queue)
        coproc__finish(dev, dev->queue);
    for (int i = 0; i < 2; i++)
        if (s->mem[i])
            clReleaseMemObject(s->mem[i]);
    pthread_mutex_destroy(&s->lock);
}

/* Create the two pinned buffers on first use; 0 when staging is unavailable.
 * They are mapped on q, the queue of the thread that copies: a thread
 * enqueueing on another thread's queue deadlocks PoCL's `basic` device, which
 * runs commands inside the enqueueing call (issue 18: the prefetcher mapped on
 * the device's compute queue while the worker read an event of it). */
static int staging_ready(coproc__device *dev, coproc__staging *s, cl_command_queue q)
{
    if (s->ready)
        return s->ready > 0;
    s->ready = -1;
    for (int i = 0; i < 2; i++) {
        cl_int err;
        s->mem[i] = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                   COPROC__STAGING_BYTES, NULL, &err);
        if (!s->mem[i])
            return 0;
        s->ptr[i] = coproc__map_now(dev, q, s->mem[i], CL_MAP_READ | CL_MAP_WRITE, 0,
                                    COPROC__STAGING_BYTES, &err);
        if (!s->ptr[i])
            return 0;
    }
    s->ready = 1;
    return 1;
}

/* Staging pays only where the device has its own memory and the copy is
 * large (a host-unified device with zero-copy off stages too, as a GPU would:
 * that is how the tests run this path on PoCL). */
static int use_staging(coproc__device *dev, size_t bytes, int pinned)
{
    return !pinned && !(dev->zero_copy && dev->info.host_unified_memory) && dev->staging &&
           bytes > COPROC__STAGING_BYTES / 4;
}

/* dev's staging buffers, locked and ready, when this copy should use them;
 * NULL to copy directly (also when another copy holds them right now). */
static coproc__staging *staging_take(coproc__device *dev, cl_command_queue q, size_t bytes,
                                     int pinned)
{
    coproc__staging *s = dev->staging;
    if (!use_staging(dev, bytes, pinned) || pthread_mutex_trylock(&s->lock) != 0)
        return NULL;
    if (staging_ready(dev, s, q))
        return s;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Fill one pinned buffer while the bus drains the other; waits for the end. */
static cl_int staged_write(coproc__device *dev, coproc__staging *s, cl_command_queue q, cl_mem dst,
                           size_t dst_off, const void *src, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_event pending[2] = {NULL, NULL};
    size_t done = 0;
    for (int k = 0; done < bytes && err == CL_SUCCESS; k ^= 1) {
        size_t n = bytes - done < COPROC__STAGING_BYTES ? bytes - done : COPROC__STAGING_BYTES;
        if (pending[k]) {
            err = coproc__wait_event(dev, pending[k]);
            clReleaseEvent(pending[k]);
            pending[k] = NULL;
            if (err != CL_SUCCESS)
                break;
        }
        coproc__memcpy_parallel(s->ptr[k], (const char *)src + done, n);
        coproc__submit_begin(dev);
        err = clEnqueueWriteBuffer(q, dst, CL_FALSE, dst_off + done, n, s->ptr[k], 0, NULL,
                                   &pending[k]);
        coproc__submit_end(dev);
        done += n;
    }
    for (int k = 0; k < 2; k++)
        if (pending[k]) {
            cl_int e = coproc__wait_event(dev, pending[k]);
            err = err == CL_SUCCESS ? e : err;
            clReleaseEvent(pending[k]);
        }
    return err;
}

/* Read chunk k+1 into one pinned buffer while copying chunk k out of the other. */
static cl_int staged_read(coproc__device *dev, coproc__staging *s, cl_command_queue q, void *dst,
                          cl_mem src, size_t src_off, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_event pending[2] = {NULL, NULL};
    size_t off[2] = {0, 0}, len[2] = {0, 0}, issued = 0;
    int head = 0, count = 0; /* head: the older read in flight */
    while ((issued < bytes || count > 0) && err == CL_SUCCESS) {
        while (issued < bytes && count < 2 && err == CL_SUCCESS) {
            int b = (head + count) % 2;
            size_t n = bytes - issued < COPROC__STAGING_BYTES ? bytes - issued
                                                              : COPROC__STAGING_BYTES;
            coproc__submit_begin(dev);
            err = clEnqueueReadBuffer(q, src, CL_FALSE, src_off + issued, n, s->ptr[b], 0, NULL,
                                      &pending[b]);
            coproc__submit_end(dev);
            off[b] = issued;
            len[b] = n;
            issued += n;
            count++;
        }
        if (err != CL_SUCCESS)
            break;
        err = coproc__wait_event(dev, pending[head]);
        clReleaseEvent(pending[head]);
        pending[head] = NULL;
        if (err == CL_SUCCESS)
            coproc__memcpy_parallel((char *)dst + off[head], s->ptr[head], len[head]);
        head ^= 1;
        count--;
    }
    for (int i = 0; i < 2; i++)
        if (pending[i]) {
            coproc__wait_event(dev, pending[i]);
            clReleaseEvent(pending[i]);
        }
    return err;
}

/* A blocking copy just made teaches dev's transfer level (transfer_drift.h):
 * its time is the command's device time, as calibration measured it, where
 * the driver gives one (a direct copy, ev), else the wall clock (a staged copy:
 * what copying from pageable memory costs here). Releases ev. */
static void learn(coproc__device *dev, int to_device, int pinned, int ahead, size_t bytes,
                  cl_int err, cl_event ev, double wall)
{
    double seconds = wall;
    double device = ev && err == CL_SUCCESS ? coproc__device_event_seconds(dev, ev, ev) : -1;
    if (device > 0 && device <= wall)
        seconds = device;
    if (ev)
        clReleaseEvent(ev);
    if (err != CL_SUCCESS)
        return;
    seconds = dev->backend->copy_ran(dev, to_device, pinned, ahead, (double)bytes, seconds);
    if ((double)bytes < COPROC__DRIFT_MIN_BYTES)
        return;
    pthread_mutex_lock(&dev->model_lock);
    coproc__profile_transfer_observe(dev->profile, to_device, pinned, (double)bytes, seconds);
    pthread_mutex_unlock(&dev->model_lock);
}

/* The status of a finished copy; a successful one is counted. */
static coproc_status counted(coproc_runtime *rt, coproc__device *dev, cl_int err, size_t bytes,
                             int to_device)
{
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "copying %zu bytes %s device %d", bytes,
                               to_device ? "to" : "from", dev->index);
    atomic_fetch_add(to_device ? &dev->bytes_h2d : &dev->bytes_d2h, bytes);
    return COPROC_OK;
}

coproc_status coproc__h2d(coproc_runtime *rt, coproc__device *dev, cl_command_queue q, cl_mem dst,
                          size_t dst_off, const void *src, size_t bytes, int src_pinned)
{
    if (bytes == 0)
        return COPROC_OK;
    int injected = coproc__fault(rt, dev->index, COPROC__FAULT_H2D);
    if (injected)
        return coproc__fail_cl(rt, injected, "copy of %zu bytes to device %d (COPROC_FAULT)", bytes,
                               dev->index);
    int ahead = q && q == dev->copy_queue; /* the prefetcher's (residency.h) */
    if (!q)
        q = dev->queue;
    coproc__staging *s = staging_take(dev, q, bytes, src_pinned);
    cl_event ev = NULL;
    cl_event *timed = (double)bytes >= COPROC__DRIFT_MIN_BYTES ? &ev : NULL;
    double t0 = coproc__now();
    cl_int err = s ? staged_write(dev, s, q, dst, dst_off, src, bytes)
                   : coproc__write_now(dev, q, dst, dst_off, bytes, src, 0, NULL, timed);
    double wall = coproc__now() - t0;
    if (s)
        pthread_mutex_unlock(&s->lock);
    learn(dev, 1, src_pinned, ahead, bytes, err, ev, wall);
    return counted(rt, dev, err, bytes, 1);
}

coproc_status coproc__d2h(coproc_runtime *rt, coproc__device *dev, cl_command_queue q, void *dst,
                          cl_mem src, size_t src_off, size_t bytes, int dst_pinned)
{
    if (bytes == 0)
        return COPROC_OK;
    int injected = coproc__fault(rt, dev->index, COPROC__FAULT_D2H);
    if (injected)
        return coproc__fail_cl(rt, injected, "copy of %zu bytes from device %d (COPROC_FAULT)",
                               bytes, dev->index);
    if (!q)
        q = dev->queue;
    coproc__staging *s = staging_take(dev, q, bytes, dst_pinned);
    cl_event ev = NULL;
    cl_event *timed = (double)bytes >= COPROC__DRIFT_MIN_BYTES ? &ev : NULL;
    double t0 = coproc__now();
    cl_int err = s ? staged_read(dev, s, q, dst, src, src_off, bytes)
                   : coproc__read_now(dev, q, src, src_off, bytes, dst, 0, NULL, timed);
    double wall = coproc__now() - t0;
    if (s)
        pthread_mutex_unlock(&s->lock);
    learn(dev, 0, dst_pinned, 0, bytes, err, ev, wall);
    return counted(rt, dev, err, bytes, 0);
}

coproc_status coproc__h2d_async(coproc_runtime *rt, coproc__device *dev, cl_command_queue q,
                                cl_mem dst, size_t dst_off, const void *src, size_t bytes,
                                cl_event *done)
{
    if (!q)
        q = dev->copy_queue ? dev->copy_queue : dev->queue;
    *done = NULL;
    coproc__submit_begin(dev);
    cl_int err = bytes ? clEnqueueWriteBuffer(q, dst, CL_FALSE, dst_off, bytes, src, 0, NULL, done)
                       : clEnqueueMarkerWithWaitList(q, 0, NULL, done);
    coproc__submit_end(dev);
    if (err == CL_SUCCESS && bytes) /* not timed here; a simulated device charges it */
        dev->backend->copy_ran(dev, 1, 0, 0, (double)bytes, -1);
    return counted(rt, dev, err, bytes, 1);
}

coproc_status coproc__h2d_beside(coproc_runtime *rt, coproc__device *dev, cl_mem dst,
                                 size_t dst_off, const void *src, size_t bytes, int src_pinned,
                                 cl_uint nwait, const cl_event *wait, cl_event *done, double *at)
{
    *done = NULL;
    *at = -1;
    int injected = coproc__fault(rt, dev->index, COPROC__FAULT_H2D);
    if (injected)
        return coproc__fail_cl(rt, injected, "copy of %zu bytes to device %d (COPROC_FAULT)", bytes,
                               dev->index);
    cl_command_queue q = dev->copy_queue;
    wait = nwait ? wait : NULL; /* a list with no events must be NULL */
    coproc__submit_begin(dev);
    cl_int err =
        bytes ? clEnqueueWriteBuffer(q, dst, CL_FALSE, dst_off, bytes, src, nwait, wait, done)
              : clEnqueueMarkerWithWaitList(q, nwait, wait, done);
    if (err == CL_SUCCESS)
        err = clFlush(q); /* started now, so that it runs while the kernels do */
    coproc__submit_end(dev);
    if (err == CL_SUCCESS && bytes) /* not timed here; a simulated device charges it */
        *at = dev->backend->copy_queued(dev, src_pinned, (double)bytes);
    if (err != CL_SUCCESS && *done) {
        clReleaseEvent(*done);
        *done = NULL;
    }
    return counted(rt, dev, err, bytes, 1);
}

coproc_status coproc__queue_wait_copy(coproc_runtime *rt, coproc__device *dev, cl_event copied,
                                      double at)
{
    coproc__submit_begin(dev);
    cl_int err = clEnqueueBarrierWithWaitList(dev->queue, 1, &copied, NULL);
    coproc__submit_end(dev);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(
            rt, err, "device %d: waiting for a copy (clEnqueueBarrierWithWaitList)", dev->index);
    dev->backend->queue_waits(dev, at);
    return COPROC_OK;
}
