/* join_tasks.c - a join's pairs written in tasks of bounded loop steps
 * (join_tasks.h). */
#include "ops/join_tasks.h"

#include <stdlib.h>

#include "core/error.h"
#include "data/column.h"
#include "backend/opencl/transfer.h"

uint64_t coproc__join_pairs_per_task(const coproc__device *dev)
{
    uint64_t steps = dev->quirks.max_loop_steps;
    return steps ? (steps / 2 ? steps / 2 : 1) : 0;
}

uint64_t coproc__join_rows_per_item(const coproc__device *dev, uint64_t steps)
{
    uint64_t max = dev->quirks.max_loop_steps;
    if (!max)
        return 0;
    return max / 2 / steps ? max / 2 / steps : 1;
}

coproc__geometry coproc__join_geometry(const coproc__device *dev, size_t n, uint64_t steps)
{
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    /* max_rows_per_item counts rows of a one-step loop; a join row takes up to
     * `steps`. Both caps apply where set. */
    uint64_t cap = 0, by_steps = coproc__join_rows_per_item(dev, steps);
    if (dev->quirks.max_rows_per_item)
        cap = dev->quirks.max_rows_per_item / steps ? dev->quirks.max_rows_per_item / steps : 1;
    if (by_steps && (!cap || by_steps < cap))
        cap = by_steps;
    return coproc__geometry_cap_rows(g, n, cap);
}

uint64_t coproc__join_skew_per_task(uint64_t pairs, uint64_t most, size_t items)
{
    /* Even enough: no work-item over 4x the average, or too few pairs for
     * the tasks' own launch and index to pay. */
    uint64_t even = items ? pairs / items + 1 : pairs;
    if (most < 64 * 1024 || most <= 4 * even)
        return 0;
    return even < 4096 ? 4096 : even;
}

coproc_status coproc__join_tasks_run(coproc_runtime *rt, coproc__device *dev, coproc__args *a,
                                     const uint32_t *start, size_t items, uint64_t pairs,
                                     uint64_t per, cl_mem out_left, cl_mem out_right,
                                     const char *what)
{
    uint64_t cap = coproc__join_pairs_per_task(dev);
    if (!per || (cap && per > cap))
        per = cap;
    if (!per)
        per = pairs;
    size_t tasks = 0;
    for (size_t j = 0; j < items; j++) {
        uint64_t end = j + 1 < items ? start[j + 1] : pairs;
        tasks += (size_t)((end - start[j] + per - 1) / per);
    }
    if (tasks > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: %zu tasks of %llu pairs", what, tasks,
                            (unsigned long long)per);
    /* task_item, task_begin (one more: the end), task_done */
    uint32_t *host = malloc((3 * tasks + 1) * sizeof *host);
    if (!host)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    uint32_t *item = host, *begin = host + tasks, *done = begin + tasks + 1;
    size_t t = 0;
    for (size_t j = 0; j < items; j++) {
        uint64_t end = j + 1 < items ? start[j + 1] : pairs;
        for (uint64_t b = start[j]; b < end; b += per) {
            item[t] = (uint32_t)j;
            begin[t++] = (uint32_t)b;
        }
    }
    begin[tasks] = (uint32_t)pairs;

    cl_mem item_mem = NULL, begin_mem = NULL, done_mem = NULL;
    coproc_status s = coproc__buffer_new(rt, dev, tasks * 4, &item_mem);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, (tasks + 1) * 4, &begin_mem);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, tasks * 4, &done_mem);
    if (s == COPROC_OK)
        s = coproc__h2d(rt, dev, NULL, item_mem, 0, item, tasks * 4, 0);
    if (s == COPROC_OK)
        s = coproc__h2d(rt, dev, NULL, begin_mem, 0, begin, (tasks + 1) * 4, 0);
    if (s != COPROC_OK)
        goto done;
    cl_uint ntasks = (cl_uint)tasks;
    coproc__arg(a, sizeof item_mem, &item_mem);
    coproc__arg(a, sizeof begin_mem, &begin_mem);
    coproc__arg(a, sizeof ntasks, &ntasks);
    coproc__arg(a, sizeof out_left, &out_left);
    coproc__arg(a, sizeof out_right, &out_right);
    coproc__arg(a, sizeof done_mem, &done_mem);
    /* One task a work-item. */
    coproc__geometry g = coproc__geometry_for(dev, tasks, 0);
    g.groups = (tasks + g.local - 1) / g.local;
    g.global = g.groups * g.local;
    if ((s = coproc__launch(rt, dev, a, &g, what)) != COPROC_OK ||
        (s = coproc__d2h(rt, dev, NULL, done, done_mem, 0, tasks * 4, 0)) != COPROC_OK)
        goto done;
    for (t = 0; t < tasks; t++)
        if (done[t] != begin[t + 1] - begin[t]) {
            s = coproc__fail(rt, COPROC_INTERNAL, "%s: device %d (%s) wrote %u of task %zu's %u "
                             "pairs (a loop limit? docs/portability.md)", what, dev->index,
                             dev->info.name, done[t], t, begin[t + 1] - begin[t]);
            break;
        }
done:
    free(host);
    if (item_mem)
        clReleaseMemObject(item_mem);
    if (begin_mem)
        clReleaseMemObject(begin_mem);
    if (done_mem)
        clReleaseMemObject(done_mem);
    return s;
}
