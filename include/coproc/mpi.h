/* coproc/mpi.h - coproc over MPI ranks: a runtime per rank over its share of
 * the node's devices, and distributed aggregation (each rank runs a query plan
 * over its partition of the data, the partial groups are merged across ranks,
 * the result lands on rank 0). Opt-in header and library: link coproc_mpi
 * (built only where CMake finds MPI) and the coproc you use, with MPI's C
 * library; needs coproc.h and coproc/query.h.
 *
 * Every function here that takes a coproc_mpi is collective: every rank of
 * its communicator calls it, in the same order, with the same shape of
 * arguments (the same keys and aggregates; the data differ). A rank that fails
 * (a bad column on one rank, a driver error, out of memory) makes every rank
 * return an error: before each exchange that could block, the ranks agree on
 * the status (one MPI_Allreduce), and when one failed, every rank returns the
 * status of the lowest failing rank, its message in coproc_mpi_errmsg
 * prefixed "rank R: ". No rank is left waiting. An error of MPI itself keeps
 * MPI's own handler (by default MPI_ERRORS_ARE_FATAL: the job ends).
 *
 * Threads: a coproc_mpi is used by one thread at a time; MPI must be
 * initialised (MPI_Init or MPI_Init_thread, any level) before coproc_mpi_open
 * and finalised after coproc_mpi_close.
 */
#ifndef COPROC_MPI_H
#define COPROC_MPI_H

#include <mpi.h>

#include "coproc.h"
#include "coproc/query.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coproc_mpi coproc_mpi;

/*
 * Open a coproc runtime on this rank over its share of the node's devices.
 * comm is duplicated (the caller keeps its own). opts as coproc_open (NULL:
 * defaults); its devices, or COPROC_DEVICES when set (and devices does not
 * outrank it: over_env), select the node's devices as coproc_open does. The ranks on one node (MPI_Comm_split_type
 * MPI_COMM_TYPE_SHARED) then deal them out: with L local ranks and D selected
 * devices, local rank r takes devices r, r + L, r + 2L ... when D >= L, and
 * device r mod D when D < L - several ranks then share one device (one PoCL
 * CPU device shared by every rank of the node, each with its own threads:
 * set POCL_MAX_PTHREAD_COUNT to cores / L to keep them from oversubscribing
 * the cores; and mind mpirun's binding: Open MPI binds each rank to one core
 * when there are no more ranks than cores, and a CPU device's threads then
 * share that core - --bind-to none, or --map-by slot:PE=N). COPROC_MPI_SHARE=all gives every rank every selected device;
 * a simulated selection ("sim:...") is given whole to every rank.
 * Finding the node's devices opens a runtime once, without calibration, on
 * local rank 0. The rank's share is given to coproc_open as options.devices
 * with COPROC_OPTION_DEVICES in options.over_env (it outranks COPROC_DEVICES):
 * the process's environment is read, never changed.
 *
 * Collective. On success *out owns the handle. On failure (on any rank)
 * every rank returns the error; *out still receives a handle holding the
 * message (coproc_mpi_errmsg) and no runtime, unless the error is
 * NULL_POINTER or HOST_OUT_OF_MEMORY; close it with coproc_mpi_close.
 */
COPROC_API coproc_status coproc_mpi_open(MPI_Comm comm, const coproc_options *opts,
                                         coproc_mpi **out);

/* Close the runtime and free the communicator. Collective only in that it
 * frees a duplicated communicator (MPI_Comm_free). NULL is a no-op. Free the
 * tables and columns made on the runtime first. */
COPROC_API void coproc_mpi_close(coproc_mpi *m);

