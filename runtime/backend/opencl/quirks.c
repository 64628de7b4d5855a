/* quirks.c - the device-quirk table (quirks.h). An entry matches a device
 * when its platform and device names contain the entry's strings and the
 * driver version lies in [from, to] (dotted numbers; "" is open). */
#include "backend/opencl/quirks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct quirk_entry {
    const char *name;     /* shown by coproc-calibrate --list */
    const char *platform; /* substring of the platform name */
    const char *device;   /* substring of the device name */
    const char *from, *to;
    uint64_t max_rows_per_item;
    uint64_t max_loop_steps;
    size_t max_work_group;
    int fill_by_write;
    int write_new_buffers;
    int context_per_thread;
    int unbounded_waits;
    int serial_submit;
    int driver_kernel_cache;
} quirk_entry;

static const quirk_entry table[] = {
    /* Mesa's llvmpipe (rusticl and clover) stops a work-item's loops after
     * 65535 iterations in all (gallivm's loop limiter, LP_MAX_TGSI_LOOP_ITERATIONS:
     * every iteration of every loop counts), silently: a CPU-path chunk longer
     * than that loses its tail (seen on Mesa 22.3.6; tests/test_portable.c).
     * Rows per work-item are capped at an eighth of it, leaving the rest to the
     * inner loops a row runs (hash probing, local reductions); the joins split
     * their pairs so that no work-item runs more than 65535 steps. */
    {"loop-65535", "rusticl", "llvmpipe", "", "", 8192, 65535, 0, 0, 0, 0, 0, 0, 0},
    {"loop-65535", "Clover", "llvmpipe", "", "", 8192, 65535, 0, 0, 0, 0, 0, 0, 0},
    /* Oclgrind (21.10, the device simulator) takes memory written by
     * clEnqueueFillBuffer as uninitialised: every kernel that reads a cleared
     * buffer was reported (tests/test_oclgrind.sh). Buffers are cleared with a
     * write there instead (quirks.h fill_by_write). */
    {"fill-by-write", "Oclgrind", "", "", "", 0, 0, 0, 1, 0, 0, 0, 0, 0},
    /* Oclgrind 21.10 keeps the uninitialised-memory shadow of a released
     * buffer for the next buffer that gets its slot (the shadow is never
     * freed), and sizes a buffer's shadow by its last host write: a kernel's
     * stores past that size are dropped and later reads reported, though the
     * kernel wrote them (scan's group sums, sort's tables, ...). Every new
     * buffer is written whole once there (quirks.h write_new_buffers). */
    {"write-new-buffers", "Oclgrind", "", "", "", 0, 0, 0, 0, 1, 0, 0, 0, 0},
    /* Oclgrind 21.10's --uninitialized allocates from a pool that is per
     * thread and made only by creating a context (its plugin's constructor):
     * a thread that made none crashes on the first command it runs, as the
     * query layer's and the scheduler's threads did (tests/test_oclgrind.sh).
     * Those threads hold a context of their own while they run (quirks.h
     * context_per_thread). */
    {"context-per-thread", "Oclgrind", "", "", "", 0, 0, 0, 0, 0, 1, 0, 0, 0},
    /* Oclgrind 21.10 runs a queue's commands only inside a wait for them
     * (clWaitForEvents, clFinish, a blocking call), on the waiting thread;
     * clFlush starts nothing and no completion callback ever comes to a wait
     * that sleeps on one. Waits there are not bounded (quirks.h
     * unbounded_waits; sync.h). */
    {"waits-run-commands", "Oclgrind", "", "", "", 0, 0, 0, 0, 0, 0, 1, 0, 0},
    /* PoCL's basic device (to 4.0; fixed by pocl/pocl#1323, in 5.0) runs a
     * command in the thread that enqueues it, and one whose queue
     * predecessor was still running at its enqueue (another thread's, on a
     * queue two threads share) in the thread that finishes that predecessor,
     * which then locks the command's event a second time and hangs for ever:
     * concurrent queries on one basic device stopped in pocl_exec_command
     * (tests/test_budget_admission.c, gdb). One thread at a time enqueues
     * there, so that every command ends inside its own enqueue (quirks.h
     * serial_submit). */
    {"serial-submit", "Portable Computing Language", "basic", "", "4.0", 0, 0, 0, 0, 0, 0, 0, 1, 0},
    /* PoCL keeps its builds in its own kernel cache, and asking it for a
     * program's binary compiles every kernel once more for any work-group
     * size (quirks.h driver_kernel_cache). */
    {"driver-kernel-cache", "Portable Computing Language", "", "", "", 0, 0, 0, 0, 0, 0, 0, 0, 1},
};

