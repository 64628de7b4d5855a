/* exchange.c - coproc_mpi's all-to-all of bytes past MPI's int counts. MPI's
 * counts and displacements are int, so one MPI_Alltoallv carries less than
 * 2^31 bytes a peer (and a buffer of less than 2^31 bytes, its displacements
 * being int too). Here every pair's bytes go as point-to-point messages of at
 * most m->round bytes each (2^30 by default), addressed with 64-bit offsets:
 * any size a host can hold. The pieces of one pair are matched in the order
 * posted (MPI's messages between two ranks with one tag do not overtake), so
 * every rank posts its exchanges in the same order. On the public MPI API. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define TAG 0x6370 /* on the handle's own communicator: no user's message meets it */

uint64_t coproc_mpi_pieces_(uint64_t bytes, uint64_t round)
{
    return bytes / round + (bytes % round != 0);
}

void coproc_mpi_piece_(uint64_t bytes, uint64_t round, uint64_t k, uint64_t *off, int *len)
{
    uint64_t o = k * round, left = bytes > o ? bytes - o : 0;
    *off = o;
    *len = (int)(left < round ? left : round);
}

void coproc_mpi_set_round_(coproc_mpi *m, uint64_t bytes)
{
    m->round = bytes < 1 ? 1 : bytes > COPROC_MPI_ROUND ? COPROC_MPI_ROUND : bytes;
}

int coproc_mpi_xchg_reserve_(coproc_mpi *m, const uint64_t *sc, const uint64_t *rc, int times,
                             coproc_mpi_xchg *x)
{
    uint64_t n = 0;
    for (int r = 0; r < m->size; r++)
        if (r != m->rank)
            n += coproc_mpi_pieces_(sc[r], m->round) + coproc_mpi_pieces_(rc[r], m->round);
    n *= (uint64_t)times;
    if (n > (uint64_t)x->cap) {
        if (n > INT32_MAX)
            return -1; /* MPI_Waitall counts requests in an int */
        MPI_Request *p = realloc(x->req, n * sizeof *p);
        if (!p)
            return -1;
        x->req = p;
        x->cap = (int)n;
    }
    return 0;
}

void coproc_mpi_xchg_post_(coproc_mpi *m, const void *send, const uint64_t *sc, const uint64_t *sd,
                           void *recv, const uint64_t *rc, const uint64_t *rd, coproc_mpi_xchg *x)
{
    /* receives first, so that a piece finds its buffer posted; from the next rank on, so that
     * the ranks do not all start on rank 0 */
    for (int i = 1; i < m->size; i++) {
        int r = (m->rank + m->size - i) % m->size;
        for (uint64_t k = 0, n = coproc_mpi_pieces_(rc[r], m->round); k < n; k++) {
            uint64_t off;
            int len;
            coproc_mpi_piece_(rc[r], m->round, k, &off, &len);
            MPI_Irecv((char *)recv + rd[r] + off, len, MPI_BYTE, r, TAG, m->comm, &x->req[x->n++]);
        }
    }
    for (int i = 1; i < m->size; i++) {
        int r = (m->rank + i) % m->size;
        for (uint64_t k = 0, n = coproc_mpi_pieces_(sc[r], m->round); k < n; k++) {
            uint64_t off;
            int len;
            coproc_mpi_piece_(sc[r], m->round, k, &off, &len);
            MPI_Isend((const char *)send + sd[r] + off, len, MPI_BYTE, r, TAG, m->comm,
                      &x->req[x->n++]);
        }
    }
    if (sc[m->rank]) /* this rank's own bytes: no message */
        memmove((char *)recv + rd[m->rank], (const char *)send + sd[m->rank], sc[m->rank]);
}

void coproc_mpi_xchg_test_(coproc_mpi_xchg *x)
{
    int done;
    if (x->n)
        MPI_Testall(x->n, x->req, &done, MPI_STATUSES_IGNORE);
}

void coproc_mpi_xchg_wait_(coproc_mpi_xchg *x)
{
    if (x->n)
        MPI_Waitall(x->n, x->req, MPI_STATUSES_IGNORE);
    x->n = 0;
}

void coproc_mpi_xchg_free_(coproc_mpi_xchg *x)
{
    free(x->req);
    memset(x, 0, sizeof *x);
}

void coproc_mpi_xchg_run_(coproc_mpi *m, const void *send, const uint64_t *sc, const uint64_t *sd,
                          void *recv, const uint64_t *rc, const uint64_t *rd, coproc_mpi_xchg *x)
{
    coproc_mpi_xchg_post_(m, send, sc, sd, recv, rc, rd, x);
    coproc_mpi_xchg_wait_(x);
}
