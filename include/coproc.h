/*
 * coproc.h - run data-processing operators on every OpenCL device of a machine.
 *
 * The whole public C API. Handles are opaque; no state is shared between two
 * runtimes in one process. Every declaration says who owns what it takes and
 * returns, and what happens on error.
 *
 * Thread safety: a coproc_runtime may be used from several threads at once
 * (coproc_open/coproc_close excepted: close only after every other call on
 * the runtime has returned). A coproc_column may be read by several threads
 * at once but must not be freed while another call uses it.
 */
#ifndef COPROC_H
#define COPROC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public symbols; everything else in the library is hidden. */
#if defined(__GNUC__)
#define COPROC_API __attribute__((visibility("default")))
#else
#define COPROC_API
#endif

#define COPROC_VERSION_MAJOR 0
#define COPROC_VERSION_MINOR 1
#define COPROC_VERSION_PATCH 0
#define COPROC_VERSION_HEX \
    ((COPROC_VERSION_MAJOR << 16) | (COPROC_VERSION_MINOR << 8) | COPROC_VERSION_PATCH)

/* The library's version as COPROC_VERSION_HEX, and as a static string. */
COPROC_API unsigned coproc_version(void);
COPROC_API const char *coproc_version_string(void);

/* ---------------------------------------------------------------- status */

/* One table, from which the enum and the name/message functions are built. */
#define COPROC_STATUS_MAP(XX)                                                          \
    XX(OK, "success")                                                                  \
    XX(INVALID_ARGUMENT, "invalid argument")                                           \
    XX(NULL_POINTER, "a required pointer argument is NULL")                            \
    XX(LENGTH_MISMATCH, "input lengths do not match")                                  \
    XX(OUT_OF_RANGE, "a position or index is out of range")                            \
    XX(UNSUPPORTED_TYPE, "the column type is not supported by this operator")          \
    XX(UNSUPPORTED, "the device does not support this (e.g. no fp64)")                 \
    XX(NO_PLATFORM, "no OpenCL platform found (install an OpenCL driver)")             \
    XX(NO_DEVICE, "no OpenCL device found or selected")                                \
    XX(DRIVER_ERROR, "the OpenCL driver reported an error")                            \
    XX(BUILD_FAILED, "an OpenCL kernel failed to build")                               \
    XX(HOST_OUT_OF_MEMORY, "out of host memory")                                       \
    XX(DEVICE_OUT_OF_MEMORY, "out of device memory")                                   \
    XX(DEVICE_LOST, "the device stopped responding or disappeared")                    \
    XX(IO_ERROR, "a file could not be read or written")                                \
    XX(CORRUPT_PROFILE, "a profile or cache file is corrupt or foreign")               \
    XX(WRONG_DEVICE, "columns of one operator live on different devices")              \
    XX(INTERNAL, "internal error (a bug in coproc)")                                   \
    XX(TIMEOUT, "the wait ended before the work finished")

typedef enum coproc_status {
#define COPROC__STATUS_ENUM(name, msg) COPROC_##name,
    COPROC_STATUS_MAP(COPROC__STATUS_ENUM)
#undef COPROC__STATUS_ENUM
    COPROC__STATUS_COUNT
} coproc_status;

/* "COPROC_OK", "COPROC_NO_PLATFORM", ...; a static string, "COPROC_UNKNOWN" if s is not a status. */
COPROC_API const char *coproc_status_name(coproc_status s);
/* A short static English description of s. */
COPROC_API const char *coproc_status_message(coproc_status s);

/* ---------------------------------------------------------------- runtime */

typedef struct coproc_runtime coproc_runtime;

typedef enum coproc_log_level {
    COPROC_LOG_ERROR = 0,
    COPROC_LOG_WARN = 1,
    COPROC_LOG_INFO = 2,
    COPROC_LOG_DEBUG = 3
} coproc_log_level;

/* Receives log lines; msg is valid only during the call. Called from any thread. */
typedef void (*coproc_log_fn)(void *user, coproc_log_level level, const char *msg);

/*
 * Options for coproc_open. Initialise with coproc_options_init(), which sets
 * struct_size so that later versions of the library can grow the struct.
 * Environment variables override the matching fields, for experiments:
 *   COPROC_DEVICES    overrides devices
 *   COPROC_CACHE_DIR  overrides cache_dir
 *   COPROC_CALIBRATE  overrides calibration: "auto", "off" or "full"
 * (and COPROC_BUDGET, COPROC_POLICY, COPROC_WATCHDOG below) - unless the
 * field is named in over_env, which then outranks its variable.
 */
typedef enum coproc_calibration {
    /* Load each device's cached profile; where there is none (or it is corrupt,
     * foreign or of another version) run the quick calibration and save it. */
    COPROC_CALIBRATION_AUTO = 0,
    /* No calibration and no profile: cost models learn from operator runs only. */
    COPROC_CALIBRATION_OFF,
    /* Run the full calibration now and save it, even over a valid profile. */
    COPROC_CALIBRATION_FULL
} coproc_calibration;

