/* task.h - asynchronous operators: coproc_submit places a task with the
 * scheduler (scheduler.h) on a device; that device's worker thread takes it
 * from a bounded ready queue, runs it (hostrun.h) and signals coproc_wait. */
#ifndef COPROC_TASK_H
#define COPROC_TASK_H

#include "coproc.h"

/* Stop the workers (after the queued tasks ran) and free them; no-op if none
 * started. 1 when a lost device's thread never came back from its driver:
 * then the runtime must not be freed (that thread still points into it). */
int coproc__tasks_stop(coproc_runtime *rt);

#endif
