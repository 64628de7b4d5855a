/* column.c - columns: device-resident ones (allocate, upload, download) and
 * host columns (wrap, pinned allocation), and freeing both. */
#include "data/column.h"
#include "data/dictionary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/residency.h"
#include "core/runtime.h"
#include "backend/opencl/transfer.h"
#include "backend/opencl/sync.h"

/* Quirk write_new_buffers (quirks.h): the whole buffer from the host, in
 * bytes 0xa5, which no kernel takes for a valid index, count or empty mark. */
static cl_int write_whole(coproc__device *dev, cl_mem mem, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    if (!host)
        return CL_OUT_OF_HOST_MEMORY;
    memset(host, 0xa5, bytes);
    cl_int err = coproc__write_now(dev, dev->queue, mem, 0, bytes, host, 0, NULL, NULL);
    free(host);
    return err;
}

coproc_status coproc__buffer_new(coproc_runtime *rt, coproc__device *dev, size_t bytes,
                                 cl_mem *out)
{
    *out = NULL;
    if (bytes < 16)
        bytes = 16; /* OpenCL has no empty buffers; kernels never read past the length */
    if (bytes > dev->info.max_alloc_bytes)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY,
                            "%zu bytes exceed device %d's largest allocation (%llu bytes)", bytes,
                            dev->index, (unsigned long long)dev->info.max_alloc_bytes);
    int injected = coproc__fault(rt, dev->index, COPROC__FAULT_ALLOC);
    if (injected)
        return coproc__fail_cl(rt, injected,
                               "clCreateBuffer of %zu bytes on device %d (COPROC_FAULT)", bytes,
                               dev->index);
    if (coproc__pool_round(bytes) <= dev->info.max_alloc_bytes)
        bytes = coproc__pool_round(bytes);
    cl_int err = CL_SUCCESS;
    if (!(*out = coproc__pool_take(&dev->pool, bytes)))
        *out = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!*out)
        return coproc__fail_cl(rt, err, "clCreateBuffer(%zu bytes) on device %d", bytes,
                               dev->index);
    if (dev->quirks.write_new_buffers)
        err = write_whole(dev, *out, bytes);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(*out);
        *out = NULL;
        return coproc__fail_cl(rt, err, "writing a new buffer of %zu bytes on device %d "
                               "(quirk write-new-buffers)", bytes, dev->index);
    }
    return COPROC_OK;
}

coproc_status coproc__column_new(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                 size_t length, coproc_column **out)
{
    *out = NULL;
    if (t == COPROC_FLOAT64 && !dev->info.has_fp64)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "device %d (%s) has no fp64; float64 columns "
                            "cannot live there", dev->index, dev->info.name);
    size_t esize = coproc_type_size(t);
    if (length > SIZE_MAX / 2 / esize)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "column length %zu too large", length);
    coproc_column *col = calloc(1, sizeof *col);
    if (!col)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    coproc_status s = coproc__buffer_new(rt, dev, length * esize, &col->mem);
    if (s != COPROC_OK) {
        free(col);
        return s;
    }
    col->rt = rt;
    col->dev = dev;
    col->type = t;
    col->length = length;
    *out = col;
    return COPROC_OK;
}

coproc_status coproc__column_wrap_mem(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                      size_t length, cl_mem mem, coproc_column **out)
{
    *out = NULL;
    coproc_column *col = calloc(1, sizeof *col);
    if (!col) {
        clReleaseMemObject(mem);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    col->rt = rt;
    col->dev = dev;
    col->type = t;
    col->length = length;
    col->mem = mem;
    *out = col;
    return COPROC_OK;
}

coproc_status coproc__column_wrap_host(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                                       size_t length, void *host, coproc_column **out)
{
    *out = NULL;
    if (t == COPROC_FLOAT64 && !dev->info.has_fp64)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "device %d (%s) has no fp64; float64 columns "
                            "cannot live there", dev->index, dev->info.name);
    size_t esize = coproc_type_size(t);
    if (!host || length == 0 || length > SIZE_MAX / 2 / esize)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "cannot wrap %zu rows at %p", length,
                            host);
    if (length * esize > dev->info.max_alloc_bytes)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY,
                            "%zu bytes exceed device %d's largest allocation", length * esize,
                            dev->index);
    cl_int err;
    cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                length * esize, host, &err);
    if (!mem)
        return coproc__fail_cl(rt, err, "clCreateBuffer(USE_HOST_PTR, %zu bytes) on device %d",
                               length * esize, dev->index);
    coproc_status s = coproc__column_wrap_mem(rt, dev, t, length, mem, out);
    if (s == COPROC_OK)
        (*out)->host_wrapped = 1;
    return s;
}

coproc_status coproc__column_check(coproc_runtime *rt, const coproc_column *col,
                                   const coproc__device *dev, const char *what)
{
    if (!col)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s is NULL", what);
    if (col->rt != rt)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s belongs to another runtime", what);
    if (!col->dev)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s is a host column: run operators "
                            "on it with coproc_submit, or upload it to a device", what);
    if (dev && col->dev != dev)
        return coproc__fail(rt, COPROC_WRONG_DEVICE, "%s lives on device %d, not device %d", what,
                            col->dev->index, dev->index);
    return COPROC_OK;
}