typedef struct coproc_options {
    size_t struct_size;      /* sizeof(coproc_options); set by coproc_options_init */
    /* Which devices to use: NULL or "all"; "cpu", "gpu", "accelerator" (comma
     * separated kinds may be mixed); or indices into the list of all discovered
     * devices, "0,2"; or "platform=NAME", every device of the platforms whose
     * name contains NAME, ignoring case ("platform=rusticl"). Borrowed during
     * coproc_open only. */
    const char *devices;
    /* Directory for the program-binary cache and profiles; NULL picks
     * $XDG_CACHE_HOME/coproc, else ~/.cache/coproc. Borrowed during coproc_open. */
    const char *cache_dir;
    int disable_binary_cache; /* nonzero: always build kernels from source */
    coproc_log_fn log;        /* NULL: warnings and errors go to stderr */
    void *log_user;           /* passed to log */
    coproc_log_level log_level; /* lines above this level are dropped; default WARN */
    coproc_calibration calibration; /* default COPROC_CALIBRATION_AUTO */
    /* Device memory each device may use for operators over host columns
     * (cached copies of columns plus working memory); 0: 70 % of the device's
     * memory. Inputs larger than this stream through in chunks, or are
     * partitioned (sort, joins). A budget is a limit the runtime never
     * exceeds, so one below COPROC_MIN_DEVICE_BUDGET (the least in which every
     * operator can still stream) is refused: coproc_open returns
     * INVALID_ARGUMENT, the message going to the log. COPROC_BUDGET (bytes, or
     * with a K/M/G/T suffix) overrides it; a value that does not parse, or is
     * below the minimum, is ignored with a warning naming it. */
    uint64_t device_budget_bytes;
    /* Host-unified devices (PoCL) use host columns in place, moving no byte.
     * Nonzero: copy to them as to a discrete GPU (tests of the copy paths). */
    int disable_zero_copy;
    /* How operators are placed on devices; COPROC_POLICY overrides it with a
     * name ("wtar", "srt", "rr", "tbo", "pbo", "static", "fixed" or "fixed:2").
     * A COPROC_POLICY that names no policy, or a device the runtime does not
     * have, is ignored with a warning; a fixed_device out of range with
     * COPROC_POLICY_FIXED is warned about and device 0 used. */
    int policy;               /* a coproc_policy; default COPROC_POLICY_WTAR */
    int fixed_device;         /* the device of COPROC_POLICY_FIXED */
    /* Bound of each device's ready queue: a submit that finds it full waits
     * (back-pressure; no work is dropped). 0: 100. */
    int queue_depth;
    /* The watchdog over submitted operators: one whose device completes
     * none of its commands for longer than max(watchdog_seconds, 20 x its
     * estimated time) marks that device lost (a driver that deadlocks or a
     * device that stops); program builds and a driver's compile at a
     * kernel's first launch do not count, and a long operator whose commands
     * keep completing is not a hang. The device takes no more work, its
     * waits fail at once; the operator it was running and those queued on it
     * run again on another device that can run them, or end with
     * COPROC_DEVICE_LOST (an operator bound to that device: op.device, or
     * device columns there). 0: 60 s (a single kernel that runs long on a
     * busy machine must not look like a hang); negative: no watchdog.
     * COPROC_WATCHDOG overrides it: seconds (a decimal number) or "off". */
    double watchdog_seconds;
    /* Fields that outrank their environment variable: an OR of
     * coproc_option_field (0, the default: every variable overrides its
     * field). A library that opens runtimes for its callers picks their
     * devices so without touching the process's environment (coproc_mpi
     * gives each rank its share of the node's devices). A field named here
     * holds even when it is the default: cache_dir NULL then resolves as if
     * COPROC_CACHE_DIR were unset. */
    unsigned over_env;
} coproc_options;

/* The fields of coproc_options.over_env, each over its variable. */
typedef enum coproc_option_field {
    COPROC_OPTION_DEVICES = 1u << 0,     /* devices over COPROC_DEVICES */
    COPROC_OPTION_CACHE_DIR = 1u << 1,   /* cache_dir over COPROC_CACHE_DIR */
    COPROC_OPTION_CALIBRATION = 1u << 2, /* calibration over COPROC_CALIBRATE */
    COPROC_OPTION_BUDGET = 1u << 3,      /* device_budget_bytes over COPROC_BUDGET */
    COPROC_OPTION_POLICY = 1u << 4,      /* policy and fixed_device over COPROC_POLICY */
    COPROC_OPTION_WATCHDOG = 1u << 5,    /* watchdog_seconds over COPROC_WATCHDOG */
    COPROC_OPTION_ALL = (1u << 6) - 1    /* every field above: no variable counts */
} coproc_option_field;

/* The smallest nonzero coproc_options.device_budget_bytes (128 KiB). */
#define COPROC_MIN_DEVICE_BUDGET ((uint64_t)128 << 10)

/* Placement policies (see docs/api.md; HyPE's heuristics and Trueno-DB's rule). */
typedef enum coproc_policy {
    COPROC_POLICY_WTAR = 0, /* least queued + remaining + own estimated time (default) */
    COPROC_POLICY_SRT,      /* smallest estimated time, ignoring the queues */
    COPROC_POLICY_RR,       /* round-robin */
    COPROC_POLICY_TBO,      /* fastest, unless it is overloaded: then the next fastest */
    COPROC_POLICY_PBO,      /* at random, P(i) = 1 - T_i / sum T */
    COPROC_POLICY_STATIC,   /* Trueno-DB: the GPU for >= 10 MB and compute > 5x transfer */
    COPROC_POLICY_FIXED     /* always options.fixed_device */
} coproc_policy;

/* Fill *opts with defaults. opts must not be NULL. */
COPROC_API void coproc_options_init(coproc_options *opts);

/*
 * Discover devices and open a runtime over the selected ones.
 * opts may be NULL (defaults). On success *out owns a new runtime; free it with
 * coproc_close. On failure other than NULL_POINTER, INVALID_ARGUMENT (bad
 * struct_size) or HOST_OUT_OF_MEMORY, *out still receives a runtime that holds
 * the error message (coproc_errmsg) and no devices; the caller must close it.
 * Distinct failures: COPROC_NO_PLATFORM (no OpenCL driver installed),
 * COPROC_NO_DEVICE (no device, or none matched the selection),
 * COPROC_DRIVER_ERROR (every platform failed to answer).
 */
COPROC_API coproc_status coproc_open(const coproc_options *opts, coproc_runtime **out);

/* Release everything the runtime owns. Columns must have been freed first.
 * Submitted tasks not yet waited on - operators (coproc_submit) and queries
 * (coproc_query_submit, coproc/query.h) - are let finish (queued ones still
 * run), then freed with their results: their handles are invalid after. Their
 * input columns (and a query's plan) are read until then, so a caller shutting
 * down with work in flight calls coproc_drain, frees its columns, then closes.
 * NULL is a no-op. */
COPROC_API void coproc_close(coproc_runtime *rt);

/*
 * The last error of the runtime in English, naming the OpenCL error where one
 * caused it (e.g. "clCreateBuffer: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)").
 * The string is owned by the runtime and valid until the next call on it from
 * any thread. "" when no error has happened. rt NULL gives a static message.
 */
COPROC_API const char *coproc_errmsg(const coproc_runtime *rt);

/* ---------------------------------------------------------------- devices */

typedef enum coproc_device_type {
    COPROC_DEVICE_CPU = 1,
    COPROC_DEVICE_GPU = 2,
    COPROC_DEVICE_ACCELERATOR = 4,
    COPROC_DEVICE_OTHER = 8
} coproc_device_type;

