/* group_by.c - group-by: count, sum, min, max per distinct integer key
 * (those asked: sums and counts of integer values skip min and max).
 * Keys that span a small range (measured by one min/max pass) are aggregated
 * by direct indexing, slot = key - min (dense_group_by, the "dense keys"
 * section of cl/group_by.cl). Otherwise a hash table, as described at the top
 * of cl/group_by.cl: pass 1 inserts the keys (grow and start again on
 * overflow), pass 2 aggregates by slot. Either way the occupied slots are then
 * numbered and written out, in key order when asked (dense slots already are). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "ops/primitives.h"
#include "backend/opencl/program.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

/* Value classes: how values are aggregated (kernel name suffixes). */
enum { VC_NONE, VC_V32, VC_V64, VC_F32, VC_F64 };
static const char *const vc_name[] = {"none", "v32", "v64", "f32", "f64"};

/* Must match GB_INIT_* in cl/group_by.cl. */
#define INIT_SUM 1u
#define INIT_MM 2u
#define INIT_HI 4u
#define INIT_EMAX 8u
#define INIT_FL 16u

#define FIRST_CAPACITY_MAX ((size_t)1 << 16) /* first table: min(2n, this) slots */
#define GROWTH 8
#define SAMPLE_FROM 4096                     /* tables this big count 1 claim in 16 */
#define MAX_CAPACITY ((size_t)1 << 31)      /* slot ids stay below 2^31 */
#define HOST_SORT_MAX 65536                  /* fewer groups are ordered on the host */
#define LOCAL_TABLE_BYTES (46 * 1024)        /* pass 2's local table (GPUs give 48 KiB) */
/* Dense keys: a key range of at most 2n + DENSE_SLACK slots (and DENSE_MAX_RANGE)
 * is aggregated by direct indexing. */
#define DENSE_SLACK ((uint64_t)1 << 16)
#define DENSE_MAX_RANGE ((uint64_t)1 << 23)
/* Bytes of one private-table entry on the CPU path: gb_de32 / gb_de64 in
 * cl/group_by.cl, or a uint count. */
#define DENSE_ENTRY_NONE 4
#define DENSE_ENTRY_32 24
#define DENSE_ENTRY_64 32
#define DENSE_ENTRY_SUM 16 /* gb_des: sums and counts only */
/* The CPU path's private tables together take at most this much beyond 48
 * bytes a row (about what the hash path's table and slot map take). */
#define DENSE_TABLES_SLACK ((size_t)8 << 20)
#define DENSE_CACHED_TABLE ((size_t)256 << 10) /* a private table this small stays in L2 */
/* The CPU path first tries tables of this many slots around each work-item's
 * first key (dense_window): key ranges up to half of it need no range pass. */
#define DENSE_WINDOW 4096

/* Loop steps. Mesa's llvmpipe stops a work-item's loops after 65535 steps in
 * all, silently (quirk loop-65535; measured on 22.3.6: a loop entered costs
 * its trips + 1 steps, zero trips included; a loop of constant trip count is
 * unrolled and costs none), and quirks.c caps the rows of a work-item at
 * max_rows_per_item, an eighth of that, for kernels of a few steps a row. The
 * group-by kernels whose rows take more steps, or that run loops of their own
 * besides the rows', keep a work-item within STEPS_PER_CAPPED_ROW x
 * max_rows_per_item steps (half the limit on llvmpipe): gb_geometry. Steps are
 * counted from cl/group_by.cl's loops as written. */
#define STEPS_PER_CAPPED_ROW 4
#define INSERT_CACHE_STEPS (1024 + 1) /* pass 1 on the CPU path: clearing GB_CACHE */
/* Pass 1's probes have no bound; a row takes a few steps on average at load
 * <= 1/2, and a work-item whose loops were stopped is seen (insert_rows). */
#define INSERT_ROW_STEPS 16
#define LOCAL_PROBE_STEPS (16 + 1) /* gb_local_slot: GB_LOCAL_PROBES */
#define FIX_STEPS (4 + 1)          /* gb_fix / gb_float_sum: the 4-word negation */
/* The dense kernels with nulls (GB_WORD_ROWS): a row, plus for each word of
 * 32 rows its loop's step, the row loop's entry and the take-back's loop (up
 * to 33), or with null keys a run loop's step and entry per run (at worst,
 * alternating bits, a run a row: 3 steps a row), and the window kernels'
 * search for their first valid key. */
#define NULLS_STEPS_PER_ROW 4

typedef struct gb_plan {
    cl_uint nw;           /* key words per slot: 2 (32-bit keys) or 3 */
    int vc;               /* value class */
    cl_uint sw;           /* sum words per slot */
    unsigned init;        /* INIT_* bits: which per-slot arrays exist */
    cl_uint flip32;       /* xor into the order-preserving encoding of 32-bit ints */
    cl_ulong flip64;      /* ... of 64-bit ints */
    cl_uint sign_extend;  /* int32 sums sign-extend */
    coproc_type sum_type; /* output sum column type */
    cl_uint local_words;  /* words per local-table entry in pass 2 */
    int mm;               /* min/max computed (with values: unless integer values and
                           * neither asked) */
} gb_plan;

/* The per-slot device arrays of one table size. */
typedef struct gb_table {
    size_t cap;
    cl_mem words, cnt, sum, mn, mx, mnhi, mxhi, emax, fl;
} gb_table;

static int is_signed_int(coproc_type t) { return t == COPROC_INT32 || t == COPROC_INT64; }

static void make_plan(const coproc__device *dev, const coproc_column *keys,
                      const coproc_column *values, unsigned aggs, gb_plan *p)
{
    memset(p, 0, sizeof *p);
    p->nw = keys->type == COPROC_INT64 || keys->type == COPROC_UINT64 ? 3 : 2;
    coproc_type vt = values ? values->type : COPROC__TYPE_COUNT;
    switch (vt) {
    case COPROC_INT32:
    case COPROC_UINT32:
        p->vc = VC_V32;
        p->sw = 2;
        p->init = INIT_SUM | INIT_MM;
        p->flip32 = vt == COPROC_INT32 ? 0x80000000u : 0;
        p->sign_extend = vt == COPROC_INT32;
        p->sum_type = vt == COPROC_INT32 ? COPROC_INT64 : COPROC_UINT64;
        break;
    case COPROC_INT64:
    case COPROC_UINT64:
        p->vc = VC_V64;
        p->sw = 2;
        p->init = INIT_SUM | INIT_MM | INIT_HI;
        p->flip64 = vt == COPROC_INT64 ? 0x8000000000000000ull : 0;
        p->sum_type = vt == COPROC_INT64 ? COPROC_INT64 : COPROC_UINT64;
        break;
    case COPROC_FLOAT32:
    case COPROC_FLOAT64:
        p->vc = vt == COPROC_FLOAT32 ? VC_F32 : VC_F64;
        p->sw = 4;
        p->init = INIT_SUM | INIT_MM | INIT_EMAX | INIT_FL | (vt == COPROC_FLOAT64 ? INIT_HI : 0);
        /* Without fp64 the sum of float32 values is written as float32. */
        p->sum_type = dev->info.has_fp64 ? COPROC_FLOAT64 : COPROC_FLOAT32;
        break;
    default:
        p->vc = VC_NONE;
        break;
    }
    /* Integer values skip min/max when neither is asked; float values
     * compute them all (the columns not asked are dropped at the end). */
    p->mm = p->vc != VC_NONE;
    if ((p->vc == VC_V32 || p->vc == VC_V64) && !(aggs & (COPROC_GROUP_MIN | COPROC_GROUP_MAX))) {
        p->mm = 0;
        p->init &= ~(INIT_MM | INIT_HI);
    }
    int mm = (p->init & INIT_MM) != 0;
    p->local_words = 2 + p->sw + 2 * mm + ((p->init & INIT_FL) != 0);
}

/* A work-item's loop-step budget where the driver stops loops (0: none). */
static uint64_t step_budget(const coproc__device *dev)
{
    return dev->quirks.max_rows_per_item * STEPS_PER_CAPPED_ROW;
}

/* The rows a work-item may walk when it runs `fixed` loop steps besides up to
 * `per_row` a row (at least 1); 0 when the driver sets no limit. */
static uint64_t rows_in_budget(const coproc__device *dev, uint64_t fixed, uint64_t per_row)
{
    uint64_t budget = step_budget(dev);
    if (!budget)
        return 0;
    uint64_t rows = budget > fixed ? (budget - fixed) / per_row : 0;
    return rows ? rows : 1;
}

/* The geometry over n rows of a kernel as rows_in_budget describes it. */
static coproc__geometry gb_geometry(const coproc__device *dev, size_t n, uint64_t fixed,
                                    uint64_t per_row)
{
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    uint64_t rows = rows_in_budget(dev, fixed, per_row);
    return coproc__geometry_cap_rows(g, n, rows);
}

/* gb_init's steps a slot: its loops over key and sum words. */
static uint64_t init_steps(const gb_plan *p, cl_uint nw) { return 1 + (nw + 1) + (p->sw + 1); }

static void table_release(gb_table *t)
{
    cl_mem *m[] = {&t->words, &t->cnt, &t->sum, &t->mn, &t->mx, &t->mnhi, &t->mxhi, &t->emax,
                   &t->fl};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        if (*m[i])
            clReleaseMemObject(*m[i]);
        *m[i] = NULL;
    }
    t->cap = 0;
}

