/*
 * coproc/inspect.h - opt-in calls for tools: estimates, policies,
 * measurements, profiles and calibration. What coproc-calibrate, coproc-bench
 * and the other programs of this project need to look inside the runtime's
 * decisions, through the same contract as <coproc.h>: every call checks its
 * arguments, leaves an English message on the runtime on error
 * (coproc_errmsg), and says who owns what it returns. Applications that only
 * run operators do not need this header.
 */
#ifndef COPROC_INSPECT_H
#define COPROC_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "../coproc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- policies */

/* "wtar", "srt", "rr", "tbo", "pbo", "static" or "fixed"; a static string,
 * "invalid" when p is not a coproc_policy. */
COPROC_API const char *coproc_policy_name(coproc_policy p);

/* The coproc_policy named `name` (as coproc_policy_name spells it, any case),
 * or -1 when name is NULL or names none. COPROC_POLICY's ":device" suffix of
 * "fixed" is not part of a name. */
COPROC_API int coproc_policy_parse(const char *name);

/* ---------------------------------------------------------------- estimates */

/*
 * What coproc_submit would estimate op to cost on device `device` now, as the
 * placement policy sees it: moving the inputs not cached there (none on a
 * zero-copy device), computing (the device's cost model) and moving the
 * result back. *seconds (may be NULL) gets the whole estimate, negative when
 * the device's model of op's kind is not fitted yet; *transfer_seconds (may
 * be NULL) the part that moves data. Nothing runs and nothing is placed. op is
 * checked as coproc_submit checks it (its errors, with the same messages);
 * INVALID_ARGUMENT when device is out of range, UNSUPPORTED when the device
 * cannot run op (float64 inputs without fp64). op and its columns are
 * borrowed for the call only.
 */
COPROC_API coproc_status coproc_op_estimate(coproc_runtime *rt, const coproc_op *op, int device,
                                            double *seconds, double *transfer_seconds);

/* ---------------------------------------------------------------- measurements */

/*
 * Seconds on the runtime's clock, for timing work on any device: the wall
 * clock (CLOCK_MONOTONIC) over OpenCL devices; over simulated devices
 * (COPROC_DEVICES=sim:PROFILE.json,...) their virtual clock, which stands at
 * the latest end of a task a caller has waited for (coproc_wait, or a
 * synchronous call on host columns). -1 when rt is NULL.
 */
COPROC_API double coproc_clock_seconds(const coproc_runtime *rt);

/*
 * Measure device `device`'s memory bandwidth (UNSUPPORTED on a simulated device,
 * whose kernels run on another): copy `bytes` (rounded down to a
 * multiple of 16, at least 16) from one device buffer to another `reps` (>= 1)
 * times with a copy kernel and give the best run in *bytes_per_s, counting
 * bytes read plus bytes written (as STREAM's copy does). Takes about
 * reps x 2 x bytes / bandwidth; allocates two buffers of `bytes` on the
 * device for the call (DEVICE_OUT_OF_MEMORY when they do not fit).
 */
COPROC_API coproc_status coproc_measure_bandwidth(coproc_runtime *rt, int device, size_t bytes,
                                                  int reps, double *bytes_per_s);

/* Flags of coproc_column_write. */
#define COPROC_WRITE_PINNED_SOURCE 1u /* src is pinned (page-locked) memory: copied directly */

/*
 * Copy `rows` rows from host memory `src` (borrowed, read during the call
 * only) into device column col, starting at row first_row, and wait for the
 * copy. This is the runtime's own host->device path, the one operators over
 * host columns take: pageable memory goes through the device's pinned staging
 * buffers in chunks; with COPROC_WRITE_PINNED_SOURCE (memory from
 * coproc_column_host_alloc, or a mapped CL_MEM_ALLOC_HOST_PTR buffer) it is
 * copied directly. The copy is counted in the device's bytes_h2d and teaches
 * its transfer level (coproc_device_stats), so a tool that times this call
 * times what the runtime's copies do. INVALID_ARGUMENT for a host column,
 * OUT_OF_RANGE when the rows do not fit in col. rows 0 copies nothing.
 */
COPROC_API coproc_status coproc_column_write(coproc_column *col, size_t first_row,
                                             const void *src, size_t rows, unsigned flags);

