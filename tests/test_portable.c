/* test_portable.c - what a second OpenCL implementation (Mesa's rusticl) and a
 * device simulator (Oclgrind) showed about the kernels (issue 15), on every
 * device and kernel path the machine has:
 *  - NaN cast to an integer gives 0 (the specification leaves
 *    convert_<int>_sat(NaN) open: rusticl and Oclgrind gave INT_MIN);
 *  - every program builds, and its kernels link and run, with -cl-opt-disable
 *    (helpers declared `inline` without `static` had no body there);
 *  - a CPU-path chunk of more than 65535 rows per work-item (Mesa's llvmpipe
 *    stops a work-item's loops after 65535 iterations: the quirk table caps the
 *    rows per work-item), and the cap itself forced on any device;
 *  - kernels launched with fewer than 256 work-items per group.
 * It reaches inside (core/runtime.h, backend/opencl/) to build every program and
 * to read the launch geometry. Small sizes: it also runs under Oclgrind. */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "core/runtime.h"

/* ---- NaN and out-of-range float -> integer casts */

static const float f32_in[] = {NAN, -NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 1.9f, -1.9f,
                               0.0f, -0.0f, 2147483520.0f, -2147483648.0f, 1e20f, -1e20f};
#define N_F32 (sizeof f32_in / sizeof f32_in[0])

/* C's truncation with saturation to [lo, hi], NaN -> 0. */
static double sat(double x, double lo, double hi)
{
    if (isnan(x))
        return 0;
    x = trunc(x);
    return x < lo ? lo : x > hi ? hi : x;
}

static void check_cast(coproc_runtime *rt, coproc_column *col, coproc_type from, size_t n,
                       const double *in, const char *path)
{
    static const coproc_type to[] = {COPROC_INT32, COPROC_INT64, COPROC_UINT32, COPROC_UINT64};
    for (int t = 0; t < 4; t++) {
        coproc_column *out = NULL;
        assert_ok(rt, coproc_cast(rt, col, to[t], &out));
        uint64_t got[64];
        assert_true(n <= 64);
        assert_ok(rt, coproc_column_download(out, got, sizeof got));
        for (size_t i = 0; i < n; i++) {
            int64_t gi = to[t] == COPROC_INT32 ? ((int32_t *)got)[i]
                       : to[t] == COPROC_INT64 ? (int64_t)got[i] : 0;
            uint64_t gu = to[t] == COPROC_UINT32 ? ((uint32_t *)got)[i]
                        : to[t] == COPROC_UINT64 ? got[i] : 0;
            int ok;
            switch (to[t]) {
            case COPROC_INT32: ok = gi == (int64_t)sat(in[i], -2147483648.0, 2147483647.0); break;
            case COPROC_UINT32: ok = gu == (uint64_t)sat(in[i], 0, 4294967295.0); break;
            case COPROC_INT64: {
                double s = sat(in[i], -9223372036854775808.0, 9223372036854775807.0);
                ok = s >= 9223372036854775807.0 ? gi == INT64_MAX : gi == (int64_t)s;
                break;
            }
            default: {
                double s = sat(in[i], 0, 18446744073709551615.0);
                ok = s >= 18446744073709551615.0 ? gu == UINT64_MAX : gu == (uint64_t)s;
                break;
            }
            }
            if (!ok) {
                print_error("%s: cast %s -> %s of %g gave %lld / %llu\n", path,
                            coproc_type_name(from), coproc_type_name(to[t]), in[i],
                            (long long)gi, (unsigned long long)gu);
                fail();
            }
        }
        coproc_column_free(out);
    }
}

static void run_nan_casts(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    double in[N_F32];
    for (size_t i = 0; i < N_F32; i++)
        in[i] = f32_in[i];
    coproc_column *col;
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_FLOAT32, f32_in, N_F32, &col));
    check_cast(rt, col, COPROC_FLOAT32, N_F32, in, path);
    coproc_column_free(col);
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    if (info.has_fp64) {
        double d[N_F32 + 2];
        memcpy(d, in, sizeof in);
        d[N_F32] = 1e300;
        d[N_F32 + 1] = -9.3e18;
        assert_ok(rt, coproc_column_upload(rt, dev, COPROC_FLOAT64, d, N_F32 + 2, &col));
        check_cast(rt, col, COPROC_FLOAT64, N_F32 + 2, d, path);
        coproc_column_free(col);
    }
}