/* This rank's runtime (NULL after a failed open): build tables and plans on it. */
COPROC_API coproc_runtime *coproc_mpi_runtime(const coproc_mpi *m);
/* The duplicated communicator. */
COPROC_API MPI_Comm coproc_mpi_comm(const coproc_mpi *m);
COPROC_API int coproc_mpi_rank(const coproc_mpi *m);
COPROC_API int coproc_mpi_size(const coproc_mpi *m);
COPROC_API int coproc_mpi_local_rank(const coproc_mpi *m); /* among the ranks of its node */
COPROC_API int coproc_mpi_local_size(const coproc_mpi *m);
/* Whether this rank's MPI says it takes device (CUDA) memory in its calls: 1 yes, 0 no, -1
 * it cannot say (its library has no such query; Open MPI's MPIX_Query_cuda_support from
 * mpi-ext.h is asked where it exists). Informative only: coproc's device memory is OpenCL
 * buffers (cl_mem), which no CUDA-aware MPI takes, so coproc_mpi always hands MPI host
 * memory, whatever this says. What it does instead: host columns (coproc_column_host_alloc,
 * coproc_column_wrap) are read by MPI where they lie, with no staging copy; a device column
 * whose device reports host_unified_memory (PoCL's CPU device, integrated GPUs) is mapped
 * (clEnqueueMapBuffer, read-only) and MPI reads the mapping, with no copy; any other device
 * column (a discrete GPU's) is downloaded into a pinned host buffer kept in the handle and
 * reused by later calls; the rows received land in pinned host columns, ready to upload at
 * the bus's full speed. coproc_mpi links OpenCL for the mapping (coproc/opencl.h). */
COPROC_API int coproc_mpi_gpu_aware(const coproc_mpi *m);
/* The last error in English ("" if none); owned by m. */
COPROC_API const char *coproc_mpi_errmsg(const coproc_mpi *m);

/* A contiguous block partition of n items over the ranks: this rank's first
 * item and count (rank r of P: from r*n/P to (r+1)*n/P). Not collective. */
COPROC_API void coproc_mpi_block(const coproc_mpi *m, uint64_t n, uint64_t *first, uint64_t *count);

/* ---------------------------------------------------------------- partitioning */

typedef enum coproc_mpi_partitioning {
    COPROC_MPI_ROUND_ROBIN = 0, /* row i of all (ranks in order, rows in order) to rank i mod P */
    COPROC_MPI_HASH,            /* each row to the rank a hash of its integer column picks */
    COPROC_MPI_BLOCK,           /* all rows in order cut into P blocks of (nearly) equal length */
    COPROC_MPI_RANGE,           /* by the value of an integer column, ranks' ranges ascending */
    COPROC_MPI_REPLICATE        /* every row to every rank: a small build side broadcast */
} coproc_mpi_partitioning;

/* A table made by coproc_mpi_partition: host columns owned by it. */
typedef struct coproc_mpi_table {
    coproc_table *table;
    /* Where this rank's time went (seconds): */
    double seconds;    /* the whole call */
    double pack_s;     /* local work: downloads, destinations, splitters, packing rows */
    double exchange_s; /* in MPI: agreeing, counts, samples, and the column exchanges the
                        * packing of the next column did not hide */
    int ncolumns_;     /* private */
    coproc_column **columns_;
} coproc_mpi_table;

/*
 * Redistribute the rows of a table spread over the ranks (each rank's `in`
 * its share, 0 rows allowed: to scatter a table from one rank, the others
 * pass a table of the same columns with 0 rows) so that each rank ends with
 * the rows `how` gives it, in *out on the rank's runtime (host columns from
 * coproc_column_host_alloc: pinned, ready to upload); rows keep their order
 * (by source rank, then row). Every rank's `in` must have the same column
 * names and types in the same order. Device columns are downloaded first.
 *
 * HASH and RANGE take column `column`, an integer column; the others ignore it.
 * HASH: equal values go to one rank, the same rank for every table of the same
 * values whatever their integer type (co-partitioned joins).
 * RANGE: a distributed sort's split. Rows are ordered by (value, global row
 * number: ranks in order, rows in order) and cut into P ranges, rank r
 * holding the r-th: every value on rank r is <= every value on rank r + 1.
 * The P - 1 splitters come from a sample: each rank takes one row at a
 * pseudo-random place in each of up to 1024 equal strata of its rows (fewer
 * with more than 256 ranks), the samples are gathered on every rank
 * (MPI_Allgatherv) weighted by the rows each stands for, and every rank
 * picks the same weighted quantiles. Ties are broken by row number, so a
 * value held by many rows (skew, or every value equal) is spread over
 * neighbouring ranks instead of landing on one: the ranks' row counts stay
 * near total / P (exactly, when every rank has at most 1024 rows) whatever
 * the values' distribution. Rows of one value can thus sit on two or more
 * neighbouring ranks; use HASH to keep equal values together.
 *
 * Each rank packs its rows for the others one column at a time (a counting
 * pass, then one scatter pass a column; the rows that stay on the rank go
 * straight to *out, never through MPI) and posts that column's exchange
 * (non-blocking sends and receives) before packing the next, so the packing of one overlaps
 * the exchange of the other (COPROC_MPI_OVERLAP=0, read at coproc_mpi_open,
 * waits for each column's exchange instead: to measure what overlapping
 * gives); the two send buffers are kept in m between calls. BLOCK sends from
 * `in`'s memory, unpacked; over one rank every partitioning keeps the rows
 * in order, and nothing is hashed or packed. REPLICATE gives every rank all
 * the rows (ranks in order, rows in order), sent from `in`'s memory: a small
 * table every rank joins against (a dimension broadcast).
 *
 * Sizes: MPI counts in int, so each pair of ranks' bytes of a column go as
 * messages of at most 2^30 bytes (point-to-point, 64-bit offsets): a column
 * of any size the hosts hold, past 2^31 bytes a rank or a pair alike (so do
 * coproc_mpi_aggregate's gathered and shuffled partial groups).
 *
 * Collective. On error on any rank every rank returns it (*out empty):
 * INVALID_ARGUMENT for tables that differ between ranks, a missing or
 * non-integer HASH or RANGE column; HOST_OUT_OF_MEMORY.
 */