/* The per-slot arrays of cap slots; key words too unless `dense`. */
static coproc_status table_alloc(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                 size_t cap, int dense, gb_table *t)
{
    t->cap = cap;
    coproc_status s = COPROC_OK;
    if (!dense)
        s = coproc__buffer_new(rt, dev, cap * p->nw * 4, &t->words);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, cap * 4, &t->cnt);
    if (s == COPROC_OK && (p->init & INIT_SUM))
        s = coproc__buffer_new(rt, dev, cap * p->sw * 4, &t->sum);
    if (s == COPROC_OK && (p->init & INIT_MM))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->mn);
    if (s == COPROC_OK && (p->init & INIT_MM))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->mx);
    if (s == COPROC_OK && (p->init & INIT_HI))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->mnhi);
    if (s == COPROC_OK && (p->init & INIT_HI))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->mxhi);
    if (s == COPROC_OK && (p->init & INIT_EMAX))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->emax);
    if (s == COPROC_OK && (p->init & INIT_FL))
        s = coproc__buffer_new(rt, dev, cap * 4, &t->fl);
    if (s != COPROC_OK)
        table_release(t);
    return s;
}

/* An absent per-slot array is passed as `spare` (the kernel never touches it). */
static cl_mem or_spare(cl_mem m, cl_mem spare) { return m ? m : spare; }

/*
 * Pass 1 with table growth: allocate and clear a table of t->cap slots, insert
 * every row; on overflow grow and start again. On return row_slot holds every
 * row's slot. ctl: [0] the stop flag, [1] the sampled claims, [2] the rows
 * placed. A flag raised below the claim limit, or rows left unplaced, mean a
 * work-item's loops were stopped (loop-65535): the same table again, with half
 * the rows a work-item.
 */
static coproc_status insert_rows(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                 const coproc_column *keys, const coproc_column *values,
                                 cl_mem row_slot, cl_mem ctl, size_t cap, gb_table *t)
{
    size_t n = keys->length;
    size_t enough = coproc__next_pow2(2 * n); /* at load <= 1/2 no overflow can happen */
    if (enough > MAX_CAPACITY)
        enough = MAX_CAPACITY;
    static const char *const p1[] = {"plain", "plain", "v64", "f32", "f64"};
    char kname[48];
    /* 64-bit values without min/max: nothing to do in pass 1 */
    snprintf(kname, sizeof kname, "gb_insert_k%d_%s", p->nw == 3 ? 64 : 32,
             p->mm ? p1[p->vc] : "plain");
    coproc__kernel_lease *linit = NULL, *lins = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", "gb_init", &linit);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "group_by", kname, &lins);
    uint64_t item_rows = 0; /* after a stopped work-item: rows a work-item at most */
    while (s == COPROC_OK) {
        table_release(t);
        s = table_alloc(rt, dev, p, cap, 0, t);
        if (s != COPROC_OK)
            break;
        cl_ulong ncap = cap;
        cl_uint what = p->init;
        coproc__geometry gi = gb_geometry(dev, cap, 0, init_steps(p, p->nw));
        coproc__args a = {linit->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, ncap);
        COPROC__ARG(a, what);
        COPROC__ARG(a, t->words);
        COPROC__ARG(a, p->nw);
        COPROC__ARG(a, t->cnt);
        cl_mem m[] = {or_spare(t->sum, ctl), or_spare(t->mn, ctl), or_spare(t->mx, ctl),
                      or_spare(t->mnhi, ctl), or_spare(t->mxhi, ctl), or_spare(t->emax, ctl),
                      or_spare(t->fl, ctl)};
        COPROC__ARG(a, m[0]);
        COPROC__ARG(a, p->sw);
        for (int i = 1; i < 7; i++)
            COPROC__ARG(a, m[i]);
        COPROC__ARG(a, ctl);
        s = coproc__launch(rt, dev, &a, &gi, "gb_init");
        if (s != COPROC_OK)
            break;

        cl_ulong nn = n;
        /* Claims are counted exactly on small tables, 1 in 16 (by slot index)
         * on big ones; a table of `enough` slots has no limit. */
        cl_uint mask = (cl_uint)(cap - 1), sample = cap >= SAMPLE_FROM ? 15 : 0;
        cl_uint limit = cap >= enough ? UINT32_MAX : (cl_uint)(cap / 2 / (sample + 1));
        coproc__geometry g =
            gb_geometry(dev, n, dev->cpu_path ? INSERT_CACHE_STEPS : 0, INSERT_ROW_STEPS);
        if (item_rows)
            g = coproc__geometry_cap_rows(g, n, item_rows ? item_rows : 1);
        coproc__args b = {lins->kernel, 0, CL_SUCCESS};
        COPROC__ARG(b, keys->mem);
        COPROC__ARG(b, nn);
        COPROC__ARG(b, t->words);
        COPROC__ARG(b, mask);
        COPROC__ARG(b, ctl);
        COPROC__ARG(b, sample);
        COPROC__ARG(b, limit);
        COPROC__ARG(b, row_slot);
        if (p->vc == VC_V64 && p->mm) {
            COPROC__ARG(b, values->mem);
            COPROC__ARG(b, p->flip64);
            COPROC__ARG(b, t->mnhi);
            COPROC__ARG(b, t->mxhi);
        } else if (p->vc == VC_F32) {
            COPROC__ARG(b, values->mem);
            COPROC__ARG(b, t->emax);
        } else if (p->vc == VC_F64) {
            COPROC__ARG(b, values->mem);
            COPROC__ARG(b, t->emax);
            COPROC__ARG(b, t->mnhi);
            COPROC__ARG(b, t->mxhi);
        }
        s = coproc__launch(rt, dev, &b, &g, kname);
        if (s != COPROC_OK)
            break;
        cl_uint c[3] = {0, 0, 0};
        cl_int err = coproc__read_now(dev, dev->queue, ctl, 0, sizeof c, c, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            s = coproc__fail_cl(rt, err, "%s: reading the overflow flag from device %d", kname,
                                dev->index);
            break;
        }
        if (!c[0] && c[2] == n)
            break; /* every row placed */
        /* The table is too full: past the claim limit, or a table that can
         * fill (2^31 slots, more rows) found full. */
        if (c[0] && (c[1] > limit || (cap >= enough && (uint64_t)cap < 2 * (uint64_t)n))) {
            if (cap >= enough) {
                s = coproc__fail(rt, COPROC_UNSUPPORTED,
                                 "coproc_group_by: more than %zu groups", MAX_CAPACITY / 2);
                break;
            }
            cap = cap * GROWTH < enough ? cap * GROWTH : enough;
            continue;
        }
        /* A work-item stopped early: fewer rows each. */
        uint64_t had = (n + g.global - 1) / g.global;
        if (had <= 1) {
            s = coproc__fail(rt, COPROC_INTERNAL, "%s on device %d: a work-item's loops "
                             "stopped before its one row was placed (%u of %zu rows placed; "
                             "the driver's loop limit?)", kname, dev->index, c[2], n);
            break;
        }
        item_rows = had / 2;
    }
    coproc__kernel_return(dev, linit);
    coproc__kernel_return(dev, lins);
    return s;
}

/* Pass 2: aggregate every row into its slot. */
static coproc_status aggregate_rows(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                    const coproc_column *values, size_t n, cl_mem row_slot,
                                    cl_mem spare, const gb_table *t)
{
    char kname[48];
    snprintf(kname, sizeof kname, "gb_aggregate_%s%s", vc_name[p->vc],
             p->vc != VC_NONE && !p->mm ? "_sum" : "");
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", kname, &l);
    if (s != COPROC_OK)
        return s;
    size_t budget = dev->info.local_mem_bytes;
    if (budget > LOCAL_TABLE_BYTES + 2048)
        budget = LOCAL_TABLE_BYTES;
    else
        budget = budget > 4096 ? budget - 2048 : budget / 2;
    cl_uint L = (cl_uint)(budget / (p->local_words * 4));
    if (L < 1)
        L = 1;
    /* Loop steps: a row's local probes, sum words (local or global) and float
     * split; a local entry's clearing (1 + sum words) and merging (copying and
     * adding the sum words). Within a budget a work-item walks as many local
     * entries as rows at most (more would stay empty on the CPU path). */
    uint64_t sw = p->vc == VC_NONE ? 0 : p->sw, fl = p->vc == VC_F32 || p->vc == VC_F64;
    uint64_t per_row = 1 + LOCAL_PROBE_STEPS + (sw + 1) + (fl ? FIX_STEPS : 0);
    uint64_t per_entry = (1 + sw + 1) + (1 + (sw + 1) + (sw + 1));
    uint64_t rows = rows_in_budget(dev, 0, per_row + per_entry);
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    if (rows) {
        g = coproc__geometry_cap_rows(g, n, rows ? rows : 1);
        if (L > rows * g.local)
            L = (cl_uint)(rows * g.local);
    }
    cl_ulong nn = n;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, row_slot);
    COPROC__ARG(a, nn);
    switch (p->vc) {
    case VC_V32:
        COPROC__ARG(a, values->mem);
        COPROC__ARG(a, p->flip32);
        COPROC__ARG(a, p->sign_extend);
        break;
    case VC_V64:
        COPROC__ARG(a, values->mem);
        if (p->mm) {
            COPROC__ARG(a, p->flip64);
            COPROC__ARG(a, t->mnhi);
            COPROC__ARG(a, t->mxhi);
        }
        break;
    case VC_F32:
        COPROC__ARG(a, values->mem);
        COPROC__ARG(a, t->emax);
        break;
    case VC_F64:
        COPROC__ARG(a, values->mem);
        COPROC__ARG(a, t->emax);
        COPROC__ARG(a, t->mnhi);
        COPROC__ARG(a, t->mxhi);
        break;
    default:
        break;
    }
    cl_mem m[] = {t->cnt, or_spare(t->sum, spare), or_spare(t->mn, spare),
                  or_spare(t->mx, spare), or_spare(t->fl, spare)};
    for (int i = 0; i < 5; i++)
        COPROC__ARG(a, m[i]);
    COPROC__ARG_LOCAL(a, (size_t)L * p->local_words * 4);
    COPROC__ARG(a, L);
    s = coproc__launch(rt, dev, &a, &g, kname);
    coproc__kernel_return(dev, l);
    return s;
}