/* ---------------------------------------------------------------- profiles */

/*
 * A device's calibration profile: what calibration measured (transfers,
 * memory bandwidth, compute, launch and build times) and the cost model of
 * each operator kind with the observations it was fitted on. A coproc_profile
 * is the caller's own copy: it does not change as the runtime learns, and
 * stays valid after coproc_close. Free it with coproc_profile_free.
 * docs/profile.md describes every field of its JSON form.
 */
typedef struct coproc_profile coproc_profile;

/* Release p. NULL is a no-op. */
COPROC_API void coproc_profile_free(coproc_profile *p);

/*
 * Read device `device`'s profile from the cache directory into a new
 * *out (NULL on error). IO_ERROR when there is none (or no cache directory);
 * CORRUPT_PROFILE when the file is not whole JSON, of another version or of
 * another device (the message says which). The device's own profile is not
 * changed (see coproc_profile_use).
 */
COPROC_API coproc_status coproc_profile_load(coproc_runtime *rt, int device, coproc_profile **out);

/*
 * A copy of the profile device `device` predicts from now: the one loaded or
 * measured at coproc_open (or given by coproc_profile_use), with its models as
 * refined by the operators run since; with calibration off, empty
 * measurements and models learned from runs only. *out is new (NULL on error).
 */
COPROC_API coproc_status coproc_profile_current(coproc_runtime *rt, int device,
                                                coproc_profile **out);

/*
 * Make a copy of p device `device`'s profile: its measurements and models
 * replace the device's, which then predicts from them and refines them with
 * each operator run. p must be a profile of this device (INVALID_ARGUMENT
 * otherwise: profiles are per device model and driver); it stays the
 * caller's. Saving is separate: coproc_profile_save_device (coproc_profile_save
 * keeps only the profiles of devices calibrated or loaded at coproc_open).
 */
COPROC_API coproc_status coproc_profile_use(coproc_runtime *rt, int device,
                                            const coproc_profile *p);

/*
 * Save p as device `device`'s profile in the cache directory (atomically;
 * where coproc_open and coproc_profile_load look for it). IO_ERROR when there
 * is no cache directory or the file cannot be written; INVALID_ARGUMENT when
 * p is another device's profile. p stays the caller's.
 */
COPROC_API coproc_status coproc_profile_save_device(coproc_runtime *rt, int device,
                                                    const coproc_profile *p);

/*
 * p as its versioned JSON document (schema "coproc.profile", the text the
 * cache file holds, docs/profile.md), compact. The string is the caller's:
 * release it with free(). NULL when p is NULL or host memory runs out.
 */
COPROC_API char *coproc_profile_json(const coproc_profile *p);

/*
 * Seconds p predicts to move `bytes` host->device (to_device nonzero) or
 * device->host, from pinned (pinned nonzero) or pageable host memory: inside
 * the calibration sweep interpolated between its measured points, beyond it
 * along the last segment (where it falls, at the fitted bandwidth), below it
 * on the fitted line. 0 for bytes <= 0;
 * negative when that direction was never calibrated or p is NULL. This is the
 * profile alone, without the transfer level the runtime scales it by.
 */
COPROC_API double coproc_profile_transfer_time(const coproc_profile *p, int to_device,
                                               int pinned, double bytes);

/* Most features a cost model has; features of each kind: docs/profile.md. */
#define COPROC_MODEL_MAX_FEATURES 3

/*
 * Seconds p's cost model of kind k predicts for an operator with features x
 * (as many as the model has, in the order of docs/profile.md; the device's
 * computation only, no transfer). Negative when that model is not fitted, p
 * or x is NULL or k is out of range.
 */
COPROC_API double coproc_profile_predict(const coproc_profile *p, coproc_op_kind k,
                                         const double *x);

/*
 * The latest observation device `device`'s live model of kind k learned
 * from: its features into x (room for COPROC_MODEL_MAX_FEATURES; the model's
 * count of them are written) and its measured seconds into *seconds; and
 * *observations, the model's count of observations so far, read together with
 * them (compare it before and after a run to know that the run was observed:
 * a run that built a kernel program is not). With no observation yet,
 * *observations is 0 and x and *seconds are left alone. Any of x, seconds
 * and observations may be NULL.
 */
