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
#include "ops/ops.h"

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

/* ---- more than 65535 rows (or loop steps) per work-item on the CPU path */

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
    /* argsort: the sort's table (256 x groups) is scanned by one work-group;
     * one work-item walking it all went past Mesa's loop limit. */
    coproc_column *perm;
    assert_ok(rt, coproc_argsort(rt, col, &perm));
    uint32_t *p = (uint32_t *)out;
    assert_ok(rt, coproc_column_download(perm, p, n * sizeof *p));
    unsigned char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        int ok = p[i] < n && !seen[p[i]];
        if (ok && i > 0)
            ok = in[p[i - 1]] < in[p[i]] || (in[p[i - 1]] == in[p[i]] && p[i - 1] < p[i]);
        if (!ok) {
            print_error("%s: argsort of %zu rows (chunk %zu) wrong at %zu\n", path, n, chunk, i);
            fail();
        }
        seen[p[i]] = 1;
    }
    free(seen);
    coproc_column_free(perm);
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
    chunk_case c = {4096};
    test_each_device_path_quirks("max_rows_per_item=4096", run_long_chunk, &c);
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
    if (!d->cpu_path) { /* sort picks its own size (up to 256): the quirk binds it too */
        static const char *const sk[] = {"sort_hist_all_k32", "sort_hist_k32", "sort_scan_table",
                                         "sort_scatter_k32"};
        cl_kernel k[4];
        for (int i = 0; i < 4; i++)
            assert_ok(rt, coproc__kernel_create(rt, d, "sort", sk[i], &k[i]));
        size_t local = coproc__sort_work_group(d, k, 4);
        if (local > limit) {
            print_error("%s: sort's work-groups of %zu, over the quirk's %zu\n", path, local,
                        limit);
            fail();
        }
        for (int i = 0; i < 4; i++)
            clReleaseKernel(k[i]);
    }

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
        size_t limit = limits[i];
        test_each_device_path_quirks(q, run_small_groups, &limit);
    }
}

/* ---- every operator, every kernel, at the sizes that find edge cases
 *
 * Sizes 1, one work-group (or on the CPU path one work-item's chunk), one more,
 * and several groups plus an odd tail (not a multiple of any vector width).
 * The geometry is whatever the device gives; the Oclgrind run forces small
 * groups and chunks (COPROC_QUIRKS=max_work_group=16,max_rows_per_item=16) so
 * that these sizes stay small. COPROC_TEST_SIZES="1,5,..." replaces them. */

static const coproc_type all_types[] = {COPROC_INT32, COPROC_INT64, COPROC_UINT32,
                                        COPROC_UINT64, COPROC_FLOAT32, COPROC_FLOAT64};
#define N_TYPES 6

static size_t tsize(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_UINT32 || t == COPROC_FLOAT32 ? 4 : 8;
}

/* Row i of a column of type t: few distinct values (duplicates for group-by,
 * joins and stable sorts), negatives, a NaN in float columns. */
static void fill(coproc_type t, size_t n, void *out, unsigned salt)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)((i * 7 + salt) % 13) - 4;
        switch (t) {
        case COPROC_INT32: ((int32_t *)out)[i] = (int32_t)v; break;
        case COPROC_UINT32: ((uint32_t *)out)[i] = (uint32_t)(v + 4); break;
        case COPROC_INT64: ((int64_t *)out)[i] = v * 3000000000LL; break;
        case COPROC_UINT64: ((uint64_t *)out)[i] = (uint64_t)(v + 4) << 33; break;
        case COPROC_FLOAT32: ((float *)out)[i] = i % 11 == 5 ? NAN : (float)v * 0.5f; break;
        default: ((double *)out)[i] = i % 11 == 5 ? NAN : (double)v * 0.25; break;
        }
    }
}

