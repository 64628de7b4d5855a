/* test_composite_keys.c - group-by and joins over several key columns
 * (coproc_group_by_keys, coproc_hash_join_keys[_count], coproc_semi_join_keys)
 * against a scalar C reference: two and three columns of mixed integer types,
 * ranges that fold as value - min, ranges over 2^32 that fold as ranks, and
 * three wide columns whose combination passes 64 bits (the key so far ranked
 * again); sizes 0, 1 and a few odd ones; device columns on every device and
 * kernel path, and host columns; bad arguments refused. Nulls (coproc.h):
 * key columns with validities at null rates 0 %, 1 %, 50 % and 100 % (a
 * null groups as one more value of its column, after the others; a row with
 * a null key never joins), values with nulls beside them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define MAXK 4

/* Two 32-bit columns of full range already pass 64 bits together. */
static const coproc_type ktypes[MAXK] = {COPROC_INT32, COPROC_UINT32, COPROC_UINT64,
                                         COPROC_INT64};

enum { D_NARROW, D_SMALL, D_WIDE, D_ALL_WIDE, D_COUNT };
/* all wide: 32-bit columns of full range fold as value - min, 64-bit ones as
 * ranks, and the first two together pass 64 bits (the key so far ranked) */
/* narrow: every combination fits in 32 bits (the UINT32 folded key); small:
 * unsigned columns hold -2..2 wrapped, so their ranges near 2^32 or 2^64 */
static const char *const d_name[] = {"narrow", "small ranges", "one wide column", "all wide"};

typedef struct keyset {
    int nkeys;
    size_t n;
    uint64_t *raw[MAXK]; /* each column's values as raw bits (32-bit ones zero-extended) */
    void *data[MAXK];    /* the same, in the column's type */
    uint32_t *valid[MAXK]; /* each column's validity bitmap; NULL: none */
} keyset;

/* No validity; else the share of null rows (0 to 1) in each key column. */
#define NO_NULLS (-1.0)

static int valid_at(const uint32_t *v, size_t i)
{
    return v ? (v[i / 32] >> (i % 32)) & 1 : 1;
}

/* A validity of n rows, a null with probability rate (1: every row). */
static uint32_t *make_validity(size_t n, double rate, test_rng *r)
{
    size_t words = (n + 31) / 32;
    uint32_t *v = calloc(words + 1, 4);
    for (size_t i = 0; i < n; i++)
        if (!(rate >= 1 || (double)test_rand_below(r, 1000000) < rate * 1e6))
            v[i / 32] |= 1u << (i % 32);
    return v;
}

static uint64_t order_of(coproc_type t, uint64_t raw)
{
    if (t == COPROC_INT32)
        return (uint32_t)raw ^ 0x80000000u;
    if (t == COPROC_INT64)
        return raw ^ 0x8000000000000000ull;
    return raw;
}

/* A value for column k: few distinct values, so rows share combinations. */
static uint64_t draw(test_rng *r, coproc_type t, int wide, int narrow)
{
    static const uint64_t far[] = {0, 1, 0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull,
                                   UINT64_MAX, 0x100000000ull, 0xFFFFFFFF00000000ull};
    static const uint32_t far32[] = {0, 1, 0x80000000u, 0x7FFFFFFFu, 0xFFFFFFFEu};
    uint64_t v;
    if (wide && coproc_type_size(t) == 8)
        v = far[test_rand_below(r, sizeof far / sizeof far[0])] + test_rand_below(r, 3);
    else if (wide)
        v = far32[test_rand_below(r, sizeof far32 / sizeof far32[0])] + test_rand_below(r, 2);
    else if (narrow)
        v = test_rand_below(r, 5) - (t == COPROC_INT32 || t == COPROC_INT64 ? 2 : 0);
    else
        v = test_rand_below(r, 5) - 2; /* -2 .. 2 */
    return coproc_type_size(t) == 4 ? (uint32_t)v : v;
}

/* Key columns; null_rate NO_NULLS: no validities, else each column has one
 * with that share of nulls, garbage (any bits) stored under them. */
