/* interop.c - the OpenCL objects behind devices and columns (coproc/opencl.h). */
#include "coproc/opencl.h"

#include "data/column.h"
#include "core/runtime.h"

coproc_status coproc_device_opencl(const coproc_runtime *crt, int i, cl_context *context,
                                   cl_device_id *device, cl_command_queue *queue)
{
    coproc_runtime *rt = (coproc_runtime *)crt;
    if (!rt)
        return COPROC_NULL_POINTER;
    coproc__device *dev = coproc__device_at(rt, i);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    if (context)
        *context = dev->context;
    if (device)
        *device = dev->id;
    if (queue)
        *queue = dev->queue;
    return COPROC_OK;
}

cl_mem coproc_column_opencl(const coproc_column *col)
{
    return col ? col->mem : NULL;
}