COPROC_API coproc_status coproc_mpi_partition(coproc_mpi *m, const coproc_table *in,
                                              coproc_mpi_partitioning how, const char *column,
                                              coproc_mpi_table *out);

/* Free the table and its columns. NULL is a no-op. */
COPROC_API void coproc_mpi_table_free(coproc_mpi_table *t);

/* ---------------------------------------------------------------- joins */

/* A distributed join's result and where this rank's time went. */
typedef struct coproc_mpi_join {
    uint64_t pairs;       /* every rank: the pairs of the whole join */
    uint64_t local_pairs; /* this rank's */
    /* With pairs asked for: this rank's pairs, as global row numbers of each side (row g of a
     * side: the g-th of every rank's rows, ranks in order, rows in order), UINT64 host
     * columns of local_pairs rows owned by the result, in no particular order. Else NULL. */
    coproc_column *left_rows, *right_rows;
    uint64_t left_in, right_in; /* this rank's rows of each side after the shuffle */
    double seconds;             /* the whole call */
    double pack_s;              /* the shuffle's local work (coproc_mpi_table.pack_s, both) */
    double exchange_s;          /* the shuffle's time in MPI (coproc_mpi_table.exchange_s) */
    double transfer_s;          /* the keys to the device, the pairs back */
    double compute_s;           /* the local hash join (and the row numbers' lookup) */
    double wait_s;              /* agreeing on the outcome and summing: the slowest rank */
} coproc_mpi_join;

/*
 * An equi-join of two tables spread over the ranks, as coproc_hash_join over
 * the union of every rank's rows: both sides shuffled by key hash
 * (coproc_mpi_partition HASH, so every key's rows of both sides meet on one
 * rank), each rank's keys uploaded to its runtime's device 0 and joined there
 * (coproc_hash_join_count, or coproc_hash_join when `pairs` is non-zero: the
 * hash table built on the left side), the counts summed on every rank.
 * lkey and rkey name integer columns of the same type in left and right; only
 * the key columns move (and, with pairs, each row's global row number).
 * Limits per rank after the shuffle: those of coproc_hash_join (the left side
 * at most 2^31 - 1 rows) and of coproc_mpi_partition.
 *
 * Collective. On error on any rank every rank returns it (*out empty, its
 * times kept): INVALID_ARGUMENT for a missing or non-integer key column, or
 * key types that differ.
 */
COPROC_API coproc_status coproc_mpi_hash_join(coproc_mpi *m, const coproc_table *left,
                                              const char *lkey, const coproc_table *right,
                                              const char *rkey, int pairs, coproc_mpi_join *out);

/* Free the result's columns. NULL is a no-op. */
COPROC_API void coproc_mpi_join_free(coproc_mpi_join *j);

/* ---------------------------------------------------------------- joins inside distributed plans
 */

