/* quirks.h - what some OpenCL implementations get wrong, and how coproc works
 * around it: a table matched on platform, device and driver version. */
#ifndef COPROC_QUIRKS_H
#define COPROC_QUIRKS_H

#include <stddef.h>
#include <stdint.h>

#include "coproc.h"

typedef struct coproc__quirks {
    /* Rows one work-item walks on the CPU path at most (0: no cap): the launch
     * geometry (launch.c) adds work-groups until every chunk fits. */
    uint64_t max_rows_per_item;
    /* Loop iterations one work-item runs at most, all its loops together (0: no
     * limit). Kernels whose work per row has no bound (a join's pairs of one
     * key) split their work by it (ops/hash_join.c, ops/merge_join.c). */
    uint64_t max_loop_steps;
    /* Work-items per group for every kernel at most (0: the driver's figure
     * only). Taken with each kernel's CL_KERNEL_WORK_GROUP_SIZE (launch.c). */
    size_t max_work_group;
    /* Clear buffers with clEnqueueWriteBuffer instead of clEnqueueFillBuffer
     * (coproc__enqueue_fill, launch.c): Oclgrind 21.10's uninitialised-memory
     * check does not see what a fill writes and reports every later read of
     * it. The kernels it checks are the same either way. */
    int fill_by_write;
    /* Treat the device as having no fp64 (only forced, COPROC_QUIRKS=no_fp64):
     * runs the paths of devices without doubles (Mesa llvmpipe, many GPUs) on
     * any device, so the tests check them on PoCL too. */
    int no_fp64;
    /* Event profiling counters are placeholders (Mesa 22.3's rusticl answers
     * 0, 1, 2, 3 for QUEUED..END of every command, CL_SUCCESS, with profiling
     * on or off): a 64 MiB copy "took" 1 ns and calibration fitted every model
     * to nothing. Found by a probe at open (device.c), not by the table:
     * coproc__device_event_seconds then says "unknown" and callers use the
     * wall clock. */
    int no_profiling;
    /* Write every buffer coproc__buffer_new returns whole from the host, with
     * a pattern that is no plausible value (column.c): Oclgrind 21.10 tracks
     * uninitialised global memory per buffer slot and sizes it by the last host
     * write, so a buffer that reuses a released one's slot, or a pooled one,
     * inherits that buffer's shadow, and stores past it vanish. A whole write
     * gives the shadow the buffer's size. What Oclgrind no longer sees, a read
     * of memory nothing wrote, reads the pattern and the results show it. */
    int write_new_buffers;
    /* Every coproc thread that may run commands holds a context of its own on
     * the device while it runs (coproc__thread_context_begin, device.h):
     * Oclgrind 21.10's uninitialised-memory check keeps a scratch pool per
     * thread, made only on a thread that creates a context, and the first
     * command that another thread runs (a write, a map) crashes on its missing
     * pool (MemoryPool::alloc). The shadow it keeps per context is unchanged. */
    int context_per_thread;
    /* Waits are not bounded (sync.h): the driver runs commands only inside a
     * wait for them, so a bounded wait, which sleeps until the command's
     * completion callback, would never see one end (Oclgrind). */
    int unbounded_waits;
    /* One thread at a time enqueues commands on the device (and flushes it):
     * coproc__submit_begin/_end (sync.h) around every enqueue take the
     * device's submit_lock. On a driver that runs a command inside its
     * enqueue, each then ends before the next is enqueued, so none waits on
     * another thread's (PoCL basic's deadlock, quirks.c). */
    int serial_submit;
    /* The driver keeps built programs on disk itself, and asking it for a
     * program's binary costs a compile of its own: coproc's binary cache
     * stores none there (program.c). PoCL: its kernel cache answers a build
     * from source in 60-100 ms, while CL_PROGRAM_BINARIES compiles every
     * kernel for any work-group size (31 s for reduce against a 1.7 s build;
     * PoCL 3.1, docs/performance.md). */
    int driver_kernel_cache;
    char names[128]; /* the quirks that apply, comma-separated; "" for none */
} coproc__quirks;

/*
 * The quirks of a device, from the table in quirks.c, then $COPROC_QUIRKS:
 * comma-separated "max_rows_per_item=N", "max_loop_steps=N", "max_work_group=N",
 * "no_fp64" and "no_profiling", which tighten (never loosen) what the table gives;
 * tests force them on PoCL so.
 */
void coproc__quirks_find(const coproc_device_info *info, coproc__quirks *out);

/* Add a quirk's name to q->names (once). */
void coproc__quirks_name(coproc__quirks *q, const char *name);

#endif
