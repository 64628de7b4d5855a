/* residency.c - the per-device cache of host columns' copies (LRU, budget, pins). */
#include "residency.h"

#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "transfer.h"

coproc_status coproc__residency_init(coproc__residency *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    return COPROC_OK;
}

void coproc__residency_release_all(coproc__residency *r)
{
    for (size_t i = 0; i < r->n; i++)
        clReleaseMemObject(r->e[i].mem);
    free(r->e);
    pthread_mutex_destroy(&r->lock);
}

static coproc__resident *find(coproc__residency *r, uint64_t id)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].col_id == id)
            return &r->e[i];
    return NULL;
}

static void remove_at(coproc__residency *r, size_t i)
{
    r->used -= r->e[i].bytes;
    r->e[i] = r->e[--r->n];
}

/* Under the lock: evict LRU unpinned entries until `bytes` more fit. Buffers
 * to release go into *victims (released by the caller outside the lock). */
static int evict_for(coproc__residency *r, uint64_t budget, uint64_t bytes, cl_mem **victims,
                     size_t *nvictims)
{
    while (r->used + bytes > budget) {
        size_t best = r->n;
        for (size_t i = 0; i < r->n; i++)
            if (r->e[i].pins == 0 && r->e[i].bytes > 0 &&
                (best == r->n || r->e[i].stamp < r->e[best].stamp))
                best = i;
        if (best == r->n)
            return -1;
        cl_mem *v = realloc(*victims, (*nvictims + 1) * sizeof **victims);
        if (!v)
            return -1;
        *victims = v;
        v[(*nvictims)++] = r->e[best].mem;
        remove_at(r, best);
        atomic_fetch_add(&r->evictions, 1);
    }
    return 0;
}

static void release_victims(cl_mem *victims, size_t n)
{
    for (size_t i = 0; i < n; i++)
        clReleaseMemObject(victims[i]);
    free(victims);
}

static int push(coproc__residency *r, uint64_t id, cl_mem mem, size_t bytes, int pins)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        coproc__resident *e = realloc(r->e, cap * sizeof *e);
        if (!e)
            return -1;
        r->e = e;
        r->cap = cap;
    }
    r->e[r->n++] = (coproc__resident){.col_id = id, .mem = mem, .bytes = bytes, .pins = pins,
                                      .stamp = ++r->clock};
    r->used += bytes;
    return 0;
}

coproc_status coproc__residency_acquire(coproc_runtime *rt, coproc__device *dev,
                                        const coproc_column *col, cl_mem *out, int *hit)
{
    coproc__residency *r = dev->residency;
    size_t bytes = col->length * coproc_type_size(col->type);
    *out = NULL;
    if (hit)
        *hit = 0;
    if (col->type == COPROC_FLOAT64 && !dev->info.has_fp64)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "device %d (%s) has no fp64", dev->index,
                            dev->info.name);
    pthread_mutex_lock(&r->lock);
    coproc__resident *e = find(r, col->id);
    if (e) {
        e->pins++;
        e->stamp = ++r->clock;
        *out = e->mem;
        pthread_mutex_unlock(&r->lock);
        atomic_fetch_add(&r->hits, 1);
        if (hit)
            *hit = 1;
        return COPROC_OK;
    }
    pthread_mutex_unlock(&r->lock);
    atomic_fetch_add(&r->misses, 1);

    cl_mem mem = NULL;
    size_t counted = bytes;
    coproc_status s = COPROC_OK;
    if (dev->zero_copy && dev->info.host_unified_memory && bytes > 0) {
        /* The host memory itself, no copy: read-only for kernels by contract. */
        cl_int err;
        mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                             col->host, &err);
        if (!mem)
            return coproc__fail_cl(rt, err, "wrapping %zu bytes of host memory on device %d",
                                   bytes, dev->index);
        counted = 0;
    } else {
        if (bytes > dev->budget_bytes)
            return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "a column of %zu bytes exceeds "
                                "device %d's budget (%llu bytes)", bytes, dev->index,
                                (unsigned long long)dev->budget_bytes);
        if (coproc__residency_make_room(dev, bytes) != 0)
            return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "no room for %zu bytes on device "
                                "%d: the budget is held by running operators", bytes, dev->index);
        s = coproc__buffer_new(rt, dev, bytes, &mem);
        if (s == COPROC_OK)
            s = coproc__h2d(rt, dev, NULL, mem, 0, col->host, bytes, col->pinned != NULL);
        if (s != COPROC_OK) {
            if (mem)
                clReleaseMemObject(mem);
            return s;
        }
    }
    pthread_mutex_lock(&r->lock);
    e = find(r, col->id);
    if (e) { /* another thread cached it meanwhile: use that one */
        e->pins++;
        e->stamp = ++r->clock;
        *out = e->mem;
        pthread_mutex_unlock(&r->lock);
        clReleaseMemObject(mem);
        return COPROC_OK;
    }
    if (push(r, col->id, mem, counted, 1) != 0) {
        pthread_mutex_unlock(&r->lock);
        clReleaseMemObject(mem);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    *out = mem;
    pthread_mutex_unlock(&r->lock);
    return COPROC_OK;
}

void coproc__residency_unpin(coproc__device *dev, const coproc_column *col)
{
    coproc__residency *r = dev->residency;
    pthread_mutex_lock(&r->lock);
    coproc__resident *e = find(r, col->id);
    if (e && e->pins > 0)
        e->pins--;
    pthread_mutex_unlock(&r->lock);
}

void coproc__residency_adopt(coproc__device *dev, const coproc_column *col, cl_mem mem,
                             size_t bytes)
{
    coproc__residency *r = dev->residency;
    cl_mem *victims = NULL;
    size_t nvictims = 0;
    int kept = 0;
    pthread_mutex_lock(&r->lock);
    if (!find(r, col->id) && bytes <= dev->budget_bytes &&
        evict_for(r, dev->budget_bytes, bytes, &victims, &nvictims) == 0 &&
        push(r, col->id, mem, bytes, 0) == 0)
        kept = 1;
    pthread_mutex_unlock(&r->lock);
    release_victims(victims, nvictims);
    if (!kept)
        clReleaseMemObject(mem);
}

int coproc__residency_has(coproc__device *dev, const coproc_column *col)
{
    coproc__residency *r = dev->residency;
    pthread_mutex_lock(&r->lock);
    int has = find(r, col->id) != NULL;
    pthread_mutex_unlock(&r->lock);
    return has;
}

int coproc__residency_make_room(coproc__device *dev, uint64_t bytes)
{
    coproc__residency *r = dev->residency;
    cl_mem *victims = NULL;
    size_t nvictims = 0;
    pthread_mutex_lock(&r->lock);
    int rc = evict_for(r, dev->budget_bytes, bytes, &victims, &nvictims);
    pthread_mutex_unlock(&r->lock);
    release_victims(victims, nvictims);
    return rc;
}

void coproc__residency_forget(coproc__device *dev, const coproc_column *col)
{
    coproc__residency *r = dev->residency;
    cl_mem mem = NULL;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].col_id == col->id) {
            mem = r->e[i].mem;
            remove_at(r, i);
            break;
        }
    pthread_mutex_unlock(&r->lock);
    if (mem) {
        clFinish(dev->queue); /* a zero-copy buffer must be idle before the host memory goes */
        clReleaseMemObject(mem);
    }
}
