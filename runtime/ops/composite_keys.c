/* composite_keys.c - group-by and joins over several integer key columns
 * (coproc.h, "composite keys"), built on the single-key operators.
 *
 * The key columns of a row are folded into one UINT64 key (UINT32 when every
 * combination fits) that orders as the combinations do (first column most
 * significant): each column becomes a digit, value - min when its range is
 * under 2^32, else its dense rank among the distinct values; digits fold in
 * mixed radix (cl/composite.cl on devices, a loop over host columns), and
 * the key so far is ranked again where the radix would pass 2^64. So the fold never loses a
 * combination and never merges two: the answer is exact for any values. For
 * a join both sides are folded with the same digits (ranges and ranks over
 * the two sides together), so equal combinations get equal keys.
 *
 * Nulls (coproc.h, "nulls"): ranges and ranks are over the valid rows. For a
 * group-by a null is one more digit of its column, one past its largest
 * value, so a combination with nulls is a group of its own and sorts after
 * that column's values; the group's key column reads back as null. For a
 * join a null row's digit is 0 and the folded key is null where any key
 * column is (the AND of their validities): the single-key joins never match
 * it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/sync.h"
#include "core/error.h"
#include "core/runtime.h"
#include "data/column.h"
#include "data/residency.h"
#include "ops/nulls.h"

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

/* The dense ranks (UINT64, ascending) of each side's values among the
 * distinct values of all sides, into out[side]; *distinct their number.
 * Null rows (of a side with a validity, the join finds no match for them)
 * get rank 0, and a null group (one side alone, keeping its validity) is not
 * counted: the caller gives those rows their digit. */
static coproc_status rank(coproc_runtime *rt, int nsides, const coproc_column *const *cols,
                          coproc_column **out, uint64_t *distinct)
{
    coproc_column *all = NULL;
    coproc_group_result g;
    memset(&g, 0, sizeof g);
    coproc_status s = COPROC_OK;
    for (int i = 0; i < nsides; i++)
        out[i] = NULL;
    if (nsides > 1)
        s = concat(rt, nsides, (coproc_column *const *)cols, &all);
    if (s == COPROC_OK)
        s = coproc_group_by_aggs(rt, nsides > 1 ? all : cols[0], NULL, COPROC_GROUP_COUNT, 1, &g);
    coproc_column_free(all);
    for (int i = 0; s == COPROC_OK && i < nsides; i++) {
        /* rank of row r = the position of its value among the distinct keys */
        coproc_join_result j;
        memset(&j, 0, sizeof j);
        size_t n = coproc_column_length(cols[i]);
        coproc_column *ranks = NULL;
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
            s = coproc_cast(rt, ranks, COPROC_UINT64, &out[i]);
        coproc_join_result_free(&j);
        coproc_column_free(ranks);
    }
    uint64_t nulls = 0;
    if (s == COPROC_OK)
        s = coproc_column_null_count(g.keys, &nulls);
    if (s == COPROC_OK)
        *distinct = g.groups - nulls;
    for (int i = 0; s != COPROC_OK && i < nsides; i++)
        drop(&out[i]);
    coproc_group_result_free(&g);
    return s;
}

/* Element i of an array of integer type t as C converts it to uint64_t:
 * signed values sign-extend, then wrap. */
static uint64_t value_at(coproc_type t, const void *d, size_t i)
{
    switch (t) {
    case COPROC_INT32: return (uint64_t)(int64_t)((const int32_t *)d)[i];
    case COPROC_INT64: return (uint64_t)((const int64_t *)d)[i];
    case COPROC_UINT32: return ((const uint32_t *)d)[i];
    default: return ((const uint64_t *)d)[i];
    }
}

static uint64_t host_value(const coproc_column *c, size_t i)
{
    return value_at(c->type, c->host, i);
}

/* Whether row i of a host column is valid (not null). */
static int host_valid(const coproc_column *c, size_t i)
{
    if (!c->validity)
        return 1;
    return (((const uint32_t *)c->validity->host)[i / 32] >> (i % 32)) & 1u;
}

/* a < b as the column type orders its values (both as value_at gives them). */
static int before(coproc_type t, uint64_t a, uint64_t b)
{
    return is_signed(t) ? (int64_t)a < (int64_t)b : a < b;
}

static const char *const type_suffix[] = {"i32", "i64", "u32", "u64"};

/* The smallest and largest valid value of a non-empty column (as value_at
 * gives them), *any 0 when every row is null: one pass of range_<t> on a
 * device, a loop over a host column. */
