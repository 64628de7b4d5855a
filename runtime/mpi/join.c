/* join.c - coproc_mpi_hash_join (include/coproc/mpi.h): a join of two sides
 * spread over the ranks. Both key columns (with each row's global row number
 * when the pairs are wanted) are shuffled by key hash with
 * coproc_mpi_partition, so a key's rows of both sides meet on one rank; each
 * rank joins its share on its device and the counts are summed. On the public
 * API only, like the rest of coproc_mpi. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define set_msg coproc_mpi_set_msg_
#define agree coproc_mpi_agree_

void coproc_mpi_join_free(coproc_mpi_join *j)
{
    if (!j)
        return;
    coproc_column_free(j->left_rows);
    coproc_column_free(j->right_rows);
    j->left_rows = j->right_rows = NULL;
}

static int is_int(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64 || t == COPROC_UINT32 || t == COPROC_UINT64;
}

/* One side to shuffle: its key column, and with pairs its rows' global numbers (first ..). */
typedef struct side {
    coproc_table *t;
    coproc_column *rows;
    coproc_mpi_table part;
    coproc_column *dev; /* the shuffled keys on the device */
} side;

static coproc_status side_make(coproc_runtime *rt, const coproc_column *key, uint64_t first,
                               int pairs, side *s)
{
    size_t n = coproc_column_length(key);
    coproc_status st = coproc_table_create(rt, &s->t);
    if (st == COPROC_OK)
        st = coproc_table_add(s->t, "k", key);
    if (st == COPROC_OK && pairs) {
        st = coproc_column_host_alloc(rt, COPROC_UINT64, n, &s->rows);
        uint64_t *g = st == COPROC_OK ? coproc_column_host_data(s->rows) : NULL;
        for (size_t i = 0; g && i < n; i++)
            g[i] = first + i;
        if (st == COPROC_OK)
            st = coproc_table_add(s->t, "row", s->rows);
    }
    return st;
}

static void side_free(side *s)
{
    coproc_column_free(s->dev);
    coproc_mpi_table_free(&s->part);
    coproc_table_free(s->t);
    coproc_column_free(s->rows);
}

/* Local positions (UINT32, on a device or the host) mapped through a shuffled side's global
 * row numbers into a new UINT64 host column. */
static coproc_status global_rows(coproc_runtime *rt, const coproc_column *pos, size_t n,
                                 const coproc_table *part, coproc_column **out)
{
    uint32_t *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        return COPROC_HOST_OUT_OF_MEMORY;
    coproc_status s = n ? coproc_column_download(pos, p, n) : COPROC_OK;
    if (s == COPROC_OK)
        s = coproc_column_host_alloc(rt, COPROC_UINT64, n, out);
    if (s == COPROC_OK) {
        const uint64_t *g = coproc_column_host_data(coproc_table_column(part, "row"));
        uint64_t *o = coproc_column_host_data(*out);
        for (size_t i = 0; i < n; i++)
            o[i] = g[p[i]];
    }
    free(p);
    return s;
}

