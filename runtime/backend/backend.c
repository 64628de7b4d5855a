/* backend.c - which backend opens the devices a selection names. */
#include "backend/backend.h"

#include "backend/sim/sim.h"

const coproc__backend *coproc__backend_for(const char *spec)
{
    return coproc__sim_claims(spec) ? &coproc__backend_sim : &coproc__backend_opencl;
}
