/* test_arrow.c - the Arrow C Data Interface: import/export round trips of every
 * primitive type, ownership (release called exactly once), zero-copy on
 * host-unified devices, and refusal of what is not supported; nulls: the
 * meanings of null_count, and round trips of arrays with nulls made by hand
 * to the C Data Interface's spec (sliced, null_count -1). */
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

/* Give an array a validity buffer covering its offset + length rows, every
 * bit set (padding bytes past them random): allocated to exactly
 * ceil((offset + length) / 8) bytes, as the C Data Interface allows, so a
 * read past it is caught by the sanitizers. */
static uint8_t *add_validity(struct ArrowArray *array, test_rng *r)
{
    producer *p = array->private_data;
    size_t bits = (size_t)(array->offset + array->length), bytes = (bits + 7) / 8;
    p->validity = malloc(bytes ? bytes : 1);
    memset(p->validity, 0xff, bytes);
    if (bits % 8)
        p->validity[bytes - 1] = (uint8_t)(0xff >> (8 - bits % 8)) | (uint8_t)(test_rand(r) << (bits % 8));
    p->buffers[0] = p->validity;
    return p->validity;
}

static int arrow_valid(const uint8_t *v, size_t i) { return !v || (v[i >> 3] >> (i & 7)) & 1; }

/* null_count's meanings: > 0 nulls, 0 none, -1 the bitmap decides within
 * [offset, offset + length); a NULL validity buffer: none. Malformed counts. */
static void test_arrow_null_count(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    test_rng r = {3};
    int released = 0, schema_released = 0;
    struct ArrowSchema schema = make_schema("l", &schema_released);
    struct ArrowArray array = make_array(COPROC_INT64, 20, 4, &released, &r);
    uint8_t *v = add_validity(&array, &r);
    coproc_column *col = NULL;
    uint64_t nulls = 99;

    array.null_count = -2;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    array.null_count = 21;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    array.null_count = 1;
    ((producer *)array.private_data)->buffers[0] = NULL;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_non_null(strstr(coproc_errmsg(rt), "no validity buffer"));
    ((producer *)array.private_data)->buffers[0] = v;
    assert_null(col);
    assert_non_null(array.release);
    assert_int_equal(released, 0);

    /* -1 with zero bits only outside [offset, offset + length): no nulls, no validity */
    array.null_count = -1;
    v[0] = 0xf0; /* bits 0..3 lie before the offset */
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_null(coproc_column_validity(col));
    coproc_column_free(col);
    assert_int_equal(released, 1);

    for (int k = 0; k < 3; k++) {
        array = make_array(COPROC_INT64, 20, 4, &released, &r);
        v = add_validity(&array, &r);
        v[1] &= (uint8_t)~(1u << 5); /* bit 13: row 13 - 4 = 9 is null */
        array.null_count = k == 0 ? -1 : k == 1 ? 1 : 0;
        if (k == 2) /* a null_count of 0 is believed: the bitmap is not read */
            v[1] = 0;
        assert_ok(rt, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
        assert_ok(rt, coproc_column_null_count(col, &nulls));
        assert_int_equal(nulls, k == 2 ? 0 : 1);
        if (k == 2)
            assert_null(coproc_column_validity(col));
        coproc_scalar cnt;
        assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, col, &cnt));
        assert_int_equal(cnt.v.u64, k == 2 ? 20 : 19);
        coproc_column_free(col);
    }
    /* no validity buffer: every row valid, whatever the (valid) count */
    array = make_array(COPROC_INT64, 20, 4, &released, &r);
    array.null_count = -1;
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &schema, &array, &col));
    assert_null(coproc_column_validity(col));
    coproc_column_free(col);
    assert_int_equal(released, 5);
    schema.release(&schema);
    coproc_close(rt);
}

/* Arrays made by hand to the spec, with nulls: every type, sliced at offsets
 * that are and are not multiples of 8 and 32, null_count given or -1; import,
 * check values, validity and SUM/COUNT, export, check the exported validity
 * (bits from 0, null_count counted), import the export again. */
