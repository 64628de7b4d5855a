/* partition.c - coproc_mpi_partition (include/coproc/mpi.h): rows moved
 * between ranks by round-robin, key hash, value range or blocks. One counting
 * pass finds each row's rank; then, a column at a time, one scatter pass packs
 * the rows for the other ranks (those staying here go straight to the output)
 * and the column's exchange (exchange.c: non-blocking messages of at most m->round
 * bytes) is posted before the next column is packed.
 * On the public API only, like the rest of coproc_mpi. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define set_msg coproc_mpi_set_msg_
#define agree coproc_mpi_agree_

#define MAX_COLUMNS 256
#define CHUNK 65536 /* rows packed between two looks at the exchange in flight */
#define SIGN 0x8000000000000000ull

/* A row's place in RANGE's total order: its value as an unsigned key in the value's order,
 * then its global row number. */
typedef struct rkey {
    uint64_t key, row;
} rkey;

static int rkey_lt(rkey a, rkey b)
{
    return a.key < b.key || (a.key == b.key && a.row < b.row);
}

static int rkey_cmp(const void *pa, const void *pb)
{
    const rkey *a = pa, *b = pb;
    return rkey_lt(*b, *a) - rkey_lt(*a, *b);
}

/* Value i of an integer column as the ordered key: signed values with the sign bit flipped
 * (so INT64_MIN is 0), unsigned ones as they are. */
static uint64_t ordered_key(const void *p, coproc_type t, uint64_t i)
{
    switch (t) {
    case COPROC_INT32:
        return (uint64_t)(int64_t)((const int32_t *)p)[i] ^ SIGN;
    case COPROC_UINT32:
        return ((const uint32_t *)p)[i];
    case COPROC_UINT64:
        return ((const uint64_t *)p)[i];
    default:
        return (uint64_t)((const int64_t *)p)[i] ^ SIGN;
    }
}

/* The first global row of block r of T rows over P ranks (coproc_mpi_block). */
static uint64_t block_first(uint64_t r, uint64_t T, uint64_t P)
{
    return (uint64_t)((unsigned __int128)T * r / P);
}

/* h scaled onto 0..P-1 (a multiply, not a division). */
static uint32_t scale(uint64_t h, uint32_t P)
{
    return (uint32_t)(((unsigned __int128)h * P) >> 64);
}

/* ---- the sample and the splitters (RANGE) */

/* Samples a rank takes: 1024, fewer past 256 ranks so that every rank's copy of them all
 * stays at 6 MiB (24 bytes a sample). */
static uint64_t sample_cap(int P)
{
    uint64_t s = 262144 / (uint64_t)P;
    return s > 1024 ? 1024 : s < 16 ? 16 : s;
}

/* A sampled row and the rows it stands for (its rank's rows over its rank's samples). */
typedef struct sample {
    rkey at;
    double weight;
} sample;

static int sample_cmp(const void *pa, const void *pb)
{
    return rkey_cmp(&((const sample *)pa)->at, &((const sample *)pb)->at);
}

/* This rank's sample: one row of each of k equal strata of its n rows, at a place a hash picks
 * (so that a period in the data does not line up with the strata); rows numbered locally. */
static uint64_t take_sample(const void *p, coproc_type t, uint64_t n, uint64_t cap, sample *out)
{
    uint64_t k = n < cap ? n : cap;
    for (uint64_t j = 0; j < k; j++) {
        uint64_t lo = block_first(j, n, k), hi = block_first(j + 1, n, k);
        uint64_t i = lo + coproc_mpi_mix64_(j + 0x9E3779B97F4A7C15ull) % (hi - lo);
        out[j] = (sample){{ordered_key(p, t, i), i}, (double)n / (double)k};
    }
    return k;
}

