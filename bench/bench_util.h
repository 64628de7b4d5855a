/* bench_util.h - what coproc-bench's files share: a monotonic clock, a
 * comparison for qsort over doubles, and the splitmix64 generator. */
#ifndef COPROC_BENCH_UTIL_H
#define COPROC_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort's comparison of two doubles, ascending. */
static inline int bench_cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* splitmix64: the next value of the sequence seeded by *s. */
static inline uint64_t bench_mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