/* Group g's key (slot pos[g]) into out at dest[g] (use_dest) or g. */
static coproc_status write_keys(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                const gb_table *t, cl_mem pos, size_t groups, cl_mem dest,
                                cl_uint use_dest, cl_mem out)
{
    const char *kname = p->nw == 3 ? "gb_final_keys_w3" : "gb_final_keys_w2";
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", kname, &l);
    if (s != COPROC_OK)
        return s;
    cl_ulong ng = groups;
    coproc__geometry g = coproc__geometry_for(dev, groups, 0);
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, pos);
    COPROC__ARG(a, ng);
    COPROC__ARG(a, t->words);
    COPROC__ARG(a, dest);
    COPROC__ARG(a, use_dest);
    COPROC__ARG(a, out);
    s = coproc__launch(rt, dev, &a, &g, kname);
    coproc__kernel_return(dev, l);
    return s;
}

static coproc_status write_aggregates(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                      const gb_table *t, cl_mem pos, size_t groups, cl_mem dest,
                                      cl_uint use_dest, const coproc_group_result *r)
{
    char kname[48];
    snprintf(kname, sizeof kname, "gb_final_%s",
             p->vc != VC_NONE && !p->mm ? "sum" : vc_name[p->vc]);
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", kname, &l);
    if (s != COPROC_OK)
        return s;
    cl_ulong ng = groups;
    /* float sums: gb_float_sum's negation loop */
    coproc__geometry g = gb_geometry(dev, groups, 0,
                                     p->vc == VC_F32 || p->vc == VC_F64 ? 1 + FIX_STEPS : 1);
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, pos);
    COPROC__ARG(a, ng);
    COPROC__ARG(a, dest);
    COPROC__ARG(a, use_dest);
    COPROC__ARG(a, t->cnt);
    COPROC__ARG(a, r->count->mem);
    if (p->vc != VC_NONE && !p->mm) {
        COPROC__ARG(a, t->sum);
        COPROC__ARG(a, r->sum->mem);
    } else if (p->vc != VC_NONE) {
        COPROC__ARG(a, t->sum);
        COPROC__ARG(a, t->mn);
        COPROC__ARG(a, t->mx);
        if (p->vc == VC_V32) {
            COPROC__ARG(a, p->flip32);
        } else if (p->vc == VC_V64) {
            COPROC__ARG(a, t->mnhi);
            COPROC__ARG(a, t->mxhi);
            COPROC__ARG(a, p->flip64);
        } else {
            if (p->vc == VC_F64) {
                COPROC__ARG(a, t->mnhi);
                COPROC__ARG(a, t->mxhi);
            }
            COPROC__ARG(a, t->emax);
            COPROC__ARG(a, t->fl);
        }
        COPROC__ARG(a, r->sum->mem);
        COPROC__ARG(a, r->min->mem);
        COPROC__ARG(a, r->max->mem);
    }
    s = coproc__launch(rt, dev, &a, &g, kname);
    coproc__kernel_return(dev, l);
    return s;
}

typedef struct key_index {
    uint64_t key; /* order-preserving unsigned form */
    uint32_t index;
} key_index;

static int cmp_key_index(const void *a, const void *b)
{
    const key_index *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * The rank of each group's key among all groups' keys (keys distinct), into a
 * new device buffer *rank. keys is a column of `groups` keys in group order.
 */
static coproc_status key_ranks(coproc_runtime *rt, coproc__device *dev, coproc_column *keys,
                               cl_mem *rank)
{
    size_t groups = keys->length;
    coproc_status s = coproc__buffer_new(rt, dev, groups * 4, rank);
    if (s != COPROC_OK)
        return s;
    if (groups >= HOST_SORT_MAX) {
        /* Many groups: the device's radix argsort, then invert the permutation. */
        coproc_column *perm = NULL;
        coproc__kernel_lease *l = NULL;
        s = coproc_argsort(rt, keys, &perm);
        if (s == COPROC_OK)
            s = coproc__kernel_borrow(rt, dev, "group_by", "gb_invert", &l);
        if (s == COPROC_OK) {
            cl_ulong ng = groups;
            coproc__geometry g = coproc__geometry_for(dev, groups, 0);
            coproc__args a = {l->kernel, 0, CL_SUCCESS};
            COPROC__ARG(a, perm->mem);
            COPROC__ARG(a, ng);
            COPROC__ARG(a, *rank);
            s = coproc__launch(rt, dev, &a, &g, "gb_invert");
            if (s == COPROC_OK) {
                cl_int err = coproc__finish(dev, dev->queue);
                if (err != CL_SUCCESS)
                    s = coproc__fail_cl(rt, err, "gb_invert on device %d", dev->index);
            }
        }
        coproc__kernel_return(dev, l);
        coproc_column_free(perm);
    } else {
        size_t ks = coproc_type_size(keys->type);
        unsigned char *raw = malloc(groups * ks);
        key_index *ki = malloc(groups * sizeof *ki);
        uint32_t *r = malloc(groups * sizeof *r);
        if (!raw || !ki || !r)
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        if (s == COPROC_OK)
            s = coproc_column_download(keys, raw, groups);
        if (s == COPROC_OK) {
            uint64_t flip = is_signed_int(keys->type) ? (ks == 4 ? 0x80000000u
                                                                 : 0x8000000000000000ull) : 0;
            for (size_t i = 0; i < groups; i++) {
                uint64_t v = 0;
                if (ks == 4) {
                    uint32_t w;
                    memcpy(&w, raw + i * 4, 4);
                    v = w;
                } else {
                    memcpy(&v, raw + i * 8, 8);
                }
                ki[i].key = v ^ flip;
                ki[i].index = (uint32_t)i;
            }
            qsort(ki, groups, sizeof *ki, cmp_key_index);
            for (size_t j = 0; j < groups; j++)
                r[ki[j].index] = (uint32_t)j;
            cl_int err = coproc__write_now(dev, dev->queue, *rank, 0, groups * 4, r, 0, NULL, NULL);
            if (err != CL_SUCCESS)
                s = coproc__fail_cl(rt, err, "uploading group ranks to device %d", dev->index);
        }
        free(raw);
        free(ki);
        free(r);
    }
    if (s != COPROC_OK) {
        clReleaseMemObject(*rank);
        *rank = NULL;
    }
    return s;
}

void coproc_group_result_free(coproc_group_result *r)
{
    if (!r)
        return;
    coproc_column_free(r->keys);
    coproc_column_free(r->count);
    coproc_column_free(r->sum);
    coproc_column_free(r->min);
    coproc_column_free(r->max);
    memset(r, 0, sizeof *r);
}

/* The output columns for `groups` groups. */
static coproc_status result_alloc(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                  coproc_type key_type, const coproc_column *values,
                                  size_t groups, coproc_group_result *r)
{
    r->groups = groups;
    coproc_status s = coproc__column_new(rt, dev, key_type, groups, &r->keys);
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, COPROC_UINT64, groups, &r->count);
    if (s == COPROC_OK && values)
        s = coproc__column_new(rt, dev, p->sum_type, groups, &r->sum);
    if (s == COPROC_OK && values && p->mm)
        s = coproc__column_new(rt, dev, values->type, groups, &r->min);
    if (s == COPROC_OK && values && p->mm)
        s = coproc__column_new(rt, dev, values->type, groups, &r->max);
    if (s != COPROC_OK)
        coproc_group_result_free(r);
    return s;
}

/* ---- dense keys: direct indexing (the "dense keys" section of cl/group_by.cl) */

/* Integer values or none; 64-bit values only on the CPU path. */
static int dense_possible(const coproc__device *dev, const gb_plan *p)
{
    return p->vc == VC_NONE || p->vc == VC_V32 || (p->vc == VC_V64 && dev->cpu_path);
}

/* The smallest and largest ordered form (raw bits ^ flip) of n >= 1 keys;
 * with kvalid (their validity bitmap) of the valid keys only: then lo > hi
 * when none is. */
static coproc_status key_range(coproc_runtime *rt, coproc__device *dev, const coproc_column *keys,
                               cl_mem kvalid, uint64_t flip, uint64_t *lo, uint64_t *hi)
{
    int wide = coproc_type_size(keys->type) == 8;
    const char *kname = kvalid ? (wide ? "gb_key_range_valid_k64" : "gb_key_range_valid_k32")
                               : (wide ? "gb_key_range_k64" : "gb_key_range_k32");
    coproc__geometry g = coproc__geometry_for(dev, keys->length, 0);
    /* The partials go to the lease's scratch buffer and its host copy. */
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", kname, &l);
    if (s == COPROC_OK)
        s = coproc__lease_scratch(rt, dev, l, g.groups * 16);
    if (s == COPROC_OK) {
        cl_ulong nn = keys->length, f = flip;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, keys->mem);
        COPROC__ARG(a, nn);
        COPROC__ARG(a, f);
        if (kvalid)
            COPROC__ARG(a, kvalid);
        COPROC__ARG(a, l->scratch);
        COPROC__ARG_LOCAL(a, 2 * g.local * sizeof(cl_ulong));
        s = coproc__launch(rt, dev, &a, &g, kname);
    }
    if (s == COPROC_OK) {
        cl_int err = coproc__read_now(dev, dev->queue, l->scratch, 0, g.groups * 16,
                                      l->scratch_host, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: reading the key range from device %d", kname,
                                dev->index);
    }
    if (s == COPROC_OK) {
        const uint64_t *part = l->scratch_host;
        *lo = UINT64_MAX;
        *hi = 0;
        for (size_t i = 0; i < g.groups; i++) {
            *lo = part[2 * i] < *lo ? part[2 * i] : *lo;
            *hi = part[2 * i + 1] > *hi ? part[2 * i + 1] : *hi;
        }
    }
    coproc__kernel_return(dev, l);
    return s;
}

/* Work-items (each with a private table) of the CPU path's dense kernel, 0
 * when the tables would take too much memory. per_row: the loop steps a row
 * takes (1; NULLS_STEPS_PER_ROW with validity bitmaps). */