/* Every rank's sample gathered, sorted and cut at the weighted quantiles: splitter j is the
 * first sample whose rows before it (each sample weighing the rows it stands for) reach the
 * start of block j; a splitter no sample reaches lies past every row. Collective: the same
 * splitters on every rank (the same samples, summed in the same order). `all` holds P * cap
 * samples. */
static void splitters(coproc_mpi *m, sample *mine, uint64_t k, uint64_t offset, sample *all,
                      int *counts, int *displs, rkey *split)
{
    int P = m->size, kb = (int)(k * sizeof *mine);
    for (uint64_t j = 0; j < k; j++)
        mine[j].at.row += offset;
    MPI_Allgather(&kb, 1, MPI_INT, counts, 1, MPI_INT, m->comm);
    int at = 0;
    for (int r = 0; r < P; r++)
        displs[r] = at, at += counts[r];
    MPI_Allgatherv(mine, kb, MPI_BYTE, all, counts, displs, MPI_BYTE, m->comm);
    uint64_t ns = (uint64_t)at / sizeof *all;
    double total = 0;
    for (uint64_t i = 0; i < ns; i++)
        total += all[i].weight;
    qsort(all, ns, sizeof *all, sample_cmp);
    uint64_t rows = (uint64_t)(total + 0.5); /* exact: the weights of a rank add to its rows */
    double before = 0;
    int j = 1;
    for (uint64_t i = 0; i < ns && j < P; i++) {
        while (j < P && before >= (double)block_first((uint64_t)j, rows, (uint64_t)P))
            split[j++ - 1] = all[i].at;
        before += all[i].weight;
    }
    for (; j < P; j++)
        split[j - 1] = (rkey){UINT64_MAX, UINT64_MAX}; /* past every row */
}

/* ---- each row's rank */

#define HASH_PASS(T)                                                                               \
    for (uint64_t i = 0; i < n; i++) {                                                             \
        uint32_t d = scale(coproc_mpi_mix64_((uint64_t)(int64_t)((const T *)p)[i]), P);            \
        dest[i] = d;                                                                               \
        cnt[d]++;                                                                                  \
    }

/* HASH: the rank of each row by its key (equal values of every integer type alike). */
static void hash_pass(const void *p, coproc_type t, uint64_t n, uint32_t P, uint32_t *dest,
                      long long *cnt)
{
    switch (t) {
    case COPROC_INT32:
        HASH_PASS(int32_t);
        break;
    case COPROC_UINT32:
        HASH_PASS(uint32_t);
        break;
    default: /* int64, uint64: the same 64 bits */
        HASH_PASS(uint64_t);
        break;
    }
}

/* KEY_BLOCKS: the rank of each row by where its key lies in [lo, hi] cut into P equal blocks
 * (keys below lo to rank 0, above hi to rank P - 1), in the order of ordered_key. */
static void blocks_pass(const void *p, coproc_type t, uint64_t n, uint32_t P, uint64_t lo,
                        uint64_t hi, uint32_t *dest, long long *cnt)
{
    unsigned __int128 width = (unsigned __int128)(hi - lo) + 1; /* hi >= lo */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = ordered_key(p, t, i);
        uint32_t d = k <= lo  ? 0
                     : k > hi ? P - 1
                              : (uint32_t)((unsigned __int128)(k - lo) * P / width);
        dest[i] = d;
        cnt[d]++;
    }
}

/* RANGE: the rank of each row, the number of splitters at or below it. */
static void range_pass(const void *p, coproc_type t, uint64_t n, uint64_t offset, uint32_t P,
                       const rkey *split, uint32_t *dest, long long *cnt)
{
    for (uint64_t i = 0; i < n; i++) {
        rkey x = {ordered_key(p, t, i), offset + i};
        uint32_t lo = 0, hi = P - 1; /* the answer lies in [lo, hi] */
        while (lo < hi) {
            uint32_t mid = (lo + hi + 1) / 2; /* splitter mid - 1 starts rank mid */
            if (rkey_lt(x, split[mid - 1]))
                hi = mid - 1;
            else
                lo = mid;
        }
        dest[i] = lo;
        cnt[lo]++;
    }
}

