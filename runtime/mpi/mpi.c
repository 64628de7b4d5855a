/* mpi.c - coproc_mpi (include/coproc/mpi.h): a runtime per MPI rank over its
 * share of the node's devices, and distributed aggregation - a group-by run
 * by every rank over its rows with coproc_query_run, the partial groups
 * combined across ranks (MPI_Allreduce without keys, gathered to rank 0 and
 * merged by key with them), ordered and cut on rank 0.
 *
 * On the public API only (coproc.h, coproc/query.h), like a program: the
 * library is opt-in and links whichever coproc its user links. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mpi_internal.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's extensions: MPIX_Query_cuda_support */
#endif
#endif

#define MAX_KEYS 8
#define MAX_AGGS 16
#define MAX_DEVICES 64

#define set_msg coproc_mpi_set_msg_
#define agree coproc_mpi_agree_
#define mix64 coproc_mpi_mix64_

void coproc_mpi_set_msg_(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, MSG_LEN, fmt, ap);
    va_end(ap);
}

/*
 * Every rank says how it stands: s and why (msg), and a hash of the shape of
 * what it is about to exchange (0: none). Returns COPROC_OK when every rank is
 * fine and every shape agrees; else the status of the lowest failing rank on
 * every rank, its message in m->errmsg ("rank R: ..."). Two collectives when
 * one failed, one otherwise.
 */
coproc_status coproc_mpi_agree_(coproc_mpi *m, coproc_status s, const char *msg, int64_t shape)
{
    int64_t mine[3] = {s != COPROC_OK ? m->rank : m->size, shape, -shape}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MIN, m->comm);
    if (all[0] == m->size) {
        if (all[1] != -all[2]) {
            set_msg(m->errmsg, "the ranks disagree on the query's shape (keys, aggregates or "
                               "their types differ between ranks)");
            return COPROC_INVALID_ARGUMENT;
        }
        return COPROC_OK;
    }
    int first = (int)all[0];
    struct {
        int status;
        char msg[MSG_LEN - 32];
    } b;
    memset(&b, 0, sizeof b);
    if (m->rank == first) {
        b.status = (int)s;
        snprintf(b.msg, sizeof b.msg, "%s", msg && *msg ? msg : coproc_status_message(s));
    }
    MPI_Bcast(&b, (int)sizeof b, MPI_BYTE, first, m->comm);
    set_msg(m->errmsg, "rank %d: %s", first, b.msg);
    return (coproc_status)b.status;
}

static double wtime(void)
{
    return MPI_Wtime();
}

/* User and system time of the whole process (every thread: the drivers' too). */
static double cpu_seconds(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static void quiet_log(void *u, coproc_log_level l, const char *msg)
{
    (void)u, (void)l, (void)msg;
}

/* opts copied onto defaults (an older, smaller struct keeps the defaults of the rest). */
static void copy_options(const coproc_options *opts, coproc_options *o)
{
    coproc_options_init(o);
    if (opts && opts->struct_size >= sizeof(size_t)) {
        size_t n = opts->struct_size < sizeof *o ? opts->struct_size : sizeof *o;
        memcpy(o, opts, n);
        o->struct_size = sizeof *o;
    }
}

/* The devices of the node on local rank 0 (a probe runtime over the selection spec, no
 * calibration), sent to every local rank: *n discovered indices into idx; a status and message when
 * the probe failed. */
static coproc_status node_devices(coproc_mpi *m, const coproc_options *opts, const char *spec,
                                  int *n, int *idx, char *msg)
{
    struct {
        int status, n, idx[MAX_DEVICES];
        char msg[MSG_LEN - 32];
    } b;
    memset(&b, 0, sizeof b);
    if (m->lrank == 0) {
        coproc_options o;
        copy_options(opts, &o);
        o.devices = spec;
        o.calibration = COPROC_CALIBRATION_OFF;
        o.over_env |= COPROC_OPTION_DEVICES | COPROC_OPTION_CALIBRATION;
        o.log = quiet_log;
        coproc_runtime *rt = NULL;
        coproc_status s = coproc_open(&o, &rt);
        b.status = (int)s;
        if (s != COPROC_OK) {
            snprintf(b.msg, sizeof b.msg, "finding the node's devices: %s",
                     rt ? coproc_errmsg(rt) : coproc_status_message(s));
        } else {
            b.n = coproc_device_count(rt);
            if (b.n > MAX_DEVICES)
                b.n = MAX_DEVICES;
            for (int i = 0; i < b.n; i++) {
                coproc_device_info info;
                coproc_device_info_get(rt, i, &info);
                b.idx[i] = info.discovered_index;
            }
        }
        coproc_close(rt);
    }
    MPI_Bcast(&b, (int)sizeof b, MPI_BYTE, 0, m->local);
    *n = b.n;
    memcpy(idx, b.idx, sizeof b.idx);
    if (b.status != COPROC_OK)
        snprintf(msg, MSG_LEN, "%s", b.msg);
    return (coproc_status)b.status;
}

/* Whether MPI says it takes device (CUDA) memory in its calls: 1 yes, 0 no, -1 it cannot say
 * (no Open MPI extension). Open MPI's build-time answer first, then its run-time one. */
static int gpu_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() ? 1 : 0;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
    return 0;
#else
    return -1;
#endif
}

