/* test_budget_stream.c - the streaming operators of runtime/exec/stream.c (reduce,
 * select, map, group-by over host columns larger than the device budget)
 * against plain C loops: every type, sizes 0, 1, one chunk, one more than a
 * chunk, not a multiple of the chunk and ~1M rows under a 256 KiB budget;
 * all / no rows selected; NaN for float min/max; negative and duplicate keys
 * spread over chunks; and that the input really went to the device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "exec/hostops.h"
#include "core/runtime.h"

#define BUDGET ((size_t)256 << 10)
#define BIG (((size_t)1 << 20) + 3)
#define NO_VALUES COPROC__TYPE_COUNT

/* Rows per chunk of the last streamed call, from its debug log line. */
static size_t last_rows;

static void on_log(void *user, coproc_log_level level, const char *msg)
{
    (void)user;
    size_t n, chunks, rows;
    if (sscanf(msg, "streaming %zu rows in %zu chunks of %zu rows", &n, &chunks, &rows) == 3)
        last_rows = rows;
    else if (level <= COPROC_LOG_WARN)
        fprintf(stderr, "coproc: %s\n", msg);
}

typedef struct env {
    coproc_runtime *rt;
    coproc__device *dev;
    int fp64;
    test_rng rng;
} env;

/* state: NULL runs the device's own kernel path; &gpu_path runs the GPU path
 * on CPU devices too (and skips elsewhere, where it is the own path). */
static int gpu_path = 0;

static env open_env(void **state)
{
    coproc_options opts;
    coproc_options_init(&opts);
    opts.log = on_log;
    opts.log_level = COPROC_LOG_DEBUG;
    opts.calibration = COPROC_CALIBRATION_OFF; /* nothing built before the path is forced */
    env e = {.rng = {4242}};
    coproc_status s = coproc_open(&opts, &e.rt);
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        fprintf(stderr, "skipped: %s: %s\n", coproc_status_name(s), coproc_errmsg(e.rt));
        coproc_close(e.rt);
        exit(TEST_SKIP);
    }
    if (s != COPROC_OK)
        fail_msg("coproc_open: %s: %s", coproc_status_name(s), coproc_errmsg(e.rt));
    e.dev = &e.rt->devices[0];
    e.fp64 = e.dev->info.has_fp64;
    if (*state == &gpu_path) {
        if (e.dev->info.type != COPROC_DEVICE_CPU) {
            coproc_close(e.rt);
            skip();
        }
        test_force_path(e.rt, 0, 0);
    }
    return e;
}

static coproc_column *wrap(env *e, coproc_type t, const void *data, size_t n)
{
    coproc_column *c = NULL;
    assert_ok(e->rt, coproc_column_wrap(e->rt, t, data, n, &c));
    return c;
}


static void put(coproc_type t, void *d, size_t i, uint64_t bits, double f)
{
    switch (t) {
    case COPROC_INT32: case COPROC_UINT32: ((uint32_t *)d)[i] = (uint32_t)bits; break;
    case COPROC_INT64: case COPROC_UINT64: ((uint64_t *)d)[i] = bits; break;
    case COPROC_FLOAT32: ((float *)d)[i] = (float)f; break;
    default: ((double *)d)[i] = f; break;
    }
}

enum { FILL_RANDOM, FILL_SPECIAL, FILL_NAN_FIRST, FILL_ALL_NAN };

/* Random values with the type's extremes; floats: SPECIAL adds NaN, -0.0 and
 * infinities, NAN_FIRST makes the first `chunk` rows NaN, ALL_NAN every row. */
static void fill(env *e, coproc_type t, void *d, size_t n, int mode, size_t chunk)
{
    static const uint64_t ext[] = {0, 1, UINT64_MAX, 0x8000000000000000ull,
                                   0x7FFFFFFFFFFFFFFFull, 0x80000000ull, 0x7FFFFFFFull,
                                   0xFFFFFFFFull};
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(&e->rng);
        uint64_t bits = x % 13 == 0 ? ext[(x >> 8) % 8] : x >> (x % 40);
        if ((x >> 60) & 1)
            bits = 0 - bits; /* negative signed values */
        double f = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1000;
        if (mode == FILL_SPECIAL) {
            int pick = (int)(x % 11);
            f = pick == 0 ? NAN : pick == 1 ? -0.0 : pick == 2 && (x >> 40) % 20 == 0 ? INFINITY
                : f;
        }
        if (mode == FILL_ALL_NAN || (mode == FILL_NAN_FIRST && i < chunk))
            f = NAN;
        put(t, d, i, bits, f);
    }
}

/* ---------------------------------------------------------------- reduce */

static coproc_scalar ref_reduce(coproc_reduce_op op, coproc_type t, const void *d, size_t n)
{
    coproc_scalar r;
    memset(&r, 0, sizeof r);
    r.count = n;
    int mn = op == COPROC_REDUCE_MIN;
    if (op == COPROC_REDUCE_COUNT) {
        r.type = COPROC_UINT64;
        r.v.u64 = n;
    } else if (t == COPROC_INT32 || t == COPROC_INT64) {
        r.type = COPROC_INT64;
        int64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_INT32 ? INT32_MAX : INT64_MAX)
                                                       : (t == COPROC_INT32 ? INT32_MIN : INT64_MIN);
        for (size_t i = 0; i < n; i++) {
            int64_t v = test_get_i(t, d, i);
            if (op == COPROC_REDUCE_SUM)
                acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (mn ? v < acc : v > acc)
                acc = v;
        }
        r.v.i64 = acc;
    } else if (t == COPROC_UINT32 || t == COPROC_UINT64) {
        r.type = COPROC_UINT64;
        uint64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_UINT32 ? UINT32_MAX : UINT64_MAX)
                                                        : 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = test_get_u(t, d, i);
            if (op == COPROC_REDUCE_SUM)
                acc += v;
            else if (mn ? v < acc : v > acc)
                acc = v;
        }
        r.v.u64 = acc;
    } else {
        r.type = COPROC_FLOAT64;
        double acc = op == COPROC_REDUCE_SUM ? 0 : n == 0 ? (mn ? INFINITY : -INFINITY) : NAN;
        for (size_t i = 0; i < n; i++) {
            double v = test_get_f(t, d, i);
            acc = op == COPROC_REDUCE_SUM ? acc + v : mn ? fmin(acc, v) : fmax(acc, v);
        }
        r.v.f64 = acc;
    }
    return r;
}

