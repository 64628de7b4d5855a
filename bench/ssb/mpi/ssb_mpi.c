/* ssb_mpi.c - coproc-ssb --mpi (and coproc-ssb-mpi, the same): the Star
 * Schema Benchmark's 13 queries run distributed over MPI ranks (coproc/mpi.h),
 * under mpirun. Each rank
 * generates its own slice of the data (lineorder split by orders, the
 * dimension tables whole on every rank: broadcast build sides), runs each
 * query's joins and group-by over its slice, and the partial groups are
 * merged on rank 0. Rank 0 checks every result against the plain C reference
 * over the whole data and against one process's coproc run of the whole plan
 * (--no-check: neither), and reports where the time went: the local compute
 * (the slowest rank's), waiting for it, moving the partial groups, and the
 * merge. Public API only (coproc.h, coproc/query.h, coproc/mpi.h).
 *
 * Exit status: 0 every result right; 1 a wrong result or an error (every rank
 * says which); 77 no OpenCL device (every rank); 64 bad usage. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "ssb_mpi.h"
#include "ssb_plans.h"

#define MAX_REPEAT 64

static void quiet_log(void *u, coproc_log_level l, const char *m)
{
    (void)u, (void)l, (void)m;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun [...] coproc-ssb --mpi [--sf X] [--queries q1.1,...] [--repeat N]\n"
               "                      [--no-check] [--data-cache DIR] [--fail-rank R]\n"
               "                      [--exchange gather|shuffle]\n"
               "       (coproc-ssb-mpi is the same program without --mpi)\n"
               "  --sf X          scale factor (default 1)\n"
               "  --queries L     the queries to run (default all 13)\n"
               "  --repeat N      timed runs of each query (default 3), medians reported\n"
               "  --no-check      skip rank 0's checks (reference and one-process run)\n"
               "  --data-cache D  where rank 0 keeps the whole data for its checks\n"
               "                  (default $COPROC_CACHE_DIR/ssb, else ~/.cache/coproc/ssb)\n"
               "  --exchange E    how the partial groups meet: gather (to rank 0, the default)\n"
               "                  or shuffle (by key hash over the ranks, then to rank 0)\n"
               "  --fail-rank R   rank R groups by a column that does not exist (tests:\n"
               "                  every rank must return the error)\n");
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

/* Rank 0's checks of one query: the reference over the whole data and one process's coproc
 * run of the whole plan. */
typedef struct check {
    int have;
    ssb_result want;
} check;

static int single_process(coproc_runtime *rt, const ssb_tables *whole, int q,
                          const ssb_result *want)
{
    coproc_plan *p = NULL;
    coproc_node *root;
    coproc_query_result r;
    memset(&r, 0, sizeof r);
    int ok = 0;
    if (coproc_plan_create(rt, &p) == COPROC_OK &&
        ssb_plan_build(p, whole, q, &root) == COPROC_OK &&
        coproc_query_run(p, root, NULL, &r) == COPROC_OK) {
        ssb_result got;
        char why[512] = "";
        ok = ssb_result_from_table(r.table, q, &got) == 0 &&
             ssb_result_equal(&got, want, why, sizeof why);
        if (!ok)
            fprintf(stderr,
                    "coproc-ssb-mpi: %s: the one-process run differs from the reference: %s\n",
                    ssb_query_name(q), why);
        ssb_result_free(&got);
    } else {
        fprintf(stderr, "coproc-ssb-mpi: %s: the one-process run failed: %s\n", ssb_query_name(q),
                p && coproc_plan_status(p) != COPROC_OK ? coproc_plan_errmsg(p)
                                                        : coproc_errmsg(rt));
    }
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    return ok;
}

