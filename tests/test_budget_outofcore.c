/* test_budget_outofcore.c - the out-of-core sort and hash join (runtime/
 * outofcore.c) over host columns many times a 256 KiB device budget, against
 * plain C references: every key type with negative keys, duplicates and the
 * float specials, with and without values (stability), all-equal keys;
 * joins with duplicates, a hot key, all-equal keys, no matches, empty sides
 * and single rows; bad arguments. Data must really move to the device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "exec/hostops.h"
#include "core/runtime.h"

#define BUDGET ((size_t)256 << 10)

/* $COPROC_TEST_SCALE = d (1 to 4) divides every size of 1000 rows or more by
 * d: d times fewer chunks and partitions, still several in each case (the
 * sanitizer runs set it, tests/CMakeLists.txt: their time goes per chunk). */
static size_t scale = 1;
#define S(n) ((size_t)(n) >= 1000 ? (size_t)(n) / scale : (size_t)(n))

/* The runtime and device the cases run on (test_each_device_path sets them). */
static coproc_runtime *rt;
static coproc__device *dev;
static const char *path;

static void use_device(coproc_runtime *r, int device, const char *p)
{
    rt = r;
    dev = &r->devices[device];
    path = p;
}

static coproc_column *wrap(coproc_type t, const void *host, size_t n)
{
    coproc_column *c = NULL;
    assert_ok(rt, coproc_column_wrap(rt, t, host, n, &c));
    return c;
}

/* ---------------------------------------------------------------- sort */

enum { SK_DUPS, SK_EQUAL, SK_SPECIAL };


/* Keys in a range of about n / 4 values either side of 0 (duplicates,
 * negatives), some extremes; SK_SPECIAL adds NaNs (assorted payloads and
 * signs), -0.0, +0.0, +-inf and subnormals to floats. */
static void fill_sort_keys(coproc_type t, void *d, size_t n, int mode, test_rng *r)
{
    int64_t range = (int64_t)n / 4 + 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 50);
        int64_t v = mode == SK_EQUAL ? -7 : (int64_t)(x >> 20) % (2 * range + 1) - range;
        switch (t) {
        case COPROC_INT32:
            ((int32_t *)d)[i] = pick == 0 && mode != SK_EQUAL ? INT32_MIN
                                : pick == 1 && mode != SK_EQUAL ? INT32_MAX : (int32_t)v;
            break;
        case COPROC_INT64: /* big magnitudes, so the high digits matter */
            ((int64_t *)d)[i] = pick == 0 && mode != SK_EQUAL ? INT64_MIN
                                : pick == 1 && mode != SK_EQUAL ? INT64_MAX : v * (1000003ll << 20);
            break;
        case COPROC_UINT32:
            ((uint32_t *)d)[i] = pick == 0 && mode != SK_EQUAL ? UINT32_MAX : (uint32_t)v;
            break;
        case COPROC_UINT64:
            ((uint64_t *)d)[i] = pick == 0 && mode != SK_EQUAL ? UINT64_MAX : (uint64_t)v << 17;
            break;
        default: {
            double f = (double)v * 0.25;
            if (mode == SK_SPECIAL) {
                if (pick < 3) f = NAN;
                else if (pick < 5) f = (x >> 8) & 1 ? -0.0 : 0.0;
                else if (pick < 7) f = (x >> 8) & 1 ? INFINITY : -INFINITY;
                else if (pick == 7) f = t == COPROC_FLOAT32 ? FLT_MIN / 4 : DBL_MIN / 4;
                else if (pick == 8) f = t == COPROC_FLOAT32 ? -FLT_MAX : -DBL_MAX;
            }
            if (t == COPROC_FLOAT32) {
                float g = (float)f;
                if (isnan(f)) {
                    uint32_t b = 0x7fc00000u | (uint32_t)(x >> 44) |
                                 ((x >> 9) & 1 ? 0x80000000u : 0);
                    memcpy(&g, &b, 4);
                }
                ((float *)d)[i] = g;
            } else {
                if (isnan(f)) {
                    uint64_t b = 0x7ff8000000000000ull | (x >> 20) |
                                 ((x >> 9) & 1 ? 1ull << 63 : 0);
                    memcpy(&f, &b, 8);
                }
                ((double *)d)[i] = f;
            }
        }
        }
    }
}