typedef struct coproc_device_info {
    char name[128];
    char vendor[128];
    char platform[128];        /* platform name */
    char driver_version[64];
    char opencl_version[64];   /* CL_DEVICE_VERSION */
    char opencl_c_version[64]; /* CL_DEVICE_OPENCL_C_VERSION */
    coproc_device_type type;
    int discovered_index;      /* index among all discovered devices (COPROC_DEVICES uses it) */
    unsigned compute_units;
    uint64_t global_mem_bytes;
    uint64_t local_mem_bytes;
    uint64_t max_alloc_bytes;
    size_t max_work_group_size;
    int host_unified_memory;   /* 1: device memory is host memory (zero-copy possible) */
    int has_fp64;
    int has_int64_atomics;
    /* PCI location "dddd:bb:dd.f", or "" when the device has none (CPUs). */
    char pci_bus_id[16];
    /* NUMA node nearest to the device, -1 when the device spans several or is unknown. */
    int numa_node;
    char nodeset[64];          /* NUMA nodes near the device, hwloc list syntax "0-1" */
    char cpuset[256];          /* cores near the device, hwloc list syntax "0-15" */
    /* Index (in this runtime) of another device on the same hardware (e.g. the
     * same CPU behind two drivers), or -1. Both stay usable; they share cores. */
    int same_hardware_as;
    /* Capabilities beyond has_fp64 that change results or limits: whether
     * float32 keeps subnormal numbers (CL_FP_DENORM; 0: the device flushes them
     * to zero in its own arithmetic). */
    int has_fp32_subnormals;
    /* The device quirks coproc works around (docs/portability.md), comma-separated
     * ("loop-65535"), "" for none; with the limits they impose: rows one
     * work-item walks at most (0: none) and work-items per group at most beyond
     * each kernel's own CL_KERNEL_WORK_GROUP_SIZE (0: none). */
    char quirks[128];
    uint64_t max_rows_per_item;
    size_t quirk_max_work_group;
} coproc_device_info;

/* Number of devices the runtime uses (after selection); 0 if rt is NULL. */
COPROC_API int coproc_device_count(const coproc_runtime *rt);

/* Copy device i's description into *out. INVALID_ARGUMENT if i is out of range. */
COPROC_API coproc_status coproc_device_info_get(const coproc_runtime *rt, int i, coproc_device_info *out);

/* "cpu", "gpu", "accelerator" or "other"; static string. */
COPROC_API const char *coproc_device_type_name(coproc_device_type t);

/* ---------------------------------------------------------------- statistics */

typedef struct coproc_stats {
    size_t struct_size;               /* set by caller: sizeof(coproc_stats) */
    uint64_t programs_built;          /* kernel programs compiled from source */
    uint64_t programs_from_cache;     /* kernel programs loaded from the on-disk binary cache */
    uint64_t program_cache_writes;    /* binaries written to the cache */
    uint64_t faults_injected;         /* OpenCL calls failed on purpose (COPROC_FAULT, tests) */
} coproc_stats;

/* Snapshot the runtime's counters. out->struct_size must be set by the caller. */
COPROC_API coproc_status coproc_stats_get(const coproc_runtime *rt, coproc_stats *out);

/* Per device: data movement, the residency cache and the operators run there. */
typedef struct coproc_device_stats {
    size_t struct_size;          /* set by caller: sizeof(coproc_device_stats) */
    uint64_t bytes_h2d;          /* bytes copied host -> device */
    uint64_t bytes_d2h;          /* bytes copied device -> host */
    uint64_t cache_hits;         /* an operator found a host column already on the device */
    uint64_t cache_misses;       /* ... had to copy it there (or wrap it, zero-copy) */
    uint64_t cache_evictions;    /* cached copies dropped to make room */
    uint64_t resident_bytes;     /* device memory the cache holds now */
    uint64_t budget_bytes;       /* coproc_options.device_budget_bytes as applied */
    uint64_t tasks_run;          /* submitted operators that ran here */
    uint64_t tasks_streamed;     /* ... of which streamed or partitioned (over the budget) */
    double busy_seconds;         /* measured time of those operators */
    double mean_rel_error;       /* |estimate - measured| / measured, mean; -1 if none */
    int queued;                  /* operators waiting in its ready queue now */
    uint64_t cache_prefetches;   /* copies made ahead, while the operator before computed */
    /* How the runtime's own blocking copies of 1 MiB and more ran lately
     * against the calibrated profile: measured / predicted time, the median of
     * the latest 16 (1 until 3 are seen, or without a profile). Transfer
     * predictions are scaled by it. [0] host -> device, [1] device -> host;
     * then [0] pageable, [1] pinned host memory. */
    double transfer_level[2][2];
    uint64_t transfers_timed;    /* copies that taught it, all four kinds together */
    /* 1: the watchdog marked the device lost (coproc_options.watchdog_seconds);
     * it takes no more submitted work */
    int lost;
    uint64_t tasks_moved;        /* operators moved from it to another device when it was lost */
    /* Query pipelines admitted by memory footprint (docs/api.md, query
     * chopping): the footprints of those running here now, the most they
     * have been (never above budget_bytes), and how many pipelines waited
     * for room. */
    uint64_t admitted_bytes;
    uint64_t admitted_peak_bytes;
    uint64_t admission_waits;
    /* The shadow check (coproc/query.h, COPROC_VERIFY): query runs compared
     * with their shadow run that used this device (either run), and of
     * those the ones whose results differed (each logged as an error). */
    uint64_t verify_runs;
    uint64_t verify_mismatches;
} coproc_device_stats;

COPROC_API coproc_status coproc_device_stats_get(const coproc_runtime *rt, int device,
                                                 coproc_device_stats *out);

/* ---------------------------------------------------------------- cost models */

/* Operator kinds with a learned cost model (one model per kind and device). */
typedef enum coproc_op_kind {
    COPROC_OP_REDUCE = 0,  /* coproc_reduce, coproc_reduce_where */
    COPROC_OP_SELECT,      /* coproc_select, coproc_select_bitmap */
    COPROC_OP_MAP,         /* coproc_map, coproc_map_const, coproc_cast */
    COPROC_OP_GATHER,      /* coproc_gather, coproc_scatter, coproc_compact */
    COPROC_OP_SCAN,
    COPROC_OP_GROUP_BY,
    COPROC_OP_SORT,        /* coproc_sort, coproc_argsort */
    COPROC_OP_HASH_JOIN,
    COPROC_OP_MERGE_JOIN,
    COPROC_OP_SEMI_JOIN,
    COPROC_OP_KIND_COUNT
} coproc_op_kind;

/* "reduce", "select", ...; static string, "invalid" out of range. */
COPROC_API const char *coproc_op_kind_name(coproc_op_kind k);

typedef struct coproc_model_stats {
    size_t struct_size;       /* set by caller: sizeof(coproc_model_stats) */
    int fitted;               /* the model has coefficients */
    int features;             /* number of features (see docs/profile.md per kind) */
    double coef[4];           /* seconds = coef[0] + sum coef[k] * feature[k-1] */
    uint64_t observations;    /* runs observed (calibration and real) */
    uint64_t refits;          /* refits so far (every 100 observations) */
    double median_rel_error;  /* over recent runs predicted before they ran; -1 if none */
    double p90_rel_error;     /* 90th percentile of the same; -1 if none */
} coproc_model_stats;

/* The cost model of kind k on device i. */
COPROC_API coproc_status coproc_model_stats_get(const coproc_runtime *rt, int device,
                                                coproc_op_kind k, coproc_model_stats *out);

/* Save the profile of every calibrated device (loaded or measured at open),
 * with its refined models, into the cache directory; devices opened with
 * calibration off have no measurements to keep and are skipped. */
COPROC_API coproc_status coproc_profile_save(coproc_runtime *rt);