static size_t dense_partitions(const coproc__device *dev, size_t n, uint64_t range, size_t entry,
                               uint64_t per_row)
{
    /* Each work-item clears its table: a loop of `range` steps, which a
     * device with a cap on one work-item's loop (rusticl) cannot run. */
    if (dev->quirks.max_rows_per_item && range > dev->quirks.max_rows_per_item)
        return 0;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    size_t units = dev->info.compute_units ? dev->info.compute_units : 1;
    /* Enough work-items to keep every core busy; more (up to the usual
     * geometry, for balance) only while a table stays in a core's cache and
     * the tables stay small next to the rows: a table that misses the cache
     * costs a miss a row whatever the number, and each one more to clear and
     * merge. */
    size_t want = units;
    while (want < g.groups && range * entry <= DENSE_CACHED_TABLE && (want + 1) * range * 4 <= n)
        want++;
    if (want > g.groups)
        want = g.groups; /* few rows: fewer work-items */
    if (g.groups > want && dev->quirks.max_rows_per_item)
        want = g.groups; /* the quirk's minimum */
    double limit = 48.0 * (double)n + (double)DENSE_TABLES_SLACK;
    double one = (double)range * (double)entry;
    if (limit > (double)dev->info.max_alloc_bytes)
        limit = (double)dev->info.max_alloc_bytes;
    while (want > units && one * (double)want > limit)
        want--;
    if (one * (double)want > limit && !dev->quirks.max_rows_per_item)
        want = (size_t)(limit / one);
    if (one * (double)want > limit)
        return 0;
    /* Loop steps where the driver limits them: a work-item clears its table
     * and walks its rows; gb_dmerge_* walks the want tables for a slot. */
    uint64_t budget = step_budget(dev);
    if (budget && want &&
        ((range + 1) + per_row * ((n + want - 1) / want) > budget || want + 2 > budget))
        return 0;
    return want;
}

/* The CPU path's private tables already filled by gb_wdense_* (dense_window):
 * P tables of W entries, each table's base in win. */
typedef struct dense_win {
    cl_mem part, win;
    size_t P;
    uint64_t W;
} dense_win;

/* r (groups of dense slots at pos, the last slot range - 1 the null keys'):
 * its last group's key made null when that slot holds rows. */
static coproc_status mark_null_group(coproc_runtime *rt, coproc__device *dev, cl_mem pos,
                                     uint64_t range, coproc_group_result *r)
{
    cl_uint last = 0;
    cl_int err = coproc__read_now(dev, dev->queue, pos, (r->groups - 1) * sizeof last, sizeof last,
                                  &last, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "coproc_group_by: reading the last group from device %d",
                               dev->index);
    if (last != range - 1)
        return COPROC_OK;
    coproc_column *valid = NULL;
    coproc_status s = coproc__nulls_range(rt, dev, r->groups, 0, r->groups - 1, &valid);
    if (s == COPROC_OK)
        coproc__attach_validity(r->keys, valid);
    return s;
}

/* The dense kernels' value name and private-table entry bytes. */
static const char *dense_entry(const gb_plan *p, const coproc_column *values, size_t *entry)
{
    *entry = DENSE_ENTRY_NONE;
    if (!values)
        return "none";
    *entry = !p->mm ? DENSE_ENTRY_SUM : p->vc == VC_V64 ? DENSE_ENTRY_64 : DENSE_ENTRY_32;
    return p->vc == VC_V64 ? "v64" : values->type == COPROC_INT32 ? "i32" : "u32";
}

/*
 * Group by direct indexing: slot = key - base, for keys whose ordered forms
 * span range slots. *used = 0 (and nothing done) when the CPU path's private
 * tables would not fit; the caller then takes the hash path. With w, the
 * tables are w's (filled already) and only merged here. kvalid, vvalid: the
 * keys' and values' validity bitmaps or NULL (the null group of kvalid is
 * slot range - 1, one the caller adds for it); vvalid on the CPU path only.
 */
static coproc_status dense_group_by(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                    const coproc_column *keys, const coproc_column *values,
                                    uint64_t base, uint64_t range, coproc_group_result *out,
                                    int *used, const dense_win *w, cl_mem kvalid, cl_mem vvalid)
{
    size_t n = keys->length;
    int wide = coproc_type_size(keys->type) == 8;
    size_t entry;
    const char *vname = dense_entry(p, values, &entry);
    size_t P = w ? w->P : 0;
    *used = 0;
    uint64_t per_row = kvalid || vvalid ? NULLS_STEPS_PER_ROW : 1;
    if (dev->cpu_path && !w && (P = dense_partitions(dev, n, range, entry, per_row)) == 0)
        return COPROC_OK;
    *used = 1;

    gb_table t;
    memset(&t, 0, sizeof t);
    coproc_group_result r;
    memset(&r, 0, sizeof r);
    cl_mem part = NULL, flags = NULL, pos = NULL;
    coproc__kernel_lease *lk = NULL, *lkm = NULL;
    char kname[48], mname[48];
    const char *no_mm = values && !p->mm ? "_sum" : ""; /* the MM 0 kernels */
    snprintf(kname, sizeof kname, "gb_dense_k%d_%s%s", wide ? 64 : 32, vname, no_mm);
    snprintf(mname, sizeof mname, "gb_dmerge_%s", *no_mm ? "sum" : vc_name[p->vc]);
    cl_ulong nn = n, nrange = range, base64 = base;
    cl_uint base32 = (cl_uint)base, P32 = (cl_uint)P, flip32 = p->flip32;
    coproc_status s = table_alloc(rt, dev, p, range, 1, &t);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, range * 4, &flags);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "group_by", kname, &lk);
    if (s != COPROC_OK)
        goto done;
    coproc__args a = {lk->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, keys->mem);
    COPROC__ARG(a, nn);
    if (wide)
        COPROC__ARG(a, base64);
    else
        COPROC__ARG(a, base32);
    COPROC__ARG(a, nrange);
    if (dev->cpu_path) {
        /* Private tables (unless w's), then merged slot by slot. */
        cl_mem tables = w ? w->part : NULL, win = w ? w->win : NULL;
        cl_ulong W = w ? w->W : 0, mask = wide ? UINT64_MAX : UINT32_MAX;
        cl_ulong null_slot = kvalid ? range - 1 : UINT64_MAX; /* where w's tables keep it */
        if (!w)
            s = coproc__buffer_new(rt, dev, P * range * entry, &part);
        if (s == COPROC_OK)
            s = coproc__kernel_borrow(rt, dev, "group_by", mname, &lkm);
        if (s != COPROC_OK)
            goto done;
        if (!w) {
            tables = win = part; /* win unread when W = 0 */
            COPROC__ARG(a, kvalid);
            if (p->vc == VC_V32) {
                COPROC__ARG(a, values->mem);
                COPROC__ARG(a, flip32);
                COPROC__ARG(a, vvalid);
            } else if (p->vc == VC_V64) {
                COPROC__ARG(a, values->mem);
                COPROC__ARG(a, p->flip64);
                COPROC__ARG(a, vvalid);
            }
            COPROC__ARG(a, part);
            coproc__geometry g = {.groups = P, .local = 1, .global = P};
            s = coproc__launch(rt, dev, &a, &g, kname);
            if (s != COPROC_OK)
                goto done;
        }
        coproc__args m = {lkm->kernel, 0, CL_SUCCESS};
        COPROC__ARG(m, tables);
        COPROC__ARG(m, P32);
        COPROC__ARG(m, nrange);
        COPROC__ARG(m, W);
        COPROC__ARG(m, win);
        COPROC__ARG(m, base64);
        COPROC__ARG(m, mask);
        COPROC__ARG(m, null_slot);
        COPROC__ARG(m, t.cnt);
        if (p->vc != VC_NONE)
            COPROC__ARG(m, t.sum);
        if (p->mm) {
            COPROC__ARG(m, t.mn);
            COPROC__ARG(m, t.mx);
        }
        if (p->vc == VC_V64 && p->mm) {
            COPROC__ARG(m, t.mnhi);
            COPROC__ARG(m, t.mxhi);
        }
        COPROC__ARG(m, flags);
        coproc__geometry gm = gb_geometry(dev, range, 0, 1 + (P + 1)); /* a slot: P tables */
        s = coproc__launch(rt, dev, &m, &gm, mname);
    } else {
        /* One table of per-slot words, cleared by gb_init; a local copy of it
         * per work-group when it fits. */
        s = coproc__kernel_borrow(rt, dev, "group_by", "gb_init", &lkm);
        if (s == COPROC_OK) /* gb_init's control words, unused here */
            s = coproc__lease_scratch(rt, dev, lkm, 4 * sizeof(cl_uint));
        if (s != COPROC_OK)
            goto done;
        cl_uint what = p->init, nw = 0;
        cl_mem ctl = lkm->scratch;
        coproc__args b = {lkm->kernel, 0, CL_SUCCESS};
        COPROC__ARG(b, nrange);
        COPROC__ARG(b, what);
        COPROC__ARG(b, flags); /* no key words (nw = 0) */
        COPROC__ARG(b, nw);
        COPROC__ARG(b, t.cnt);
        cl_mem mm[] = {or_spare(t.sum, flags), or_spare(t.mn, flags), or_spare(t.mx, flags),
                       or_spare(t.mnhi, flags), or_spare(t.mxhi, flags),
                       or_spare(t.emax, flags), or_spare(t.fl, flags)};
        COPROC__ARG(b, mm[0]);
        COPROC__ARG(b, p->sw);
        for (int i = 1; i < 7; i++)
            COPROC__ARG(b, mm[i]);
        COPROC__ARG(b, ctl);
        coproc__geometry gi = gb_geometry(dev, range, 0, init_steps(p, 0));
        s = coproc__launch(rt, dev, &b, &gi, "gb_init");
        if (s != COPROC_OK)
            goto done;
        size_t budget = dev->info.local_mem_bytes;
        budget = budget > LOCAL_TABLE_BYTES + 2048 ? LOCAL_TABLE_BYTES
                 : budget > 4096                   ? budget - 2048
                                                   : budget / 2;
        /* count; sum lo, hi; min, max */
        size_t words = p->vc == VC_NONE ? 1 : p->mm ? 5 : 3;
        cl_uint L = range * words * 4 <= budget ? (cl_uint)range : 0;
        coproc__geometry g = coproc__geometry_for(dev, n, 0);
        /* Loop steps: a row's sum words; a local entry's clearing and merging. */
        uint64_t sw = p->vc == VC_NONE ? 0 : 2;
        uint64_t entries = (L + g.local - 1) / g.local;
        g = gb_geometry(dev, n, entries * ((1 + sw + 1) + (1 + (sw + 1) + (sw + 1))), 1 + sw + 1);
        cl_mem vals = values ? values->mem : keys->mem;
        COPROC__ARG(a, kvalid);
        COPROC__ARG(a, vals);
        COPROC__ARG(a, flip32);
        COPROC__ARG(a, t.cnt);
        COPROC__ARG(a, mm[0]);
        COPROC__ARG(a, mm[1]);
        COPROC__ARG(a, mm[2]);
        COPROC__ARG_LOCAL(a, L ? (size_t)L * words * 4 : 4);
        COPROC__ARG(a, L);
        s = coproc__launch(rt, dev, &a, &g, kname);
        if (s != COPROC_OK)
            goto done;
        coproc__kernel_return(dev, lkm);
        lkm = NULL;
        s = coproc__kernel_borrow(rt, dev, "group_by", "gb_flags", &lkm);
        if (s != COPROC_OK)
            goto done;
        coproc__args f = {lkm->kernel, 0, CL_SUCCESS};
        COPROC__ARG(f, t.cnt);
        COPROC__ARG(f, nrange);
        COPROC__ARG(f, flags);
        s = coproc__launch(rt, dev, &f, &gi, "gb_flags");
    }
    if (s != COPROC_OK)
        goto done;
    if (part) {
        clReleaseMemObject(part);
        part = NULL;
    }

    /* Group g is the g-th occupied slot: already in key order. */
    uint64_t groups = 0;
    s = coproc__flags_to_positions(rt, dev, flags, range, &pos, &groups);
    if (s == COPROC_OK)
        s = result_alloc(rt, dev, p, keys->type, values, (size_t)groups, &r);
    if (s != COPROC_OK)
        goto done;
    coproc__kernel_return(dev, lk);
    lk = NULL;
    const char *keyname = wide ? "gb_dense_keys_k64" : "gb_dense_keys_k32";
    s = coproc__kernel_borrow(rt, dev, "group_by", keyname, &lk);
    if (s == COPROC_OK && groups > 0) {
        cl_ulong ng = groups;
        coproc__geometry gk = coproc__geometry_for(dev, (size_t)groups, 0);
        coproc__args c = {lk->kernel, 0, CL_SUCCESS};
        COPROC__ARG(c, pos);
        COPROC__ARG(c, ng);
        if (wide)
            COPROC__ARG(c, base64);
        else
            COPROC__ARG(c, base32);
        COPROC__ARG(c, r.keys->mem);
        s = coproc__launch(rt, dev, &c, &gk, keyname);
        if (s == COPROC_OK)
            s = write_aggregates(rt, dev, p, &t, pos, (size_t)groups, pos, 0, &r);
        if (s == COPROC_OK && kvalid)
            s = mark_null_group(rt, dev, pos, range, &r);
    }
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_group_by on device %d", dev->index);
    }