static void keyset_make(keyset *ks, int nkeys, size_t n, int dist, double null_rate, uint64_t seed)
{
    test_rng r = {seed};
    ks->nkeys = nkeys;
    ks->n = n;
    for (int k = 0; k < nkeys; k++) {
        coproc_type t = ktypes[k];
        ks->raw[k] = malloc((n + 1) * sizeof(uint64_t));
        ks->data[k] = malloc((n + 1) * coproc_type_size(t));
        ks->valid[k] = null_rate == NO_NULLS ? NULL : make_validity(n, null_rate, &r);
        int wide = dist == D_ALL_WIDE || (dist == D_WIDE && k == 2);
        for (size_t i = 0; i < n; i++) {
            uint64_t v = draw(&r, t, wide, dist == D_NARROW);
            if (!valid_at(ks->valid[k], i)) /* garbage: must not count */
                v = coproc_type_size(t) == 4 ? (uint32_t)test_rand(&r) : test_rand(&r);
            ks->raw[k][i] = v;
            if (coproc_type_size(t) == 4)
                ((uint32_t *)ks->data[k])[i] = (uint32_t)v;
            else
                ((uint64_t *)ks->data[k])[i] = v;
        }
    }
}

static void keyset_free(keyset *ks)
{
    for (int k = 0; k < ks->nkeys; k++) {
        free(ks->raw[k]);
        free(ks->data[k]);
        free(ks->valid[k]);
    }
}

/* <0, 0, >0: rows a of x and b of y by their key tuples, as the types order,
 * a null after every value of its column and equal to a null. */
static int tuple_cmp(const keyset *x, size_t a, const keyset *y, size_t b)
{
    for (int k = 0; k < x->nkeys; k++) {
        int pn = !valid_at(x->valid[k], a), qn = !valid_at(y->valid[k], b);
        if (pn || qn) {
            if (pn != qn)
                return pn ? 1 : -1;
            continue;
        }
        uint64_t p = order_of(ktypes[k], x->raw[k][a]), q = order_of(ktypes[k], y->raw[k][b]);
        if (p != q)
            return p < q ? -1 : 1;
    }
    return 0;
}

/* Whether rows a of x and b of y join: every key valid on both and equal. */
static int tuple_match(const keyset *x, size_t a, const keyset *y, size_t b)
{
    for (int k = 0; k < x->nkeys; k++)
        if (!valid_at(x->valid[k], a) || !valid_at(y->valid[k], b))
            return 0;
    return tuple_cmp(x, a, y, b) == 0;
}

static const keyset *sort_ks;
static int cmp_rows(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = tuple_cmp(sort_ks, i, sort_ks, j);
    return c ? c : (i > j) - (i < j);
}

static coproc_column *make_col(coproc_runtime *rt, int device, coproc_type t, const void *d,
                               size_t n)
{
    coproc_column *c;
    if (device >= 0) {
        assert_ok(rt, coproc_column_upload(rt, device, t, d, n, &c));
    } else {
        assert_ok(rt, coproc_column_host_alloc(rt, t, n, &c));
        if (n)
            memcpy(coproc_column_host_data(c), d, n * coproc_type_size(t));
    }
    return c;
}

/* make_col with the validity `valid` (NULL: none). */
static coproc_column *make_col_valid(coproc_runtime *rt, int device, coproc_type t, const void *d,
                                     size_t n, const uint32_t *valid)
{
    coproc_column *c = make_col(rt, device, t, d, n);
    if (valid)
        assert_ok(rt, coproc_column_set_validity(
                          c, make_col(rt, device, COPROC_UINT32, valid, (n + 31) / 32)));
    return c;
}

/* A column's validity downloaded (malloc'd), NULL when it has none. */
static uint32_t *download_validity(coproc_runtime *rt, const coproc_column *c)
{
    const coproc_column *v = coproc_column_validity(c);
    if (!v)
        return NULL;
    size_t words = coproc_column_length(v);
    assert_int_equal(words, (coproc_column_length(c) + 31) / 32);
    uint32_t *h = malloc((words + 1) * 4);
    assert_ok(rt, coproc_column_download(v, h, words));
    return h;
}

