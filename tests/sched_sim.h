/* sched_sim.h - test_sched's a deterministic discrete-event simulator of devices running tasks,
 * driven by the real scheduler (scheduler.c) on a virtual clock, so policies can be
 * compared without hardware. Model, deliberately simple:
 *  - a device runs one task at a time, FIFO in placement order; a task's time
 *    is the transfer of inputs not resident there + compute + (for results the
 *    host wants) the transfer back; copy and compute do not overlap;
 *  - compute = latency[kind] + work / throughput[kind], work = rows (sort:
 *    rows * log2(rows) / 16; join: build + probe rows);
 *  - a transfer between the host and a non-host device costs bus_latency +
 *    bytes / bus_bandwidth of that device; device to device goes via the host;
 *    devices flagged `host` share host memory and move nothing;
 *  - noise: each (task, device) pair has a fixed factor 1 + noise * u, u
 *    uniform in [-1, 1] from a hash of the seed, so a task's true time on a
 *    device does not depend on the schedule and the oracle can know it. */
#ifndef COPROC_SIM_H
#define COPROC_SIM_H

#include <stdint.h>

#include "sched/scheduler.h"

enum { COPROC__SIM_AGG, COPROC__SIM_SELECT, COPROC__SIM_SORT, COPROC__SIM_JOIN, COPROC__SIM_KINDS };

#define COPROC__SIM_HOST (-1)   /* residency: in host memory */
#define COPROC__SIM_MAX_INPUTS 2

typedef struct coproc__sim_device {
    const char *name;
    int host;                                /* shares host memory: transfers free */
    double throughput[COPROC__SIM_KINDS];    /* work units (rows) per second */
    double latency[COPROC__SIM_KINDS];       /* seconds per task launch */
    double bus_bandwidth;                    /* bytes/s to and from the host */
    double bus_latency;                      /* seconds per transfer */
    double noise;                            /* relative, e.g. 0.05 */
} coproc__sim_device;

typedef struct coproc__sim_input {
    double bytes;
    int resident;      /* device index or COPROC__SIM_HOST (ignored when src >= 0) */
    int src;           /* index of an earlier task whose result this is, or -1 */
} coproc__sim_input;

typedef struct coproc__sim_task {
    int kind;
    double rows;                     /* work size (join: build + probe) */
    int inputs;                      /* 1..COPROC__SIM_MAX_INPUTS */
    coproc__sim_input in[COPROC__SIM_MAX_INPUTS];
    double out_bytes;
    int result_to_host;              /* the result goes back to the host */
    int after;                       /* earlier task that must finish before this one is
                                        issued (a stream's order), or -1 */
    double arrival;                  /* earliest issue time, seconds */
} coproc__sim_task;

typedef enum coproc__sim_estimates {
    COPROC__SIM_EST_TRUE = 0,   /* the noiseless cost: error comes from the noise only */
    COPROC__SIM_EST_LEARNED     /* per (kind, device) line fitted online to measured compute
                                   time; transfers from the known bus figures */
} coproc__sim_estimates;

typedef struct coproc__sim_result {
    double makespan;
    double busy[COPROC__SCHED_MAX_DEVICES];
    double utilization[COPROC__SCHED_MAX_DEVICES];
    int tasks_on[COPROC__SCHED_MAX_DEVICES];
    double est_error;      /* mean |estimate - actual| / actual over estimated tasks */
    double bytes_moved;    /* over all buses, both directions */
} coproc__sim_result;

/* Workload after HyPE's experiments: `streams` sessions issue their tasks in
 * order (streams <= 0: all tasks issued at time 0), a mix of aggregations,
 * selections, sorts and joins over host-resident columns, rows log-uniform in
 * [min_rows, max_rows]; with probability chain_p an aggregation consumes the
 * previous selection's result of the same stream (left where it was made). */
typedef struct coproc__sim_workload_config {
    int tasks;
    int streams;
    double min_rows, max_rows;
    double chain_p;
    uint64_t seed;
} coproc__sim_workload_config;

/* Fills tasks[0..cfg->tasks-1]. */
void coproc__sim_workload(const coproc__sim_workload_config *cfg, coproc__sim_task *tasks);

/* The true (noisy) seconds of task j on device d given where its inputs are
 * (resident[] per input; COPROC__SIM_HOST for host). *moved gets bytes moved. */
double coproc__sim_true_cost(const coproc__sim_device *devs, int ndev, const coproc__sim_task *tasks,
                             int j, int d, const int *resident, uint64_t seed, double *moved);

/* The noiseless estimate of the same. */
double coproc__sim_expected_cost(const coproc__sim_device *devs, int ndev,
                                 const coproc__sim_task *t, int d, const int *resident);

/* Run the tasks on the devices under a scheduler config (its `devices` must be
 * ndev). Allocates only per run. 0 on success, -1 on bad arguments or memory. */
int coproc__sim_run(const coproc__sim_device *devs, int ndev, const coproc__sim_task *tasks,
                    int ntasks, const coproc__sched_config *cfg, coproc__sim_estimates est,
                    uint64_t seed, coproc__sim_result *out);

#endif
