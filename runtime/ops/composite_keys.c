/* composite_keys.c - group-by and joins over several integer key columns
 * (coproc.h, "composite keys"), built on the single-key operators.
 *
 * The key columns of a row are folded into one UINT64 key that orders as the
 * combinations do (first column most significant): each column becomes a
 * digit, value - min when its range is under 2^32, else its dense rank among
 * the distinct values; digits fold in mixed radix, and the key so far is
 * ranked again where the radix would pass 2^64. So the fold never loses a
 * combination and never merges two: the answer is exact for any values. For
 * a join both sides are folded with the same digits (ranges and ranks over
 * the two sides together), so equal combinations get equal keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/runtime.h"
#include "data/column.h"

#define MAX_KEYS 16
#define MAX_SIDES 2

static int is_integer(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64 || t == COPROC_UINT32 || t == COPROC_UINT64;
}

static int is_signed(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64;
}

static void drop(coproc_column **c)
{
    coproc_column_free(*c);
    *c = NULL;
}

/* A new column of n elements from host memory, where `like` lives: on its
 * device, or a host column when it is one. */
static coproc_status column_like(coproc_runtime *rt, const coproc_column *like, coproc_type t,
                                 const void *data, size_t n, coproc_column **out)
{
    int dev = coproc_column_device(like);
    if (dev >= 0)
        return coproc_column_upload(rt, dev, t, data, n, out);
    coproc_status s = coproc_column_host_alloc(rt, t, n, out);
    if (s == COPROC_OK && n)
        memcpy(coproc_column_host_data(*out), data, n * coproc_type_size(t));
    return s;
}

/* 0, 1, ..., n - 1 as UINT32 positions, where `like` lives. */
static coproc_status iota(coproc_runtime *rt, const coproc_column *like, size_t n,
                          coproc_column **out)
{
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "composite keys: %zu row positions", n);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    coproc_status s = column_like(rt, like, COPROC_UINT32, v, n, out);
    free(v);
    return s;
}

/* The sides' columns end to end, in host memory first (the rare path: a
 * key whose range passes 2^32 in a join). */
static coproc_status concat(coproc_runtime *rt, int nsides, coproc_column *const *cols,
                            coproc_column **out)
{
    coproc_type t = coproc_column_type(cols[0]);
    size_t w = coproc_type_size(t), n = 0;
    for (int i = 0; i < nsides; i++)
        n += coproc_column_length(cols[i]);
    unsigned char *host = malloc(n ? n * w : 1);
    if (!host)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "composite keys: %zu keys", n);
    coproc_status s = COPROC_OK;
    size_t at = 0;
    for (int i = 0; i < nsides && s == COPROC_OK; i++) {
        size_t len = coproc_column_length(cols[i]);
        s = coproc_column_download(cols[i], host + at * w, len);
        at += len;
    }
    if (s == COPROC_OK)
        s = column_like(rt, cols[0], t, host, n, out);
    free(host);
    return s;
}

/* Each side's column replaced by the dense ranks (UINT64, ascending) of its
 * values among the distinct values of all sides; *distinct their number. */
static coproc_status rank(coproc_runtime *rt, int nsides, coproc_column **cols,
                          uint64_t *distinct)
{
    coproc_column *all = NULL;
    coproc_group_result g;
    memset(&g, 0, sizeof g);
    coproc_status s = COPROC_OK;
    if (nsides > 1)
        s = concat(rt, nsides, cols, &all);
    if (s == COPROC_OK)
        s = coproc_group_by_aggs(rt, nsides > 1 ? all : cols[0], NULL, COPROC_GROUP_COUNT, 1, &g);
    coproc_column_free(all);
    for (int i = 0; s == COPROC_OK && i < nsides; i++) {
        /* rank of row r = the position of its value among the distinct keys */
        coproc_join_result j;
        memset(&j, 0, sizeof j);
        size_t n = coproc_column_length(cols[i]);
        coproc_column *ranks = NULL, *wide = NULL;
        uint32_t *zeros = calloc(n ? n : 1, sizeof *zeros);
        if (!zeros)
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "composite keys: %zu ranks", n);
        if (s == COPROC_OK)
            s = column_like(rt, cols[i], COPROC_UINT32, zeros, n, &ranks);
        free(zeros);
        if (s == COPROC_OK)
            s = coproc_hash_join(rt, g.keys, cols[i], &j);
        if (s == COPROC_OK)
            s = coproc_scatter(rt, j.left, j.right, ranks);
        if (s == COPROC_OK)
            s = coproc_cast(rt, ranks, COPROC_UINT64, &wide);
        coproc_join_result_free(&j);
        coproc_column_free(ranks);
        if (s == COPROC_OK) {
            coproc_column_free(cols[i]);
            cols[i] = wide;
        }
    }
    if (s == COPROC_OK)
        *distinct = g.groups;
    coproc_group_result_free(&g);
    return s;
}

/* The smallest and largest value of column k over all sides, as unsigned
 * 64-bit (signed values wrapped: their difference is still the range). */