static void *download(coproc_runtime *rt, const coproc_column *c)
{
    size_t n = coproc_column_length(c);
    void *h = malloc((n + 1) * 8);
    assert_ok(rt, coproc_column_download(c, h, n));
    return h;
}

static void check_group_by(coproc_runtime *rt, int device, int nkeys, size_t n, int dist,
                           double null_rate)
{
    keyset ks;
    keyset_make(&ks, nkeys, n, dist, null_rate,
                1000 + n * 7 + (uint64_t)dist * 31 + (uint64_t)nkeys + (uint64_t)(null_rate * 100));
    int32_t *vals = malloc((n + 1) * sizeof *vals);
    test_rng r = {n + 5};
    for (size_t i = 0; i < n; i++)
        vals[i] = (int32_t)test_rand_below(&r, 2001) - 1000;
    /* values with nulls beside keys with nulls, at the same rate */
    uint32_t *vvalid = null_rate == NO_NULLS ? NULL : make_validity(n, null_rate, &r);

    /* reference: rows sorted by tuple, runs folded */
    size_t *ord = malloc((n + 1) * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    sort_ks = &ks;
    qsort(ord, n, sizeof *ord, cmp_rows);

    coproc_column *kc[MAXK], *kout[MAXK];
    coproc_column *vc = make_col_valid(rt, device, COPROC_INT32, vals, n, vvalid);
    for (int k = 0; k < nkeys; k++)
        kc[k] = make_col_valid(rt, device, ktypes[k], ks.data[k], n, ks.valid[k]);
    coproc_group_result g;
    assert_ok(rt, coproc_group_by_keys(rt, nkeys, (const coproc_column *const *)kc, vc,
                                       COPROC_GROUP_ALL, &g, kout));
    assert_null(g.keys);
    uint64_t *cnt = download(rt, g.count);
    int64_t *sum = download(rt, g.sum);
    int32_t *mn = download(rt, g.min), *mx = download(rt, g.max);
    uint32_t *sum_valid = download_validity(rt, g.sum), *mn_valid = download_validity(rt, g.min),
             *mx_valid = download_validity(rt, g.max);
    keyset got = {.nkeys = nkeys, .n = g.groups};
    for (int k = 0; k < nkeys; k++) {
        assert_int_equal(coproc_column_type(kout[k]), ktypes[k]);
        assert_int_equal(coproc_column_length(kout[k]), g.groups);
        void *h = download(rt, kout[k]);
        got.raw[k] = malloc((g.groups + 1) * sizeof(uint64_t));
        for (size_t i = 0; i < g.groups; i++)
            got.raw[k][i] = coproc_type_size(ktypes[k]) == 4 ? ((uint32_t *)h)[i]
                                                              : ((uint64_t *)h)[i];
        free(h);
        /* a key column with nulls gives its groups' keys a validity */
        got.valid[k] = download_validity(rt, kout[k]);
        assert_int_equal(got.valid[k] != NULL, ks.valid[k] != NULL);
    }
    size_t groups = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a;
        uint64_t c = 0;
        int64_t s = 0;
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        while (b < n && tuple_cmp(&ks, ord[a], &ks, ord[b]) == 0) {
            int32_t v = vals[ord[b]];
            if (valid_at(vvalid, ord[b])) {
                c++;
                s += v;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            b++;
        }
        if (groups >= g.groups)
            fail_msg("%s, %d keys, %zu rows, nulls %g: more groups than the %zu given",
                     d_name[dist], nkeys, n, null_rate, g.groups);
        int some = c > 0; /* sum, min and max are null over no valid value */
        if (tuple_cmp(&got, groups, &ks, ord[a]) != 0 || cnt[groups] != c ||
            valid_at(sum_valid, groups) != some || valid_at(mn_valid, groups) != some ||
            valid_at(mx_valid, groups) != some ||
            (some && (sum[groups] != s || mn[groups] != lo || mx[groups] != hi)))
            fail_msg("%s, %d keys, %zu rows, nulls %g: group %zu differs (count %llu, want "
                     "%llu)",
                     d_name[dist], nkeys, n, null_rate, groups, (unsigned long long)cnt[groups],
                     (unsigned long long)c);
        groups++;
        a = b;
    }
    assert_int_equal(groups, g.groups);

    for (int k = 0; k < nkeys; k++) {
        free(got.raw[k]);
        free(got.valid[k]);
        coproc_column_free(kout[k]);
        coproc_column_free(kc[k]);
    }
    free(cnt), free(sum), free(mn), free(mx);
    free(sum_valid), free(mn_valid), free(mx_valid);
    coproc_group_result_free(&g);
    coproc_column_free(vc);
    free(ord);
    free(vals);
    free(vvalid);
    keyset_free(&ks);
}

static void check_joins(coproc_runtime *rt, int device, int nkeys, size_t nl, size_t nr, int dist,
                        double null_rate)
{
    keyset L, R;
    uint64_t salt = (uint64_t)(null_rate * 100);
    keyset_make(&L, nkeys, nl, dist, null_rate, 77 + nl + (uint64_t)dist + salt);
    keyset_make(&R, nkeys, nr, dist, null_rate, 99 + nr * 3 + (uint64_t)dist + salt);
    /* reference pairs by nested loop (sizes stay small) */
    size_t want = 0, cap = 16;
    test_pair *ref = malloc(cap * sizeof *ref);
    unsigned char *in_build = calloc(nr + 1, 1);
    for (size_t l = 0; l < nl; l++)
        for (size_t r = 0; r < nr; r++)
            if (tuple_match(&L, l, &R, r)) {
                if (want == cap)
                    ref = realloc(ref, (cap *= 2) * sizeof *ref);
                ref[want++] = (test_pair){(uint32_t)l, (uint32_t)r};
                in_build[r] = 1; /* right row r has a match on the left */
            }
    qsort(ref, want, sizeof *ref, test_cmp_pair);

    coproc_column *lc[MAXK], *rc[MAXK];
    for (int k = 0; k < nkeys; k++) {
        lc[k] = make_col_valid(rt, device, ktypes[k], L.data[k], nl, L.valid[k]);
        rc[k] = make_col_valid(rt, device, ktypes[k], R.data[k], nr, R.valid[k]);
    }
    const coproc_column *const *lk = (const coproc_column *const *)lc;
    const coproc_column *const *rk = (const coproc_column *const *)rc;
    char ctx[96];
    snprintf(ctx, sizeof ctx, "%s, %d keys, %zu x %zu, nulls %g", d_name[dist], nkeys, nl, nr,
             null_rate);

    coproc_join_result j;
    assert_ok(rt, coproc_hash_join_keys(rt, nkeys, lk, rk, &j));
    assert_int_equal(j.count, want);
    uint32_t *gl = download(rt, j.left), *gr = download(rt, j.right);
    test_check_pairs(gl, gr, want, ref, ctx);
    free(gl), free(gr);
    coproc_join_result_free(&j);

    uint64_t count = 99;
    assert_ok(rt, coproc_hash_join_keys_count(rt, nkeys, lk, rk, &count));
    assert_int_equal(count, want);

    /* semi: the right rows (probe) whose combination occurs on the left */
    coproc_column *pos;
    assert_ok(rt, coproc_semi_join_keys(rt, nkeys, rk, lk, &pos, &count));
    uint32_t *p = download(rt, pos);
    size_t m = 0;
    for (size_t r = 0; r < nr; r++)
        if (in_build[r]) {
            if (m >= count || p[m] != r)
                fail_msg("%s: semi-join position %zu is not row %zu", ctx, m, r);
            m++;
        }
    assert_int_equal(m, count);
    free(p);
    coproc_column_free(pos);

    for (int k = 0; k < nkeys; k++) {
        coproc_column_free(lc[k]);
        coproc_column_free(rc[k]);
    }
    free(ref);
    free(in_build);
    keyset_free(&L);
    keyset_free(&R);
}

static const size_t sizes[] = {0, 1, 33, 1000, 4099};

static void each_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)path, (void)user;
    /* COPROC_TEST_MAX_ROWS: the largest size (Oclgrind runs small ones). */
    const char *max_env = getenv("COPROC_TEST_MAX_ROWS");
    size_t max_rows = max_env ? strtoull(max_env, NULL, 10) : SIZE_MAX;
    for (int dist = 0; dist < D_COUNT; dist++)
        for (int nkeys = 2; nkeys <= MAXK; nkeys++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && sizes[i] <= max_rows; i++) {
                check_group_by(rt, device, nkeys, sizes[i], dist, NO_NULLS);
                check_joins(rt, device, nkeys, sizes[i], sizes[i] / 2 + 3, dist, NO_NULLS);
            }
}

