/* outofcore.c - sort and hash join of host columns larger than the device
 * budget (hostops.h), built from the in-memory device operators.
 *
 * Sort: chunks sized from the budget are sorted on the device (radix sort,
 * stable), read back as runs, and the runs are merged on the host by a k-way
 * merge over the same order-preserving key bits the device sorts by; ties
 * take the earlier run first, so the whole sort stays stable.
 *
 * Hash join: both sides are partitioned on the host by the top bits of a key
 * hash, each row keeping its original position. Counting the matches of each
 * partition on the host first sizes the output exactly and tells which
 * partitions fit the budget with their pairs; those are joined by one device
 * hash join each, the others (skew: a hot key) in left blocks times right
 * chunks, each chunk cut so that its pairs fit too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "ops/ops.h"
#include "core/error.h"
#include "backend/opencl/transfer.h"

/* Below this a chunk is too small to be worth a device call. */
#define OOC_MIN_BUDGET COPROC__STREAM_MIN_BUDGET
/* Partitions at most; a bigger one is joined in blocks. */
#define OOC_MAX_PARTITION_BITS 20

/* Device memory every call needs besides the rows: scan sums (groups + 1
 * words per scan), the 16-byte minimum buffers, per-pass digit totals. */
static uint64_t fixed_bytes(const coproc__device *dev)
{
    uint64_t units = dev->info.compute_units ? dev->info.compute_units : 1;
    return 4096 + 256 * units;
}

/* Check a host column argument of rt. */
static coproc_status check_host(coproc_runtime *rt, const coproc_column *col, const char *what)
{
    if (!col)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s is NULL", what);
    if (col->rt != rt)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s belongs to another runtime", what);
    if (col->dev)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s is a device column; out-of-core "
                            "operators take host columns", what);
    if ((unsigned)col->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s has invalid type %d", what,
                            (int)col->type);
    if (col->length > 0 && !col->host)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s has %zu rows but no data", what,
                            col->length);
    return COPROC_OK;
}

