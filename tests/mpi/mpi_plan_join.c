/* mpi_plan_join.c - a join inside a distributed plan under mpirun (tests/mpi_run.sh):
 * coproc_mpi_colocate brings a probe side (pk, pv, pg) and a build side (bk, bg),
 * each spread over the ranks, together - build broadcast, both shuffled by key
 * hash or by key range, or AUTO's pick - then every rank joins its rows in a plan (inner or semi)
 * and groups after the join, and coproc_mpi_aggregate combines the groups. Rank
 * 0's result must equal a plain C nested loop over the whole sides, for uniform,
 * skewed (70 % one key) and negative keys, sides spread evenly, each on one rank,
 * a rank with no rows, an empty build side and an empty probe side; a composite
 * key colocated on its first column. AUTO picks by size and key density. Errors:
 * a key the last rank lacks, ranks that disagree on the method, build sides that
 * differ between ranks, a rank whose plan after the shuffle groups by a column it
 * lacks - every rank returns the error, none hangs. Plain MPI program: 0 passed,
 * 1 failed, 77 no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "mpi_check.h"
#include "../../runtime/mpi/mpi_internal.h" /* coproc_mpi_join_choice_ */

enum { UNIFORM, SKEWED, NEGATIVE, NSHAPES };
enum { EVEN, ONE_RANK_EACH, LAST_EMPTY, NO_BUILD, NO_PROBE, NLAYOUTS };
#define NGROUPS 7

static int32_t key_of(int shape, int side, uint64_t g)
{
    uint64_t h = mix(g * 2 + (uint64_t)side + 1000 * (uint64_t)shape);
    switch (shape) {
    case UNIFORM:
        return (int32_t)(h % 500);
    case SKEWED:
        return h % 10 < 7 ? 7 : (int32_t)(h % 300);
    default:
        return h % 16 == 0 ? INT32_MIN : (int32_t)(h % 101) - 50;
    }
}

static int64_t pv_of(uint64_t g)
{
    uint64_t h = mix(g + 99);
    return h % 50 == 0 ? INT64_MIN / 4 : (int64_t)(h % 2001) - 1000;
}

static int32_t pg_of(uint64_t g)
{
    return (int32_t)(g % NGROUPS);
}

static int32_t bg_of(uint64_t g)
{
    return (int32_t)(mix(g + 7777) % NGROUPS);
}

/* How many rows of a side's `total` rank r holds, and where its rows start. */
static uint64_t share(int layout, int side, int r, uint64_t total)
{
    int P = size;
    if (layout == ONE_RANK_EACH) /* probe all on rank 0, build all on the last */
        return r == (side ? P - 1 : 0) ? total : 0;
    if (layout == LAST_EMPTY && P > 1) {
        if (r == P - 1)
            return 0;
        P--;
    }
    return total * (uint64_t)(r + 1) / P - total * (uint64_t)r / P;
}

typedef struct side {
    coproc_table *t;
    coproc_column *c[3];
} side;

static void side_free(side *s)
{
    coproc_table_free(s->t);
    for (int i = 0; i < 3; i++)
        coproc_column_free(s->c[i]);
}

/* This rank's rows of a side as a table of host columns. */
static void make_side(coproc_runtime *rt, int shape, int which, uint64_t first, uint64_t n, side *s)
{
    memset(s, 0, sizeof *s);
    coproc_table_create(rt, &s->t);
    if (which == 0) {
        coproc_column_host_alloc(rt, COPROC_INT32, n, &s->c[0]);
        coproc_column_host_alloc(rt, COPROC_INT64, n, &s->c[1]);
        coproc_column_host_alloc(rt, COPROC_INT32, n, &s->c[2]);
        int32_t *k = coproc_column_host_data(s->c[0]), *g = coproc_column_host_data(s->c[2]);
        int64_t *v = coproc_column_host_data(s->c[1]);
        for (uint64_t i = 0; i < n; i++)
            k[i] = key_of(shape, 0, first + i), v[i] = pv_of(first + i), g[i] = pg_of(first + i);
        coproc_table_add(s->t, "pk", s->c[0]);
        coproc_table_add(s->t, "pv", s->c[1]);
        coproc_table_add(s->t, "pg", s->c[2]);
    } else {
        coproc_column_host_alloc(rt, COPROC_INT32, n, &s->c[0]);
        coproc_column_host_alloc(rt, COPROC_INT32, n, &s->c[1]);
        int32_t *k = coproc_column_host_data(s->c[0]), *g = coproc_column_host_data(s->c[1]);
        for (uint64_t i = 0; i < n; i++)
            k[i] = key_of(shape, 1, first + i), g[i] = bg_of(first + i);
        coproc_table_add(s->t, "bk", s->c[0]);
        coproc_table_add(s->t, "bg", s->c[1]);
    }
}

