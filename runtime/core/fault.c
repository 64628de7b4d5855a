/* fault.c - fault injection (fault.h). */
#include "core/fault.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parse.h"
#include "core/runtime.h"

static const char *const site_names[COPROC__FAULT_SITES] = {
    "alloc", "h2d", "d2h",   "launch",    "build",     "map",
    "lost",  "finish", "stuck", "slowbuild", "slowlaunch"};

static const int site_errors[COPROC__FAULT_SITES] = {CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                                     CL_OUT_OF_RESOURCES,
                                                     CL_OUT_OF_RESOURCES,
                                                     CL_OUT_OF_RESOURCES,
                                                     CL_BUILD_PROGRAM_FAILURE,
                                                     CL_OUT_OF_RESOURCES,
                                                     CL_DEVICE_NOT_AVAILABLE,
                                                     CL_OUT_OF_RESOURCES,
                                                     COPROC__CL_NO_PROGRESS,
                                                     CL_SUCCESS,
                                                     CL_SUCCESS};

/* random:PERMILLE[:SEED] into f; NULL or the reason. */
static const char *parse_random(char *s, coproc__faults *f)
{
    char *seed = strchr(s, ':');
    if (seed)
        *seed++ = '\0';
    long long p = 0, sd = 1;
    const char *why = NULL;
    if (coproc__parse_int(s, 1, 1000, &p, &why) != 0)
        return "PERMILLE is not 1 to 1000";
    if (seed && coproc__parse_int(seed, 0, INT64_MAX, &sd, &why) != 0)
        return "SEED is not a number";
    f->random_permille = (unsigned)p;
    f->random_seed = (uint64_t)sd;
    return NULL;
}

/* One SITE:DEVICE:NTH (or SITE:DEVICE:every:K) into f; NULL or the reason. */
static const char *parse_spec(coproc_runtime *rt, char *s, coproc__faults *f)
{
    if (strncmp(s, "random:", 7) == 0)
        return parse_random(s + 7, f);
    char *dev = strchr(s, ':');
    char *nth = dev ? strchr(dev + 1, ':') : NULL;
    if (!nth)
        return "expected SITE:DEVICE:NTH";
    *dev++ = '\0';
    *nth++ = '\0';
    int site = -1;
    for (int i = 0; i < COPROC__FAULT_SITES; i++)
        if (strcmp(s, site_names[i]) == 0)
            site = i;
    if (site < 0)
        return "unknown site (alloc, h2d, d2h, launch, map, build, finish, stuck, lost, "
               "slowbuild, slowlaunch or random)";
    long long d = 0, k = 0;
    const char *why = NULL;
    double seconds = 0;
    if (site >= COPROC__FAULT_SLOW_BUILD) {
        char *sec = strrchr(nth, ':');
        if (!sec)
            return "expected SITE:DEVICE:NTH:SECONDS";
        *sec++ = '\0';
        if (coproc__parse_seconds(sec, &seconds, &why) != 0)
            return "SECONDS is not a number of seconds";
    }
    int max = rt->device_count < 16 ? rt->device_count : 16;
    if (coproc__parse_int(dev, 0, max - 1, &d, &why) != 0)
        return "device out of range";
    int every = strncmp(nth, "every:", 6) == 0;
    if (coproc__parse_int(every ? nth + 6 : nth, 1, INT64_MAX, &k, &why) != 0)
        return "NTH is not a positive number";
    if (f->n == COPROC__FAULT_MAX)
        return "too many faults (8 at most)";
    f->spec[f->n].site = (coproc__fault_site)site;
    f->spec[f->n].device = (int)d;
    f->spec[f->n].nth = every ? 0 : (uint64_t)k;
    f->spec[f->n].every = every ? (uint64_t)k : 0;
    f->spec[f->n].seconds = seconds;
    f->n++;
    return NULL;
}

void coproc__faults_read(coproc_runtime *rt)
{
    const char *env = getenv("COPROC_FAULT");
    if (!env || !*env)
        return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        char spec[128];
        snprintf(spec, sizeof spec, "%s", s);
        const char *why = parse_spec(rt, s, &rt->faults);
        if (why)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_FAULT: \"%s\" ignored: %s", spec, why);
    }
}

static int inject(coproc_runtime *rt, int device, coproc__fault_site site, uint64_t n)
{
    atomic_fetch_add(&rt->faults.injected, 1);
    coproc__log(rt, COPROC_LOG_INFO, "COPROC_FAULT: device %d's %s call %llu fails", device,
                site_names[site], (unsigned long long)n);
    return site_errors[site];
}

/* The next draw of the random mode: 1 with probability permille / 1000. */
static int random_hit(coproc__faults *f)
{
    uint64_t x =
        f->random_seed + 0x9E3779B97F4A7C15ULL * (atomic_fetch_add(&f->random_draws, 1) + 1);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL; /* splitmix64's finaliser */
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x % 1000 < f->random_permille;
}

int coproc__fault(coproc_runtime *rt, int device, coproc__fault_site site)
{
    coproc__faults *f = &rt->faults;
    if ((f->n == 0 && !f->random_permille) || device < 0 || device >= 16)
        return 0;
    /* Random faults strike allocations, copies, launches and maps only. */
    if (f->random_permille && site != COPROC__FAULT_BUILD && site < COPROC__FAULT_LOST &&
        random_hit(f))
        return inject(rt, device, site, atomic_load(&f->calls[device][site]) + 1);
    if (atomic_load(&f->gone[device]) && site != COPROC__FAULT_BUILD)
        return inject(rt, device, COPROC__FAULT_LOST, 0);
    /* A launch also counts toward `lost`. */
    uint64_t n = atomic_fetch_add(&f->calls[device][site], 1) + 1;
    uint64_t nl = site == COPROC__FAULT_LAUNCH
                      ? atomic_fetch_add(&f->calls[device][COPROC__FAULT_LOST], 1) + 1
                      : 0;
    for (int i = 0; i < f->n; i++) {
        if (f->spec[i].device != device)
            continue;
        coproc__fault_site s = f->spec[i].site;
        uint64_t c = s == COPROC__FAULT_LOST ? nl : s == site ? n : 0;
        if (!c)
            continue;
        if (f->spec[i].nth ? c != f->spec[i].nth : c % f->spec[i].every != 0)
            continue;
        if (s == COPROC__FAULT_LOST) {
            atomic_store(&f->gone[device], 1);
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_FAULT: device %d disappears", device);
        }
        return inject(rt, device, s, c);
    }
    return 0;
}

double coproc__fault_delay(coproc_runtime *rt, int device, coproc__fault_site site)
{
    coproc__faults *f = &rt->faults;
    if (f->n == 0 || device < 0 || device >= 16)
        return 0;
    uint64_t n = atomic_fetch_add(&f->calls[device][site], 1) + 1;
    for (int i = 0; i < f->n; i++) {
        if (f->spec[i].device != device || f->spec[i].site != site)
            continue;
        if (f->spec[i].nth ? n != f->spec[i].nth : n % f->spec[i].every != 0)
            continue;
        atomic_fetch_add(&f->injected, 1);
        coproc__log(rt, COPROC_LOG_INFO, "COPROC_FAULT: device %d's %s call %llu takes %g s more",
                    device, site_names[site], (unsigned long long)n, f->spec[i].seconds);
        return f->spec[i].seconds;
    }
    return 0;
}
