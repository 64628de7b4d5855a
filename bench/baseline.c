/* baseline.c - the C loops coproc-bench compares against: straightforward code
 * a programmer would write, split over threads with pthreads. */
#include "baseline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

typedef struct part {
    size_t begin, end;
    int tid;
    void *user;
    void (*fn)(struct part *);
    int64_t i64; /* per-thread result */
} part;

static void *run_part(void *arg)
{
    part *p = arg;
    p->fn(p);
    return NULL;
}

/* Split [0, n) into `threads` contiguous parts and run fn on each. */
static void par_for(size_t n, int threads, void *user, void (*fn)(part *), part *parts)
{
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_t t[MAX_THREADS];
    size_t chunk = (n + (size_t)threads - 1) / (size_t)threads;
    for (int i = 0; i < threads; i++) {
        size_t b = (size_t)i * chunk;
        parts[i] = (part){b < n ? b : n, b + chunk < n ? b + chunk : n, i, user, fn, 0};
    }
    for (int i = 1; i < threads; i++)
        if (pthread_create(&t[i], NULL, run_part, &parts[i]) != 0)
            run_part(&parts[i]), t[i] = 0;
    run_part(&parts[0]);
    for (int i = 1; i < threads; i++)
        if (t[i])
            pthread_join(t[i], NULL);
}

typedef struct args {
    const int32_t *a;
    const uint32_t *pos;
    int32_t c;
    int32_t *out;
    int64_t *out64;
    uint32_t *positions;
    size_t *offsets;
} args;

static void sum_fn(part *p)
{
    const args *x = p->user;
    int64_t s = 0;
    for (size_t i = p->begin; i < p->end; i++)
        s += x->a[i];
    p->i64 = s;
}

int64_t base_sum_i32(const int32_t *a, size_t n, int threads)
{
    part parts[MAX_THREADS];
    args x = {.a = a};
    par_for(n, threads, &x, sum_fn, parts);
    int64_t s = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++)
        s += parts[i].i64;
    return s;
}

static void min_fn(part *p)
{
    const args *x = p->user;
    int32_t m = INT32_MAX;
    for (size_t i = p->begin; i < p->end; i++)
        m = x->a[i] < m ? x->a[i] : m;
    p->i64 = m;
}

int32_t base_min_i32(const int32_t *a, size_t n, int threads)
{
    part parts[MAX_THREADS];
    args x = {.a = a};
    par_for(n, threads, &x, min_fn, parts);
    int64_t m = INT32_MAX;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++)
        m = parts[i].i64 < m ? parts[i].i64 : m;
    return (int32_t)m;
}

static void count_lt_fn(part *p)
{
    const args *x = p->user;
    int64_t c = 0;
    for (size_t i = p->begin; i < p->end; i++)
        c += x->a[i] < x->c;
    p->i64 = c;
}

size_t base_count_lt_i32(const int32_t *a, size_t n, int32_t c, int threads)
{
    part parts[MAX_THREADS];
    args x = {.a = a, .c = c};
    par_for(n, threads, &x, count_lt_fn, parts);
    size_t total = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++)
        total += (size_t)parts[i].i64;
    return total;
}

static void write_lt_fn(part *p)
{
    const args *x = p->user;
    size_t o = x->offsets[p->tid];
    for (size_t i = p->begin; i < p->end; i++)
        if (x->a[i] < x->c)
            x->positions[o++] = (uint32_t)i;
}

size_t base_select_lt_i32(const int32_t *a, size_t n, int32_t c, uint32_t *pos, int threads)
{
    part parts[MAX_THREADS];
    size_t offsets[MAX_THREADS];
    args x = {.a = a, .c = c, .positions = pos, .offsets = offsets};
    par_for(n, threads, &x, count_lt_fn, parts);
    size_t total = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++) {
        offsets[i] = total;
        total += (size_t)parts[i].i64;
    }
    par_for(n, threads, &x, write_lt_fn, parts);
    return total;
}