/* ---------------------------------------------------------------- columns */

typedef enum coproc_type {
    COPROC_INT32 = 0,
    COPROC_INT64,
    COPROC_UINT32,
    COPROC_UINT64,
    COPROC_FLOAT32,
    COPROC_FLOAT64,
    COPROC__TYPE_COUNT
} coproc_type;

/* Size in bytes of one element, 0 for an invalid type. */
COPROC_API size_t coproc_type_size(coproc_type t);
/* "int32", ...; static string, "invalid" for an invalid type. */
COPROC_API const char *coproc_type_name(coproc_type t);

/* A typed array living in one device's memory. */
typedef struct coproc_column coproc_column;

/*
 * Copy n elements of type t from host (borrowed, read during the call only)
 * into a new column on device `device`. n may be 0 (host may then be NULL).
 * *out owns the column; free it with coproc_column_free.
 * UNSUPPORTED: float64 on a device without fp64. DEVICE_OUT_OF_MEMORY: does not fit.
 */
COPROC_API coproc_status coproc_column_upload(coproc_runtime *rt, int device, coproc_type t,
                                   const void *host, size_t n, coproc_column **out);

/* A new uninitialised column of n elements on device `device`. */
COPROC_API coproc_status coproc_column_alloc(coproc_runtime *rt, int device, coproc_type t, size_t n,
                                  coproc_column **out);

/* Copy the column's elements into host (caller-owned, room for capacity elements).
 * LENGTH_MISMATCH if capacity < length. */
COPROC_API coproc_status coproc_column_download(const coproc_column *col, void *host, size_t capacity);

COPROC_API size_t coproc_column_length(const coproc_column *col);   /* 0 for NULL */
COPROC_API coproc_type coproc_column_type(const coproc_column *col);
COPROC_API int coproc_column_device(const coproc_column *col);      /* -1 for NULL */

/* Release the column. NULL is a no-op. */
COPROC_API void coproc_column_free(coproc_column *col);

/*
 * Host columns: data in host memory that coproc moves to whichever device an
 * operator runs on (coproc_submit), keeping copies there in each device's
 * residency cache so that a later operator on the same column moves nothing.
 *
 * coproc_column_wrap borrows n elements at host: they must stay valid and
 * unchanged until the column is freed (a change is not seen by cached copies).
 * n may be 0 (host may then be NULL).
 * coproc_column_host_alloc allocates n elements of pinned host memory (page-
 * locked where a device offers it, so copies run at the bus's full speed);
 * write them through coproc_column_host_data before the first operator.
 * Both give a column whose coproc_column_device is -1; coproc_column_download
 * copies it out. Free with coproc_column_free (drops the cached copies).
 */
COPROC_API coproc_status coproc_column_wrap(coproc_runtime *rt, coproc_type t, const void *host,
                                            size_t n, coproc_column **out);
COPROC_API coproc_status coproc_column_host_alloc(coproc_runtime *rt, coproc_type t, size_t n,
                                                  coproc_column **out);
/* A host column's rows: for coproc_column_wrap the caller's memory (read-only
 * to coproc: do not change it while the column lives), else memory the column
 * owns (write it before the first operator). NULL for device columns. */
COPROC_API void *coproc_column_host_data(const coproc_column *col);

/* ---------------------------------------------------------------- nulls */

/*
 * Nulls, with SQL's semantics. A column may carry a validity bitmap in
 * Arrow's layout: bit i set = row i valid (not null). It is a UINT32 column
 * of ceil(length / 32) words, bit i % 32 of word i / 32 for row i - the
 * layout coproc_select_bitmap makes, and on little-endian hosts byte for byte
 * Arrow's validity buffer (coproc/arrow.h imports and exports it). Bits of
 * rows >= length are ignored. A column without a bitmap has no nulls and
 * every operator runs on it exactly as before, at no extra cost. The values
 * stored under a null are unspecified (whatever the producer left there; an
 * operator may write anything there): read a row's value only when its bit
 * is set. coproc_column_download copies the values alone; download the
 * validity (coproc_column_validity) to tell which rows are null.
 *
 * Operators (over device or host columns, synchronous or submitted alike):
 * - select, select_bitmap: a comparison with a null is not true, so a filter
 *   drops the row; with OR, a row passes when a predicate on a valid value is
 *   true (as SQL's WHERE, where unknown does not pass). Positions and bitmaps
 *   carry no validity.
 * - reduce: nulls are skipped; out->count is the number of valid rows, 0 when
 *   every row is null (SQL's NULL result; the value is then the one over zero
 *   rows). COUNT gives count(col), the valid rows; count(*) is the column's
 *   length (or COUNT of a column without a validity).
 * - reduce_where: the rows whose bit is set in bitmap and that are valid.
 * - map, map_const, cast: null in, null out: the output's validity is the AND
 *   of the inputs' (a copy of the one there is); no validity when no input
 *   has one.
 * - scan: a null adds 0 to the running sum and its own output row is null
 *   (the output has the input's validity).
 * - gather: out row i is null when src row positions[i] is, or positions[i]
 *   itself (a null position is never read: any value may sit under it); the
 *   output carries a validity when src or positions do. compact: the
 *   selected rows keep their nulls (the output carries a validity when src
 *   does).
 * - scatter: dst row positions[i] takes src row i's value and validity (a
 *   null src row makes it null); a null position writes nothing (its value
 *   is never read); the other rows of dst keep theirs. dst gets a validity
 *   when src has one and dst none. Of rows i with the same position, the
 *   last (the highest i) wins, value and validity together - without nulls
 *   the winner is any of them (coproc_scatter). Costs an extra pass over dst
 *   and 4 bytes a dst row of device memory.
 * - A bitmap argument (reduce_where, compact) with a validity of its own
 *   reads its null words as 0: they select no row (SQL's WHERE on an unknown
 *   condition).
 * - group_by: the rows whose key is null form one group, the last one (after
 *   every key, sorted or not), reported with a null key: result.keys has a
 *   validity then, its last bit 0. Null values are skipped: count is the
 *   number of rows of the group whose value is valid (count(values)) - every
 *   row of the group without values or when values have no validity
 *   (count(*); for count(*) beside nullable values, group again with values
 *   NULL) - and sum, min and max are over those values, null (their columns
 *   get a validity) where a group has no valid value.
 * - hash_join, hash_join_count, sort_merge_join, semi_join: a null key never
 *   matches (on either side); positions refer to the inputs' rows.
 * - group_by_keys: a null is one more value of its key column (null equals
 *   null), so each combination with nulls is a group of its own, nulls
 *   ordered after every value of their column; key_out[k] carries a
 *   validity when keys[k] has one (bit 0: the group's key k is null). Values
 *   as group_by. hash_join_keys, hash_join_keys_count, semi_join_keys: a row
 *   with a null in any key column never matches (on either side).
 * - sort, argsort: rows with a null key go last, in input order (SQL's ASC
 *   NULLS LAST); coproc_sort_nulls and coproc_argsort_nulls put them first on
 *   request. A sort permutes the values' validity with their rows.
 * - Host inputs larger than the device budget, or over 2^32 rows: reduce,
 *   select, map (map_const) and group_by stream the validities beside the
 *   rows, in chunks of a multiple of 32 rows, with the results above (a
 *   group-by's partial groups merged on the host). Not handled yet, refused
 *   with UNSUPPORTED (never ignored): the other operators' streamed or
 *   partitioned runs over inputs with nulls (scan, sort, argsort, cast,
 *   gather, scatter, compact, reduce_where and the joins).
 * - Query plans (coproc/query.h) take columns with nulls, with SQL's
 *   semantics there too (coproc/query.h, "Nulls").
 * Cost: select, reduce and scan read the bitmap in their kernels (n / 8 bytes
 * more), and so does group_by when its keys are dense (a small range) and
 * its values integers or none (on a GPU device: keys with nulls, values
 * without), and the composite-key fold;
 * map, cast and gather add a bitmap pass; the others are composed from the null-free operators
 * (compaction, an extra small group-by or join) and cost more
 * (docs/performance.md, "Nulls").
 * Results not said to carry a validity carry none.
 */

