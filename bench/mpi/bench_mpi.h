/* bench_mpi.h - what the MPI benchmark programs share, on the public
 * headers: a log that keeps quiet, a deterministic mix for data, opening
 * coproc_mpi with that log, and the exit after a failed open. */
#ifndef COPROC_BENCH_MPI_H
#define COPROC_BENCH_MPI_H

#include <stdint.h>
#include <stdio.h>

#include "coproc/mpi.h"

static inline void quiet_log(void *u, coproc_log_level l, const char *m)
{
    (void)u, (void)l, (void)m;
}

/* splitmix64's finaliser: a well-spread value from z. */
static inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* coproc_mpi_open over MPI_COMM_WORLD with default options and a quiet log. */
static inline coproc_status bench_mpi_open(coproc_mpi **m)
{
    coproc_options o;
    coproc_options_init(&o);
    o.log = quiet_log;
    return coproc_mpi_open(MPI_COMM_WORLD, &o, m);
}

/* After bench_mpi_open failed with s on this rank: say so, end MPI, and
 * give the exit status (77, skipped, when there is no OpenCL device). */
static inline int bench_mpi_open_failed(int rank, coproc_mpi *m, coproc_status s)
{
    fprintf(stderr, "rank %d: coproc_mpi_open: %s: %s\n", rank, coproc_status_name(s),
            coproc_mpi_errmsg(m));
    coproc_mpi_close(m);
    MPI_Finalize();
    return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE ? 77 : 1;
}

#endif
