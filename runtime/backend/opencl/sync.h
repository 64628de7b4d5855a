/* sync.h - blocking copies, maps and finishes that wait on their own
 * command's event.
 *
 * Mesa 22.3's rusticl returns from a blocking clEnqueueReadBuffer (write,
 * map, clFinish) before the command ran when another thread flushed the same
 * queue in between (a clWaitForEvents or blocking call there sends this
 * thread's command with its own batch, and the blocking call then finds
 * nothing left to wait for; clvk had the same bug, kpet/clvk#241). Four
 * threads reducing on one runtime read stale partials about once a thousand
 * calls (tests/test_isolation.c). Waiting on the command's own event is what
 * the specification promises everywhere, so coproc does it on every driver.
 */
#ifndef COPROC_SYNC_H
#define COPROC_SYNC_H

#include <CL/cl.h>

/* clEnqueueReadBuffer / clEnqueueWriteBuffer, returning once the copy has
 * finished. event (may be NULL) receives the finished command's event. */
cl_int coproc__read_now(cl_command_queue q, cl_mem src, size_t offset, size_t bytes, void *dst,
                        cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int coproc__write_now(cl_command_queue q, cl_mem dst, size_t offset, size_t bytes,
                         const void *src, cl_uint nwait, const cl_event *wait, cl_event *event);

/* clEnqueueMapBuffer, returning once the map has finished; NULL and *err on failure. */
void *coproc__map_now(cl_command_queue q, cl_mem mem, cl_map_flags flags, size_t offset,
                      size_t bytes, cl_int *err);

/* Returns once every command enqueued on q before the call has finished
 * (a marker waited for, then clFinish). */
cl_int coproc__finish(cl_command_queue q);

#endif
