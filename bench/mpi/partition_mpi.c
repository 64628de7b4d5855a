/* partition_mpi.c - coproc-partition-mpi: what coproc_mpi_partition costs,
 * under mpirun. Each rank makes N rows of C columns (an int64 key, uniform,
 * then int64 and int32 payloads in turn) and repartitions them by hash, range
 * or round-robin; the time is split as coproc_mpi_table gives it: packing
 * (finding each row's rank, sampling, scattering) and the time in MPI (the
 * agreements, and the column exchanges that packing did not hide). Run it
 * with COPROC_MPI_OVERLAP=0 to wait for each column's exchange before packing
 * the next. Checks that no row is lost and, for range, that the ranks' keys
 * ascend. Public API only.
 *
 * Exit status: 0 right; 1 wrong or an error; 77 no OpenCL device; 64 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "bench_mpi.h"

#define MAX_REPEAT 64
#define MAX_COLS 16

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long rows = 1000000;
    int ncols = 4, repeat = 5, bad = 0;
    const char *how_name = "hash";
    static const struct option longs[] = {{"rows", required_argument, 0, 'n'},
                                          {"columns", required_argument, 0, 'c'},
                                          {"how", required_argument, 0, 'h'},
                                          {"repeat", required_argument, 0, 'r'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        if (c == 'n')
            rows = atoll(optarg);
        else if (c == 'c')
            ncols = atoi(optarg);
        else if (c == 'h')
            how_name = optarg;
        else if (c == 'r')
            repeat = atoi(optarg);
        else
            bad = 1;
    }
    coproc_mpi_partitioning how = strcmp(how_name, "hash") == 0    ? COPROC_MPI_HASH
                                  : strcmp(how_name, "range") == 0 ? COPROC_MPI_RANGE
                                  : strcmp(how_name, "rr") == 0    ? COPROC_MPI_ROUND_ROBIN
                                                                   : (coproc_mpi_partitioning)-1;
    if (bad || optind != argc || rows < 0 || rows > (1ll << 26) || ncols < 1 || ncols > MAX_COLS ||
        repeat < 1 || repeat > MAX_REPEAT || (int)how < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun [...] coproc-partition-mpi [--rows N] [--columns C] "
                            "[--how hash|range|rr] [--repeat R]\n"
                            "  N rows a rank (default 1000000, at most 2^26), C columns (1..16, "
                            "default 4), R timed runs after a warm-up (default 5)\n");
        MPI_Finalize();
        return 64;
    }
    coproc_mpi *m = NULL;
    coproc_status s = bench_mpi_open(&m);
    if (s != COPROC_OK)
        return bench_mpi_open_failed(rank, m, s);
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t n = (uint64_t)rows, first = n * (uint64_t)rank;
    coproc_table *t = NULL;
    coproc_column *cols[MAX_COLS] = {0};
    s = coproc_table_create(rt, &t);
    for (int k = 0; k < ncols && s == COPROC_OK; k++) {
        coproc_type ty = k == 0 || k % 2 ? COPROC_INT64 : COPROC_INT32;
        s = coproc_column_host_alloc(rt, ty, n, &cols[k]);
        if (s != COPROC_OK)
            break;
        void *p = coproc_column_host_data(cols[k]);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = mix((first + i) * MAX_COLS + (uint64_t)k);
            if (ty == COPROC_INT64)
                ((int64_t *)p)[i] = (int64_t)v;
            else
                ((int32_t *)p)[i] = (int32_t)v;
        }
        char name[16];
        snprintf(name, sizeof name, "c%d", k);
        s = coproc_table_add(t, name, cols[k]);
    }
    int ok = s == COPROC_OK, all_ok = 0, failed = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    failed = !all_ok;
    double v[3][MAX_REPEAT + 1], worst[MAX_REPEAT + 1][3];
    for (int r = 0; !failed && r <= repeat; r++) { /* run 0: the warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        coproc_mpi_table out;
        s = coproc_mpi_partition(m, t, how, "c0", &out);
        double mine[3] = {out.pack_s, out.exchange_s, out.seconds};
        MPI_Reduce(mine, worst[r], 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (s != COPROC_OK) {
            fprintf(stderr, "rank %d: %s: %s\n", rank, coproc_status_name(s), coproc_mpi_errmsg(m));
            failed = 1;
            break;
        }
        /* no row lost; range: this rank's keys between its neighbours' */
        uint64_t got = coproc_table_rows(out.table), total = 0;
        MPI_Allreduce(&got, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        int wrong = total != n * (uint64_t)size;
        if (how == COPROC_MPI_RANGE) {
            const int64_t *k = coproc_column_host_data(coproc_table_column(out.table, "c0"));
            int64_t lo = INT64_MAX, hi = INT64_MIN, prev_hi = INT64_MIN;
            for (uint64_t i = 0; i < got; i++)
                lo = k[i] < lo ? k[i] : lo, hi = k[i] > hi ? k[i] : hi;
            /* the previous rank's largest key, passed up (ranks without rows pass theirs on) */
            if (rank > 0)
                MPI_Recv(&prev_hi, 1, MPI_INT64_T, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wrong = wrong || (got && lo < prev_hi);
            int64_t up = got ? hi : prev_hi;
            if (rank + 1 < size)
                MPI_Send(&up, 1, MPI_INT64_T, rank + 1, 0, MPI_COMM_WORLD);
        }
        int anywrong = 0;
        MPI_Allreduce(&wrong, &anywrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (anywrong) {
            if (rank == 0)
                fprintf(stderr, "coproc-partition-mpi: rows lost or ranges out of order\n");
            failed = 1;
        }
        coproc_mpi_table_free(&out);
    }
    if (rank == 0 && !failed) {
        const char *ov = getenv("COPROC_MPI_OVERLAP");
        int overlap = !(ov && strcmp(ov, "0") == 0);
        printf("partition %s: %d rank(s), %lld rows a rank, %d columns, overlap %s\n", how_name,
               size, rows, ncols, overlap ? "on" : "off");
        printf("RESULT how=%s ranks=%d rows=%lld columns=%d overlap=%d", how_name, size, rows,
               ncols, overlap);
        const char *names[3] = {"pack", "mpi", "total"};
        for (int p = 0; p < 3; p++) {
            for (int r = 0; r < repeat; r++)
                v[p][r] = worst[r + 1][p] * 1e3;
            qsort(v[p], repeat, sizeof **v, cmp_double);
            printf(" %s=%.3f", names[p], v[p][repeat / 2]);
        }
        printf(" ns_per_row=%.2f\n", v[2][repeat / 2] * 1e6 / (double)(rows ? rows : 1));
    }
    coproc_table_free(t);
    for (int k = 0; k < ncols; k++)
        coproc_column_free(cols[k]);
    coproc_mpi_close(m);
    MPI_Finalize();
    return failed ? 1 : 0;
}
