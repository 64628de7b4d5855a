/* calibration.h - the passes of coproc__calibrate_device (profile.h), one per
 * file of runtime/calibration/, and what they share. Each pass fills its part
 * of the profile and reports progress through the context. */
#ifndef COPROC_CALIBRATION_H
#define COPROC_CALIBRATION_H

#include <stddef.h>

#include "profile.h"
#include "runtime.h"

typedef struct coproc__calib {
    coproc_runtime *rt;
    coproc__device *dev;
    int full;                     /* 1: full pass, 0: quick */
    coproc__progress_fn progress; /* may be NULL */
    void *user;
    size_t max_bytes;             /* largest buffer a pass may allocate */
} coproc__calib;

/* Report progress: printf-style, to the callback if there is one. */
void coproc__calib_progress(const coproc__calib *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "4 KiB", "64 MiB": a power-of-two size for messages. */
void coproc__calib_size_name(double bytes, char *out, size_t size);

/* Bus: H2D and D2H from pinned and pageable memory over a size sweep, fitted;
 * both directions at once. */
coproc_status coproc__calib_bus(coproc__calib *c, coproc__profile *p);

/* Device memory: copy and read-only kernel bandwidth. */
coproc_status coproc__calib_memory(coproc__calib *c, coproc__profile *p);

/* Compute: 32-bit integer and fp32 multiply-add throughput. */
coproc_status coproc__calib_compute(coproc__calib *c, coproc__profile *p);

/* Empty-kernel launch latency, and program build time from source and from cache. */
coproc_status coproc__calib_launch(coproc__calib *c, coproc__profile *p);
coproc_status coproc__calib_build(coproc__calib *c, coproc__profile *p);

/* Every operator kind over a few sizes and shapes, seeding and fitting p->ops. */
coproc_status coproc__calib_operators(coproc__calib *c, coproc__profile *p);

/*
 * Fit t = latency + bytes / bandwidth to f's points by least squares weighted
 * for relative error (weights 1/t^2), latency kept >= 0. Returns 0, or -1 when
 * the points do not determine a positive bandwidth.
 */
int coproc__fit_transfer(coproc__transfer_fit *f);

#endif
