/* test_gather.c - coproc_gather, coproc_scatter, coproc_compact and
 * coproc_reduce_where against scalar C loops on edge sizes, every type, on
 * every device and kernel path; out-of-range positions leave no output. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Random bits, with the edge values of each type and NaN, -0.0, inf mixed in. */
static void fill(coproc_type t, void *data, size_t n, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 9);
        switch (t) {
        case COPROC_INT32:
            ((int32_t *)data)[i] = pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX : (int32_t)(x >> 40) - (1 << 23);
            break;
        case COPROC_INT64:
            ((int64_t *)data)[i] = pick == 0 ? INT64_MIN : pick == 1 ? INT64_MAX : (int64_t)(x >> 8) - (1LL << 55);
            break;
        case COPROC_UINT32:
            ((uint32_t *)data)[i] = pick == 0 ? UINT32_MAX : (uint32_t)(x >> 32);
            break;
        case COPROC_UINT64:
            ((uint64_t *)data)[i] = pick == 0 ? UINT64_MAX : x;
            break;
        default: {
            double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1000;
            if (pick == 0) v = NAN;
            if (pick == 1) v = -0.0;
            if (pick == 2 && (x >> 40) % 50 == 0) v = (x & 1) ? INFINITY : -INFINITY;
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        }
    }
}

static void check_bits(const void *got, const void *want, size_t n, size_t esize, const char *ctx)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * esize, (const char *)want + i * esize, esize) != 0)
            fail_msg("%s: row %zu of %zu differs", ctx, i, n);
}