/*
 * Give col the validity bitmap `bitmap` (NULL: remove col's bitmap, so every
 * row is valid). On success col owns bitmap: it is freed with col (or when
 * replaced), and the caller must not free it, change it, or give it to
 * another column. On failure nothing changes and the caller keeps bitmap.
 * bitmap must be a UINT32 column (else UNSUPPORTED_TYPE) of ceil(n / 32)
 * words for col's n rows (else LENGTH_MISMATCH), of the same runtime
 * (else INVALID_ARGUMENT) and living where col does: on col's device, or a
 * host column for a host column (else WRONG_DEVICE); neither col itself, nor
 * a column with a validity of its own, nor another column's validity
 * (INVALID_ARGUMENT). Not while another call uses col.
 */
COPROC_API coproc_status coproc_column_set_validity(coproc_column *col, coproc_column *bitmap);

/* col's validity bitmap, owned by col (valid until col is freed or its
 * validity replaced); NULL when col has none (every row valid) or is NULL. */
COPROC_API const coproc_column *coproc_column_validity(const coproc_column *col);

/* *count receives the number of null rows of col (0 without a validity); a
 * device column's bitmap is counted on its device. */
COPROC_API coproc_status coproc_column_null_count(const coproc_column *col, uint64_t *count);

/* ---------------------------------------------------------------- operators */

/* A scalar result; which member is set depends on the operator and input type. */
typedef struct coproc_scalar {
    coproc_type type;  /* the member that holds the value */
    union {
        int64_t i64;   /* sums of signed ints, min/max of int32/int64 (widened) */
        uint64_t u64;  /* sums of unsigned ints, counts, min/max of uint32/uint64 */
        double f64;    /* sums of floats, min/max of float32/float64 (widened) */
    } v;
    uint64_t count; /* rows that took part (nulls do not; 0: SQL's NULL result) */
} coproc_scalar;

typedef enum coproc_reduce_op {
    COPROC_REDUCE_SUM = 0, /* integers into 64 bits (wrapping), floats into double */
    COPROC_REDUCE_MIN,     /* NaN is ignored unless every row is NaN */
    COPROC_REDUCE_MAX,
    COPROC_REDUCE_COUNT
} coproc_reduce_op;

/*
 * Reduce a whole column on the device where it lives. For MIN/MAX over zero
 * rows, out->count is 0 and the value is the operator's identity (type max/min,
 * +inf/-inf). *out is written only on success.
 */
COPROC_API coproc_status coproc_reduce(coproc_runtime *rt, coproc_reduce_op op, const coproc_column *col,
                            coproc_scalar *out);

/*
 * Conventions for all operators below:
 * - Inputs are columns of rt, all on one device or all host columns (else
 *   WRONG_DEVICE). On device columns the operator runs on their device and its
 *   output columns are new columns there. On host columns it runs as a task
 *   (coproc_submit, then coproc_wait) on the device the placement policy picks,
 *   streamed or partitioned when the inputs exceed that device's budget, and
 *   its output columns are new host columns. Either way the outputs are owned
 *   by the caller (free with coproc_column_free); on error no output is
 *   written (*out stays NULL).
 * - The operators that write into a column (coproc_sort, coproc_scatter) write
 *   a host column's own memory (coproc_column_host_alloc or an operator's
 *   result) and drop its cached copies; a column that wraps caller memory
 *   (coproc_column_wrap, Arrow imports) is read-only to them (INVALID_ARGUMENT).
 * - Row positions are COPROC_UINT32 columns over inputs of at most UINT32_MAX
 *   rows (unchanged: the fast path). Host inputs of more rows stream through
 *   the device in chunks of at most UINT32_MAX rows; coproc_reduce,
 *   coproc_select (its positions are then COPROC_UINT64, each chunk's 32-bit
 *   positions plus the chunk's first row), coproc_map and coproc_group_by run
 *   there, and every count (select, reduce COUNT, group-by counts) is 64-bit.
 *   Gather takes UINT32 or UINT64 positions (the latter as a select over
 *   more than 2^32 rows gives them; its source must still fit the device:
 *   streamed, positions pass in chunks and the source stays whole in half
 *   the budget); scatter takes UINT32 positions only (UNSUPPORTED_TYPE for
 *   UINT64) and streams its src and positions in such chunks too.
 *   Argsort and the joins return UNSUPPORTED over more than UINT32_MAX rows.
 * - Keys of group-by and joins are integer columns (int32/int64/uint32/uint64);
 *   other key types give UNSUPPORTED_TYPE.
 */

/* A constant, read as the member matching the column type: i64 for int32 and
 * int64, u64 for uint32 and uint64, f64 for float32 and float64. A constant
 * that does not fit an int32/uint32 column is INVALID_ARGUMENT. */
typedef union coproc_value {
    int64_t i64;
    uint64_t u64;
    double f64;
} coproc_value;

/* ---------------------------------------------------------------- selection */

typedef enum coproc_cmp {
    COPROC_CMP_EQ = 0, /* col == a */
    COPROC_CMP_NE,     /* col != a  (NaN != a is true, as in C) */
    COPROC_CMP_LT,     /* col <  a */
    COPROC_CMP_LE,     /* col <= a */
    COPROC_CMP_GT,     /* col >  a */
    COPROC_CMP_GE,     /* col >= a */
    COPROC_CMP_RANGE   /* a <= col < b */
} coproc_cmp;