static coproc_status column_range(coproc_runtime *rt, const coproc_column *col, uint64_t *lo,
                                  uint64_t *hi, int *any)
{
    coproc_type t = col->type;
    *any = 0;
    if (!col->dev) {
        uint64_t mn = 0, mx = 0;
        for (size_t i = 0; i < col->length; i++) {
            if (!host_valid(col, i))
                continue;
            uint64_t v = host_value(col, i);
            mn = !*any || before(t, v, mn) ? v : mn;
            mx = !*any || before(t, mx, v) ? v : mx;
            *any = 1;
        }
        *lo = mn, *hi = mx;
        return COPROC_OK;
    }
    coproc__device *dev = col->dev;
    char kname[16];
    snprintf(kname, sizeof kname, "range_%s", type_suffix[t]);
    size_t w = coproc_type_size(t);
    coproc__kernel_lease *l = NULL;
    coproc__geometry g = {0};
    coproc_status s = coproc__kernel_borrow(rt, dev, "composite", kname, &l);
    if (s == COPROC_OK) {
        g = coproc__geometry_for(dev, col->length, 0);
        s = coproc__lease_scratch(rt, dev, l, g.groups * 2 * w);
    }
    if (s == COPROC_OK) {
        cl_ulong n = col->length;
        cl_int has_valid = col->validity != NULL;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, col->mem);
        COPROC__ARG(a, n);
        COPROC__ARG(a, l->scratch);
        COPROC__ARG_LOCAL(a, g.local * w);
        COPROC__ARG_LOCAL(a, g.local * w);
        cl_mem valid = has_valid ? col->validity->mem : col->mem; /* else never read */
        COPROC__ARG(a, valid);
        COPROC__ARG(a, has_valid);
        s = coproc__launch(rt, dev, &a, &g, kname);
    }
    if (s == COPROC_OK) {
        cl_int err = coproc__read_now(dev, dev->queue, l->scratch, 0, g.groups * 2 * w,
                                      l->scratch_host, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: reading partials from device %d", kname,
                                dev->index);
    }
    if (s == COPROC_OK) {
        const void *part = l->scratch_host;
        uint64_t mn = value_at(t, part, 0), mx = value_at(t, part, 1);
        for (size_t i = 1; i < g.groups; i++) {
            uint64_t a = value_at(t, part, 2 * i), b = value_at(t, part, 2 * i + 1);
            mn = before(t, a, mn) ? a : mn;
            mx = before(t, mx, b) ? b : mx;
        }
        /* a group without a valid row gives min > max; all of them: no valid row */
        *any = !before(t, mx, mn);
        *lo = *any ? mn : 0, *hi = *any ? mx : 0;
    }
    coproc__kernel_return(dev, l);
    return s;
}

/* The smallest and largest valid value of key column k over all sides, as
 * unsigned 64-bit (signed values wrapped: their difference is still the
 * range); *any 0 (and 0 and 0) when no side has a valid row. */
static coproc_status range_of(coproc_runtime *rt, int nsides, const coproc_column *const *cols,
                              uint64_t *lo, uint64_t *hi, int *any)
{
    coproc_type t = cols[0]->type;
    *lo = *hi = 0;
    *any = 0;
    for (int i = 0; i < nsides; i++) {
        if (cols[i]->length == 0)
            continue;
        uint64_t mn, mx;
        int some;
        coproc_status s = column_range(rt, cols[i], &mn, &mx, &some);
        if (s != COPROC_OK)
            return s;
        if (!some)
            continue;
        if (!*any || before(t, mn, *lo))
            *lo = mn;
        if (!*any || before(t, *hi, mx))
            *hi = mx;
        *any = 1;
    }
    return COPROC_OK;
}

/* One fold step over every row: acc = acc * radix + digit, or digit when
 * first, where digit = key - lo, or null_digit where `valid` (NULL: none, or
 * key's own validity) marks the row null (cl/composite.cl on a device, a
 * loop over host columns); acc is UINT64, or UINT32 when every combination
 * fits in it. */