static void add_fn(part *p)
{
    const args *x = p->user;
    for (size_t i = p->begin; i < p->end; i++)
        x->out[i] = (int32_t)((uint32_t)x->a[i] + (uint32_t)x->c);
}

void base_add_const_i32(const int32_t *a, size_t n, int32_t c, int32_t *out, int threads)
{
    part parts[MAX_THREADS];
    args x = {.a = a, .c = c, .out = out};
    par_for(n, threads, &x, add_fn, parts);
}

static void gather_fn(part *p)
{
    const args *x = p->user;
    for (size_t i = p->begin; i < p->end; i++)
        x->out[i] = x->a[x->pos[i]];
}

void base_gather_i32(const int32_t *a, const uint32_t *pos, size_t n, int32_t *out, int threads)
{
    part parts[MAX_THREADS];
    args x = {.a = a, .pos = pos, .out = out};
    par_for(n, threads, &x, gather_fn, parts);
}

static void scan_local_fn(part *p)
{
    const args *x = p->user;
    int64_t s = 0;
    for (size_t i = p->begin; i < p->end; i++)
        x->out64[i] = s += x->a[i];
    p->i64 = s;
}

static void scan_add_fn(part *p)
{
    const args *x = p->user;
    int64_t add = (int64_t)x->offsets[p->tid];
    if (add)
        for (size_t i = p->begin; i < p->end; i++)
            x->out64[i] += add;
}

void base_scan_i32(const int32_t *a, size_t n, int64_t *out, int threads)
{
    part parts[MAX_THREADS];
    size_t offsets[MAX_THREADS];
    args x = {.a = a, .out64 = out, .offsets = offsets};
    par_for(n, threads, &x, scan_local_fn, parts);
    int64_t run = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++) {
        offsets[i] = (size_t)run;
        run += parts[i].i64;
    }
    par_for(n, threads, &x, scan_add_fn, parts);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void base_qsort_u32(uint32_t *keys, size_t n) { qsort(keys, n, sizeof *keys, cmp_u32); }

typedef struct pair { uint32_t k, v; } pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->k != y->k)
        return (x->k > y->k) - (x->k < y->k);
    return (x->v > y->v) - (x->v < y->v);
}

void base_qsort_pairs_u32(uint32_t *keys, uint32_t *vals, size_t n)
{
    pair *p = malloc(n * sizeof *p);
    if (!p)
        return;
    for (size_t i = 0; i < n; i++)
        p[i] = (pair){keys[i], vals[i]};
    qsort(p, n, sizeof *p, cmp_pair);
    for (size_t i = 0; i < n; i++) {
        keys[i] = p[i].k;
        vals[i] = p[i].v;
    }
    free(p);
}

typedef struct group_entry {
    int64_t sum, count;
} group_entry;

typedef struct group_count_args {
    const uint32_t *keys;
    const int32_t *vals;
    uint32_t groups;
    group_entry *partial; /* threads x groups */
} group_count_args;

static void group_count_fn(part *p)
{
    const group_count_args *x = p->user;
    group_entry *mine = x->partial + (size_t)p->tid * x->groups;
    for (size_t i = p->begin; i < p->end; i++) {
        group_entry *e = &mine[x->keys[i]];
        e->sum += x->vals[i];
        e->count++;
    }
}

size_t base_group_sum_count(const uint32_t *keys, const int32_t *vals, size_t n, uint32_t groups,
                            int64_t *sums, int64_t *counts, int threads)
{
    if (threads < 1) threads = 1;
    part parts[MAX_THREADS];
    group_count_args x = {keys, vals, groups,
                          calloc((size_t)threads * groups, sizeof(group_entry))};
    if (!x.partial)
        return 0;
    par_for(n, threads, &x, group_count_fn, parts);
    size_t occur = 0;
    for (uint32_t g = 0; g < groups; g++) {
        int64_t s = 0, c = 0;
        for (int t = 0; t < threads; t++) {
            s += x.partial[(size_t)t * groups + g].sum;
            c += x.partial[(size_t)t * groups + g].count;
        }
        sums[g] = s;
        counts[g] = c;
        occur += c != 0;
    }
    free(x.partial);
    return occur;
}