done:
    if (s == COPROC_OK)
        *out = r;
    else
        coproc_group_result_free(&r);
    table_release(&t);
    cl_mem bufs[] = {part, flags, pos};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    coproc__kernel_return(dev, lk);
    coproc__kernel_return(dev, lkm);
    return s;
}

/*
 * The CPU path without the key-range pass (a pass over the keys, a third of
 * the dense pass's time): gb_wdense_* aggregates each work-item's rows into a
 * table of DENSE_WINDOW slots around its first key and reports the keys it
 * saw; when every row fitted and the range is dense, dense_group_by merges
 * those tables. *used = 0 when not (the caller measures the range then).
 */
static coproc_status dense_window(coproc_runtime *rt, coproc__device *dev, const gb_plan *p,
                                  const coproc_column *keys, const coproc_column *values,
                                  cl_mem kvalid, cl_mem vvalid, uint64_t flip,
                                  coproc_group_result *out, int *used)
{
    size_t n = keys->length, entry;
    int wide = coproc_type_size(keys->type) == 8;
    const char *vname = dense_entry(p, values, &entry);
    *used = 0;
    uint64_t per_row = kvalid || vvalid ? NULLS_STEPS_PER_ROW : 1;
    size_t P = dense_partitions(dev, n, DENSE_WINDOW + 1, entry, per_row);
    /* Loop steps where the driver limits them: gb_wdense_* walks its table
     * twice (clearing, then the occupied slots) besides its rows. */
    uint64_t budget = step_budget(dev);
    if (!P || (budget && 2 * (DENSE_WINDOW + 2) + per_row * ((n + P - 1) / P + 1) > budget))
        return COPROC_OK;
    char kname[48];
    snprintf(kname, sizeof kname, "gb_wdense_k%d_%s%s", wide ? 64 : 32, vname,
             values && !p->mm ? "_sum" : "");
    /* The windows' bases and key ranges: the lease's scratch and its host copy. */
    coproc__kernel_lease *l = NULL;
    dense_win w = {NULL, NULL, P, DENSE_WINDOW};
    coproc_status s = coproc__kernel_borrow(rt, dev, "group_by", kname, &l);
    if (s == COPROC_OK)
        s = coproc__lease_scratch(rt, dev, l, P * 4 * sizeof(cl_ulong));
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, P * (DENSE_WINDOW + 1) * entry, &w.part);
    if (s != COPROC_OK)
        goto done;
    w.win = l->scratch;
    cl_ulong nn = n, W = DENSE_WINDOW, kflip64 = flip;
    cl_uint kflip32 = (cl_uint)flip, flip32 = p->flip32;
    cl_mem vals = values ? values->mem : keys->mem; /* unread without values */
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, keys->mem);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, W);
    if (wide)
        COPROC__ARG(a, kflip64);
    else
        COPROC__ARG(a, kflip32);
    COPROC__ARG(a, kvalid);
    COPROC__ARG(a, vals);
    if (p->vc == VC_V64)
        COPROC__ARG(a, p->flip64);
    else
        COPROC__ARG(a, flip32);
    COPROC__ARG(a, vvalid);
    COPROC__ARG(a, w.part);
    COPROC__ARG(a, w.win);
    coproc__geometry g = {.groups = P, .local = 1, .global = P};
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s != COPROC_OK)
        goto done;
    cl_ulong *win = l->scratch_host;
    cl_int err =
        coproc__read_now(dev, dev->queue, w.win, 0, P * 4 * sizeof(cl_ulong), win, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: reading the windows from device %d", kname, dev->index);
        goto done;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < P; i++) {
        if (win[4 * i + 3])
            goto done; /* a key outside its work-item's window: not used */
        lo = win[4 * i + 1] < lo ? win[4 * i + 1] : lo;
        hi = win[4 * i + 2] > hi ? win[4 * i + 2] : hi;
    }
    /* Every key fitted; the range as coproc__group_by_run would find it
     * (n >= 1, so lo <= hi unless every key is null), and the null keys' slot. */
    uint64_t extra = kvalid ? 1 : 0;
    if (lo > hi && kvalid)
        lo = hi = 0;
    if (lo <= hi && hi - lo < DENSE_MAX_RANGE &&
        hi - lo + 1 + extra <= 2 * (uint64_t)n + DENSE_SLACK)
        s = dense_group_by(rt, dev, p, keys, values, lo ^ flip, hi - lo + 1 + extra, out, used, &w,
                           kvalid, vvalid);
done:
    if (w.part)
        clReleaseMemObject(w.part);
    coproc__kernel_return(dev, l);
    return s;
}

/*
 * Nulls read by the dense kernels (cl/group_by.cl): a row with a null value
 * is one of its group's rows (the group exists) but not in its count or
 * aggregates (the CPU path only); rows with a null key make one more slot
 * past the key range (the last group, its key made null; both paths).
 * *used = 0 (nothing done) where the dense path does not apply (float
 * values, keys not dense, null values on the GPU path): the caller composes
 * the null-free group-by then.
 */
static coproc_status group_by_nulls_dense(coproc_runtime *rt, const coproc_column *keys,
                                          const coproc_column *values, unsigned aggs,
                                          coproc_group_result *r, int *used)
{
    coproc__device *dev = keys->dev;
    size_t n = keys->length;
    *used = 0;
    if (n == 0 || (!dev->cpu_path && coproc__has_nulls(values)))
        return COPROC_OK;
    unsigned run_aggs = aggs;
    int value_aggs = (aggs & (COPROC_GROUP_SUM | COPROC_GROUP_MIN | COPROC_GROUP_MAX)) != 0;
    if (!value_aggs && !coproc__has_nulls(values))
        values = NULL; /* counts only: the values are not read */
    else if (!value_aggs)
        run_aggs |= COPROC_GROUP_SUM; /* count(col): the sum kernels count valid values */
    gb_plan p;
    make_plan(dev, keys, values, run_aggs, &p);
    if (!dense_possible(dev, &p))
        return COPROC_OK;
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "group_by", &built);
    if (s != COPROC_OK)
        return s;
    uint64_t flip = !is_signed_int(keys->type)          ? 0
                    : coproc_type_size(keys->type) == 4 ? 0x80000000u
                                                        : 0x8000000000000000ull;
    cl_mem kvalid = keys->validity ? keys->validity->mem : NULL;
    cl_mem vvalid = coproc__has_nulls(values) ? values->validity->mem : NULL;
    if (dev->cpu_path)
        s = dense_window(rt, dev, &p, keys, values, kvalid, vvalid, flip, r, used);
    if (s == COPROC_OK && !*used) {
        uint64_t lo = 0, hi = 0, extra = kvalid ? 1 : 0; /* the null keys' slot */
        s = key_range(rt, dev, keys, kvalid, flip, &lo, &hi);
        if (lo > hi) /* every key null: only the null group's slot is used */
            lo = hi = 0;
        if (s == COPROC_OK && hi - lo < DENSE_MAX_RANGE &&
            hi - lo + 1 + extra <= 2 * (uint64_t)n + DENSE_SLACK)
            s = dense_group_by(rt, dev, &p, keys, values, lo ^ flip, hi - lo + 1 + extra, r, used,
                               NULL, kvalid, vvalid);
    }
    if (s == COPROC_OK && *used)
        coproc__group_result_keep(r, aggs);
    return s;
}

