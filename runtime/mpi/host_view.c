/* host_view.c - a device column's rows where MPI can read them. coproc's device memory is
 * OpenCL buffers, which no MPI takes (a CUDA-aware MPI takes CUDA pointers, not cl_mem), so
 * every exchange reads host memory: on a host-unified device (PoCL's CPU device, an
 * integrated GPU) the buffer is mapped (clEnqueueMapBuffer through coproc/opencl.h) and MPI
 * reads it in place, with no copy; elsewhere the column is downloaded into a pinned host
 * buffer kept in the handle and reused by later calls. */
#include "coproc/opencl.h"
#include "mpi_internal.h"

#define set_msg coproc_mpi_set_msg_

void coproc_mpi_set_map_(coproc_mpi *m, int map)
{
    m->no_map = !map;
}

/* Map the column when its device says its memory is the host's; 0 when it could not. */
static int map_in_place(coproc_mpi *m, const coproc_column *col, size_t bytes,
                        coproc_mpi_host_view *v)
{
    coproc_device_info info;
    int d = coproc_column_device(col);
    cl_command_queue q = NULL;
    cl_mem mem = coproc_column_opencl(col);
    if (m->no_map || !mem || coproc_device_info_get(m->rt, d, &info) != COPROC_OK ||
        !info.host_unified_memory || coproc_device_opencl(m->rt, d, NULL, NULL, &q) != COPROC_OK)
        return 0;
    cl_int err = CL_SUCCESS;
    /* on coproc's in-order queue: after every kernel that wrote the column */
    void *p = clEnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    if (!p || err != CL_SUCCESS)
        return 0; /* then download it */
    v->p = p, v->mem = (void *)mem, v->queue = (void *)q;
    return 1;
}

coproc_status coproc_mpi_host_view_(coproc_mpi *m, const coproc_column *col, int i,
                                    coproc_mpi_host_view *v, char *msg)
{
    v->p = coproc_column_host_data(col), v->mem = NULL, v->queue = NULL, v->mapped = 0;
    size_t n = coproc_column_length(col), bytes = n * coproc_type_size(coproc_column_type(col));
    if (v->p || n == 0)
        return COPROC_OK; /* a host column: read where it lies */
    if (map_in_place(m, col, bytes, v)) {
        v->mapped = 1;
        return COPROC_OK;
    }
    void *st = coproc_mpi_stage_(m, i, bytes);
    if (!st) {
        set_msg(msg, "out of host memory staging a column of %zu bytes", bytes);
        return COPROC_HOST_OUT_OF_MEMORY;
    }
    if (coproc_column_download(col, st, n) != COPROC_OK) {
        set_msg(msg, "downloading a column: %s", coproc_errmsg(m->rt));
        return COPROC_DRIVER_ERROR;
    }
    v->p = st;
    return COPROC_OK;
}

void coproc_mpi_host_view_end_(coproc_mpi_host_view *v)
{
    if (v->mapped) {
        cl_command_queue q = (cl_command_queue)v->queue;
        clEnqueueUnmapMemObject(q, (cl_mem)v->mem, (void *)v->p, 0, NULL, NULL);
        clFinish(q); /* unmapped before coproc's next command over the column */
    }
    v->mapped = 0, v->p = NULL;
}
