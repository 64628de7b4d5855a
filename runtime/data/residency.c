/* residency.c - the per-device cache of host columns' copies (LRU, budget, pins). */
#include "data/residency.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "backend/opencl/transfer.h"
#include "backend/opencl/sync.h"

coproc_status coproc__residency_init(coproc__residency *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->loaded, NULL);
    pthread_cond_init(&r->released, NULL);
    return COPROC_OK;
}

void coproc__residency_release_all(coproc__residency *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].mem)
            clReleaseMemObject(r->e[i].mem);
    free(r->e);
    pthread_cond_destroy(&r->loaded);
    pthread_cond_destroy(&r->released);
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

/* Under the lock: make `bytes` more fit in dev's budget beside the cached
 * copies, the reserved working memory and the buffer pool: drain the pool
 * first (freed buffers kept for reuse are the cheapest to give up), then evict
 * LRU unpinned entries. Buffers to release go into *victims (released by the
 * caller outside the lock). -1 when pinned copies hold too much. */
static int evict_for(coproc__device *dev, uint64_t bytes, cl_mem **victims, size_t *nvictims)
{
    coproc__residency *r = dev->residency;
    uint64_t budget = dev->budget_bytes;
    if (r->used + r->reserved + coproc__pool_held(&dev->pool) + bytes > budget)
        coproc__pool_drain(&dev->pool);
    while (r->used + r->reserved + coproc__pool_held(&dev->pool) + bytes > budget) {
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

/* Evicted copies are released: their memory is what was asked for. */
static void release_victims(coproc__device *dev, cl_mem *victims, size_t n)
{
    (void)dev;
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

/* Under the lock: wait while col's entry is loading; then the entry or NULL. */
static coproc__resident *find_loaded(coproc__residency *r, uint64_t id)
{
    coproc__resident *e;
    while ((e = find(r, id)) && e->loading)
        pthread_cond_wait(&r->loaded, &r->lock);
    return e;
}

/* Make the device copy of col for an entry just pushed as loading (pinned):
 * with zero-copy a buffer over the host memory, else a buffer filled over
 * queue q. On success the entry becomes usable; on failure it is removed. */
static coproc_status load(coproc_runtime *rt, coproc__device *dev, const coproc_column *col,
                          size_t bytes, int in_place, cl_command_queue q, cl_mem *out)
{
    coproc__residency *r = dev->residency;
    cl_mem mem = NULL;
    coproc_status s;
    if (in_place) {
        cl_int err;
        mem = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                             col->host, &err); /* the caller's memory: operators only read it */
        s = mem ? COPROC_OK
                : coproc__fail_cl(rt, err, "wrapping %zu bytes of host memory on device %d",
                                  bytes, dev->index);
    } else {
        s = coproc__buffer_new(rt, dev, bytes, &mem);
        if (s == COPROC_OK)
            s = coproc__h2d(rt, dev, q, mem, 0, col->host, bytes, col->pinned != NULL);
    }
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].col_id == col->id) {
            if (s == COPROC_OK) {
                r->e[i].mem = mem;
                r->e[i].loading = 0;
            } else {
                remove_at(r, i);
            }
            break;
        }
    pthread_cond_broadcast(&r->loaded);
    pthread_mutex_unlock(&r->lock);
    if (s != COPROC_OK && mem)
        clReleaseMemObject(mem);
    *out = s == COPROC_OK ? mem : NULL;
    return s;
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
    int in_place = dev->zero_copy && dev->info.host_unified_memory && bytes > 0;
    size_t counted = in_place ? 0 : bytes;
    if (counted > dev->budget_bytes)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "a column of %zu bytes exceeds "
                            "device %d's budget (%llu bytes)", bytes, dev->index,
                            (unsigned long long)dev->budget_bytes);
    cl_mem *victims = NULL;
    size_t nvictims = 0;
    pthread_mutex_lock(&r->lock);
    coproc__resident *e = find_loaded(r, col->id);
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
    if (evict_for(dev, counted, &victims, &nvictims) != 0) {
        pthread_mutex_unlock(&r->lock);
        release_victims(dev, victims, nvictims);
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "no room for %zu bytes on device "
                            "%d: the budget is held by running operators", bytes, dev->index);
    }
    if (push(r, col->id, NULL, counted, 1) != 0) {
        pthread_mutex_unlock(&r->lock);
        release_victims(dev, victims, nvictims);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    r->e[r->n - 1].loading = 1;
    pthread_mutex_unlock(&r->lock);
    release_victims(dev, victims, nvictims);
    atomic_fetch_add(&r->misses, 1);
    return load(rt, dev, col, bytes, in_place, NULL, out);
}

