/* fault.h - fault injection (issue 18): COPROC_FAULT makes chosen OpenCL calls
 * of chosen devices fail, on real and simulated devices alike (both go
 * through the OpenCL backend's calls), so that the runtime's handling of a
 * failed allocation, copy, kernel launch or build, and of a device that
 * disappears, is tested without a broken driver.
 *
 *   COPROC_FAULT=SPEC[,SPEC...]   SPEC = SITE:DEVICE:NTH
 *     SITE   alloc (CL_MEM_OBJECT_ALLOCATION_FAILURE), h2d, d2h, launch,
 *            map (a result mapped on a zero-copy device) (CL_OUT_OF_RESOURCES),
 *            build (CL_BUILD_PROGRAM_FAILURE), finish (a wait for all of a
 *            queue's commands, CL_OUT_OF_RESOURCES), stuck (a blocking wait in
 *            the caller's thread sees its command never end, as with a driver
 *            that deadlocks: the wait ends at the device's bound, sync.h), or
 *            lost (CL_DEVICE_NOT_AVAILABLE from the NTH launch on, for every
 *            call of the device: it disappeared)
 *     NTH    the call's number on that device and site, from 1; "every:K"
 *            fails every K-th
 *   SPEC = SITE:DEVICE:NTH:SECONDS   slow, not failing (the watchdog's tests,
 *            backend/opencl/progress.h):
 *     slowbuild   the NTH program build (coproc__program_build) takes SECONDS
 *                 more, as a slow compiler would
 *     slowlaunch  the NTH kernel launch is held SECONDS in the driver (queued
 *                 behind an event completed that much later, each held launch
 *                 after the one before), as a driver that compiles at a first
 *                 launch would, or a kernel that runs that long; "every:1"
 *                 makes every launch a SECONDS-long command
 *   COPROC_FAULT=random:PERMILLE[:SEED]
 *            every alloc, copy, launch and map of every device fails with
 *            probability PERMILLE / 1000 (a deterministic sequence per seed,
 *            drawn in call order)
 *
 * The specification is read once, at coproc_open, into the runtime (no
 * process-wide state); a SPEC that does not parse is refused with a warning
 * naming it. Counters are atomic: any thread may ask. */
#ifndef COPROC_FAULT_H
#define COPROC_FAULT_H

#include <stdatomic.h>
#include <stdint.h>

typedef enum coproc__fault_site {
    COPROC__FAULT_ALLOC = 0,
    COPROC__FAULT_H2D,
    COPROC__FAULT_D2H,
    COPROC__FAULT_LAUNCH,
    COPROC__FAULT_BUILD,
    COPROC__FAULT_MAP,
    COPROC__FAULT_LOST,
    COPROC__FAULT_FINISH,
    COPROC__FAULT_STUCK,
    COPROC__FAULT_SLOW_BUILD, /* slow sites: coproc__fault_delay */
    COPROC__FAULT_SLOW_LAUNCH,
    COPROC__FAULT_SITES
} coproc__fault_site;

#define COPROC__FAULT_MAX 8

typedef struct coproc__faults {
    int n;
    struct {
        coproc__fault_site site;
        int device;
        uint64_t nth;   /* the call that fails (every: 0) */
        uint64_t every; /* every K-th fails (0: only nth) */
        double seconds; /* a slow site's delay */
    } spec[COPROC__FAULT_MAX];
    /* calls so far, per device (up to 16) and site */
    atomic_uint_fast64_t calls[16][COPROC__FAULT_SITES];
    atomic_int gone[16];           /* `lost` has struck: every call fails */
    unsigned random_permille;      /* random: the chance of each call, 0 none */
    uint64_t random_seed;
    atomic_uint_fast64_t random_draws;
    atomic_uint_fast64_t injected; /* faults injected so far */
    atomic_uint_fast64_t held_until_ns[16]; /* slowlaunch: the last held launch's end */
} coproc__faults;

struct coproc_runtime;

/* Parse $COPROC_FAULT into rt->faults (warnings name what is refused). */
void coproc__faults_read(struct coproc_runtime *rt);

/* 0 when the call may go on; else the OpenCL error it fails with (logged). */
int coproc__fault(struct coproc_runtime *rt, int device, coproc__fault_site site);

/* A slow site's call: the seconds it is to take more (0: none; logged). */
double coproc__fault_delay(struct coproc_runtime *rt, int device, coproc__fault_site site);

#endif
