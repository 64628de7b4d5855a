/* test_rows64.c - a host column of more than 2^32 rows, streamed: reduce
 * (sum, count, min, max), select to a count and to UINT64 positions, and
 * group-by with 64-bit counts, and reduce over nulls (a validity streamed
 * beside the rows), against a scalar reference. The column is
 * 2^32 + 5003 INT32 rows of an anonymous MAP_NORESERVE mapping: untouched
 * pages read as zeros (the kernel's zero page) and cost no memory, and a
 * handful of rows hold chosen non-zero values (before, at and after row
 * 2^32, at chunk boundaries, the last row), so the reference needs only
 * those. Each pass reads 17 GB of zero pages, so the checks share passes.
 * Also: the 32-bit path is unchanged (UINT32 positions up to UINT32_MAX
 * rows, streamed or not), gather with UINT64 positions, and bad input
 * (positions of a wrong type).
 * Takes about 50 s on PoCL (2 loaded cores); COPROC_TEST_QUICK skips the
 * 2^32-row column (rusticl). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "testlib.h"

#include "core/runtime.h"
#include "exec/hostops.h"

#define HUGE_ROWS (((size_t)1 << 32) + 5003)
#define BUDGET ((uint64_t)256 << 20) /* chunks of tens of millions of rows */
#define MAX_MARKED 64

/* Rows per chunk of the last streamed call, from its debug log line. */
typedef struct chunk_log {
    size_t rows;
} chunk_log;

static void on_log(void *user, coproc_log_level level, const char *msg)
{
    size_t n, chunks, rows;
    if (sscanf(msg, "streaming %zu rows in %zu chunks of %zu rows", &n, &chunks, &rows) == 3)
        ((chunk_log *)user)->rows = rows;
    else if (level <= COPROC_LOG_WARN)
        fprintf(stderr, "coproc: %s\n", msg);
}

static coproc_runtime *open_rt(chunk_log *log, uint64_t budget)
{
    coproc_options opts;
    coproc_options_init(&opts);
    /* A pass over 17 GB may take longer than the watchdog's floor on a loaded
     * machine, and uncalibrated estimates do not raise the bound. */
    opts.watchdog_seconds = -1;
    opts.log = on_log;
    opts.log_user = log;
    opts.log_level = COPROC_LOG_DEBUG;
    opts.device_budget_bytes = budget;
    return test_open_with(&opts);
}

/* The rows that hold a non-zero value, ascending and distinct, and their values. */
typedef struct marked {
    size_t row[MAX_MARKED];
    int32_t value[MAX_MARKED];
    size_t n;
} marked;

static void mark(marked *m, size_t row)
{
    if (row >= HUGE_ROWS)
        return;
    for (size_t i = 0; i < m->n; i++)
        if (m->row[i] == row)
            return;
    assert_true(m->n < MAX_MARKED);
    size_t i = m->n++;
    for (; i > 0 && m->row[i - 1] > row; i--)
        m->row[i] = m->row[i - 1];
    m->row[i] = row;
}

/* Both sides of the chunk boundaries at the first chunk and around row 2^32. */
static void mark_boundaries(marked *m, size_t chunk)
{
    size_t around = ((size_t)1 << 32) / chunk * chunk;
    size_t at[] = {chunk, around, around + chunk};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        mark(m, at[i] - 1);
        mark(m, at[i]);
    }
}

/* Values: non-zero, both signs, the int32 extremes past row 2^32, and one
 * value on both sides of row 2^32 (a group-by key spanning chunks). */
static void choose_values(marked *m)
{
    for (size_t i = 0; i < m->n; i++) {
        size_t r = m->row[i];
        int32_t v = (int32_t)(i * 7919 % 100000) + 1;
        m->value[i] = i % 3 == 1 ? -v : v;
        if (r == (size_t)UINT32_MAX || r == ((size_t)1 << 32) + 1)
            m->value[i] = 77;
        else if (r == (size_t)1 << 32)
            m->value[i] = INT32_MIN;
        else if (r == HUGE_ROWS - 1)
            m->value[i] = INT32_MAX;
    }
}

typedef struct huge {
    int32_t *data;
    size_t bytes;
} huge;