int ssb_mpi_main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    double sf = 1;
    int repeat = 3, checks = 1, fail_rank = -1;
    coproc_mpi_exchange exchange = COPROC_MPI_GATHER;
    const char *queries = NULL, *cache = NULL;
    static const struct option longs[] = {{"sf", required_argument, 0, 's'},
                                          {"queries", required_argument, 0, 'q'},
                                          {"repeat", required_argument, 0, 'r'},
                                          {"no-check", no_argument, 0, 'n'},
                                          {"data-cache", required_argument, 0, 'c'},
                                          {"fail-rank", required_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {"exchange", required_argument, 0, 'x'},
                                          {0, 0, 0, 0}};
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            sf = atof(optarg);
            break;
        case 'q':
            queries = optarg;
            break;
        case 'r':
            repeat = atoi(optarg);
            break;
        case 'n':
            checks = 0;
            break;
        case 'c':
            cache = optarg;
            break;
        case 'x':
            exchange = strcmp(optarg, "shuffle") == 0 ? COPROC_MPI_SHUFFLE : COPROC_MPI_GATHER;
            bad |= strcmp(optarg, "shuffle") != 0 && strcmp(optarg, "gather") != 0;
            break;
        case 'f':
            fail_rank = atoi(optarg);
            break;
        case 'h':
            if (rank == 0)
                usage(stdout);
            MPI_Finalize();
            return 0;
        default:
            bad = 1;
            break;
        }
    }
    int run_q[SSB_NQUERIES];
    for (int q = 0; q < SSB_NQUERIES; q++)
        run_q[q] = !queries;
    if (queries) {
        char *list = strdup(queries);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            int q = ssb_query_index(tok);
            if (q < 0)
                bad = 1;
            else
                run_q[q] = 1;
        }
        free(list);
    }
    if (bad || !(sf > 0) || sf > SSB_MAX_SF || repeat < 1 || repeat > MAX_REPEAT ||
        optind != argc) {
        if (rank == 0)
            usage(stderr);
        MPI_Finalize();
        return 64;
    }

    /* ---- a runtime per rank over its share of the node's devices */
    coproc_options o;
    coproc_options_init(&o);
    o.log = quiet_log;
    coproc_mpi *m = NULL;
    coproc_status s = coproc_mpi_open(MPI_COMM_WORLD, &o, &m);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-ssb-mpi: rank %d: %s: %s\n", rank, coproc_status_name(s),
                coproc_mpi_errmsg(m));
        coproc_mpi_close(m);
        MPI_Finalize();
        return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE ? 77 : 1;
    }
    coproc_runtime *rt = coproc_mpi_runtime(m);

    /* ---- this rank's slice; rank 0 also the whole data for its checks */
    double t0 = MPI_Wtime();
    ssb_db db, whole;
    memset(&whole, 0, sizeof whole);
    int gen_ok = ssb_generate_slice(sf, rank, size, &db) == 0, all_ok;
    double gen_s = MPI_Wtime() - t0;
    if (gen_ok && rank == 0 && checks) {
        char dir[1024];
        const char *env = getenv("COPROC_CACHE_DIR"), *home = getenv("HOME");
        if (cache)
            snprintf(dir, sizeof dir, "%s", cache);
        else if (env && *env)
            snprintf(dir, sizeof dir, "%s/ssb", env);
        else
            snprintf(dir, sizeof dir, "%s/.cache/coproc/ssb", home ? home : "/tmp");
        gen_ok = ssb_load_or_generate(sf, dir, &whole) >= 0;
    }
    MPI_Allreduce(&gen_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ssb_tables tables, wtables;
    memset(&wtables, 0, sizeof wtables);
    int tab_ok = 0;
    if (all_ok) {
        tab_ok = ssb_tables_open(rt, &db, -1, &tables) == COPROC_OK;
        if (tab_ok && rank == 0 && checks &&
            ssb_tables_open(rt, &whole, -1, &wtables) != COPROC_OK) {
            ssb_tables_close(&tables);
            tab_ok = 0;
        }
    }
    MPI_Allreduce(&tab_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        fprintf(stderr, "coproc-ssb-mpi: rank %d: %s\n", rank,
                gen_ok ? (tab_ok ? "another rank could not make its tables" : coproc_errmsg(rt))
                       : "cannot generate the data (sf, or out of memory)");
        if (tab_ok) {
            ssb_tables_close(&tables);
            ssb_tables_close(&wtables);
        }
        ssb_free(&db);
        ssb_free(&whole);
        coproc_mpi_close(m);
        MPI_Finalize();
        return 1;
    }
    uint64_t rows = db.rows[SSB_LINEORDER], total_rows = 0;
    MPI_Reduce(&rows, &total_rows, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    /* Each rank's devices, said by rank 0. */
    char mydevs[256] = "", *alldevs = rank == 0 ? malloc((size_t)size * sizeof mydevs) : NULL;
    for (int d = 0, len = 0; d < coproc_device_count(rt) && len < (int)sizeof mydevs; d++) {
        coproc_device_info info;
        coproc_device_info_get(rt, d, &info);
        len += snprintf(mydevs + len, sizeof mydevs - len, "%s%d %.60s", d ? ", " : "",
                        info.discovered_index, info.name);
    }
    MPI_Gather(mydevs, (int)sizeof mydevs, MPI_CHAR, alldevs, (int)sizeof mydevs, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        printf("SSB SF %g over %d ranks (%d on this node): %llu lineorder rows, %llu on rank 0, "
               "generated in %.2f s\n",
               sf, size, coproc_mpi_local_size(m), (unsigned long long)total_rows,
               (unsigned long long)rows, gen_s);
        for (int r = 0; r < size && alldevs; r++)
            printf("  rank %d: %s\n", r, alldevs + (size_t)r * sizeof mydevs);
        free(alldevs);
        printf("%-5s %6s %9s %9s %7s %7s %7s %8s %7s %s\n", "query", "rows", "total_ms", "compute",
               "imbal", "comm", "merge", "cpu_ms", "groups", "check");
    }

    /* ---- the queries */
    int failed = 0, wrong = 0;
    double sum_cpu = 0, sum_total = 0, sum_compute = 0, sum_wait = 0, sum_xchg = 0, sum_merge = 0;
    for (int q = 0; q < SSB_NQUERIES && !failed; q++) {
        if (!run_q[q])
            continue;
        check ck = {0};
        int single_ok = 1;
        if (rank == 0 && checks) {
            ck.have = ssb_reference_run(&whole, q, &ck.want) == 0;
            single_ok = ck.have && single_process(rt, &wtables, q, &ck.want);
        }
        double tt[MAX_REPEAT], tc[MAX_REPEAT], tw[MAX_REPEAT], tx[MAX_REPEAT], tm[MAX_REPEAT],
            tu[MAX_REPEAT];
        uint64_t groups = 0, nrows = 0;
        int ok = 1;
        /* One warm-up run (kernels built, caches filled), then the timed ones. */
        for (int r = 0; r <= repeat && !failed; r++) {
            coproc_plan *p = NULL;
            coproc_plan_create(rt, &p);
            ssb_plan_agg a;
            ssb_plan_build_agg(p, &tables, q, &a);
            if (rank == fail_rank && a.nkeys > 0)
                a.keys[0] = "no_such_column";
            else if (rank == fail_rank)
                a.agg.arg = coproc_expr_column(p, "no_such_column");
            coproc_mpi_query mq = {.plan = p,
                                   .input = a.in,
                                   .nkeys = a.nkeys,
                                   .keys = a.keys,
                                   .naggs = 1,
                                   .aggs = &a.agg,
                                   .norder = a.norder,
                                   .order = a.order,
                                   .exchange = exchange};
            coproc_mpi_result res;
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            s = coproc_mpi_aggregate(m, &mq, &res);
            /* The slowest rank's whole call and local run, the fastest's local run, rank 0's
             * merge; what the whole call spends beyond the slowest local run and the merge
             * is communication (agreeing, gathering, the final status). */
            double mine[4] = {MPI_Wtime() - start, res.compute_s, -res.compute_s, res.merge_s},
                   most[4];
            MPI_Reduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            double cpu = 0; /* CPU seconds of the local runs, every rank together */
            MPI_Reduce(&res.compute_cpu_s, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (s != COPROC_OK) {
                fprintf(stderr, "coproc-ssb-mpi: rank %d: %s: %s: %s\n", rank, ssb_query_name(q),
                        coproc_status_name(s), coproc_mpi_errmsg(m));
                failed = 1;
            } else if (rank == 0) {
                groups = res.groups;
                nrows = coproc_table_rows(res.table);
                if (checks) {
                    ssb_result got;
                    char why[512] = "";
                    int same = ck.have && ssb_result_from_table(res.table, q, &got) == 0 &&
                               ssb_result_equal(&got, &ck.want, why, sizeof why);
                    if (!same && r == 0)
                        fprintf(stderr, "coproc-ssb-mpi: %s: WRONG distributed result: %s\n",
                                ssb_query_name(q), why);
                    ok &= same;
                    ssb_result_free(&got);
                }
                if (r > 0) {
                    tt[r - 1] = most[0], tc[r - 1] = most[1], tw[r - 1] = most[1] + most[2];
                    tm[r - 1] = most[3], tx[r - 1] = most[0] - most[1] - most[3];
                    tu[r - 1] = cpu;
                }
            }
            coproc_mpi_result_free(&res);
            coproc_plan_free(p);
        }
        if (rank == 0 && !failed) {
            double T = median(tt, repeat), C = median(tc, repeat), W = median(tw, repeat);
            double X = median(tx, repeat), M = median(tm, repeat), U = median(tu, repeat);
            sum_total += T, sum_compute += C, sum_wait += W, sum_xchg += X, sum_merge += M;
            sum_cpu += U;
            wrong += !(ok && single_ok);
            printf("%-5s %6llu %9.2f %9.2f %7.2f %7.2f %7.2f %8.2f %7llu %s\n", ssb_query_name(q),
                   (unsigned long long)nrows, 1e3 * T, 1e3 * C, 1e3 * W, 1e3 * X, 1e3 * M, 1e3 * U,
                   (unsigned long long)groups,
                   !checks           ? "-"
                   : ok && single_ok ? "ok"
                   : !ok             ? "WRONG"
                                     : "ONE-PROCESS WRONG");
        }
        if (rank == 0 && ck.have)
            ssb_result_free(&ck.want);
    }
    if (rank == 0 && !failed && sum_total > 0) {
        printf("all   %6s %9.2f %9.2f %7.2f %7.2f %7.2f %8.2f\n", "", 1e3 * sum_total,
               1e3 * sum_compute, 1e3 * sum_wait, 1e3 * sum_xchg, 1e3 * sum_merge, 1e3 * sum_cpu);
        printf("shares of the total: compute %.3f, communication %.3f, merge %.3f; imbalance "
               "(slowest - fastest local run) %.3f\n(ms, medians of %d: total the slowest rank's "
               "whole call, compute its slowest local run, comm = total - compute - merge,\n"
               "cpu the CPU time of the local runs, every rank's threads together)\n",
               sum_compute / sum_total, sum_xchg / sum_total, sum_merge / sum_total,
               sum_wait / sum_total, repeat);
    }
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ssb_tables_close(&tables);
    if (rank == 0 && checks)
        ssb_tables_close(&wtables);
    ssb_free(&db);
    ssb_free(&whole);
    coproc_mpi_close(m);
    MPI_Finalize();
    return failed || wrong ? 1 : 0;
}
