/* bandwidth.h - measure a device's memory bandwidth with a copy kernel. */
#ifndef COPROC_BANDWIDTH_H
#define COPROC_BANDWIDTH_H

#include "backend/opencl/device.h"

/*
 * Copy `bytes` (rounded down to 16) from one device buffer to another `reps`
 * times with cl/memcopy.cl and report the best bandwidth in bytes per second,
 * counting bytes read plus bytes written (as STREAM's copy does).
 */
coproc_status coproc__copy_bandwidth(coproc_runtime *rt, coproc__device *dev, size_t bytes,
                                     int reps, double *bytes_per_s);

/* Monotonic time in seconds. */
double coproc__now(void);

#endif