/* The zero-page mapping, or exit 77 when the address space is not there. */
static huge map_huge(void)
{
    huge h = {NULL, HUGE_ROWS * sizeof(int32_t)};
    if (sizeof(size_t) < 8) {
        fprintf(stderr, "skipped: a 32-bit address space cannot hold 2^32 rows\n");
        exit(TEST_SKIP);
    }
    void *p = mmap(NULL, h.bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "skipped: no %zu bytes of address space (mmap: %s)\n", h.bytes,
                strerror(errno));
        exit(TEST_SKIP);
    }
    /* Huge pages, where allowed, map the zero page 2 MiB at a time: far fewer faults. */
    madvise(p, h.bytes, MADV_HUGEPAGE);
    h.data = p;
    return h;
}

static coproc_filter one_predicate(const coproc_column *col, coproc_cmp cmp, int64_t a)
{
    coproc_filter f;
    memset(&f, 0, sizeof f);
    f.first.col = col;
    f.first.cmp = cmp;
    f.first.a.i64 = a;
    return f;
}

/* The chunk rows of a streamed select, from a probe over the first rows of
 * the mapping while it is all zeros (checked: nothing selected). */
static size_t probe_chunk_rows(coproc_runtime *rt, chunk_log *log, const int32_t *data)
{
    coproc_column *col = NULL, *pos = NULL;
    size_t rows = (size_t)1 << 27; /* 512 MiB: over the budget, so it streams */
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data, rows, &col));
    coproc_filter f = one_predicate(col, COPROC_CMP_NE, 0);
    uint64_t count = 1;
    log->rows = 0;
    assert_ok(rt, coproc_select(rt, &f, &pos, &count));
    assert_int_equal(count, 0);
    assert_int_equal(coproc_column_length(pos), 0);
    coproc_column_free(pos);
    coproc_column_free(col);
    assert_true(log->rows > 0 && log->rows < rows);
    return log->rows;
}

static void check_reduce(coproc_runtime *rt, const coproc_column *col, const marked *m)
{
    int64_t sum = 0, mn = 0, mx = 0; /* zero rows take part in min and max */
    for (size_t i = 0; i < m->n; i++) {
        sum += m->value[i];
        mn = m->value[i] < mn ? m->value[i] : mn;
        mx = m->value[i] > mx ? m->value[i] : mx;
    }
    coproc_scalar r;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, col, &r));
    assert_int_equal(r.v.u64, HUGE_ROWS);
    assert_int_equal(r.count, HUGE_ROWS);
    double t = test_now();
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &r));
    fprintf(stderr, "reduce sum over %zu rows: %.1f s\n", (size_t)HUGE_ROWS, test_now() - t);
    assert_int_equal(r.type, COPROC_INT64);
    assert_int_equal(r.v.i64, sum);
    assert_int_equal(r.count, HUGE_ROWS);
    t = test_now();
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_MIN, col, &r));
    assert_int_equal(r.v.i64, mn);
    fprintf(stderr, "reduce min: %.1f s\n", test_now() - t);
    t = test_now();
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_MAX, col, &r));
    assert_int_equal(r.v.i64, mx);
    fprintf(stderr, "reduce max: %.1f s\n", test_now() - t);
}

/* Nulls past 2^32 rows: a validity of zero pages (every row null) with every
 * other marked row made valid, so the streamed count and sum (the validity
 * streamed beside the rows) see those rows alone. */
static void check_reduce_nulls(coproc_runtime *rt, const int32_t *data, const marked *m)
{
    size_t words = (HUGE_ROWS + 31) / 32;
    uint32_t *v = mmap(NULL, words * 4, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (v == MAP_FAILED)
        fail_msg("mmap of a %zu-word validity: %s", words, strerror(errno));
    int64_t sum = 0;
    uint64_t valid = 0;
    for (size_t i = 0; i < m->n; i += 2) {
        v[m->row[i] >> 5] |= 1u << (m->row[i] & 31);
        sum += m->value[i];
        valid++;
    }
    coproc_column *col = NULL, *bits = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data, HUGE_ROWS, &col));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, v, words, &bits));
    assert_ok(rt, coproc_column_set_validity(col, bits));
    coproc_scalar r;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, col, &r));
    assert_int_equal(r.v.u64, valid);
    assert_int_equal(r.count, valid);
    double t = test_now();
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &r));
    fprintf(stderr, "reduce sum with nulls over %zu rows: %.1f s\n", (size_t)HUGE_ROWS,
            test_now() - t);
    assert_int_equal(r.v.i64, sum);
    assert_int_equal(r.count, valid);
    coproc_column_free(col);
    munmap(v, words * 4);
}