static void reduce_case(env *e, coproc_type t, const void *d, size_t n, const char *what)
{
    coproc_column *col = wrap(e, t, d, n);
    for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++) {
        char where[160];
        snprintf(where, sizeof where, "reduce %s op=%d n=%zu %s", coproc_type_name(t), op, n,
                 what);
        uint64_t before = atomic_load(&e->dev->bytes_h2d);
        coproc_scalar got, want = ref_reduce((coproc_reduce_op)op, t, d, n);
        coproc_status s = coproc__stream_reduce(e->rt, e->dev, (coproc_reduce_op)op, col, BUDGET,
                                                &got);
        if (s != COPROC_OK)
            fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
        if (op != COPROC_REDUCE_COUNT && atomic_load(&e->dev->bytes_h2d) - before <
                                             n * coproc_type_size(t))
            fail_msg("%s: the input did not go to the device", where);
        if (got.type != want.type || got.count != want.count)
            fail_msg("%s: type %d count %llu, want %d %llu", where, got.type,
                     (unsigned long long)got.count, want.type, (unsigned long long)want.count);
        if (want.type != COPROC_FLOAT64) {
            if (got.v.u64 != want.v.u64)
                fail_msg("%s: got %llx want %llx", where, (unsigned long long)got.v.u64,
                         (unsigned long long)want.v.u64);
            continue;
        }
        double g = got.v.f64, w = want.v.f64;
        if (isnan(g) || isnan(w) || isinf(w) || op != COPROC_REDUCE_SUM) {
            if (!(g == w || (isnan(g) && isnan(w))))
                fail_msg("%s: got %.17g want %.17g", where, g, w);
            continue;
        }
        double abs_sum = 0;
        for (size_t i = 0; i < n; i++)
            abs_sum += fabs(test_get_f(t, d, i));
        if (fabs(g - w) > 4 * DBL_EPSILON * abs_sum + 1e-300) /* other summation order */
            fail_msg("%s: got %.17g want %.17g", where, g, w);
    }
    coproc_column_free(col);
}

static void test_stream_reduce(void **state)
{
    env e = open_env(state);
    void *d = malloc(BIG * 8);
    for (int ti = 0; ti < COPROC__TYPE_COUNT; ti++) {
        coproc_type t = (coproc_type)ti;
        if (t == COPROC_FLOAT64 && !e.fp64)
            continue;
        fill(&e, t, d, BIG, FILL_RANDOM, 0);
        reduce_case(&e, t, d, BIG, "random");
        size_t r = last_rows;
        assert_true(r > 1000 && r < BIG / 4); /* many chunks */
        const size_t sizes[] = {0, 1, r, r + 1, 3 * r + 17};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            fill(&e, t, d, sizes[si], FILL_RANDOM, 0);
            reduce_case(&e, t, d, sizes[si], "random");
            if (!test_is_float(t))
                continue;
            fill(&e, t, d, sizes[si], FILL_SPECIAL, 0);
            reduce_case(&e, t, d, sizes[si], "special");
            fill(&e, t, d, sizes[si], FILL_NAN_FIRST, r);
            reduce_case(&e, t, d, sizes[si], "first chunk NaN");
            fill(&e, t, d, sizes[si], FILL_ALL_NAN, 0);
            reduce_case(&e, t, d, sizes[si], "all NaN");
        }
    }
    free(d);
    coproc_close(e.rt);
}

/* ---------------------------------------------------------------- select */

static int ref_pred(const coproc_predicate *p, coproc_type t, const void *d, size_t i)
{
    if (test_is_float(t)) {
        double x = test_get_f(t, d, i), a = p->a.f64, b = p->b.f64;
        switch (p->cmp) {
        case COPROC_CMP_EQ: return x == a;
        case COPROC_CMP_NE: return x != a;
        case COPROC_CMP_LT: return x < a;
        case COPROC_CMP_LE: return x <= a;
        case COPROC_CMP_GT: return x > a;
        case COPROC_CMP_GE: return x >= a;
        default: return a <= x && x < b;
        }
    }
    if (t == COPROC_INT32 || t == COPROC_INT64) {
        int64_t x = test_get_i(t, d, i), a = p->a.i64, b = p->b.i64;
        switch (p->cmp) {
        case COPROC_CMP_EQ: return x == a;
        case COPROC_CMP_NE: return x != a;
        case COPROC_CMP_LT: return x < a;
        case COPROC_CMP_LE: return x <= a;
        case COPROC_CMP_GT: return x > a;
        case COPROC_CMP_GE: return x >= a;
        default: return a <= x && x < b;
        }
    }
    uint64_t x = test_get_u(t, d, i), a = p->a.u64, b = p->b.u64;
    switch (p->cmp) {
    case COPROC_CMP_EQ: return x == a;
    case COPROC_CMP_NE: return x != a;
    case COPROC_CMP_LT: return x < a;
    case COPROC_CMP_LE: return x <= a;
    case COPROC_CMP_GT: return x > a;
    case COPROC_CMP_GE: return x >= a;
    default: return a <= x && x < b;
    }
}

/* Predicates on a column of type t: 0 about half, 1 all rows, 2 none, 3 a range. */
static coproc_predicate make_pred(coproc_type t, int kind)
{
    coproc_predicate p;
    memset(&p, 0, sizeof p);
    int sgn = t == COPROC_INT32 || t == COPROC_INT64;
    switch (kind) {
    case 0:
        p.cmp = COPROC_CMP_LT;
        if (test_is_float(t)) p.a.f64 = 0.5; else if (sgn) p.a.i64 = 3; else p.a.u64 = 1u << 20;
        break;
    case 1: /* NaN != a is true: every row */
        p.cmp = test_is_float(t) ? COPROC_CMP_NE : COPROC_CMP_GE;
        if (test_is_float(t)) p.a.f64 = NAN; else if (sgn) p.a.i64 = t == COPROC_INT32 ? INT32_MIN : INT64_MIN;
        break;
    case 2:
        p.cmp = test_is_float(t) ? COPROC_CMP_EQ : COPROC_CMP_LT;
        if (test_is_float(t)) p.a.f64 = NAN; else if (sgn) p.a.i64 = t == COPROC_INT32 ? INT32_MIN : INT64_MIN;
        break;
    default:
        p.cmp = COPROC_CMP_RANGE;
        if (test_is_float(t)) { p.a.f64 = -100; p.b.f64 = 250; }
        else if (sgn) { p.a.i64 = -1000000; p.b.i64 = 1 << 30; }
        else { p.a.u64 = 1000; p.b.u64 = (uint64_t)1 << 31; }
        break;
    }
    return p;
}

