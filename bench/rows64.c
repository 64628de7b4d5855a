/* rows64.c - coproc-rows64: what 64-bit positions cost where they overlap
 * the 32-bit ones. One zero-page column (an anonymous MAP_NORESERVE mapping:
 * untouched pages read as zeros and cost no memory) of 2^32 + 2^20 INT32
 * rows whose first --matches rows are 1; coproc_select(col != 0) to
 * positions over its first UINT32_MAX rows (UINT32 positions) and over all
 * of it (UINT64 positions). Both stream the same way under the same budget
 * and select the same rows; the wide one reads 0.02 % more rows and widens
 * its positions on the host. Rounds alternate which goes first; the ratio
 * wide / narrow is printed per round with the median and range. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "coproc.h"

#define ROWS (((size_t)1 << 32) + ((size_t)1 << 20))

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One select to positions; its seconds, or a negative number on error. */
static double select_once(coproc_runtime *rt, const coproc_column *col, size_t want,
                          coproc_type want_type)
{
    coproc_filter f;
    memset(&f, 0, sizeof f);
    f.first.col = col;
    f.first.cmp = COPROC_CMP_NE;
    f.first.a.i64 = 0;
    coproc_column *pos = NULL;
    uint64_t count = 0;
    double t = now();
    coproc_status s = coproc_select(rt, &f, &pos, &count);
    t = now() - t;
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_select: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        return -1;
    }
    int ok =
        count == want && coproc_column_type(pos) == want_type && coproc_column_length(pos) == want;
    coproc_column_free(pos);
    if (!ok) {
        fprintf(stderr, "wrong result: %" PRIu64 " positions, expected %zu\n", count, want);
        return -1;
    }
    return t;
}

static void usage(void)
{
    fprintf(stderr, "usage: coproc-rows64 [--matches N] [--rounds R] [--budget-mib B]\n");
}

int main(int argc, char **argv)
{
    size_t matches = (size_t)1 << 26;
    int rounds = 3;
    uint64_t budget_mib = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--matches") && i + 1 < argc)
            matches = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget-mib") && i + 1 < argc)
            budget_mib = strtoull(argv[++i], NULL, 0);
        else {
            usage();
            return 2;
        }
    }
    if (rounds < 1 || rounds > 100 || matches > UINT32_MAX || budget_mib == 0) {
        usage();
        return 2;
    }
    size_t bytes = ROWS * sizeof(int32_t);
    int32_t *data = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (data == MAP_FAILED) {
        perror("mmap of the 2^32-row column");
        return 1;
    }
    madvise(data, bytes, MADV_HUGEPAGE); /* the zero page 2 MiB at a time */
    for (size_t i = 0; i < matches; i++)
        data[i] = 1;

    coproc_options opts;
    coproc_options_init(&opts);
    opts.device_budget_bytes = budget_mib << 20;
    opts.watchdog_seconds = -1; /* a 17 GB pass may outlast its floor */
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&opts, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return 1;
    }
    coproc_column *narrow = NULL, *wide = NULL;
    if (coproc_column_wrap(rt, COPROC_INT32, data, UINT32_MAX, &narrow) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_INT32, data, ROWS, &wide) != COPROC_OK) {
        fprintf(stderr, "coproc_column_wrap: %s\n", coproc_errmsg(rt));
        return 1;
    }
    printf("coproc-rows64: select col != 0 to positions, %zu matches, budget %" PRIu64
           " MiB, %d rounds\n",
           matches, budget_mib, rounds);
    printf("  narrow: %zu rows -> UINT32 positions; wide: %zu rows -> UINT64 positions\n",
           (size_t)UINT32_MAX, ROWS);
    double *ratio = malloc((size_t)rounds * sizeof *ratio);
    int failed = !ratio;
    for (int r = 0; r < rounds && !failed; r++) {
        double t[2] = {0, 0}; /* narrow, wide */
        for (int k = 0; k < 2 && !failed; k++) {
            int w = (k + r) % 2; /* alternate which runs first */
            t[w] = select_once(rt, w ? wide : narrow, matches, w ? COPROC_UINT64 : COPROC_UINT32);
            failed = t[w] < 0;
        }
        if (failed)
            break;
        ratio[r] = t[1] / t[0];
        printf("  round %d: narrow %.2f s, wide %.2f s, wide / narrow %.3f\n", r + 1, t[0], t[1],
               ratio[r]);
    }
    if (!failed) {
        qsort(ratio, (size_t)rounds, sizeof *ratio, cmp_double);
        printf("wide / narrow: median %.3f [%.3f, %.3f]\n", ratio[rounds / 2], ratio[0],
               ratio[rounds - 1]);
    }
    free(ratio);
    coproc_column_free(narrow);
    coproc_column_free(wide);
    coproc_close(rt);
    munmap(data, bytes);
    return failed;
}
