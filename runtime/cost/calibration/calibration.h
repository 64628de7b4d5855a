/* calibration.h - the passes of coproc__calibrate_device (profile.h), one per
 * file of runtime/calibration/, and what they share. Each pass fills its part
 * of the profile and reports progress through the context. */
#ifndef COPROC_CALIBRATION_H
#define COPROC_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>

#include "cost/profile.h"
#include "core/error.h"

typedef struct coproc__calib {
    coproc_runtime *rt;
    coproc__device *dev;
    int full;                     /* 1: full pass, 0: quick */
    coproc__progress_fn progress; /* may be NULL */
    void *user;
    size_t max_bytes;             /* largest buffer a pass may allocate */
    int lean;                     /* the quick pass's shortcuts (bus.c: fewer cache
                                     evictions); 0 for the transfer check */
} coproc__calib;

/* The next of a deterministic pseudo-random sequence (splitmix64) from state
 * *s: the shuffles and sizes of the calibration passes and of --check. */
static inline uint64_t coproc__splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

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

/* What coproc__check_transfers measured: per direction (0 host->device,
 * 1 device->host) the sizes, their typical time and the profile's prediction. */
#define COPROC__CHECK_MAX 24
typedef struct coproc__transfer_check {
    int points;
    double bytes[2][COPROC__CHECK_MAX];
    double measured[2][COPROC__CHECK_MAX];
    double predicted[2][COPROC__CHECK_MAX];
    /* The sweep's own sizes from 1 MiB up, measured again in the same rounds:
     * drift[d] is the median of measured now / measured at calibration (the
     * machine's change since, not the model's error), and `interpolated` the
     * prediction from those re-measured points instead of the profile's (the
     * interpolation's error alone). */
    double drift[2];
    double interpolated[2][COPROC__CHECK_MAX];
    /* The runtime's own prediction (coproc__profile_transfer_now on the
     * device's profile) made before each run, median per size, while the
     * sweep sizes' runs taught it the level (transfer_drift.h) as the
     * runtime's copies do; level[d] is that level at the end. */
    double live[2][COPROC__CHECK_MAX];
    double level[2];
} coproc__transfer_check;

/*
 * Check p's transfer predictions on dev: `points` (<= COPROC__CHECK_MAX) sizes
 * drawn log-uniformly (seed) between 1 MiB and the largest size of p's sweep,
 * multiples of 4 KiB but none a sweep size, each way, from pinned (pinned 1)
 * or pageable memory, measured as calibration measured p (three times the
 * runs p's pass took, from the same cache state) - in the same rounds as the
 * sweep's sizes from 1 MiB up, measured again to tell drift (see above) - and
 * predicted by coproc__profile_transfer_time from p, and by the runtime from
 * dev's profile as those sweep-size runs teach it (see live above).
 */
coproc_status coproc__check_transfers(coproc_runtime *rt, coproc__device *dev,
                                      const coproc__profile *p, int pinned, int points,
                                      uint64_t seed, coproc__transfer_check *out);

/*
 * Fit t = latency + bytes / bandwidth to f's points by least squares weighted
 * for relative error (weights 1/t^2), latency kept >= 0. Returns 0, or -1 when
 * the points do not determine a positive bandwidth.
 */
int coproc__fit_transfer(coproc__transfer_fit *f);

#endif