/* Null rates of the key columns (and of the values beside them). */
static const double null_rates[] = {0, 0.01, 0.5, 1};
#define NNULL_RATES (sizeof null_rates / sizeof null_rates[0])

/* Keys with nulls: 1 to 3 key columns (int32, uint32, uint64), every fold
 * (digits; a wide column ranked; all wide, the key so far ranked), sizes 0,
 * 1, 33 and 1000 (COPROC_TEST_MAX_ROWS caps them; COPROC_TEST_QUICK: the
 * 50 % rate alone, for Oclgrind). */
static void each_null_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)path, (void)user;
    const char *max_env = getenv("COPROC_TEST_MAX_ROWS");
    size_t max_rows = max_env ? strtoull(max_env, NULL, 10) : SIZE_MAX;
    int quick = getenv("COPROC_TEST_QUICK") != NULL;
    static const int dists[] = {D_NARROW, D_WIDE, D_ALL_WIDE};
    for (size_t q = quick ? 2 : 0; q < (quick ? 3 : NNULL_RATES); q++)
        for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++)
            for (int nkeys = 1; nkeys <= 3; nkeys++)
                for (size_t i = 0; i < 4 && sizes[i] <= max_rows; i++) {
                    check_group_by(rt, device, nkeys, sizes[i], dists[d], null_rates[q]);
                    check_joins(rt, device, nkeys, sizes[i], sizes[i] / 2 + 3, dists[d],
                                null_rates[q]);
                }
}

