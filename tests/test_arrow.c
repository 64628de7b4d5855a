/* test_arrow.c - the Arrow C Data Interface: import/export round trips of every
 * primitive type, ownership (release called exactly once), zero-copy on
 * host-unified devices, and refusal of what is not supported. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "coproc/arrow.h"
#include "data/column.h" /* col->mem, to prove the zero-copy path */

/* ---- a tiny Arrow producer whose release callbacks count their calls */

typedef struct producer {
    const void *buffers[2];
    void *data;
    uint8_t *validity;
    int *released; /* incremented by each release */
} producer;

static void producer_release(struct ArrowArray *a)
{
    producer *p = a->private_data;
    (*p->released)++;
    free(p->data);
    free(p->validity);
    free(p);
    a->release = NULL;
}

static void schema_release(struct ArrowSchema *s)
{
    (*(int *)s->private_data)++;
    s->release = NULL;
}

static const char *format_of(coproc_type t)
{
    static const char *f[] = {"i", "l", "I", "L", "f", "g"};
    return f[t];
}

static struct ArrowSchema make_schema(const char *format, int *released)
{
    return (struct ArrowSchema){.format = format, .release = schema_release,
                                .private_data = released};
}

/* An array of offset + n elements (64-byte aligned, as Arrow recommends) with
 * element i = a deterministic value; the array covers rows [offset, offset + n). */
static struct ArrowArray make_array(coproc_type t, size_t n, size_t offset, int *released,
                                    test_rng *r)
{
    producer *p = calloc(1, sizeof *p);
    size_t esize = coproc_type_size(t), bytes = (n + offset) * esize;
    p->data = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    assert_non_null(p->data);
    for (size_t i = 0; i < n + offset; i++) {
        uint64_t x = test_rand(r);
        char *d = (char *)p->data + i * esize;
        switch (t) {
        case COPROC_INT32: { int32_t v = (int32_t)(x >> 40) - (1 << 23); memcpy(d, &v, 4); break; }
        case COPROC_INT64: { int64_t v = (int64_t)x >> 3; memcpy(d, &v, 8); break; }
        case COPROC_UINT32: { uint32_t v = (uint32_t)x; memcpy(d, &v, 4); break; }
        case COPROC_UINT64: memcpy(d, &x, 8); break;
        case COPROC_FLOAT32: { float v = (float)(x >> 40) / 1024.0f - 8000.0f; memcpy(d, &v, 4); break; }
        case COPROC_FLOAT64: { double v = (double)(x >> 11) / 9007199254740992.0 - 0.5; memcpy(d, &v, 8); break; }
        default: break;
        }
    }
    p->buffers[0] = NULL;
    p->buffers[1] = p->data;
    p->released = released;
    return (struct ArrowArray){.length = (int64_t)n, .null_count = 0, .offset = (int64_t)offset,
                               .n_buffers = 2, .buffers = p->buffers,
                               .release = producer_release, .private_data = p};
}

static void check_sum(coproc_runtime *rt, coproc_type t, const coproc_column *col,
                      const void *data, size_t n)
{
    coproc_scalar s;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &s));
    assert_int_equal(s.count, n);
    int64_t si = 0;
    uint64_t su = 0;
    double sf = 0;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case COPROC_INT32: si += ((const int32_t *)data)[i]; break;
        case COPROC_INT64: si = (int64_t)((uint64_t)si + (uint64_t)((const int64_t *)data)[i]); break;
        case COPROC_UINT32: su += ((const uint32_t *)data)[i]; break;
        case COPROC_UINT64: su += ((const uint64_t *)data)[i]; break;
        case COPROC_FLOAT32: sf += ((const float *)data)[i]; break;
        case COPROC_FLOAT64: sf += ((const double *)data)[i]; break;
        default: break;
        }
    }
    if (t == COPROC_INT32 || t == COPROC_INT64)
        assert_true(s.v.i64 == si);
    else if (t == COPROC_UINT32 || t == COPROC_UINT64)
        assert_true(s.v.u64 == su);
    else if (fabs(s.v.f64 - sf) > 1e-6 * (1.0 + (double)n * 8000.0))
        fail_msg("%s sum of %zu rows: %.17g, expected %.17g", coproc_type_name(t), n, s.v.f64, sf);
}

