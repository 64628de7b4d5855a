/* test_differential.c - the differential tester (issue 34, "Right answers,
 * always"): random tables and random plans over the whole of coproc/query.h,
 * each run fused and one operator at a time, each result compared with SQLite
 * running the same plan as SQL over the same rows (tests/differential/gen.c
 * generates and compares; docs/api.md, "Differences from SQL engines
 * (SQLite)", says where coproc's semantics are not SQLite's and how the test
 * keeps them apart).
 *
 * Environment:
 *   COPROC_DIFF_SEED=N       the first case's seed (default 1); case i has seed N + i,
 *                            so COPROC_DIFF_SEED=S COPROC_DIFF_CASES=1 repeats case S
 *   COPROC_DIFF_CASES=N      how many cases (default 40)
 *   COPROC_DIFF_FUSED_EVERY=K  the fused engine on every K-th case only (default 1: all;
 *                            fused plans compile a program per new shape)
 *   COPROC_DIFF_FUSED_FEATURES=a,b  plan features (as printed) whose cases run fused
 *                            whatever COPROC_DIFF_FUSED_EVERY says (default
 *                            keyless-nullable,bool-minmax; "" for none)
 *   COPROC_DIFF_MODES=fused|operators|both   (default both)
 *   COPROC_DIFF_CASE=HEX     one case in its byte form (a minimised one, as printed)
 *   COPROC_DIFF_CASE_FILE=F  one case from a file (fuzz/regressions/differential/)
 *   COPROC_DIFF_SKIP=...     known defects to avoid while they are fixed:
 *                            group_null_keys, empty_agg, bool_minmax, between_null, all
 *   COPROC_DIFF_NO_ZERO_COPY=1  open with disable_zero_copy (copies as to a discrete GPU)
 *   COPROC_DIFF_MINIMIZE=DIR minimise each disagreement and write its case to DIR
 *   COPROC_DIFF_VERBOSE=1|2  print every case's SQL (2: and the row counts)
 *   COPROC_DIFF_SECONDS=S    stop starting cases after S seconds
 * The standalone runner is this binary with a large COPROC_DIFF_CASES (e.g.
 * 100000): it prints progress (plans/s, disagreements by kind) every 30 s on
 * stderr, and a summary at the end; the test fails if any case disagreed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coproc/query.h"
#include "differential/gen.h"
#include "testlib.h"

typedef struct stats {
    int cases, runs[2], fell_back, disagreeing_cases;
    int by_kind[2][DG_KIND_COUNT];
    uint64_t kernels_built;
    double t0;
} stats;

static void print_stats(FILE *f, const stats *s, const char *what)
{
    double dt = test_now() - s->t0;
    fprintf(f,
            "%s: %d cases (%d fused, %d operators runs) in %.1f s, %.1f plans/s; %d fused runs "
            "fell back to operators; %" PRIu64 " programs built; %d cases disagreed",
            what, s->cases, s->runs[0], s->runs[1], dt,
            dt > 0 ? (s->runs[0] + s->runs[1]) / dt : 0.0, s->fell_back, s->kernels_built,
            s->disagreeing_cases);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < DG_KIND_COUNT; k++)
            if (s->by_kind[m][k])
                fprintf(f, "; %s %s: %d", m ? "operators" : "fused", dg_kind_names[k],
                        s->by_kind[m][k]);
    fprintf(f, "\n");
}

static int hex_case(const char *hex, dg_case *c)
{
    uint8_t b[DG_CASE_BYTES] = {0};
    size_t n = 0;
    for (const char *p = hex; p[0] && p[1] && n < DG_CASE_BYTES; p += 2) {
        unsigned v;
        if (sscanf(p, "%2x", &v) != 1)
            return -1;
        b[n++] = (uint8_t)v;
    }
    dg_case_decode(b, n, c);
    return 0;
}

static int file_case(const char *path, dg_case *c)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t b[DG_CASE_BYTES];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    dg_case_decode(b, n, c);
    return 0;
}

static void keep_minimised(coproc_runtime *rt, const char *dir, const dg_case *c,
                           const dg_outcome *r, const dg_options *o)
{
    for (int m = 0; m < 2; m++) {
        if (r->kind[m] < 0)
            continue;
        dg_case mc = *c;
        int runs = dg_minimize(rt, &mc, m ? DG_OPERATORS : DG_FUSED, o);
        uint8_t b[DG_CASE_BYTES];
        dg_case_encode(&mc, b);
        char path[4096];
        mkdir(dir, 0777);
        snprintf(path, sizeof path, "%s/seed-%" PRIu64 "-%s-%s.bin", dir, c->seed,
                 m ? "operators" : "fused", dg_kind_names[r->kind[m]]);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(b, 1, sizeof b, f);
            fclose(f);
        }
        printf("MINIMISED (%d runs) -> %s; the case again:\n", runs, path);
        dg_options v = *o;
        v.verbose = 0;
        dg_run_case(rt, &mc, &v, NULL);
    }
}

static void test_differential(void **state)
{
    (void)state;
    const char *env;
    uint64_t seed = (env = getenv("COPROC_DIFF_SEED")) ? strtoull(env, NULL, 0) : 1;
    long cases = (env = getenv("COPROC_DIFF_CASES")) ? strtol(env, NULL, 0) : 40;
    long fused_every = (env = getenv("COPROC_DIFF_FUSED_EVERY")) ? strtol(env, NULL, 0) : 1;
    double seconds = (env = getenv("COPROC_DIFF_SECONDS")) ? strtod(env, NULL) : 0;
    const char *minimize = getenv("COPROC_DIFF_MINIMIZE");
    int modes = DG_BOTH;
    if ((env = getenv("COPROC_DIFF_MODES"))) {
        if (!strcmp(env, "fused"))
            modes = DG_FUSED;
        else if (!strcmp(env, "operators"))
            modes = DG_OPERATORS;
    }
    if (fused_every < 1)
        fused_every = 1;
    /* plans that keep their shape's fused run whatever COPROC_DIFF_FUSED_EVERY says:
     * aggregates without keys over nullable arguments, MIN/MAX of booleans */
    const char *fused_features = getenv("COPROC_DIFF_FUSED_FEATURES");
    if (!fused_features)
        fused_features = "keyless-nullable,bool-minmax";
    dg_options o = {dg_parse_skip(getenv("COPROC_DIFF_SKIP")), -1,
                    (env = getenv("COPROC_DIFF_VERBOSE")) ? atoi(env) : 0, stdout,
                    fused_features};

    coproc_options opts;
    coproc_options_init(&opts);
    opts.disable_zero_copy = (env = getenv("COPROC_DIFF_NO_ZERO_COPY")) && atoi(env) != 0;
    coproc_runtime *rt = test_open_with(&opts);
    coproc_device_info info;
    for (int d = 0; d < coproc_device_count(rt); d++)
        if (coproc_device_info_get(rt, d, &info) == COPROC_OK)
            printf("device %d: %s (%s)%s%s\n", d, info.name, coproc_device_type_name(info.type),
                   info.host_unified_memory && !opts.disable_zero_copy ? ", zero-copy" : "",
                   info.has_fp64 ? "" : ", no fp64");
    if (o.skip)
        printf("avoiding known defects: %s\n", getenv("COPROC_DIFF_SKIP"));

    dg_case one;
    int single = 0;
    memset(&one, 0, sizeof one);
    if ((env = getenv("COPROC_DIFF_CASE"))) {
        if (hex_case(env, &one) != 0)
            fail_msg("COPROC_DIFF_CASE=%s: not hex", env);
        single = 1;
    } else if ((env = getenv("COPROC_DIFF_CASE_FILE"))) {
        if (file_case(env, &one) != 0)
            fail_msg("COPROC_DIFF_CASE_FILE=%s: %s", env, strerror(errno));
        single = 1;
    }
    if (single) {
        cases = 1;
        if (!one.modes)
            one.modes = (uint8_t)modes;
        if (one.config != DG_CONFIG_DEFAULT)
            printf("note: the case asks for runtime configuration %d (fuzz_differential opens "
                   "it); here it runs in this environment's runtime\n",
                   one.config);
    }

    /* the runtime configuration, recorded in the cases written (fuzz_differential
     * opens it when it replays them) */
    int config = DG_CONFIG_DEFAULT;
    if ((env = getenv("COPROC_DEVICES")) && !strncmp(env, "sim:", 4))
        config = DG_CONFIG_SIM_PAIR;
    else if (opts.disable_zero_copy)
        config = DG_CONFIG_NO_ZERO_COPY;
    else if ((env = getenv("COPROC_KERNEL_PATH")) && !strcmp(env, "gpu"))
        config = DG_CONFIG_GPU_PATH;

    stats s;
    memset(&s, 0, sizeof s);
    s.t0 = test_now();
    double last = s.t0;
    for (long i = 0; i < cases; i++) {
        if (seconds > 0 && test_now() - s.t0 > seconds)
            break;
        dg_case c = one;
        if (!single) {
            c.seed = seed + (uint64_t)i;
            c.modes = (uint8_t)modes;
            c.config = (uint8_t)config;
            if (i % fused_every)
                c.modes &= (uint8_t)~DG_FUSED;
            if (!c.modes)
                continue;
        }
        dg_outcome r;
        dg_run_case(rt, &c, &o, &r);
        s.cases++;
        for (int m = 0; m < 2; m++) {
            s.runs[m] += r.ran[m];
            if (r.kind[m] >= 0)
                s.by_kind[m][r.kind[m]]++;
        }
        s.fell_back += r.fell_back;
        s.kernels_built += r.kernels_built;
        if (r.disagreements) {
            s.disagreeing_cases++;
            if (minimize)
                keep_minimised(rt, minimize, &c, &r, &o);
        }
        if (test_now() - last > 30) {
            last = test_now();
            print_stats(stderr, &s, "progress");
        }
    }
    print_stats(stdout, &s, "differential");
    coproc_close(rt);
    if (s.disagreeing_cases)
        fail_msg("%d of %d cases disagreed with SQLite (each printed above with its seed and SQL)",
                 s.disagreeing_cases, s.cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
