/* fuzz_profile.c - the calibration profile reader (runtime/cost/profile.c).
 * Feeds the input as the bytes of a profile file: through json_loadb (as the
 * runtime and the simulated devices read it) into coproc__profile_from_json,
 * with and without an expected fingerprint and with short `why` buffers; a
 * profile it accepts must come back unchanged through coproc__profile_to_json
 * and answer transfer-time queries with numbers that are not NaN. With a
 * device, the same bytes are also written where the device's profile lives and
 * read by coproc__profile_load, the cache directory's path. Why: profiles are
 * files in a user's cache directory and shipped JSON (profiles/), read
 * at every open; a damaged or hostile one must be refused, never trusted. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "core/runtime.h" /* coproc__device_at: the device whose profile is read */
#include "cost/profile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_runtime();
    return 0;
}

/* An accepted profile: a round trip gives it again, and predictions are numbers. */
static void check_accepted(const coproc__profile *p)
{
    json_t *doc = coproc__profile_to_json(p);
    if (!doc)
        fuzz_fail("an accepted profile has no JSON document");
    coproc__profile *again = malloc(sizeof *again);
    char why[256];
    if (coproc__profile_from_json(again, doc, p->fingerprint, why, sizeof why) != 0)
        fuzz_fail("an accepted profile, written out, is refused: %s", why);
    json_decref(doc);
    if (strcmp(again->fingerprint, p->fingerprint) != 0 ||
        again->h2d_pinned.points != p->h2d_pinned.points)
        fuzz_fail("a profile's round trip changed it");
    free(again);
    static const double sizes[] = {-1, 0, 1, 4096, 1e6, 1e9, 1e300, INFINITY, NAN};
    for (int to = 0; to < 2; to++)
        for (int pinned = 0; pinned < 2; pinned++)
            for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
                if (isnan(coproc__profile_transfer_time(p, to, pinned, sizes[i])))
                    fuzz_fail("transfer time of %g bytes is NaN", sizes[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (doc) {
        coproc__profile *p = malloc(sizeof *p);
        char why[1024], tiny[8];
        if (coproc__profile_from_json(p, doc, NULL, why, sizeof why) == 0)
            check_accepted(p);
        else if (!why[0])
            fuzz_fail("a profile refused without a reason");
        coproc__profile_from_json(p, doc, "coproc-fuzz", tiny, sizeof tiny);
        coproc__profile_from_json(p, doc, "", NULL, 0);
        free(p);
        json_decref(doc);
    }

    /* The file path: the device's profile in the cache directory. */
    coproc_runtime *rt = fuzz_runtime();
    coproc__device *dev = rt ? coproc__device_at(rt, 0) : NULL;
    char path[1200];
    if (dev && coproc__profile_path(rt, dev, path, sizeof path) == 0) {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size)
            fuzz_fail("cannot write %s", path);
        fclose(f);
        coproc__profile *p = malloc(sizeof *p);
        coproc_status s = coproc__profile_load(rt, dev, p);
        if (s == COPROC_OK)
            check_accepted(p);
        else if (s != COPROC_CORRUPT_PROFILE)
            fuzz_fail("profile_load of a readable file: %s", coproc_status_name(s));
        free(p);
    }
    return 0;
}