static void test_nan_casts(void **state)
{
    (void)state;
    test_each_device_path(run_nan_casts, NULL);
}

/* ---- every program with -cl-opt-disable */

static void run_opt_disable(coproc_runtime *rt, int dev, const char *path, void *user)
{
    int *built = user;
    coproc__device *d = &rt->devices[dev];
    char options[1024];
    coproc__program_options(d, options, sizeof options);
    assert_non_null(strstr(options, "-cl-opt-disable"));
    for (int i = 0; coproc__cl_sources[i].name; i++) {
        const char *name = coproc__cl_sources[i].name;
        if (strcmp(name, COPROC__PRELUDE_NAME) == 0)
            continue;
        cl_program p;
        coproc_status s = coproc__program_get(rt, d, name, &p);
        if (s != COPROC_OK) {
            print_error("%s: %s.cl with -cl-opt-disable: %s\n", path, name, coproc_errmsg(rt));
            fail();
        }
        /* Creating every kernel makes drivers that link late resolve its calls. */
        cl_uint nk = 0;
        assert_int_equal(clCreateKernelsInProgram(p, 0, NULL, &nk), CL_SUCCESS);
        assert_true(nk > 0);
        cl_kernel *ks = calloc(nk, sizeof *ks);
        assert_non_null(ks);
        assert_int_equal(clCreateKernelsInProgram(p, nk, ks, NULL), CL_SUCCESS);
        for (cl_uint k = 0; k < nk; k++)
            clReleaseKernel(ks[k]);
        free(ks);
        (*built)++;
    }
    /* And run the helpers that were unresolved: group-by (gb_hash, gb_insert_*)
     * and the hash join (hj_bucket). */
    enum { N = 1000 };
    int32_t keys[N], vals[N];
    for (int i = 0; i < N; i++)
        keys[i] = i % 37 - 18, vals[i] = i;
    coproc_column *k, *v;
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, keys, N, &k));
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, vals, N, &v));
    coproc_group_result g;
    assert_ok(rt, coproc_group_by(rt, k, v, 0, &g));
    assert_int_equal(g.groups, 37);
    coproc_group_result_free(&g);
    /* Values 0..999 against keys -18..18: every key in 0..18 matches one value. */
    coproc_join_result j;
    assert_ok(rt, coproc_hash_join(rt, k, v, &j));
    size_t want = 0;
    for (int i = 0; i < N; i++)
        want += keys[i] >= 0;
    assert_int_equal(j.count, want);
    coproc_join_result_free(&j);
    coproc_column_free(k);
    coproc_column_free(v);
}

static void test_opt_disable_builds(void **state)
{
    (void)state;
    setenv("COPROC_CL_OPTIONS", "-cl-opt-disable", 1);
    int built = 0;
    test_each_device_path(run_opt_disable, &built);
    unsetenv("COPROC_CL_OPTIONS");
    assert_true(built > 0);
}

/* ---- more than 65535 rows per work-item on the CPU path */

typedef struct chunk_case {
    uint64_t forced_cap; /* COPROC_QUIRKS max_rows_per_item, 0: none forced */
} chunk_case;

static void run_long_chunk(coproc_runtime *rt, int dev, const char *path, void *user)
{
    const chunk_case *c = user;
    coproc__device *d = &rt->devices[dev];
    if (!d->cpu_path)
        return; /* the GPU path strides; its chunks are n / global */
    /* Enough rows that the CPU path's groups (compute units x 4) would each
     * walk more than 65535 of them without a cap. */
    size_t units = d->info.compute_units ? d->info.compute_units : 1;
    size_t n = units * 4 * 65536 + 7;
    coproc__geometry g = coproc__geometry_for(d, n, 0);
    uint64_t cap = d->quirks.max_rows_per_item;
    size_t chunk = (n + g.global - 1) / g.global;
    if (cap)
        assert_true(chunk <= cap);
    else
        assert_true(chunk > 65535);
    if (c->forced_cap)
        assert_true(cap && cap <= c->forced_cap);

    int32_t *in = malloc(n * sizeof *in);
    int64_t *out = malloc(n * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    int64_t want = 0;
    for (size_t i = 0; i < n; i++) {
        in[i] = (int32_t)(i % 1000) - 300;
        want += in[i];
    }
    coproc_column *col, *cast;
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, in, n, &col));
    coproc_scalar s;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &s));
    if (s.v.i64 != want) {
        print_error("%s: sum of %zu rows (chunk %zu): %lld, want %lld\n", path, n, chunk,
                    (long long)s.v.i64, (long long)want);
        fail();
    }
    /* Every row written: a cast keeps each value. */
    assert_ok(rt, coproc_cast(rt, col, COPROC_INT64, &cast));
    assert_ok(rt, coproc_column_download(cast, out, n * sizeof *out));
    for (size_t i = 0; i < n; i++)
        if (out[i] != in[i]) {
            print_error("%s: cast row %zu of %zu: %lld, want %d\n", path, i, n,
                        (long long)out[i], in[i]);
            fail();
        }
    coproc_column_free(cast);
    coproc_column_free(col);
    free(in);
    free(out);
}