/* A group's sum, count, min and max of pv. */
typedef struct acc {
    int64_t sum, count, lo, hi;
} acc;

static void reference(int shape, coproc_join_kind kind, uint64_t np, uint64_t nb, acc *ref)
{
    memset(ref, 0, NGROUPS * sizeof *ref);
    for (uint64_t a = 0; a < np; a++) {
        int32_t ka = key_of(shape, 0, a);
        for (uint64_t b = 0; b < nb; b++) {
            if (key_of(shape, 1, b) != ka)
                continue;
            acc *x = &ref[kind == COPROC_JOIN_INNER ? bg_of(b) : pg_of(a)];
            int64_t v = pv_of(a);
            x->lo = x->count == 0 || v < x->lo ? v : x->lo;
            x->hi = x->count == 0 || v > x->hi ? v : x->hi;
            x->sum = (int64_t)((uint64_t)x->sum + (uint64_t)v); /* wrapping, as SUM */
            x->count++;
            if (kind == COPROC_JOIN_SEMI)
                break; /* one row per probe row */
        }
    }
}

/* The join of c's sides in a plan, grouped by `gkey`, combined; 0 when rank 0's result is
 * ref. A status other than OK is returned as it is. */
static coproc_status run_plan(coproc_mpi *m, const coproc_mpi_colocated *c, coproc_join_kind kind,
                              const char *gkey, const acc *ref, const char *what, int composite)
{
    coproc_plan *p = NULL;
    coproc_plan_create(coproc_mpi_runtime(m), &p);
    coproc_node *pr = coproc_plan_scan(p, c->probe, "probe");
    coproc_node *bu = coproc_plan_scan(p, c->build, "build");
    const char *pkeys[2] = {"pk", "pk2"}, *bkeys[2] = {"bk", "bk2"};
    coproc_node *j = composite ? coproc_plan_join_keys(p, kind, pr, 2, pkeys, bu, bkeys)
                               : coproc_plan_join(p, kind, pr, "pk", bu, "bk");
    const coproc_aggregate aggs[4] = {{COPROC_AGG_SUM, coproc_expr_column(p, "pv"), "s"},
                                      {COPROC_AGG_COUNT, NULL, "c"},
                                      {COPROC_AGG_MIN, coproc_expr_column(p, "pv"), "lo"},
                                      {COPROC_AGG_MAX, coproc_expr_column(p, "pv"), "hi"}};
    const char *keys[1] = {gkey};
    coproc_order_key order[1] = {{gkey, 0, 0}};
    coproc_mpi_query q = {.plan = p,
                          .input = j,
                          .nkeys = 1,
                          .keys = keys,
                          .naggs = 4,
                          .aggs = aggs,
                          .norder = 1,
                          .order = order};
    coproc_mpi_result r;
    coproc_status s = coproc_mpi_aggregate(m, &q, &r);
    if (s == COPROC_OK && rank == 0 && ref) {
        const coproc_table *t = r.table;
        size_t n = coproc_table_rows(t), want = 0;
        for (int g = 0; g < NGROUPS; g++)
            want += ref[g].count > 0;
        CHECK(n == want, "%s: %zu groups, C: %zu", what, n, want);
        const int32_t *gk = coproc_column_host_data(coproc_table_column(t, gkey));
        const int64_t *sum = coproc_column_host_data(coproc_table_column(t, "s"));
        const int64_t *cnt = coproc_column_host_data(coproc_table_column(t, "c"));
        const int64_t *lo = coproc_column_host_data(coproc_table_column(t, "lo"));
        const int64_t *hi = coproc_column_host_data(coproc_table_column(t, "hi"));
        for (size_t i = 0, g = 0; n == want && i < n; i++, g++) {
            while (ref[g].count == 0)
                g++;
            CHECK(gk[i] == (int32_t)g && sum[i] == ref[g].sum && cnt[i] == ref[g].count &&
                      lo[i] == ref[g].lo && hi[i] == ref[g].hi,
                  "%s: group %d: %lld %lld %lld %lld, C: group %zu: %lld %lld %lld %lld", what,
                  gk[i], (long long)sum[i], (long long)cnt[i], (long long)lo[i], (long long)hi[i],
                  g, (long long)ref[g].sum, (long long)ref[g].count, (long long)ref[g].lo,
                  (long long)ref[g].hi);
        }
    }
    coproc_mpi_result_free(&r);
    coproc_plan_free(p);
    return s;
}