static void check_select(coproc_runtime *rt, const coproc_column *col, const marked *m)
{
    /* To positions: every marked row, as UINT64 (rows past 2^32 among them). */
    coproc_filter f = one_predicate(col, COPROC_CMP_NE, 0);
    coproc_column *pos = NULL;
    uint64_t count = 0;
    double t = test_now();
    assert_ok(rt, coproc_select(rt, &f, &pos, &count));
    fprintf(stderr, "select to positions over %zu rows: %.1f s\n", (size_t)HUGE_ROWS,
            test_now() - t);
    assert_int_equal(count, m->n);
    assert_int_equal(coproc_column_type(pos), COPROC_UINT64);
    assert_int_equal(coproc_column_length(pos), m->n);
    const uint64_t *p = coproc_column_host_data(pos);
    for (size_t i = 0; i < m->n; i++)
        if (p[i] != m->row[i])
            fail_msg("position %zu: %" PRIu64 ", expected %zu", i, p[i], m->row[i]);
    coproc_column_free(pos);

    /* To a count only: more than 2^32 rows match (a 64-bit count). */
    size_t negative = 0;
    for (size_t i = 0; i < m->n; i++)
        negative += m->value[i] < 0;
    f = one_predicate(col, COPROC_CMP_GE, 0);
    t = test_now();
    assert_ok(rt, coproc_select(rt, &f, NULL, &count));
    fprintf(stderr, "select count: %.1f s\n", test_now() - t);
    assert_int_equal(count, HUGE_ROWS - negative);
}

/* The first UINT32_MAX rows, the most the 32-bit path takes: UINT32
 * positions, row UINT32_MAX - 1 among them and row UINT32_MAX not. */
static void check_select_boundary(coproc_runtime *rt, const int32_t *data, const marked *m)
{
    coproc_column *col = NULL, *pos = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data, UINT32_MAX, &col));
    coproc_filter f = one_predicate(col, COPROC_CMP_NE, 0);
    uint64_t count = 0;
    double t = test_now();
    assert_ok(rt, coproc_select(rt, &f, &pos, &count));
    fprintf(stderr, "select to positions over %zu rows: %.1f s\n", (size_t)UINT32_MAX,
            test_now() - t);
    size_t want = 0;
    while (want < m->n && m->row[want] < UINT32_MAX)
        want++;
    assert_int_equal(count, want);
    assert_int_equal(coproc_column_type(pos), COPROC_UINT32);
    assert_int_equal(coproc_column_length(pos), want);
    const uint32_t *p = coproc_column_host_data(pos);
    for (size_t i = 0; i < want; i++)
        if (p[i] != m->row[i])
            fail_msg("position %zu: %u, expected %zu", i, p[i], m->row[i]);
    assert_int_equal(p[want - 1], UINT32_MAX - 1);
    coproc_column_free(pos);
    coproc_column_free(col);
}

/* Keys = the column, counts only (values would double the pass, and reduce
 * checks the sums): key 0 has the zero rows (more than 2^32 of them), each
 * marked value its rows, one of them on both sides of row 2^32. */
static void check_group_by(coproc_runtime *rt, const coproc_column *col, const marked *m)
{
    int64_t key[MAX_MARKED + 1];
    uint64_t cnt[MAX_MARKED + 1];
    size_t groups = 0;
    for (size_t i = 0; i <= m->n; i++) {
        int64_t k = i < m->n ? m->value[i] : 0;
        uint64_t c = i < m->n ? 1 : HUGE_ROWS - m->n;
        size_t g = 0;
        while (g < groups && key[g] != k)
            g++;
        if (g == groups) {
            key[groups] = k;
            cnt[groups++] = 0;
        }
        cnt[g] += c;
    }
    coproc_group_result r;
    double t = test_now();
    assert_ok(rt, coproc_group_by(rt, col, NULL, 1, &r));
    fprintf(stderr, "group-by over %zu rows: %.1f s\n", (size_t)HUGE_ROWS, test_now() - t);
    assert_int_equal(r.groups, groups);
    const int32_t *k = coproc_column_host_data(r.keys);
    const uint64_t *c = coproc_column_host_data(r.count);
    assert_int_equal(coproc_column_type(r.count), COPROC_UINT64);
    for (size_t g = 0; g < r.groups; g++) {
        size_t want = 0;
        while (want < groups && key[want] != k[g])
            want++;
        if (want == groups)
            fail_msg("group %zu: key %d is not in the column", g, k[g]);
        if (g > 0)
            assert_true(k[g - 1] < k[g]);
        assert_int_equal(c[g], cnt[want]);
    }
    coproc_group_result_free(&r);
}