coproc_status coproc_mpi_open(MPI_Comm comm, const coproc_options *opts, coproc_mpi **out)
{
    if (out)
        *out = NULL;
    coproc_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return COPROC_HOST_OUT_OF_MEMORY; /* nothing can be agreed on without memory */
    MPI_Comm_dup(comm, &m->comm);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &m->local);
    MPI_Comm_rank(m->local, &m->lrank);
    MPI_Comm_size(m->local, &m->lsize);
    m->gpu_aware = gpu_aware();
    m->round = COPROC_MPI_ROUND;
    const char *ov = getenv("COPROC_MPI_OVERLAP");
    m->overlap = !(ov && strcmp(ov, "0") == 0);

    coproc_status s = COPROC_OK;
    char msg[MSG_LEN] = "";
    if (!out) {
        s = COPROC_NULL_POINTER;
        set_msg(msg, "coproc_mpi_open: out is NULL");
    }
    /* The node's selection: as coproc_open would take it (the variable over the option unless
     * the option outranks it); each rank's share then outranks the variable. */
    coproc_options given;
    copy_options(opts, &given);
    const char *env = getenv("COPROC_DEVICES"), *share = getenv("COPROC_MPI_SHARE");
    const char *spec =
        env && *env && !(given.over_env & COPROC_OPTION_DEVICES) ? env : given.devices;
    int dealt = m->lsize > 1 && !(share && strcmp(share, "all") == 0) &&
                !(spec && strncmp(spec, "sim:", 4) == 0);
    char mine[MSG_LEN] = "";
    if (dealt) {
        /* Every local rank takes part in the broadcast, even one that failed already. */
        int n = 0, idx[MAX_DEVICES];
        coproc_status ps = node_devices(m, opts, spec, &n, idx, msg);
        if (s == COPROC_OK)
            s = ps;
        if (s == COPROC_OK && n == 0) {
            s = COPROC_NO_DEVICE;
            set_msg(msg, "no device on this node");
        }
        int len = 0;
        if (n >= m->lsize) {
            for (int d = m->lrank; d < n; d += m->lsize)
                len += snprintf(mine + len, sizeof mine - len, "%s%d", len ? "," : "", idx[d]);
        } else if (n > 0) {
            snprintf(mine, sizeof mine, "%d", idx[m->lrank % n]);
        }
    }
    if (s == COPROC_OK) {
        coproc_options o;
        copy_options(opts, &o);
        if (dealt) {
            o.devices = mine;
            o.over_env |= COPROC_OPTION_DEVICES; /* the share, not the node's COPROC_DEVICES */
        }
        s = coproc_open(&o, &m->rt);
        if (s != COPROC_OK)
            set_msg(msg, "coproc_open%s%s: %s", dealt ? " over devices " : "", dealt ? mine : "",
                    m->rt ? coproc_errmsg(m->rt) : coproc_status_message(s));
    }
    coproc_status all = agree(m, s, msg, 0);
    if (all != COPROC_OK) {
        coproc_close(m->rt);
        m->rt = NULL;
        if (!out) {
            coproc_mpi_close(m);
            return all;
        }
    }
    *out = m;
    return all;
}

void coproc_mpi_close(coproc_mpi *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nstage; i++)
        coproc_column_free(m->stage[i]);
    free(m->stage);
    free(m->stage_cap);
    coproc_close(m->rt);
    free(m->scratch[0]);
    free(m->scratch[1]);
    if (m->local != MPI_COMM_NULL)
        MPI_Comm_free(&m->local);
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
    free(m);
}

coproc_runtime *coproc_mpi_runtime(const coproc_mpi *m)
{
    return m ? m->rt : NULL;
}

MPI_Comm coproc_mpi_comm(const coproc_mpi *m)
{
    return m ? m->comm : MPI_COMM_NULL;
}

int coproc_mpi_rank(const coproc_mpi *m)
{
    return m ? m->rank : -1;
}

int coproc_mpi_size(const coproc_mpi *m)
{
    return m ? m->size : 0;
}

int coproc_mpi_local_rank(const coproc_mpi *m)
{
    return m ? m->lrank : -1;
}

int coproc_mpi_local_size(const coproc_mpi *m)
{
    return m ? m->lsize : 0;
}

int coproc_mpi_gpu_aware(const coproc_mpi *m)
{
    return m ? m->gpu_aware : -1;
}

void *coproc_mpi_scratch_(coproc_mpi *m, int i, size_t bytes)
{
    if (bytes <= m->scratch_cap[i])
        return m->scratch[i];
    void *p = realloc(m->scratch[i], bytes); /* the old contents need not survive */
    if (!p)
        return NULL;
    m->scratch[i] = p;
    m->scratch_cap[i] = bytes;
    return p;
}

void *coproc_mpi_stage_(coproc_mpi *m, int i, size_t bytes)
{
    if (i >= m->nstage) {
        int n = i + 1;
        coproc_column **st = realloc(m->stage, n * sizeof *st);
        if (st)
            m->stage = st;
        size_t *cap = st ? realloc(m->stage_cap, n * sizeof *cap) : NULL;
        if (!cap)
            return NULL;
        m->stage_cap = cap;
        for (int k = m->nstage; k < n; k++)
            m->stage[k] = NULL, m->stage_cap[k] = 0;
        m->nstage = n;
    }
    if (bytes > m->stage_cap[i] || !m->stage[i]) {
        coproc_column_free(m->stage[i]);
        m->stage[i] = NULL, m->stage_cap[i] = 0;
        size_t words = (bytes + 7) / 8;
        if (coproc_column_host_alloc(m->rt, COPROC_UINT64, words ? words : 1, &m->stage[i]) !=
            COPROC_OK)
            return NULL;
        m->stage_cap[i] = (words ? words : 1) * 8;
    }
    return coproc_column_host_data(m->stage[i]);
}

