/* transfer_drift.h - how a device's copies run now against its calibration.
 * The runtime times its own blocking copies of 1 MiB and more (transfer.c) and
 * keeps, per direction and kind of host memory, the ratios measured / profile
 * of the latest few. Predictions scale the profile's time by their median: the
 * profile keeps the shape across sizes, the copies just made set the level, so
 * a bus or memory system that got slower or faster since calibrating (another
 * process, a VM moved, a clock changed) is followed within a few copies, as
 * the operator models follow a shift (model.h). Not saved with the profile: a
 * loaded or new profile starts at its own level. Pure computation; the owner
 * locks (dev->model_lock, with the profile that holds it). */
#ifndef COPROC_TRANSFER_DRIFT_H
#define COPROC_TRANSFER_DRIFT_H

#include <stdint.h>

#define COPROC__DRIFT_RING 16                       /* latest ratios kept */
#define COPROC__DRIFT_MIN_SEEN 3                    /* fewer: no correction */
#define COPROC__DRIFT_MIN_BYTES ((double)(1 << 20)) /* below: launch jitter, not the bus */

typedef struct coproc__transfer_drift {
    int len, head;
    uint64_t seen;                       /* copies observed in all */
    double ratio[COPROC__DRIFT_RING];    /* measured / predicted by the profile */
} coproc__transfer_drift;

/* Record a copy that took `measured` seconds where the profile predicted
 * `predicted`. Ignored unless both are finite and positive. */
void coproc__drift_observe(coproc__transfer_drift *d, double measured, double predicted);

/* The factor to scale the profile's prediction by: the median ratio of the
 * latest copies; 1 with fewer than COPROC__DRIFT_MIN_SEEN of them. */
double coproc__drift_factor(const coproc__transfer_drift *d);

#endif
