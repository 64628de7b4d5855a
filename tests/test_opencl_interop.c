/* test_opencl_interop.c - coproc/opencl.h hands out the runtime's OpenCL
 * objects: a buffer written through them changes the column. */
#include <string.h>

#include "coproc/opencl.h"
#include "testlib.h"

static void test_interop(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    cl_context ctx = NULL;
    cl_device_id id = NULL;
    cl_command_queue q = NULL;
    assert_ok(rt, coproc_device_opencl(rt, 0, &ctx, &id, &q));
    assert_non_null(ctx);
    assert_non_null(id);
    assert_non_null(q);
    cl_context qctx = NULL;
    assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL),
                     CL_SUCCESS);
    assert_ptr_equal(qctx, ctx);
    assert_ok(rt, coproc_device_opencl(rt, 0, NULL, NULL, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_opencl(rt, 99, &ctx, &id, &q));
    assert_status(COPROC_NULL_POINTER, coproc_device_opencl(NULL, 0, &ctx, &id, &q));

    int32_t x[4] = {1, 2, 3, 4}, seven = 7;
    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &col));
    cl_mem mem = coproc_column_opencl(col);
    assert_non_null(mem);
    assert_int_equal(clEnqueueWriteBuffer(q, mem, CL_TRUE, 8, 4, &seven, 0, NULL, NULL),
                     CL_SUCCESS);
    coproc_scalar sum;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum));
    assert_int_equal(sum.v.i64, 1 + 2 + 7 + 4);
    assert_null(coproc_column_opencl(NULL));
    coproc_column_free(col);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_interop)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