static void run_moves(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {8080};
    int ntypes = info.has_fp64 ? COPROC__TYPE_COUNT : COPROC_FLOAT64;
    for (int t = 0; t < ntypes; t++) {
        size_t es = coproc_type_size((coproc_type)t);
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            if (n > 70000 && t != COPROC_INT32 && t != COPROC_FLOAT64)
                continue;
            char ctx[128];
            void *src = malloc((n ? n : 1) * 8), *got = malloc((n ? n : 1) * 8);
            void *want = malloc((n ? n : 1) * 8), *dst0 = malloc((n ? n : 1) * 8);
            uint32_t *pos = malloc((n ? n : 1) * 4);
            fill((coproc_type)t, src, n, &rng);
            coproc_column *csrc = NULL, *cpos = NULL, *out = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, src, n, &csrc));

            /* gather: random positions with duplicates, into src */
            size_t m = n ? n + (size_t)test_rand_below(&rng, 50) : 3;
            uint32_t *gpos = malloc(m * 4);
            void *gwant = malloc(m * 8), *ggot = malloc(m * 8);
            for (size_t i = 0; i < m; i++) {
                gpos[i] = n ? (uint32_t)test_rand_below(&rng, n) : 0;
                if (n && i % 7 == 0) gpos[i] = (uint32_t)(n - 1);
                memcpy((char *)gwant + i * es, (char *)src + (size_t)gpos[i] * es, es);
            }
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, gpos, m, &cpos));
            snprintf(ctx, sizeof ctx, "%s gather %s n=%zu", path, coproc_type_name((coproc_type)t), n);
            if (n) {
                assert_ok(rt, coproc_gather(rt, csrc, cpos, &out));
                assert_int_equal(coproc_column_type(out), t);
                assert_int_equal(coproc_column_length(out), m);
                assert_ok(rt, coproc_column_download(out, ggot, m));
                check_bits(ggot, gwant, m, es, ctx);
                coproc_column_free(out);
            } else {
                out = (coproc_column *)1; /* every position is out of an empty column */
                assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, csrc, cpos, &out));
                assert_null(out);
            }
            coproc_column_free(cpos);
            /* one position == length: refused, no output */
            gpos[m / 2] = (uint32_t)n;
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, gpos, m, &cpos));
            out = (coproc_column *)1;
            assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, csrc, cpos, &out));
            assert_null(out);
            assert_true(strstr(coproc_errmsg(rt), "position") != NULL);
            coproc_column_free(cpos);
            gpos[m / 2] = n ? (uint32_t)(n - 1) : 0;

            /* the same gather with UINT64 positions; one at 2^32 + n - 1 (its low
             * 32 bits a row of src) is out of range, not wrapped */
            uint64_t *gpos64 = malloc(m * 8);
            for (size_t i = 0; i < m; i++)
                gpos64[i] = gpos[i];
            memcpy((char *)gwant + m / 2 * es, (char *)src + (size_t)gpos[m / 2] * es, es);
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT64, gpos64, m, &cpos));
            snprintf(ctx, sizeof ctx, "%s gather uint64 positions %s n=%zu", path,
                     coproc_type_name((coproc_type)t), n);
            out = (coproc_column *)1;
            if (n) {
                assert_ok(rt, coproc_gather(rt, csrc, cpos, &out));
                assert_int_equal(coproc_column_length(out), m);
                assert_ok(rt, coproc_column_download(out, ggot, m));
                check_bits(ggot, gwant, m, es, ctx);
                coproc_column_free(out);
            } else {
                assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, csrc, cpos, &out));
                assert_null(out);
            }
            coproc_column_free(cpos);
            gpos64[m / 2] = ((uint64_t)1 << 32) + (n ? n - 1 : 0);
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT64, gpos64, m, &cpos));
            out = (coproc_column *)1;
            assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, csrc, cpos, &out));
            assert_null(out);
            coproc_column_free(cpos);
            free(gpos64);
            free(gpos);
            free(gwant);
            free(ggot);

            /* scatter: a permutation (unique positions) into a dst of n rows */
            for (size_t i = 0; i < n; i++)
                pos[i] = (uint32_t)i;
            for (size_t i = n; i > 1; i--) {
                size_t j = (size_t)test_rand_below(&rng, i);
                uint32_t tmp = pos[i - 1]; pos[i - 1] = pos[j]; pos[j] = tmp;
            }
            fill((coproc_type)t, dst0, n, &rng);
            coproc_column *cdst = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, dst0, n, &cdst));
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, pos, n, &cpos));
            assert_ok(rt, coproc_scatter(rt, csrc, cpos, cdst));
            memcpy(want, dst0, n * es);
            for (size_t i = 0; i < n; i++)
                memcpy((char *)want + (size_t)pos[i] * es, (char *)src + i * es, es);
            assert_ok(rt, coproc_column_download(cdst, got, n));
            snprintf(ctx, sizeof ctx, "%s scatter %s n=%zu", path, coproc_type_name((coproc_type)t), n);
            check_bits(got, want, n, es, ctx);
            coproc_column_free(cpos);
            coproc_column_free(cdst);
            if (n) {
                /* a bad position anywhere leaves dst untouched */
                pos[(size_t)test_rand_below(&rng, n)] = (uint32_t)n + 5;
                assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, dst0, n, &cdst));
                assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, pos, n, &cpos));
                assert_status(COPROC_OUT_OF_RANGE, coproc_scatter(rt, csrc, cpos, cdst));
                assert_ok(rt, coproc_column_download(cdst, got, n));
                check_bits(got, dst0, n, es, "scatter out of range must not write");
                coproc_column_free(cpos);
                coproc_column_free(cdst);
                /* duplicate positions: each written row holds one of its writers */
                if (n < 70000) {
                    for (size_t i = 0; i < n; i++)
                        pos[i] = (uint32_t)(i / 3);
                    assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, dst0, n, &cdst));
                    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, pos, n, &cpos));
                    assert_ok(rt, coproc_scatter(rt, csrc, cpos, cdst));
                    assert_ok(rt, coproc_column_download(cdst, got, n));
                    for (size_t d = 0; d < n; d++) {
                        const char *g = (const char *)got + d * es;
                        int ok = 0;
                        if (d <= (n - 1) / 3) {
                            for (size_t i = d * 3; i < d * 3 + 3 && i < n; i++)
                                ok |= memcmp(g, (const char *)src + i * es, es) == 0;
                        } else {
                            ok = memcmp(g, (const char *)dst0 + d * es, es) == 0;
                        }
                        if (!ok)
                            fail_msg("%s: duplicate scatter row %zu", ctx, d);
                    }
                    coproc_column_free(cpos);
                    coproc_column_free(cdst);
                }
            }

            /* compact: several densities; junk in the bits past n is ignored */
            size_t words = (n + 31) / 32;
            uint32_t *bits = calloc(words ? words : 1, 4);
            static const unsigned density[] = {0, 1000, 500, 3};
            for (size_t di = 0; di < 4; di++) {
                memset(bits, 0, (words ? words : 1) * 4);
                size_t cnt = 0;
                for (size_t i = 0; i < n; i++) {
                    if (test_rand_below(&rng, 1000) < density[di]) {
                        bits[i / 32] |= 1u << (i % 32);
                        memcpy((char *)want + cnt++ * es, (char *)src + i * es, es);
                    }
                }
                if (n % 32)
                    bits[words - 1] |= ~0u << (n % 32);
                coproc_column *cbits = NULL;
                assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, bits, words, &cbits));
                assert_ok(rt, coproc_compact(rt, csrc, cbits, &out));
                assert_int_equal(coproc_column_length(out), cnt);
                assert_int_equal(coproc_column_type(out), t);
                assert_ok(rt, coproc_column_download(out, got, cnt));
                snprintf(ctx, sizeof ctx, "%s compact %s n=%zu density=%u", path,
                         coproc_type_name((coproc_type)t), n, density[di]);
                check_bits(got, want, cnt, es, ctx);
                coproc_column_free(out);
                coproc_column_free(cbits);
            }
            free(bits);
            coproc_column_free(csrc);
            free(src);
            free(got);
            free(want);
            free(dst0);
            free(pos);
        }
    }
}

