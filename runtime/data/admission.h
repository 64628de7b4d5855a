/* admission.h - query chopping (CoGaDB, SIGMOD 2016): a device runs query
 * pipelines side by side only while their memory footprints (the columns
 * they copy there, their stream buffers) fit in its budget together, so
 * pipelines running at once never evict each other's columns or fail for
 * room; one that does not fit waits, or goes to another device. The admitted
 * pipelines' estimated end is the device's queued work for placement
 * (waiting-time-aware, as WTAR). Kept under the residency cache's lock. */
#ifndef COPROC_ADMISSION_H
#define COPROC_ADMISSION_H

#include <stdint.h>

#include "data/residency.h"

/* Admit a pipeline of footprint `bytes` on dev, estimated to end at `until`
 * (the runtime's clock): 1 admitted, 0 not now (wait = 0; with wait it
 * blocks until the bytes fit), -1 never (more than the budget). */
int coproc__admit(coproc__device *dev, uint64_t bytes, double until, int wait);

/* Give an admitted pipeline's bytes back. */
void coproc__admit_release(coproc__device *dev, uint64_t bytes);

/* Seconds from `now` until the pipelines admitted on dev are estimated to
 * end (0 when none runs). */
double coproc__admit_wait_s(coproc__device *dev, double now);

#endif
