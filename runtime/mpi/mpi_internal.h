/* mpi_internal.h - what the files of coproc_mpi share: the handle, the status
 * agreement and the key hash. Not installed. */
#ifndef COPROC_MPI_INTERNAL_H
#define COPROC_MPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coproc/mpi.h"

#define MSG_LEN 512
/* The most bytes one message of an exchange carries (exchange.c): MPI's counts are int. */
#define COPROC_MPI_ROUND (1ull << 30)

struct coproc_mpi {
    MPI_Comm comm, local;
    int rank, size, lrank, lsize;
    int gpu_aware; /* coproc_mpi_gpu_aware's answer, found at open */
    int overlap;   /* 0: each column's exchange waited for before the next is packed
                    * (COPROC_MPI_OVERLAP=0, to measure what the overlap gives) */
    uint64_t round; /* bytes a message at most: COPROC_MPI_ROUND, less in tests */
    coproc_runtime *rt;
    /* Host exchange buffers kept between calls (coproc_mpi_partition's two send buffers):
     * grown, never shrunk, freed at close. */
    void *scratch[2];
    size_t scratch_cap[2];
    /* Pinned host columns (coproc_column_host_alloc) that device columns are downloaded into
     * before they are sent, one per column of a table: reused between calls, grown, freed at
     * close. */
    coproc_column **stage;
    size_t *stage_cap; /* bytes */
    int nstage;
    int no_map; /* test hook: download device columns even where they could be mapped */
    char errmsg[MSG_LEN];
};

void coproc_mpi_set_msg_(char *buf, const char *fmt, ...);
coproc_status coproc_mpi_agree_(coproc_mpi *m, coproc_status s, const char *msg, int64_t shape);
/* m->scratch[i] with at least `bytes` bytes, NULL when out of memory. */
void *coproc_mpi_scratch_(coproc_mpi *m, int i, size_t bytes);
/* Pinned host memory of at least `bytes` bytes for column i (m->stage[i]), NULL when out of
 * memory. */
void *coproc_mpi_stage_(coproc_mpi *m, int i, size_t bytes);

/* ---- exchange.c: all-to-all of bytes in messages of at most m->round bytes, 64-bit sizes */

/* The requests of exchanges in flight. */
typedef struct coproc_mpi_xchg {
    MPI_Request *req;
    int n, cap;
} coproc_mpi_xchg;

/* Messages that `bytes` take at `round` bytes a message (0 for 0 bytes). */
uint64_t coproc_mpi_pieces_(uint64_t bytes, uint64_t round);
/* Message k of `bytes`: its offset and length. */
void coproc_mpi_piece_(uint64_t bytes, uint64_t round, uint64_t k, uint64_t *off, int *len);
/* The test hook: messages of at most `bytes` (1 .. COPROC_MPI_ROUND) from now on. Every rank
 * must set the same. */
void coproc_mpi_set_round_(coproc_mpi *m, uint64_t bytes);
/* Room in x for `times` exchanges of these byte counts (sc[r] to rank r, rc[r] from it) in
 * flight at once; -1 out of memory. Call it before the ranks agree: posting cannot fail. */
int coproc_mpi_xchg_reserve_(coproc_mpi *m, const uint64_t *sc, const uint64_t *rc, int times,
                             coproc_mpi_xchg *x);
/* Post one exchange: sc[r] bytes from send + sd[r] to rank r, rc[r] bytes from rank r to
 * recv + rd[r]; this rank's own sc[rank] bytes copied at once. Every rank posts its
 * exchanges in the same order. */
void coproc_mpi_xchg_post_(coproc_mpi *m, const void *send, const uint64_t *sc, const uint64_t *sd,
                           void *recv, const uint64_t *rc, const uint64_t *rd, coproc_mpi_xchg *x);
void coproc_mpi_xchg_test_(coproc_mpi_xchg *x); /* let the exchanges in flight move on */
void coproc_mpi_xchg_wait_(coproc_mpi_xchg *x); /* every exchange posted done */
/* Post and wait. */
void coproc_mpi_xchg_run_(coproc_mpi *m, const void *send, const uint64_t *sc, const uint64_t *sd,
                          void *recv, const uint64_t *rc, const uint64_t *rd, coproc_mpi_xchg *x);
void coproc_mpi_xchg_free_(coproc_mpi_xchg *x);

/* ---- host_view.c: a column's rows in host memory for MPI to read */

typedef struct coproc_mpi_host_view {
    const void *p;     /* the rows (NULL for none) */
    int mapped;        /* 1: p is a mapping of the device buffer (mem, on queue) */
    void *mem, *queue; /* cl_mem, cl_command_queue */
} coproc_mpi_host_view;

/* A host column's own memory; a device column mapped in place where its device is
 * host-unified, else downloaded into the pinned stage buffer i. A status and msg on failure. */
coproc_status coproc_mpi_host_view_(coproc_mpi *m, const coproc_column *col, int i,
                                    coproc_mpi_host_view *v, char *msg);
/* Unmap (when mapped) once MPI is done with the rows. */
void coproc_mpi_host_view_end_(coproc_mpi_host_view *v);
/* Test hook: 0 downloads every device column (the path of discrete GPUs), 1 maps (default). */
void coproc_mpi_set_map_(coproc_mpi *m, int map);

/* coproc_mpi_partition by key blocks: the integer column's values (as unsigned keys in their
 * type's order: signed ones with the sign bit flipped) in [lo, hi] cut into P equal blocks,
 * block r to rank r, keys below lo to rank 0 and above hi to rank P - 1. Two tables cut with
 * the same lo and hi are co-partitioned; a dense key range stays dense on every rank. */
coproc_status coproc_mpi_partition_blocks_(coproc_mpi *m, const coproc_table *in,
                                           const char *column, uint64_t lo, uint64_t hi,
                                           coproc_mpi_table *out);

/* coproc_mpi_colocate's AUTO: the method for sides of these whole sizes over P ranks, the
 * build side's keys dense over their range (range < 2 x rows + 1024, keys of one signedness)
 * or not. */
coproc_mpi_join_method coproc_mpi_join_choice_(uint64_t probe_bytes, uint64_t build_bytes, int P,
                                               int dense_build, uint64_t broadcast_limit);

/* splitmix64's finaliser: the hash that places a key on a rank. */
static inline uint64_t coproc_mpi_mix64_(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif /* COPROC_MPI_INTERNAL_H */