static const char *const method_name[4] = {"auto", "broadcast", "shuffle", "shuffle-range"};

/* Whether the whole build side's keys are dense as AUTO takes it: range < 2 x rows + 1024. */
static int dense_keys(int shape, uint64_t nb)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint64_t g = 0; g < nb; g++) {
        int64_t k = key_of(shape, 1, g);
        lo = k < lo ? k : lo, hi = k > hi ? k : hi;
    }
    return nb && (uint64_t)(hi - lo) < 2 * nb + 1024;
}

static void join_case(coproc_mpi *m, int shape, int layout, uint64_t np, uint64_t nb)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    if (layout == NO_BUILD)
        nb = 0;
    if (layout == NO_PROBE)
        np = 0;
    uint64_t fp = 0, fb = 0;
    for (int r = 0; r < rank; r++)
        fp += share(layout, 0, r, np), fb += share(layout, 1, r, nb);
    side ps, bs;
    make_side(rt, shape, 0, fp, share(layout, 0, rank, np), &ps);
    make_side(rt, shape, 1, fb, share(layout, 1, rank, nb), &bs);
    for (int kind = COPROC_JOIN_INNER; kind <= COPROC_JOIN_SEMI; kind++) {
        acc ref[NGROUPS];
        if (rank == 0)
            reference(shape, (coproc_join_kind)kind, np, nb, ref);
        for (int method = COPROC_MPI_JOIN_AUTO; method <= COPROC_MPI_JOIN_SHUFFLE_RANGE; method++) {
            char what[160];
            snprintf(what, sizeof what, "%s join, %s, shape %d, layout %d, %llu x %llu",
                     kind ? "semi" : "inner", method_name[method], shape, layout,
                     (unsigned long long)np, (unsigned long long)nb);
            coproc_mpi_colocated c;
            /* AUTO under a 1-byte limit (even layouts): AUTO's way to a shuffle */
            uint64_t limit = layout == EVEN ? 1 : 0;
            coproc_status s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk",
                                                  (coproc_mpi_join_method)method, limit, &c);
            CHECK(s == COPROC_OK, "%s: colocate: %s: %s", what, coproc_status_name(s),
                  coproc_mpi_errmsg(m));
            if (s != COPROC_OK)
                continue;
            coproc_mpi_join_method want =
                method ? (coproc_mpi_join_method)method
                       : coproc_mpi_join_choice_(c.probe_bytes, c.build_bytes, size,
                                                 dense_keys(shape, nb), limit);
            CHECK(c.method == want, "%s: method %d taken", what, (int)c.method);
            CHECK(c.probe_bytes == np * 16 && c.build_bytes == nb * 8, "%s: %llu and %llu bytes",
                  what, (unsigned long long)c.probe_bytes, (unsigned long long)c.build_bytes);
            s = run_plan(m, &c, (coproc_join_kind)kind, kind ? "pg" : "bg", ref, what, 0);
            CHECK(s == COPROC_OK, "%s: aggregate: %s: %s", what, coproc_status_name(s),
                  coproc_mpi_errmsg(m));
            coproc_mpi_colocated_free(&c);
        }
    }
    side_free(&ps);
    side_free(&bs);
}

/* AUTO: broadcast while the build side is small next to the probe side and under the limit. */
static void choice(void)
{
    /* broadcast while it fits and moves fewer bytes */
    CHECK(coproc_mpi_join_choice_(1000, 10, 4, 0, 0) == COPROC_MPI_JOIN_BROADCAST, "small build");
    CHECK(coproc_mpi_join_choice_(1000, 333, 4, 1, 0) == COPROC_MPI_JOIN_BROADCAST,
          "3 x 333 <= 1000");
    CHECK(coproc_mpi_join_choice_(1000, 334, 4, 0, 0) == COPROC_MPI_JOIN_SHUFFLE, "3 x 334 > 1000");
    CHECK(coproc_mpi_join_choice_(1000, 334, 4, 1, 0) == COPROC_MPI_JOIN_SHUFFLE_RANGE,
          "3 x 334 > 1000, dense keys");
    CHECK(coproc_mpi_join_choice_(1000, 1001, 2, 1, 0) == COPROC_MPI_JOIN_SHUFFLE,
          "dense keys over 2 ranks: by hash");
    CHECK(coproc_mpi_join_choice_(UINT64_MAX, 65ull << 20, 2, 0, 0) == COPROC_MPI_JOIN_SHUFFLE,
          "over the default limit");
    CHECK(coproc_mpi_join_choice_(UINT64_MAX, 65ull << 20, 4, 1, 0) ==
              COPROC_MPI_JOIN_SHUFFLE_RANGE,
          "over the default limit, dense keys");
    CHECK(coproc_mpi_join_choice_(UINT64_MAX, 65ull << 20, 2, 0, 1ull << 30) ==
              COPROC_MPI_JOIN_BROADCAST,
          "under a limit given");
    CHECK(coproc_mpi_join_choice_(0, 0, 2, 0, 0) == COPROC_MPI_JOIN_BROADCAST, "two empty sides");
    CHECK(coproc_mpi_join_choice_(0, 1 << 20, 1, 0, 0) == COPROC_MPI_JOIN_BROADCAST, "one rank");
}