/* A new device column of n rows of t holding src (n rows). */
static coproc_status upload(coproc_runtime *rt, coproc__device *dev, coproc_type t,
                            const void *src, size_t n, coproc_column **out)
{
    coproc_status s = coproc__column_new(rt, dev, t, n, out);
    if (s == COPROC_OK)
        s = coproc__h2d(rt, dev, NULL, (*out)->mem, 0, src, n * coproc_type_size(t), 0);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- sort */

/* The key at p as the unsigned bits the device radix sort orders by
 * (cl/sort.cl sort_enc*): signed integers flip the sign bit; floats flip
 * every bit when negative, else the sign bit; every NaN is all ones. */
static uint64_t order_bits(coproc_type t, const char *p)
{
    uint32_t x;
    uint64_t y;
    switch (t) {
    case COPROC_INT32: memcpy(&x, p, 4); return x ^ 0x80000000u;
    case COPROC_UINT32: memcpy(&x, p, 4); return x;
    case COPROC_FLOAT32:
        memcpy(&x, p, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u)
            return 0xffffffffu;
        return (x & 0x80000000u) ? (uint32_t)~x : x ^ 0x80000000u;
    case COPROC_INT64: memcpy(&y, p, 8); return y ^ 0x8000000000000000ull;
    case COPROC_UINT64: memcpy(&y, p, 8); return y;
    default:
        memcpy(&y, p, 8);
        if ((y & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
            return ~0ull;
        return (y & 0x8000000000000000ull) ? ~y : y ^ 0x8000000000000000ull;
    }
}

/* Device bytes to sort `rows` rows of a chunk in place: the chunk, slack of
 * its size, and what the sort needs beside it (ops/sort.c). */
static uint64_t sort_bytes(const coproc__device *dev, uint64_t rows, size_t kb, size_t vb)
{
    return 2 * rows * (kb + vb) + coproc__sort_device_bytes(dev, rows, kb, vb) + fixed_bytes(dev);
}

/* The most rows one device sort may take within budget (0: not even one). */
static size_t sort_chunk_rows(const coproc__device *dev, size_t n, size_t kb, size_t vb,
                              size_t budget)
{
    size_t hi = n, widest = kb > vb ? kb : vb;
    if (hi > UINT32_MAX)
        hi = UINT32_MAX;
    if (hi > dev->info.max_alloc_bytes / widest)
        hi = (size_t)(dev->info.max_alloc_bytes / widest);
    size_t lo = 0; /* sort_bytes(lo) fits, or lo is 0 */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (sort_bytes(dev, mid, kb, vb) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

typedef struct run_head {
    uint64_t key;
    size_t run;
} run_head;

static int head_before(const run_head *a, const run_head *b)
{
    return a->key < b->key || (a->key == b->key && a->run < b->run);
}

static void sift_down(run_head *h, size_t size, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= size)
            return;
        if (c + 1 < size && head_before(&h[c + 1], &h[c]))
            c++;
        if (!head_before(&h[c], &h[i]))
            return;
        run_head t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

static void copy_row(char *dst, const char *src, size_t w)
{
    if (w == 4)
        memcpy(dst, src, 4);
    else
        memcpy(dst, src, 8);
}

/* Merge the sorted runs [r * chunk, min(n, (r + 1) * chunk)) of rk (and rv)
 * into ok (and ov); equal keys come from the earlier run first. */
static coproc_status merge_runs(coproc_runtime *rt, coproc_type t, size_t kb, size_t vb,
                                size_t n, size_t chunk, const char *rk, const char *rv, char *ok,
                                char *ov)
{
    size_t runs = (n + chunk - 1) / chunk, size = runs;
    run_head *heap = malloc(runs * sizeof *heap);
    size_t *next = malloc(runs * sizeof *next);
    if (!heap || !next) {
        free(heap);
        free(next);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out-of-core sort: out of host "
                            "memory merging %zu runs", runs);
    }
    for (size_t r = 0; r < runs; r++) {
        next[r] = r * chunk;
        heap[r] = (run_head){order_bits(t, rk + next[r] * kb), r};
    }
    for (size_t i = runs / 2; i-- > 0;)
        sift_down(heap, size, i);
    for (size_t i = 0; i < n; i++) {
        size_t r = heap[0].run, j = next[r]++;
        size_t end = (r + 1) * chunk < n ? (r + 1) * chunk : n;
        copy_row(ok + i * kb, rk + j * kb, kb);
        if (vb)
            copy_row(ov + i * vb, rv + j * vb, vb);
        if (j + 1 < end)
            heap[0].key = order_bits(t, rk + (j + 1) * kb);
        else
            heap[0] = heap[--size];
        sift_down(heap, size, 0);
    }
    free(heap);
    free(next);
    return COPROC_OK;
}

/* Sort keys (and values) into the host columns ko (and vo): device-sorted
 * chunks, merged on the host when there are several. */
static coproc_status sort_chunks(coproc_runtime *rt, coproc__device *dev,
                                 const coproc_column *keys, const coproc_column *values,
                                 size_t budget, coproc_column *ko, coproc_column *vo)
{
    size_t n = keys->length, kb = coproc_type_size(keys->type);
    size_t vb = values ? coproc_type_size(values->type) : 0;
    size_t chunk = sort_chunk_rows(dev, n, kb, vb, budget);
    if (chunk == 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "out-of-core sort: a budget of %zu "
                            "bytes holds no chunk on device %d", budget, dev->index);
    /* One run is the result; several land in a scratch copy to merge from. */
    size_t runs = (n + chunk - 1) / chunk;
    coproc_column *dk = NULL, *dv = NULL;
    char *rk = ko->host, *rv = vo ? vo->host : NULL;
    coproc_status s = COPROC_OK;
    if (runs > 1 && (!(rk = malloc(n * kb)) || (vb && !(rv = malloc(n * vb))))) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out-of-core sort: out of host memory "
                         "for %zu rows", n);
        goto fail;
    }
    for (size_t lo = 0; lo < n; lo += chunk) {
        size_t m = n - lo < chunk ? n - lo : chunk;
        if ((s = upload(rt, dev, keys->type, (const char *)keys->host + lo * kb, m, &dk)) !=
                COPROC_OK ||
            (values && (s = upload(rt, dev, values->type, (const char *)values->host + lo * vb, m,
                                   &dv)) != COPROC_OK) ||
            (s = coproc__sort_run(rt, dk, dv, 0)) != COPROC_OK ||
            (s = coproc__d2h(rt, dev, NULL, rk + lo * kb, dk->mem, 0, m * kb, 0)) != COPROC_OK ||
            (values &&
             (s = coproc__d2h(rt, dev, NULL, rv + lo * vb, dv->mem, 0, m * vb, 0)) != COPROC_OK))
            goto fail;
        coproc_column_free(dk);
        coproc_column_free(dv);
        dk = dv = NULL;
    }
    if (runs > 1)
        s = merge_runs(rt, keys->type, kb, vb, n, chunk, rk, rv, ko->host, vo ? vo->host : NULL);
fail:
    coproc_column_free(dk);
    coproc_column_free(dv);
    if (runs > 1) {
        free(rk);
        free(rv);
    }
    return s;
}

coproc_status coproc__outofcore_sort(coproc_runtime *rt, coproc__device *dev,
                                     const coproc_column *keys, const coproc_column *values,
                                     size_t budget, coproc_column **keys_out,
                                     coproc_column **values_out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!keys_out || (values && !values_out))
        return coproc__fail(rt, COPROC_NULL_POINTER, "out-of-core sort: output is NULL");
    *keys_out = NULL;
    if (values_out)
        *values_out = NULL;
    if (!dev)
        return coproc__fail(rt, COPROC_NULL_POINTER, "out-of-core sort: device is NULL");
    coproc_status s = check_host(rt, keys, "out-of-core sort: keys");
    if (s == COPROC_OK && values)
        s = check_host(rt, values, "out-of-core sort: values");
    if (s != COPROC_OK)
        return s;
    if (values && values->length != keys->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "out-of-core sort: %zu keys but %zu "
                            "values", keys->length, values->length);
    if (budget < OOC_MIN_BUDGET)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "out-of-core sort: budget of %zu bytes;"
                            " at least %zu needed", budget, OOC_MIN_BUDGET);

    coproc_column *ko = NULL, *vo = NULL;
    if ((s = coproc__host_column_new(rt, keys->type, keys->length, &ko)) != COPROC_OK ||
        (values && (s = coproc__host_column_new(rt, values->type, keys->length, &vo)) !=
                       COPROC_OK) ||
        (keys->length > 0 && (s = sort_chunks(rt, dev, keys, values, budget, ko, vo)) !=
                                 COPROC_OK))
        goto fail;
    *keys_out = ko;
    if (values_out)
        *values_out = vo;
    return COPROC_OK;
fail:
    coproc_column_free(ko);
    coproc_column_free(vo);
    return s;
}

