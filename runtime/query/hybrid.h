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
coproc_status coproc__hybrid_group(coproc__fused *f, int pi, const int *devices, int ndev,
                                   const char *what);

#endif