/* How a join's two sides are brought together before a distributed plan runs. */
typedef enum coproc_mpi_join_method {
    /* BROADCAST when the whole build side (every rank's rows, all its columns) is at most
     * broadcast_limit bytes and broadcasting moves no more bytes than shuffling both sides:
     * build * (P - 1) <= probe (each rank receives build * (P - 1) / P bytes broadcast, about
     * (build + probe) * (P - 1) / P^2 shuffled). Else a shuffle: SHUFFLE_RANGE over 3 ranks
     * or more when the build key's values are dense (their range, over every rank, under
     * twice the build side's rows + 1024; both keys signed or both unsigned), SHUFFLE
     * otherwise. Measured on one machine, it picked the fastest method, or one within the
     * noise of it, in each of eight cases (docs/performance.md). */
    COPROC_MPI_JOIN_AUTO = 0,
    /* the build side replicated on every rank (coproc_mpi_partition REPLICATE), the probe
     * side left where it is */
    COPROC_MPI_JOIN_BROADCAST,
    /* both sides shuffled by key hash (coproc_mpi_partition HASH on each key), so that every
     * key's rows of both sides meet on one rank */
    COPROC_MPI_JOIN_SHUFFLE,
    /* both sides shuffled by key range: the build key's least to greatest value over every
     * rank (one MPI_Allreduce) cut into P equal blocks, block r of both sides to rank r
     * (probe keys outside it to the first or last rank). A dense build key (a dimension's
     * 0..n-1) stays dense on every rank, so each rank's local join keeps its direct-indexed
     * table, which a hash shuffle loses from 3 ranks on; keys crowded in part of their range
     * load the ranks unevenly. Both keys signed, or both unsigned (INVALID_ARGUMENT else). */
    COPROC_MPI_JOIN_SHUFFLE_RANGE
} coproc_mpi_join_method;

/* AUTO's default broadcast_limit (broadcast_limit 0): 64 MiB, a build side every rank can
 * hold and hash whole next to its share of the probe side. */
#define COPROC_MPI_BROADCAST_LIMIT (64ull << 20)

/* A join's sides placed for a distributed plan (coproc_mpi_colocate). */
typedef struct coproc_mpi_colocated {
    /* This rank's rows of each side, on its runtime: scan these in the plan and join them
     * there (coproc_plan_join / coproc_plan_join_keys). Either may be the caller's own table
     * (the probe side when broadcast, both over one rank): keep the inputs until the plan has
     * run. Columns made here are host columns (pinned, ready to upload). */
    const coproc_table *probe, *build;
    coproc_mpi_join_method method;     /* BROADCAST or SHUFFLE: what was done */
    uint64_t probe_bytes, build_bytes; /* each whole side's bytes, every rank's rows */
    double seconds;                    /* the whole call on this rank */
    double pack_s;     /* local work of the exchanges (coproc_mpi_table.pack_s, both sides) */
    double exchange_s; /* in MPI (coproc_mpi_table.exchange_s, both sides, and agreeing) */
    coproc_mpi_table probe_part_, build_part_; /* private */
} coproc_mpi_colocated;

/*
 * The exchange step of a distributed plan with a join: bring the rows of both sides (each
 * spread over the ranks in any way, 0 rows allowed on any rank) together so that every pair
 * the join makes over the union of every rank's rows is made on exactly one rank, with all
 * the columns of both tables. Then each rank builds its plan over out->probe and out->build
 * (the join, filters, a group-by ...) and coproc_mpi_aggregate combines the partial groups
 * as for any plan. Inner and semi joins alike (each probe row meets every build row of its
 * key on one rank, and only there); for a composite key pass its first column: equal keys
 * have equal first columns.
 *
 * method: COPROC_MPI_JOIN_BROADCAST or SHUFFLE forces one; AUTO picks by the sides' sizes
 * (broadcast_limit bytes, 0: COPROC_MPI_BROADCAST_LIMIT). Over one rank nothing moves
 * (out->probe and out->build are the inputs). Pass only the columns the plan needs: every
 * column moves. SHUFFLE over a skewed key sends all of a hot key's rows to one rank: right,
 * but that rank does the key's work alone; BROADCAST does not care about skew.
 *
 * probe_key and build_key name integer columns (of any integer types: equal values meet
 * whatever their types). Every rank's tables must have the same column names and types.
 *
 * Collective. On error on any rank every rank returns it (*out empty): INVALID_ARGUMENT for a
 * missing or non-integer key, a bad method, tables whose columns differ between ranks.
 */
COPROC_API coproc_status coproc_mpi_colocate(coproc_mpi *m, const coproc_table *probe,
                                             const char *probe_key, const coproc_table *build,
                                             const char *build_key, coproc_mpi_join_method method,
                                             uint64_t broadcast_limit, coproc_mpi_colocated *out);