/* ---------------------------------------------------------------- hash join */

/* murmur3's 64-bit finaliser. The device hash table uses the low bits of the
 * same hash, so partitions take the top bits: a partition's keys still
 * spread over every bucket. */
static uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* Key i as raw bits (32-bit keys zero-extended, as the device compares them). */
static uint64_t key_at(const char *keys, size_t ks, size_t i)
{
    if (ks == 4) {
        uint32_t x;
        memcpy(&x, keys + i * 4, 4);
        return x;
    }
    uint64_t y;
    memcpy(&y, keys + i * 8, 8);
    return y;
}

static size_t part_of(uint64_t key, unsigned bits)
{
    return bits ? (size_t)(mix64(key) >> (64 - bits)) : 0;
}

/* One side, partitioned: the keys of partition p and their original row
 * positions are at [start[p], start[p + 1]). */
typedef struct part_side {
    char *keys;
    uint32_t *pos;
    size_t *start;
} part_side;

static void part_side_free(part_side *ps)
{
    free(ps->keys);
    free(ps->pos);
    free(ps->start);
}

/* Counting sort of col's rows by partition, stable. */
static coproc_status partition_side(coproc_runtime *rt, const coproc_column *col, unsigned bits,
                                    part_side *ps)
{
    size_t n = col->length, ks = coproc_type_size(col->type), parts = (size_t)1 << bits;
    const char *keys = col->host;
    size_t *next = malloc(parts * sizeof *next);
    ps->start = calloc(parts + 1, sizeof *ps->start);
    ps->keys = malloc(n ? n * ks : 1);
    ps->pos = malloc(n ? n * 4 : 1);
    if (!next || !ps->start || !ps->keys || !ps->pos) {
        free(next);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out-of-core hash join: out of host "
                            "memory partitioning %zu rows", n);
    }
    for (size_t i = 0; i < n; i++)
        ps->start[part_of(key_at(keys, ks, i), bits) + 1]++;
    for (size_t p = 0; p < parts; p++)
        ps->start[p + 1] += ps->start[p];
    memcpy(next, ps->start, parts * sizeof *next);
    for (size_t i = 0; i < n; i++) {
        size_t j = next[part_of(key_at(keys, ks, i), bits)]++;
        copy_row(ps->keys + j * ks, keys + i * ks, ks);
        ps->pos[j] = (uint32_t)i;
    }
    free(next);
    return COPROC_OK;
}