static void test_null_keys_device(void **state)
{
    (void)state;
    test_each_device_path(each_null_case, NULL);
}

/* Host columns with nulls, and one int64 key column beside them. */
static void test_null_keys_host(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    for (size_t q = 0; q < NNULL_RATES; q++)
        for (int dist = 0; dist < D_COUNT; dist++)
            for (int nkeys = 1; nkeys <= MAXK; nkeys++) {
                check_group_by(rt, -1, nkeys, 700, dist, null_rates[q]);
                check_joins(rt, -1, nkeys, 300, 400, dist, null_rates[q]);
            }
    check_group_by(rt, -1, 2, 0, D_SMALL, 0.5);
    check_group_by(rt, -1, 2, 1, D_SMALL, 1);
    coproc_close(rt);
}

static void test_device_columns(void **state)
{
    (void)state;
    test_each_device_path(each_case, NULL);
}

static void test_host_columns(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    for (int dist = 0; dist < D_COUNT; dist++)
        for (int nkeys = 2; nkeys <= MAXK; nkeys++) {
            check_group_by(rt, -1, nkeys, 2000, dist, NO_NULLS);
            check_joins(rt, -1, nkeys, 500, 700, dist, NO_NULLS);
        }
    check_group_by(rt, -1, 2, 0, D_SMALL, NO_NULLS);
    coproc_close(rt);
}