static coproc_status step(coproc_runtime *rt, coproc_column *acc, const coproc_column *key,
                          const coproc_column *valid, uint64_t lo, uint64_t radix,
                          uint64_t null_digit, int first)
{
    size_t n = acc->length;
    int narrow = acc->type == COPROC_UINT32;
    if (n == 0)
        return COPROC_OK;
    if (!acc->dev) {
        const uint32_t *bits = valid ? valid->host : NULL;
        for (size_t i = 0; i < n; i++) {
            int ok = !bits || ((bits[i / 32] >> (i % 32)) & 1u);
            uint64_t digit = ok ? host_value(key, i) - lo : null_digit;
            if (narrow) {
                uint32_t *a = acc->host;
                a[i] = (uint32_t)((first ? 0 : a[i] * radix) + digit);
            } else {
                uint64_t *a = acc->host;
                a[i] = (first ? 0 : a[i] * radix) + digit;
            }
        }
        /* acc may be an operator's output (a rank) whose device copy was
         * kept: that copy is stale now */
        for (int d = 0; d < rt->device_count; d++)
            coproc__residency_forget(&rt->devices[d], acc);
        return COPROC_OK;
    }
    char kname[16];
    snprintf(kname, sizeof kname, "pack%s_%s", narrow ? "32" : "", type_suffix[key->type]);
    coproc__device *dev = acc->dev;
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "composite", kname, &l);
    if (s == COPROC_OK) {
        cl_ulong rows = n, clo = lo, cradix = radix, cnull = null_digit;
        cl_int cfirst = first, has_valid = valid != NULL;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, acc->mem);
        COPROC__ARG(a, key->mem);
        COPROC__ARG(a, rows);
        COPROC__ARG(a, clo);
        COPROC__ARG(a, cradix);
        COPROC__ARG(a, cfirst);
        cl_mem vmem = valid ? valid->mem : key->mem; /* else never read */
        COPROC__ARG(a, vmem);
        COPROC__ARG(a, has_valid);
        COPROC__ARG(a, cnull);
        coproc__geometry g = coproc__geometry_for(dev, n, 0);
        s = coproc__launch(rt, dev, &a, &g, kname);
    }
    coproc__kernel_return(dev, l);
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: clFinish on device %d", kname, dev->index);
    }
    return s;
}

/* How the key columns were folded, to read them back from a folded key:
 * without ranks, column k is lo[k] + (key / stride) % radix[k], or null
 * where that digit is null_digit[k] and the column has nulls. */
typedef struct fold_info {
    int ranked;       /* some column, or the key so far, was ranked */
    coproc_type type; /* the folded key's: UINT32 or UINT64 */
    uint64_t lo[MAX_KEYS], radix[MAX_KEYS], null_digit[MAX_KEYS];
} fold_info;

/* Whether key column k has nulls on some side. */
static int column_has_nulls(int nsides, const coproc_column *const *const *keys, int k)
{
    for (int i = 0; i < nsides; i++)
        if (keys[i][k]->validity)
            return 1;
    return 0;
}

/* One UINT64 key per row for each side (out[side], caller frees), equal
 * exactly where the rows' key combinations are, ordered as they are.
 * nulls_group (group-by): a null is one more value of its column, after the
 * others; else (joins) a null row's digit is 0 and the caller makes the
 * folded key null there. */
