/* join_tasks.h - writing a join's pairs on a device that caps the loop steps
 * of a work-item (quirks.h max_loop_steps; Mesa's llvmpipe: 65535).
 *
 * A row's pairs have no bound (one key repeated 100,000 times on both sides),
 * so work split by rows alone can exceed any cap. There the pairs are written
 * by tasks: each takes one work-item's rows (few, so walking them is cheap) but
 * only a range of at most coproc__join_pairs_per_task of that work-item's
 * pairs, starting anywhere, mid-key too (the kernels index a key's matches,
 * never walk them from the first). */
#ifndef COPROC_JOIN_TASKS_H
#define COPROC_JOIN_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/opencl/launch.h"

/* Pairs one task writes at most: half the device's loop steps, the other half
 * left to walking its rows; 0 where the device has no cap. */
uint64_t coproc__join_pairs_per_task(const coproc__device *dev);

/* Rows one work-item may take when each costs up to `steps` loop steps, in
 * half the device's loop steps (at least 1); 0 where the device has no cap. */
uint64_t coproc__join_rows_per_item(const coproc__device *dev, uint64_t steps);

/* geometry_for over n rows, with more work-items where the device caps loop
 * steps, so that none takes more than coproc__join_rows_per_item(dev, steps). */
coproc__geometry coproc__join_geometry(const coproc__device *dev, size_t n, uint64_t steps);

/*
 * Write the pairs by tasks with kernel a->kernel, whose arguments up to a->next
 * are set and whose last ones are (task_item, task_begin, uint tasks, out_left,
 * out_right, task_done): task t writes pairs [task_begin[t], task_begin[t + 1])
 * of work-item task_item[t] and says in task_done[t] how many it wrote.
 * start[j] is where work-item j's pairs start (items of them, in order;
 * `pairs` in all, > 0); a task writes at most `per` pairs (0: the device's
 * coproc__join_pairs_per_task, else all of a work-item's). Each task's count
 * is checked: a device that stopped loops early is COPROC_INTERNAL, never
 * pairs left unwritten. Waits.
 */
coproc_status coproc__join_tasks_run(coproc_runtime *rt, coproc__device *dev, coproc__args *a,
                                     const uint32_t *start, size_t items, uint64_t pairs,
                                     uint64_t per, cl_mem out_left, cl_mem out_right,
                                     const char *what);

/* Skew: pairs a task of an even share writes, where one work-item has far
 * more pairs than the average (`most` of `pairs` over `items` work-items: a
 * heavy key of the build side met by the probe), so that every work-item
 * writes some of them instead of one writing them all while the others
 * wait; 0 where the pairs are even enough to be written by rows. */
uint64_t coproc__join_skew_per_task(uint64_t pairs, uint64_t most, size_t items);

#endif
