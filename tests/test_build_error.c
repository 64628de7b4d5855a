/* test_build_error.c - a kernel that fails to build gives COPROC_BUILD_FAILED
 * with the compiler's build log in the message, and the runtime stays usable. */
#include <string.h>

#include <CL/cl.h>

#include "backend/opencl/program.h"
#include "core/runtime.h"
#include "testlib.h"

static void test_broken_kernel(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    static const char broken[] =
        "__kernel void broken(__global int *out) { out[0] = undeclared_identifier_xyz; }\n";
    cl_program p = NULL;
    coproc_status s = coproc__program_build(rt, &rt->devices[0], "broken", broken,
                                            sizeof broken - 1, &p);
    assert_int_equal(s, COPROC_BUILD_FAILED);
    assert_null(p);
    const char *msg = coproc_errmsg(rt);
    assert_true(strstr(msg, "'broken' failed to build") != NULL);
    assert_true(strstr(msg, "CL_BUILD_PROGRAM_FAILURE") != NULL);
    assert_true(strstr(msg, "build log") != NULL);
    assert_true(strstr(msg, "undeclared_identifier_xyz") != NULL); /* the compiler's own words */

    /* The runtime still works afterwards. */
    int32_t x[3] = {1, 2, 3};
    coproc_column *col = NULL;
    coproc_scalar sum;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 3, &col));
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum));
    assert_int_equal(sum.v.i64, 6);
    coproc_column_free(col);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_broken_kernel)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
