/* memory.c - the per-device pool of freed large buffers. */
#include "backend/opencl/memory.h"

void coproc__pool_init(coproc__pool *p, uint64_t device_mem_bytes)
{
    pthread_mutex_init(&p->lock, NULL);
    p->bytes_held = 0;
    p->budget = (size_t)(device_mem_bytes / 8);
    for (int i = 0; i < COPROC__POOL_SLOTS; i++) {
        p->mem[i] = NULL;
        p->size[i] = 0;
        p->stamp[i] = 0;
    }
    p->clock = 0;
}

void coproc__pool_release_all(coproc__pool *p)
{
    for (int i = 0; i < COPROC__POOL_SLOTS; i++)
        if (p->mem[i])
            clReleaseMemObject(p->mem[i]);
    pthread_mutex_destroy(&p->lock);
}

size_t coproc__pool_round(size_t bytes)
{
    const size_t step = (size_t)64 << 10;
    return bytes < COPROC__POOL_MIN_BYTES ? bytes : (bytes + step - 1) / step * step;
}

cl_mem coproc__pool_take(coproc__pool *p, size_t bytes)
{
    if (bytes < COPROC__POOL_MIN_BYTES)
        return NULL;
    cl_mem found = NULL;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < COPROC__POOL_SLOTS && !found; i++)
        if (p->mem[i] && p->size[i] == bytes) {
            found = p->mem[i];
            p->mem[i] = NULL;
            p->bytes_held -= bytes;
        }
    pthread_mutex_unlock(&p->lock);
    return found;
}

void coproc__pool_give(coproc__pool *p, cl_mem mem)
{
    size_t bytes = 0;
    if (!mem)
        return;
    if (clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS ||
        bytes < COPROC__POOL_MIN_BYTES || bytes != coproc__pool_round(bytes)) {
        clReleaseMemObject(mem);
        return;
    }
    if (bytes > p->budget) {
        clReleaseMemObject(mem);
        return;
    }
    cl_mem evicted[COPROC__POOL_SLOTS];
    int nevicted = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        int free_slot = -1, oldest = -1;
        for (int i = 0; i < COPROC__POOL_SLOTS; i++) {
            if (!p->mem[i])
                free_slot = free_slot < 0 ? i : free_slot;
            else if (oldest < 0 || p->stamp[i] < p->stamp[oldest])
                oldest = i;
        }
        if (free_slot >= 0 && p->bytes_held + bytes <= p->budget) {
            p->mem[free_slot] = mem;
            p->size[free_slot] = bytes;
            p->stamp[free_slot] = ++p->clock;
            p->bytes_held += bytes;
            break;
        }
        /* oldest >= 0 here: with no buffer held, a free slot and room exist */
        evicted[nevicted++] = p->mem[oldest];
        p->bytes_held -= p->size[oldest];
        p->mem[oldest] = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < nevicted; i++)
        clReleaseMemObject(evicted[i]); /* outside the lock: the driver may be slow */
}

void coproc__pool_drain(coproc__pool *p)
{
    cl_mem held[COPROC__POOL_SLOTS];
    int n = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < COPROC__POOL_SLOTS; i++)
        if (p->mem[i]) {
            held[n++] = p->mem[i];
            p->mem[i] = NULL;
        }
    p->bytes_held = 0;
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < n; i++)
        clReleaseMemObject(held[i]);
}

size_t coproc__pool_held(coproc__pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t held = p->bytes_held;
    pthread_mutex_unlock(&p->lock);
    return held;
}
