/* profile.h - what calibration measures about one device, kept as a versioned
 * JSON document in the cache directory (docs/profile.md lists every field). */
#ifndef COPROC_PROFILE_H
#define COPROC_PROFILE_H

#include <jansson.h>

#include "backend/opencl/device.h"
#include "cost/model.h"
#include "cost/transfer_drift.h"

#define COPROC__PROFILE_SCHEMA "coproc.profile"
/* 2: transfer points are medians of profiling-event device times over a
 * denser sweep, operator points are timed by markers as the runtime times
 * operators, and models may bend ("knot"); version-1 files are replaced. */
#define COPROC__PROFILE_VERSION 2
#define COPROC__SWEEP_MAX 32

/* Operator kinds that have a cost model, and the features each model uses. */
typedef enum coproc__op_kind {
    COPROC__OP_REDUCE = 0,  /* x = {input bytes} */
    COPROC__OP_SELECT,      /* x = {input bytes, output rows} */
    COPROC__OP_MAP,         /* x = {input bytes, output bytes} (map, map_const, cast) */
    COPROC__OP_GATHER,      /* x = {input bytes, output bytes} (gather, scatter, compact) */
    COPROC__OP_SCAN,        /* x = {input bytes, output bytes} */
    COPROC__OP_GROUP_BY,    /* x = {input bytes, groups} */
    COPROC__OP_SORT,        /* x = {bytes moved (keys + values), rows * log2(rows)} */
    COPROC__OP_HASH_JOIN,   /* x = {input bytes (both sides), output pairs} */
    COPROC__OP_MERGE_JOIN,  /* x = {input bytes (both sides), output pairs} */
    COPROC__OP_SEMI_JOIN,   /* x = {input bytes (both sides), output rows} */
    COPROC__OP_KIND_COUNT
} coproc__op_kind;

/* "reduce", "select", ...; static. */
const char *coproc__op_kind_name(coproc__op_kind k);
/* Number of model features of kind k. */
int coproc__op_kind_features(coproc__op_kind k);

/* t(bytes) = latency + bytes / bandwidth, with the points it was fitted on. */
typedef struct coproc__transfer_fit {
    double latency_s;
    double bytes_per_s;
    int points;
    double bytes[COPROC__SWEEP_MAX];
    double seconds[COPROC__SWEEP_MAX];
} coproc__transfer_fit;

typedef struct coproc__profile {
    char fingerprint[768];         /* must equal the device's to be used */
    char device_name[128];
    double created_unix;           /* seconds since the epoch */
    int full;                      /* 1: full calibration, 0: quick */
    double calibration_seconds;    /* how long calibrating took */
    coproc__transfer_fit h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
    double both_directions_bytes_per_s; /* H2D and D2H at once, two queues, summed */
    double mem_copy_bytes_per_s;   /* read + write bytes per second of a copy kernel */
    double mem_read_bytes_per_s;   /* a read-only (reduction) kernel */
    double int_ops_per_s;          /* 32-bit integer multiply-adds per second */
    double float_ops_per_s;        /* fp32 FMAs (2 flops) per second, counted as flops */
    double launch_latency_s;       /* enqueue + finish of an empty kernel */
    double build_source_s;         /* building one program from source */
    double build_cached_s;         /* the same from the binary cache */
    coproc__model ops[COPROC__OP_KIND_COUNT];
    /* How the runtime's own copies run against the transfer fits above,
     * [to_device][pinned]; not saved: starts empty (factor 1) with every
     * profile made or loaded. */
    coproc__transfer_drift drift[2][2];
} coproc__profile;

/* An empty profile for dev (fingerprint set, models empty with the right feature counts). */
void coproc__profile_init(coproc__profile *p, const coproc__device *dev);

/* The whole profile as a versioned JSON document (new reference). */
json_t *coproc__profile_to_json(const coproc__profile *p);

/*
 * Read a profile document. Rejects (returns -1 and explains in `why`) a
 * document of another schema or version, of another device (fingerprint !=
 * expected_fingerprint), or with any field missing, of the wrong type or out
 * of range. p is fully written only on success.
 */
int coproc__profile_from_json(coproc__profile *p, const json_t *doc,
                              const char *expected_fingerprint, char *why, size_t why_size);

/* Path of dev's profile: <cache>/profiles/<hash of fingerprint>.json. -1 without a cache dir. */
int coproc__profile_path(const coproc_runtime *rt, const coproc__device *dev, char *out,
                         size_t size);

/* Save atomically (write, fsync, rename). IO_ERROR on failure. */
coproc_status coproc__profile_save(coproc_runtime *rt, const coproc__device *dev,
                                   const coproc__profile *p);

/*
 * Load dev's profile. COPROC_OK and *p filled; COPROC_IO_ERROR when there is
 * none (or no cache dir); COPROC_CORRUPT_PROFILE when the file is unreadable
 * JSON, truncated, foreign or of another version (the message says which).
 */
coproc_status coproc__profile_load(coproc_runtime *rt, const coproc__device *dev,
                                   coproc__profile *p);

/* Progress callback of calibration: a short line ("bus h2d pinned 64 MiB"). */
typedef void (*coproc__progress_fn)(void *user, const char *what);

/*
 * Measure dev (runtime/calibration/): transfers (pinned, pageable, both
 * directions), memory bandwidth, compute, launch latency, build times, and
 * each operator kind over a few sizes, seeding p->ops. full = 0 is the quick
 * pass (seconds on PoCL with a warm program cache): fewer sizes, fewer repeats.
 */
coproc_status coproc__calibrate_device(coproc_runtime *rt, coproc__device *dev, int full,
                                       coproc__progress_fn progress, void *user,
                                       coproc__profile *p);

/* Predicted seconds to move `bytes` host->device (to_device 1) or back, from
 * pinned (pinned 1) or pageable memory: inside the sweep interpolated between
 * the measured points (log-log), above it the last point plus the rest at the
 * last segment's rate, below it (or without points) the fitted line. 0 for
 * bytes <= 0; negative when the direction was never calibrated. */
double coproc__profile_transfer_time(const coproc__profile *p, int to_device, int pinned,
                                     double bytes);

/* The runtime's prediction for the same copy now: coproc__profile_transfer_time
 * scaled by the level its latest copies ran at (p->drift, transfer_drift.h).
 * Same sign conventions. */
double coproc__profile_transfer_now(const coproc__profile *p, int to_device, int pinned,
                                    double bytes);

/* Feed a copy the runtime made of `bytes` (from or to pinned host memory or
 * not) that took `seconds` into p->drift; copies below
 * COPROC__DRIFT_MIN_BYTES, and directions never calibrated, are ignored. */
void coproc__profile_transfer_observe(coproc__profile *p, int to_device, int pinned,
                                      double bytes, double seconds);

#endif
