/* fuzz_differential.c - the differential tester (issue 34) under libFuzzer:
 * the input decodes into a case of tests/differential/gen.c (dg_case_decode:
 * a seed, a mask of plan simplifications, the engines to run, a runtime
 * configuration and a window of rows per table; any bytes decode, missing
 * ones read as 0), which generates three random tables and a random plan over
 * coproc/query.h, runs it with coproc and the same plan as SQL with SQLite,
 * and compares. A disagreement prints the case (seed, SQL, the differing rows)
 * and aborts. The same generator and checker run in tests/test_differential.c
 * (which also minimises a failing case: COPROC_DIFF_MINIMIZE=DIR); a
 * minimised case is kept in fuzz/regressions/differential/ and replayed by
 * replay_fuzz_differential. The runtime configuration byte picks PoCL as it
 * comes, its GPU kernel path (COPROC_KERNEL_PATH=gpu), PoCL without zero-copy
 * (coproc_options.disable_zero_copy) or the simulated PoCL CPU + H100 pair;
 * each is opened once. COPROC_DIFF_SKIP avoids known defects while they are
 * being fixed (gen.h). Why: right answers, always - a wrong result is worse
 * than a crash.
 *
 * fuzz/regressions/differential/ (minimised by COPROC_DIFF_MINIMIZE; each
 * fails until its defect is fixed):
 *   group-two-keys-null-key-no-zero-copy  GROUP BY two keys, one null, operators,
 *                                         without zero-copy: a null-keyed row lost
 *   keyless-sum-no-rows-nullable-arg      SUM without keys over no rows of a nullable
 *                                         argument past a filter, fused: 0, not NULL
 *   max-of-projected-boolean              MAX of a projected boolean, fused: the
 *                                         kernel does not build (_cl_max ambiguous)
 *   between-null-bound-false-half         x BETWEEN NULL AND -7 with x > -7: FALSE
 *                                         in SQL, unknown in coproc (both engines)
 *   uint64-group-key-above-int64-max      GROUP BY a uint64 column holding 2^64 - 1,
 *                                         fused: COPROC_UNSUPPORTED, no fallback */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "differential/gen.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static coproc_runtime *runtimes[DG_CONFIG_COUNT];
static int tried[DG_CONFIG_COUNT];
static unsigned skip;

static void quiet(void *user, coproc_log_level level, const char *msg)
{
    (void)user, (void)level, (void)msg;
}

static void close_all(void)
{
    for (int i = 1; i < DG_CONFIG_COUNT; i++)
        coproc_close(runtimes[i]);
}

/* The runtime of configuration k (NULL where it cannot be opened here). */
static coproc_runtime *runtime_of(int k)
{
    if (k == DG_CONFIG_DEFAULT)
        return fuzz_runtime();
    if (tried[k])
        return runtimes[k];
    tried[k] = 1;
    coproc_options o;
    coproc_options_init(&o);
    o.cache_dir = fuzz_dir();
    o.calibration = COPROC_CALIBRATION_OFF;
    o.log = quiet;
    o.log_level = COPROC_LOG_ERROR;
    const char *old = getenv("COPROC_KERNEL_PATH");
    char *keep = old ? strdup(old) : NULL;
    if (k == DG_CONFIG_GPU_PATH)
        setenv("COPROC_KERNEL_PATH", "gpu", 1);
    if (k == DG_CONFIG_NO_ZERO_COPY)
        o.disable_zero_copy = 1;
#ifdef COPROC_PROFILES_DIR
    if (k == DG_CONFIG_SIM_PAIR) {
        o.devices = "sim:" COPROC_PROFILES_DIR "/pocl-ci.json,sim:" COPROC_PROFILES_DIR
                    "/h100-synthetic.json";
        o.over_env = COPROC_OPTION_DEVICES;
    }
#else
    if (k == DG_CONFIG_SIM_PAIR)
        return NULL;
#endif
    coproc_runtime *rt = NULL;
    if (coproc_open(&o, &rt) != COPROC_OK) {
        coproc_close(rt);
        rt = NULL;
    }
    if (keep)
        setenv("COPROC_KERNEL_PATH", keep, 1);
    else if (k == DG_CONFIG_GPU_PATH)
        unsetenv("COPROC_KERNEL_PATH");
    free(keep);
    runtimes[k] = rt;
    return rt;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_runtime();
    skip = dg_parse_skip(getenv("COPROC_DIFF_SKIP"));
    atexit(close_all);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_case c;
    dg_case_decode(data, size, &c);
    coproc_runtime *rt = runtime_of(c.config);
    if (!rt)
        rt = fuzz_runtime(); /* a configuration this machine lacks: the default */
    if (!rt) {
        fuzz_skipped = 1;
        return 0;
    }
    dg_options o = {skip, -1, 0, stderr, NULL};
    dg_outcome r;
    if (dg_run_case(rt, &c, &o, &r))
        fuzz_fail("coproc and SQLite disagree (runtime configuration %d): the case is above",
                  c.config);
    return 0;
}
