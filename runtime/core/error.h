/* error.h - reporting: a status with a message recorded on the runtime, the
 * OpenCL error's name and status, and the log. What most of the runtime needs
 * of the runtime handle (runtime.h has the rest). Implemented in runtime.c and
 * status.c. */
#ifndef COPROC_ERROR_H
#define COPROC_ERROR_H

#include <stddef.h>

#include "coproc.h"

/* Record an error message on rt (may be NULL) and return s, so callers write
 * `return coproc__fail(rt, COPROC_X, "...")`. */
coproc_status coproc__fail(coproc_runtime *rt, coproc_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As coproc__fail for an OpenCL error: the message ends with the CL error name,
 * and the status is derived from the CL code (out of memory, device lost, ...). */
coproc_status coproc__fail_cl(coproc_runtime *rt, int cl_err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Map an OpenCL error code to the closest coproc status. */
coproc_status coproc__status_from_cl(int cl_err);

/* Not an OpenCL code: a wait saw its command make no progress within the
 * device's bound (backend/opencl/sync.h); DEVICE_LOST. */
#define COPROC__CL_NO_PROGRESS (-9100)

/* Copy the last error message of rt into buf (size bytes), under its lock. */
void coproc__errmsg_copy(coproc_runtime *rt, char *buf, size_t size);

void coproc__log(coproc_runtime *rt, coproc_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