/* A composite key (pk, pk2) = (bk, bk2), colocated on its first column: rows are probe rows
 * with pk2 = g mod 3 and build rows with bk2 = g mod 2 added as a column (pk2 and bk2 int32). */
static void composite_case(coproc_mpi *m)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    const uint64_t np = 1500, nb = 300;
    uint64_t fp = 0, fb = 0;
    for (int r = 0; r < rank; r++)
        fp += share(EVEN, 0, r, np), fb += share(EVEN, 1, r, nb);
    uint64_t mp = share(EVEN, 0, rank, np), mb = share(EVEN, 1, rank, nb);
    side ps, bs;
    make_side(rt, UNIFORM, 0, fp, mp, &ps);
    make_side(rt, UNIFORM, 1, fb, mb, &bs);
    coproc_column *k2[2] = {NULL, NULL};
    coproc_column_host_alloc(rt, COPROC_INT32, mp, &k2[0]);
    coproc_column_host_alloc(rt, COPROC_INT32, mb, &k2[1]);
    int32_t *a = coproc_column_host_data(k2[0]), *b = coproc_column_host_data(k2[1]);
    for (uint64_t i = 0; i < mp; i++)
        a[i] = (int32_t)((fp + i) % 3);
    for (uint64_t i = 0; i < mb; i++)
        b[i] = (int32_t)((fb + i) % 2);
    coproc_table_add(ps.t, "pk2", k2[0]);
    coproc_table_add(bs.t, "bk2", k2[1]);
    acc ref[NGROUPS];
    memset(ref, 0, sizeof ref);
    for (uint64_t x = 0; rank == 0 && x < np; x++)
        for (uint64_t y = 0; y < nb; y++) {
            if (key_of(UNIFORM, 0, x) != key_of(UNIFORM, 1, y) || (int)(x % 3) != (int)(y % 2))
                continue;
            acc *g = &ref[bg_of(y)];
            int64_t v = pv_of(x);
            g->lo = g->count == 0 || v < g->lo ? v : g->lo;
            g->hi = g->count == 0 || v > g->hi ? v : g->hi;
            g->sum = (int64_t)((uint64_t)g->sum + (uint64_t)v);
            g->count++;
        }
    for (int method = COPROC_MPI_JOIN_BROADCAST; method <= COPROC_MPI_JOIN_SHUFFLE_RANGE;
         method++) {
        char what[96];
        snprintf(what, sizeof what, "composite key, %s", method_name[method]);
        coproc_mpi_colocated c;
        coproc_status s =
            coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk", (coproc_mpi_join_method)method, 0, &c);
        CHECK(s == COPROC_OK, "%s: colocate: %s", what, coproc_mpi_errmsg(m));
        if (s != COPROC_OK)
            continue;
        s = run_plan(m, &c, COPROC_JOIN_INNER, "bg", ref, what, 1);
        CHECK(s == COPROC_OK, "%s: aggregate: %s: %s", what, coproc_status_name(s),
              coproc_mpi_errmsg(m));
        coproc_mpi_colocated_free(&c);
    }
    side_free(&ps);
    side_free(&bs);
    coproc_column_free(k2[0]);
    coproc_column_free(k2[1]);
}