static void select_case(env *e, const coproc_filter *f, coproc_type ta, const void *a,
                        coproc_type tb, const void *b, size_t n, const char *what)
{
    uint32_t *want = malloc((n ? n : 1) * 4);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int x = ref_pred(&f->first, ta, a, i);
        if (f->logic == COPROC_LOGIC_AND)
            x = x && ref_pred(&f->second, tb, b, i);
        else if (f->logic == COPROC_LOGIC_OR)
            x = x || ref_pred(&f->second, tb, b, i);
        if (x)
            want[m++] = (uint32_t)i;
    }
    char where[200];
    snprintf(where, sizeof where, "select %s cmp=%d logic=%d %s n=%zu %s", coproc_type_name(ta),
             (int)f->first.cmp, (int)f->logic, coproc_type_name(tb), n, what);
    uint64_t before = atomic_load(&e->dev->bytes_h2d);
    coproc_column *pos = NULL;
    uint64_t count = 0;
    coproc_status s = coproc__stream_select(e->rt, e->dev, f, BUDGET, &pos, &count);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
    if (atomic_load(&e->dev->bytes_h2d) - before < n * coproc_type_size(ta))
        fail_msg("%s: the input did not go to the device", where);
    if (count != m || coproc_column_length(pos) != m || coproc_column_device(pos) != -1 ||
        coproc_column_type(pos) != COPROC_UINT32)
        fail_msg("%s: %llu positions (column of %zu), want %zu", where,
                 (unsigned long long)count, coproc_column_length(pos), m);
    const uint32_t *got = coproc_column_host_data(pos);
    for (size_t i = 0; i < m; i++)
        if (got[i] != want[i])
            fail_msg("%s: position %zu is %u, want %u", where, i, got[i], want[i]);
    coproc_column_free(pos);
    /* Count only, and positions only. */
    count = 0;
    assert_ok(e->rt, coproc__stream_select(e->rt, e->dev, f, BUDGET, NULL, &count));
    if (count != m)
        fail_msg("%s: count only: %llu, want %zu", where, (unsigned long long)count, m);
    assert_ok(e->rt, coproc__stream_select(e->rt, e->dev, f, BUDGET, &pos, NULL));
    assert_int_equal(coproc_column_length(pos), m);
    coproc_column_free(pos);
    free(want);
}

static void test_stream_select(void **state)
{
    env e = open_env(state);
    void *a = malloc(BIG * 8), *b = malloc(BIG * 8);
    for (int ti = 0; ti < COPROC__TYPE_COUNT; ti++) {
        coproc_type t = (coproc_type)ti;
        if (t == COPROC_FLOAT64 && !e.fp64)
            continue;
        /* The second column has another type, so both kinds of predicates mix. */
        coproc_type t2 = (coproc_type)((ti + 3) % (e.fp64 ? 6 : 5));
        fill(&e, t, a, BIG, FILL_SPECIAL, 0);
        fill(&e, t2, b, BIG, FILL_SPECIAL, 0);
        coproc_column *ca = wrap(&e, t, a, BIG), *cb = wrap(&e, t2, b, BIG);
        coproc_filter f = {.first = make_pred(t, 0)};
        f.first.col = ca;
        select_case(&e, &f, t, a, t2, b, BIG, "big");
        size_t r = last_rows;
        assert_true(r > 1000 && r < BIG / 4);
        coproc_column_free(ca);
        coproc_column_free(cb);
        const size_t sizes[] = {0, 1, r, r + 1, 3 * r + 17};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            ca = wrap(&e, t, a, n);
            cb = wrap(&e, t2, b, n);
            for (int kind = 0; kind < 4; kind++) {
                f = (coproc_filter){.first = make_pred(t, kind)};
                f.first.col = ca;
                select_case(&e, &f, t, a, t2, b, n, "one predicate");
            }
            for (int logic = COPROC_LOGIC_AND; logic <= COPROC_LOGIC_OR; logic++) {
                f = (coproc_filter){.first = make_pred(t, 0), .logic = (coproc_logic)logic,
                                    .second = make_pred(t2, 3)};
                f.first.col = ca;
                f.second.col = cb;
                select_case(&e, &f, t, a, t2, b, n, "two predicates");
            }
            coproc_column_free(ca);
            coproc_column_free(cb);
        }
    }
    free(a);
    free(b);
    coproc_close(e.rt);
}

/* ---------------------------------------------------------------- map */

static uint64_t ref_int(coproc_arith op, int sgn, int bits, uint64_t x, uint64_t y)
{
    uint64_t mask = bits == 32 ? 0xFFFFFFFFull : UINT64_MAX;
    x &= mask, y &= mask;
    switch (op) {
    case COPROC_ARITH_ADD: return (x + y) & mask;
    case COPROC_ARITH_SUB: return (x - y) & mask;
    case COPROC_ARITH_MUL: return (x * y) & mask;
    default:
        if (y == 0)
            return 0;
        if (!sgn)
            return x / y;
        if (y == mask) /* / -1 wraps */
            return (0 - x) & mask;
        int64_t sx = bits == 32 ? (int32_t)(uint32_t)x : (int64_t)x;
        int64_t sy = bits == 32 ? (int32_t)(uint32_t)y : (int64_t)y;
        return (uint64_t)(sx / sy) & mask;
    }
}

