/* hugemem.c - CPU device buffers in transparent huge pages (hugemem.h). */
#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define PAGE ((size_t)4 << 10)

typedef struct mapping {
    void *ptr;
    size_t bytes;
} mapping;

int coproc__hugemem_applies(const coproc__device *dev)
{
#ifdef MADV_HUGEPAGE
    return dev->info.type == COPROC_DEVICE_CPU && dev->info.host_unified_memory;
#else
    (void)dev;
    return 0;
#endif
}

/* The buffer is gone: OpenCL no longer touches its host memory. */
static void CL_CALLBACK unmap_on_release(cl_mem mem, void *user)
{
    (void)mem;
    mapping *m = user;
    munmap(m->ptr, m->bytes);
    free(m);
}

/* `bytes` (rounded up to 4 KiB) of anonymous memory starting on a 2 MiB
 * boundary, so that the kernel can back every whole 2 MiB of it with one
 * page; NULL on failure. */
static void *map_aligned(size_t bytes)
{
    size_t span = bytes + HUGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    size_t tail = (size_t)(raw + span - (start + bytes));
    if (tail > 0)
        munmap(start + bytes, tail);
    return start;
}

cl_mem coproc__hugemem_buffer(coproc__device *dev, size_t bytes, cl_int *err)
{
#ifdef MADV_HUGEPAGE
    mapping *m = malloc(sizeof *m);
    if (!m) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    m->bytes = (bytes + PAGE - 1) / PAGE * PAGE;
    m->ptr = map_aligned(m->bytes);
    if (!m->ptr) {
        free(m);
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    /* advice only: where the kernel has huge pages off, 4 KiB pages serve */
    madvise(m->ptr, m->bytes, MADV_HUGEPAGE);
    cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                                m->ptr, err);
    if (mem && (*err = clSetMemObjectDestructorCallback(mem, unmap_on_release, m)) != CL_SUCCESS) {
        /* without the callback nobody would unmap: give the buffer up */
        clReleaseMemObject(mem);
        mem = NULL;
    }
    if (!mem) {
        munmap(m->ptr, m->bytes);
        free(m);
    }
    return mem;
#else
    (void)dev;
    (void)bytes;
    *err = CL_INVALID_OPERATION;
    return NULL;
#endif
}