static void test_one_key(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    keyset ks;
    keyset_make(&ks, 1, 300, D_SMALL, NO_NULLS, 5);
    coproc_column *k = make_col(rt, 0, ktypes[0], ks.data[0], 300), *out[1];
    coproc_group_result g, want;
    assert_ok(rt, coproc_group_by_keys(rt, 1, (const coproc_column *const *)&k, NULL,
                                       COPROC_GROUP_COUNT, &g, out));
    assert_ok(rt, coproc_group_by(rt, k, NULL, 1, &want));
    assert_int_equal(g.groups, want.groups);
    int32_t *a = download(rt, out[0]), *b = download(rt, want.keys);
    uint64_t *ca = download(rt, g.count), *cb = download(rt, want.count);
    for (size_t i = 0; i < g.groups; i++) {
        assert_int_equal(a[i], b[i]);
        assert_int_equal(ca[i], cb[i]);
    }
    free(a), free(b), free(ca), free(cb);
    coproc_column_free(out[0]);
    coproc_group_result_free(&g);
    coproc_group_result_free(&want);
    coproc_column_free(k);
    keyset_free(&ks);
    coproc_close(rt);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t a[4] = {1, 2, 3, 4};
    float f[4] = {1, 2, 3, 4};
    int64_t w[4] = {1, 2, 3, 4};
    coproc_column *c4 = make_col(rt, 0, COPROC_INT32, a, 4), *c3 = make_col(rt, 0, COPROC_INT32, a, 3);
    coproc_column *cf = make_col(rt, 0, COPROC_FLOAT32, f, 4), *cw = make_col(rt, 0, COPROC_INT64, w, 4);
    coproc_column *out[17];
    coproc_group_result g;
    coproc_join_result j0;
    const coproc_column *two[2] = {c4, c4}, *mism[2] = {c4, c3}, *flt[2] = {c4, cf},
                        *nul[2] = {c4, NULL}, *wide[2] = {c4, cw};
    assert_status(COPROC_NULL_POINTER, coproc_group_by_keys(NULL, 2, two, NULL, 1, &g, out));
    assert_status(COPROC_NULL_POINTER, coproc_group_by_keys(rt, 2, two, NULL, 1, NULL, out));
    assert_status(COPROC_NULL_POINTER, coproc_group_by_keys(rt, 2, two, NULL, 1, &g, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_group_by_keys(rt, 2, NULL, NULL, 1, &g, out));
    assert_status(COPROC_NULL_POINTER, coproc_group_by_keys(rt, 2, nul, NULL, 1, &g, out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by_keys(rt, 0, two, NULL, 1, &g, out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by_keys(rt, 17, two, NULL, 1, &g, out));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_group_by_keys(rt, 2, mism, NULL, 1, &g, out));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_group_by_keys(rt, 2, two, c3, 1, &g, out));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_group_by_keys(rt, 2, flt, NULL, 1, &g, out));
    /* a float key column with nulls: refused for its type */
    uint32_t word = 0x7;
    coproc_column *cn = make_col(rt, 0, COPROC_FLOAT32, f, 4), *bits;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, &word, 1, &bits));
    assert_ok(rt, coproc_column_set_validity(cn, bits));
    const coproc_column *withnull[2] = {c4, cn};
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_group_by_keys(rt, 2, withnull, NULL, 1, &g, out));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_hash_join_keys(rt, 2, two, withnull, &j0));
    coproc_column_free(cn);
    assert_null(out[0]);
    assert_null(g.count);
    coproc_join_result j;
    uint64_t count;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_hash_join_keys(rt, 2, two, wide, &j));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join_keys(rt, 2, two, two, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join_keys_count(rt, 2, two, two, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_semi_join_keys(rt, 2, two, NULL, NULL, &count));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_semi_join_keys(rt, 2, flt, flt, NULL, &count));
    /* another runtime's column */
    coproc_runtime *rt2 = test_open(NULL);
    coproc_column *other = make_col(rt2, 0, COPROC_INT32, a, 4);
    const coproc_column *foreign[2] = {c4, other};
    assert_int_not_equal(coproc_group_by_keys(rt, 2, foreign, NULL, 1, &g, out), COPROC_OK);
    coproc_column_free(other);
    coproc_close(rt2);
    coproc_column_free(c4), coproc_column_free(c3), coproc_column_free(cf), coproc_column_free(cw);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),  cmocka_unit_test(test_one_key),
        cmocka_unit_test(test_host_columns),   cmocka_unit_test(test_device_columns),
        cmocka_unit_test(test_null_keys_host), cmocka_unit_test(test_null_keys_device),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob), as in test_portable. */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