typedef struct coproc_predicate {
    const coproc_column *col; /* borrowed */
    coproc_cmp cmp;
    coproc_value a;
    coproc_value b;           /* upper bound (exclusive) for COPROC_CMP_RANGE */
} coproc_predicate;

typedef enum coproc_logic { COPROC_LOGIC_NONE = 0, COPROC_LOGIC_AND, COPROC_LOGIC_OR } coproc_logic;

/* One predicate, or two joined by AND/OR (logic NONE: second ignored). Both
 * columns must have the same length. */
typedef struct coproc_filter {
    coproc_predicate first;
    coproc_logic logic;
    coproc_predicate second;
} coproc_filter;

/*
 * Rows that satisfy f. *positions (may be NULL to only count) receives the
 * matching row positions in increasing order; *count (may be NULL) their number.
 */
COPROC_API coproc_status coproc_select(coproc_runtime *rt, const coproc_filter *f,
                                       coproc_column **positions, uint64_t *count);

/*
 * As coproc_select, but *bitmap receives a UINT32 column of ceil(n/32) words:
 * bit (i % 32) of word i / 32 is set when row i matches; unused high bits are 0.
 */
COPROC_API coproc_status coproc_select_bitmap(coproc_runtime *rt, const coproc_filter *f,
                                              coproc_column **bitmap, uint64_t *count);

/* ---------------------------------------------------------------- projection / map */

typedef enum coproc_arith {
    COPROC_ARITH_ADD = 0,
    COPROC_ARITH_SUB,
    COPROC_ARITH_MUL,
    /* Integer division by zero gives 0, and INT_MIN / -1 gives INT_MIN (wraps);
     * integer overflow wraps. Floats follow IEEE 754 (x/0 = +-inf, 0/0 = NaN). */
    COPROC_ARITH_DIV
} coproc_arith;

/* out[i] = a[i] op b[i]; a and b of the same type and length; out of that type. */
COPROC_API coproc_status coproc_map(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                                    const coproc_column *b, coproc_column **out);

/* out[i] = a[i] op c. On float32 columns c is rounded to float first and the
 * arithmetic is float's, the same on every device. */
COPROC_API coproc_status coproc_map_const(coproc_runtime *rt, coproc_arith op,
                                          const coproc_column *a, coproc_value c,
                                          coproc_column **out);

/* out[i] = (to)a[i] with C conversion rules; float to integer truncates toward
 * zero, and NaN or out-of-range values saturate (NaN gives 0). */
COPROC_API coproc_status coproc_cast(coproc_runtime *rt, const coproc_column *a, coproc_type to,
                                     coproc_column **out);

/* ---------------------------------------------------------------- gather / scatter / compaction */

/* out[i] = src[positions[i]]; positions UINT32 or UINT64; OUT_OF_RANGE (no
 * output) if a position >= length(src). */
COPROC_API coproc_status coproc_gather(coproc_runtime *rt, const coproc_column *src,
                                       const coproc_column *positions, coproc_column **out);

/* dst[positions[i]] = src[i]; src and positions of equal length, dst of src's
 * type. OUT_OF_RANGE (dst untouched) if a position >= length(dst). With
 * duplicate positions one of the writers wins (with nulls: the last one;
 * "nulls" above). */
COPROC_API coproc_status coproc_scatter(coproc_runtime *rt, const coproc_column *src,
                                        const coproc_column *positions, coproc_column *dst);

/* The rows of src whose bit is set in bitmap (as coproc_select_bitmap makes
 * it), in order. */
COPROC_API coproc_status coproc_compact(coproc_runtime *rt, const coproc_column *src,
                                        const coproc_column *bitmap, coproc_column **out);

/* coproc_reduce over the rows whose bit is set in bitmap. */
COPROC_API coproc_status coproc_reduce_where(coproc_runtime *rt, coproc_reduce_op op,
                                             const coproc_column *col,
                                             const coproc_column *bitmap, coproc_scalar *out);

/* ---------------------------------------------------------------- prefix scan */

/*
 * Prefix sums. Inclusive: out[i] = in[0] + ... + in[i]; exclusive: out[0] = 0,
 * out[i] = in[0] + ... + in[i-1]. The output type widens integers to 64 bits
 * (int32/int64 -> INT64, uint32/uint64 -> UINT64, wrapping) and keeps floats.
 */
COPROC_API coproc_status coproc_scan(coproc_runtime *rt, const coproc_column *in, int exclusive,
                                     coproc_column **out);

/* ---------------------------------------------------------------- group-by */

typedef struct coproc_group_result {
    size_t groups;          /* number of distinct keys (a null key counts as one) */
    coproc_column *keys;    /* distinct keys, key type; ascending when sorted was asked;
                             * with null keys, their group last and a validity marking it */
    coproc_column *count;   /* UINT64 rows per group (with nullable values: the rows whose
                             * value is valid; coproc.h, "nulls") */
    coproc_column *sum;     /* INT64 / UINT64 / FLOAT64 (as coproc_reduce; FLOAT32 on devices
                             * without fp64); NULL without values */
    coproc_column *min;     /* value type; NULL without values */
    coproc_column *max;     /* value type; NULL without values */
} coproc_group_result;

/* Which aggregates coproc_group_by_aggs computes: an OR of these. */
typedef enum coproc_group_agg {
    COPROC_GROUP_COUNT = 1 << 0, /* count (always given: see coproc_group_by_aggs) */
    COPROC_GROUP_SUM = 1 << 1,
    COPROC_GROUP_MIN = 1 << 2,
    COPROC_GROUP_MAX = 1 << 3,
    COPROC_GROUP_ALL = 0xF       /* all four: what coproc_group_by computes */
} coproc_group_agg;

/*
 * Group rows by keys and aggregate values (may be NULL: counts only; else the
 * same length as keys). The number of groups need not be known: no row is ever
 * lost. sorted != 0 orders the groups by ascending key. *out's columns are owned
 * by the caller: free them with coproc_group_result_free.
 * coproc_group_by computes every aggregate (COPROC_GROUP_ALL).
 */
COPROC_API coproc_status coproc_group_by(coproc_runtime *rt, const coproc_column *keys,
                                         const coproc_column *values, int sorted,
                                         coproc_group_result *out);

/*
 * coproc_group_by computing only the aggregates in aggs (COPROC_GROUP_*; 0 or
 * unknown bits: INVALID_ARGUMENT). A column not asked for is NULL in *out;
 * count is always given (groups are found by counting, so it costs nothing
 * more), and without values sum, min and max are NULL whatever aggs asks.
 * Fewer aggregates are faster: sums and counts of integer values skip the
 * per-row comparisons of min and max, and count alone reads no values.
 */
COPROC_API coproc_status coproc_group_by_aggs(coproc_runtime *rt, const coproc_column *keys,
                                              const coproc_column *values, unsigned aggs,
                                              int sorted, coproc_group_result *out);