/* Value i: the row number in type vt (exact in every type here). */
static void make_values(coproc_type vt, void *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (vt) {
        case COPROC_INT32: ((int32_t *)v)[i] = -(int32_t)i; break;
        case COPROC_INT64: ((int64_t *)v)[i] = (int64_t)i - (1ll << 40); break;
        case COPROC_UINT32: ((uint32_t *)v)[i] = (uint32_t)i; break;
        case COPROC_UINT64: ((uint64_t *)v)[i] = (uint64_t)i << 20; break;
        case COPROC_FLOAT32: ((float *)v)[i] = (float)i; break;
        default: ((double *)v)[i] = (double)i + 0.5; break;
        }
    }
}

/* Sort n keys of type t (values of type vt, or none when vt < 0) out of core
 * and compare with the stable reference: keys bit for bit (NaNs as the
 * canonical quiet NaN), values from exactly the reference's rows. */
static void sort_case(coproc_type t, int vt, size_t n, int mode, test_rng *rng)
{
    size_t kw = coproc_type_size(t), vw = vt >= 0 ? coproc_type_size((coproc_type)vt) : 0;
    void *keys = malloc((n ? n : 1) * kw), *vals = vt >= 0 ? malloc((n ? n : 1) * vw) : NULL;
    fill_sort_keys(t, keys, n, mode, rng);
    if (vals)
        make_values((coproc_type)vt, vals, n);
    uint32_t *ref = malloc((n ? n : 1) * sizeof *ref);
    test_ref_argsort(t, keys, n, ref);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s sort %s n=%zu mode=%d values=%s", path, coproc_type_name(t), n,
             mode, vt >= 0 ? coproc_type_name((coproc_type)vt) : "none");

    coproc_column *kc = wrap(t, keys, n), *vc = vals ? wrap((coproc_type)vt, vals, n) : NULL;
    coproc_column *ko = NULL, *vo = (coproc_column *)1;
    uint64_t h2d = atomic_load(&dev->bytes_h2d);
    coproc_status s = coproc__outofcore_sort(rt, dev, kc, vc, BUDGET, &ko, &vo);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", ctx, coproc_status_name(s), coproc_errmsg(rt));
    if (n > 0 && atomic_load(&dev->bytes_h2d) - h2d < n * (kw + vw))
        fail_msg("%s: only %llu bytes went to the device", ctx,
                 (unsigned long long)(atomic_load(&dev->bytes_h2d) - h2d));
    assert_non_null(ko);
    assert_int_equal(coproc_column_device(ko), -1);
    assert_int_equal(coproc_column_type(ko), t);
    assert_int_equal(coproc_column_length(ko), n);
    const char *got = coproc_column_host_data(ko);
    for (size_t i = 0; i < n; i++) {
        const char *g = got + i * kw, *e = (const char *)keys + (size_t)ref[i] * kw;
        if (test_is_float(t) && isnan(test_get_f(t, keys, ref[i]))) {
            uint64_t bits = 0, canon = t == COPROC_FLOAT32 ? 0x7fc00000u : 0x7ff8000000000000ull;
            memcpy(&bits, g, kw);
            if (bits != canon)
                fail_msg("%s: key %zu is 0x%llx, expected the canonical NaN", ctx, i,
                         (unsigned long long)bits);
        } else if (memcmp(g, e, kw) != 0) {
            uint64_t gv = 0, ev = 0;
            memcpy(&gv, g, kw);
            memcpy(&ev, e, kw);
            fail_msg("%s: key %zu is 0x%llx, expected 0x%llx", ctx, i, (unsigned long long)gv,
                     (unsigned long long)ev);
        }
    }
    if (vals) {
        assert_non_null(vo);
        assert_int_equal(coproc_column_type(vo), vt);
        assert_int_equal(coproc_column_length(vo), n);
        const char *gv = coproc_column_host_data(vo);
        for (size_t i = 0; i < n; i++)
            if (memcmp(gv + i * vw, (const char *)vals + (size_t)ref[i] * vw, vw) != 0)
                fail_msg("%s: value %zu comes from the wrong row (expected row %u)", ctx, i,
                         ref[i]);
    } else {
        assert_null(vo);
    }
    coproc_column_free(ko);
    coproc_column_free(vo);
    coproc_column_free(kc);
    coproc_column_free(vc);
    free(keys);
    free(vals);
    free(ref);
}