/* Free the tables made by coproc_mpi_colocate. NULL is a no-op. */
COPROC_API void coproc_mpi_colocated_free(coproc_mpi_colocated *c);

/* ---------------------------------------------------------------- aggregation */

/* How the partial groups meet (keyed aggregation; without keys: MPI_Allreduce). */
typedef enum coproc_mpi_exchange {
    /* every rank's partial groups to rank 0, merged there: few groups (SSB's) */
    COPROC_MPI_GATHER = 0,
    /* each partial group to the rank its keys hash to (one MPI_Alltoallv), merged
     * there, then to rank 0 - with a limit only each rank's first `limit` in the
     * final order: many groups, or a top-k over many */
    COPROC_MPI_SHUFFLE
} coproc_mpi_exchange;

/*
 * A distributed group-by with order-by and limit: the equivalent of
 *   coproc_plan_order_by(coproc_plan_group_by(input, keys, aggs), order, limit)
 * over the union of every rank's input rows.
 */
typedef struct coproc_mpi_query {
    coproc_plan *plan;  /* this rank's plan (on coproc_mpi_runtime) */
    coproc_node *input; /* the node of plan whose rows are this rank's share */
    int nkeys;          /* 0..8 integer key columns; 0: one row over all rows */
    const char *const *keys;
    int naggs; /* 1..16; SUM, COUNT, MIN, MAX and AVG as coproc_plan_group_by */
    const coproc_aggregate *aggs;
    int norder; /* order-by over key and aggregate names (0: none) */
    const coproc_order_key *order;
    uint64_t limit; /* the first `limit` rows after ordering (0: all) */
    /* How each rank runs its part (coproc_query_run's options; NULL: defaults). */
    const coproc_query_options *options;
    coproc_mpi_exchange exchange; /* default (0) COPROC_MPI_GATHER */
} coproc_mpi_query;

/* The result and where the time went, per rank. */
typedef struct coproc_mpi_result {
    /* Rank 0: the merged result, the keys then the aggregates as
     * coproc_plan_group_by gives them (SUM integer int64, float float64;
     * COUNT int64; MIN, MAX the type of rank 0's partial column; AVG
     * float64), host columns owned by the result. Other ranks: NULL. */
    coproc_table *table;
    coproc_query_result local; /* this rank's run over its share (owned) */
    uint64_t local_groups;     /* partial groups this rank contributed */
    uint64_t groups;           /* rank 0: groups after the merge, before the limit */
    double seconds;            /* the whole call on this rank */
    double compute_s;          /* the local coproc_query_run */
    double compute_cpu_s;      /* CPU seconds of this process, every thread, during it */
    double wait_s;             /* agreeing on the status: waiting for the slowest rank */
    double exchange_s;         /* moving the partial groups (and the final status) */
    double merge_s;            /* rank 0: merging, ordering, building the table */
    int ncolumns_;             /* private: the columns the table owns */
    coproc_column **columns_;
} coproc_mpi_result;

/*
 * Run q on every rank and merge: each rank runs a group-by (AVG as SUM and
 * COUNT, with a hidden row count) over q->input through coproc_query_run,
 * the partial groups (8 bytes a value) are gathered to rank 0 (or shuffled
 * by key first: q->exchange), combined by key (SUM and COUNT added, MIN and MAX over the ranks with
 * rows, AVG = the sums added / the counts added), then ordered (the order keys, remaining ties by
 * every key ascending: the same rows for any number of ranks) and cut to q->limit. A group without
 * rows on every rank does not appear; with no keys the one row over no rows holds 0 for SUM, COUNT,
 * MIN, MAX and NaN for AVG, as coproc_plan_group_by.
 *
 * Float sums are added in another order than one process would: equal up to
 * rounding, not bit for bit. Integer results are exact.
 *
 * Collective. On error on any rank every rank returns it (*out empty).
 */
COPROC_API coproc_status coproc_mpi_aggregate(coproc_mpi *m, const coproc_mpi_query *q,
                                              coproc_mpi_result *out);

/* Free the result's table, columns and local run. NULL is a no-op. */
COPROC_API void coproc_mpi_result_free(coproc_mpi_result *r);

#ifdef __cplusplus
}
#endif
#endif /* COPROC_MPI_H */
