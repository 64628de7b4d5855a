/* test_no_platform.c - with no OpenCL driver registered, coproc_open fails with
 * COPROC_NO_PLATFORM and a message that names the fix; nothing crashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void test_no_platform(void **state)
{
    (void)state;
    /* The ICD loader reads OCL_ICD_VENDORS on first use: point it at an empty
     * directory before any OpenCL call in this process. */
    char *dir = test_temp_dir("noicd");
    setenv("OCL_ICD_VENDORS", dir, 1);
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(NULL, &rt);
    assert_int_equal(s, COPROC_NO_PLATFORM);
    assert_non_null(rt); /* holds the message */
    assert_int_equal(coproc_device_count(rt), 0);
    const char *msg = coproc_errmsg(rt);
    assert_true(strstr(msg, "-1001") != NULL);
    assert_true(strstr(msg, "pocl-opencl-icd") != NULL);
    coproc_device_info d;
    assert_int_equal(coproc_device_info_get(rt, 0, &d), COPROC_INVALID_ARGUMENT);
    coproc_close(rt);
    rmdir(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_platform)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