static coproc_status range_of(coproc_runtime *rt, int nsides, const coproc_column *const *cols,
                              uint64_t *lo, uint64_t *hi)
{
    int any = 0;
    for (int i = 0; i < nsides; i++) {
        if (coproc_column_length(cols[i]) == 0)
            continue;
        coproc_scalar mn, mx;
        coproc_status s;
        if ((s = coproc_reduce(rt, COPROC_REDUCE_MIN, cols[i], &mn)) != COPROC_OK ||
            (s = coproc_reduce(rt, COPROC_REDUCE_MAX, cols[i], &mx)) != COPROC_OK)
            return s;
        int sgn = is_signed(coproc_column_type(cols[i]));
        /* compare as the type orders, keep as unsigned */
        if (!any || (sgn ? mn.v.i64 < (int64_t)*lo : mn.v.u64 < *lo))
            *lo = sgn ? (uint64_t)mn.v.i64 : mn.v.u64;
        if (!any || (sgn ? mx.v.i64 > (int64_t)*hi : mx.v.u64 > *hi))
            *hi = sgn ? (uint64_t)mx.v.i64 : mx.v.u64;
        any = 1;
    }
    if (!any)
        *lo = *hi = 0;
    return COPROC_OK;
}

/* out[i] = a[i] * m + b[i] (UINT64, wrapping never: the caller checked). */
static coproc_status fold(coproc_runtime *rt, coproc_column **acc, uint64_t m,
                          coproc_column **digit)
{
    coproc_column *scaled = NULL, *sum = NULL;
    coproc_value v = {.u64 = m};
    coproc_status s = coproc_map_const(rt, COPROC_ARITH_MUL, *acc, v, &scaled);
    if (s == COPROC_OK)
        s = coproc_map(rt, COPROC_ARITH_ADD, scaled, *digit, &sum);
    coproc_column_free(scaled);
    drop(digit);
    if (s == COPROC_OK) {
        coproc_column_free(*acc);
        *acc = sum;
    }
    return s;
}

/* One UINT64 key per row for each side (out[side], caller frees), equal
 * exactly where the rows' key combinations are, ordered as they are. */
static coproc_status combine(coproc_runtime *rt, int nkeys, int nsides,
                             const coproc_column *const *const *keys, coproc_column **out)
{
    coproc_column *acc[MAX_SIDES] = {NULL}, *digit[MAX_SIDES] = {NULL};
    uint64_t radix_acc = 1;
    coproc_status s = COPROC_OK;
    for (int k = 0; k < nkeys && s == COPROC_OK; k++) {
        const coproc_column *col[MAX_SIDES];
        for (int i = 0; i < nsides; i++)
            col[i] = keys[i][k];
        uint64_t lo, hi, radix;
        if ((s = range_of(rt, nsides, col, &lo, &hi)) != COPROC_OK)
            break;
        /* value - min, wrapping: 0 .. hi - lo in the values' order, signed
         * or not */
        for (int i = 0; i < nsides && s == COPROC_OK; i++) {
            coproc_column *u = NULL;
            coproc_value v = {.u64 = lo};
            s = coproc_cast(rt, col[i], COPROC_UINT64, &u);
            if (s == COPROC_OK)
                s = coproc_map_const(rt, COPROC_ARITH_SUB, u, v, &digit[i]);
            coproc_column_free(u);
        }
        if (s != COPROC_OK)
            break;
        radix = hi - lo + 1;
        if (hi - lo >= ((uint64_t)1 << 32) && (s = rank(rt, nsides, digit, &radix)) != COPROC_OK)
            break;
        if (k == 0) {
            for (int i = 0; i < nsides; i++) {
                acc[i] = digit[i];
                digit[i] = NULL;
            }
            radix_acc = radix;
            continue;
        }
        if (radix && radix_acc > UINT64_MAX / radix) {
            if ((s = rank(rt, nsides, acc, &radix_acc)) != COPROC_OK)
                break;
        }
        for (int i = 0; i < nsides && s == COPROC_OK; i++)
            s = fold(rt, &acc[i], radix, &digit[i]);
        radix_acc *= radix;
    }
    for (int i = 0; i < nsides; i++) {
        coproc_column_free(digit[i]);
        if (s == COPROC_OK)
            out[i] = acc[i];
        else
            coproc_column_free(acc[i]);
    }
    return s;
}

/* The arguments' shared checks: nkeys columns, each an integer column of rt,
 * all of one length (a side's), the same types on both sides of a join. */
static coproc_status check_keys(coproc_runtime *rt, const char *fn, int nkeys, int nsides,
                                const coproc_column *const *const *keys)
{
    if (nkeys < 1 || nkeys > MAX_KEYS)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: %d key columns (1 to %d)", fn,
                            nkeys, MAX_KEYS);
    for (int i = 0; i < nsides; i++) {
        if (!keys[i])
            return coproc__fail(rt, COPROC_NULL_POINTER, "%s: a key column array is NULL", fn);
        for (int k = 0; k < nkeys; k++) {
            const coproc_column *c = keys[i][k];
            if (!c)
                return coproc__fail(rt, COPROC_NULL_POINTER, "%s: key column %d is NULL", fn, k);
            if (c->rt != rt)
                return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                    "%s: key column %d belongs to another runtime", fn, k);
            if (!is_integer(c->type))
                return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE,
                                    "%s: key column %d is %s; keys are integer columns", fn, k,
                                    coproc_type_name(c->type));
            if (c->length != keys[i][0]->length)
                return coproc__fail(rt, COPROC_LENGTH_MISMATCH,
                                    "%s: key column %d has %zu rows, key column 0 %zu", fn, k,
                                    c->length, keys[i][0]->length);
            if (i > 0 && c->type != keys[0][k]->type)
                return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                    "%s: key column %d is %s on one side and %s on the other",
                                    fn, k, coproc_type_name(keys[0][k]->type),
                                    coproc_type_name(c->type));
        }
    }
    return COPROC_OK;
}

