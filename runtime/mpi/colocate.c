/* colocate.c - coproc_mpi_colocate (include/coproc/mpi.h): the exchange step of a
 * distributed plan with a join. The build side is broadcast (REPLICATE) or both
 * sides are shuffled by key hash (HASH), chosen from the sides' sizes or forced;
 * each rank then runs the rest of the plan over its rows. On the public API
 * only, like the rest of coproc_mpi. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define set_msg coproc_mpi_set_msg_
#define agree coproc_mpi_agree_
#define SIGN 0x8000000000000000ull

void coproc_mpi_colocated_free(coproc_mpi_colocated *c)
{
    if (!c)
        return;
    coproc_mpi_table_free(&c->probe_part_);
    coproc_mpi_table_free(&c->build_part_);
    c->probe = c->build = NULL;
}

static int is_int(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64 || t == COPROC_UINT32 || t == COPROC_UINT64;
}

/* The bytes of a table's rows, every column. */
static uint64_t table_bytes(const coproc_table *t)
{
    uint64_t b = 0, n = coproc_table_rows(t);
    for (int c = 0; c < coproc_table_column_count(t); c++)
        b += n * coproc_type_size(coproc_column_type(coproc_table_column_at(t, c)));
    return b;
}

coproc_mpi_join_method coproc_mpi_join_choice_(uint64_t probe_bytes, uint64_t build_bytes, int P,
                                               int dense_build, uint64_t broadcast_limit)
{
    uint64_t limit = broadcast_limit ? broadcast_limit : COPROC_MPI_BROADCAST_LIMIT;
    if (P <= 1)
        return COPROC_MPI_JOIN_BROADCAST; /* nothing moves either way */
    if (build_bytes > limit)
        return COPROC_MPI_JOIN_SHUFFLE;
    /* Build keys dense over their range: broadcast keeps every rank's copy dense, so its local
     * join indexes a direct table; a hash shuffle over 3 ranks or more leaves each rank a
     * range over twice its rows, hashed instead - measured 1.5-1.8x slower on 4 ranks
     * (docs/performance.md) */
    if (dense_build && P > 2)
        return COPROC_MPI_JOIN_BROADCAST;
    /* Else the fewer bytes to move: build * (P - 1) <= probe */
    return build_bytes <= probe_bytes / (uint64_t)(P - 1) ? COPROC_MPI_JOIN_BROADCAST
                                                          : COPROC_MPI_JOIN_SHUFFLE;
}

/* The key column's least and greatest value in the order of its type, as unsigned keys
 * (signed values with the sign bit flipped); lo > hi for no rows. 0 when they are not on
 * the host (a device column: not looked at). */
static int key_bounds(const coproc_column *k, uint64_t *lo, uint64_t *hi)
{
    const void *p = coproc_column_host_data(k);
    size_t n = coproc_column_length(k);
    *lo = UINT64_MAX, *hi = 0;
    if (n && !p)
        return 0;
    coproc_type t = coproc_column_type(k);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = t == COPROC_INT32    ? (uint64_t)(int64_t)((const int32_t *)p)[i] ^ SIGN
                     : t == COPROC_UINT32 ? ((const uint32_t *)p)[i]
                     : t == COPROC_UINT64 ? ((const uint64_t *)p)[i]
                                          : (uint64_t)((const int64_t *)p)[i] ^ SIGN;
        *lo = v < *lo ? v : *lo, *hi = v > *hi ? v : *hi;
    }
    return 1;
}