const char *coproc_mpi_errmsg(const coproc_mpi *m)
{
    return m ? m->errmsg : "coproc_mpi: no handle";
}

void coproc_mpi_block(const coproc_mpi *m, uint64_t n, uint64_t *first, uint64_t *count)
{
    uint64_t r = m ? (uint64_t)m->rank : 0, p = m && m->size > 0 ? (uint64_t)m->size : 1;
    /* r * n / p without overflow for any n < 2^64 and p < 2^31 */
    uint64_t lo = n / p * r + n % p * r / p, hi = n / p * (r + 1) + n % p * (r + 1) / p;
    if (first)
        *first = lo;
    if (count)
        *count = hi - lo;
}

/* ---------------------------------------------------------------- aggregation */

/* How a slot (8 bytes of a partial row) holds its value. */
enum { CLS_INT, CLS_UINT, CLS_FLOAT };
/* How slots combine. */
enum { OP_KEY, OP_SUM, OP_MIN, OP_MAX };

typedef union slot {
    int64_t i;
    uint64_t u;
    double f;
} slot;

typedef struct layout {
    int nkeys, naggs, width; /* width: slots a partial row; slot nkeys is the row count */
    int cls[MAX_KEYS + 1 + 2 * MAX_AGGS], op[MAX_KEYS + 1 + 2 * MAX_AGGS];
    int agg_slot[MAX_AGGS]; /* the first slot of aggregate i (AVG: sum, then count) */
    coproc_type type[MAX_KEYS + 1 + 2 * MAX_AGGS]; /* this rank's partial column types */
} layout;

static int type_class(coproc_type t)
{
    return t == COPROC_FLOAT32 || t == COPROC_FLOAT64 ? CLS_FLOAT
           : t == COPROC_UINT64                       ? CLS_UINT
                                                      : CLS_INT;
}

static slot read_value(const coproc_column *c, size_t r)
{
    const void *p = coproc_column_host_data(c);
    slot v;
    switch (coproc_column_type(c)) {
    case COPROC_INT32:
        v.i = ((const int32_t *)p)[r];
        break;
    case COPROC_INT64:
        v.i = ((const int64_t *)p)[r];
        break;
    case COPROC_UINT32:
        v.i = ((const uint32_t *)p)[r];
        break;
    case COPROC_UINT64:
        v.u = ((const uint64_t *)p)[r];
        break;
    case COPROC_FLOAT32:
        v.f = ((const float *)p)[r];
        break;
    default:
        v.f = ((const double *)p)[r];
        break;
    }
    return v;
}

static void write_value(coproc_column *c, size_t r, slot v, int cls)
{
    void *p = coproc_column_host_data(c);
    /* a value of class cls into the column's type */
    double f = cls == CLS_FLOAT ? v.f : cls == CLS_UINT ? (double)v.u : (double)v.i;
    int64_t i = cls == CLS_FLOAT ? (int64_t)v.f : v.i;
    switch (coproc_column_type(c)) {
    case COPROC_INT32:
        ((int32_t *)p)[r] = (int32_t)i;
        break;
    case COPROC_INT64:
        ((int64_t *)p)[r] = i;
        break;
    case COPROC_UINT32:
        ((uint32_t *)p)[r] = (uint32_t)i;
        break;
    case COPROC_UINT64:
        ((uint64_t *)p)[r] = (uint64_t)i;
        break;
    case COPROC_FLOAT32:
        ((float *)p)[r] = (float)f;
        break;
    default:
        ((double *)p)[r] = f;
        break;
    }
}

/* a combined into b (slot by slot); rows without input rows take no part in MIN and MAX. */
static void combine(const layout *L, slot *acc, const slot *row)
{
    int64_t n_acc = acc[L->nkeys].i, n_row = row[L->nkeys].i;
    for (int k = L->nkeys; k < L->width; k++) {
        int c = L->cls[k];
        switch (L->op[k]) {
        case OP_SUM:
            if (c == CLS_FLOAT)
                acc[k].f += row[k].f;
            else
                acc[k].u += row[k].u; /* wrapping, as the single-process sum */
            break;
        case OP_MIN:
        case OP_MAX:
            if (n_row == 0)
                break;
            if (n_acc == 0) {
                acc[k] = row[k];
                break;
            }
            {
                int lt = c == CLS_FLOAT
                             ? row[k].f < acc[k].f || (isnan(acc[k].f) && !isnan(row[k].f))
                         : c == CLS_UINT ? row[k].u < acc[k].u
                                         : row[k].i < acc[k].i;
                int gt = c == CLS_FLOAT
                             ? row[k].f > acc[k].f || (isnan(acc[k].f) && !isnan(row[k].f))
                         : c == CLS_UINT ? row[k].u > acc[k].u
                                         : row[k].i > acc[k].i;
                if (L->op[k] == OP_MIN ? lt : gt)
                    acc[k] = row[k];
            }
            break;
        default:
            break;
        }
    }
}

/* The final value of output column c (0..nkeys+naggs) of a merged row, and its class. */
static slot final_value(const layout *L, const coproc_aggregate *aggs, const slot *row, int c,
                        int *cls)
{
    if (c < L->nkeys) {
        *cls = L->cls[c];
        return row[c];
    }
    int a = c - L->nkeys, k = L->agg_slot[a];
    slot v = row[k];
    *cls = L->cls[k];
    if (aggs[a].fn == COPROC_AGG_AVG) {
        double sum = L->cls[k] == CLS_FLOAT  ? row[k].f
                     : L->cls[k] == CLS_UINT ? (double)row[k].u
                                             : (double)row[k].i;
        int64_t n = row[k + 1].i;
        v.f = n ? sum / (double)n : NAN;
        *cls = CLS_FLOAT;
    } else if ((aggs[a].fn == COPROC_AGG_MIN || aggs[a].fn == COPROC_AGG_MAX) &&
               row[L->nkeys].i == 0) {
        v.i = 0; /* as coproc_plan_group_by over no rows */
        if (*cls == CLS_FLOAT)
            v.f = 0;
    }
    return v;
}

