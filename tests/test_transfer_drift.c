/* test_transfer_drift.c - the transfer level (transfer_drift.h) on synthetic
 * copies: no correction until three are seen, the median of the latest 16,
 * bad samples ignored, and the profile's predictions scaled by it per
 * direction and kind of host memory. Needs no device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/profile.h"
#include "testlib.h"

static void test_factor(void **state)
{
    (void)state;
    coproc__transfer_drift d;
    memset(&d, 0, sizeof d);
    assert_true(coproc__drift_factor(&d) == 1);
    coproc__drift_observe(&d, 2.0, 1.0);
    coproc__drift_observe(&d, 2.0, 1.0);
    assert_true(coproc__drift_factor(&d) == 1); /* two copies are not yet a level */
    coproc__drift_observe(&d, 20.0, 1.0);       /* a copy that waited behind a burst */
    assert_true(coproc__drift_factor(&d) == 2.0);
    /* nothing that is not a positive finite time pair counts */
    coproc__drift_observe(&d, NAN, 1.0);
    coproc__drift_observe(&d, 1.0, INFINITY);
    coproc__drift_observe(&d, 0, 1.0);
    coproc__drift_observe(&d, 1.0, -1.0);
    assert_int_equal(d.seen, 3);
    assert_true(coproc__drift_factor(&d) == 2.0);
    /* the level moves with the latest 16 copies and forgets older ones */
    for (int i = 0; i < 3; i++)
        coproc__drift_observe(&d, 0.8, 1.0);
    assert_true(fabs(coproc__drift_factor(&d) - 1.4) < 1e-12); /* 0.8 x3, 2, 2, 20 */
    for (int i = 0; i < COPROC__DRIFT_RING; i++)
        coproc__drift_observe(&d, 0.8, 1.0);
    assert_true(fabs(coproc__drift_factor(&d) - 0.8) < 1e-12);
    assert_int_equal(d.len, COPROC__DRIFT_RING);
    assert_int_equal(d.seen, 6 + COPROC__DRIFT_RING);
}

/* A profile whose pageable host->device copies run at 1 GB/s plus 10 us,
 * measured at 1, 2, 4 and 8 MiB; nothing else calibrated. */
static coproc__profile *profile_1gbs(void)
{
    coproc__profile *p = malloc(sizeof *p);
    assert_non_null(p);
    coproc__profile_init(p, NULL);
    coproc__transfer_fit *f = &p->h2d_pageable;
    f->latency_s = 10e-6;
    f->bytes_per_s = 1e9;
    f->points = 4;
    for (int i = 0; i < 4; i++) {
        f->bytes[i] = (double)((1 << 20) << i);
        f->seconds[i] = f->latency_s + f->bytes[i] / f->bytes_per_s;
    }
    return p;
}

static void test_profile_scaled(void **state)
{
    (void)state;
    coproc__profile *p = profile_1gbs();
    double mib3 = 3.0 * (1 << 20), t = coproc__profile_transfer_time(p, 1, 0, mib3);
    assert_true(t > 0);
    assert_true(coproc__profile_transfer_now(p, 1, 0, mib3) == t); /* nothing seen: as calibrated */

    /* copies at each sweep size now take 1.25x as long */
    for (int i = 0; i < 4; i++)
        coproc__profile_transfer_observe(p, 1, 0, p->h2d_pageable.bytes[i],
                                         1.25 * p->h2d_pageable.seconds[i]);
    assert_true(fabs(coproc__profile_transfer_now(p, 1, 0, mib3) / t - 1.25) < 1e-9);
    /* ... and only that direction and kind moved */
    assert_int_equal(p->drift[1][0].seen, 4);
    assert_int_equal(p->drift[1][1].seen + p->drift[0][0].seen + p->drift[0][1].seen, 0);

    /* copies under 1 MiB (launch jitter) and directions never calibrated teach nothing */
    coproc__profile_transfer_observe(p, 1, 0, 65536, 1.0);
    coproc__profile_transfer_observe(p, 0, 0, 4.0 * (1 << 20), 1.0);
    assert_int_equal(p->drift[1][0].seen, 4);
    assert_int_equal(p->drift[0][0].seen, 0);
    assert_true(coproc__profile_transfer_now(p, 0, 0, mib3) < 0); /* still uncalibrated */
    assert_true(coproc__profile_transfer_now(p, 1, 0, 0) == 0);    /* nothing to move */

    /* a profile made or loaded afresh starts at its own level */
    coproc__profile_init(p, NULL);
    assert_int_equal(p->drift[1][0].seen, 0);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_factor),
                                       cmocka_unit_test(test_profile_scaled)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
