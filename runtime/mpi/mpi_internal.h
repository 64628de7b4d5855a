/* mpi_internal.h - what the files of coproc_mpi share: the handle, the status
 * agreement and the key hash. Not installed. */
#ifndef COPROC_MPI_INTERNAL_H
#define COPROC_MPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coproc/mpi.h"

#define MSG_LEN 512

struct coproc_mpi {
    MPI_Comm comm, local;
    int rank, size, lrank, lsize;
    int gpu_aware; /* coproc_mpi_gpu_aware's answer, found at open */
    int overlap;   /* 0: each column's exchange waited for before the next is packed
                    * (COPROC_MPI_OVERLAP=0, to measure what the overlap gives) */
    coproc_runtime *rt;
    /* Host exchange buffers kept between calls (coproc_mpi_partition's two send buffers):
     * grown, never shrunk, freed at close. */
    void *scratch[2];
    size_t scratch_cap[2];
    char errmsg[MSG_LEN];
};

void coproc_mpi_set_msg_(char *buf, const char *fmt, ...);
coproc_status coproc_mpi_agree_(coproc_mpi *m, coproc_status s, const char *msg, int64_t shape);
/* m->scratch[i] with at least `bytes` bytes, NULL when out of memory. */
void *coproc_mpi_scratch_(coproc_mpi *m, int i, size_t bytes);

/* coproc_mpi_colocate's AUTO: the method for sides of these whole sizes over P ranks. */
coproc_mpi_join_method coproc_mpi_join_choice_(uint64_t probe_bytes, uint64_t build_bytes, int P,
                                               uint64_t broadcast_limit);

/* splitmix64's finaliser: the hash that places a key on a rank. */
static inline uint64_t coproc_mpi_mix64_(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif /* COPROC_MPI_INTERNAL_H */