/* ---- ordering the merged rows */

typedef struct sort_ctx {
    const layout *L;
    const coproc_aggregate *aggs;
    const slot *rows;
    int n;                         /* order columns */
    int col[MAX_KEYS + MAX_AGGS];  /* output column of each */
    int desc[MAX_KEYS + MAX_AGGS]; /* 1: descending */
} sort_ctx;

static int cmp_slot(slot a, slot b, int cls)
{
    if (cls == CLS_FLOAT) {
        int na = isnan(a.f), nb = isnan(b.f);
        if (na || nb)
            return na - nb; /* NaN after every number */
        return (a.f > b.f) - (a.f < b.f);
    }
    if (cls == CLS_UINT)
        return (a.u > b.u) - (a.u < b.u);
    return (a.i > b.i) - (a.i < b.i);
}

static int cmp_rows(const void *pa, const void *pb, void *u)
{
    const sort_ctx *x = u;
    const slot *a = x->rows + (size_t) * (const uint32_t *)pa * x->L->width;
    const slot *b = x->rows + (size_t) * (const uint32_t *)pb * x->L->width;
    for (int i = 0; i < x->n; i++) {
        int cls;
        slot va = final_value(x->L, x->aggs, a, x->col[i], &cls);
        slot vb = final_value(x->L, x->aggs, b, x->col[i], &cls);
        int c = cmp_slot(va, vb, cls);
        if (c) {
            int nan = cls == CLS_FLOAT && (isnan(va.f) || isnan(vb.f));
            return x->desc[i] && !nan ? -c : c;
        }
    }
    for (int k = 0; k < x->L->nkeys; k++) { /* ties: every key ascending */
        int c = cmp_slot(a[k], b[k], x->L->cls[k]);
        if (c)
            return c;
    }
    return 0;
}

/* ---- merging by key (rank 0) */

static uint64_t hash_keys(const slot *row, int nkeys)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < nkeys; k++) {
        h ^= row[k].u + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
    }
    return h ^ (h >> 31);
}

/* Merge n partial rows into *out (malloc'd, *groups rows). -1 when out of memory. */
static int merge_by_key(const layout *L, const slot *rows, uint64_t n, slot **out, uint64_t *groups)
{
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    int64_t *table = malloc(cap * sizeof *table);
    slot *merged = malloc((n ? n : 1) * L->width * sizeof *merged);
    if (!table || !merged) {
        free(table);
        free(merged);
        return -1;
    }
    memset(table, 0xff, cap * sizeof *table); /* -1: empty */
    uint64_t g = 0;
    for (uint64_t r = 0; r < n; r++) {
        const slot *row = rows + r * L->width;
        uint64_t h = hash_keys(row, L->nkeys) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            if (table[h] < 0) {
                table[h] = (int64_t)g;
                memcpy(merged + g * L->width, row, L->width * sizeof *row);
                g++;
                break;
            }
            slot *acc = merged + (uint64_t)table[h] * L->width;
            if (memcmp(acc, row, L->nkeys * sizeof *row) == 0) {
                combine(L, acc, row); /* the row count too (an OP_SUM slot) */
                break;
            }
        }
    }
    free(table);
    *out = merged;
    *groups = g;
    return 0;
}

/* Without keys: one Allreduce per kind of slot (sum, min, max of each class). */
static void allreduce_one(coproc_mpi *m, const layout *L, slot *row)
{
    int64_t n = row[L->nkeys].i;
    for (int op = OP_SUM; op <= OP_MAX; op++)
        for (int cls = CLS_INT; cls <= CLS_FLOAT; cls++) {
            slot buf[2 * MAX_AGGS + 1];
            int idx[2 * MAX_AGGS + 1], cnt = 0;
            for (int k = L->nkeys + 1; k < L->width; k++)
                if (L->op[k] == op && L->cls[k] == cls)
                    idx[cnt++] = k;
            if (op == OP_SUM && cls == CLS_INT)
                idx[cnt++] = L->nkeys; /* the row count */
            if (!cnt)
                continue;
            for (int i = 0; i < cnt; i++) {
                buf[i] = row[idx[i]];
                if (op != OP_SUM && n == 0) { /* no rows here: the identity */
                    if (cls == CLS_FLOAT)
                        buf[i].f = op == OP_MIN ? INFINITY : -INFINITY;
                    else if (cls == CLS_UINT)
                        buf[i].u = op == OP_MIN ? UINT64_MAX : 0;
                    else
                        buf[i].i = op == OP_MIN ? INT64_MAX : INT64_MIN;
                }
            }
            MPI_Datatype t = cls == CLS_FLOAT  ? MPI_DOUBLE
                             : cls == CLS_UINT ? MPI_UINT64_T
                                               : MPI_INT64_T;
            /* Integer sums through the unsigned type: they wrap, as one process's do. */
            if (op == OP_SUM && cls != CLS_FLOAT)
                t = MPI_UINT64_T;
            MPI_Op mop = op == OP_SUM ? MPI_SUM : op == OP_MIN ? MPI_MIN : MPI_MAX;
            MPI_Allreduce(MPI_IN_PLACE, buf, cnt, t, mop, m->comm);
            for (int i = 0; i < cnt; i++)
                row[idx[i]] = buf[i];
        }
}