static coproc_status combine(coproc_runtime *rt, int nkeys, int nsides,
                             const coproc_column *const *const *keys, int nulls_group,
                             coproc_column **out, fold_info *info)
{
    coproc_column *acc[MAX_SIDES] = {NULL};
    uint64_t radix_acc = 1, lo[MAX_KEYS], hi[MAX_KEYS];
    int any[MAX_KEYS], extra[MAX_KEYS]; /* a valid row; a null digit of its own */
    coproc_status s = COPROC_OK;
    /* Every column's range first: when no column needs a rank and every
     * combination fits in 32 bits, the key is a UINT32 (half the bytes to
     * write, and the single-key group-by's 32-bit path). */
    double combinations = 1;
    int wide = 0;
    for (int k = 0; k < nkeys && s == COPROC_OK; k++) {
        const coproc_column *col[MAX_SIDES];
        for (int i = 0; i < nsides; i++)
            col[i] = keys[i][k];
        s = range_of(rt, nsides, col, &lo[k], &hi[k], &any[k]);
        extra[k] = nulls_group && column_has_nulls(nsides, keys, k);
        wide |= hi[k] - lo[k] >= ((uint64_t)1 << 32);
        combinations *= ((double)(hi[k] - lo[k]) + any[k]) + extra[k];
    }
    coproc_type acc_type =
        !wide && combinations <= 4294967296.0 ? COPROC_UINT32 : COPROC_UINT64;
    info->ranked = 0;
    info->type = acc_type;
    for (int i = 0; i < nsides && s == COPROC_OK; i++) {
        coproc__device *dev = keys[i][0]->dev;
        size_t n = keys[i][0]->length;
        s = dev ? coproc__column_new(rt, dev, acc_type, n, &acc[i])
                : coproc__host_column_new(rt, acc_type, n, &acc[i]);
    }
    for (int k = 0; k < nkeys && s == COPROC_OK; k++) {
        const coproc_column *col[MAX_SIDES];
        coproc_column *ranks[MAX_SIDES] = {NULL};
        for (int i = 0; i < nsides; i++)
            col[i] = keys[i][k];
        /* the valid values' digits 0 .. values - 1, then the null one */
        uint64_t from = lo[k], values = hi[k] - lo[k] + any[k];
        if (hi[k] - lo[k] >= ((uint64_t)1 << 32)) {
            /* too wide for a digit of its own: its rank instead */
            if ((s = rank(rt, nsides, col, ranks, &values)) != COPROC_OK)
                break;
            for (int i = 0; i < nsides; i++)
                col[i] = ranks[i];
            from = 0;
            info->ranked = 1;
        }
        uint64_t radix = values + extra[k], null_digit = extra[k] ? values : 0;
        radix = radix ? radix : 1; /* every row null, or no row (joins) */
        if (k > 0 && radix_acc > UINT64_MAX / radix) {
            /* the combination would pass 64 bits: rank the key so far */
            coproc_column *r[MAX_SIDES];
            s = rank(rt, nsides, (const coproc_column *const *)acc, r, &radix_acc);
            for (int i = 0; i < nsides && s == COPROC_OK; i++) {
                coproc_column_free(acc[i]);
                acc[i] = r[i];
            }
            info->ranked = 1;
        }
        for (int i = 0; i < nsides && s == COPROC_OK; i++)
            s = step(rt, acc[i], col[i], keys[i][k]->validity, from, radix, null_digit, k == 0);
        for (int i = 0; i < nsides; i++)
            coproc_column_free(ranks[i]);
        radix_acc = k == 0 ? radix : radix_acc * radix;
        info->lo[k] = from;
        info->radix[k] = radix;
        info->null_digit[k] = extra[k] ? null_digit : UINT64_MAX; /* UINT64_MAX: none */
    }
    for (int i = 0; i < nsides; i++) {
        if (s == COPROC_OK)
            out[i] = acc[i];
        else
            coproc_column_free(acc[i]);
    }
    return s;
}

/* Give col (a new column, where `like` lives) the validity of its n rows in
 * the host bitmap bits. */
static coproc_status give_validity(coproc_runtime *rt, coproc_column *col, const uint32_t *bits,
                                   size_t n)
{
    coproc_column *b = NULL;
    coproc_status s = column_like(rt, col, COPROC_UINT32, bits, (n + 31) / 32, &b);
    if (s == COPROC_OK && (s = coproc_column_set_validity(col, b)) != COPROC_OK)
        coproc_column_free(b);
    return s;
}

/* Each group's key columns from its folded key (no column ranked): the
 * digits back out of the mixed radix, plus each column's smallest value;
 * a column with nulls gets a validity, its null digit read as null. */
