/* plan_join_mpi.c - coproc-plan-join-mpi: a join inside a distributed plan over MPI ranks
 * (coproc/mpi.h), the build side broadcast against both sides shuffled by key hash, run
 * alternately in one process so that the ratio compares like with like. Each rank
 * generates its block of a probe side (pk int64, pv int64) and a build side (bk int64, its
 * keys 0..build-1 once each, in order or --scrambled, times --stride S so that the keys'
 * range is S times their number; bg int32 = the key / S mod 16); coproc_mpi_colocate
 * places them, every rank joins its rows in a plan (inner join, group-by bg: sum pv, count) and
 * coproc_mpi_aggregate gathers the groups. Rank 0 checks every run against a plain C pass
 * over the whole probe side. Per run, the slowest rank's seconds: pack (the exchange's local
 * work: hashing, packing), comm (in MPI: the sides' exchange, the groups' gather, agreeing),
 * compute (the local coproc_query_run: join and group-by on the rank's devices, device
 * transfers included - their bytes are printed: 0 on a host-unified device such as PoCL's)
 * and the whole.
 *
 * --probe N --build M: rows of each side in all (--weak: on every rank). --repeat R (5).
 * --range: the shuffle by key range (COPROC_MPI_JOIN_SHUFFLE_RANGE) instead of by hash.
 * Prints "RUN" lines, then per method the median and spread, and "RATIO shuffle/broadcast":
 * the median, min and max of the per-round ratios (each round runs both methods).
 * Public API only (coproc.h, coproc/query.h, coproc/mpi.h).
 *
 * Exit status: 0 right; 1 wrong or an error (every rank); 77 no OpenCL device; 64 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "bench_mpi.h"

#define MAX_REPEAT 64
#define GROUPS 16

enum { PACK, COMM, COMPUTE, TOTAL, NPHASE };
static const char *const method_name[4] = {"auto", "broadcast", "shuffle", "shuffle-range"};

/* Probe row g: its key, over twice the build's keys (half the rows find a match). */
static int64_t pk_of(uint64_t g, uint64_t nbuild)
{
    return (int64_t)(mix(g) % (2 * (nbuild ? nbuild : 1)));
}

static int64_t pv_of(uint64_t g)
{
    return (int64_t)(mix(g + 12345) % 1000);
}

typedef struct side {
    coproc_table *t;
    coproc_column *c[2];
} side;

static coproc_status make_probe(coproc_runtime *rt, uint64_t first, uint64_t n, uint64_t nbuild,
                                int64_t stride, side *s)
{
    coproc_status st = coproc_table_create(rt, &s->t);
    if (st == COPROC_OK)
        st = coproc_column_host_alloc(rt, COPROC_INT64, n, &s->c[0]);
    if (st == COPROC_OK)
        st = coproc_column_host_alloc(rt, COPROC_INT64, n, &s->c[1]);
    if (st != COPROC_OK)
        return st;
    int64_t *k = coproc_column_host_data(s->c[0]), *v = coproc_column_host_data(s->c[1]);
    for (uint64_t i = 0; i < n; i++)
        k[i] = pk_of(first + i, nbuild) * stride, v[i] = pv_of(first + i);
    st = coproc_table_add(s->t, "pk", s->c[0]);
    return st == COPROC_OK ? coproc_table_add(s->t, "pv", s->c[1]) : st;
}

/* Build row g of `total`: its key, g itself, or (scrambled) a permutation of 0..total-1 that
 * scatters neighbouring rows (1000003 is a prime: a bijection unless it divides total). */
static int64_t build_key(uint64_t g, uint64_t total, int scrambled)
{
    if (!scrambled || total % 1000003 == 0)
        return (int64_t)g;
    return (int64_t)((unsigned __int128)g * 1000003 % total);
}

static coproc_status make_build(coproc_runtime *rt, uint64_t first, uint64_t n, uint64_t total,
                                int scrambled, int64_t stride, side *s)
{
    coproc_status st = coproc_table_create(rt, &s->t);
    if (st == COPROC_OK)
        st = coproc_column_host_alloc(rt, COPROC_INT64, n, &s->c[0]);
    if (st == COPROC_OK)
        st = coproc_column_host_alloc(rt, COPROC_INT32, n, &s->c[1]);
    if (st != COPROC_OK)
        return st;
    int64_t *k = coproc_column_host_data(s->c[0]);
    int32_t *g = coproc_column_host_data(s->c[1]);
    for (uint64_t i = 0; i < n; i++) {
        int64_t base = build_key(first + i, total, scrambled);
        k[i] = base * stride;
        g[i] = (int32_t)(base % GROUPS);
    }
    st = coproc_table_add(s->t, "bk", s->c[0]);
    return st == COPROC_OK ? coproc_table_add(s->t, "bg", s->c[1]) : st;
}

static void side_free(side *s)
{
    coproc_table_free(s->t);
    coproc_column_free(s->c[0]);
    coproc_column_free(s->c[1]);
}

/* One run: colocate by `method`, the plan, the aggregate. t[] this rank's seconds; *moved the
 * bytes its run copied between host and device. Rank 0 compares with want_sum/want_cnt. */