static const char *const hidden_rows = "__coproc_mpi_rows";

/* The local group-by node over q->input and the layout of its partial rows (types filled
 * after the run). */
static coproc_node *local_plan(const coproc_mpi_query *q, layout *L, char names[][32], char *msg)
{
    coproc_aggregate la[2 * MAX_AGGS + 1];
    int nl = 0;
    memset(L, 0, sizeof *L);
    L->nkeys = q->nkeys;
    L->naggs = q->naggs;
    int k = q->nkeys;
    L->op[k++] = OP_SUM; /* the hidden row count */
    for (int a = 0; a < q->naggs; a++) {
        const coproc_aggregate *g = &q->aggs[a];
        L->agg_slot[a] = k;
        if (g->fn == COPROC_AGG_AVG) {
            snprintf(names[2 * a], 32, "__coproc_mpi_sum%d", a);
            snprintf(names[2 * a + 1], 32, "__coproc_mpi_cnt%d", a);
            la[nl++] = (coproc_aggregate){COPROC_AGG_SUM, g->arg, names[2 * a]};
            la[nl++] = (coproc_aggregate){COPROC_AGG_COUNT, NULL, names[2 * a + 1]};
            L->op[k++] = OP_SUM;
            L->op[k++] = OP_SUM;
        } else {
            la[nl++] = *g;
            L->op[k++] = g->fn == COPROC_AGG_MIN   ? OP_MIN
                         : g->fn == COPROC_AGG_MAX ? OP_MAX
                                                   : OP_SUM;
        }
    }
    la[nl++] = (coproc_aggregate){COPROC_AGG_COUNT, NULL, hidden_rows};
    L->width = k;
    coproc_node *g = coproc_plan_group_by(q->plan, q->input, q->nkeys, q->keys, nl, la);
    if (!g)
        set_msg(msg, "the local group-by: %s", coproc_plan_errmsg(q->plan));
    return g;
}

/* The partial columns of the local result in slot order. */
static int partial_columns(const coproc_mpi_query *q, const coproc_table *t,
                           const coproc_column **cols, char names[][32])
{
    int k = 0;
    for (int i = 0; i < q->nkeys; i++)
        cols[k++] = coproc_table_column(t, q->keys[i]);
    cols[k++] = coproc_table_column(t, hidden_rows);
    for (int a = 0; a < q->naggs; a++) {
        if (q->aggs[a].fn == COPROC_AGG_AVG) {
            cols[k++] = coproc_table_column(t, names[2 * a]);
            cols[k++] = coproc_table_column(t, names[2 * a + 1]);
        } else {
            cols[k++] = coproc_table_column(t, q->aggs[a].name);
        }
    }
    for (int i = 0; i < k; i++)
        if (!cols[i] || (coproc_column_length(cols[i]) && !coproc_column_host_data(cols[i])))
            return -1;
    return k;
}

static int64_t shape_hash(const coproc_mpi_query *q, const layout *L)
{
    uint64_t h = 1469598103934665603ull;
    int v[3 + 2 * (MAX_KEYS + 1 + 2 * MAX_AGGS)];
    int n = 0;
    v[n++] = L->nkeys, v[n++] = L->naggs, v[n++] = L->width;
    for (int k = 0; k < L->width; k++)
        v[n++] = L->cls[k], v[n++] = L->op[k];
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
    for (int a = 0; a < q->naggs; a++)
        h = (h ^ (uint64_t)q->aggs[a].fn) * 1099511628211ull;
    return (int64_t)(h >> 2); /* its negation fits */
}

static int resolve_order(const coproc_mpi_query *q, sort_ctx *x, char *msg);

static coproc_status check_query(const coproc_mpi *m, const coproc_mpi_query *q, char *msg)
{
    if (!q || !q->plan || !q->input || (q->nkeys && !q->keys) || !q->aggs ||
        (q->norder && !q->order)) {
        set_msg(msg, "coproc_mpi_aggregate: a NULL query, plan, input, keys, aggs or order");
        return COPROC_NULL_POINTER;
    }
    if (!m->rt) {
        set_msg(msg, "coproc_mpi_aggregate: the handle has no runtime (its open failed)");
        return COPROC_INVALID_ARGUMENT;
    }
    if (q->nkeys < 0 || q->nkeys > MAX_KEYS || q->naggs < 1 || q->naggs > MAX_AGGS ||
        q->norder < 0 || q->norder > q->nkeys + q->naggs) {
        set_msg(msg, "coproc_mpi_aggregate: %d keys (0..%d), %d aggregates (1..%d), %d order keys",
                q->nkeys, MAX_KEYS, q->naggs, MAX_AGGS, q->norder);
        return COPROC_INVALID_ARGUMENT;
    }
    if ((unsigned)q->exchange > COPROC_MPI_SHUFFLE) {
        set_msg(msg, "coproc_mpi_aggregate: exchange %d", (int)q->exchange);
        return COPROC_INVALID_ARGUMENT;
    }
    for (int a = 0; a < q->naggs; a++)
        if ((unsigned)q->aggs[a].fn > COPROC_AGG_AVG || !q->aggs[a].name ||
            (!q->aggs[a].arg && q->aggs[a].fn != COPROC_AGG_COUNT)) {
            set_msg(msg,
                    "coproc_mpi_aggregate: aggregate %d has no name, a bad function or no "
                    "argument",
                    a);
            return COPROC_INVALID_ARGUMENT;
        }
    sort_ctx x; /* the order keys name keys or aggregates: checked on every rank */
    if (resolve_order(q, &x, msg) != 0)
        return COPROC_INVALID_ARGUMENT;
    return COPROC_OK;
}

