/* task.c - asynchronous submission (work in progress). */
#include "task.h"

#include "runtime.h"

void coproc__tasks_stop(coproc_runtime *rt) { (void)rt; }
