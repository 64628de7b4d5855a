/* big_mpi.c - coproc-big-mpi: one column past 2^31 bytes through coproc_mpi_partition, by
 * hand (it needs about 3 x the column's bytes of host memory on one machine, so CI does not
 * run it; tests/mpi/mpi_exchange checks the same splitting with small messages). Rank 0 holds
 * --rows N int64 values (default 280M: 2.24 GB, past 2^31 bytes), the other ranks none;
 * REPLICATE sends the whole column from rank 0 to every rank in one pair's exchange, and
 * every rank checks that it holds 0, 1, ..., N - 1. Public API only.
 *
 * Exit status: 0 right; 1 wrong or an error; 77 no OpenCL device; 64 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "coproc/mpi.h"
#include "bench_mpi.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t rows = 280000000;
    static const struct option longs[] = {{"rows", 1, 0, 'n'}, {0, 0, 0, 0}};
    for (int c; (c = getopt_long(argc, argv, "", longs, NULL)) != -1;) {
        if (c == 'n')
            rows = strtoull(optarg, NULL, 10);
        else
            bad = 1;
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun [...] coproc-big-mpi [--rows N]\n");
        MPI_Finalize();
        return 64;
    }
    coproc_mpi *m = NULL;
    coproc_status s = bench_mpi_open(&m);
    if (s != COPROC_OK)
        return bench_mpi_open_failed(rank, m, s);
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t mine = rank == 0 ? rows : 0;
    coproc_column *col = NULL;
    coproc_table *t = NULL;
    s = coproc_column_host_alloc(rt, COPROC_INT64, mine, &col);
    if (s == COPROC_OK)
        s = coproc_table_create(rt, &t);
    if (s == COPROC_OK)
        s = coproc_table_add(t, "v", col);
    int64_t *v = s == COPROC_OK ? coproc_column_host_data(col) : NULL;
    for (uint64_t i = 0; v && i < mine; i++)
        v[i] = (int64_t)i;
    int wrong = s != COPROC_OK;
    coproc_mpi_table out = {0};
    double t0 = MPI_Wtime();
    int failed = 0; /* every rank made its table, or none goes on (no rank left waiting) */
    MPI_Allreduce(&wrong, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!failed)
        s = coproc_mpi_partition(m, t, COPROC_MPI_REPLICATE, NULL, &out);
    else if (s == COPROC_OK)
        s = COPROC_HOST_OUT_OF_MEMORY, wrong = 1; /* another rank's table failed */
    double secs = MPI_Wtime() - t0;
    if (s != COPROC_OK) {
        fprintf(stderr, "rank %d: %s: %s\n", rank, coproc_status_name(s),
                wrong ? coproc_errmsg(rt) : coproc_mpi_errmsg(m));
        wrong = 1;
    } else {
        const int64_t *got = coproc_column_host_data(coproc_table_column(out.table, "v"));
        uint64_t n = coproc_table_rows(out.table);
        wrong = n != rows;
        for (uint64_t i = 0; !wrong && i < n; i++)
            wrong = got[i] != (int64_t)i;
        printf("rank %d: %llu rows (%.2f GB, %s 2^31 bytes) in %.2f s (pack %.2f, MPI %.2f): %s\n",
               rank, (unsigned long long)n, (double)n * 8 / 1e9,
               n * 8 > 2147483648ull ? "past" : "under", secs, out.pack_s, out.exchange_s,
               wrong ? "WRONG" : "every value right");
    }
    int any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    coproc_mpi_table_free(&out);
    coproc_table_free(t);
    coproc_column_free(col);
    coproc_mpi_close(m);
    MPI_Finalize();
    return any ? 1 : 0;
}