static void nulls_roundtrip_one(coproc_runtime *rt, int device, coproc_type t, size_t n,
                                size_t offset, double rate, int unknown, test_rng *r)
{
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, device, &info));
    if (t == COPROC_FLOAT64 && !info.has_fp64)
        return;
    int released = 0, schema_released = 0;
    struct ArrowSchema schema = make_schema(format_of(t), &schema_released);
    struct ArrowArray array = make_array(t, n, offset, &released, r);
    uint8_t *v = add_validity(&array, r);
    size_t nulls = 0;
    for (size_t i = 0; i < n + offset; i++)
        if ((double)test_rand_below(r, 1000) < rate * 1000) {
            v[i >> 3] &= (uint8_t)~(1u << (i & 7));
            nulls += i >= offset;
        }
    array.null_count = unknown ? -1 : (int64_t)nulls;
    size_t esize = coproc_type_size(t);
    char *expect = malloc((n + 1) * esize);
    memcpy(expect, (const char *)array.buffers[1] + offset * esize, n * esize);
    uint8_t *ev = calloc(n / 8 + 1, 1); /* the expected validity from bit 0 */
    for (size_t i = 0; i < n; i++)
        if (arrow_valid(v, offset + i))
            ev[i >> 3] |= (uint8_t)(1u << (i & 7));

    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_import_arrow(rt, device, &schema, &array, &col));
    assert_null(array.release);
    uint64_t got_nulls = 0;
    assert_ok(rt, coproc_column_null_count(col, &got_nulls));
    assert_int_equal(got_nulls, nulls);
    const coproc_column *cv = coproc_column_validity(col);
    if (nulls == 0 && unknown)
        assert_null(cv);
    if (nulls > 0) {
        assert_non_null(cv);
        uint32_t *w = malloc((n + 31) / 32 * 4);
        assert_ok(rt, coproc_column_download(cv, w, (n + 31) / 32));
        for (size_t i = 0; i < n; i++)
            if ((int)((w[i >> 5] >> (i & 31)) & 1) != arrow_valid(ev, i))
                fail_msg("%s n=%zu offset=%zu: validity of row %zu", coproc_type_name(t), n,
                         offset, i);
        /* zero-copy where the words line up beside zero-copy data */
        if (col->host_wrapped && offset % 32 == 0 && n % 32 == 0)
            assert_true(cv->host_wrapped);
        free(w);
    }
    char *got = malloc((n + 1) * esize);
    assert_ok(rt, coproc_column_download(col, got, n));
    for (size_t i = 0; i < n; i++)
        if (arrow_valid(ev, i) && memcmp(got + i * esize, expect + i * esize, esize) != 0)
            fail_msg("%s n=%zu offset=%zu: row %zu", coproc_type_name(t), n, offset, i);
    coproc_scalar cnt;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, col, &cnt));
    assert_int_equal(cnt.v.u64, n - nulls);

    struct ArrowSchema os;
    struct ArrowArray out;
    assert_ok(rt, coproc_column_export_arrow(col, &os, &out));
    coproc_column_free(col);
    assert_int_equal(released, 1);
    assert_int_equal(out.null_count, (int64_t)nulls);
    assert_int_equal(out.offset, 0);
    if (nulls == 0) {
        assert_null(out.buffers[0]);
    } else {
        const uint8_t *ov = out.buffers[0];
        assert_non_null(ov);
        assert_int_equal((uintptr_t)ov % 64, 0);
        assert_true(os.flags & ARROW_FLAG_NULLABLE);
        for (size_t i = 0; i < (n + 7) / 8 * 8; i++) /* bits past n cleared */
            if (arrow_valid(ov, i) != (i < n && arrow_valid(ev, i)))
                fail_msg("%s n=%zu offset=%zu: exported validity bit %zu", coproc_type_name(t),
                         n, offset, i);
    }
    for (size_t i = 0; i < n; i++)
        if (arrow_valid(ev, i) &&
            memcmp((const char *)out.buffers[1] + i * esize, expect + i * esize, esize) != 0)
            fail_msg("%s n=%zu offset=%zu: exported row %zu", coproc_type_name(t), n, offset, i);
    /* and back: the export is an ordinary producer's array */
    coproc_column *again = NULL;
    assert_ok(rt, coproc_column_import_arrow(rt, device, &os, &out, &again));
    assert_ok(rt, coproc_column_null_count(again, &got_nulls));
    assert_int_equal(got_nulls, nulls);
    coproc_column_free(again);
    os.release(&os);
    schema.release(&schema);
    free(expect);
    free(ev);
    free(got);
}

static void nulls_roundtrip_device(coproc_runtime *rt, int device, const char *path, void *user)
{
    static const size_t sizes[] = {0, 1, 7, 31, 32, 33, 64, 1000, 4096, 100003};
    static const size_t offsets[] = {0, 3, 8, 32, 45};
    static const double rates[] = {0, 0.01, 0.5, 1};
    test_rng r = {43};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++)
                for (size_t k = 0; k < sizeof rates / sizeof *rates; k++)
                    nulls_roundtrip_one(rt, device, (coproc_type)t, sizes[i], offsets[o],
                                        rates[k], (int)((i + o + k) % 2), &r);
}

static void test_arrow_nulls_roundtrip(void **state)
{
    test_each_device_path(nulls_roundtrip_device, NULL);
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
        cmocka_unit_test(test_arrow_null_count),
        cmocka_unit_test(test_arrow_nulls_roundtrip),
        cmocka_unit_test(test_arrow_bad_input),
        cmocka_unit_test(test_arrow_export_outlives_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