static void map_case(env *e, coproc_type t, coproc_arith op, const void *a, const void *b,
                     coproc_value c, size_t n)
{
    size_t es = coproc_type_size(t);
    char where[160];
    snprintf(where, sizeof where, "map %s op=%d %s n=%zu", coproc_type_name(t), (int)op,
             b ? "column" : "constant", n);
    coproc_column *ca = wrap(e, t, a, n), *cb = b ? wrap(e, t, b, n) : NULL, *out = NULL;
    uint64_t before = atomic_load(&e->dev->bytes_h2d);
    coproc_status s = coproc__stream_map(e->rt, e->dev, op, ca, cb, c, BUDGET, &out);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
    if (atomic_load(&e->dev->bytes_h2d) - before < n * es * (b ? 2 : 1))
        fail_msg("%s: the input did not go to the device", where);
    if (coproc_column_length(out) != n || coproc_column_type(out) != t ||
        coproc_column_device(out) != -1)
        fail_msg("%s: wrong output column", where);
    const void *got = coproc_column_host_data(out);
    int sgn = t == COPROC_INT32 || t == COPROC_INT64;
    for (size_t i = 0; i < n; i++) {
        if (test_is_float(t)) {
            double x = test_get_f(t, a, i), y = b ? test_get_f(t, b, i) : c.f64, w;
            if (t == COPROC_FLOAT32) {
                float fx = (float)x, fy = (float)y; /* float arithmetic, constant rounded */
                w = op == COPROC_ARITH_ADD ? fx + fy : op == COPROC_ARITH_SUB ? fx - fy
                  : op == COPROC_ARITH_MUL ? fx * fy : fx / fy;
            } else {
                w = op == COPROC_ARITH_ADD ? x + y : op == COPROC_ARITH_SUB ? x - y
                  : op == COPROC_ARITH_MUL ? x * y : x / y;
            }
            double g = test_get_f(t, got, i);
            /* Without fp64 float32 division is the device's (OpenCL allows 2.5 ulp). */
            double tol = t == COPROC_FLOAT32 && op == COPROC_ARITH_DIV && !e->fp64
                             ? 3 * fabs(nextafterf((float)w, INFINITY) - (float)w) : 0;
            if (!(g == w || (isnan(g) && isnan(w)) || fabs(g - w) <= tol))
                fail_msg("%s: row %zu: %.9g op %.9g = %.17g, want %.17g", where, i, x, y, g, w);
        } else {
            int bits = es == 4 ? 32 : 64;
            uint64_t x = sgn ? (uint64_t)test_get_i(t, a, i) : test_get_u(t, a, i);
            uint64_t y = b ? (sgn ? (uint64_t)test_get_i(t, b, i) : test_get_u(t, b, i))
                           : (sgn ? (uint64_t)c.i64 : c.u64);
            uint64_t w = ref_int(op, sgn, bits, x, y);
            uint64_t g = (sgn ? (uint64_t)test_get_i(t, got, i) : test_get_u(t, got, i)) &
                         (bits == 32 ? 0xFFFFFFFFull : UINT64_MAX);
            if (g != w)
                fail_msg("%s: row %zu: got %llx want %llx", where, i, (unsigned long long)g,
                         (unsigned long long)w);
        }
    }
    coproc_column_free(out);
    coproc_column_free(ca);
    coproc_column_free(cb);
}

static void test_stream_map(void **state)
{
    env e = open_env(state);
    void *a = malloc(BIG * 8), *b = malloc(BIG * 8);
    for (int ti = 0; ti < COPROC__TYPE_COUNT; ti++) {
        coproc_type t = (coproc_type)ti;
        if (t == COPROC_FLOAT64 && !e.fp64)
            continue;
        fill(&e, t, a, BIG, FILL_SPECIAL, 0);
        fill(&e, t, b, BIG, FILL_SPECIAL, 0);
        coproc_value c;
        if (test_is_float(t)) c.f64 = -2.5; else if (t == COPROC_INT32 || t == COPROC_INT64) c.i64 = -7;
        else c.u64 = 7;
        map_case(&e, t, COPROC_ARITH_ADD, a, b, c, BIG);
        size_t r = last_rows;
        assert_true(r > 1000 && r < BIG / 4);
        map_case(&e, t, COPROC_ARITH_MUL, a, NULL, c, BIG);
        const size_t sizes[] = {0, 1, r, r + 1, 3 * r + 17};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (int op = COPROC_ARITH_ADD; op <= COPROC_ARITH_DIV; op++) {
                map_case(&e, t, (coproc_arith)op, a, b, c, sizes[si]);
                map_case(&e, t, (coproc_arith)op, a, NULL, c, sizes[si]);
            }
    }
    free(a);
    free(b);
    coproc_close(e.rt);
}

/* ---------------------------------------------------------------- group-by */

/* Keys as bits (32-bit keys zero-extended) and in an order that compares like their values. */
static uint64_t key_bits(coproc_type t, const void *k, size_t i)
{
    return coproc_type_size(t) == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

static uint64_t key_order(coproc_type t, uint64_t bits)
{
    return t == COPROC_INT32 ? bits ^ 0x80000000u : t == COPROC_INT64 ? bits ^ (1ull << 63) : bits;
}

typedef struct row_ref { uint64_t ord; size_t row; } row_ref;

static int cmp_row(const void *x, const void *y)
{
    const row_ref *a = x, *b = y;
    return a->ord != b->ord ? (a->ord < b->ord ? -1 : 1) : (a->row < b->row ? -1 : a->row > b->row);
}

enum { KD_MOD, KD_MANY, KD_EXTREME, KD_COUNT };

/* MOD: keys -500..499 (negative, duplicated across chunks); MANY: mostly
 * distinct; EXTREME: the types' limits. Float values are NaN in every row of
 * keys divisible by 7 (all-NaN groups) and in some other rows. */
static void fill_group(env *e, coproc_type kt, void *k, coproc_type vt, void *v, size_t n, int dist)
{
    static const uint64_t ext[] = {0, 1, UINT64_MAX, 1ull << 63, (1ull << 63) - 1, 0x80000000ull,
                                   0x7FFFFFFFull, 0xFFFFFFFFull, 0xFFFFFFFF00000000ull};
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(&e->rng);
        uint64_t key = dist == KD_MOD ? (uint64_t)((int64_t)(x % 1000) - 500)
                     : dist == KD_MANY ? x : ext[x % 9];
        put(kt, k, i, key, 0);
        if (vt == NO_VALUES)
            continue;
        uint64_t y = test_rand(&e->rng);
        double f = ((double)(y >> 11) / 9007199254740992.0 - 0.5) * 1000;
        if (key_bits(kt, k, i) % 7 == 0 || y % 17 == 0)
            f = NAN;
        else if (y % 23 == 0)
            f = -0.0;
        put(vt, v, i, y % 11 == 0 ? ext[y % 9] : y >> (y % 40), f);
    }
}