static void sort_device(coproc_runtime *r, int device, const char *p, void *user)
{
    (void)user;
    use_device(r, device, p);
    test_rng rng = {2024};
    int fp64 = dev->info.has_fp64;
    /* Many runs each (about 8000 rows a chunk at 256 KiB). */
    sort_case(COPROC_INT32, COPROC_UINT32, S(300000), SK_DUPS, &rng);
    sort_case(COPROC_INT64, fp64 ? COPROC_FLOAT64 : COPROC_INT32, S(200000), SK_DUPS, &rng);
    sort_case(COPROC_UINT32, -1, S(200000), SK_DUPS, &rng);
    sort_case(COPROC_UINT64, COPROC_INT32, S(150000), SK_DUPS, &rng);
    sort_case(COPROC_FLOAT32, COPROC_UINT64, S(200000), SK_SPECIAL, &rng);
    sort_case(COPROC_FLOAT32, -1, S(100000), SK_DUPS, &rng);
    if (fp64) {
        sort_case(COPROC_FLOAT64, -1, S(150000), SK_SPECIAL, &rng);
        sort_case(COPROC_FLOAT64, COPROC_INT64, S(100000), SK_SPECIAL, &rng);
    }
    /* All keys equal: the merge alone must keep the input order. */
    sort_case(COPROC_INT32, COPROC_UINT32, S(100000), SK_EQUAL, &rng);
    sort_case(COPROC_UINT64, COPROC_FLOAT32, S(60000), SK_EQUAL, &rng);
    /* One run, one row, none. */
    sort_case(COPROC_INT32, COPROC_INT64, S(1000), SK_DUPS, &rng);
    sort_case(COPROC_FLOAT32, COPROC_UINT32, 1, SK_SPECIAL, &rng);
    sort_case(COPROC_UINT32, COPROC_UINT32, 0, SK_DUPS, &rng);
    sort_case(COPROC_INT64, -1, 0, SK_DUPS, &rng);
}

static void test_outofcore_sort(void **state)
{
    (void)state;
    test_each_device_path(sort_device, NULL);
}

/* ---------------------------------------------------------------- hash join */

enum { JK_DUPS, JK_UNIQUE, JK_HOT, JK_EQUAL, JK_DISJOINT, JK_EXTREME };

/* side 0 left, 1 right. */
static void fill_join_keys(coproc_type t, void *d, size_t n, size_t range, int mode, int side,
                           test_rng *r)
{
    static const uint64_t extreme[] = {0, 1, UINT64_MAX, 0x8000000000000000ull,
                                       0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFull, 0x100000000ull,
                                       0x80000000ull, 0x7FFFFFFFull, 0xFFFFFFFF00000000ull};
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r), v;
        switch (mode) {
        case JK_DUPS: v = (uint64_t)((int64_t)(x % (2 * range + 1)) - (int64_t)range); break;
        case JK_UNIQUE: v = x % range * 0x9E3779B97F4A7C15ull; break;
        case JK_HOT: v = x % 100 == 0 ? 42 : (x >> 8) % range * 0x9E3779B97F4A7C15ull + 43; break;
        case JK_EQUAL: v = (uint64_t)-5; break;
        case JK_DISJOINT: v = 2 * (x % range) + (uint64_t)side; break;
        default: v = x % 3 ? extreme[x % 10] : x; break;
        }
        if (coproc_type_size(t) == 4)
            ((uint32_t *)d)[i] = (uint32_t)v;
        else
            ((uint64_t *)d)[i] = v;
    }
}



