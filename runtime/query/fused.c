/* fused.c - placeholder while the fused engine is written. */
#include <stdio.h>
#include "query/run.h"

coproc_status coproc__fused_run(coproc__qrun *run, const coproc_node *root, coproc_table **out)
{
    (void)root;
    *out = NULL;
    snprintf(run->note, sizeof run->note, "the fused engine is not built yet");
    return COPROC_UNSUPPORTED;
}