/* The order keys as output columns; -1 for a name that is none. */
static int resolve_order(const coproc_mpi_query *q, sort_ctx *x, char *msg)
{
    x->n = q->norder;
    for (int i = 0; i < q->norder; i++) {
        const char *name = q->order[i].column;
        x->col[i] = -1;
        x->desc[i] = q->order[i].descending != 0;
        for (int k = 0; name && k < q->nkeys && x->col[i] < 0; k++)
            if (strcmp(name, q->keys[k]) == 0)
                x->col[i] = k;
        for (int a = 0; name && a < q->naggs && x->col[i] < 0; a++)
            if (strcmp(name, q->aggs[a].name) == 0)
                x->col[i] = q->nkeys + a;
        if (x->col[i] < 0) {
            set_msg(msg, "order-by: no key or aggregate named %s", name ? name : "(NULL)");
            return -1;
        }
    }
    return 0;
}

/* Rank 0: the merged rows ordered, cut and made a table in out. */
static coproc_status build_table(coproc_mpi *m, const coproc_mpi_query *q, const layout *L,
                                 const slot *rows, uint64_t groups, coproc_mpi_result *out,
                                 char *msg)
{
    sort_ctx x = {.L = L, .aggs = q->aggs, .rows = rows};
    if (resolve_order(q, &x, msg) != 0)
        return COPROC_INVALID_ARGUMENT;
    if (groups > UINT32_MAX) {
        set_msg(msg, "%llu groups: more than 2^32", (unsigned long long)groups);
        return COPROC_OUT_OF_RANGE;
    }
    uint32_t *perm = malloc((groups ? groups : 1) * sizeof *perm);
    int ncols = q->nkeys + q->naggs;
    out->columns_ = calloc(ncols, sizeof *out->columns_);
    if (!perm || !out->columns_) {
        free(perm);
        set_msg(msg, "out of host memory merging %llu groups", (unsigned long long)groups);
        return COPROC_HOST_OUT_OF_MEMORY;
    }
    for (uint64_t i = 0; i < groups; i++)
        perm[i] = (uint32_t)i;
    qsort_r(perm, groups, sizeof *perm, cmp_rows, &x);
    uint64_t n = q->limit && q->limit < groups ? q->limit : groups;
    coproc_status s = coproc_table_create(m->rt, &out->table);
    for (int c = 0; c < ncols && s == COPROC_OK; c++) {
        coproc_type t;
        if (c < q->nkeys) {
            t = L->type[c];
        } else {
            int a = c - q->nkeys, k = L->agg_slot[a];
            coproc_agg_fn fn = q->aggs[a].fn;
            t = fn == COPROC_AGG_AVG                             ? COPROC_FLOAT64
                : fn == COPROC_AGG_SUM && L->cls[k] == CLS_FLOAT ? COPROC_FLOAT64
                : fn == COPROC_AGG_COUNT                         ? COPROC_INT64
                                                                 : L->type[k];
        }
        s = coproc_column_host_alloc(m->rt, t, (size_t)n, &out->columns_[c]);
        if (s != COPROC_OK)
            break;
        out->ncolumns_ = c + 1;
        for (uint64_t r = 0; r < n; r++) {
            int cls;
            slot v = final_value(L, q->aggs, rows + (size_t)perm[r] * L->width, c, &cls);
            write_value(out->columns_[c], r, v, cls);
        }
        s = coproc_table_add(out->table, c < q->nkeys ? q->keys[c] : q->aggs[c - q->nkeys].name,
                             out->columns_[c]);
    }
    free(perm);
    if (s != COPROC_OK)
        set_msg(msg, "the merged table: %s", coproc_errmsg(m->rt));
    out->groups = groups;
    return s;
}

/* COPROC_MPI_SHUFFLE: every partial row to the rank its keys hash to (one Alltoallv), merged
 * there; with a limit, each rank keeps only its first `limit` rows in the final order (its
 * groups are whole, so no row beyond them can make the result). *part and *n are replaced.
 * Collective; the status is the same on every rank. */