static void test_moves_match_reference(void **state)
{
    (void)state;
    test_each_device_path(run_moves, NULL);
}

/* ---- reduce_where */

static coproc_scalar reference(coproc_reduce_op op, coproc_type t, const void *data,
                               const uint32_t *bits, size_t n)
{
    coproc_scalar r;
    memset(&r, 0, sizeof r);
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += (bits[i / 32] >> (i % 32)) & 1;
    r.count = cnt;
    if (op == COPROC_REDUCE_COUNT) { r.type = COPROC_UINT64; r.v.u64 = cnt; return r; }
    int mn = op == COPROC_REDUCE_MIN;
    switch (t) {
    case COPROC_INT32: case COPROC_INT64: {
        r.type = COPROC_INT64;
        int64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_INT32 ? INT32_MAX : INT64_MAX)
                                                       : (t == COPROC_INT32 ? INT32_MIN : INT64_MIN);
        for (size_t i = 0; i < n; i++) {
            if (!((bits[i / 32] >> (i % 32)) & 1)) continue;
            int64_t v = t == COPROC_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (mn ? v < acc : v > acc) acc = v;
        }
        r.v.i64 = acc; break; }
    case COPROC_UINT32: case COPROC_UINT64: {
        r.type = COPROC_UINT64;
        uint64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_UINT32 ? UINT32_MAX : UINT64_MAX) : 0;
        for (size_t i = 0; i < n; i++) {
            if (!((bits[i / 32] >> (i % 32)) & 1)) continue;
            uint64_t v = t == COPROC_UINT32 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc += v;
            else if (mn ? v < acc : v > acc) acc = v;
        }
        r.v.u64 = acc; break; }
    default: {
        r.type = COPROC_FLOAT64;
        double acc = op == COPROC_REDUCE_SUM ? 0 : cnt == 0 ? (mn ? INFINITY : -INFINITY) : NAN;
        for (size_t i = 0; i < n; i++) {
            if (!((bits[i / 32] >> (i % 32)) & 1)) continue;
            double v = t == COPROC_FLOAT32 ? ((const float *)data)[i] : ((const double *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc += v;
            else acc = mn ? fmin(acc, v) : fmax(acc, v);
        }
        r.v.f64 = acc; break; }
    }
    return r;
}

static void check_scalar(coproc_reduce_op op, coproc_type t, size_t n, const coproc_scalar *got,
                         const coproc_scalar *want, const void *data, const uint32_t *bits,
                         const char *ctx)
{
    char where[200];
    snprintf(where, sizeof where, "%s op=%d type=%s n=%zu", ctx, (int)op, coproc_type_name(t), n);
    if (got->type != want->type || got->count != want->count)
        fail_msg("%s: type %d/%d count %llu/%llu", where, got->type, want->type,
                 (unsigned long long)got->count, (unsigned long long)want->count);
    if (want->type == COPROC_FLOAT64) {
        double g = got->v.f64, w = want->v.f64;
        if (isnan(w) || isnan(g)) {
            if (!(isnan(w) && isnan(g)))
                fail_msg("%s: got %g want %g", where, g, w);
            return;
        }
        if (op == COPROC_REDUCE_SUM && !isinf(w)) {
            double abs_sum = 0;
            for (size_t i = 0; i < n; i++)
                if ((bits[i / 32] >> (i % 32)) & 1)
                    abs_sum += fabs(t == COPROC_FLOAT32 ? ((const float *)data)[i] : ((const double *)data)[i]);
            double eps = t == COPROC_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
            if (fabs(g - w) > 4 * eps * abs_sum + 1e-300)
                fail_msg("%s: got %.17g want %.17g", where, g, w);
        } else if (g != w) {
            fail_msg("%s: got %.17g want %.17g", where, g, w);
        }
        return;
    }
    if (got->v.u64 != want->v.u64)
        fail_msg("%s: got %lld want %lld", where, (long long)got->v.i64, (long long)want->v.i64);
}