coproc_status coproc_column_alloc(coproc_runtime *rt, int device, coproc_type t, size_t n,
                                  coproc_column **out)
{
    if (!rt || !out)
        return rt ? coproc__fail(rt, COPROC_NULL_POINTER, "out is NULL") : COPROC_NULL_POINTER;
    *out = NULL;
    if ((unsigned)t >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "invalid column type %d", (int)t);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    return coproc__column_new(rt, dev, t, n, out);
}

coproc_status coproc_column_upload(coproc_runtime *rt, int device, coproc_type t,
                                   const void *host, size_t n, coproc_column **out)
{
    if (!rt || !out)
        return rt ? coproc__fail(rt, COPROC_NULL_POINTER, "out is NULL") : COPROC_NULL_POINTER;
    *out = NULL;
    if (!host && n > 0)
        return coproc__fail(rt, COPROC_NULL_POINTER, "host data is NULL for %zu rows", n);
    coproc_column *col;
    coproc_status s = coproc_column_alloc(rt, device, t, n, &col);
    if (s != COPROC_OK)
        return s;
    /* through transfer.c: counted, staged where that pays, and timed to keep
     * the device's transfer level current */
    if (n > 0 && (s = coproc__h2d(rt, col->dev, NULL, col->mem, 0, host,
                                  n * coproc_type_size(t), 0)) != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    *out = col;
    return COPROC_OK;
}

static coproc_status host_column_make(coproc_runtime *rt, coproc_type t, size_t length,
                                      coproc_column **out)
{
    *out = NULL;
    if ((unsigned)t >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "invalid column type %d", (int)t);
    if (length > SIZE_MAX / 2 / coproc_type_size(t))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "column length %zu too large", length);
    coproc_column *col = calloc(1, sizeof *col);
    if (!col)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    col->rt = rt;
    col->type = t;
    col->length = length;
    col->id = atomic_fetch_add(&rt->next_column_id, 1) + 1;
    *out = col;
    return COPROC_OK;
}

coproc_status coproc__host_column_new(coproc_runtime *rt, coproc_type t, size_t length,
                                      coproc_column **out)
{
    coproc_status s = host_column_make(rt, t, length, out);
    if (s != COPROC_OK)
        return s;
    if (length > 0 && !((*out)->host = malloc(length * coproc_type_size(t)))) {
        free(*out);
        *out = NULL;
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory for %zu rows",
                            length);
    }
    (*out)->host_owned = 1;
    return COPROC_OK;
}

coproc_status coproc_column_wrap(coproc_runtime *rt, coproc_type t, const void *host, size_t n,
                                 coproc_column **out)
{
    if (!rt || !out)
        return rt ? coproc__fail(rt, COPROC_NULL_POINTER, "out is NULL") : COPROC_NULL_POINTER;
    *out = NULL;
    if (!host && n > 0)
        return coproc__fail(rt, COPROC_NULL_POINTER, "host data is NULL for %zu rows", n);
    coproc_status s = host_column_make(rt, t, n, out);
    if (s == COPROC_OK)
        (*out)->host = (void *)host; /* borrowed; only read */
    return s;
}

coproc_status coproc_column_host_alloc(coproc_runtime *rt, coproc_type t, size_t n,
                                       coproc_column **out)
{
    if (!rt || !out)
        return rt ? coproc__fail(rt, COPROC_NULL_POINTER, "out is NULL") : COPROC_NULL_POINTER;
    *out = NULL;
    coproc_status s = host_column_make(rt, t, n, out);
    if (s != COPROC_OK || n == 0)
        return s;
    coproc_column *col = *out;
    size_t bytes = n * coproc_type_size(t);
    /* Page-locked memory from the first device with its own memory (a GPU's
     * driver pins CL_MEM_ALLOC_HOST_PTR buffers), else from a host-unified
     * device (plain host memory there, but copies from it skip staging);
     * malloc'd memory when no device gives any. */
    for (int k = 0; k < 2 * rt->device_count && !col->host; k++) {
        coproc__device *dev = &rt->devices[k % rt->device_count];
        if ((k < rt->device_count) == (dev->info.host_unified_memory != 0))
            continue;
        cl_int err;
        cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                    NULL, &err);
        if (!mem)
            continue;
        void *p = coproc__map_now(dev, dev->queue, mem, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, &err);
        if (!p) {
            clReleaseMemObject(mem);
            continue;
        }
        col->host = p;
        col->pinned = mem;
        col->pinned_dev = dev;
    }
    if (!col->host) {
        if (!(col->host = malloc(bytes))) {
            free(col);
            *out = NULL;
            return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory for %zu rows",
                                n);
        }
        col->host_owned = 1;
    }
    return COPROC_OK;
}

void *coproc_column_host_data(const coproc_column *col)
{
    return col && !col->dev ? col->host : NULL;
}