static coproc_status shuffle(coproc_mpi *m, const coproc_mpi_query *q, const layout *L, slot **part,
                             uint64_t *n, char *msg, double *merge_s)
{
    int P = m->size, W = L->width;
    uint64_t nrows = *n;
    const slot *rows = *part;
    long long *sendc = calloc(P, sizeof *sendc), *recvc = calloc(P, sizeof *recvc);
    /* bytes */
    uint64_t *sc = calloc(P, sizeof *sc), *sd = calloc(P, sizeof *sd), *rc = calloc(P, sizeof *rc),
             *rd = calloc(P, sizeof *rd);
    coproc_mpi_xchg x = {0};
    int *dest = malloc((nrows ? nrows : 1) * sizeof *dest);
    slot *sendbuf = malloc((nrows ? nrows : 1) * W * sizeof *sendbuf), *recvbuf = NULL;
    coproc_status s = COPROC_OK;
    if (!sendc || !recvc || !sc || !sd || !rc || !rd || !dest || !sendbuf) {
        s = COPROC_HOST_OUT_OF_MEMORY;
        set_msg(msg, "out of host memory shuffling %llu partial groups", (unsigned long long)nrows);
    }
    if (s == COPROC_OK) {
        for (uint64_t i = 0; i < nrows; i++) {
            /* mixed again: the merge's table takes the low bits of hash_keys */
            dest[i] = (int)(mix64(hash_keys(rows + i * W, L->nkeys)) % (uint64_t)P);
            sendc[dest[i]]++;
        }
        uint64_t at = 0;
        for (int r = 0; r < P; r++)
            sd[r] = at * W * 8, sc[r] = (uint64_t)sendc[r] * W * 8, at += (uint64_t)sendc[r];
        for (int r = 0; r < P; r++)
            recvc[r] = (long long)(sd[r] / (W * 8)); /* the next free row of each, for now */
        for (uint64_t i = 0; i < nrows; i++)
            memcpy(sendbuf + (size_t)(recvc[dest[i]]++) * W, rows + i * W, W * sizeof *rows);
    }
    coproc_status all = agree(m, s, msg, 0);
    uint64_t total = 0;
    if (all == COPROC_OK) {
        MPI_Alltoall(sendc, 1, MPI_LONG_LONG, recvc, 1, MPI_LONG_LONG, m->comm);
        for (int r = 0; r < P; r++)
            rd[r] = total * W * 8, rc[r] = (uint64_t)recvc[r] * W * 8, total += (uint64_t)recvc[r];
        recvbuf = malloc((total ? total : 1) * W * sizeof *recvbuf);
        int ok = recvbuf && coproc_mpi_xchg_reserve_(m, sc, rc, 1, &x) == 0;
        if (!ok)
            set_msg(msg, "%llu partial groups to merge: out of host memory",
                    (unsigned long long)total);
        all = agree(m, ok ? COPROC_OK : COPROC_HOST_OUT_OF_MEMORY, msg, 0);
    }
    if (all == COPROC_OK) {
        coproc_mpi_xchg_run_(m, sendbuf, sc, sd, recvbuf, rc, rd, &x);
        double t = wtime();
        slot *merged = NULL;
        uint64_t groups = 0;
        s = merge_by_key(L, recvbuf, total, &merged, &groups) == 0 ? COPROC_OK
                                                                   : COPROC_HOST_OUT_OF_MEMORY;
        if (s != COPROC_OK)
            set_msg(msg, "out of host memory merging %llu groups", (unsigned long long)total);
        if (s == COPROC_OK && q->limit && q->limit < groups) {
            sort_ctx x = {.L = L, .aggs = q->aggs, .rows = merged};
            uint32_t *perm = groups <= UINT32_MAX ? malloc(groups * sizeof *perm) : NULL;
            slot *cut = malloc(q->limit * W * sizeof *cut);
            if (perm && cut && resolve_order(q, &x, msg) == 0) {
                for (uint64_t i = 0; i < groups; i++)
                    perm[i] = (uint32_t)i;
                qsort_r(perm, groups, sizeof *perm, cmp_rows, &x);
                for (uint64_t i = 0; i < q->limit; i++)
                    memcpy(cut + i * W, merged + (size_t)perm[i] * W, W * sizeof *cut);
                free(merged);
                merged = cut, cut = NULL;
                groups = q->limit;
            } /* else: keep them all; rank 0 orders and cuts them anyway */
            free(perm);
            free(cut);
        }
        *merge_s += wtime() - t;
        if (s == COPROC_OK) {
            free(*part);
            *part = merged;
            *n = groups;
        }
        all = agree(m, s, msg, 0);
    }
    free(sendc), free(recvc), free(sc), free(sd), free(rc), free(rd), free(dest);
    coproc_mpi_xchg_free_(&x);
    free(sendbuf), free(recvbuf);
    return all;
}