static coproc_status run_once(coproc_mpi *m, const side *pr, const side *bu,
                              coproc_mpi_join_method method, const int64_t *want_sum,
                              const int64_t *want_cnt, double *t, uint64_t *moved, int *wrong,
                              coproc_mpi_join_method *taken)
{
    double t0 = MPI_Wtime();
    coproc_mpi_colocated c;
    coproc_status s = coproc_mpi_colocate(m, pr->t, "pk", bu->t, "bk", method, 0, &c);
    memset(t, 0, NPHASE * sizeof *t);
    t[PACK] = c.pack_s, t[COMM] = c.exchange_s;
    if (s != COPROC_OK)
        return s;
    *taken = c.method;
    coproc_plan *p = NULL;
    coproc_plan_create(coproc_mpi_runtime(m), &p);
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c.probe, "probe"),
                                      "pk", coproc_plan_scan(p, c.build, "build"), "bk");
    const char *keys[1] = {"bg"};
    coproc_aggregate aggs[2] = {{COPROC_AGG_SUM, coproc_expr_column(p, "pv"), "s"},
                                {COPROC_AGG_COUNT, NULL, "n"}};
    coproc_order_key order[1] = {{"bg", 0, 0}};
    coproc_mpi_query q = {.plan = p,
                          .input = j,
                          .nkeys = 1,
                          .keys = keys,
                          .naggs = 2,
                          .aggs = aggs,
                          .norder = 1,
                          .order = order};
    coproc_mpi_result r;
    s = coproc_mpi_aggregate(m, &q, &r);
    if (s == COPROC_OK) {
        t[COMPUTE] = r.compute_s;
        t[COMM] += r.wait_s + r.exchange_s;
        t[PACK] += r.merge_s;
        *moved = 0;
        for (int i = 0; i < r.local.pipelines; i++)
            *moved += r.local.pipeline[i].bytes_moved;
        if (r.table) { /* rank 0 */
            size_t n = coproc_table_rows(r.table);
            const int32_t *g = coproc_column_host_data(coproc_table_column(r.table, "bg"));
            const int64_t *sum = coproc_column_host_data(coproc_table_column(r.table, "s"));
            const int64_t *cnt = coproc_column_host_data(coproc_table_column(r.table, "n"));
            size_t want_n = 0;
            for (int k = 0; k < GROUPS; k++)
                want_n += want_cnt[k] > 0;
            *wrong = n != want_n;
            for (size_t i = 0; !*wrong && i < n; i++)
                *wrong = g[i] < 0 || g[i] >= GROUPS || sum[i] != want_sum[g[i]] ||
                         cnt[i] != want_cnt[g[i]];
        }
    }
    coproc_mpi_result_free(&r);
    coproc_plan_free(p);
    coproc_mpi_colocated_free(&c);
    t[TOTAL] = MPI_Wtime() - t0;
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t nprobe = 2000000, nbuild = 20000;
    int repeat = 5, weak = 0, bad = 0, scrambled = 0;
    int64_t stride = 1;
    coproc_mpi_join_method shuffle = COPROC_MPI_JOIN_SHUFFLE;
    static const struct option longs[] = {
        {"probe", 1, 0, 'p'},     {"build", 1, 0, 'b'},  {"repeat", 1, 0, 'r'}, {"weak", 0, 0, 'w'},
        {"scrambled", 0, 0, 's'}, {"stride", 1, 0, 't'}, {"range", 0, 0, 'g'},  {0, 0, 0, 0}};
    for (int c; (c = getopt_long(argc, argv, "", longs, NULL)) != -1;) {
        if (c == 'p')
            nprobe = strtoull(optarg, NULL, 10);
        else if (c == 'b')
            nbuild = strtoull(optarg, NULL, 10);
        else if (c == 'r')
            repeat = atoi(optarg);
        else if (c == 'w')
            weak = 1;
        else if (c == 's')
            scrambled = 1;
        else if (c == 't')
            stride = strtoll(optarg, NULL, 10);
        else if (c == 'g')
            shuffle = COPROC_MPI_JOIN_SHUFFLE_RANGE;
        else
            bad = 1;
    }
    if (bad || repeat < 1 || repeat > MAX_REPEAT || stride < 1 || stride > 1000) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpirun [...] coproc-plan-join-mpi [--probe N] [--build M] "
                    "[--weak] [--scrambled] [--stride 1..1000] [--range] [--repeat 1..%d]\n",
                    MAX_REPEAT);
        MPI_Finalize();
        return 64;
    }
    if (weak)
        nprobe *= (uint64_t)size, nbuild *= (uint64_t)size;
    coproc_mpi *m = NULL;
    coproc_status s = bench_mpi_open(&m);
    if (s != COPROC_OK)
        return bench_mpi_open_failed(rank, m, s);
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t pf, pn, bf, bn;
    coproc_mpi_block(m, nprobe, &pf, &pn);
    coproc_mpi_block(m, nbuild, &bf, &bn);
    side pr = {0}, bu = {0};
    s = make_probe(rt, pf, pn, nbuild, stride, &pr);
    if (s == COPROC_OK)
        s = make_build(rt, bf, bn, nbuild, scrambled, stride, &bu);
    int64_t want_sum[GROUPS] = {0}, want_cnt[GROUPS] = {0};
    if (rank == 0) /* build keys 0..nbuild-1 once each: a probe row matches when pk < nbuild */
        for (uint64_t g = 0; g < nprobe; g++) {
            int64_t k = pk_of(g, nbuild);
            if ((uint64_t)k < nbuild)
                want_sum[k % GROUPS] += pv_of(g), want_cnt[k % GROUPS]++;
        }
    double t[2][MAX_REPEAT][NPHASE], ratio[MAX_REPEAT];
    uint64_t moved[2] = {0, 0};
    int wrong = 0, failed = s != COPROC_OK;
    coproc_mpi_join_method taken = COPROC_MPI_JOIN_AUTO,
                           auto_pick = COPROC_MPI_JOIN_AUTO; /* AUTO's choice, once */
    if (!failed) {
        double tt[NPHASE];
        int w = 0;
        uint64_t mv = 0;
        s = run_once(m, &pr, &bu, COPROC_MPI_JOIN_AUTO, want_sum, want_cnt, tt, &mv, &w,
                     &auto_pick); /* also warms the kernel cache */
        failed = s != COPROC_OK;
        wrong |= w;
    }
    for (int r = 0; r < repeat && !failed; r++)
        for (int k = 0; k < 2 && !failed; k++) {
            /* alternate which goes first, so that neither always follows the other */
            int mi = (r + k) % 2;
            double mine[NPHASE];
            int w = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            s = run_once(m, &pr, &bu, mi ? shuffle : COPROC_MPI_JOIN_BROADCAST, want_sum, want_cnt,
                         mine, &moved[mi], &w, &taken);
            failed = s != COPROC_OK;
            wrong |= w;
            MPI_Allreduce(mine, t[mi][r], NPHASE, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
    if (failed && rank == 0)
        fprintf(stderr, "rank 0: %s: %s\n", coproc_status_name(s), coproc_mpi_errmsg(m));
    uint64_t moved_all[2] = {0, 0};
    MPI_Reduce(moved, moved_all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && !failed) {
        for (int r = 0; r < repeat; r++) {
            for (int mi = 0; mi < 2; mi++)
                printf("RUN round=%d method=%s ranks=%d total=%.4f pack=%.4f comm=%.4f "
                       "compute=%.4f\n",
                       r + 1, method_name[mi ? shuffle : COPROC_MPI_JOIN_BROADCAST], size,
                       t[mi][r][TOTAL], t[mi][r][PACK], t[mi][r][COMM], t[mi][r][COMPUTE]);
            ratio[r] = t[1][r][TOTAL] / t[0][r][TOTAL];
        }
        for (int mi = 0; mi < 2; mi++) {
            double med[NPHASE], lo = 1e30, hi = 0;
            for (int ph = 0; ph < NPHASE; ph++) {
                double v[MAX_REPEAT];
                for (int r = 0; r < repeat; r++)
                    v[r] = t[mi][r][ph];
                med[ph] = median(v, repeat);
            }
            for (int r = 0; r < repeat; r++)
                lo = t[mi][r][TOTAL] < lo ? t[mi][r][TOTAL] : lo,
                hi = t[mi][r][TOTAL] > hi ? t[mi][r][TOTAL] : hi;
            printf("RESULT method=%s ranks=%d probe=%llu build=%llu stride=%lld total=%.4f "
                   "(%.4f-%.4f) "
                   "pack=%.4f comm=%.4f compute=%.4f device_bytes=%llu\n",
                   method_name[mi ? shuffle : COPROC_MPI_JOIN_BROADCAST], size,
                   (unsigned long long)nprobe, (unsigned long long)nbuild, (long long)stride,
                   med[TOTAL], lo, hi, med[PACK], med[COMM], med[COMPUTE],
                   (unsigned long long)(moved_all[mi]));
        }
        double rv[MAX_REPEAT], lo = 1e30, hi = 0;
        for (int r = 0; r < repeat; r++)
            rv[r] = ratio[r], lo = ratio[r] < lo ? ratio[r] : lo,
            hi = ratio[r] > hi ? ratio[r] : hi;
        printf("RATIO %s/broadcast ranks=%d probe=%llu build=%llu%s stride=%lld median=%.3f "
               "min=%.3f "
               "max=%.3f auto=%s\n",
               method_name[shuffle], size, (unsigned long long)nprobe, (unsigned long long)nbuild,
               scrambled ? " scrambled" : "", (long long)stride, median(rv, repeat), lo, hi,
               method_name[auto_pick]);
        printf("check: %s\n", wrong ? "WRONG" : "every run equal to the C reference");
    }
    int bad_all = 0, mine_bad = failed || wrong;
    MPI_Allreduce(&mine_bad, &bad_all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    side_free(&pr);
    side_free(&bu);
    coproc_mpi_close(m);
    MPI_Finalize();
    return bad_all ? 1 : 0;
}