/* Compare a streamed group-by with one pass over the rows sorted by key. */
static void group_case(env *e, coproc_type kt, coproc_type vt, size_t n, int dist, int sorted)
{
    void *k = malloc((n ? n : 1) * 8), *v = malloc((n ? n : 1) * 8);
    fill_group(e, kt, k, vt, v, n, dist);
    char where[200];
    snprintf(where, sizeof where, "group-by keys=%s values=%s n=%zu dist=%d sorted=%d",
             coproc_type_name(kt), vt == NO_VALUES ? "none" : coproc_type_name(vt), n, dist,
             sorted);
    coproc_column *ck = wrap(e, kt, k, n), *cv = vt == NO_VALUES ? NULL : wrap(e, vt, v, n);
    uint64_t before = atomic_load(&e->dev->bytes_h2d);
    coproc_group_result r;
    coproc_status s = coproc__stream_group_by(e->rt, e->dev, ck, cv, sorted, BUDGET, &r);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
    size_t in_bytes = n * (coproc_type_size(kt) + (cv ? coproc_type_size(vt) : 0));
    if (atomic_load(&e->dev->bytes_h2d) - before < in_bytes)
        fail_msg("%s: the input did not go to the device", where);

    /* Reference groups in key order; the result's in its own order, matched by key. */
    row_ref *rows = malloc((n ? n : 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++)
        rows[i] = (row_ref){key_order(kt, key_bits(kt, k, i)), i};
    qsort(rows, n, sizeof *rows, cmp_row);
    size_t m = r.groups;
    row_ref *got = malloc((m ? m : 1) * sizeof *got);
    assert_int_equal(coproc_column_length(r.keys), m);
    assert_int_equal(coproc_column_type(r.keys), kt);
    assert_int_equal(coproc_column_device(r.keys), -1);
    assert_int_equal(coproc_column_type(r.count), COPROC_UINT64);
    const void *gk = coproc_column_host_data(r.keys);
    const uint64_t *gc = coproc_column_host_data(r.count);
    for (size_t g = 0; g < m; g++)
        got[g] = (row_ref){key_order(kt, key_bits(kt, gk, g)), g};
    if (sorted) {
        for (size_t g = 1; g < m; g++)
            if (got[g - 1].ord >= got[g].ord)
                fail_msg("%s: keys not ascending at group %zu", where, g);
    } else {
        qsort(got, m, sizeof *got, cmp_row);
    }
    if (cv) {
        coproc_type st = test_is_float(vt) ? COPROC_FLOAT64 : vt == COPROC_INT32 || vt == COPROC_INT64
                                                           ? COPROC_INT64 : COPROC_UINT64;
        if (!e->fp64 && test_is_float(vt))
            st = COPROC_FLOAT32;
        assert_int_equal(coproc_column_type(r.sum), st);
        assert_int_equal(coproc_column_type(r.min), vt);
        assert_int_equal(coproc_column_type(r.max), vt);
        assert_int_equal(coproc_column_length(r.sum), m);
    } else {
        assert_null(r.sum);
        assert_null(r.min);
        assert_null(r.max);
    }
    size_t g = 0;
    for (size_t a = 0; a < n; g++) {
        size_t b = a;
        while (b < n && rows[b].ord == rows[a].ord)
            b++;
        if (g >= m)
            fail_msg("%s: %zu groups, want more", where, m);
        size_t at = got[g].row;
        if (got[g].ord != rows[a].ord || gc[at] != b - a)
            fail_msg("%s: group %zu: key %llx count %llu, want key %llx count %zu", where, g,
                     (unsigned long long)key_bits(kt, gk, at), (unsigned long long)gc[at],
                     (unsigned long long)key_bits(kt, k, rows[a].row), b - a);
        if (cv && test_is_float(vt)) {
            double sum = 0, abs_sum = 0, mn = NAN, mx = NAN;
            for (size_t j = a; j < b; j++) {
                double x = test_get_f(vt, v, rows[j].row);
                sum += x;
                abs_sum += isnan(x) ? 0 : fabs(x);
                mn = fmin(mn, x);
                mx = fmax(mx, x);
            }
            double gs = test_get_f(e->fp64 ? COPROC_FLOAT64 : COPROC_FLOAT32,
                              coproc_column_host_data(r.sum), at);
            double gmn = test_get_f(vt, coproc_column_host_data(r.min), at);
            double gmx = test_get_f(vt, coproc_column_host_data(r.max), at);
            double tol = (b - a + 4) * (e->fp64 ? DBL_EPSILON : FLT_EPSILON) * abs_sum;
            if (!(isnan(sum) ? isnan(gs) : fabs(gs - sum) <= tol + 1e-300) ||
                !(gmn == mn || (isnan(gmn) && isnan(mn))) ||
                !(gmx == mx || (isnan(gmx) && isnan(mx))))
                fail_msg("%s: group %zu: sum/min/max %.17g/%g/%g, want %.17g/%g/%g", where, g,
                         gs, gmn, gmx, sum, mn, mx);
        } else if (cv) {
            int sgn = vt == COPROC_INT32 || vt == COPROC_INT64;
            uint64_t sum = 0, mn = 0, mx = 0;
            for (size_t j = a; j < b; j++) {
                uint64_t x = sgn ? (uint64_t)test_get_i(vt, v, rows[j].row) : test_get_u(vt, v, rows[j].row);
                sum += x;
                if (j == a || (sgn ? (int64_t)x < (int64_t)mn : x < mn))
                    mn = x;
                if (j == a || (sgn ? (int64_t)x > (int64_t)mx : x > mx))
                    mx = x;
            }
            uint64_t gs = ((const uint64_t *)coproc_column_host_data(r.sum))[at];
            uint64_t gmn = sgn ? (uint64_t)test_get_i(vt, coproc_column_host_data(r.min), at)
                               : test_get_u(vt, coproc_column_host_data(r.min), at);
            uint64_t gmx = sgn ? (uint64_t)test_get_i(vt, coproc_column_host_data(r.max), at)
                               : test_get_u(vt, coproc_column_host_data(r.max), at);
            if (gs != sum || gmn != mn || gmx != mx)
                fail_msg("%s: group %zu: sum/min/max %llx/%llx/%llx, want %llx/%llx/%llx", where,
                         g, (unsigned long long)gs, (unsigned long long)gmn,
                         (unsigned long long)gmx, (unsigned long long)sum,
                         (unsigned long long)mn, (unsigned long long)mx);
        }
        a = b;
    }
    if (g != m)
        fail_msg("%s: %zu groups, want %zu", where, m, g);
    coproc_group_result_free(&r);
    coproc_column_free(ck);
    coproc_column_free(cv);
    free(rows);
    free(got);
    free(k);
    free(v);
}

static void test_stream_group_by(void **state)
{
    env e = open_env(state);
    for (int kt = COPROC_INT32; kt <= COPROC_UINT64; kt++) {
        for (int vt = 0; vt <= NO_VALUES; vt++) {
            if (vt == COPROC_FLOAT64 && !e.fp64)
                continue;
            group_case(&e, (coproc_type)kt, (coproc_type)vt, 20000, KD_MOD, 1);
            size_t r = last_rows;
            assert_true(r > 100 && r < 20000 / 4);
            const size_t sizes[] = {0, 1, r, r + 1, 3 * r + 17};
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int dist = 0; dist < KD_COUNT; dist++)
                    group_case(&e, (coproc_type)kt, (coproc_type)vt, sizes[si], dist,
                               (int)(si + dist) % 2);
        }
    }
    /* Many chunks and groups, keys mostly distinct; then few keys over ~1M rows. */
    group_case(&e, COPROC_INT64, e.fp64 ? COPROC_FLOAT64 : COPROC_FLOAT32, 100003, KD_MANY, 1);
    group_case(&e, COPROC_INT32, COPROC_INT32, BIG, KD_MOD, 0);
    coproc_close(e.rt);
}