coproc_status coproc_mpi_aggregate(coproc_mpi *m, const coproc_mpi_query *q, coproc_mpi_result *out)
{
    if (!m)
        return COPROC_NULL_POINTER;
    coproc_mpi_result scratch;
    coproc_mpi_result *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    double t0 = wtime();
    char msg[MSG_LEN] = "";
    char names[2 * MAX_AGGS][32];
    layout L;
    memset(&L, 0, sizeof L);
    coproc_status s = out ? COPROC_OK : COPROC_NULL_POINTER;
    if (!out)
        set_msg(msg, "coproc_mpi_aggregate: out is NULL");
    if (s == COPROC_OK)
        s = check_query(m, q, msg);

    /* ---- this rank's part */
    coproc_node *g = s == COPROC_OK ? local_plan(q, &L, names, msg) : NULL;
    if (s == COPROC_OK && !g)
        s = coproc_plan_status(q->plan) != COPROC_OK ? coproc_plan_status(q->plan)
                                                     : COPROC_INVALID_ARGUMENT;
    double cpu0 = cpu_seconds();
    if (s == COPROC_OK) {
        s = coproc_query_run(q->plan, g, q->options, &res->local);
        if (s != COPROC_OK)
            set_msg(msg, "coproc_query_run: %s", coproc_errmsg(m->rt));
    }
    res->compute_s = wtime() - t0;
    res->compute_cpu_s = cpu_seconds() - cpu0;

    /* ---- its partial rows, 8 bytes a value */
    slot *part = NULL;
    uint64_t nrows = 0;
    if (s == COPROC_OK) {
        const coproc_column *cols[MAX_KEYS + 1 + 2 * MAX_AGGS];
        if (partial_columns(q, res->local.table, cols, names) != L.width) {
            s = COPROC_INTERNAL;
            set_msg(msg, "the local group-by's result lacks a column");
        } else {
            nrows = coproc_table_rows(res->local.table);
            for (int k = 0; k < L.width; k++) {
                L.type[k] = coproc_column_type(cols[k]);
                L.cls[k] = type_class(L.type[k]);
            }
            part = malloc((nrows ? nrows : 1) * L.width * sizeof *part);
            if (!part) {
                s = COPROC_HOST_OUT_OF_MEMORY;
                set_msg(msg, "out of host memory for %llu partial groups",
                        (unsigned long long)nrows);
            }
            for (uint64_t r = 0; part && r < nrows; r++)
                for (int k = 0; k < L.width; k++)
                    part[r * L.width + k] = read_value(cols[k], r);
        }
    }
    res->local_groups = nrows;

    /* ---- agree: every rank fine, every shape the same */
    double t1 = wtime();
    coproc_status all = agree(m, s, msg, s == COPROC_OK ? shape_hash(q, &L) : 0);
    res->wait_s = wtime() - t1;
    if (all != COPROC_OK) {
        free(part);
        coproc_mpi_result_free(res);
        res->seconds = wtime() - t0;
        return all;
    }

    /* ---- exchange and merge */
    double t2 = wtime(), merge_s = 0;
    slot *merged = NULL;
    uint64_t groups = 0;
    s = COPROC_OK;
    msg[0] = '\0';
    if (L.nkeys == 0) {
        /* One row on each rank (the group-by over no keys gives one even over no rows). */
        if (nrows != 1) { /* cannot happen; still take part in the reductions */
            s = COPROC_INTERNAL;
            set_msg(msg, "the group-by over no keys gave %llu rows", (unsigned long long)nrows);
            memset(part, 0, L.width * sizeof *part);
        }
        allreduce_one(m, &L, part);
        merged = part;
        part = NULL;
        groups = 1;
    } else {
        if (q->exchange == COPROC_MPI_SHUFFLE) {
            s = shuffle(m, q, &L, &part, &nrows, msg, &merge_s);
            if (s != COPROC_OK) { /* the same on every rank, its message set */
                free(part);
                snprintf(msg, sizeof msg, "%s", m->errmsg);
                coproc_mpi_result_free(res);
                set_msg(m->errmsg, "%s", msg);
                return s;
            }
        }
        /* A gather as an exchange whose only receiver is rank 0 (bytes, 64-bit). */
        long long mine = (long long)nrows;
        int P = m->size;
        long long *counts = calloc(P, sizeof *counts);
        uint64_t *sc = calloc(P, sizeof *sc), *sd = calloc(P, sizeof *sd);
        uint64_t *rc = calloc(P, sizeof *rc), *rd = calloc(P, sizeof *rd);
        coproc_mpi_xchg x = {0};
        int ok = counts && sc && sd && rc && rd;
        if (ok)
            sc[0] = (uint64_t)nrows * L.width * 8;
        MPI_Gather(&mine, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, 0, m->comm);
        slot *all_rows = NULL;
        uint64_t total = 0;
        if (ok && m->rank == 0) {
            for (int r = 0; r < P; r++) {
                rc[r] = (uint64_t)counts[r] * L.width * 8, rd[r] = total * L.width * 8;
                total += (uint64_t)counts[r];
            }
            all_rows = malloc((total ? total : 1) * L.width * sizeof *all_rows);
            ok = all_rows != NULL;
        }
        ok = ok && coproc_mpi_xchg_reserve_(m, sc, rc, 1, &x) == 0;
        /* Every rank says whether it can: then everyone sends or nobody does. */
        int allok = 0;
        MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, m->comm);
        if (allok) {
            coproc_mpi_xchg_run_(m, part, sc, sd, all_rows, rc, rd, &x);
        } else {
            s = COPROC_HOST_OUT_OF_MEMORY;
            set_msg(msg, "out of host memory gathering the partial groups on rank 0");
        }
        coproc_mpi_xchg_free_(&x);
        free(sc), free(sd);
        double tm = wtime();
        if (m->rank == 0 && allok && merge_by_key(&L, all_rows, total, &merged, &groups) != 0) {
            s = COPROC_HOST_OUT_OF_MEMORY;
            set_msg(msg, "out of host memory merging %llu partial groups",
                    (unsigned long long)total);
        }
        merge_s += wtime() - tm;
        free(all_rows), free(counts), free(rc), free(rd), free(part);
        part = NULL;
    }
    double tb = wtime();
    if (m->rank == 0 && s == COPROC_OK)
        s = build_table(m, q, &L, merged, groups, res, msg);
    merge_s += wtime() - tb;
    free(merged);
    free(part);
    /* Rank 0's merge may have failed: everyone returns that. */
    all = agree(m, s, msg, 0);
    res->merge_s = merge_s;
    res->exchange_s = wtime() - t2 - merge_s;
    res->seconds = wtime() - t0;
    if (all != COPROC_OK) {
        double keep[5] = {res->seconds, res->compute_s, res->wait_s, res->exchange_s, res->merge_s};
        coproc_mpi_result_free(res);
        res->seconds = keep[0], res->compute_s = keep[1], res->wait_s = keep[2];
        res->exchange_s = keep[3], res->merge_s = keep[4];
    }
    return all;
}

void coproc_mpi_result_free(coproc_mpi_result *r)
{
    if (!r)
        return;
    coproc_table_free(r->table);
    for (int i = 0; i < r->ncolumns_; i++)
        coproc_column_free(r->columns_[i]);
    free(r->columns_);
    coproc_query_result_free(&r->local);
    memset(r, 0, sizeof *r);
}
