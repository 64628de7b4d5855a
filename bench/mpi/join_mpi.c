/* join_mpi.c - coproc-join-mpi: a shuffle-heavy distributed join over MPI
 * ranks (coproc/mpi.h), under mpirun. Each rank generates its share of two
 * large sides (int64 keys, a pure function of the global row number) and
 * coproc_mpi_hash_join joins them: both sides shuffled by key hash
 * (coproc_mpi_partition HASH), each rank's keys uploaded to its device and
 * its pairs counted there (coproc_hash_join_count; --pairs: made, as global
 * row numbers, and each checked), the counts summed. Rank 0 checks the sum
 * against a plain C count over the whole data. Time per phase, the slowest
 * rank's: the shuffle's packing (hashing, counting, scattering) and its time
 * in MPI, the device transfers, the local join, the wait for the slowest rank
 * (agreeing and summing).
 *
 * --weak N: N rows a side on every rank (the data grow with the ranks);
 * --strong N: N rows a side in all, split over the ranks.
 * Public API only (coproc.h, coproc/query.h, coproc/mpi.h).
 *
 * Exit status: 0 right; 1 wrong or an error (every rank); 77 no OpenCL device;
 * 64 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "bench_mpi.h"

#define MAX_REPEAT 64

/* splitmix64: the key of global row i of a side, uniform over [0, nkeys). */
static int64_t key_of(uint64_t i, uint64_t seed, uint64_t nkeys)
{
    uint64_t z = i + seed * 0x9e3779b97f4a7c15ull + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (int64_t)(z % nkeys);
}

/* The pairs of the whole join in plain C: a histogram of the build side's keys, probed by
 * every row of the other. */
static uint64_t reference(uint64_t nl, uint64_t nr, uint64_t nkeys)
{
    uint32_t *h = calloc(nkeys, sizeof *h);
    if (!h)
        return UINT64_MAX;
    for (uint64_t i = 0; i < nl; i++)
        h[key_of(i, 1, nkeys)]++;
    uint64_t pairs = 0;
    for (uint64_t j = 0; j < nr; j++)
        pairs += h[key_of(j, 2, nkeys)];
    free(h);
    return pairs;
}