coproc_status coproc_column_download(const coproc_column *col, void *host, size_t capacity)
{
    if (!col)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = col->rt;
    if (!host && col->length > 0)
        return coproc__fail(rt, COPROC_NULL_POINTER, "host buffer is NULL");
    if (capacity < col->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "host buffer holds %zu rows, column has "
                            "%zu", capacity, col->length);
    if (col->length == 0)
        return COPROC_OK;
    if (!col->dev) {
        memcpy(host, col->host, col->length * coproc_type_size(col->type));
        return COPROC_OK;
    }
    return coproc__d2h(rt, col->dev, NULL, host, col->mem, 0,
                       col->length * coproc_type_size(col->type), 0);
}

size_t coproc_column_length(const coproc_column *col) { return col ? col->length : 0; }

coproc_status coproc_column_set_validity(coproc_column *col, coproc_column *bitmap)
{
    if (!col)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = col->rt;
    const char *what = "coproc_column_set_validity";
    if (col->is_validity)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                            "%s: the column is another column's "
                            "validity bitmap; a bitmap has no validity of its own",
                            what);
    if (!bitmap) {
        coproc_column_free(col->validity);
        col->validity = NULL;
        return COPROC_OK;
    }
    if (bitmap->rt != rt)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                            "%s: the bitmap belongs to another "
                            "runtime",
                            what);
    if (bitmap == col || bitmap == col->validity || bitmap->is_validity || bitmap->validity)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: the bitmap is %s", what,
                            bitmap == col      ? "the column itself"
                            : bitmap->validity ? "a column with a validity of its own"
                                               : "already a column's validity");
    if (bitmap->dev != col->dev) {
        char cw[32] = "the host", bw[32] = "the host";
        if (col->dev)
            snprintf(cw, sizeof cw, "device %d", col->dev->index);
        if (bitmap->dev)
            snprintf(bw, sizeof bw, "device %d", bitmap->dev->index);
        return coproc__fail(rt, COPROC_WRONG_DEVICE,
                            "%s: the column lives on %s, the bitmap on "
                            "%s (a validity lives where its column does)",
                            what, cw, bw);
    }
    if (bitmap->type != COPROC_UINT32)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE,
                            "%s: the bitmap is %s; it must be "
                            "uint32",
                            what, coproc_type_name(bitmap->type));
    if (bitmap->length != (col->length + 31) / 32)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH,
                            "%s: the bitmap has %zu words; %zu rows "
                            "need %zu",
                            what, bitmap->length, col->length, (col->length + 31) / 32);
    coproc_column_free(col->validity);
    coproc__attach_validity(col, bitmap);
    return COPROC_OK;
}

const coproc_column *coproc_column_validity(const coproc_column *col)
{
    return col ? col->validity : NULL;
}
coproc_type coproc_column_type(const coproc_column *col) { return col ? col->type : COPROC__TYPE_COUNT; }
int coproc_column_device(const coproc_column *col) { return col && col->dev ? col->dev->index : -1; }

void coproc__column_host_changed(coproc_column *col)
{
    if (!col || col->dev)
        return;
    for (int i = 0; i < col->rt->device_count; i++)
        coproc__residency_forget(&col->rt->devices[i], col);
}

void coproc_column_free(coproc_column *col)
{
    if (!col)
        return;
    coproc__dict_unref(col->dict);
    coproc_column_free(col->validity);
    col->validity = NULL;
    if (!col->dev) {
        for (int i = 0; i < col->rt->device_count; i++)
            coproc__residency_forget(&col->rt->devices[i], col);
        if (col->pinned) {
            coproc__submit_begin(col->pinned_dev);
            clEnqueueUnmapMemObject(col->pinned_dev->queue, col->pinned, col->host, 0, NULL, NULL);
            coproc__submit_end(col->pinned_dev);
            coproc__finish(col->pinned_dev, col->pinned_dev->queue);
            clReleaseMemObject(col->pinned);
        } else if (col->host_owned) {
            free(col->host);
        }
        free(col);
        return;
    }
    if (col->host_wrapped) {
        /* Never pooled: the buffer must not outlive the caller's memory, nor may a
         * queued command still read it when on_free lets the caller have it back. */
        coproc__finish(col->dev, col->dev->queue);
        clReleaseMemObject(col->mem);
    } else {
        coproc__pool_give(&col->dev->pool, col->mem);
    }
    if (col->on_free)
        col->on_free(col->on_free_ctx);
    free(col);
}

coproc_status coproc__column_copy(coproc_runtime *rt, coproc__device *dev,
                                  const coproc_column *src, coproc_column **out)
{
    coproc_status s = coproc__column_new(rt, dev, src->type, src->length, out);
    size_t bytes = src->length * coproc_type_size(src->type);
    if (s != COPROC_OK || bytes == 0)
        return s;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueCopyBuffer(dev->queue, src->mem, (*out)->mem, 0, 0, bytes, 0, NULL, NULL);
    coproc__submit_end(dev);
    if (err != CL_SUCCESS) {
        coproc_column_free(*out);
        *out = NULL;
        return coproc__fail_cl(rt, err, "copying a column on device %d", dev->index);
    }
    return COPROC_OK;
}