void coproc__residency_prefetch(coproc_runtime *rt, coproc__device *dev, const coproc_column *col)
{
    coproc__residency *r = dev->residency;
    size_t bytes = col->length * coproc_type_size(col->type);
    if ((dev->zero_copy && dev->info.host_unified_memory) || bytes == 0 ||
        (col->type == COPROC_FLOAT64 && !dev->info.has_fp64))
        return;
    pthread_mutex_lock(&r->lock);
    int go = !find(r, col->id) &&
             r->used + r->reserved + coproc__pool_held(&dev->pool) + bytes <= dev->budget_bytes &&
             push(r, col->id, NULL, bytes, 1) == 0;
    if (go)
        r->e[r->n - 1].loading = 1;
    pthread_mutex_unlock(&r->lock);
    if (!go)
        return;
    cl_mem mem;
    if (load(rt, dev, col, bytes, 0, dev->copy_queue, &mem) == COPROC_OK) {
        atomic_fetch_add(&r->prefetches, 1);
        coproc__residency_unpin(dev, col);
    }
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
        evict_for(dev, bytes, &victims, &nvictims) == 0 &&
        push(r, col->id, mem, bytes, 0) == 0)
        kept = 1;
    pthread_mutex_unlock(&r->lock);
    release_victims(dev, victims, nvictims);
    if (!kept)
        coproc__pool_give(&dev->pool, mem);
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
    int rc = evict_for(dev, bytes, &victims, &nvictims);
    pthread_mutex_unlock(&r->lock);
    release_victims(dev, victims, nvictims);
    return rc;
}

uint64_t coproc__residency_reserve(coproc__device *dev, uint64_t bytes)
{
    coproc__residency *r = dev->residency;
    cl_mem *victims = NULL;
    size_t nvictims = 0;
    pthread_mutex_lock(&r->lock);
    if (evict_for(dev, bytes, &victims, &nvictims) != 0) {
        /* pinned copies hold the rest: reserve what is free */
        uint64_t taken = r->used + r->reserved + coproc__pool_held(&dev->pool);
        bytes = taken < dev->budget_bytes ? dev->budget_bytes - taken : 0;
    }
    r->reserved += bytes;
    pthread_mutex_unlock(&r->lock);
    release_victims(dev, victims, nvictims);
    return bytes;
}

void coproc__residency_unreserve(coproc__device *dev, uint64_t bytes)
{
    coproc__residency *r = dev->residency;
    pthread_mutex_lock(&r->lock);
    r->reserved -= bytes < r->reserved ? bytes : r->reserved;
    pthread_mutex_unlock(&r->lock);
}

void coproc__residency_forget(coproc__device *dev, const coproc_column *col)
{
    coproc__residency *r = dev->residency;
    cl_mem mem = NULL;
    int in_place = 0;
    pthread_mutex_lock(&r->lock);
    coproc__resident *e = find_loaded(r, col->id);
    if (e) {
        mem = e->mem;
        in_place = e->bytes == 0; /* zero-copy (or empty): over the caller's memory */
        remove_at(r, (size_t)(e - r->e));
    }
    pthread_mutex_unlock(&r->lock);
    if (!mem)
        return;
    if (in_place) {
        coproc__finish(dev, dev->queue); /* idle before the host memory goes back to the caller */
        clReleaseMemObject(mem);
    } else {
        coproc__pool_give(&dev->pool, mem);
    }
}
