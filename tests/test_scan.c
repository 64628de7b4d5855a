/* test_scan.c - coproc_scan of every type, and the internal primitives
 * (coproc__scan_exclusive_u32, coproc__flags_to_positions), against scalar C
 * loops on edge sizes, on every device and kernel path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "ops/primitives.h"
#include "core/runtime.h"
#include "testlib.h"

/* Integer-valued floats keep every contiguous partial sum exact (far below
 * 2^24), so any summation order gives the reference's bits. */
static void fill(coproc_type t, void *data, size_t n, int special, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 11);
        switch (t) {
        case COPROC_INT32: {
            int32_t v = (int32_t)(uint32_t)(x >> 32);
            if (pick == 0) v = INT32_MIN;
            if (pick == 1) v = INT32_MAX;
            ((int32_t *)data)[i] = v; break; }
        case COPROC_INT64: {
            int64_t v = (int64_t)x;
            if (pick == 0) v = INT64_MIN;
            if (pick == 1) v = INT64_MAX;
            ((int64_t *)data)[i] = v; break; }
        case COPROC_UINT32: {
            uint32_t v = (uint32_t)(x >> 32);
            if (pick == 0) v = UINT32_MAX;
            ((uint32_t *)data)[i] = v; break; }
        case COPROC_UINT64: {
            uint64_t v = x;
            if (pick == 0) v = UINT64_MAX;
            ((uint64_t *)data)[i] = v; break; }
        default: {
            double v = (double)((int)((x >> 40) % 201) - 100);
            if (special && pick == 0) v = -0.0;
            if (special && (x >> 20) % 997 == 0) v = (x & 1) ? INFINITY : -INFINITY;
            if (special && (x >> 20) % 1999 == 1) v = NAN;
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        }
    }
}

/* The reference: one sequential loop, wrapping integers through uint64. */
static void reference(coproc_type t, const void *in, size_t n, int exclusive, void *out)
{
    uint64_t u = 0;
    float f = 0;
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case COPROC_INT32: {
            uint64_t v = (uint64_t)(int64_t)((const int32_t *)in)[i];
            if (exclusive) ((uint64_t *)out)[i] = u;
            u += v;
            if (!exclusive) ((uint64_t *)out)[i] = u;
            break; }
        case COPROC_INT64: case COPROC_UINT64: {
            uint64_t v = ((const uint64_t *)in)[i];
            if (exclusive) ((uint64_t *)out)[i] = u;
            u += v;
            if (!exclusive) ((uint64_t *)out)[i] = u;
            break; }
        case COPROC_UINT32: {
            uint64_t v = ((const uint32_t *)in)[i];
            if (exclusive) ((uint64_t *)out)[i] = u;
            u += v;
            if (!exclusive) ((uint64_t *)out)[i] = u;
            break; }
        case COPROC_FLOAT32: {
            float v = ((const float *)in)[i];
            if (exclusive) ((float *)out)[i] = f;
            f += v;
            if (!exclusive) ((float *)out)[i] = f;
            break; }
        default: {
            double v = ((const double *)in)[i];
            if (exclusive) ((double *)out)[i] = d;
            d += v;
            if (!exclusive) ((double *)out)[i] = d;
            break; }
        }
    }
}

static void compare(coproc_type t, const void *got, const void *want, size_t n, const char *ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (t == COPROC_FLOAT32 || t == COPROC_FLOAT64) {
            double g = t == COPROC_FLOAT32 ? ((const float *)got)[i] : ((const double *)got)[i];
            double w = t == COPROC_FLOAT32 ? ((const float *)want)[i] : ((const double *)want)[i];
            if ((isnan(g) || isnan(w)) ? !(isnan(g) && isnan(w)) : g != w)
                fail_msg("%s: row %zu of %zu: got %g want %g", ctx, i, n, g, w);
        } else if (((const uint64_t *)got)[i] != ((const uint64_t *)want)[i]) {
            fail_msg("%s: row %zu of %zu: got %llu want %llu", ctx, i, n,
                     (unsigned long long)((const uint64_t *)got)[i],
                     (unsigned long long)((const uint64_t *)want)[i]);
        }
    }
}