/* Compare dotted version numbers found in a and b: <0, 0, >0. */
static int version_cmp(const char *a, const char *b)
{
    while (*a && (*a < '0' || *a > '9'))
        a++;
    while (*b && (*b < '0' || *b > '9'))
        b++;
    for (int part = 0; part < 4; part++) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        if (*ea != '.' || *eb != '.')
            break;
        a = ea + 1;
        b = eb + 1;
    }
    return 0;
}

void coproc__quirks_name(coproc__quirks *q, const char *name)
{
    if (strstr(q->names, name))
        return;
    size_t len = strlen(q->names);
    snprintf(q->names + len, sizeof q->names - len, "%s%s", len ? "," : "", name);
}

static void tighten_rows(coproc__quirks *q, uint64_t v)
{
    if (v && (!q->max_rows_per_item || v < q->max_rows_per_item))
        q->max_rows_per_item = v;
}

static void tighten_steps(coproc__quirks *q, uint64_t v)
{
    if (v && (!q->max_loop_steps || v < q->max_loop_steps))
        q->max_loop_steps = v;
}

static void tighten_group(coproc__quirks *q, size_t v)
{
    if (v && (!q->max_work_group || v < q->max_work_group))
        q->max_work_group = v;
}

void coproc__quirks_find(const coproc_device_info *info, coproc__quirks *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const quirk_entry *e = &table[i];
        if (!strstr(info->platform, e->platform) || !strstr(info->name, e->device))
            continue;
        if (*e->from && version_cmp(info->driver_version, e->from) < 0)
            continue;
        if (*e->to && version_cmp(info->driver_version, e->to) > 0)
            continue;
        tighten_rows(out, e->max_rows_per_item);
        tighten_steps(out, e->max_loop_steps);
        tighten_group(out, e->max_work_group);
        out->fill_by_write |= e->fill_by_write;
        out->write_new_buffers |= e->write_new_buffers;
        out->context_per_thread |= e->context_per_thread;
        out->unbounded_waits |= e->unbounded_waits;
        out->serial_submit |= e->serial_submit;
        out->driver_kernel_cache |= e->driver_kernel_cache;
        coproc__quirks_name(out, e->name);
    }
    const char *env = getenv("COPROC_QUIRKS");
    for (const char *p = env; p && *p;) {
        unsigned long long v;
        int used = 0;
        if (sscanf(p, "max_rows_per_item=%llu%n", &v, &used) == 1 && used) {
            tighten_rows(out, v);
            coproc__quirks_name(out, "forced-rows-per-item");
        } else if (sscanf(p, "max_loop_steps=%llu%n", &v, &used) == 1 && used) {
            tighten_steps(out, v);
            coproc__quirks_name(out, "forced-loop-steps");
        } else if (sscanf(p, "max_work_group=%llu%n", &v, &used) == 1 && used) {
            tighten_group(out, (size_t)v);
            coproc__quirks_name(out, "forced-work-group");
        } else if (strncmp(p, "no_fp64", 7) == 0 && (p[7] == ',' || p[7] == '\0')) {
            out->no_fp64 = 1;
            coproc__quirks_name(out, "forced-no-fp64");
        } else if (strncmp(p, "no_profiling", 12) == 0 && (p[12] == ',' || !p[12])) {
            out->no_profiling = 1;
            coproc__quirks_name(out, "no-profiling-times");
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
}