COPROC_API void coproc_group_result_free(coproc_group_result *r);

/* ---------------------------------------------------------------- sort */

/*
 * Sort keys in place, ascending, by radix sort; values (may be NULL; same
 * length, any type) are permuted alongside, stably. Order: signed integers
 * numerically; floats -inf < ... < -0.0 < +0.0 < ... < +inf < NaN (all NaNs
 * last, in input order). Sorted float keys come back with every NaN as the
 * canonical quiet NaN: NaN payloads and signs are not kept.
 */
COPROC_API coproc_status coproc_sort(coproc_runtime *rt, coproc_column *keys,
                                     coproc_column *values);

/* *perm receives the UINT32 positions that sort keys stably (keys unchanged). */
COPROC_API coproc_status coproc_argsort(coproc_runtime *rt, const coproc_column *keys,
                                        coproc_column **perm);

/*
 * coproc_sort and coproc_argsort with null keys placed as asked: nulls_first
 * nonzero puts the rows whose key is null before every other row, zero after
 * (as coproc_sort and coproc_argsort do: SQL's ASC NULLS LAST, PostgreSQL's
 * default), in input order either way; the valid keys sort as without nulls.
 * A sort permutes the keys' and the values' validities with their rows, and
 * the sorted columns' bitmaps replace their old ones (a pointer from
 * coproc_column_validity taken before the sort is invalid after it).
 */
COPROC_API coproc_status coproc_sort_nulls(coproc_runtime *rt, coproc_column *keys,
                                           coproc_column *values, int nulls_first);
COPROC_API coproc_status coproc_argsort_nulls(coproc_runtime *rt, const coproc_column *keys,
                                              int nulls_first, coproc_column **perm);

/* ---------------------------------------------------------------- joins */

/* Matching pairs: left[i] and right[i] are UINT32 row positions, one per
 * matching pair (in no particular order). */
typedef struct coproc_join_result {
    size_t count;
    coproc_column *left;
    coproc_column *right;
} coproc_join_result;

/*
 * Equi-join of two integer key columns of the same type: every pair (l, r)
 * with left[l] == right[r]. Duplicate keys on either side give every pair.
 * hash join builds on `left` (at most 2^31 - 1 rows; the right side and the
 * pairs at most 2^32 - 2); the sort-merge join sorts copies of both. Key
 * columns of different types give INVALID_ARGUMENT.
 * Free the result with coproc_join_result_free.
 */
COPROC_API coproc_status coproc_hash_join(coproc_runtime *rt, const coproc_column *left,
                                          const coproc_column *right, coproc_join_result *out);
/*
 * The number of pairs coproc_hash_join would give, without making them: the
 * same table, probed once, nothing written per pair (so no limit on the
 * count). *count receives it (0 on error).
 */
COPROC_API coproc_status coproc_hash_join_count(coproc_runtime *rt, const coproc_column *left,
                                                const coproc_column *right, uint64_t *count);
COPROC_API coproc_status coproc_sort_merge_join(coproc_runtime *rt, const coproc_column *left,
                                                const coproc_column *right,
                                                coproc_join_result *out);
COPROC_API void coproc_join_result_free(coproc_join_result *r);

/* Semi-join: the positions (ascending) of the rows of probe whose key occurs in
 * build; *count (may be NULL) their number. */
COPROC_API coproc_status coproc_semi_join(coproc_runtime *rt, const coproc_column *probe,
                                          const coproc_column *build,
                                          coproc_column **positions, uint64_t *count);

/* ---------------------------------------------------------------- composite keys */

/*
 * Group-by and joins over nkeys (1 to 16) integer key columns of one length:
 * rows group, or match, when every key column is equal. Exact for any values:
 * the columns are folded into one 64-bit key, each as value - min where its
 * range is under 2^32 and as its dense rank otherwise, the key so far ranked
 * again where the combination would pass 64 bits (docs/api.md). The fold
 * costs a min, a max and one pass per key column (a rank: a group-by and a
 * join more). The key columns of one call are all host columns or all on one
 * device (WRONG_DEVICE otherwise); floats: UNSUPPORTED_TYPE. Key columns may
 * have nulls (coproc.h, "nulls": ranges and ranks over the valid rows).
 *
 * coproc_group_by_keys: as coproc_group_by_aggs on the combination, groups in
 * ascending order of (keys[0], keys[1], ...); out->keys is NULL and
 * key_out[k] (caller's array of nkeys) receives each group's value of keys[k]
 * (free with coproc_column_free; on error all are NULL), with a validity when
 * keys[k] has one; a null sorts after every value of its column.
 * The joins: as coproc_hash_join, coproc_hash_join_count and coproc_semi_join,
 * key column k of one side against key column k of the other (same types).
 */
COPROC_API coproc_status coproc_group_by_keys(coproc_runtime *rt, int nkeys,
                                              const coproc_column *const *keys,
                                              const coproc_column *values, unsigned aggs,
                                              coproc_group_result *out, coproc_column **key_out);
COPROC_API coproc_status coproc_hash_join_keys(coproc_runtime *rt, int nkeys,
                                               const coproc_column *const *left,
                                               const coproc_column *const *right,
                                               coproc_join_result *out);
COPROC_API coproc_status coproc_hash_join_keys_count(coproc_runtime *rt, int nkeys,
                                                     const coproc_column *const *left,
                                                     const coproc_column *const *right,
                                                     uint64_t *count);
COPROC_API coproc_status coproc_semi_join_keys(coproc_runtime *rt, int nkeys,
                                               const coproc_column *const *probe,
                                               const coproc_column *const *build,
                                               coproc_column **positions, uint64_t *count);

/* ---------------------------------------------------------------- strings */

/*
 * Strings are dictionary-encoded: an INT32 column of codes, each an index
 * into the column's dictionary of distinct UTF-8 strings in ascending byte
 * order (strcmp's), so that code order is string order. Operators see the
 * codes (group-by and joins on codes, sorts in string order); query plans
 * compare strings on the dictionary once and filter the codes
 * (coproc/query.h: coproc_expr_string, coproc_expr_prefix), and their
 * results keep the dictionary. Arrow dictionary arrays map onto it.
 *
 * coproc_column_encode_strings: the n strings (none NULL) as a new column on
 * device `device` (-1: a host column), their dictionary sorted and distinct.
 * coproc_column_set_dictionary: give an INT32 column of codes its dictionary
 * (the n strings copied; they must be distinct and in ascending byte order,
 * and every code in [0, n): INVALID_ARGUMENT otherwise; a column that has a
 * dictionary gets the new one). coproc_column_dictionary_size: its number of
 * strings, -1 when col has no dictionary; coproc_column_dictionary_value:
 * string `code` (valid while the column lives), NULL out of range.
 * Strings with nulls: the codes column's validity bitmap (coproc_column_set_validity,
 * either before or after the dictionary); a null row's code is never read as
 * a string (set_dictionary checks the valid rows' codes only; Arrow imports
 * give null rows code 0), and operators treat the codes as any column with
 * nulls, and so do query plans (coproc/query.h, "Nulls").
 */