/* ---------------------------------------------------------------- arguments */

static void test_stream_bad_input(void **state)
{
    env e = open_env(state);
    coproc_runtime *rt = e.rt;
    coproc__device *dev = e.dev;
    int32_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float fx[8] = {0};
    coproc_column *a = wrap(&e, COPROC_INT32, x, 8), *a7 = wrap(&e, COPROC_INT32, x, 7);
    coproc_column *fa = wrap(&e, COPROC_FLOAT32, fx, 8), *u = wrap(&e, COPROC_UINT32, x, 8);
    coproc_column *onde = NULL, *out = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 8, &onde));
    coproc_scalar sc;
    coproc_value c = {.i64 = 1};
    coproc_group_result g;

    assert_status(COPROC_NULL_POINTER, coproc__stream_reduce(NULL, dev, COPROC_REDUCE_SUM, a, BUDGET, &sc));
    assert_status(COPROC_NULL_POINTER, coproc__stream_reduce(rt, NULL, COPROC_REDUCE_SUM, a, BUDGET, &sc));
    assert_status(COPROC_NULL_POINTER, coproc__stream_reduce(rt, dev, COPROC_REDUCE_SUM, NULL, BUDGET, &sc));
    assert_status(COPROC_NULL_POINTER, coproc__stream_reduce(rt, dev, COPROC_REDUCE_SUM, a, BUDGET, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_reduce(rt, dev, (coproc_reduce_op)9, a, BUDGET, &sc));
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_reduce(rt, dev, COPROC_REDUCE_SUM, a, 1000, &sc));
    assert_true(strstr(coproc_errmsg(rt), "budget") != NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_reduce(rt, dev, COPROC_REDUCE_SUM, onde, BUDGET, &sc));

    coproc_filter f = {.first = {.col = a, .cmp = COPROC_CMP_LT}, .logic = COPROC_LOGIC_AND,
                       .second = {.col = a7, .cmp = COPROC_CMP_LT}};
    uint64_t count;
    assert_status(COPROC_NULL_POINTER, coproc__stream_select(rt, dev, NULL, BUDGET, &out, &count));
    assert_null(out);
    assert_status(COPROC_LENGTH_MISMATCH, coproc__stream_select(rt, dev, &f, BUDGET, &out, &count));
    f.second.col = NULL;
    assert_status(COPROC_NULL_POINTER, coproc__stream_select(rt, dev, &f, BUDGET, &out, &count));
    f.logic = (coproc_logic)7;
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_select(rt, dev, &f, BUDGET, &out, &count));
    f.logic = COPROC_LOGIC_NONE;
    f.first.a.i64 = (int64_t)1 << 40; /* does not fit int32 */
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_select(rt, dev, &f, BUDGET, &out, &count));
    assert_null(out);
    /* More rows than 32-bit positions hold give UINT64 positions: test_rows64. */

    assert_status(COPROC_NULL_POINTER, coproc__stream_map(rt, dev, COPROC_ARITH_ADD, a, a, c, BUDGET, NULL));
    assert_status(COPROC_LENGTH_MISMATCH, coproc__stream_map(rt, dev, COPROC_ARITH_ADD, a, a7, c, BUDGET, &out));
    assert_null(out);
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_map(rt, dev, COPROC_ARITH_ADD, a, u, c, BUDGET, &out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_map(rt, dev, (coproc_arith)9, a, a, c, BUDGET, &out));
    c.i64 = (int64_t)1 << 40;
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_map(rt, dev, COPROC_ARITH_ADD, a, NULL, c, BUDGET, &out));
    assert_null(out);
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_map(rt, dev, COPROC_ARITH_ADD, a, NULL, c, 4096, &out));

    assert_status(COPROC_NULL_POINTER, coproc__stream_group_by(rt, dev, NULL, a, 1, BUDGET, &g));
    assert_status(COPROC_NULL_POINTER, coproc__stream_group_by(rt, dev, a, a, 1, BUDGET, NULL));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc__stream_group_by(rt, dev, fa, a, 1, BUDGET, &g));
    assert_status(COPROC_LENGTH_MISMATCH, coproc__stream_group_by(rt, dev, a, a7, 1, BUDGET, &g));
    assert_null(g.keys);
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_group_by(rt, dev, onde, NULL, 1, BUDGET, &g));
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_group_by(rt, dev, a, NULL, 1, 65535, &g));

    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc__stream_reduce(rt2, &rt2->devices[0], COPROC_REDUCE_SUM, a, BUDGET, &sc));
    coproc_close(rt2);
    coproc_column_free(a);
    coproc_column_free(a7);
    coproc_column_free(fa);
    coproc_column_free(u);
    coproc_column_free(onde);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- nulls */