void coproc__group_result_keep(coproc_group_result *r, unsigned aggs)
{
    if (aggs == 0)
        return;
    coproc_column **c[] = {&r->sum, &r->min, &r->max};
    const unsigned bit[] = {COPROC_GROUP_SUM, COPROC_GROUP_MIN, COPROC_GROUP_MAX};
    for (int i = 0; i < 3; i++)
        if (!(aggs & bit[i])) {
            coproc_column_free(*c[i]);
            *c[i] = NULL;
        }
}

/* ---- nulls (coproc.h). With dense keys and integer values or none, the
 * kernels read the bitmaps (group_by_nulls_dense, above): on the CPU path
 * the keys' and values', on the GPU path the keys' (values without nulls).
 * Otherwise composed from the null-free group-by, as follows.
 * Keys with nulls: the null keys are given a key no row has (one past the
 * largest raw key, or one before the smallest: a sentinel), so the null rows
 * make one group in the same group-by; that group is then moved last and
 * its key marked null. Only when the keys span their type's whole range is
 * there no sentinel: then the rows with a null key are set aside (compacted
 * away) and their group made by reductions (reduce_where) and appended.
 * Values with nulls: for sums and counts only, the nulls' values are made 0
 * (the sums stay right) and the counts lose the null rows of each group (a
 * count-only group-by of those few rows' keys); with min or max asked, the
 * groups of every row (counts only) and the aggregates of the rows with a
 * valid value (compacted), the latter spread over the former when a group
 * has no valid value. sum, min and max are then null where count is 0. */

/* The result column pointers of r, in a fixed order: count, sum, min, max. */
static void agg_columns(coproc_group_result *r, coproc_column **c[4])
{
    c[0] = &r->count;
    c[1] = &r->sum;
    c[2] = &r->min;
    c[3] = &r->max;
}

/* v (a scalar a reduction made) as the bytes of a t column's element. */
static void scalar_bytes(coproc_type t, const coproc_scalar *v, unsigned char b[8])
{
    memset(b, 0, 8);
    switch (t) {
    case COPROC_INT32: {
        int32_t x = (int32_t)v->v.i64;
        memcpy(b, &x, 4);
        break;
    }
    case COPROC_UINT32: {
        uint32_t x = (uint32_t)v->v.u64;
        memcpy(b, &x, 4);
        break;
    }
    case COPROC_FLOAT32: {
        float x = (float)v->v.f64;
        memcpy(b, &x, 4);
        break;
    }
    default:
        memcpy(b, &v->v, 8);
        break; /* int64, uint64, float64: the member's bits */
    }
}

/* *col (a device column without validity) one row longer, the bytes at v
 * the new last row. */
static coproc_status append_row(coproc_runtime *rt, coproc_column **col, const void *v)
{
    coproc_column *c = *col, *out = NULL;
    coproc__device *dev = c->dev;
    size_t es = coproc_type_size(c->type);
    coproc_status s = coproc__column_new(rt, dev, c->type, c->length + 1, &out);
    if (s != COPROC_OK)
        return s;
    s = coproc__nulls_copy(rt, dev, c->mem, 0, out->mem, 0, c->length * es);
    if (s == COPROC_OK)
        s = coproc__nulls_put(rt, dev, out->mem, c->length * es, v, es);
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    coproc_column_free(c);
    *col = out;
    return COPROC_OK;
}

/* Step 2 when some groups of `all` (counts only) are missing from `val`
 * (the aggregates of the rows with a valid value): val's aggregates moved to
 * all's groups (0 where a group has no valid value); val takes all's keys. */
static coproc_status spread_groups(coproc_runtime *rt, coproc_group_result *all,
                                   coproc_group_result *val)
{
    coproc__device *dev = all->keys->dev;
    coproc_join_result j = {0, NULL, NULL};
    coproc_status s = coproc__hash_join_run(rt, val->keys, all->keys, &j);
    coproc_column **c[4];
    agg_columns(val, c);
    for (int i = 0; i < 4 && s == COPROC_OK; i++) {
        if (!*c[i])
            continue;
        coproc_column *full = NULL, *picked = NULL;
        s = coproc__column_new(rt, dev, (*c[i])->type, all->groups, &full);
        if (s == COPROC_OK && all->groups) {
            unsigned char zero[8] = {0};
            size_t es = coproc_type_size(full->type);
            cl_int err = coproc__enqueue_fill(dev, dev->queue, full->mem, zero, es, 0,
                                              all->groups * es, 0, NULL, NULL);
            if (err != CL_SUCCESS)
                s = coproc__fail_cl(rt, err, "coproc_group_by: clEnqueueFillBuffer on device %d",
                                    dev->index);
        }
        if (s == COPROC_OK)
            s = coproc__gather_run(rt, *c[i], j.left, &picked);
        if (s == COPROC_OK)
            s = coproc__scatter_run(rt, picked, j.right, full);
        coproc_column_free(picked);
        if (s != COPROC_OK) {
            coproc_column_free(full);
            break;
        }
        coproc_column_free(*c[i]);
        *c[i] = full;
    }
    coproc_join_result_free(&j);
    if (s == COPROC_OK) {
        coproc_column_free(val->keys);
        val->keys = all->keys;
        all->keys = NULL;
        val->groups = all->groups;
    }
    return s;
}

/* Take out of r the rows whose value is null (their keys kk and, for
 * integer sums, their values raw, at the unset bits of valid): each group's
 * count loses them, and (raw not NULL) its sum their values, which integer
 * sums (wrapping) take back exactly. A count-only group-by of those rows -
 * few where nulls are few - joined to r's keys, scattered, subtracted. */
static coproc_status drop_null_rows(coproc_runtime *rt, const coproc_column *kk,
                                    const coproc_column *raw, const coproc_column *valid,
                                    coproc_group_result *r)
{
    coproc__device *dev = kk->dev;
    size_t n = kk->length;
    coproc_column *nulls = NULL, *kn = NULL, *xn = NULL;
    coproc_group_result gn;
    memset(&gn, 0, sizeof gn);
    coproc_join_result j = {0, NULL, NULL};
    coproc_column vb = coproc__without_nulls(valid);
    coproc_status s = coproc__nulls_not(rt, dev, &vb, n, &nulls);
    if (s == COPROC_OK)
        s = coproc__compact_run(rt, kk, nulls, &kn);
    if (s != COPROC_OK || kn->length == 0)
        goto done;
    if (raw && r->sum && (s = coproc__compact_run(rt, raw, nulls, &xn)) != COPROC_OK)
        goto done;
    s = coproc__group_by_run(rt, kn, xn, COPROC_GROUP_COUNT | (xn ? COPROC_GROUP_SUM : 0), 0, &gn);
    if (s == COPROC_OK)
        s = coproc__hash_join_run(rt, gn.keys, r->keys, &j);
    coproc_column *from[2] = {gn.count, gn.sum}, **to[2] = {&r->count, &r->sum};
    for (int i = 0; i < 2 && s == COPROC_OK; i++) {
        if (!from[i])
            continue;
        coproc_column *sub = NULL, *picked = NULL, *less = NULL;
        size_t es = coproc_type_size(from[i]->type);
        s = coproc__column_new(rt, dev, from[i]->type, r->groups, &sub);
        if (s == COPROC_OK && r->groups) {
            uint64_t zero = 0;
            cl_int err = coproc__enqueue_fill(dev, dev->queue, sub->mem, &zero, es, 0,
                                              r->groups * es, 0, NULL, NULL);
            if (err != CL_SUCCESS)
                s = coproc__fail_cl(rt, err, "coproc_group_by: clEnqueueFillBuffer on device %d",
                                    dev->index);
        }
        if (s == COPROC_OK)
            s = coproc__gather_run(rt, from[i], j.left, &picked);
        if (s == COPROC_OK)
            s = coproc__scatter_run(rt, picked, j.right, sub);
        if (s == COPROC_OK)
            s = coproc__map_run(rt, COPROC_ARITH_SUB, *to[i], sub, &less);
        if (s == COPROC_OK) {
            coproc_column_free(*to[i]);
            *to[i] = less;
        }
        coproc_column_free(sub);
        coproc_column_free(picked);
    }
done:
    coproc_column_free(nulls);
    coproc_column_free(kn);
    coproc_column_free(xn);
    coproc_join_result_free(&j);
    coproc_group_result_free(&gn);
    return s;
}

/* The groups of kk (no nulls) over values that may have nulls: count is the
 * valid values of each group; sum, min, max over them (their validity is
 * set by the caller). */