COPROC_API coproc_status coproc_column_encode_strings(coproc_runtime *rt, int device,
                                                      const char *const *values, size_t n,
                                                      coproc_column **out);
COPROC_API coproc_status coproc_column_set_dictionary(coproc_column *codes, int n,
                                                      const char *const *strings);
COPROC_API int coproc_column_dictionary_size(const coproc_column *col);
COPROC_API const char *coproc_column_dictionary_value(const coproc_column *col, int code);

/* ---------------------------------------------------------------- asynchronous operators */

/*
 * Which call of its kind an operator is: every public operator can be
 * submitted. The default variant of each kind is the kind's main call.
 */
typedef enum coproc_op_variant {
    COPROC_VARIANT_DEFAULT = 0,
    COPROC_VARIANT_REDUCE_WHERE,  /* REDUCE: coproc_reduce_where, b = the bitmap */
    COPROC_VARIANT_SELECT_BITMAP, /* SELECT: coproc_select_bitmap; column = the bitmap */
    COPROC_VARIANT_CAST,          /* MAP: coproc_cast of a to op.to */
    COPROC_VARIANT_SCATTER,       /* GATHER: coproc_scatter of a at positions b into a copy
                                     of dst; column = that copy (dst is not changed) */
    COPROC_VARIANT_COMPACT,       /* GATHER: coproc_compact of a by the bitmap b */
    COPROC_VARIANT_ARGSORT,       /* SORT: coproc_argsort; column = the permutation */
    COPROC_VARIANT_JOIN_COUNT,    /* HASH_JOIN: coproc_hash_join_count; count = the pairs */
    COPROC_VARIANT_SELECT_COUNT,  /* SELECT: coproc_select with positions NULL; count only,
                                     no positions made (column NULL) */
    COPROC_VARIANT_COUNT
} coproc_op_variant;

/*
 * An operator over host columns (or device columns: it then runs where they
 * live), submitted to run on the device the policy picks. Inputs by kind:
 *   COPROC_OP_REDUCE     a; reduce (REDUCE_WHERE: b = bitmap)
 *   COPROC_OP_SELECT     filter (its columns)
 *   COPROC_OP_MAP        a, b (NULL: a op c); arith, c (CAST: a; to)
 *   COPROC_OP_GATHER     a = src, b = positions (SCATTER: also dst; COMPACT: b = bitmap)
 *   COPROC_OP_SCAN       a; exclusive
 *   COPROC_OP_GROUP_BY   a = keys, b = values (may be NULL); sorted; aggs (0: all)
 *   COPROC_OP_SORT       a = keys, b = values (may be NULL); results are sorted copies
 *   COPROC_OP_HASH_JOIN  a = left (build side), b = right (JOIN_COUNT: count only)
 *   COPROC_OP_MERGE_JOIN a = left, b = right (coproc_sort_merge_join)
 *   COPROC_OP_SEMI_JOIN  a = probe, b = build
 * Inputs are borrowed until the task is waited on.
 */
typedef struct coproc_op {
    size_t struct_size;        /* set by coproc_op_init */
    coproc_op_kind kind;
    int device;                /* -1 (default): the policy decides; else this device */
    const coproc_column *a, *b;
    coproc_filter filter;
    coproc_reduce_op reduce;
    coproc_arith arith;
    coproc_value c;
    int sorted;
    coproc_op_variant variant; /* default COPROC_VARIANT_DEFAULT */
    coproc_type to;            /* CAST: the output type */
    int exclusive;             /* SCAN: nonzero for an exclusive scan */
    const coproc_column *dst;  /* SCATTER: the column scattered into (copied, not changed) */
    unsigned aggs;             /* GROUP_BY: COPROC_GROUP_* to compute; 0 (default): all */
    int nulls_first;           /* SORT: nonzero puts null keys first (coproc_sort_nulls);
                                  0 (default): last */
} coproc_op;

/* Fill *op with defaults for kind (device -1). */
COPROC_API void coproc_op_init(coproc_op *op, coproc_op_kind kind);

/* What a task produced. Columns are host columns owned by the caller: free
 * them with coproc_result_free (or take them and set the member to NULL). */
typedef struct coproc_result {
    coproc_scalar scalar;      /* REDUCE */
    uint64_t count;            /* SELECT, SEMI_JOIN: matches; GROUP_BY: groups; joins: pairs */
    coproc_column *column;     /* SELECT, SEMI_JOIN: positions (or the bitmap); MAP, GATHER,
                                  SCAN: out; SORT: sorted keys (ARGSORT: the permutation) */
    coproc_column *column2;    /* SORT: permuted values (NULL without values) */
    coproc_group_result groups;/* GROUP_BY */
    coproc_join_result join;   /* HASH_JOIN (not JOIN_COUNT), MERGE_JOIN */
    int device;                /* where it ran */
    int streamed;              /* 1: the inputs exceeded the budget and streamed through */
    double estimate_s;         /* predicted seconds, transfers included; < 0 if none */
    double seconds;            /* measured, transfers included */
} coproc_result;

typedef struct coproc_task coproc_task;

/*
 * Queue op and return at once; *out owns the task until coproc_wait. May be
 * called from many threads at once. When the chosen device's ready queue is
 * full it waits for room (back-pressure). Argument errors are returned here;
 * errors while running are returned by coproc_wait.
 */
COPROC_API coproc_status coproc_submit(coproc_runtime *rt, const coproc_op *op, coproc_task **out);

/* 1 when the task has finished (coproc_wait will not block), else 0. */
COPROC_API int coproc_task_done(const coproc_task *t);

/* Wait for t, move its result into *out (may be NULL to discard it) and free t.
 * Returns the operator's status; on error *out holds no columns. */
COPROC_API coproc_status coproc_wait(coproc_task *t, coproc_result *out);

/* Return once every operator and query (coproc_query_submit) submitted before
 * the call has finished (the tasks stay the callers', to wait on as usual;
 * their waits do not block). Safe beside other threads' calls; NULL is a
 * no-op. */
COPROC_API void coproc_drain(coproc_runtime *rt);

/* coproc_wait for at most `seconds` (negative: no limit). COPROC_TIMEOUT when
 * t has not finished by then: t stays the caller's, to wait on again; *out is
 * untouched. Any other status: as coproc_wait (t is freed). */
COPROC_API coproc_status coproc_wait_timeout(coproc_task *t, double seconds, coproc_result *out);

/* Free the columns of a result. NULL is a no-op. */
COPROC_API void coproc_result_free(coproc_result *r);

#ifdef __cplusplus
}
#endif
#endif /* COPROC_H */