static coproc_status unfold(coproc_runtime *rt, int nkeys, const coproc_column *const *keys,
                            const fold_info *info, const coproc_column *folded,
                            coproc_column **key_out)
{
    size_t groups = coproc_column_length(folded), words = (groups + 31) / 32;
    uint64_t *k = malloc((groups ? groups : 1) * sizeof *k);
    unsigned char *v = malloc((groups ? groups : 1) * sizeof(uint64_t));
    uint32_t *bits = malloc((words ? words : 1) * sizeof *bits);
    coproc_status s = k && v && bits ? coproc_column_download(folded, v, groups)
                                     : coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY,
                                                    "coproc_group_by_keys: %zu groups", groups);
    for (size_t g = 0; s == COPROC_OK && g < groups; g++)
        k[g] = value_at(info->type, v, g); /* the folded keys, widened */
    uint64_t stride = 1;
    for (int c = nkeys - 1; c >= 0 && s == COPROC_OK; c--) {
        coproc_type t = keys[c]->type;
        if (words)
            memset(bits, 0, words * sizeof *bits);
        for (size_t g = 0; g < groups; g++) {
            uint64_t digit = k[g] / stride % info->radix[c];
            int null = digit == info->null_digit[c];
            uint64_t x = null ? 0 : info->lo[c] + digit;
            bits[g / 32] |= (uint32_t)!null << (g % 32);
            if (coproc_type_size(t) == 4)
                ((uint32_t *)v)[g] = (uint32_t)x;
            else
                ((uint64_t *)v)[g] = x;
        }
        s = column_like(rt, folded, t, v, groups, &key_out[c]);
        if (s == COPROC_OK && keys[c]->validity)
            s = give_validity(rt, key_out[c], bits, groups);
        stride *= info->radix[c];
    }
    free(k);
    free(v);
    free(bits);
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
            if (c->dev != keys[0][0]->dev)
                return coproc__fail(rt, COPROC_WRONG_DEVICE,
                                    "%s: key column %d lives %s, key column 0 %s: the key "
                                    "columns of one call are all host columns or all on one "
                                    "device", fn, k, c->dev ? "on a device" : "in host memory",
                                    keys[0][0]->dev ? "on a device" : "in host memory");
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
    fold_info info;
    if ((s = combine(rt, nkeys, 1, sides, 1, &key, &info)) == COPROC_OK)
        s = coproc_group_by_aggs(rt, key, values, aggs, 1, out);
    if (s == COPROC_OK && !info.ranked) {
        s = unfold(rt, nkeys, keys, &info, out->keys, key_out);
    } else if (s == COPROC_OK) {
        /* Ranks do not unfold: each group's first row, to read its key
         * columns at (ordered by the folded key as the groups are). */
        if ((s = iota(rt, key, keys[0]->length, &rows)) == COPROC_OK)
            s = coproc_group_by_aggs(rt, key, rows, COPROC_GROUP_MIN, 1, &first);
        for (int k = 0; k < nkeys && s == COPROC_OK; k++)
            s = coproc_gather(rt, keys[k], first.min, &key_out[k]);
    }
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

/* The AND of the validities of a side's key columns over n host rows, into
 * the host bitmap bits (words of ceil(n / 32)). */
static void host_and(int nkeys, const coproc_column *const *keys, size_t n, uint32_t *bits)
{
    size_t words = (n + 31) / 32;
    for (size_t w = 0; w < words; w++)
        bits[w] = UINT32_MAX;
    for (int k = 0; k < nkeys; k++)
        for (size_t w = 0; keys[k]->validity && w < words; w++)
            bits[w] &= ((const uint32_t *)keys[k]->validity->host)[w];
}

/* Give a side's folded key (where its key columns live) the AND of their
 * validities: null where any key column is. Nothing when none has nulls. */
static coproc_status key_validity(coproc_runtime *rt, int nkeys, const coproc_column *const *keys,
                                  coproc_column *folded)
{
    int some = 0;
    for (int k = 0; k < nkeys; k++)
        some |= keys[k]->validity != NULL;
    if (!some)
        return COPROC_OK;
    size_t n = folded->length;
    coproc_column *bits = NULL;
    coproc_status s = COPROC_OK;
    if (!folded->dev) {
        uint32_t *h = malloc(((n + 31) / 32 ? (n + 31) / 32 : 1) * sizeof *h);
        if (!h)
            return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "composite keys: %zu rows", n);
        host_and(nkeys, keys, n, h);
        s = give_validity(rt, folded, h, n);
        free(h);
        return s;
    }
    for (int k = 0; k < nkeys && s == COPROC_OK; k++) {
        if (!keys[k]->validity)
            continue;
        coproc_column *next = NULL;
        s = coproc__nulls_and(rt, folded->dev, bits, keys[k]->validity, n, &next);
        coproc_column_free(bits);
        bits = next;
    }
    if (s == COPROC_OK)
        s = coproc_column_set_validity(folded, bits);
    if (s != COPROC_OK)
        coproc_column_free(bits);
    return s;
}

/* Both sides' folded keys, checked; a row with a null in any key column has
 * a null folded key (it never matches). */
static coproc_status join_keys(coproc_runtime *rt, const char *fn, int nkeys,
                               const coproc_column *const *left,
                               const coproc_column *const *right, coproc_column **out)
{
    const coproc_column *const *sides[2] = {left, right};
    fold_info info;
    coproc_status s = check_keys(rt, fn, nkeys, 2, sides);
    if (s == COPROC_OK)
        s = combine(rt, nkeys, 2, sides, 0, out, &info);
    for (int i = 0; i < 2 && s == COPROC_OK; i++)
        s = key_validity(rt, nkeys, sides[i], out[i]); /* the caller frees out[] */
    return s;
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
