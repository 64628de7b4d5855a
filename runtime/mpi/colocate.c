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

static int is_signed(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64;
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
    /* Broadcast when it fits and moves no more bytes: build * (P - 1) <= probe */
    if (build_bytes <= limit && build_bytes <= probe_bytes / (uint64_t)(P - 1))
        return COPROC_MPI_JOIN_BROADCAST;
    /* Else shuffle: by key range when the build keys are dense over it, so that every rank's
     * share stays dense and its local join indexes a direct table (a hash shuffle over 3
     * ranks or more leaves each a range over twice its rows, hashed instead: measured 2x
     * slower, docs/performance.md); by hash otherwise (even whatever the keys' spread). */
    return dense_build && P > 2 ? COPROC_MPI_JOIN_SHUFFLE_RANGE : COPROC_MPI_JOIN_SHUFFLE;
}

/* The key column's least and greatest value in the order of its type, as unsigned keys
 * (signed values with the sign bit flipped); lo > hi for no rows. Read where it lies (a
 * device column mapped or downloaded); a status and msg when it cannot be read. */
static coproc_status key_bounds(coproc_mpi *m, const coproc_column *k, uint64_t *lo, uint64_t *hi,
                                char *msg)
{
    size_t n = coproc_column_length(k);
    *lo = UINT64_MAX, *hi = 0;
    coproc_mpi_host_view view;
    coproc_status s = coproc_mpi_host_view_(m, k, 0, &view, msg);
    if (s != COPROC_OK)
        return s;
    const void *p = view.p;
    coproc_type t = coproc_column_type(k);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = t == COPROC_INT32    ? (uint64_t)(int64_t)((const int32_t *)p)[i] ^ SIGN
                     : t == COPROC_UINT32 ? ((const uint32_t *)p)[i]
                     : t == COPROC_UINT64 ? ((const uint64_t *)p)[i]
                                          : (uint64_t)((const int64_t *)p)[i] ^ SIGN;
        *lo = v < *lo ? v : *lo, *hi = v > *hi ? v : *hi;
    }
    coproc_mpi_host_view_end_(&view);
    return COPROC_OK;
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
    int same_order = 1;
    const char *key[2] = {probe_key, build_key};
    const coproc_table *side[2] = {probe, build};
    if (!out || !probe || !build || !probe_key || !build_key) {
        s = COPROC_NULL_POINTER;
        set_msg(msg, "coproc_mpi_colocate: a NULL table, key name or result");
    } else if (!m->rt) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_colocate: the handle has no runtime (its open failed)");
    } else if ((unsigned)method > COPROC_MPI_JOIN_SHUFFLE_RANGE) {
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
        if (s == COPROC_OK) {
            /* key ranges compare values in their type's order: one signedness for both */
            same_order = is_signed(coproc_column_type(coproc_table_column(probe, probe_key))) ==
                         is_signed(coproc_column_type(coproc_table_column(build, build_key)));
            if (method == COPROC_MPI_JOIN_SHUFFLE_RANGE && !same_order) {
                s = COPROC_INVALID_ARGUMENT;
                set_msg(msg,
                        "coproc_mpi_colocate: SHUFFLE_RANGE over a signed and an unsigned "
                        "key (%s, %s)",
                        probe_key, build_key);
            }
        }
    }
    /* each side's bytes, the build key's bounds (the least as ~lo, so that one MPI_MAX finds
     * both), the build side's rows */
    uint64_t mine[5] = {0, 0, 0, 0, 0}, whole[5] = {0, 0, 0, 0, 0};
    int bounds = method == COPROC_MPI_JOIN_AUTO || method == COPROC_MPI_JOIN_SHUFFLE_RANGE;
    if (s == COPROC_OK && bounds) {
        uint64_t lo, hi;
        s = key_bounds(m, coproc_table_column(build, build_key), &lo, &hi, msg);
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
        if (bounds) {
            MPI_Allreduce(mine + 2, whole + 2, 2, MPI_UINT64_T, MPI_MAX, m->comm);
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
    int dense = same_order && all_rows && hi >= lo && hi - lo < 2 * all_rows + 1024;
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
        /* both sides by key hash, or by blocks of the build key's range (the same on every
         * rank: lo and hi from the Allreduce) */
        int blocks = res->method == COPROC_MPI_JOIN_SHUFFLE_RANGE;
        uint64_t lo = ~whole[2], hi = whole[3];
        for (int i = 0; i < 2 && all == COPROC_OK; i++) {
            coproc_mpi_table *part = i ? &res->build_part_ : &res->probe_part_;
            all = blocks ? coproc_mpi_partition_blocks_(m, side[i], key[i], lo, hi, part)
                         : coproc_mpi_partition(m, side[i], COPROC_MPI_HASH, key[i], part);
        }
        res->pack_s += res->probe_part_.pack_s, res->exchange_s += res->probe_part_.exchange_s;
        res->probe = res->probe_part_.table;
    }
    res->pack_s += res->build_part_.pack_s, res->exchange_s += res->build_part_.exchange_s;
    res->build = res->build_part_.table;
    if (all != COPROC_OK)
        coproc_mpi_colocated_free(res);
    res->seconds = MPI_Wtime() - t0;
    return all;
}
