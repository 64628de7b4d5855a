/* transfer_drift.c - the level of a device's copies against its profile
 * (transfer_drift.h). */
#include "cost/transfer_drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void coproc__drift_observe(coproc__transfer_drift *d, double measured, double predicted)
{
    if (!isfinite(measured) || !isfinite(predicted) || !(measured > 0) || !(predicted > 0))
        return;
    d->ratio[d->head] = measured / predicted;
    d->head = (d->head + 1) % COPROC__DRIFT_RING;
    if (d->len < COPROC__DRIFT_RING)
        d->len++;
    d->seen++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median, not the mean: one copy that waited behind another process's
 * burst must not move every prediction. */
double coproc__drift_factor(const coproc__transfer_drift *d)
{
    if (d->len < COPROC__DRIFT_MIN_SEEN)
        return 1;
    double s[COPROC__DRIFT_RING];
    memcpy(s, d->ratio, (size_t)d->len * sizeof *s);
    qsort(s, (size_t)d->len, sizeof *s, cmp_double);
    int n = d->len;
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}