COPROC_API coproc_status coproc_model_last(coproc_runtime *rt, int device, coproc_op_kind k,
                                           double *x, double *seconds, uint64_t *observations);

/*
 * Fit a new cost model of kind k's form (its features, docs/profile.md) to n
 * points as the runtime fits its own: x[i] holds point i's features (the
 * first `features` of the row) and seconds[i] its time. predicted[i] (caller
 * room for n) receives the fitted model's prediction at x[i]: how closely any
 * model of this form can follow the points. n from 1 to 256. There is no
 * runtime, so errors leave no message: NULL_POINTER (x, seconds or predicted
 * NULL), INVALID_ARGUMENT (k or n out of range), HOST_OUT_OF_MEMORY, and
 * UNSUPPORTED when the points do not determine a fit (fewer distinct points
 * than features + 1); predicted is then untouched.
 */
COPROC_API coproc_status coproc_model_fit_points(coproc_op_kind k, int n,
                                                 const double (*x)[COPROC_MODEL_MAX_FEATURES],
                                                 const double *seconds, double *predicted);

/* ---------------------------------------------------------------- calibration */

/* Progress of a calibration: a short line ("bus h2d pinned 64 MiB"), valid
 * during the call only; called on the calling thread. */
typedef void (*coproc_progress_fn)(void *user, const char *what);

/*
 * Calibrate device `device` now, into a new profile *out (NULL on error):
 * launch latency and build times, transfers (pinned, pageable, both
 * directions), memory bandwidth, compute, and each operator kind over a few
 * sizes, seeding its cost model. full nonzero: the full pass; 0: the quick
 * pass (seconds on PoCL with a warm kernel cache). progress (may be NULL)
 * gets a line per step, with user. The device's own profile is not changed
 * (coproc_profile_use), nor is anything saved (coproc_profile_save_device).
 * Do not run other work on the device meanwhile: it would skew the figures.
 */
COPROC_API coproc_status coproc_calibrate(coproc_runtime *rt, int device, int full,
                                          coproc_progress_fn progress, void *user,
                                          coproc_profile **out);

/* Most sizes coproc_check_transfers measures each way. */
#define COPROC_CHECK_MAX 24

/* What coproc_check_transfers measured, per direction d (0 host->device,
 * 1 device->host) and size k < points. */
typedef struct coproc_transfer_check {
    size_t struct_size;                       /* set by caller: sizeof(coproc_transfer_check) */
    int points;                               /* sizes each way */
    double bytes[2][COPROC_CHECK_MAX];
    double measured[2][COPROC_CHECK_MAX];     /* typical (median) device seconds */
    double predicted[2][COPROC_CHECK_MAX];    /* coproc_profile_transfer_time of p */
    /* The sweep's own sizes from 1 MiB up, measured again in the same
     * rounds: drift[d] is the median of now / at calibration (the machine's
     * change since), `interpolated` the prediction from those re-measured
     * points instead of p's (the interpolation's error alone). */
    double drift[2];
    double interpolated[2][COPROC_CHECK_MAX];
    /* The runtime's own prediction from the device's profile, made before
     * each run (median per size) while the sweep sizes' runs teach it the
     * transfer level as the runtime's copies do; level[d] that level at the end. */
    double live[2][COPROC_CHECK_MAX];
    double level[2];
} coproc_transfer_check;

/*
 * Check p's transfer predictions on device `device`: `points` (1 to
 * COPROC_CHECK_MAX) sizes drawn log-uniformly from `seed` between 1 MiB and
 * the largest size of p's sweep, none a sweep size, each way, from pinned
 * (pinned nonzero) or pageable memory, measured as calibration measured p and
 * predicted from p and, live, by the device's own profile (give it p first
 * with coproc_profile_use to score p's live prediction). Takes seconds; the
 * device's transfer level learns from it. out->struct_size must be set.
 */
COPROC_API coproc_status coproc_check_transfers(coproc_runtime *rt, int device,
                                                const coproc_profile *p, int pinned, int points,
                                                uint64_t seed, coproc_transfer_check *out);

#ifdef __cplusplus
}
#endif
#endif /* COPROC_INSPECT_H */