static void huge_column(void **state)
{
    (void)state;
    /* COPROC_TEST_QUICK (rusticl): a pass took 85-160 s on llvmpipe. */
    if (getenv("COPROC_TEST_QUICK")) {
        fprintf(stderr, "skipped: the 2^32-row column under COPROC_TEST_QUICK\n");
        skip();
    }
    huge h = map_huge();
    chunk_log log = {0};
    coproc_runtime *rt = open_rt(&log, BUDGET);
    size_t chunk = probe_chunk_rows(rt, &log, h.data);

    marked m = {.n = 0};
    size_t edges[] = {0,
                      1,
                      (size_t)UINT32_MAX - 1,
                      UINT32_MAX,
                      (size_t)1 << 32,
                      ((size_t)1 << 32) + 1,
                      HUGE_ROWS - 2,
                      HUGE_ROWS - 1};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        mark(&m, edges[i]);
    mark_boundaries(&m, chunk);
    choose_values(&m);
    for (size_t i = 0; i < m.n; i++)
        h.data[m.row[i]] = m.value[i];

    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, h.data, HUGE_ROWS, &col));
    check_reduce(rt, col, &m);
    check_reduce_nulls(rt, h.data, &m);
    check_select(rt, col, &m);
    check_select_boundary(rt, h.data, &m);
    check_group_by(rt, col, &m);

    /* Positions of more than 32 bits elsewhere: refused before any row is read. */
    coproc_column *perm = (coproc_column *)1;
    assert_status(COPROC_UNSUPPORTED, coproc_argsort(rt, col, &perm));
    assert_null(perm);
    int32_t few[3] = {77, 0, -5};
    coproc_column *small = NULL;
    uint64_t pairs = 1;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, few, 3, &small));
    assert_status(COPROC_UNSUPPORTED, coproc_hash_join_count(rt, small, col, &pairs));
    assert_non_null(strstr(coproc_errmsg(rt), "2^32"));
    coproc_column_free(small);
    /* Scatter streams src and positions in chunks of at most UINT32_MAX
     * rows. The same pages as UINT32 positions (all 0 but the marked rows,
     * some of them past 2^32) into 4 rows: a marked row's position is out
     * of range, found however far it lies, and dst is left as it was. */
    coproc_column *as_pos = NULL, *dst = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, h.data, HUGE_ROWS, &as_pos));
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 4, &dst));
    int32_t *d4 = coproc_column_host_data(dst);
    for (int i = 0; i < 4; i++)
        d4[i] = 100 + i;
    assert_status(COPROC_OUT_OF_RANGE, coproc_scatter(rt, col, as_pos, dst));
    for (int i = 0; i < 4; i++)
        assert_int_equal(d4[i], 100 + i);
    coproc_column_free(as_pos);
    coproc_column_free(dst);
    coproc_column_free(col);
    coproc_close(rt);
    munmap(h.data, h.bytes);
}

/* The 32-bit path: positions stay UINT32 up to UINT32_MAX rows, in memory
 * and streamed (forced by a small budget), with the chunks' offsets added. */
static void small_columns_keep_uint32_positions(void **state)
{
    (void)state;
    chunk_log log = {0};
    coproc_runtime *rt = open_rt(&log, 0);
    size_t sizes[] = {0, 1, 100003};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        int32_t *d = malloc((n ? n : 1) * sizeof *d);
        assert_non_null(d);
        test_rng rng = {n + 1};
        size_t want = 0;
        for (size_t i = 0; i < n; i++) {
            d[i] = (int32_t)test_rand_below(&rng, 7) - 3;
            want += d[i] > 0;
        }
        coproc_column *col = NULL;
        assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d, n, &col));
        coproc_filter f = one_predicate(col, COPROC_CMP_GT, 0);
        for (int streamed = 0; streamed < 2; streamed++) {
            coproc_column *pos = NULL;
            uint64_t count = 0;
            log.rows = 0;
            if (streamed) /* 256 KiB: chunks of tens of thousands of rows */
                assert_ok(rt, coproc__stream_select(rt, &rt->devices[0], &f, (size_t)256 << 10,
                                                    &pos, &count));
            else
                assert_ok(rt, coproc_select(rt, &f, &pos, &count));
            if (streamed && n == 100003)
                assert_true(log.rows > 0 && log.rows < n); /* several chunks */
            assert_int_equal(count, want);
            assert_int_equal(coproc_column_type(pos), COPROC_UINT32);
            assert_int_equal(coproc_column_length(pos), want);
            const uint32_t *p = coproc_column_host_data(pos);
            if (coproc_column_device(pos) >= 0) /* an in-memory result may stay on the device */
                fail_msg("host columns gave a device result");
            for (size_t i = 0, j = 0; i < n; i++)
                if (d[i] > 0) {
                    if (p[j] != i)
                        fail_msg("%zu rows, streamed %d: position %zu is %u, expected %zu", n,
                                 streamed, j, p[j], i);
                    j++;
                }
            coproc_column_free(pos);
        }
        coproc_column_free(col);
        free(d);
    }
    coproc_close(rt);
}