/* ---- packing one column */

#define SCATTER(T)                                                                                 \
    do {                                                                                           \
        const T *s = src;                                                                          \
        T **c = (T **)cur;                                                                         \
        for (uint64_t i = lo; i < hi; i++)                                                         \
            *c[dest[i]]++ = s[i];                                                                  \
    } while (0)

/* Rows [lo, hi) of src to cur[their rank], each cursor advanced. */
static void scatter(const void *src, size_t w, const uint32_t *dest, uint64_t lo, uint64_t hi,
                    void **cur)
{
    if (w == 4)
        SCATTER(uint32_t);
    else
        SCATTER(uint64_t);
}

void coproc_mpi_table_free(coproc_mpi_table *t)
{
    if (!t)
        return;
    coproc_table_free(t->table);
    for (int i = 0; i < t->ncolumns_; i++)
        coproc_column_free(t->columns_[i]);
    free(t->columns_);
    memset(t, 0, sizeof *t);
}

/* The buffers of one call, freed together. */
typedef struct work {
    uint32_t *dest;
    long long *sendc, *recvc;
    uint64_t *sc[2], *sd[2], *rc[2], *rd[2]; /* bytes of the two exchanges in flight */
    coproc_mpi_xchg x[2];
    sample *sample, *samples;
    rkey *split;
    int *scount, *sdispl;
    void **cur;
} work;

static void work_free(work *w)
{
    free(w->dest), free(w->sendc), free(w->recvc);
    for (int b = 0; b < 2; b++) {
        free(w->sc[b]), free(w->sd[b]), free(w->rc[b]), free(w->rd[b]);
        coproc_mpi_xchg_free_(&w->x[b]);
    }
    free(w->sample), free(w->samples), free(w->split);
    free(w->scount), free(w->sdispl), free(w->cur);
}

/* The partitioning of coproc_mpi_colocate's key-range shuffle (not in the public enum). */
#define KEY_BLOCKS ((coproc_mpi_partitioning)100)

static coproc_status partition(coproc_mpi *m, const coproc_table *in, coproc_mpi_partitioning how,
                               const char *column, uint64_t lo, uint64_t hi, coproc_mpi_table *out);

coproc_status coproc_mpi_partition(coproc_mpi *m, const coproc_table *in,
                                   coproc_mpi_partitioning how, const char *column,
                                   coproc_mpi_table *out)
{
    /* KEY_BLOCKS is internal: from a caller it is as bad as any other unknown value */
    return partition(m, in, how == KEY_BLOCKS ? (coproc_mpi_partitioning)-1 : how, column, 0, 0,
                     out);
}

coproc_status coproc_mpi_partition_blocks_(coproc_mpi *m, const coproc_table *in,
                                           const char *column, uint64_t lo, uint64_t hi,
                                           coproc_mpi_table *out)
{
    return partition(m, in, KEY_BLOCKS, column, lo, hi >= lo ? hi : lo, out);
}

