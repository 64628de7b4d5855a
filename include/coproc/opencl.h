/*
 * coproc/opencl.h - opt-in interoperation with OpenCL (as hwloc/opencl.h is
 * for hwloc): the OpenCL objects behind a coproc device or column, for users
 * who want to run their own kernels on coproc's data. Include it only where
 * OpenCL handles are wanted; <coproc.h> never exposes them.
 */
#ifndef COPROC_OPENCL_H
#define COPROC_OPENCL_H

#include <CL/cl.h>

#include "../coproc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The context, device and in-order command queue (profiling enabled) of
 * device i. Any out pointer may be NULL. The handles stay owned by the runtime
 * and valid until coproc_close; retain them (clRetain*) to keep them longer.
 * Commands a caller enqueues on the queue are ordered with coproc's own.
 */
COPROC_API coproc_status coproc_device_opencl(const coproc_runtime *rt, int i, cl_context *context,
                                              cl_device_id *device, cl_command_queue *queue);

/*
 * The buffer holding col's elements (at least length * element size bytes),
 * owned by the column and valid until coproc_column_free; NULL if col is NULL.
 * Writing it through OpenCL changes the column.
 */
COPROC_API cl_mem coproc_column_opencl(const coproc_column *col);

#ifdef __cplusplus
}
#endif
#endif /* COPROC_OPENCL_H */