/* Host table of key -> number of rows with that key (open addressing; a
 * count of 0 marks an empty slot). */
typedef struct count_table {
    uint64_t *key;
    uint32_t *count;
    size_t mask;
} count_table;

/* Fill t (allocated for at least 2n slots) with the n keys. */
static void table_build(count_table *t, const char *keys, size_t ks, size_t n)
{
    t->mask = coproc__next_pow2(2 * n < 16 ? 16 : 2 * n) - 1;
    memset(t->count, 0, (t->mask + 1) * sizeof *t->count);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(keys, ks, i);
        size_t h = (size_t)mix64(k) & t->mask;
        while (t->count[h] && t->key[h] != k)
            h = (h + 1) & t->mask;
        t->key[h] = k;
        t->count[h]++;
    }
}

static uint32_t table_get(const count_table *t, uint64_t k)
{
    size_t h = (size_t)mix64(k) & t->mask;
    while (t->count[h] && t->key[h] != k)
        h = (h + 1) & t->mask;
    return t->count[h];
}

/* What the partition joins share. */
typedef struct join_ctx {
    coproc_runtime *rt;
    coproc__device *dev;
    coproc_type type;
    size_t ks;
    uint64_t avail;          /* budget less fixed_bytes */
    count_table table;
    uint32_t *out_l, *out_r; /* the result columns' rows */
    size_t filled;           /* pairs written so far */
    size_t total;            /* pairs expected in all */
} join_ctx;

/* Join nl left rows with nr right rows on the device, expecting `pairs`
 * pairs, and append them as original positions. */
static coproc_status device_join(join_ctx *c, const char *lkeys, const uint32_t *lpos, size_t nl,
                                 const char *rkeys, const uint32_t *rpos, size_t nr,
                                 uint64_t pairs)
{
    coproc_column *dl = NULL, *dr = NULL;
    coproc_join_result r = {0, NULL, NULL};
    coproc_status s;
    if (pairs > c->total - c->filled) {
        s = coproc__fail(c->rt, COPROC_INTERNAL, "out-of-core hash join: more pairs than "
                         "counted");
        goto fail;
    }
    if ((s = upload(c->rt, c->dev, c->type, lkeys, nl, &dl)) != COPROC_OK ||
        (s = upload(c->rt, c->dev, c->type, rkeys, nr, &dr)) != COPROC_OK ||
        (s = coproc__hash_join_run(c->rt, dl, dr, &r)) != COPROC_OK)
        goto fail;
    if (r.count != pairs) {
        s = coproc__fail(c->rt, COPROC_INTERNAL, "out-of-core hash join: the device found %zu "
                         "pairs, the host counted %llu", r.count, (unsigned long long)pairs);
        goto fail;
    }
    uint32_t *ol = c->out_l + c->filled, *or_ = c->out_r + c->filled;
    if ((s = coproc__d2h(c->rt, c->dev, NULL, ol, r.left->mem, 0, r.count * 4, 0)) !=
            COPROC_OK ||
        (s = coproc__d2h(c->rt, c->dev, NULL, or_, r.right->mem, 0, r.count * 4, 0)) !=
            COPROC_OK)
        goto fail;
    for (size_t i = 0; i < r.count; i++) {
        ol[i] = lpos[ol[i]];
        or_[i] = rpos[or_[i]];
    }
    c->filled += r.count;
fail:
    coproc_join_result_free(&r);
    coproc_column_free(dl);
    coproc_column_free(dr);
    return s;
}