/* Gather takes UINT32 or UINT64 positions (as a select over more than 2^32
 * rows gives), host or device: UINT64 ones against the reference, one of
 * 2^32 + 1 out of range (not wrapped to row 1); other types are
 * UNSUPPORTED_TYPE, *out NULL; scatter takes UINT32 ones only. */
static void gather_uint64_positions(void **state)
{
    (void)state;
    chunk_log log = {0};
    coproc_runtime *rt = open_rt(&log, 0);
    int32_t src[4] = {1, 2, 3, 4}, got[3];
    uint64_t p64[3] = {0, 3, 3}, far[2] = {2, ((uint64_t)1 << 32) + 1};
    int32_t p32[2] = {0, 3};
    for (int dev = -1; dev < 1; dev++) {
        coproc_column *s = NULL, *pos = NULL, *bad = NULL, *posi = NULL, *out = NULL;
        if (dev < 0) {
            assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, src, 4, &s));
            assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT64, p64, 3, &pos));
            assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT64, far, 2, &bad));
            assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, p32, 2, &posi));
        } else {
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, src, 4, &s));
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT64, p64, 3, &pos));
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT64, far, 2, &bad));
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, p32, 2, &posi));
        }
        assert_ok(rt, coproc_gather(rt, s, pos, &out));
        assert_int_equal(coproc_column_length(out), 3);
        assert_ok(rt, coproc_column_download(out, got, 3));
        assert_int_equal(got[0], 1);
        assert_int_equal(got[1], 4);
        assert_int_equal(got[2], 4);
        coproc_column_free(out);
        out = (coproc_column *)1;
        assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, s, bad, &out));
        assert_null(out);
        out = (coproc_column *)1;
        assert_status(COPROC_UNSUPPORTED_TYPE, coproc_gather(rt, s, posi, &out));
        assert_null(out);
        assert_non_null(strstr(coproc_errmsg(rt), "uint64"));
        if (dev >= 0) /* a device column scatters in place; host ones need writable memory */
            assert_status(COPROC_UNSUPPORTED_TYPE, coproc_scatter(rt, s, pos, s));
        coproc_column_free(s);
        coproc_column_free(pos);
        coproc_column_free(bad);
        coproc_column_free(posi);
    }
    coproc_close(rt);
}

/* Past the budget, UINT64 positions stream in chunks while the source stays
 * whole on the device: 200,003 positions into 1,000 rows at the smallest
 * budget, against the reference, and the run did stream. */
static void gather_uint64_positions_streamed(void **state)
{
    (void)state;
    chunk_log log = {0};
    coproc_runtime *rt = open_rt(&log, COPROC_MIN_DEVICE_BUDGET);
    size_t n = 1000, m = 200003;
    int32_t *src = malloc(n * 4);
    uint64_t *pos = malloc(m * 8);
    test_rng r = {64};
    for (size_t i = 0; i < n; i++)
        src[i] = (int32_t)test_rand(&r);
    for (size_t i = 0; i < m; i++)
        pos[i] = test_rand_below(&r, n);
    coproc_column *s = NULL, *p = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, src, n, &s));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT64, pos, m, &p));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.a = s;
    op.b = p;
    coproc_task *t = NULL;
    coproc_result res;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    assert_ok(rt, coproc_wait(t, &res));
    assert_true(res.streamed);
    assert_int_equal(coproc_column_length(res.column), m);
    const int32_t *got = coproc_column_host_data(res.column);
    for (size_t i = 0; i < m; i++)
        if (got[i] != src[pos[i]])
            fail_msg("row %zu: %d, expected %d", i, got[i], src[pos[i]]);
    coproc_result_free(&res);
    coproc_column_free(s);
    coproc_column_free(p);
    free(src);
    free(pos);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_columns_keep_uint32_positions),
        cmocka_unit_test(gather_uint64_positions),
        cmocka_unit_test(gather_uint64_positions_streamed),
        cmocka_unit_test(huge_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