/* Errors: every rank returns the failing rank's error and the next call works. */
static void errors(coproc_mpi *m)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    side ps, bs;
    make_side(rt, UNIFORM, 0, (uint64_t)rank * 100, 100, &ps);
    make_side(rt, UNIFORM, 1, (uint64_t)rank * 50, 50, &bs);
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", size - 1);
    coproc_mpi_colocated c;
    coproc_status s = coproc_mpi_colocate(m, ps.t, rank == size - 1 ? "nope" : "pk", bs.t, "bk",
                                          COPROC_MPI_JOIN_SHUFFLE, 0, &c);
    CHECK(s == COPROC_INVALID_ARGUMENT && strncmp(coproc_mpi_errmsg(m), want, strlen(want)) == 0,
          "a key the last rank lacks: %s: %s", coproc_status_name(s), coproc_mpi_errmsg(m));
    CHECK(!c.probe && !c.build, "an error leaves no tables");
    s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "pv", COPROC_MPI_JOIN_BROADCAST, 0, &c);
    CHECK(s == COPROC_INVALID_ARGUMENT, "a build key not there: %s", coproc_status_name(s));
    s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk", (coproc_mpi_join_method)7, 0, &c);
    CHECK(s == COPROC_INVALID_ARGUMENT, "method 7: %s", coproc_status_name(s));
    /* a range shuffle over a signed and an unsigned key: refused */
    coproc_column *u = NULL;
    coproc_column_host_alloc(rt, COPROC_UINT32, 50, &u);
    memset(coproc_column_host_data(u), 0, 50 * sizeof(uint32_t));
    coproc_table_add(bs.t, "bu", u);
    s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bu", COPROC_MPI_JOIN_SHUFFLE_RANGE, 0, &c);
    CHECK(s == COPROC_INVALID_ARGUMENT, "a range shuffle, int32 against uint32: %s",
          coproc_status_name(s));
    s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bu", COPROC_MPI_JOIN_AUTO, 0, &c);
    CHECK(s == COPROC_OK && c.method != COPROC_MPI_JOIN_SHUFFLE_RANGE,
          "AUTO, int32 against uint32: %s, method %d", coproc_status_name(s), (int)c.method);
    coproc_mpi_colocated_free(&c);
    if (size > 1) {
        s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk",
                                rank == 0 ? COPROC_MPI_JOIN_BROADCAST : COPROC_MPI_JOIN_SHUFFLE, 0,
                                &c);
        CHECK(s == COPROC_INVALID_ARGUMENT, "ranks that disagree on the method: %s",
              coproc_status_name(s));
    }
    /* the last rank's build side has a column more: the tables differ between ranks */
    coproc_column *extra = NULL;
    coproc_column_host_alloc(rt, COPROC_INT32, 50, &extra);
    memset(coproc_column_host_data(extra), 0, 50 * sizeof(int32_t));
    if (rank == size - 1)
        coproc_table_add(bs.t, "extra", extra);
    for (int method = COPROC_MPI_JOIN_BROADCAST;
         size > 1 && method <= COPROC_MPI_JOIN_SHUFFLE_RANGE; method++) {
        s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk", (coproc_mpi_join_method)method, 0, &c);
        CHECK(s == COPROC_INVALID_ARGUMENT && !c.probe && !c.build,
              "%s: build sides that differ between ranks: %s: %s", method_name[method],
              coproc_status_name(s), coproc_mpi_errmsg(m));
    }
    side_free(&bs);
    coproc_column_free(extra);
    coproc_column_free(u);
    make_side(rt, UNIFORM, 1, (uint64_t)rank * 50, 50, &bs);
    s = coproc_mpi_colocate(m, ps.t, "pk", bs.t, "bk", COPROC_MPI_JOIN_SHUFFLE, 0, &c);
    CHECK(s == COPROC_OK, "after the errors: %s", coproc_mpi_errmsg(m));
    if (s == COPROC_OK) { /* the last rank's plan after the shuffle is bad */
        s = run_plan(m, &c, COPROC_JOIN_INNER, rank == size - 1 ? "no_such_column" : "bg", NULL,
                     "bad plan", 0);
        CHECK(s != COPROC_OK && strncmp(coproc_mpi_errmsg(m), want, strlen(want)) == 0,
              "a plan the last rank cannot run: %s: %s", coproc_status_name(s),
              coproc_mpi_errmsg(m));
        coproc_mpi_colocated_free(&c);
    }
    side_free(&ps);
    side_free(&bs);
}

int main(int argc, char **argv)
{
    mpi_begin(&argc, &argv);
    coproc_mpi *m;
    coproc_status s = mpi_open_quiet(&m);
    if (s != COPROC_OK)
        return open_failed(m, s);
    choice();
    int cases = 0;
    for (int shape = 0; shape < NSHAPES; shape++)
        for (int layout = 0; layout < NLAYOUTS; layout++, cases++)
            join_case(m, shape, layout, shape == SKEWED ? 1201 : 2999, shape == SKEWED ? 97 : 401);
    composite_case(m);
    errors(m);
    coproc_mpi_close(m);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_plan_join: %d ranks, %d cases x 2 kinds x 4 methods: %s (%d failures)\n", size,
               cases, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
