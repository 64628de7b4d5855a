/* backend.c - which backend opens the devices a selection names, and the
 * selection's entries. */
#include "backend/backend.h"

#include <ctype.h>

#include "backend/sim/sim.h"

const coproc__backend *coproc__backend_for(const char *spec)
{
    return coproc__sim_claims(spec) ? &coproc__backend_sim : &coproc__backend_opencl;
}

int coproc__selection_next(const char **p, const char **entry, size_t *len)
{
    const char *q = *p;
    while (*q == ',' || isspace((unsigned char)*q))
        q++;
    if (!*q)
        return 0;
    const char *start = q;
    while (*q && *q != ',')
        q++;
    size_t n = (size_t)(q - start);
    while (n && isspace((unsigned char)start[n - 1]))
        n--;
    *p = q;
    *entry = start;
    *len = n;
    return 1;
}