static void run_scan_types(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {777};
    static const coproc_type want_type[] = {COPROC_INT64, COPROC_INT64, COPROC_UINT64,
                                            COPROC_UINT64, COPROC_FLOAT32, COPROC_FLOAT64};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
        if (t == COPROC_FLOAT64 && !info.has_fp64)
            continue;
        int is_float = t == COPROC_FLOAT32 || t == COPROC_FLOAT64;
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            if (n > 70000 && t != COPROC_INT32 && t != COPROC_FLOAT32)
                continue; /* large sizes for a few types only: keeps the test quick */
            void *data = malloc((n ? n : 1) * 8);
            void *got = malloc((n ? n : 1) * 8);
            void *want = malloc((n ? n : 1) * 8);
            for (int special = 0; special <= is_float; special++) {
                fill((coproc_type)t, data, n, special, &rng);
                coproc_column *col = NULL;
                assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, data, n, &col));
                for (int excl = 0; excl <= 1; excl++) {
                    coproc_column *out = NULL;
                    assert_ok(rt, coproc_scan(rt, col, excl, &out));
                    assert_int_equal(coproc_column_type(out), want_type[t]);
                    assert_int_equal(coproc_column_length(out), n);
                    assert_ok(rt, coproc_column_download(out, got, n));
                    reference((coproc_type)t, data, n, excl, want);
                    char ctx[160];
                    snprintf(ctx, sizeof ctx, "%s %s %s special=%d", path,
                             coproc_type_name((coproc_type)t), excl ? "exclusive" : "inclusive",
                             special);
                    compare(want_type[t], got, want, n, ctx);
                    coproc_column_free(out);
                }
                coproc_column_free(col);
            }
            free(data);
            free(got);
            free(want);
        }
    }
}

static void test_scan_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_scan_types, NULL);
}

/* The internal primitives, on raw buffers of the column layer. */
static void run_primitives(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc__device *d = &rt->devices[dev];
    test_rng rng = {99};
    static const unsigned density[] = {0, 1000, 500, 10, 1}; /* per mille of nonzero flags */
    for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
        size_t n = test_edge_sizes[si];
        uint32_t *in = malloc((n ? n : 1) * 4);
        uint32_t *got = malloc((n ? n : 1) * 4);
        uint32_t *want = malloc((n ? n : 1) * 4);
        for (size_t i = 0; i < n; i++)
            in[i] = (uint32_t)(test_rand(&rng) >> 32) | (i % 5 == 0 ? 0x80000000u : 0);
        coproc_column *cin = NULL, *cout = NULL;
        assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, in, n, &cin));
        assert_ok(rt, coproc_column_alloc(rt, dev, COPROC_UINT32, n, &cout));
        uint64_t total = 12345, ref_total = 0;
        assert_ok(rt, coproc__scan_exclusive_u32(rt, d, cin->mem, n, cout->mem, &total));
        /* the total is optional */
        assert_ok(rt, coproc__scan_exclusive_u32(rt, d, cin->mem, n, cout->mem, NULL));
        assert_ok(rt, coproc_column_download(cout, got, n));
        for (size_t i = 0; i < n; i++) {
            want[i] = (uint32_t)ref_total;
            ref_total += in[i];
        }
        if (total != ref_total)
            fail_msg("%s n=%zu: total %llu want %llu", path, n, (unsigned long long)total,
                     (unsigned long long)ref_total);
        if (n && memcmp(got, want, n * 4) != 0)
            fail_msg("%s n=%zu: exclusive u32 scan differs", path, n);

        for (size_t di = 0; di < sizeof density / sizeof *density; di++) {
            if (n > 70000 && di > 2)
                continue;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = test_rand(&rng);
                in[i] = x % 1000 < density[di] ? (uint32_t)(x >> 32) | 1u << (x % 32) : 0;
            }
            coproc_column *flags = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, in, n, &flags));
            cl_mem pos = NULL;
            uint64_t count = 777;
            assert_ok(rt, coproc__flags_to_positions(rt, d, flags->mem, n, &pos, &count));
            assert_non_null(pos);
            size_t ref_count = 0;
            for (size_t i = 0; i < n; i++)
                if (in[i])
                    want[ref_count++] = (uint32_t)i;
            if (count != ref_count)
                fail_msg("%s n=%zu density=%u: count %llu want %zu", path, n, density[di],
                         (unsigned long long)count, ref_count);
            if (count) {
                cl_int err = clEnqueueReadBuffer(d->queue, pos, CL_TRUE, 0, count * 4, got, 0,
                                                 NULL, NULL);
                assert_int_equal(err, CL_SUCCESS);
                if (memcmp(got, want, count * 4) != 0)
                    fail_msg("%s n=%zu density=%u: positions differ", path, n, density[di]);
            }
            clReleaseMemObject(pos);
            coproc_column_free(flags);
        }
        coproc_column_free(cin);
        coproc_column_free(cout);
        free(in);
        free(got);
        free(want);
    }
}

static void test_primitives_match_reference(void **state)
{
    (void)state;
    test_each_device_path(run_primitives, NULL);
}

static void test_scan_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[4] = {1, 2, 3, 4};
    coproc_column *col = NULL, *out = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &col));
    assert_status(COPROC_NULL_POINTER, coproc_scan(NULL, col, 0, &out));
    assert_status(COPROC_NULL_POINTER, coproc_scan(rt, col, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_scan(rt, NULL, 0, &out));
    assert_null(out);
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    coproc_runtime *rt2 = test_open(NULL);
    out = (coproc_column *)1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_scan(rt2, col, 1, &out));
    assert_null(out);
    coproc_close(rt2);
    coproc_column_free(col);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primitives_match_reference),
        cmocka_unit_test(test_scan_matches_reference),
        cmocka_unit_test(test_scan_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