/* Validity bit i (v NULL: every row valid). */
static int valid_at(const uint32_t *v, size_t i)
{
    return v ? (v[i >> 5] >> (i & 31)) & 1 : 1;
}

/* A validity of n rows, a null with probability rate; the bits past row n
 * random (they must be ignored). */
static uint32_t *make_validity(env *e, size_t n, double rate)
{
    size_t words = (n + 31) / 32;
    uint32_t *v = malloc((words ? words : 1) * 4);
    for (size_t w = 0; w < words; w++)
        v[w] = (uint32_t)test_rand(&e->rng);
    for (size_t i = 0; i < n; i++) {
        int null =
            rate >= 1 || (rate > 0 && (double)test_rand_below(&e->rng, 1000000) < rate * 1e6);
        v[i >> 5] = null ? v[i >> 5] & ~(1u << (i & 31)) : v[i >> 5] | 1u << (i & 31);
    }
    return v;
}

/* Quarters in [-250, 250] at valid rows (sums exact in double), garbage (NaN,
 * extremes) under nulls: a streamed run that read them would show it. */
static void fill_nullable(env *e, coproc_type t, void *d, size_t n, const uint32_t *v)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(&e->rng);
        double f = (double)((int)(x % 2001) - 1000) / 4.0;
        if (!valid_at(v, i))
            put(t, d, i, x | 0x8000000000000000ull, x & 1 ? NAN : INFINITY);
        else
            put(t, d, i, (uint64_t)(int64_t)((int)(x % 2001) - 1000), f);
    }
}

/* A host column over d with the validity v (NULL: none); both borrowed. */
static coproc_column *wrap_nullable(env *e, coproc_type t, const void *d, size_t n,
                                    const uint32_t *v)
{
    coproc_column *c = wrap(e, t, d, n), *b = NULL;
    if (v) {
        assert_ok(e->rt, coproc_column_wrap(e->rt, COPROC_UINT32, v, (n + 31) / 32, &b));
        assert_ok(e->rt, coproc_column_set_validity(c, b));
    }
    return c;
}

/* The streamed reduce of a nullable column against a loop over its valid rows. */
static void reduce_nulls_case(env *e, coproc_type t, const void *d, const uint32_t *v, size_t n,
                              const char *what)
{
    coproc_column *col = wrap_nullable(e, t, d, n, v);
    for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++) {
        uint64_t count = 0;
        double fsum = 0, fmn = INFINITY, fmx = -INFINITY;
        int64_t isum = 0, imn = INT64_MAX, imx = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            if (!valid_at(v, i))
                continue;
            count++;
            if (test_is_float(t)) {
                double x = test_get_f(t, d, i);
                fsum += x, fmn = fmin(fmn, x), fmx = fmax(fmx, x);
            } else {
                int64_t x = test_get_i(t, d, i);
                isum += x, imn = x < imn ? x : imn, imx = x > imx ? x : imx;
            }
        }
        coproc_scalar got;
        char where[160];
        snprintf(where, sizeof where, "nulls reduce %s op=%d n=%zu %s", coproc_type_name(t), op, n,
                 what);
        coproc_status s =
            coproc__stream_reduce(e->rt, e->dev, (coproc_reduce_op)op, col, BUDGET, &got);
        if (s != COPROC_OK)
            fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
        if (got.count != count)
            fail_msg("%s: count %llu, want %llu", where, (unsigned long long)got.count,
                     (unsigned long long)count);
        if (op == COPROC_REDUCE_COUNT) {
            if (got.v.u64 != count)
                fail_msg("%s: COUNT %llu, want %llu", where, (unsigned long long)got.v.u64,
                         (unsigned long long)count);
            continue;
        }
        if (count == 0 && op != COPROC_REDUCE_SUM)
            continue; /* SQL's NULL: the value is the identity */
        int ok = test_is_float(t) ? got.v.f64 == (op == COPROC_REDUCE_SUM   ? fsum
                                                  : op == COPROC_REDUCE_MIN ? fmn
                                                                            : fmx)
                                  : got.v.i64 == (op == COPROC_REDUCE_SUM   ? isum
                                                  : op == COPROC_REDUCE_MIN ? imn
                                                                            : imx);
        if (!ok)
            fail_msg("%s: got %g / %lld", where, got.v.f64, (long long)got.v.i64);
    }
    coproc_column_free(col);
}

/* The streamed select (a >= 0, and OR b < 0) of nullable columns: a null is
 * never true. */
