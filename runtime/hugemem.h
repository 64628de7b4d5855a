/* hugemem.h - buffers of a CPU device backed by transparent huge pages.
 * A CPU OpenCL device (PoCL) keeps a buffer in ordinary host memory in 4 KiB
 * pages, so an operator that reads at random across a column of megabytes
 * (gather, a join's probe, a group-by's table) misses the TLB on most reads,
 * and in a virtual machine each miss walks two page tables. The same gather
 * over memory advised MADV_HUGEPAGE ran 1.3-2x faster on the 2-core PoCL VM
 * here, and its time no longer depended on which pages an allocation got
 * (docs/performance.md). So on a CPU device whose memory is the host's,
 * coproc allocates large buffers itself - 2 MiB aligned, advised huge - and
 * hands them to OpenCL with CL_MEM_USE_HOST_PTR (the device works in them in
 * place); a destructor callback unmaps them when the buffer is released. */
#ifndef COPROC_HUGEMEM_H
#define COPROC_HUGEMEM_H

#include <stddef.h>

#include "device.h"

/* Smaller buffers gain little: a huge page is 2 MiB. */
#define COPROC__HUGEMEM_MIN_BYTES ((size_t)4 << 20)

/* Whether dev's large buffers are made here: a CPU device with host-unified
 * memory, on a system that has madvise(MADV_HUGEPAGE). */
int coproc__hugemem_applies(const coproc__device *dev);

/* A READ_WRITE buffer of `bytes` on dev in huge-page-advised host memory;
 * NULL (and *err set) when that fails - the caller then creates an ordinary
 * buffer. */
cl_mem coproc__hugemem_buffer(coproc__device *dev, size_t bytes, cl_int *err);

#endif