/* Import -> check data and SUM -> export -> check -> release; counts releases. */
static void roundtrip_one(coproc_runtime *rt, int device, coproc_type t, size_t n, size_t offset,
                          test_rng *r)
{
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, device, &info));
    if (t == COPROC_FLOAT64 && !info.has_fp64)
        return;
    int released = 0, schema_released = 0;
    struct ArrowSchema schema = make_schema(format_of(t), &schema_released);
    struct ArrowArray array = make_array(t, n, offset, &released, r);
    size_t esize = coproc_type_size(t);
    char *expect = malloc((n + 1) * esize);
    memcpy(expect, (const char *)array.buffers[1] + offset * esize, n * esize);

    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_import_arrow(rt, device, &schema, &array, &col));
    assert_null(array.release); /* moved */
    assert_int_equal(coproc_column_length(col), n);
    assert_int_equal(coproc_column_type(col), t);
    /* Copied data is released at once; wrapped data only when the column goes. */
    assert_int_equal(released, col->host_wrapped ? 0 : 1);
    if (info.host_unified_memory && n > 0)
        assert_true(col->host_wrapped);

    char *got = malloc((n + 1) * esize);
    assert_ok(rt, coproc_column_download(col, got, n));
    assert_memory_equal(got, expect, n * esize);
    check_sum(rt, t, col, expect, n);

    struct ArrowSchema out_schema;
    struct ArrowArray out;
    assert_ok(rt, coproc_column_export_arrow(col, &out_schema, &out));
    coproc_column_free(col);
    assert_int_equal(released, 1);
    assert_string_equal(out_schema.format, format_of(t));
    assert_int_equal(out_schema.n_children, 0);
    assert_int_equal(out.length, (int64_t)n);
    assert_int_equal(out.null_count, 0);
    assert_int_equal(out.offset, 0);
    assert_int_equal(out.n_buffers, 2);
    assert_null(out.buffers[0]);
    assert_non_null(out.buffers[1]);
    assert_int_equal((uintptr_t)out.buffers[1] % 64, 0);
    assert_memory_equal(out.buffers[1], expect, n * esize);
    out.release(&out);
    assert_null(out.release);
    out_schema.release(&out_schema);
    assert_null(out_schema.release);

    schema.release(&schema); /* the schema is only borrowed by import */
    assert_int_equal(schema_released, 1);
    assert_int_equal(released, 1);
    free(expect);
    free(got);
}

static void roundtrip_device(coproc_runtime *rt, int device, const char *path, void *user)
{
    static const size_t sizes[] = {0, 1, 2, 7, 64, 257, 4097, 100003};
    static const size_t offsets[] = {0, 1, 3, 16};
    test_rng r = {42};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++)
                roundtrip_one(rt, device, (coproc_type)t, sizes[i], offsets[o], &r);
}

static void test_arrow_roundtrip_every_type(void **state)
{
    test_each_device_path(roundtrip_device, NULL);
}

/* On a host-unified device (PoCL) the column reads the Arrow buffer itself. */
static void test_arrow_zero_copy(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    int checked = 0;
    for (int d = 0; d < coproc_device_count(rt); d++) {
        coproc_device_info info;
        assert_ok(rt, coproc_device_info_get(rt, d, &info));
        if (!info.host_unified_memory)
            continue;
        test_rng r = {7};
        int released = 0, schema_released = 0;
        struct ArrowSchema schema = make_schema("i", &schema_released);
        struct ArrowArray array = make_array(COPROC_INT32, 1000, 5, &released, &r);
        int32_t *first = (int32_t *)array.buffers[1] + 5;
        coproc_column *col = NULL;
        assert_ok(rt, coproc_column_import_arrow(rt, d, &schema, &array, &col));
        assert_true(col->host_wrapped);
        void *host_ptr = NULL;
        assert_int_equal(clGetMemObjectInfo(col->mem, CL_MEM_HOST_PTR, sizeof host_ptr,
                                            &host_ptr, NULL), CL_SUCCESS);
        assert_ptr_equal(host_ptr, first);
        /* Not a hidden copy either: a change to the Arrow buffer shows in the column. */
        first[999] = 123456;
        int32_t last[1000];
        assert_ok(rt, coproc_column_download(col, last, 1000));
        assert_int_equal(last[999], 123456);
        /* Read-only: in-place writers refuse it and leave the Arrow data as it was. */
        assert_status(COPROC_INVALID_ARGUMENT, coproc_sort(rt, col, NULL));
        assert_true(strstr(coproc_errmsg(rt), "read-only") != NULL);
        coproc_column *src = NULL, *pos = NULL;
        uint32_t zero = 0;
        int32_t other = first[0] ^ 0x55; /* differs, so a write would show */
        assert_ok(rt, coproc_column_upload(rt, d, COPROC_INT32, &other, 1, &src));
        assert_ok(rt, coproc_column_upload(rt, d, COPROC_UINT32, &zero, 1, &pos));
        int32_t before = first[0];
        assert_status(COPROC_INVALID_ARGUMENT, coproc_scatter(rt, src, pos, col));
        assert_int_equal(first[0], before);
        assert_int_equal(first[999], 123456);
        coproc_column_free(src);
        coproc_column_free(pos);
        assert_int_equal(released, 0);
        coproc_column_free(col);
        assert_int_equal(released, 1);
        schema.release(&schema);
        checked++;
    }
    coproc_close(rt);
    if (!checked)
        skip();
}

