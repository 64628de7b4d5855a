/* mpi_join.c - coproc_mpi_hash_join under mpirun (tests/mpi_run.sh): both
 * sides spread over the ranks (equal shares, one side on one rank, no rows),
 * integer keys of each type with duplicates, negatives, extremes and no
 * matches; every rank's pairs, as global row numbers, gathered on rank 0 must
 * be exactly the pairs a plain C nested loop finds over the whole sides, and
 * the count mode the same number on every rank. Then the errors: key types
 * that differ, a float key, a key column one rank lacks - every rank returns
 * the error. Plain MPI program: 0 passed, 1 failed, 77 no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/mpi.h"
#include "mpi_check.h"

enum { DUPS, NEGATIVE, DISJOINT, EXTREMES };

/* Side `side`'s row g: its key as 64 bits (an int32 key's sign-extended). */
static uint64_t key_of(int shape, int side, uint64_t g)
{
    uint64_t h = mix(g * 2 + (uint64_t)side);
    switch (shape) {
    case DUPS:
        return h % 50;
    case NEGATIVE:
        return (uint64_t)(int64_t)((int64_t)(h % 200) - 100);
    case DISJOINT:
        return 2 * (h % 1000) + (uint64_t)side;
    default: {
        const uint64_t v[4] = {(uint64_t)INT64_MIN, (uint64_t)INT64_MAX, 0, UINT64_MAX};
        return v[h % 4];
    }
    }
}

/* A side's rows [first, first + n) as a table of one key column "k" of type t. */
static coproc_table *make_side(coproc_runtime *rt, coproc_type t, int shape, int side,
                               uint64_t first, uint64_t n, coproc_column **col)
{
    coproc_table *tab = NULL;
    if (coproc_table_create(rt, &tab) != COPROC_OK ||
        coproc_column_host_alloc(rt, t, n, col) != COPROC_OK)
        return NULL;
    char *p = coproc_column_host_data(*col);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key_of(shape, side, first + i);
        if (coproc_type_size(t) == 4) {
            uint32_t k32 = (uint32_t)k;
            memcpy(p + 4 * i, &k32, 4);
        } else {
            memcpy(p + 8 * i, &k, 8);
        }
    }
    coproc_table_add(tab, "k", *col);
    return tab;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* How many rows of a side's `total` rank r holds: equal shares, all on `on`, or none. */
static uint64_t share(int layout, int r, uint64_t total, int on)
{
    if (layout == 0)
        return total * (uint64_t)(r + 1) / size - total * (uint64_t)r / size;
    if (layout == 1)
        return r == on ? total : 0;
    return 0;
}

static void join_case(coproc_mpi *m, coproc_type t, int shape, int layout, uint64_t nl, uint64_t nr)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    uint64_t fl = 0, fr = 0, ml = share(layout, rank, nl, 0),
             mr = share(layout, rank, nr, size - 1);
    for (int r = 0; r < rank; r++)
        fl += share(layout, r, nl, 0), fr += share(layout, r, nr, size - 1);
    if (layout == 2)
        nl = nr = 0;
    coproc_column *lc = NULL, *rc = NULL;
    coproc_table *lt = make_side(rt, t, shape, 0, fl, ml, &lc);
    coproc_table *rtab = make_side(rt, t, shape, 1, fr, mr, &rc);
    char what[128];
    snprintf(what, sizeof what, "%s keys, shape %d, layout %d, %llu x %llu", coproc_type_name(t),
             shape, layout, (unsigned long long)nl, (unsigned long long)nr);
    coproc_mpi_join j, c;
    coproc_status s = coproc_mpi_hash_join(m, lt, "k", rtab, "k", 1, &j);
    CHECK(s == COPROC_OK, "%s: %s: %s", what, coproc_status_name(s), coproc_mpi_errmsg(m));
    coproc_status s2 = coproc_mpi_hash_join(m, lt, "k", rtab, "k", 0, &c);
    CHECK(s2 == COPROC_OK, "%s, counting: %s: %s", what, coproc_status_name(s2),
          coproc_mpi_errmsg(m));
    if (s == COPROC_OK && s2 == COPROC_OK) {
        CHECK(c.pairs == j.pairs && c.local_pairs == j.local_pairs, "%s: counted %llu, made %llu",
              what, (unsigned long long)c.pairs, (unsigned long long)j.pairs);
        uint64_t n = j.local_pairs, *mine = malloc((n ? n : 1) * 2 * sizeof *mine);
        const uint64_t *l = coproc_column_host_data(j.left_rows);
        const uint64_t *r = coproc_column_host_data(j.right_rows);
        for (uint64_t i = 0; i < n; i++)
            mine[2 * i] = l[i], mine[2 * i + 1] = r[i];
        int bytes = (int)(n * 2 * sizeof *mine), *counts = calloc(size, sizeof(int)),
            *displs = calloc(size, sizeof(int));
        MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int at = 0;
        for (int q = 0; q < size; q++)
            displs[q] = at, at += counts[q];
        uint64_t *all = rank == 0 ? malloc(at ? (size_t)at : 1) : NULL;
        MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            uint64_t got = (uint64_t)at / (2 * sizeof *all), want = 0;
            uint64_t *ref = malloc((got + 1) * 2 * sizeof *ref);
            int size_ok = 1;
            /* the C reference: every (l, r) of the whole sides with equal keys */
            for (uint64_t a = 0; a < nl; a++)
                for (uint64_t b = 0; b < nr; b++) {
                    uint64_t ka = key_of(shape, 0, a), kb = key_of(shape, 1, b);
                    if (coproc_type_size(t) == 4)
                        ka = (uint32_t)ka, kb = (uint32_t)kb;
                    if (ka != kb)
                        continue;
                    if (want < got)
                        ref[2 * want] = a, ref[2 * want + 1] = b;
                    else
                        size_ok = 0;
                    want++;
                }
            CHECK(size_ok && want == got && j.pairs == want,
                  "%s: %llu pairs (%llu summed), C: %llu", what, (unsigned long long)got,
                  (unsigned long long)j.pairs, (unsigned long long)want);
            if (size_ok && want == got) {
                qsort(all, got, 2 * sizeof *all, cmp_pair);
                qsort(ref, got, 2 * sizeof *ref, cmp_pair);
                CHECK(memcmp(all, ref, got * 2 * sizeof *ref) == 0, "%s: the pairs differ", what);
            }
            free(ref);
        }
        free(all), free(mine), free(counts), free(displs);
    }
    coproc_mpi_join_free(&j);
    coproc_mpi_join_free(&c);
    coproc_table_free(lt), coproc_table_free(rtab);
    coproc_column_free(lc), coproc_column_free(rc);
}