static double as_double(coproc_type t, const void *p, size_t i)
{
    switch (t) {
    case COPROC_INT32: return ((const int32_t *)p)[i];
    case COPROC_UINT32: return ((const uint32_t *)p)[i];
    case COPROC_INT64: return (double)((const int64_t *)p)[i];
    case COPROC_UINT64: return (double)((const uint64_t *)p)[i];
    case COPROC_FLOAT32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

static void sizes_for(const coproc__device *d, size_t *sizes, int *count)
{
    const char *env = getenv("COPROC_TEST_SIZES");
    if (env && *env) {
        int c = 0;
        for (char *e; *env && c < 8; env = *e ? e + 1 : e) {
            sizes[c++] = strtoull(env, &e, 10);
            if (e == env)
                break;
        }
        *count = c;
        return;
    }
    /* One group's rows: local work-items, or on the CPU path one chunk. */
    coproc__geometry g = coproc__geometry_for(d, 1000000000, 0);
    size_t one = d->cpu_path ? 4096 : g.local;
    if (d->cpu_path && d->quirks.max_rows_per_item && d->quirks.max_rows_per_item < one)
        one = (size_t)d->quirks.max_rows_per_item;
    sizes[0] = 1;
    sizes[1] = one;
    sizes[2] = one + 1;
    sizes[3] = 3 * one + 5;
    *count = 4;
}

/* Row i of a scan of column a (type t), inclusive or exclusive: integers
 * widened to 64 bits and wrapping, floats in their own type. */
static void check_scan(coproc_type t, const void *a, size_t n, int exclusive, const void *got,
                       const char *path)
{
    uint64_t run = 0;
    double frun = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        switch (t) {
        case COPROC_INT32: v = (uint64_t)(int64_t)((const int32_t *)a)[i]; break;
        case COPROC_UINT32: v = ((const uint32_t *)a)[i]; break;
        case COPROC_INT64:
        case COPROC_UINT64: v = ((const uint64_t *)a)[i]; break;
        default: break;
        }
        double fv = as_double(t, a, i);
        if (!exclusive)
            run += v, frun += fv;
        int ok;
        if (t == COPROC_FLOAT32 || t == COPROC_FLOAT64) {
            double g = as_double(t, got, i);
            ok = g == frun || (isnan(g) && isnan(frun));
        } else {
            ok = ((const uint64_t *)got)[i] == run;
        }
        if (!ok) {
            print_error("%s n=%zu %s: %s scan wrong at %zu\n", path, n, coproc_type_name(t),
                        exclusive ? "exclusive" : "inclusive", i);
            fail();
        }
        if (exclusive)
            run += v, frun += fv;
    }
}

/* The stable sort order of column a (type t), NaNs last in row order. */
static const void *order_col;
static coproc_type order_type;
static int order_cmp(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    double a = as_double(order_type, order_col, i), b = as_double(order_type, order_col, j);
    int c = isnan(a) ? (isnan(b) ? 0 : 1) : isnan(b) ? -1 : (a > b) - (a < b);
    return c ? c : (i > j) - (i < j);
}

static void stable_order(coproc_type t, const void *a, size_t n, uint32_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    order_col = a;
    order_type = t;
    qsort(order, n, sizeof *order, order_cmp);
}

/* COPROC_TEST_SKIP="group_by,joins,calibrate" leaves those operators (or the
 * calibration kernels) out of test_ops_small, "ops" all the operators:
 * tests/test_oclgrind.sh, for what is still open there. */
static int skipped(const char *what)
{
    const char *env = getenv("COPROC_TEST_SKIP");
    size_t len = strlen(what);
    for (const char *p = env; p && (p = strstr(p, what)); p += len)
        if ((p == env || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

static void run_ops_small(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc__device *d = &rt->devices[dev];
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    size_t sizes[8];
    int nsizes = 0;
    sizes_for(d, sizes, &nsizes);
    for (int si = 0; si < nsizes && !skipped("ops"); si++) {
        size_t n = sizes[si];
        uint32_t *pos = malloc(n * sizeof *pos);
        assert_non_null(pos);
        for (size_t i = 0; i < n; i++)
            pos[i] = (uint32_t)((i * 5 + 3) % n); /* a permutation when gcd(5, n) = 1 */
        coproc_column *pcol;
        assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, pos, n, &pcol));
        for (int ti = 0; ti < N_TYPES; ti++) {
            coproc_type t = all_types[ti];
            if ((t == COPROC_FLOAT64) && !info.has_fp64)
                continue;
            int is_int = t != COPROC_FLOAT32 && t != COPROC_FLOAT64;
            size_t es = tsize(t);
            unsigned char *a = malloc(n * es), *b = malloc(n * es), *got = malloc(n * 8 + 8);
            assert_true(a && b && got);
            fill(t, n, a, 0);
            fill(t, n, b, 5);
            coproc_column *ca, *cb, *o = NULL, *o2 = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, t, a, n, &ca));
            assert_ok(rt, coproc_column_upload(rt, dev, t, b, n, &cb));

            /* reductions: the sum of integers checked exactly */
            coproc_scalar sc;
            for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++)
                assert_ok(rt, coproc_reduce(rt, (coproc_reduce_op)op, ca, &sc));
            assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, ca, &sc));
            assert_int_equal(sc.count, n);
            if (is_int) {
                assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, ca, &sc));
                int64_t want = 0;
                for (size_t i = 0; i < n; i++)
                    want += t == COPROC_INT32 ? ((int32_t *)a)[i]
                          : t == COPROC_UINT32 ? (int64_t)((uint32_t *)a)[i]
                          : ((int64_t *)a)[i];
                if (sc.v.i64 != want) {
                    print_error("%s n=%zu %s: sum %lld want %lld\n", path, n,
                                coproc_type_name(t), (long long)sc.v.i64, (long long)want);
                    fail();
                }
            }

            /* selection, bitmap, compaction, reduce_where */
            coproc_filter f = {{ca, COPROC_CMP_GE, {0}, {0}}, COPROC_LOGIC_AND,
                               {cb, COPROC_CMP_RANGE, {0}, {0}}};
            if (is_int) {
                f.first.a.i64 = 0;
                f.second.a.i64 = 0;
                f.second.b.i64 = 6;
                if (t == COPROC_INT64 || t == COPROC_UINT64)
                    f.second.b.i64 = (int64_t)6 << 33;
            } else {
                f.first.a.f64 = 0;
                f.second.a.f64 = -1;
                f.second.b.f64 = 1.5;
            }
            uint64_t cnt = 0, cnt2 = 0, want_cnt = 0;
            for (size_t i = 0; i < n; i++) {
                double x = as_double(t, a, i), y = as_double(t, b, i);
                double lo = is_int ? 0 : -1, hi = is_int ? (t == COPROC_INT64 || t == COPROC_UINT64 ? (double)((int64_t)6 << 33) : 6) : 1.5;
                want_cnt += x >= 0 && y >= lo && y < hi;
            }
            assert_ok(rt, coproc_select(rt, &f, &o, &cnt));
            assert_int_equal(cnt, want_cnt);
            coproc_column_free(o), o = NULL;
            assert_ok(rt, coproc_select_bitmap(rt, &f, &o, &cnt2));
            assert_int_equal(cnt2, want_cnt);
            assert_ok(rt, coproc_compact(rt, ca, o, &o2));
            coproc_column_free(o2), o2 = NULL;
            for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++)
                assert_ok(rt, coproc_reduce_where(rt, (coproc_reduce_op)op, ca, o, &sc));
            assert_int_equal(sc.count, want_cnt);
            coproc_column_free(o), o = NULL;
            f.logic = COPROC_LOGIC_OR;
            f.first.cmp = COPROC_CMP_NE;
            assert_ok(rt, coproc_select(rt, &f, NULL, &cnt));

            /* map, map_const, every cast */
            for (int op = COPROC_ARITH_ADD; op <= COPROC_ARITH_DIV; op++) {
                assert_ok(rt, coproc_map(rt, (coproc_arith)op, ca, cb, &o));
                coproc_column_free(o), o = NULL;
            }
            coproc_value c;
            c.i64 = 3;
            if (!is_int)
                c.f64 = 1.5;
            assert_ok(rt, coproc_map_const(rt, COPROC_ARITH_MUL, ca, c, &o));
            coproc_column_free(o), o = NULL;
            for (int tj = 0; tj < N_TYPES; tj++) {
                if (all_types[tj] == COPROC_FLOAT64 && !info.has_fp64)
                    continue;
                assert_ok(rt, coproc_cast(rt, ca, all_types[tj], &o));
                coproc_column_free(o), o = NULL;
            }

            /* gather, scatter */
            assert_ok(rt, coproc_gather(rt, ca, pcol, &o));
            assert_ok(rt, coproc_column_download(o, got, n * es));
            for (size_t i = 0; i < n; i++)
                assert_memory_equal(got + i * es, a + pos[i] * es, es);
            assert_ok(rt, coproc_scatter(rt, cb, pcol, o));
            coproc_column_free(o), o = NULL;

            /* scans, checked exactly (the float sums of halves are exact) */
            for (int exclusive = 0; exclusive <= 1; exclusive++) {
                assert_ok(rt, coproc_scan(rt, ca, exclusive, &o));
                assert_ok(rt, coproc_column_download(o, got, n * 8));
                check_scan(t, a, n, exclusive, got, path);
                coproc_column_free(o), o = NULL;
            }

            /* sort with values, argsort: the host's stable order exactly */
            uint32_t *order = malloc(n * sizeof *order);
            assert_non_null(order);
            stable_order(t, a, n, order);
            assert_ok(rt, coproc_argsort(rt, ca, &o));
            assert_ok(rt, coproc_column_download(o, got, n * 4));
            for (size_t i = 0; i < n; i++)
                if (((uint32_t *)got)[i] != order[i]) {
                    print_error("%s n=%zu %s: argsort[%zu] %u want %u\n", path, n,
                                coproc_type_name(t), i, ((uint32_t *)got)[i], order[i]);
                    fail();
                }
            coproc_column_free(o), o = NULL;
            coproc_column *keys;
            assert_ok(rt, coproc_column_upload(rt, dev, t, a, n, &keys));
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, pos, n, &o));
            assert_ok(rt, coproc_sort(rt, keys, o));
            assert_ok(rt, coproc_column_download(keys, got, n * es));
            for (size_t i = 0; i < n; i++) {
                double x = as_double(t, got, i), y = as_double(t, a, order[i]);
                if (!(x == y || (isnan(x) && isnan(y)))) {
                    print_error("%s n=%zu %s: sorted key %zu is %g, want %g\n", path, n,
                                coproc_type_name(t), i, x, y);
                    fail();
                }
            }
            assert_ok(rt, coproc_column_download(o, got, n * 4));
            for (size_t i = 0; i < n; i++)
                if (((uint32_t *)got)[i] != pos[order[i]]) {
                    print_error("%s n=%zu %s: sorted value %zu is %u, want %u\n", path, n,
                                coproc_type_name(t), i, ((uint32_t *)got)[i], pos[order[i]]);
                    fail();
                }
            free(order);
            coproc_column_free(o), o = NULL;
            coproc_column_free(keys);

            /* group-by: int32 keys with these values; these keys counting */
            int group_by = !skipped("group_by");
            fill(COPROC_INT32, n, got, 2);
            coproc_column *k32;
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, got, n, &k32));
            for (int sorted = 0; group_by && sorted <= 1; sorted++) {
                coproc_group_result g;
                assert_ok(rt, coproc_group_by(rt, k32, ca, sorted, &g));
                assert_int_equal(g.groups, n < 13 ? n : 13);
                coproc_group_result_free(&g);
            }
            coproc_column_free(k32);
            /* want_pairs: the nested-loop count of a's keys against b's. */
            size_t want_pairs = 0;
            for (size_t i = 0; is_int && i < n; i++)
                for (size_t j = 0; j < n; j++)
                    want_pairs += memcmp(a + i * es, b + j * es, es) == 0;
            int joins = !skipped("joins");
            if (is_int && group_by) {
                coproc_group_result g;
                assert_ok(rt, coproc_group_by(rt, ca, NULL, 1, &g));
                assert_int_equal(g.groups, n < 13 ? n : 13);
                coproc_group_result_free(&g);
            }
            if (is_int && joins) {
                /* joins: a's keys against b's */
                coproc_join_result j;
                assert_ok(rt, coproc_hash_join(rt, ca, cb, &j));
                assert_int_equal(j.count, want_pairs);
                coproc_join_result_free(&j);
                assert_ok(rt, coproc_sort_merge_join(rt, ca, cb, &j));
                assert_int_equal(j.count, want_pairs);
                coproc_join_result_free(&j);
                assert_ok(rt, coproc_semi_join(rt, ca, cb, &o, &cnt));
                coproc_column_free(o), o = NULL;
            }
            coproc_column_free(ca);
            coproc_column_free(cb);
            free(a);
            free(b);
            free(got);
        }
        coproc_column_free(pcol);
        free(pos);
    }

    /* The calibration and bandwidth kernels, which the operators do not run. */
    if (skipped("calibrate"))
        return;
    size_t n = sizes[nsizes - 1];
    coproc__geometry g = coproc__geometry_for(d, n, 0);
    cl_int err;
    size_t bytes = (n + g.global) * 16;
    cl_mem in = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    /* The mad kernels store a uint8 or float8 per work-item. */
    cl_mem out = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes + g.global * 16, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_uint zero = 0;
    /* Cleared as the runtime clears (Oclgrind: by a write, quirks.h fill_by_write). */
    assert_int_equal(coproc__enqueue_fill(d, d->queue, in, &zero, 4, 0, bytes, 0, NULL, NULL),
                     CL_SUCCESS);
    cl_ulong nn = n;
    cl_uint iters = 2, ia = 3, ib = 1;
    cl_float fa = 0.999f, fb = 0.001f;
    static const char *const names[] = {"calibrate_read", "calibrate_int_mad",
                                        "calibrate_float_mad", "calibrate_empty", "copy_u32x4"};
    for (int ki = 0; ki < 5; ki++) {
        cl_kernel k;
        assert_ok(rt, coproc__kernel_create(rt, d, ki == 4 ? "memcopy" : "calibrate",
                                            names[ki], &k));
        coproc__args ar = {k, 0, CL_SUCCESS};
        switch (ki) {
        case 0: COPROC__ARG(ar, in); COPROC__ARG(ar, nn); COPROC__ARG(ar, out); break;
        case 1: COPROC__ARG(ar, out); COPROC__ARG(ar, iters); COPROC__ARG(ar, ia);
                COPROC__ARG(ar, ib); break;
        case 2: COPROC__ARG(ar, out); COPROC__ARG(ar, iters); COPROC__ARG(ar, fa);
                COPROC__ARG(ar, fb); break;
        case 3: COPROC__ARG(ar, out); break;
        default: COPROC__ARG(ar, in); COPROC__ARG(ar, out); COPROC__ARG(ar, nn); break;
        }
        assert_ok(rt, coproc__launch(rt, d, &ar, &g, names[ki]));
        assert_int_equal(clFinish(d->queue), CL_SUCCESS);
        clReleaseKernel(k);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(out);
}

static void test_ops_small(void **state)
{
    (void)state;
    test_each_device_path(run_ops_small, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_casts),
        cmocka_unit_test(test_opt_disable_builds),
        cmocka_unit_test(test_long_chunk),
        cmocka_unit_test(test_long_chunk_capped),
        cmocka_unit_test(test_small_work_groups),
        cmocka_unit_test(test_ops_small),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob): the Oclgrind run keeps
     * to the small ones. */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