static coproc_status group_values(coproc_runtime *rt, const coproc_column *kk,
                                  const coproc_column *values, unsigned aggs, int sorted,
                                  coproc_group_result *r)
{
    if (!coproc__has_nulls(values))
        return coproc__group_by_run(rt, kk, values, aggs, sorted, r);
    coproc_status s;
    coproc_column raw = coproc__without_nulls(values);
    if (!(aggs & (COPROC_GROUP_MIN | COPROC_GROUP_MAX)) && coproc__is_key_type(values->type)) {
        /* integer sums and counts: every row grouped, then the null rows'
         * counts and values (few, compacted) taken back out */
        s = coproc__group_by_run(rt, kk, &raw, aggs, sorted, r);
        if (s == COPROC_OK && (s = drop_null_rows(rt, kk, &raw, values->validity, r)) != COPROC_OK)
            coproc_group_result_free(r);
        return s;
    }
    if (!(aggs & (COPROC_GROUP_MIN | COPROC_GROUP_MAX))) { /* float sums: nulls as 0 */
        unsigned char zero[8] = {0};
        coproc_column *filled = NULL;
        s = coproc__nulls_fill(rt, values, zero, &filled);
        if (s == COPROC_OK)
            s = coproc__group_by_run(rt, kk, filled, aggs, sorted, r);
        coproc_column_free(filled);
        if (s == COPROC_OK && (s = drop_null_rows(rt, kk, NULL, values->validity, r)) != COPROC_OK)
            coproc_group_result_free(r);
        return s;
    }
    coproc_group_result all;
    memset(&all, 0, sizeof all);
    coproc_column *k2 = NULL, *x2 = NULL;
    coproc_column vb = coproc__without_nulls(values->validity);
    s = coproc__group_by_run(rt, kk, NULL, COPROC_GROUP_COUNT, sorted, &all);
    if (s == COPROC_OK)
        s = coproc__compact_run(rt, kk, &vb, &k2);
    if (s == COPROC_OK)
        s = coproc__compact_run(rt, &raw, &vb, &x2);
    if (s == COPROC_OK)
        s = coproc__group_by_run(rt, k2, x2, aggs, sorted, r);
    if (s == COPROC_OK && r->groups < all.groups && (s = spread_groups(rt, &all, r)) != COPROC_OK)
        coproc_group_result_free(r);
    coproc_column_free(k2);
    coproc_column_free(x2);
    coproc_group_result_free(&all);
    return s;
}

/* Every column of r with row g moved to the end (the others keep their order). */
static coproc_status move_group_last(coproc_runtime *rt, coproc_group_result *r, size_t g)
{
    coproc_column **c[5] = {&r->keys, &r->count, &r->sum, &r->min, &r->max};
    size_t n = r->groups;
    if (g + 1 == n)
        return COPROC_OK;
    for (int i = 0; i < 5; i++) {
        coproc_column *col = *c[i], *out = NULL;
        if (!col)
            continue;
        coproc__device *dev = col->dev;
        size_t es = coproc_type_size(col->type);
        coproc_status s = coproc__column_new(rt, dev, col->type, n, &out);
        if (s != COPROC_OK)
            return s;
        s = coproc__nulls_copy(rt, dev, col->mem, 0, out->mem, 0, g * es);
        if (s == COPROC_OK)
            s = coproc__nulls_copy(rt, dev, col->mem, (g + 1) * es, out->mem, g * es,
                                   (n - g - 1) * es);
        if (s == COPROC_OK)
            s = coproc__nulls_copy(rt, dev, col->mem, g * es, out->mem, (n - 1) * es, es);
        if (s != COPROC_OK) {
            coproc_column_free(out);
            return s;
        }
        coproc_column_free(col);
        *c[i] = out;
    }
    return COPROC_OK;
}

/* Keys with nulls at the ends of their type's range (no sentinel): the rows
 * with a null key compacted away, their group made by reductions, appended. */
static coproc_status group_null_keys_apart(coproc_runtime *rt, const coproc_column *keys,
                                           const coproc_column *values, unsigned aggs, int sorted,
                                           coproc_group_result *r)
{
    coproc__device *dev = keys->dev;
    size_t n = keys->length;
    coproc_column rk = coproc__without_nulls(keys), bits = coproc__without_nulls(keys->validity);
    coproc_column *k1 = NULL, *x1 = NULL, *null_rows = NULL, *valid = NULL;
    coproc_status s = coproc__compact_run(rt, &rk, &bits, &k1);
    if (s == COPROC_OK && values)
        s = coproc__compact_run(rt, values, &bits, &x1); /* keeps the values' nulls */
    if (s == COPROC_OK)
        s = coproc__nulls_not(rt, dev, &bits, n, &null_rows);
    if (s == COPROC_OK)
        s = group_values(rt, k1, x1, aggs, sorted, r);
    if (s == COPROC_OK && k1->length < n) {
        coproc_column **c[4];
        agg_columns(r, c);
        static const coproc_reduce_op ops[4] = {COPROC_REDUCE_COUNT, COPROC_REDUCE_SUM,
                                                COPROC_REDUCE_MIN, COPROC_REDUCE_MAX};
        unsigned char bytes[8] = {0};
        s = append_row(rt, &r->keys, bytes);
        for (int i = 0; i < 4 && s == COPROC_OK; i++) {
            if (!*c[i])
                continue;
            coproc_scalar v;
            if (values) /* count: the valid values of the null-key rows */
                s = coproc__reduce_where_run(rt, ops[i], values, null_rows, &v);
            else
                v.v.u64 = n - k1->length;
            if (s == COPROC_OK) {
                scalar_bytes((*c[i])->type, &v, bytes);
                s = append_row(rt, c[i], bytes);
            }
        }
        r->groups++;
        if (s == COPROC_OK)
            s = coproc__nulls_range(rt, dev, r->groups, 0, r->groups - 1, &valid);
        if (s == COPROC_OK)
            coproc__attach_validity(r->keys, valid);
    }
    coproc_column_free(k1);
    coproc_column_free(x1);
    coproc_column_free(null_rows);
    return s; /* on failure the caller frees r */
}

/* Keys with nulls: the null keys replaced by a sentinel key (one no row has),
 * grouped with the others, that group moved last and its key made null.
 * *done = 0 when the keys leave no room for a sentinel. */
static coproc_status group_null_keys_sentinel(coproc_runtime *rt, const coproc_column *keys,
                                              const coproc_column *values, unsigned aggs,
                                              int sorted, coproc_group_result *r, int *done)
{
    coproc__device *dev = keys->dev;
    int wide = coproc_type_size(keys->type) == 8;
    uint64_t flip = is_signed_int(keys->type) ? (wide ? 0x8000000000000000ull : 0x80000000u) : 0;
    uint64_t top = wide ? UINT64_MAX : 0xFFFFFFFFu, lo = 0, hi = 0;
    coproc_column rk = coproc__without_nulls(keys);
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "group_by", &built);
    if (s == COPROC_OK)
        s = key_range(rt, dev, &rk, NULL, flip, &lo, &hi); /* raw keys: nulls' garbage included */
    *done = 0;
    if (s != COPROC_OK || (hi == top && lo == 0))
        return s;
    *done = 1;
    uint64_t sentinel = (hi < top ? hi + 1 : lo - 1) ^ flip; /* ordered form back to bits */
    unsigned char bytes[8];
    uint32_t s32 = (uint32_t)sentinel;
    memcpy(bytes, wide ? (const void *)&sentinel : (const void *)&s32, wide ? 8 : 4);
    coproc_column *kfill = NULL, *pos = NULL, *valid = NULL;
    s = coproc__nulls_fill(rt, keys, bytes, &kfill);
    if (s == COPROC_OK)
        s = group_values(rt, kfill, values, aggs, sorted, r);
    coproc_column_free(kfill);
    if (s != COPROC_OK)
        return s;
    /* the sentinel's group (none when no key was null after all) */
    coproc_filter f = {.first = {.col = r->keys, .cmp = COPROC_CMP_EQ}};
    if (is_signed_int(keys->type))
        f.first.a.i64 = wide ? (int64_t)sentinel : (int64_t)(int32_t)s32;
    else
        f.first.a.u64 = wide ? sentinel : s32;
    uint64_t found = 0;
    s = coproc__select_run(rt, &f, &pos, &found);
    if (s == COPROC_OK && found) {
        uint32_t g = 0;
        s = coproc_column_download(pos, &g, 1);
        if (s == COPROC_OK)
            s = move_group_last(rt, r, g);
        if (s == COPROC_OK)
            s = coproc__nulls_range(rt, dev, r->groups, 0, r->groups - 1, &valid);
        if (s == COPROC_OK)
            coproc__attach_validity(r->keys, valid);
    }
    coproc_column_free(pos);
    return s;
}

static coproc_status group_by_nulls(coproc_runtime *rt, const coproc_column *keys,
                                    const coproc_column *values, unsigned aggs, int sorted,
                                    coproc_group_result *out)
{
    coproc__device *dev = keys->dev;
    coproc_group_result r;
    memset(&r, 0, sizeof r);
    int dense = 0; /* the nulls read in the kernels (the CPU path's dense keys) */
    coproc_status s = group_by_nulls_dense(rt, keys, values, aggs, &r, &dense);
    if (s == COPROC_OK && !dense && !keys->validity) {
        s = group_values(rt, keys, values, aggs, sorted, &r);
    } else if (s == COPROC_OK && !dense) {
        int done = 0;
        s = keys->length ? group_null_keys_sentinel(rt, keys, values, aggs, sorted, &r, &done)
                         : COPROC_OK;
        if (s == COPROC_OK && !done) {
            coproc_group_result_free(&r);
            s = group_null_keys_apart(rt, keys, values, aggs, sorted, &r);
        }
    }
    /* sum, min, max null where no value was */
    if (s == COPROC_OK && coproc__has_nulls(values) && (r.sum || r.min || r.max)) {
        coproc_column *valid = NULL;
        coproc_filter f = {.first = {.col = r.count, .cmp = COPROC_CMP_GT, .a = {.u64 = 0}}};
        s = coproc__select_bitmap_run(rt, &f, &valid, NULL);
        coproc_column *agg[3] = {r.sum, r.min, r.max};
        for (int i = 0; i < 3 && s == COPROC_OK; i++)
            if (agg[i])
                s = coproc__nulls_give_and(rt, &agg[i], valid, NULL);
        r.sum = agg[0]; /* give_and frees a column it fails on */
        r.min = agg[1];
        r.max = agg[2];
        coproc_column_free(valid);
    }
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_group_by on device %d", dev->index);
    }
    if (s != COPROC_OK) {
        coproc_group_result_free(&r);
        return s;
    }
    *out = r;
    return COPROC_OK;
}