static coproc_status partition(coproc_mpi *m, const coproc_table *in, coproc_mpi_partitioning how,
                               const char *column, uint64_t lo, uint64_t hi, coproc_mpi_table *out)
{
    if (!m)
        return COPROC_NULL_POINTER;
    coproc_mpi_table scratch;
    coproc_mpi_table *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    double t0 = MPI_Wtime(), in_mpi = 0, tm;
    char msg[MSG_LEN] = "";
    coproc_status s = COPROC_OK;
    int nc = in ? coproc_table_column_count(in) : 0, kc = -1;
    uint64_t n = in ? coproc_table_rows(in) : 0;
    int keyed = how == COPROC_MPI_HASH || how == COPROC_MPI_RANGE || how == KEY_BLOCKS;
    if (!out || !in) {
        s = COPROC_NULL_POINTER;
        set_msg(msg, "coproc_mpi_partition: %s is NULL", out ? "in" : "out");
    } else if (!m->rt) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_partition: the handle has no runtime (its open failed)");
    } else if (((unsigned)how > COPROC_MPI_REPLICATE && how != KEY_BLOCKS) || nc < 1 ||
               nc > MAX_COLUMNS) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_partition: partitioning %d, %d columns (1..%d)", (int)how, nc,
                MAX_COLUMNS);
    }
    if (s != COPROC_OK)
        nc = 0, n = 0;
    /* ---- the columns' rows on the host, and the shape */
    const void *data[MAX_COLUMNS];
    coproc_mpi_host_view view[MAX_COLUMNS];
    int nview = 0;
    coproc_type type[MAX_COLUMNS];
    uint64_t shape = 1469598103934665603ull ^ (uint64_t)how;
    for (int c = 0; c < nc; c++) {
        const coproc_column *col = coproc_table_column_at(in, c);
        const char *name = coproc_table_column_name(in, c);
        type[c] = coproc_column_type(col);
        /* a device column: mapped in place (host-unified) or staged in a pinned host buffer
         * kept in m */
        view[c].p = NULL, view[c].mapped = 0;
        if (s == COPROC_OK && n) {
            s = coproc_mpi_host_view_(m, col, c, &view[c], msg);
            nview = c + 1;
        }
        data[c] = view[c].p;
        shape = (shape ^ (uint64_t)type[c]) * 1099511628211ull;
        for (const char *p = name; *p; p++)
            shape = (shape ^ (uint8_t)*p) * 1099511628211ull;
        if (keyed && column && strcmp(name, column) == 0)
            kc = c;
    }
    if (s == COPROC_OK && keyed &&
        (kc < 0 || type[kc] == COPROC_FLOAT32 || type[kc] == COPROC_FLOAT64)) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_partition: no integer column %s to %s", column ? column : "(NULL)",
                how == COPROC_MPI_RANGE ? "range over" : "hash");
    }
    /* ---- every buffer but the output, before the first agreement */
    int P = m->size;
    /* rows that keep their order: BLOCK, REPLICATE, and any partitioning over
     * one rank; REPLICATE sends all of them to every rank */
    int replicate = how == COPROC_MPI_REPLICATE;
    int inorder = how == COPROC_MPI_BLOCK || replicate || P == 1;
    uint64_t cap = sample_cap(P), k = 0;
    work w;
    memset(&w, 0, sizeof w);
    w.sendc = calloc(P, sizeof *w.sendc), w.recvc = calloc(P, sizeof *w.recvc);
    w.cur = calloc(P, sizeof *w.cur);
    int ok = w.sendc && w.recvc && w.cur;
    for (int b = 0; b < 2; b++) {
        w.sc[b] = calloc(P, sizeof(uint64_t)), w.sd[b] = calloc(P, sizeof(uint64_t));
        w.rc[b] = calloc(P, sizeof(uint64_t)), w.rd[b] = calloc(P, sizeof(uint64_t));
        ok = ok && w.sc[b] && w.sd[b] && w.rc[b] && w.rd[b];
    }
    if (s == COPROC_OK && !inorder) {
        w.dest = malloc((n ? n : 1) * sizeof *w.dest);
        ok = ok && w.dest;
    }
    if (s == COPROC_OK && how == COPROC_MPI_RANGE && !inorder) {
        w.sample = malloc(cap * sizeof *w.sample);
        w.samples = malloc((size_t)P * cap * sizeof *w.samples);
        w.split = malloc((size_t)P * sizeof *w.split);
        w.scount = malloc(P * sizeof *w.scount), w.sdispl = malloc(P * sizeof *w.sdispl);
        ok = ok && w.sample && w.samples && w.split && w.scount && w.sdispl;
        if (ok)
            k = take_sample(data[kc], type[kc], n, cap, w.sample);
    }
    if (s == COPROC_OK && !ok) {
        s = COPROC_HOST_OUT_OF_MEMORY;
        set_msg(msg, "out of host memory partitioning %llu rows", (unsigned long long)n);
    }
    tm = MPI_Wtime();
    coproc_status all = agree(m, s, msg, s == COPROC_OK ? (int64_t)(shape >> 2) : 0);
    uint64_t offset = 0, total = 0, mine = all == COPROC_OK ? n : 0;
    if (all == COPROC_OK) {
        MPI_Exscan(&mine, &offset, 1, MPI_UINT64_T, MPI_SUM, m->comm);
        if (m->rank == 0)
            offset = 0;
        MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, m->comm);
        if (how == COPROC_MPI_RANGE && !inorder)
            splitters(m, w.sample, k, offset, w.samples, w.scount, w.sdispl, w.split);
    }
    in_mpi += MPI_Wtime() - tm;
    /* ---- where each row goes: a counting pass */
    if (all == COPROC_OK) {
        if (replicate) {
            for (int d = 0; d < P; d++)
                w.sendc[d] = (long long)n;
        } else if (inorder) {
            for (int d = 0; d < P; d++) { /* [offset, offset + n) meets block d */
                uint64_t lo = block_first(d, total, P), hi = block_first(d + 1, total, P);
                lo = lo > offset ? lo : offset, hi = hi < offset + n ? hi : offset + n;
                w.sendc[d] = hi > lo ? (long long)(hi - lo) : 0;
            }
        } else if (how == COPROC_MPI_ROUND_ROBIN) {
            uint32_t d = (uint32_t)(offset % (uint64_t)P);
            for (uint64_t i = 0; i < n; i++) {
                w.dest[i] = d;
                w.sendc[d]++;
                d = d + 1 == (uint32_t)P ? 0 : d + 1;
            }
        } else if (how == COPROC_MPI_HASH) {
            hash_pass(data[kc], type[kc], n, (uint32_t)P, w.dest, w.sendc);
        } else if (how == KEY_BLOCKS) {
            blocks_pass(data[kc], type[kc], n, (uint32_t)P, lo, hi, w.dest, w.sendc);
        } else {
            range_pass(data[kc], type[kc], n, offset, (uint32_t)P, w.split, w.dest, w.sendc);
        }
        tm = MPI_Wtime();
        MPI_Alltoall(w.sendc, 1, MPI_LONG_LONG, w.recvc, 1, MPI_LONG_LONG, m->comm);
        in_mpi += MPI_Wtime() - tm;
    }
    /* ---- the output columns and the send buffers, before any row moves */
    uint64_t nout = 0;
    for (int r = 0; all == COPROC_OK && r < P; r++)
        nout += (uint64_t)w.recvc[r];
    s = COPROC_OK;
    msg[0] = '\0';
    void *buf[2] = {NULL, NULL};
    if (all == COPROC_OK) {
        /* room for the messages of two columns in flight, at the widest (8 bytes) */
        for (int r = 0; r < P; r++) {
            int here = r == m->rank;
            w.sc[0][r] = here ? 0 : (uint64_t)w.sendc[r] * 8;
            w.rc[0][r] = here ? 0 : (uint64_t)w.recvc[r] * 8;
        }
        res->columns_ = calloc(nc, sizeof *res->columns_);
        if (coproc_mpi_xchg_reserve_(m, w.sc[0], w.rc[0], 1, &w.x[0]) != 0 ||
            coproc_mpi_xchg_reserve_(m, w.sc[0], w.rc[0], 1, &w.x[1]) != 0 || !res->columns_) {
            s = COPROC_HOST_OUT_OF_MEMORY;
            set_msg(msg, "out of host memory");
        }
        if (s == COPROC_OK)
            s = coproc_table_create(m->rt, &res->table);
        for (int c = 0; c < nc && s == COPROC_OK; c++) {
            s = coproc_column_host_alloc(m->rt, type[c], (size_t)nout, &res->columns_[c]);
            if (s == COPROC_OK)
                res->ncolumns_ = c + 1,
                s = coproc_table_add(res->table, coproc_table_column_name(in, c), res->columns_[c]);
        }
        if (s != COPROC_OK && !msg[0])
            set_msg(msg, "the partitioned table: %s", coproc_errmsg(m->rt));
        /* the rows leaving this rank, at the widest */
        size_t away = (size_t)(n - (uint64_t)w.sendc[m->rank]) * 8;
        for (int b = 0; s == COPROC_OK && !inorder && b < (nc > 1 ? 2 : 1); b++) {
            buf[b] = coproc_mpi_scratch_(m, b, away ? away : 8);
            if (!buf[b]) {
                s = COPROC_HOST_OUT_OF_MEMORY;
                set_msg(msg, "out of host memory for %llu rows of one column",
                        (unsigned long long)n);
            }
        }
        tm = MPI_Wtime();
        all = agree(m, s, msg, 0);
        in_mpi += MPI_Wtime() - tm;
    }
    /* ---- the rows, a column at a time: pack c while c - 1 is in flight */
    for (int c = 0; all == COPROC_OK && c < nc; c++) {
        int b = c & 1;
        size_t wd = coproc_type_size(type[c]);
        char *outp = coproc_column_host_data(res->columns_[c]);
        if (w.x[b].n) { /* column c - 2 is done with buffer b */
            tm = MPI_Wtime();
            coproc_mpi_xchg_wait_(&w.x[b]);
            in_mpi += MPI_Wtime() - tm;
        }
        uint64_t so = 0, ro = 0;
        for (int r = 0; r < P; r++) {
            int here = r == m->rank; /* stays: no message */
            uint64_t sb = (uint64_t)w.sendc[r] * wd, rb = (uint64_t)w.recvc[r] * wd;
            w.sc[b][r] = here ? 0 : sb, w.sd[b][r] = so;
            w.rc[b][r] = here ? 0 : rb, w.rd[b][r] = ro;
            if (here)
                w.cur[r] = outp + ro;
            else
                w.cur[r] = (char *)buf[b] + so;
            so += !replicate && (inorder || !here) ? sb : 0;
            ro += rb;
        }
        const char *sendp;
        if (inorder) { /* the rows in order: sent from where they are */
            sendp = data[c];
            if (w.sendc[m->rank]) /* no rows: data may be NULL */
                memcpy(w.cur[m->rank], (const char *)data[c] + w.sd[b][m->rank],
                       (size_t)w.sendc[m->rank] * wd);
        } else {
            sendp = buf[b];
            for (uint64_t lo = 0; lo < n; lo += CHUNK) {
                uint64_t hi = n - lo > CHUNK ? lo + CHUNK : n;
                scatter(data[c], wd, w.dest, lo, hi, w.cur);
                coproc_mpi_xchg_test_(&w.x[!b]); /* let column c - 1's exchange move on */
            }
        }
        tm = MPI_Wtime();
        coproc_mpi_xchg_post_(m, sendp, w.sc[b], w.sd[b], outp, w.rc[b], w.rd[b], &w.x[b]);
        if (!m->overlap)
            coproc_mpi_xchg_wait_(&w.x[b]);
        in_mpi += MPI_Wtime() - tm;
    }
    tm = MPI_Wtime();
    coproc_mpi_xchg_wait_(&w.x[0]);
    coproc_mpi_xchg_wait_(&w.x[1]);
    in_mpi += MPI_Wtime() - tm;
    for (int c = 0; c < nview; c++)
        coproc_mpi_host_view_end_(&view[c]);
    work_free(&w);
    if (all != COPROC_OK)
        coproc_mpi_table_free(res);
    res->seconds = MPI_Wtime() - t0;
    res->exchange_s = in_mpi;
    res->pack_s = res->seconds - in_mpi;
    return all;
}