/* Errors: every rank returns the error of the bad argument, wherever it is. */
static void errors(coproc_mpi *m)
{
    coproc_runtime *rt = coproc_mpi_runtime(m);
    coproc_column *a = NULL, *b = NULL, *f = NULL;
    coproc_table *t32 = make_side(rt, COPROC_INT32, DUPS, 0, 0, 10, &a);
    coproc_table *t64 = make_side(rt, COPROC_INT64, DUPS, 1, 0, 10, &b);
    coproc_column_host_alloc(rt, COPROC_FLOAT64, 10, &f);
    memset(coproc_column_host_data(f), 0, 10 * sizeof(double));
    coproc_table_add(t64, "f", f);
    coproc_mpi_join j;
    coproc_status s = coproc_mpi_hash_join(m, t32, "k", t64, "k", 0, &j);
    CHECK(s == COPROC_INVALID_ARGUMENT, "key types that differ: %s", coproc_status_name(s));
    s = coproc_mpi_hash_join(m, t64, "f", t64, "f", 1, &j);
    CHECK(s == COPROC_INVALID_ARGUMENT, "a float key: %s", coproc_status_name(s));
    s = coproc_mpi_hash_join(m, t64, rank == size - 1 ? "nope" : "k", t64, "k", 1, &j);
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", size - 1);
    CHECK(s == COPROC_INVALID_ARGUMENT && strncmp(coproc_mpi_errmsg(m), want, strlen(want)) == 0,
          "a key the last rank lacks: %s: %s", coproc_status_name(s), coproc_mpi_errmsg(m));
    CHECK(!j.left_rows && !j.right_rows && j.pairs == 0, "an error leaves no result");
    s = coproc_mpi_hash_join(m, t64, "k", t64, "k", 0, &j); /* works again */
    CHECK(s == COPROC_OK, "after the errors: %s", coproc_mpi_errmsg(m));
    coproc_table_free(t32), coproc_table_free(t64);
    coproc_column_free(a), coproc_column_free(b), coproc_column_free(f);
}

int main(int argc, char **argv)
{
    mpi_begin(&argc, &argv);
    coproc_mpi *m;
    coproc_status s = mpi_open_quiet(&m);
    if (s != COPROC_OK)
        return open_failed(m, s);
    const coproc_type types[4] = {COPROC_INT32, COPROC_UINT32, COPROC_INT64, COPROC_UINT64};
    int cases = 0;
    for (int ti = 0; ti < 4; ti++)
        for (int shape = DUPS; shape <= EXTREMES; shape++)
            for (int layout = 0; layout < 3; layout++, cases++)
                join_case(m, types[ti], shape, layout, 700, 900);
    errors(m);
    coproc_mpi_close(m);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_join: %d ranks, %d joins: %s (%d failures)\n", size, cases,
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