typedef struct join_args {
    const uint32_t *probe;
    const uint32_t *table_keys;
    const uint32_t *table_rows;
    size_t mask;
    uint32_t *left, *right;
    size_t *offsets;
} join_args;

#define EMPTY_ROW UINT32_MAX

static size_t slot_of(uint32_t k, size_t mask) { return (size_t)((k * 2654435761u) & mask); }

static void probe_count_fn(part *p)
{
    const join_args *x = p->user;
    int64_t c = 0;
    for (size_t i = p->begin; i < p->end; i++)
        for (size_t s = slot_of(x->probe[i], x->mask); x->table_rows[s] != EMPTY_ROW;
             s = (s + 1) & x->mask)
            c += x->table_keys[s] == x->probe[i];
    p->i64 = c;
}

static void probe_write_fn(part *p)
{
    const join_args *x = p->user;
    size_t o = x->offsets[p->tid];
    for (size_t i = p->begin; i < p->end; i++)
        for (size_t s = slot_of(x->probe[i], x->mask); x->table_rows[s] != EMPTY_ROW;
             s = (s + 1) & x->mask)
            if (x->table_keys[s] == x->probe[i]) {
                x->left[o] = x->table_rows[s];
                x->right[o++] = (uint32_t)i;
            }
}

/* The table of base_hash_join_u32 (keys and rows side by side in two arrays,
 * rows EMPTY_ROW where free), built on one thread; 0 when out of memory. */
static size_t join_table(const uint32_t *build, size_t nb, uint32_t **keys_out,
                         uint32_t **rows_out)
{
    size_t cap = 16;
    while (cap < 2 * nb)
        cap <<= 1;
    uint32_t *keys = malloc(cap * sizeof *keys), *rows = malloc(cap * sizeof *rows);
    if (!keys || !rows) {
        free(keys);
        free(rows);
        return 0;
    }
    memset(rows, 0xff, cap * sizeof *rows);
    for (size_t i = 0; i < nb; i++) {
        size_t s = slot_of(build[i], cap - 1);
        while (rows[s] != EMPTY_ROW)
            s = (s + 1) & (cap - 1);
        keys[s] = build[i];
        rows[s] = (uint32_t)i;
    }
    *keys_out = keys;
    *rows_out = rows;
    return cap;
}

size_t base_hash_join_u32(const uint32_t *build, size_t nb, const uint32_t *probe, size_t np,
                          uint32_t *left, uint32_t *right, int threads)
{
    uint32_t *keys, *rows;
    size_t cap = join_table(build, nb, &keys, &rows);
    if (!cap)
        return 0;
    part parts[MAX_THREADS];
    size_t offsets[MAX_THREADS];
    join_args x = {probe, keys, rows, cap - 1, left, right, offsets};
    par_for(np, threads, &x, probe_count_fn, parts);
    size_t total = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++) {
        offsets[i] = total;
        total += (size_t)parts[i].i64;
    }
    par_for(np, threads, &x, probe_write_fn, parts);
    free(keys);
    free(rows);
    return total;
}

size_t base_hash_join_count_u32(const uint32_t *build, size_t nb, const uint32_t *probe,
                                size_t np, int threads)
{
    uint32_t *keys, *rows;
    size_t cap = join_table(build, nb, &keys, &rows);
    if (!cap)
        return 0;
    part parts[MAX_THREADS];
    join_args x = {probe, keys, rows, cap - 1, NULL, NULL, NULL};
    par_for(np, threads, &x, probe_count_fn, parts);
    size_t total = 0;
    for (int i = 0; i < (threads < 1 ? 1 : threads); i++)
        total += (size_t)parts[i].i64;
    free(keys);
    free(rows);
    return total;
}