coproc_status coproc_group_by_keys(coproc_runtime *rt, int nkeys,
                                   const coproc_column *const *keys, const coproc_column *values,
                                   unsigned aggs, coproc_group_result *out,
                                   coproc_column **key_out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out || !key_out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_group_by_keys: %s is NULL",
                            out ? "key_out" : "out");
    memset(out, 0, sizeof *out);
    for (int k = 0; k < nkeys && k < MAX_KEYS; k++)
        key_out[k] = NULL;
    const coproc_column *const *sides[1] = {keys};
    coproc_status s = check_keys(rt, "coproc_group_by_keys", nkeys, 1, sides);
    if (s != COPROC_OK)
        return s;
    if (values && coproc_column_length(values) != keys[0]->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH,
                            "coproc_group_by_keys: %zu values for %zu rows of keys",
                            coproc_column_length(values), keys[0]->length);
    coproc_column *key = NULL, *rows = NULL;
    coproc_group_result first;
    memset(&first, 0, sizeof first);
    /* The groups, then each group's first row to read its key columns at:
     * both ordered by the folded key, so they line up. */
    if ((s = combine(rt, nkeys, 1, sides, &key)) == COPROC_OK &&
        (s = coproc_group_by_aggs(rt, key, values, aggs, 1, out)) == COPROC_OK &&
        (s = iota(rt, key, keys[0]->length, &rows)) == COPROC_OK)
        s = coproc_group_by_aggs(rt, key, rows, COPROC_GROUP_MIN, 1, &first);
    for (int k = 0; k < nkeys && s == COPROC_OK; k++)
        s = coproc_gather(rt, keys[k], first.min, &key_out[k]);
    coproc_column_free(key);
    coproc_column_free(rows);
    coproc_group_result_free(&first);
    if (s == COPROC_OK) {
        drop(&out->keys); /* the folded key: the caller has the columns */
        return COPROC_OK;
    }
    coproc_group_result_free(out);
    memset(out, 0, sizeof *out);
    for (int k = 0; k < nkeys; k++)
        drop(&key_out[k]);
    return s;
}

/* Both sides' folded keys, checked. */
static coproc_status join_keys(coproc_runtime *rt, const char *fn, int nkeys,
                               const coproc_column *const *left,
                               const coproc_column *const *right, coproc_column **out)
{
    const coproc_column *const *sides[2] = {left, right};
    coproc_status s = check_keys(rt, fn, nkeys, 2, sides);
    return s == COPROC_OK ? combine(rt, nkeys, 2, sides, out) : s;
}

coproc_status coproc_hash_join_keys(coproc_runtime *rt, int nkeys,
                                    const coproc_column *const *left,
                                    const coproc_column *const *right, coproc_join_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join_keys: out is NULL");
    memset(out, 0, sizeof *out);
    coproc_column *k[2] = {NULL, NULL};
    coproc_status s = join_keys(rt, "coproc_hash_join_keys", nkeys, left, right, k);
    if (s == COPROC_OK)
        s = coproc_hash_join(rt, k[0], k[1], out);
    coproc_column_free(k[0]);
    coproc_column_free(k[1]);
    return s;
}

coproc_status coproc_hash_join_keys_count(coproc_runtime *rt, int nkeys,
                                          const coproc_column *const *left,
                                          const coproc_column *const *right, uint64_t *count)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!count)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join_keys_count: count is NULL");
    *count = 0;
    coproc_column *k[2] = {NULL, NULL};
    coproc_status s = join_keys(rt, "coproc_hash_join_keys_count", nkeys, left, right, k);
    if (s == COPROC_OK)
        s = coproc_hash_join_count(rt, k[0], k[1], count);
    coproc_column_free(k[0]);
    coproc_column_free(k[1]);
    return s;
}

coproc_status coproc_semi_join_keys(coproc_runtime *rt, int nkeys,
                                    const coproc_column *const *probe,
                                    const coproc_column *const *build, coproc_column **positions,
                                    uint64_t *count)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (positions)
        *positions = NULL;
    if (count)
        *count = 0;
    coproc_column *k[2] = {NULL, NULL};
    coproc_status s = join_keys(rt, "coproc_semi_join_keys", nkeys, probe, build, k);
    if (s == COPROC_OK)
        s = coproc_semi_join(rt, k[0], k[1], positions, count);
    coproc_column_free(k[0]);
    coproc_column_free(k[1]);
    return s;
}