static void select_nulls_case(env *e, coproc_type t, const void *a, const uint32_t *va,
                              const void *b, const uint32_t *vb, size_t n, const char *what)
{
    coproc_column *ca = wrap_nullable(e, t, a, n, va), *cb = wrap_nullable(e, t, b, n, vb);
    for (int two = 0; two < 2; two++) {
        coproc_filter f = {.first = {.col = ca, .cmp = COPROC_CMP_GE},
                           .logic = two ? COPROC_LOGIC_OR : COPROC_LOGIC_NONE,
                           .second = {.col = cb, .cmp = COPROC_CMP_LT}};
        uint32_t *want = malloc((n ? n : 1) * 4);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            int x = valid_at(va, i) &&
                    (test_is_float(t) ? test_get_f(t, a, i) >= 0 : test_get_i(t, a, i) >= 0);
            int y = two && valid_at(vb, i) &&
                    (test_is_float(t) ? test_get_f(t, b, i) < 0 : test_get_i(t, b, i) < 0);
            if (x || y)
                want[m++] = (uint32_t)i;
        }
        char where[160];
        snprintf(where, sizeof where, "nulls select %s two=%d n=%zu %s", coproc_type_name(t), two,
                 n, what);
        coproc_column *pos = NULL;
        uint64_t count = 0;
        coproc_status s = coproc__stream_select(e->rt, e->dev, &f, BUDGET, &pos, &count);
        if (s != COPROC_OK)
            fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
        if (count != m || coproc_column_length(pos) != m)
            fail_msg("%s: %llu positions, want %zu", where, (unsigned long long)count, m);
        const uint32_t *got = coproc_column_host_data(pos);
        for (size_t i = 0; i < m; i++)
            if (got[i] != want[i])
                fail_msg("%s: position %zu is %u, want %u", where, i, got[i], want[i]);
        coproc_column_free(pos);
        free(want);
    }
    coproc_column_free(ca);
    coproc_column_free(cb);
}

/* The streamed map a + b and map_const a * 2: null in, null out. */
static void map_nulls_case(env *e, coproc_type t, const void *a, const uint32_t *va, const void *b,
                           const uint32_t *vb, size_t n, const char *what)
{
    coproc_column *ca = wrap_nullable(e, t, a, n, va), *cb = wrap_nullable(e, t, b, n, vb);
    for (int with_b = 0; with_b < 2; with_b++) {
        char where[160];
        snprintf(where, sizeof where, "nulls map %s b=%d n=%zu %s", coproc_type_name(t), with_b, n,
                 what);
        coproc_value c = {.i64 = 2};
        if (test_is_float(t))
            c.f64 = 2;
        coproc_column *out = NULL;
        coproc_status s =
            coproc__stream_map(e->rt, e->dev, with_b ? COPROC_ARITH_ADD : COPROC_ARITH_MUL, ca,
                               with_b ? cb : NULL, c, BUDGET, &out);
        if (s != COPROC_OK)
            fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(e->rt));
        const coproc_column *ov = coproc_column_validity(out);
        const uint32_t *gv = ov ? coproc_column_host_data(ov) : NULL;
        if ((va || (with_b && vb)) != (ov != NULL))
            fail_msg("%s: a validity %s", where, ov ? "where none is due" : "missing");
        assert_int_equal(coproc_column_length(out), n);
        for (size_t i = 0; i < n; i++) {
            int w = valid_at(va, i) && (!with_b || valid_at(vb, i));
            if (valid_at(gv, i) != w)
                fail_msg("%s: row %zu is %s", where, i, w ? "null" : "valid");
            if (!w)
                continue;
            int ok;
            if (test_is_float(t)) {
                double x = test_get_f(t, a, i), y = with_b ? test_get_f(t, b, i) : 0;
                ok = test_get_f(t, coproc_column_host_data(out), i) == (with_b ? x + y : x * 2);
            } else {
                int64_t x = test_get_i(t, a, i), y = with_b ? test_get_i(t, b, i) : 0;
                ok = test_get_i(t, coproc_column_host_data(out), i) == (with_b ? x + y : x * 2);
            }
            if (!ok)
                fail_msg("%s: row %zu wrong", where, i);
        }
        coproc_column_free(out);
    }
    coproc_column_free(ca);
    coproc_column_free(cb);
}

/* Reduce, select and map over nullable columns past the budget: the
 * validities stream beside the rows in chunks of whole words. Null rates 0,
 * 1 %, 50 % and 100 %; sizes at the edges of a word and of a chunk (r rows,
 * a multiple of 32); b's validity absent at rate 0, so one input alone may
 * have one. */
static void test_stream_nulls(void **state)
{
    env e = open_env(state);
    static const double rates[] = {0, 0.01, 0.5, 1};
    void *a = malloc(BIG * 8), *b = malloc(BIG * 8);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64, COPROC_FLOAT32, COPROC_FLOAT64};
    for (size_t ti = 0; ti < 4; ti++) {
        coproc_type t = types[ti];
        if (t == COPROC_FLOAT64 && !e.fp64)
            continue;
        uint32_t *va = make_validity(&e, BIG, 0.5);
        fill_nullable(&e, t, a, BIG, va);
        reduce_nulls_case(&e, t, a, va, BIG, "big");
        size_t r = last_rows;
        assert_true(r > 1000 && r < BIG / 4 && r % 32 == 0); /* many chunks, whole words */
        free(va);
        const size_t sizes[] = {0, 1, 31, 32, 33, r - 1, r, r + 1, r + 33, 3 * r + 17};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (size_t ri = 0; ri < 4; ri++) {
                size_t n = sizes[si];
                char what[40];
                snprintf(what, sizeof what, "rate %g", rates[ri]);
                va = make_validity(&e, n, rates[ri]);
                uint32_t *vb = ri ? make_validity(&e, n, rates[4 - ri]) : NULL;
                fill_nullable(&e, t, a, n, va);
                fill_nullable(&e, t, b, n, vb);
                reduce_nulls_case(&e, t, a, va, n, what);
                select_nulls_case(&e, t, a, va, b, vb, n, what);
                map_nulls_case(&e, t, a, va, b, vb, n, what);
                free(va);
                free(vb);
            }
    }
    free(a);
    free(b);
    coproc_close(e.rt);
}

#define GPU_PATH(f) {#f " (gpu path)", f, NULL, NULL, &gpu_path}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_reduce),
        cmocka_unit_test(test_stream_select),
        cmocka_unit_test(test_stream_map),
        cmocka_unit_test(test_stream_group_by),
        cmocka_unit_test(test_stream_bad_input),
        cmocka_unit_test(test_stream_nulls),
        GPU_PATH(test_stream_reduce),
        GPU_PATH(test_stream_select),
        GPU_PATH(test_stream_map),
        GPU_PATH(test_stream_group_by),
        GPU_PATH(test_stream_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