coproc_status coproc_mpi_hash_join(coproc_mpi *m, const coproc_table *left, const char *lkey,
                                   const coproc_table *right, const char *rkey, int pairs,
                                   coproc_mpi_join *out)
{
    if (!m)
        return COPROC_NULL_POINTER;
    coproc_mpi_join scratch;
    coproc_mpi_join *res = out ? out : &scratch;
    memset(res, 0, sizeof *res);
    double t0 = MPI_Wtime(), tw = 0, tm;
    char msg[MSG_LEN] = "";
    coproc_status s = COPROC_OK;
    const coproc_column *lk = NULL, *rk = NULL;
    if (!out || !left || !right || !lkey || !rkey) {
        s = COPROC_NULL_POINTER;
        set_msg(msg, "coproc_mpi_hash_join: a NULL table, key name or result");
    } else if (!m->rt) {
        s = COPROC_INVALID_ARGUMENT;
        set_msg(msg, "coproc_mpi_hash_join: the handle has no runtime (its open failed)");
    } else {
        lk = coproc_table_column(left, lkey), rk = coproc_table_column(right, rkey);
        if (!lk || !rk || !is_int(coproc_column_type(lk)) ||
            coproc_column_type(lk) != coproc_column_type(rk)) {
            s = COPROC_INVALID_ARGUMENT;
            set_msg(msg,
                    "coproc_mpi_hash_join: the keys %s and %s must be integer columns of one "
                    "type in each side",
                    lkey, rkey);
        }
    }
    int64_t shape = lk && rk ? 1 + (int64_t)coproc_column_type(lk) + 8 * (pairs != 0) : 0;
    tm = MPI_Wtime();
    coproc_status all = agree(m, s, msg, s == COPROC_OK ? shape : 0);
    tw += MPI_Wtime() - tm;
    if (all != COPROC_OK) {
        res->seconds = MPI_Wtime() - t0, res->wait_s = tw;
        return all;
    }
    /* ---- both sides shuffled by key hash */
    uint64_t n[2] = {coproc_column_length(lk), coproc_column_length(rk)}, first[2] = {0, 0};
    if (pairs) {
        tm = MPI_Wtime();
        MPI_Exscan(n, first, 2, MPI_UINT64_T, MPI_SUM, m->comm);
        if (m->rank == 0)
            first[0] = first[1] = 0;
        tw += MPI_Wtime() - tm;
    }
    side sd[2];
    memset(sd, 0, sizeof sd);
    const coproc_column *key[2] = {lk, rk};
    for (int i = 0; i < 2; i++) {
        s = side_make(m->rt, key[i], first[i], pairs, &sd[i]);
        if (s != COPROC_OK)
            set_msg(msg, "the %s side: %s", i ? "right" : "left", coproc_errmsg(m->rt));
        tm = MPI_Wtime();
        all = agree(m, s, msg, 0);
        tw += MPI_Wtime() - tm;
        if (all == COPROC_OK)
            all = coproc_mpi_partition(m, sd[i].t, COPROC_MPI_HASH, "k", &sd[i].part);
        res->pack_s += sd[i].part.pack_s, res->exchange_s += sd[i].part.exchange_s;
        if (all != COPROC_OK)
            break;
    }
    /* ---- the local join on the device */
    s = COPROC_OK;
    msg[0] = '\0';
    coproc_join_result jr = {0};
    if (all == COPROC_OK) {
        double t1 = MPI_Wtime();
        coproc_type kt = coproc_column_type(lk);
        for (int i = 0; i < 2 && s == COPROC_OK; i++) {
            const coproc_column *k = coproc_table_column(sd[i].part.table, "k");
            s = coproc_column_upload(m->rt, 0, kt, coproc_column_host_data(k),
                                     coproc_column_length(k), &sd[i].dev);
        }
        res->left_in = coproc_table_rows(sd[0].part.table);
        res->right_in = coproc_table_rows(sd[1].part.table);
        double t2 = MPI_Wtime();
        res->transfer_s = t2 - t1;
        if (s != COPROC_OK) {
            set_msg(msg, "uploading the keys: %s", coproc_errmsg(m->rt));
        } else if (!pairs) {
            s = coproc_hash_join_count(m->rt, sd[0].dev, sd[1].dev, &res->local_pairs);
            if (s != COPROC_OK)
                set_msg(msg, "coproc_hash_join_count: %s", coproc_errmsg(m->rt));
            res->compute_s = MPI_Wtime() - t2;
        } else {
            s = coproc_hash_join(m->rt, sd[0].dev, sd[1].dev, &jr);
            if (s != COPROC_OK)
                set_msg(msg, "coproc_hash_join: %s", coproc_errmsg(m->rt));
            res->compute_s = MPI_Wtime() - t2;
            double t3 = MPI_Wtime();
            res->local_pairs = s == COPROC_OK ? jr.count : 0;
            if (s == COPROC_OK)
                s = global_rows(m->rt, jr.left, jr.count, sd[0].part.table, &res->left_rows);
            if (s == COPROC_OK)
                s = global_rows(m->rt, jr.right, jr.count, sd[1].part.table, &res->right_rows);
            if (s != COPROC_OK && !msg[0])
                set_msg(msg, "the pairs' row numbers: %s", coproc_errmsg(m->rt));
            res->transfer_s += MPI_Wtime() - t3; /* the positions back, mostly */
        }
        tm = MPI_Wtime();
        all = agree(m, s, msg, 0);
        if (all == COPROC_OK)
            MPI_Allreduce(&res->local_pairs, &res->pairs, 1, MPI_UINT64_T, MPI_SUM, m->comm);
        tw += MPI_Wtime() - tm;
    }
    coproc_join_result_free(&jr);
    side_free(&sd[0]);
    side_free(&sd[1]);
    if (all != COPROC_OK) {
        coproc_mpi_join_free(res);
        res->pairs = res->local_pairs = 0;
    }
    res->wait_s = tw;
    res->seconds = MPI_Wtime() - t0;
    return all;
}
