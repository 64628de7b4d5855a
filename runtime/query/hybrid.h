/* hybrid.h - a group-by pipeline on several devices at once, morsel by
 * morsel (hybrid.c). */
#ifndef COPROC_QUERY_HYBRID_H
#define COPROC_QUERY_HYBRID_H

#include "query/fused.h"

/* Run pipeline pi (a group-by over a table of host columns; its builds'
 * inputs ready, its key ranges requested) on devices[0..ndev): each builds
 * its join tables, then pulls morsels; the merged groups become the
 * pipeline's output, and each device's share is reported, named after
 * `what`. Errors as the fused engine's; a device that fails mid-query only
 * fails the query when no device is left. */
/* Of the n devices that can run pipeline pi, keep (in place) those worth
 * their place: each can build its join tables and run a morsel before the
 * device estimated fastest would run the whole pipeline alone. Returns how
 * many are kept (below 2: run it on one device). */
int coproc__hybrid_choose(coproc__fused *f, int pi, int *devices, int n);

coproc_status coproc__hybrid_group(coproc__fused *f, int pi, const int *devices, int ndev,
                                   const char *what);

#endif