static void test_arrow_unsupported_format(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    /* "u" (utf8) imports as strings: test_strings */
    static const char *formats[] = {"c", "s", "C", "e", "b", "+s", "ii", "", "tdD"};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        test_rng r = {1};
        int released = 0, schema_released = 0;
        struct ArrowSchema schema = make_schema(formats[i], &schema_released);
        struct ArrowArray array = make_array(COPROC_INT32, 10, 0, &released, &r);
        coproc_column *col = (coproc_column *)&array;
        assert_status(COPROC_UNSUPPORTED_TYPE,
                      coproc_column_import_arrow(rt, 0, &schema, &array, &col));
        assert_null(col);
        char want[32];
        snprintf(want, sizeof want, "\"%s\"", formats[i]);
        assert_non_null(strstr(coproc_errmsg(rt), want));
        assert_non_null(array.release); /* the caller keeps it */
        assert_int_equal(released, 0);
        array.release(&array);
        schema.release(&schema);
        assert_int_equal(released, 1);
    }
    coproc_close(rt);
}

static void test_arrow_nulls_rejected(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    test_rng r = {3};
    int released = 0, schema_released = 0;
    struct ArrowSchema schema = make_schema("l", &schema_released);
    struct ArrowArray array = make_array(COPROC_INT64, 20, 4, &released, &r);
    producer *p = array.private_data;
    p->validity = malloc(4);
    memset(p->validity, 0xff, 4);
    p->buffers[0] = p->validity;
    coproc_column *col = NULL;

    array.null_count = 1; /* declared nulls */
    assert_status(COPROC_UNSUPPORTED, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_non_null(strstr(coproc_errmsg(rt), "nulls are not supported"));
    assert_null(col);
    assert_non_null(array.release);

    array.null_count = -1; /* unknown: the bitmap decides, within [offset, offset + length) */
    p->validity[1] &= (uint8_t)~(1u << 5); /* row 13 - 4 = 9 is null */
    assert_status(COPROC_UNSUPPORTED, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_non_null(strstr(coproc_errmsg(rt), "nulls are not supported"));
    assert_non_null(array.release);
    p->validity[1] = 0xff;
    p->validity[0] = 0xf0;                 /* bits 0..3 lie before the offset */
    p->validity[3] = 0xf0;                 /* bits 24..27 lie after the end (4 + 20) */
    assert_int_equal(released, 0);
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_null(array.release);
    coproc_column_free(col);
    assert_int_equal(released, 1);
    schema.release(&schema);
    coproc_close(rt);
}

static void test_arrow_bad_input(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    test_rng r = {5};
    int released = 0, schema_released = 0;
    struct ArrowSchema schema = make_schema("i", &schema_released);
    struct ArrowArray array = make_array(COPROC_INT32, 10, 0, &released, &r);
    coproc_column *col = NULL;
    assert_status(COPROC_NULL_POINTER, coproc_column_import_arrow(NULL, 0, &schema, &array, &col));
    assert_status(COPROC_NULL_POINTER, coproc_column_import_arrow(rt, 0, NULL, &array, &col));
    assert_status(COPROC_NULL_POINTER, coproc_column_import_arrow(rt, 0, &schema, NULL, &col));
    assert_status(COPROC_NULL_POINTER, coproc_column_import_arrow(rt, 0, &schema, &array, NULL));
    assert_status(COPROC_INVALID_ARGUMENT,
                  coproc_column_import_arrow(rt, coproc_device_count(rt), &schema, &array, &col));
    array.n_buffers = 3;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    array.n_buffers = 2;
    array.length = -1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    array.length = 10;
    array.offset = INT64_MAX;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    array.offset = 0;
    const void *data = array.buffers[1];
    ((producer *)array.private_data)->buffers[1] = NULL;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    ((producer *)array.private_data)->buffers[1] = data;
    assert_null(col);
    assert_int_equal(released, 0);
    assert_non_null(array.release);

    /* A released (or moved-from) array is refused, not released twice. */
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_null(array.release);
    coproc_column *again = NULL;
    assert_status(COPROC_INVALID_ARGUMENT,
                  coproc_column_import_arrow(rt, 0, &schema, &array, &again));
    assert_null(again);

    struct ArrowSchema os;
    struct ArrowArray oa;
    assert_status(COPROC_NULL_POINTER, coproc_column_export_arrow(NULL, &os, &oa));
    assert_status(COPROC_NULL_POINTER, coproc_column_export_arrow(col, NULL, &oa));
    assert_status(COPROC_NULL_POINTER, coproc_column_export_arrow(col, &os, NULL));
    coproc_column_free(col);
    assert_int_equal(released, 1);
    schema.release(&schema);
    coproc_close(rt);
}

/* An exported array outlives its column and its runtime. */
static void test_arrow_export_outlives_runtime(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    uint64_t v[3] = {1, UINT64_MAX, 42};
    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT64, v, 3, &col));
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_ok(rt, coproc_column_export_arrow(col, &s, &a));
    coproc_column_free(col);
    coproc_close(rt);
    assert_string_equal(s.format, "L");
    assert_memory_equal(a.buffers[1], v, sizeof v);
    struct ArrowArray moved = a; /* consumers may move it (bitwise copy) */
    a.release = NULL;
    moved.release(&moved);
    s.release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrow_roundtrip_every_type),
        cmocka_unit_test(test_arrow_zero_copy),
        cmocka_unit_test(test_arrow_unsupported_format),
        cmocka_unit_test(test_arrow_nulls_rejected),
        cmocka_unit_test(test_arrow_bad_input),
        cmocka_unit_test(test_arrow_export_outlives_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