static void run_reduce_where(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {5150};
    int ntypes = info.has_fp64 ? COPROC__TYPE_COUNT : COPROC_FLOAT64;
    static const unsigned density[] = {0, 1000, 500, 2};
    for (int t = 0; t < ntypes; t++) {
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            if (n > 70000 && t != COPROC_INT64 && t != COPROC_FLOAT32)
                continue;
            size_t words = (n + 31) / 32;
            void *data = malloc((n ? n : 1) * 8);
            uint32_t *bits = calloc(words ? words : 1, 4);
            fill((coproc_type)t, data, n, &rng);
            coproc_column *col = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, data, n, &col));
            for (size_t di = 0; di < 4; di++) {
                memset(bits, 0, (words ? words : 1) * 4);
                for (size_t i = 0; i < n; i++)
                    if (test_rand_below(&rng, 1000) < density[di])
                        bits[i / 32] |= 1u << (i % 32);
                coproc_column *cbits = NULL;
                assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, bits, words, &cbits));
                for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++) {
                    coproc_scalar got;
                    coproc_scalar want = reference((coproc_reduce_op)op, (coproc_type)t, data, bits, n);
                    assert_ok(rt, coproc_reduce_where(rt, (coproc_reduce_op)op, col, cbits, &got));
                    check_scalar((coproc_reduce_op)op, (coproc_type)t, n, &got, &want, data, bits, path);
                }
                coproc_column_free(cbits);
            }
            coproc_column_free(col);
            free(data);
            free(bits);
        }
    }
}

static void test_reduce_where_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_reduce_where, NULL);
}

static void test_gather_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[40] = {1, 2, 3, 4};
    uint32_t p[3] = {0, 1, 2};
    coproc_column *col = NULL, *pos = NULL, *ipos = NULL, *bits = NULL, *bits_short = NULL;
    coproc_column *l = NULL, *out = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 40, &col));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, p, 3, &pos));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, p, 3, &ipos));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, p, 2, &bits));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, p, 1, &bits_short));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, x, 20, &l));
    coproc_scalar sc;
    /* gather */
    assert_status(COPROC_NULL_POINTER, coproc_gather(NULL, col, pos, &out));
    assert_status(COPROC_NULL_POINTER, coproc_gather(rt, col, NULL, &out));
    assert_null(out);
    assert_status(COPROC_NULL_POINTER, coproc_gather(rt, NULL, pos, &out));
    assert_status(COPROC_NULL_POINTER, coproc_gather(rt, col, pos, NULL));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_gather(rt, col, ipos, &out));
    assert_null(out);
    /* scatter */
    assert_status(COPROC_NULL_POINTER, coproc_scatter(rt, col, pos, NULL));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_scatter(rt, col, pos, col));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_scatter(rt, ipos, ipos, col));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_scatter(rt, pos, pos, col)); /* dst type */
    /* compact */
    assert_status(COPROC_NULL_POINTER, coproc_compact(rt, col, NULL, &out));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_compact(rt, col, bits_short, &out));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_compact(rt, l, ipos, &out));
    assert_null(out);
    assert_ok(rt, coproc_compact(rt, col, bits, &out));
    coproc_column_free(out);
    /* reduce_where */
    assert_status(COPROC_NULL_POINTER, coproc_reduce_where(rt, COPROC_REDUCE_SUM, col, bits, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_reduce_where(rt, COPROC_REDUCE_SUM, NULL, bits, &sc));
    assert_status(COPROC_NULL_POINTER, coproc_reduce_where(rt, COPROC_REDUCE_SUM, col, NULL, &sc));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_reduce_where(rt, COPROC_REDUCE_SUM, col, bits_short, &sc));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_reduce_where(rt, (coproc_reduce_op)7, col, bits, &sc));
    /* columns of another runtime */
    coproc_runtime *rt2 = test_open(NULL);
    out = (coproc_column *)1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_gather(rt2, col, pos, &out));
    assert_null(out);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_scatter(rt2, col, pos, col));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_compact(rt2, col, bits, &out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_reduce_where(rt2, COPROC_REDUCE_MAX, col, bits, &sc));
    coproc_close(rt2);
    coproc_column_free(col);
    coproc_column_free(pos);
    coproc_column_free(ipos);
    coproc_column_free(bits);
    coproc_column_free(bits_short);
    coproc_column_free(l);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_match_reference),
        cmocka_unit_test(test_reduce_where_matches_reference),
        cmocka_unit_test(test_gather_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