static void join_case(coproc_type t, size_t nl, size_t nr, size_t range, int mode, test_rng *rng)
{
    size_t ks = coproc_type_size(t);
    void *left = malloc((nl ? nl : 1) * ks), *right = malloc((nr ? nr : 1) * ks);
    fill_join_keys(t, left, nl, range, mode, 0, rng);
    fill_join_keys(t, right, nr, range, mode, 1, rng);
    size_t m;
    test_pair *want = test_join_reference(ks, left, nl, right, nr, &m);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s join %s %zu x %zu range=%zu mode=%d", path, coproc_type_name(t),
             nl, nr, range, mode);

    coproc_column *lc = wrap(t, left, nl), *rc = wrap(t, right, nr);
    coproc_join_result res;
    uint64_t h2d = atomic_load(&dev->bytes_h2d);
    coproc_status s = coproc__outofcore_hash_join(rt, dev, lc, rc, BUDGET, &res);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", ctx, coproc_status_name(s), coproc_errmsg(rt));
    if (m > 0 && atomic_load(&dev->bytes_h2d) == h2d)
        fail_msg("%s: nothing went to the device", ctx);
    if (res.count != m)
        fail_msg("%s: %zu pairs, want %zu", ctx, res.count, m);
    assert_int_equal(coproc_column_device(res.left), -1);
    assert_int_equal(coproc_column_type(res.left), COPROC_UINT32);
    assert_int_equal(coproc_column_type(res.right), COPROC_UINT32);
    assert_int_equal(coproc_column_length(res.left), m);
    assert_int_equal(coproc_column_length(res.right), m);
    test_check_pairs(coproc_column_host_data(res.left), coproc_column_host_data(res.right), m,
                     want, ctx);
    coproc_join_result_free(&res);
    coproc_column_free(lc);
    coproc_column_free(rc);
    free(left);
    free(right);
    free(want);
}

static void join_device(coproc_runtime *r, int device, const char *p, void *user)
{
    (void)user;
    use_device(r, device, p);
    test_rng rng = {99};
    /* Many partitions; duplicates on both sides (about 2.5 pairs a right row). */
    join_case(COPROC_INT32, S(120000), S(150000), S(25000), JK_DUPS, &rng);
    join_case(COPROC_INT64, S(100000), S(100000), S(100000), JK_UNIQUE, &rng);
    join_case(COPROC_UINT32, S(40000), S(200000), S(10000), JK_DUPS, &rng);
    join_case(COPROC_UINT64, S(6000), S(4000), 0, JK_EXTREME, &rng); /* 10 hot keys: 1.1M pairs */
    /* A hot key in 1 % of the rows (1000 x 1000 pairs) among unique keys. */
    join_case(COPROC_INT64, S(100000), S(100000), S(1000000), JK_HOT, &rng);
    /* Every key equal: one partition, left blocks times right chunks. */
    join_case(COPROC_INT32, S(5000), 300, 0, JK_EQUAL, &rng);
    join_case(COPROC_UINT64, 700, S(2000), 0, JK_EQUAL, &rng);
    /* No matches, empty sides, single rows. */
    join_case(COPROC_UINT32, S(100000), S(100000), S(100000), JK_DISJOINT, &rng);
    join_case(COPROC_INT32, 0, 0, 10, JK_DUPS, &rng);
    join_case(COPROC_INT32, 0, S(1000), 10, JK_DUPS, &rng);
    join_case(COPROC_UINT64, S(1000), 0, 10, JK_DUPS, &rng);
    join_case(COPROC_INT64, 1, 1, 0, JK_EQUAL, &rng);
    join_case(COPROC_UINT32, 1, 1, 10, JK_DISJOINT, &rng);
    join_case(COPROC_INT32, 1, S(50000), 0, JK_EQUAL, &rng);
    join_case(COPROC_UINT64, S(50000), 1, 0, JK_EQUAL, &rng);
}

static void test_outofcore_hash_join(void **state)
{
    (void)state;
    test_each_device_path(join_device, NULL);
}

/* ---------------------------------------------------------------- bad input */

#define SORT coproc__outofcore_sort
#define JOIN coproc__outofcore_hash_join