/* A partition too big for one device join with its pairs: left blocks small
 * enough that any one right row's matches fit, and for each block the right
 * rows in chunks whose rows and pairs fit (the block's key counts say how
 * many pairs each right row makes). */
static coproc_status join_blocks(join_ctx *c, const char *lk, const uint32_t *lp, size_t nl,
                                 const char *rk, const uint32_t *rp, size_t nr)
{
    size_t ks = c->ks, lo = 1, hi = nl;
    while (lo < hi) { /* the largest block that leaves half the budget to right chunks */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (coproc__hash_join_device_bytes(mid, 1, mid, ks) <= c->avail / 2)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t block = lo;
    coproc_status s = COPROC_OK;
    for (size_t b0 = 0; b0 < nl && s == COPROC_OK; b0 += block) {
        size_t bl = nl - b0 < block ? nl - b0 : block;
        table_build(&c->table, lk + b0 * ks, ks, bl);
        size_t r0 = 0, rows = 0;
        uint64_t pairs = 0;
        for (size_t r = 0; r < nr && s == COPROC_OK; r++) {
            uint64_t m = table_get(&c->table, key_at(rk, ks, r));
            if (rows > 0 && coproc__hash_join_device_bytes(bl, rows + 1, pairs + m, ks) > c->avail) {
                s = device_join(c, lk + b0 * ks, lp + b0, bl, rk + r0 * ks, rp + r0, rows,
                                pairs);
                rows = 0;
                pairs = 0;
            }
            if (rows == 0 && m == 0)
                continue; /* a chunk starts at a matching row: it never comes back empty */
            if (rows == 0)
                r0 = r;
            rows++;
            pairs += m;
        }
        if (s == COPROC_OK && rows > 0)
            s = device_join(c, lk + b0 * ks, lp + b0, bl, rk + r0 * ks, rp + r0, rows, pairs);
    }
    return s;
}

coproc_status coproc__outofcore_hash_join(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_column *left, const coproc_column *right,
                                          size_t budget, coproc_join_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "out-of-core hash join: out is NULL");
    memset(out, 0, sizeof *out);
    if (!dev)
        return coproc__fail(rt, COPROC_NULL_POINTER, "out-of-core hash join: device is NULL");
    coproc_status s = check_host(rt, left, "out-of-core hash join: left");
    if (s == COPROC_OK)
        s = check_host(rt, right, "out-of-core hash join: right");
    if (s != COPROC_OK)
        return s;
    if (!coproc__is_key_type(left->type) || !coproc__is_key_type(right->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "out-of-core hash join: keys of type %s "
                            "and %s; keys must be integers", coproc_type_name(left->type),
                            coproc_type_name(right->type));
    if (left->type != right->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "out-of-core hash join: left keys are "
                            "%s but right keys are %s; both must have the same type",
                            coproc_type_name(left->type), coproc_type_name(right->type));
    size_t nl = left->length, nr = right->length;
    if (nl > UINT32_MAX || nr > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "out-of-core hash join: %zu x %zu rows; at "
                            "most 2^32 - 1 a side", nl, nr);
    if (budget < OOC_MIN_BUDGET || budget <= fixed_bytes(dev) + OOC_MIN_BUDGET / 2)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "out-of-core hash join: budget of %zu "
                            "bytes is too small for device %d", budget, dev->index);

    join_ctx c = {rt, dev, left->type, coproc_type_size(left->type),
                  budget - fixed_bytes(dev), {NULL, NULL, 0}, NULL, NULL, 0, 0};
    part_side L = {NULL, NULL, NULL}, R = {NULL, NULL, NULL};
    uint64_t *part_pairs = NULL;
    coproc_join_result res = {0, NULL, NULL};

    /* Partitions that average a quarter of the budget without their pairs:
     * room for the pairs and for uneven partitions. */
    unsigned bits = 0;
    size_t most = nl > nr ? nl : nr;
    while (bits < OOC_MAX_PARTITION_BITS && ((size_t)1 << bits) < most &&
           coproc__hash_join_device_bytes((nl >> bits) + 1, (nr >> bits) + 1, 0, c.ks) > c.avail / 4)
        bits++;
    size_t parts = (size_t)1 << bits;
    if ((s = partition_side(rt, left, bits, &L)) != COPROC_OK ||
        (s = partition_side(rt, right, bits, &R)) != COPROC_OK)
        goto fail;

    /* Count every partition's pairs: exact output sizes, and which partitions fit. */
    size_t widest = 0;
    for (size_t p = 0; p < parts; p++)
        if (L.start[p + 1] - L.start[p] > widest)
            widest = L.start[p + 1] - L.start[p];
    size_t slots = coproc__next_pow2(2 * widest < 16 ? 16 : 2 * widest);
    part_pairs = malloc(parts * sizeof *part_pairs);
    c.table.key = malloc(slots * sizeof *c.table.key);
    c.table.count = malloc(slots * sizeof *c.table.count);
    if (!part_pairs || !c.table.key || !c.table.count) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out-of-core hash join: out of host "
                         "memory");
        goto fail;
    }
    uint64_t total = 0;
    for (size_t p = 0; p < parts; p++) {
        size_t l0 = L.start[p], l1 = L.start[p + 1], r0 = R.start[p], r1 = R.start[p + 1];
        uint64_t m = 0;
        if (l1 > l0 && r1 > r0) {
            table_build(&c.table, L.keys + l0 * c.ks, c.ks, l1 - l0);
            for (size_t r = r0; r < r1; r++)
                m += table_get(&c.table, key_at(R.keys, c.ks, r));
        }
        part_pairs[p] = m;
        total += m;
    }
    if (total > SIZE_MAX / 8) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out-of-core hash join: %llu pairs do "
                         "not fit host memory", (unsigned long long)total);
        goto fail;
    }
    res.count = c.total = (size_t)total;
    if ((s = coproc__host_column_new(rt, COPROC_UINT32, res.count, &res.left)) != COPROC_OK ||
        (s = coproc__host_column_new(rt, COPROC_UINT32, res.count, &res.right)) != COPROC_OK)
        goto fail;
    c.out_l = res.left->host;
    c.out_r = res.right->host;

    for (size_t p = 0; p < parts && s == COPROC_OK; p++) {
        size_t l0 = L.start[p], r0 = R.start[p];
        size_t pl = L.start[p + 1] - l0, pr = R.start[p + 1] - r0;
        const char *lk = L.keys + l0 * c.ks, *rk = R.keys + r0 * c.ks;
        if (part_pairs[p] == 0)
            continue;
        if (coproc__hash_join_device_bytes(pl, pr, part_pairs[p], c.ks) <= c.avail)
            s = device_join(&c, lk, L.pos + l0, pl, rk, R.pos + r0, pr, part_pairs[p]);
        else
            s = join_blocks(&c, lk, L.pos + l0, pl, rk, R.pos + r0, pr);
    }
    if (s == COPROC_OK && c.filled != c.total)
        s = coproc__fail(rt, COPROC_INTERNAL, "out-of-core hash join: %zu of %zu pairs found",
                         c.filled, c.total);
    if (s != COPROC_OK)
        goto fail;
    *out = res;
    res.left = res.right = NULL;
fail:
    coproc_column_free(res.left);
    coproc_column_free(res.right);
    part_side_free(&L);
    part_side_free(&R);
    free(part_pairs);
    free(c.table.key);
    free(c.table.count);
    return s;
}
