/* operators_mode.c - placeholder while operator-at-a-time execution is written. */
#include "core/error.h"
#include "query/run.h"

coproc_status coproc__operators_run(coproc__qrun *run, const coproc_node *root, coproc_table **out)
{
    (void)root;
    *out = NULL;
    return coproc__fail(run->rt, COPROC_UNSUPPORTED, "query: operator mode is not built yet");
}
