/* sync.c - blocking OpenCL calls that wait on their own event (sync.h). */
#include "backend/opencl/sync.h"

/* Wait for ev, then hand it to *event or release it. */
static cl_int waited(cl_int err, cl_event ev, cl_event *event)
{
    if (err == CL_SUCCESS)
        err = clWaitForEvents(1, &ev);
    if (ev && event && err == CL_SUCCESS)
        *event = ev;
    else if (ev)
        clReleaseEvent(ev);
    return err;
}

cl_int coproc__read_now(cl_command_queue q, cl_mem src, size_t offset, size_t bytes, void *dst,
                        cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_event ev = NULL;
    if (event)
        *event = NULL;
    cl_int err = clEnqueueReadBuffer(q, src, CL_FALSE, offset, bytes, dst, nwait, wait, &ev);
    return waited(err, ev, event);
}

cl_int coproc__write_now(cl_command_queue q, cl_mem dst, size_t offset, size_t bytes,
                         const void *src, cl_uint nwait, const cl_event *wait, cl_event *event)
{
    cl_event ev = NULL;
    if (event)
        *event = NULL;
    cl_int err = clEnqueueWriteBuffer(q, dst, CL_FALSE, offset, bytes, src, nwait, wait, &ev);
    return waited(err, ev, event);
}

void *coproc__map_now(cl_command_queue q, cl_mem mem, cl_map_flags flags, size_t offset,
                      size_t bytes, cl_int *err)
{
    cl_event ev = NULL;
    void *p = clEnqueueMapBuffer(q, mem, CL_FALSE, flags, offset, bytes, 0, NULL, &ev, err);
    *err = waited(p ? CL_SUCCESS : *err, ev, NULL);
    if (*err != CL_SUCCESS && p) {
        clEnqueueUnmapMemObject(q, mem, p, 0, NULL, NULL);
        p = NULL;
    }
    return p;
}

cl_int coproc__finish(cl_command_queue q)
{
    cl_event ev = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    err = waited(err, ev, NULL);
    return err == CL_SUCCESS ? clFinish(q) : err;
}