static void test_long_chunk(void **state)
{
    (void)state;
    chunk_case c = {0};
    test_each_device_path(run_long_chunk, &c);
}

static void test_long_chunk_capped(void **state)
{
    (void)state;
    setenv("COPROC_QUIRKS", "max_rows_per_item=4096", 1);
    chunk_case c = {4096};
    test_each_device_path(run_long_chunk, &c);
    unsetenv("COPROC_QUIRKS");
}

/* ---- fewer than 256 work-items per group */

static void run_small_groups(coproc_runtime *rt, int dev, const char *path, void *user)
{
    size_t limit = *(const size_t *)user;
    coproc__device *d = &rt->devices[dev];
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    assert_int_equal(info.quirk_max_work_group, limit);
    assert_non_null(strstr(info.quirks, "forced-work-group"));
    coproc__geometry g = coproc__geometry_for(d, 100000, 0);
    assert_true(g.local <= limit);

    static const size_t sizes[] = {1, 63, 64, 65, 257, 1000, 4099};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        int32_t *in = malloc(n * sizeof *in);
        int64_t *scan = malloc(n * sizeof *scan);
        int32_t *sorted = malloc(n * sizeof *sorted);
        assert_true(in && scan && sorted);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            in[i] = (int32_t)((i * 2654435761u) % 2001) - 1000;
            sum += in[i];
        }
        coproc_column *col, *sc;
        assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, in, n, &col));
        coproc_scalar s;
        assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &s));
        if (s.v.i64 != sum) {
            print_error("%s local<=%zu n=%zu: sum %lld want %lld\n", path, limit, n,
                        (long long)s.v.i64, (long long)sum);
            fail();
        }
        assert_ok(rt, coproc_scan(rt, col, 0, &sc));
        assert_ok(rt, coproc_column_download(sc, scan, n * sizeof *scan));
        int64_t run = 0;
        for (size_t i = 0; i < n; i++) {
            run += in[i];
            if (scan[i] != run) {
                print_error("%s local<=%zu n=%zu: scan[%zu] %lld want %lld\n", path, limit, n,
                            i, (long long)scan[i], (long long)run);
                fail();
            }
        }
        assert_ok(rt, coproc_sort(rt, col, NULL));
        assert_ok(rt, coproc_column_download(col, sorted, n * sizeof *sorted));
        int64_t sorted_sum = 0;
        for (size_t i = 0; i < n; i++) {
            sorted_sum += sorted[i];
            if (i && sorted[i - 1] > sorted[i]) {
                print_error("%s local<=%zu n=%zu: not sorted at %zu\n", path, limit, n, i);
                fail();
            }
        }
        assert_int_equal(sorted_sum, sum);
        coproc_column_free(sc);
        coproc_column_free(col);
        free(in);
        free(scan);
        free(sorted);
    }
}

static void test_small_work_groups(void **state)
{
    (void)state;
    static const size_t limits[] = {64, 32};
    for (int i = 0; i < 2; i++) {
        char q[64];
        snprintf(q, sizeof q, "max_work_group=%zu", limits[i]);
        setenv("COPROC_QUIRKS", q, 1);
        size_t limit = limits[i];
        test_each_device_path(run_small_groups, &limit);
    }
    unsetenv("COPROC_QUIRKS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_casts),
        cmocka_unit_test(test_opt_disable_builds),
        cmocka_unit_test(test_long_chunk),
        cmocka_unit_test(test_long_chunk_capped),
        cmocka_unit_test(test_small_work_groups),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob): the Oclgrind run keeps
     * to the small ones. */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