enum { PACK, EXCHANGE, TRANSFER, COMPUTE, WAIT, TOTAL, NPHASE };
static const char *const phase_name[NPHASE] = {"pack",    "exchange", "transfer",
                                               "compute", "wait",     "total"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* This rank's pairs, each a real match (the keys of its two global rows equal) and none twice
 * (a key's pairs are all on one rank, so none can repeat on another). 0 when right. */
static int check_pairs(const coproc_mpi_join *j, uint64_t nkeys)
{
    const uint64_t *l = coproc_column_host_data(j->left_rows);
    const uint64_t *r = coproc_column_host_data(j->right_rows);
    uint64_t n = j->local_pairs, *p = malloc((n ? n : 1) * 2 * sizeof *p);
    int bad = !p;
    for (uint64_t i = 0; !bad && i < n; i++) {
        bad = key_of(l[i], 1, nkeys) != key_of(r[i], 2, nkeys);
        p[2 * i] = l[i], p[2 * i + 1] = r[i];
    }
    if (!bad)
        qsort(p, n, 2 * sizeof *p, cmp_pair);
    for (uint64_t i = 1; !bad && i < n; i++)
        bad = cmp_pair(p + 2 * i, p + 2 * i - 2) == 0;
    free(p);
    return bad;
}

/* One run: coproc_mpi_hash_join (the shuffle of both sides by key hash, the uploads, the
 * local join, the sum). t[] this rank's seconds per phase. Returns the status (the same on
 * every rank) and the pairs in *pairs. */
static coproc_status run_once(coproc_mpi *m, const coproc_table *left, const coproc_table *right,
                              int want_pairs, uint64_t nkeys, double *t, uint64_t *pairs, char *msg,
                              size_t msglen)
{
    MPI_Barrier(coproc_mpi_comm(m));
    coproc_mpi_join j;
    coproc_status s = coproc_mpi_hash_join(m, left, "k", right, "k", want_pairs, &j);
    if (s != COPROC_OK) /* collective: every rank has the error */
        snprintf(msg, msglen, "coproc_mpi_hash_join: %s", coproc_mpi_errmsg(m));
    t[PACK] = j.pack_s, t[EXCHANGE] = j.exchange_s, t[TRANSFER] = j.transfer_s;
    t[COMPUTE] = j.compute_s, t[WAIT] = j.wait_s, t[TOTAL] = j.seconds;
    *pairs = j.pairs;
    int bad = s == COPROC_OK && want_pairs && check_pairs(&j, nkeys), anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, coproc_mpi_comm(m));
    coproc_mpi_join_free(&j);
    if (s == COPROC_OK && anybad) {
        snprintf(msg, msglen, "a rank's pairs are not matches, or repeat");
        return COPROC_INTERNAL;
    }
    return s;
}

/* A side's share on this rank: rows [first, first + n) of the side, keys in "k". */
static coproc_status make_side(coproc_runtime *rt, uint64_t first, uint64_t n, uint64_t seed,
                               uint64_t nkeys, int64_t **keys, coproc_column **col,
                               coproc_table **t)
{
    *keys = malloc((n ? n : 1) * sizeof **keys);
    if (!*keys)
        return COPROC_HOST_OUT_OF_MEMORY;
    for (uint64_t i = 0; i < n; i++)
        (*keys)[i] = key_of(first + i, seed, nkeys);
    coproc_status s = coproc_column_wrap(rt, COPROC_INT64, *keys, n, col);
    if (s == COPROC_OK)
        s = coproc_table_create(rt, t);
    if (s == COPROC_OK)
        s = coproc_table_add(*t, "k", *col);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long weak = 0, strong = 0;
    int repeat = 5, bad = 0, want_pairs = 0;
    static const struct option longs[] = {{"weak", required_argument, 0, 'w'},
                                          {"strong", required_argument, 0, 's'},
                                          {"repeat", required_argument, 0, 'r'},
                                          {"pairs", no_argument, 0, 'p'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        if (c == 'w')
            weak = atoll(optarg);
        else if (c == 's')
            strong = atoll(optarg);
        else if (c == 'r')
            repeat = atoi(optarg);
        else if (c == 'p')
            want_pairs = 1;
        else
            bad = 1;
    }
    if (bad || optind != argc || (weak > 0) == (strong > 0) || weak < 0 || strong < 0 ||
        weak > (1ll << 28) || strong > (1ll << 30) || repeat < 1 || repeat > MAX_REPEAT) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun [...] coproc-join-mpi --weak N|--strong N "
                            "[--repeat R] [--pairs]\n"
                            "  --weak N    N rows a side on every rank (at most 2^28)\n"
                            "  --strong N  N rows a side in all, split over the ranks\n"
                            "  --repeat R  timed runs after one warm-up (default 5)\n"
                            "  --pairs     make the pairs (global row numbers) and check each,\n"
                            "              not only count them\n");
        MPI_Finalize();
        return 64;
    }
    uint64_t total = weak ? (uint64_t)weak * (uint64_t)size : (uint64_t)strong;
    uint64_t nkeys = total; /* about one match a probe row */

    coproc_mpi *m = NULL;
    coproc_status s = bench_mpi_open(&m);
    if (s != COPROC_OK)
        return bench_mpi_open_failed(rank, m, s);
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t first, n;
    coproc_mpi_block(m, total, &first, &n);
    int64_t *lkeys = NULL, *rkeys = NULL;
    coproc_column *lcol = NULL, *rcol = NULL;
    coproc_table *left = NULL, *right = NULL;
    s = make_side(rt, first, n, 1, nkeys, &lkeys, &lcol, &left);
    if (s == COPROC_OK)
        s = make_side(rt, first, n, 2, nkeys, &rkeys, &rcol, &right);
    int ok = s == COPROC_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    uint64_t want = 0;
    if (rank == 0 && all_ok)
        want = reference(total, total, nkeys);

    double t[MAX_REPEAT + 1][NPHASE], worst[MAX_REPEAT + 1][NPHASE];
    int failed = !all_ok;
    char msg[512] = "data";
    for (int r = 0; !failed && r <= repeat; r++) { /* run 0: the warm-up */
        uint64_t pairs = 0;
        s = run_once(m, left, right, want_pairs, nkeys, t[r], &pairs, msg, sizeof msg);
        MPI_Reduce(t[r], worst[r], NPHASE, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (s != COPROC_OK) {
            fprintf(stderr, "rank %d: %s: %s\n", rank, coproc_status_name(s), msg);
            failed = 1;
        } else if (rank == 0 && pairs != want) {
            fprintf(stderr, "coproc-join-mpi: %llu pairs, the C reference %llu\n",
                    (unsigned long long)pairs, (unsigned long long)want);
            failed = 1;
        }
        MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (rank == 0 && !failed) {
        /* Bytes leaving their rank: a uniform hash keeps 1/P of the rows home. */
        double moved = 2.0 * 8.0 * (double)total * (size - 1) / size;
        printf("join %s: %d rank(s), %llu rows a side in all (%llu keys), %llu pairs%s "
               "(= the C reference); ~%.1f MB shuffled a run; GPU-aware MPI: %s\n",
               weak ? "weak" : "strong", size, (unsigned long long)total, (unsigned long long)nkeys,
               (unsigned long long)want, want_pairs ? " made and checked" : "", moved / 1e6,
               coproc_mpi_gpu_aware(m) > 0    ? "yes"
               : coproc_mpi_gpu_aware(m) == 0 ? "no"
                                              : "unknown");
        printf("ms, the slowest rank's, median of %d (min-max):\n", repeat);
        for (int p = 0; p < NPHASE; p++) {
            double v[MAX_REPEAT];
            for (int r = 0; r < repeat; r++)
                v[r] = worst[r + 1][p] * 1e3;
            qsort(v, repeat, sizeof *v, cmp_double);
            printf("  %-8s %9.2f  (%.2f-%.2f)\n", phase_name[p], v[repeat / 2], v[0],
                   v[repeat - 1]);
        }
        /* one line for scripts: the medians */
        printf("RESULT mode=%s%s ranks=%d rows=%llu", weak ? "weak" : "strong",
               want_pairs ? "-pairs" : "", size, (unsigned long long)total);
        for (int p = 0; p < NPHASE; p++) {
            double v[MAX_REPEAT];
            for (int r = 0; r < repeat; r++)
                v[r] = worst[r + 1][p] * 1e3;
            qsort(v, repeat, sizeof *v, cmp_double);
            printf(" %s=%.3f", phase_name[p], v[repeat / 2]);
        }
        printf("\n");
    }
    coproc_table_free(left);
    coproc_table_free(right);
    coproc_column_free(lcol);
    coproc_column_free(rcol);
    free(lkeys);
    free(rkeys);
    coproc_mpi_close(m);
    MPI_Finalize();
    return failed ? 1 : 0;
}
