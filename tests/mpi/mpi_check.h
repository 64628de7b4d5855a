/* mpi_check.h - what the MPI test programs share: each rank's failure count
 * and the CHECK that adds to it (the program ends by agreeing on the sum),
 * starting MPI, opening coproc_mpi with a log that keeps quiet, the exit
 * after a failed open, and a deterministic mix for data. */
#ifndef COPROC_MPI_CHECK_H
#define COPROC_MPI_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "coproc.h"
#include "coproc/mpi.h"

static int rank, size, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static inline void quiet_log(void *u, coproc_log_level l, const char *m)
{
    (void)u, (void)l, (void)m;
}

/* MPI started, this process's rank and the job's size known. */
static inline void mpi_begin(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
}

/* coproc_mpi_open over MPI_COMM_WORLD with default options and a quiet log. */
static inline coproc_status mpi_open_quiet(coproc_mpi **m)
{
    coproc_options o;
    coproc_options_init(&o);
    o.log = quiet_log;
    return coproc_mpi_open(MPI_COMM_WORLD, &o, m);
}

/* After coproc_mpi_open failed with s: say so, end MPI, and give the exit
 * status (77, skipped, when there is no OpenCL device). */
static inline int open_failed(coproc_mpi *m, coproc_status s)
{
    fprintf(stderr, "rank %d: coproc_mpi_open: %s: %s\n", rank, coproc_status_name(s),
            coproc_mpi_errmsg(m));
    coproc_mpi_close(m);
    MPI_Finalize();
    return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE ? 77 : 1;
}

/* splitmix64's finaliser: a well-spread value from z. */
static inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