coproc_status coproc__group_by_run(coproc_runtime *rt, const coproc_column *keys,
                                   const coproc_column *values, unsigned aggs, int sorted,
                                   coproc_group_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_group_by: out is NULL");
    memset(out, 0, sizeof *out);
    coproc_status s = coproc__column_check(rt, keys, NULL, "coproc_group_by: keys");
    if (s != COPROC_OK)
        return s;
    if (values) {
        s = coproc__column_check(rt, values, keys->dev, "coproc_group_by: values");
        if (s != COPROC_OK)
            return s;
    }
    if (!coproc__is_key_type(keys->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_group_by: keys of type %s; "
                            "keys must be integers", coproc_type_name(keys->type));
    if (values && (unsigned)values->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_group_by: invalid value type");
    if (values && values->length != keys->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_group_by: %zu keys but %zu "
                            "values", keys->length, values->length);
    size_t n = keys->length;
    if (n > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_group_by: %zu rows; at most "
                            "2^32 - 1", n);
    if (aggs == 0)
        aggs = COPROC_GROUP_ALL;
    if (keys->validity || coproc__has_nulls(values))
        return group_by_nulls(rt, keys, values, aggs, sorted, out);
    if (!(aggs & (COPROC_GROUP_SUM | COPROC_GROUP_MIN | COPROC_GROUP_MAX)))
        values = NULL; /* counts only: the values are not read */

    coproc__device *dev = keys->dev;
    gb_plan p;
    make_plan(dev, keys, values, aggs, &p);
    coproc_group_result r;
    memset(&r, 0, sizeof r);
    gb_table t;
    memset(&t, 0, sizeof t);
    cl_mem row_slot = NULL, ctl = NULL, flags = NULL, pos = NULL, rank = NULL;
    coproc__kernel_lease *lflags = NULL;
    coproc_column *tmp_keys = NULL;
    if (n == 0) {
        s = result_alloc(rt, dev, &p, keys->type, values, 0, &r);
        goto done;
    }
    /* Built before any geometry is made: the build tells the work-group limit
     * its kernels allow (program.c). */
    cl_program built;
    s = coproc__program_get(rt, dev, "group_by", &built);
    if (s != COPROC_OK)
        goto done;
    if (dense_possible(dev, &p)) {
        uint64_t flip = is_signed_int(keys->type)
                            ? (coproc_type_size(keys->type) == 4 ? 0x80000000u
                                                                 : 0x8000000000000000ull)
                            : 0;
        uint64_t lo = 0, hi = 0;
        int used = 0;
        if (dev->cpu_path) {
            s = dense_window(rt, dev, &p, keys, values, NULL, NULL, flip, &r, &used);
            if (s != COPROC_OK || used)
                goto done;
        }
        s = key_range(rt, dev, keys, NULL, flip, &lo, &hi);
        if (s != COPROC_OK)
            goto done;
        if (hi - lo < DENSE_MAX_RANGE && hi - lo + 1 <= 2 * (uint64_t)n + DENSE_SLACK) {
            s = dense_group_by(rt, dev, &p, keys, values, lo ^ flip, hi - lo + 1, &r, &used, NULL,
                               NULL, NULL);
            if (s != COPROC_OK || used)
                goto done;
        }
    }

    s = coproc__buffer_new(rt, dev, n * 4, &row_slot);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, 4 * sizeof(cl_uint), &ctl);
    if (s != COPROC_OK)
        goto done;
    size_t cap = coproc__next_pow2(2 * n);
    if (cap > FIRST_CAPACITY_MAX)
        cap = FIRST_CAPACITY_MAX;
    s = insert_rows(rt, dev, &p, keys, values, row_slot, ctl, cap, &t);
    if (s != COPROC_OK)
        goto done;
    s = aggregate_rows(rt, dev, &p, values, n, row_slot, ctl, &t);
    if (s != COPROC_OK)
        goto done;
    clReleaseMemObject(row_slot);
    row_slot = NULL;

    /* Number the occupied slots: group g is the g-th one. */
    s = coproc__buffer_new(rt, dev, t.cap * 4, &flags);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "group_by", "gb_flags", &lflags);
    if (s != COPROC_OK)
        goto done;
    cl_ulong ncap = t.cap;
    coproc__geometry gf = coproc__geometry_for(dev, t.cap, 0);
    coproc__args a = {lflags->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, t.cnt);
    COPROC__ARG(a, ncap);
    COPROC__ARG(a, flags);
    s = coproc__launch(rt, dev, &a, &gf, "gb_flags");
    uint64_t groups = 0;
    if (s == COPROC_OK)
        s = coproc__flags_to_positions(rt, dev, flags, t.cap, &pos, &groups);
    if (s != COPROC_OK)
        goto done;
    clReleaseMemObject(flags);
    flags = NULL;

    s = result_alloc(rt, dev, &p, keys->type, values, (size_t)groups, &r);
    if (s != COPROC_OK)
        goto done;
    cl_uint use_dest = 0;
    cl_mem dest = ctl; /* unused placeholder unless sorted */
    if (sorted && groups > 1) {
        s = coproc__column_new(rt, dev, keys->type, (size_t)groups, &tmp_keys);
        if (s == COPROC_OK)
            s = write_keys(rt, dev, &p, &t, pos, (size_t)groups, ctl, 0, tmp_keys->mem);
        if (s == COPROC_OK)
            s = key_ranks(rt, dev, tmp_keys, &rank);
        if (s != COPROC_OK)
            goto done;
        use_dest = 1;
        dest = rank;
    }
    s = write_keys(rt, dev, &p, &t, pos, (size_t)groups, dest, use_dest, r.keys->mem);
    if (s == COPROC_OK)
        s = write_aggregates(rt, dev, &p, &t, pos, (size_t)groups, dest, use_dest, &r);
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_group_by on device %d", dev->index);
    }
done:
    if (s == COPROC_OK) {
        coproc__group_result_keep(&r, aggs);
        *out = r;
    } else {
        coproc_group_result_free(&r);
    }
    coproc_column_free(tmp_keys);
    table_release(&t);
    cl_mem bufs[] = {row_slot, ctl, flags, pos, rank};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    coproc__kernel_return(dev, lflags);
    return s;
}

/* Bytes of one hash-table slot, as table_alloc allocates them. */
size_t coproc__group_by_slot_bytes(coproc_type kt, int has_values, coproc_type vt)
{
    size_t b = (coproc_type_size(kt) == 8 ? 12 : 8) + 4; /* key words, count */
    if (!has_values)
        return b;
    int fl = vt == COPROC_FLOAT32 || vt == COPROC_FLOAT64;
    int hi = vt == COPROC_INT64 || vt == COPROC_UINT64 || vt == COPROC_FLOAT64;
    b += (fl ? 16 : 8) + 8;                        /* sum words, min, max */
    b += hi ? 8 : 0;                               /* min, max high words */
    b += fl ? 8 : 0;                               /* exponent max, NaN flags */
    return b;
}

/* ---- the operator table's entry (ops/table.h) */

static coproc_status group_by_check(coproc_runtime *rt, const coproc_op *op,
                                    const coproc_column *const *in, int n)
{
    if (op->aggs & ~(unsigned)COPROC_GROUP_ALL)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: group_by aggs 0x%x "
                            "has bits that are no COPROC_GROUP_* flag", op->aggs);
    return coproc__check_keys(rt, "group_by", op->a, NULL);
}

static void group_by_features(const coproc_op *op, const coproc_result *r,
                              const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    double n = coproc__col_rows(op->a);
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->groups.groups : n < seen->groups ? n : seen->groups;
    *out_bytes = x[1] * 32;
}

/* As coproc__group_by_run allocates: a slot per row (row_slot), the hash
 * table (2 x groups slots, a power of two, at least the first table's), its
 * occupancy flags, and the result columns (out bytes). */
static double group_by_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    double n = coproc__col_rows(op->a), groups = out / 32;
    size_t first = coproc__next_pow2(2 * (size_t)n);
    double cap = (double)coproc__next_pow2((size_t)(2 * groups + 1));
    if (cap < (double)(first < FIRST_CAPACITY_MAX ? first : FIRST_CAPACITY_MAX))
        cap = (double)(first < FIRST_CAPACITY_MAX ? first : FIRST_CAPACITY_MAX);
    size_t slot = coproc__group_by_slot_bytes(op->a->type, op->b != NULL,
                                              op->b ? op->b->type : COPROC_INT32);
    return 4 * n + cap * ((double)slot + 4) + out;
}

static void group_by_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    if (r->groups.groups > 0)
        coproc__op_seen_learn(seen, NAN, NAN, (double)r->groups.groups);
}

static coproc_status group_by_in_memory(coproc_runtime *rt, coproc__device *dev,
                                        const coproc_op *op, const coproc_column *const *v,
                                        coproc_result *out)
{
    coproc_status s = coproc__group_by_run(rt, v[0], op->b ? v[1] : NULL, op->aggs,
                                           op->sorted, &out->groups);
    out->count = out->groups.groups;
    return s;
}

/* Per chunk, partial aggregates merged on the host (exec/stream.c). */
static coproc_status group_by_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                     size_t budget, coproc_result *out)
{
    /* every aggregate per chunk (the host merge needs them), then those asked */
    coproc_status s = coproc__stream_group_by(rt, dev, op->a, op->b, op->sorted, budget,
                                              &out->groups);
    if (s == COPROC_OK)
        coproc__group_result_keep(&out->groups, op->aggs);
    out->count = out->groups.groups;
    return s;
}

const coproc__op_def coproc__op_group_by = {
    .name = "group_by", .kind = COPROC_OP_GROUP_BY, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_a_opt_b, .same_length = 1, .check = group_by_check,
    .features = group_by_features, .device_bytes = group_by_device_bytes,
    .learn = group_by_learn, .run = group_by_in_memory, .stream = group_by_stream,
    .stream_nulls = 1,
};