coproc_status coproc_mpi_colocate(coproc_mpi *m, const coproc_table *probe, const char *probe_key,
                                  const coproc_table *build, const char *build_key,
                                  coproc_mpi_join_method method, uint64_t broadcast_limit,
                                  coproc_mpi_colocated *out)
{
    if (!m)
        return COPROC_NULL_POINTER;
    coproc_mpi_colocated scratch;
    coproc_mpi_colocated *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    double t0 = MPI_Wtime(), tm;
    char msg[MSG_LEN] = "";
    coproc_status s = COPROC_OK;
    const char *key[2] = {probe_key, build_key};
    const coproc_table *side[2] = {probe, build};
    if (!out || !probe || !build || !probe_key || !build_key) {
        s = COPROC_NULL_POINTER;
        set_msg(msg, "coproc_mpi_colocate: a NULL table, key name or result");
    } else if (!m->rt) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_colocate: the handle has no runtime (its open failed)");
    } else if ((unsigned)method > COPROC_MPI_JOIN_SHUFFLE) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_colocate: join method %d", (int)method);
    } else {
        for (int i = 0; i < 2 && s == COPROC_OK; i++) {
            const coproc_column *k = coproc_table_column(side[i], key[i]);
            if (!k || !is_int(coproc_column_type(k))) {
                s = COPROC_INVALID_ARGUMENT;
                set_msg(msg, "coproc_mpi_colocate: no integer column %s in the %s side", key[i],
                        i ? "build" : "probe");
            }
        }
    }
    /* each side's bytes, the build key's bounds (the least as ~lo, so that one MPI_MAX finds
     * both), whether a rank could not look, the build side's rows */
    uint64_t mine[6] = {0, 0, 0, 0, 0, 0}, whole[6] = {0, 0, 0, 0, 0, 0};
    if (s == COPROC_OK && method == COPROC_MPI_JOIN_AUTO) {
        uint64_t lo, hi;
        mine[4] = !key_bounds(coproc_table_column(build, build_key), &lo, &hi);
        mine[2] = ~lo, mine[3] = hi;
    }
    if (s == COPROC_OK)
        mine[0] = table_bytes(probe), mine[1] = table_bytes(build);
    uint64_t build_rows = s == COPROC_OK ? coproc_table_rows(build) : 0, all_rows = 0;
    tm = MPI_Wtime();
    /* the method is part of the shape: every rank must take the same */
    coproc_status all = agree(m, s, msg, s == COPROC_OK ? 1 + (int64_t)method : 0);
    if (all == COPROC_OK) {
        MPI_Allreduce(mine, whole, 2, MPI_UINT64_T, MPI_SUM, m->comm);
        if (method == COPROC_MPI_JOIN_AUTO) {
            MPI_Allreduce(mine + 2, whole + 2, 3, MPI_UINT64_T, MPI_MAX, m->comm);
            MPI_Allreduce(&build_rows, &all_rows, 1, MPI_UINT64_T, MPI_SUM, m->comm);
        }
    }
    res->exchange_s += MPI_Wtime() - tm;
    if (all != COPROC_OK) {
        res->seconds = MPI_Wtime() - t0;
        return all;
    }
    res->probe_bytes = whole[0], res->build_bytes = whole[1];
    uint64_t lo = ~whole[2], hi = whole[3];
    /* dense as the fused join takes it: a range within twice the rows (+ 1024) */
    int dense = !whole[4] && all_rows && hi >= lo && hi - lo < 2 * all_rows + 1024;
    res->method =
        method != COPROC_MPI_JOIN_AUTO
            ? method
            : coproc_mpi_join_choice_(whole[0], whole[1], m->size, dense, broadcast_limit);
    if (m->size == 1) { /* every row is here already */
        res->probe = probe, res->build = build;
        res->seconds = MPI_Wtime() - t0;
        return COPROC_OK;
    }
    if (res->method == COPROC_MPI_JOIN_BROADCAST) {
        all = coproc_mpi_partition(m, build, COPROC_MPI_REPLICATE, NULL, &res->build_part_);
        res->probe = probe;
    } else {
        all = coproc_mpi_partition(m, probe, COPROC_MPI_HASH, probe_key, &res->probe_part_);
        res->pack_s += res->probe_part_.pack_s, res->exchange_s += res->probe_part_.exchange_s;
        if (all == COPROC_OK)
            all = coproc_mpi_partition(m, build, COPROC_MPI_HASH, build_key, &res->build_part_);
        res->probe = res->probe_part_.table;
    }
    res->pack_s += res->build_part_.pack_s, res->exchange_s += res->build_part_.exchange_s;
    res->build = res->build_part_.table;
    if (all != COPROC_OK)
        coproc_mpi_colocated_free(res);
    res->seconds = MPI_Wtime() - t0;
    return all;
}