static void test_outofcore_bad_input(void **state)
{
    (void)state;
    use_device(test_open(NULL), 0, "default");
    int32_t k[4] = {4, 3, 2, 1};
    uint32_t u[4] = {1, 2, 3, 4};
    float f[4] = {1, 2, 3, 4};
    coproc_column *kc = wrap(COPROC_INT32, k, 4), *k3 = wrap(COPROC_INT32, k, 3);
    coproc_column *uc = wrap(COPROC_UINT32, u, 4), *fc = wrap(COPROC_FLOAT32, f, 4);
    coproc_column *dc = NULL, *ko = (coproc_column *)1, *vo = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, k, 4, &dc));

    assert_status(COPROC_NULL_POINTER, SORT(NULL, dev, kc, NULL, BUDGET, &ko, &vo));
    assert_status(COPROC_NULL_POINTER, SORT(rt, dev, NULL, NULL, BUDGET, &ko, &vo));
    assert_null(ko); /* failures leave the outputs NULL */
    assert_null(vo);
    assert_status(COPROC_NULL_POINTER, SORT(rt, NULL, kc, NULL, BUDGET, &ko, &vo));
    assert_status(COPROC_NULL_POINTER, SORT(rt, dev, kc, NULL, BUDGET, NULL, &vo));
    assert_status(COPROC_NULL_POINTER, SORT(rt, dev, kc, uc, BUDGET, &ko, NULL));
    assert_status(COPROC_LENGTH_MISMATCH, SORT(rt, dev, kc, k3, BUDGET, &ko, &vo));
    assert_status(COPROC_INVALID_ARGUMENT, SORT(rt, dev, kc, NULL, 1000, &ko, &vo));
    assert_status(COPROC_INVALID_ARGUMENT, SORT(rt, dev, dc, NULL, BUDGET, &ko, &vo));
    assert_null(ko);
    assert_null(vo);
    /* Keys-only sorts may pass no values output. */
    assert_ok(rt, SORT(rt, dev, kc, NULL, BUDGET, &ko, NULL));
    assert_memory_equal(coproc_column_host_data(ko), ((int32_t[]){1, 2, 3, 4}), 16);
    coproc_column_free(ko);

    coproc_join_result r;
    memset(&r, 0xAB, sizeof r);
    assert_status(COPROC_NULL_POINTER, JOIN(NULL, dev, kc, kc, BUDGET, &r));
    assert_status(COPROC_NULL_POINTER, JOIN(rt, dev, kc, kc, BUDGET, NULL));
    assert_status(COPROC_NULL_POINTER, JOIN(rt, dev, NULL, kc, BUDGET, &r));
    assert_null(r.left);
    assert_int_equal(r.count, 0);
    assert_status(COPROC_NULL_POINTER, JOIN(rt, dev, kc, NULL, BUDGET, &r));
    assert_status(COPROC_NULL_POINTER, JOIN(rt, NULL, kc, kc, BUDGET, &r));
    assert_status(COPROC_UNSUPPORTED_TYPE, JOIN(rt, dev, fc, fc, BUDGET, &r));
    assert_status(COPROC_INVALID_ARGUMENT, JOIN(rt, dev, kc, uc, BUDGET, &r));
    assert_status(COPROC_INVALID_ARGUMENT, JOIN(rt, dev, kc, kc, 1000, &r));
    assert_status(COPROC_INVALID_ARGUMENT, JOIN(rt, dev, kc, dc, BUDGET, &r));
    assert_null(r.left);
    assert_null(r.right);

    coproc_column_free(dc);
    coproc_column_free(kc);
    coproc_column_free(k3);
    coproc_column_free(uc);
    coproc_column_free(fc);
    coproc_close(rt);
}

int main(void)
{
    const char *sc = getenv("COPROC_TEST_SCALE");
    if (sc && atoi(sc) >= 1 && atoi(sc) <= 4)
        scale = (size_t)atoi(sc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outofcore_bad_input),
        cmocka_unit_test(test_outofcore_sort),
        cmocka_unit_test(test_outofcore_hash_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
