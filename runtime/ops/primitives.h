/* primitives.h - device-wide building blocks shared by operators (GDB's
 * primitives): scan and flag compaction. Implemented in runtime/ops/scan.c. */
#ifndef COPROC_PRIMITIVES_H
#define COPROC_PRIMITIVES_H

#include <stdint.h>

#include "backend/opencl/device.h"

/*
 * Exclusive prefix sum of n uint32 values of `in` into `out` (uint32, n
 * elements, must not alias in), reduce-then-scan (no inter-group spinning).
 * *total (may be NULL) receives the sum of all n values (64-bit). n may be 0.
 */
coproc_status coproc__scan_exclusive_u32(coproc_runtime *rt, coproc__device *dev, cl_mem in,
                                         size_t n, cl_mem out, uint64_t *total);

/*
 * The positions (UINT32, ascending) of the rows whose uint32 flag is nonzero.
 * *positions receives a new buffer of max(count, 1) elements that the caller
 * releases; *count the number of positions.
 */
coproc_status coproc__flags_to_positions(coproc_runtime *rt, coproc__device *dev, cl_mem flags,
                                         size_t n, cl_mem *positions, uint64_t *count);

#endif
