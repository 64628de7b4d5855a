/* test_bad_input.c - bad input to the main public functions (issue 18): NULL
 * pointers, zero and huge lengths, invalid enum values, mismatched columns,
 * columns of another runtime, wrong struct sizes, environment variables that
 * do not parse, cache files that are not files. Every row is one call; the
 * test fails when a call's status differs from the one the row expects (the
 * one coproc.h and coproc/query.h document), or when a failing call leaves
 * an empty message or another call's.
 *
 * It also writes the rows as the markdown table of docs/reliability.md:
 *   cd build && COPROC_CACHE_DIR=$PWD/test-cache COPROC_CALIBRATE=off \
 *     COPROC_BAD_INPUT_TABLE=../docs/reliability-table.md ./tests/test_bad_input
 * Public API only. */
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#include "coproc/query.h"

/* ---- the rows */

typedef struct row {
    char fn[48];
    char input[112];
    char expect[48];
    char got[48];
    char msg[160];
    int ok;
    const char *known; /* a listed deviation: where it is */
} row;

#define MAX_ROWS 400
static row rows[MAX_ROWS];
static int nrows;

/* Warnings logged since the last row (the runtimes below log here). */
static char warned[2048];
static int warnings;

static void catch_log(void *user, coproc_log_level level, const char *msg)
{
    (void)user;
    if (level > COPROC_LOG_WARN)
        return;
    warnings++;
    size_t n = strlen(warned);
    snprintf(warned + n, sizeof warned - n, "%s%s", n ? "; " : "", msg);
}

static void add_row(const char *fn, const char *input, const char *expect, const char *got,
                    const char *msg, int ok)
{
    assert_true(nrows < MAX_ROWS);
    row *r = &rows[nrows++];
    snprintf(r->fn, sizeof r->fn, "%s", fn);
    snprintf(r->input, sizeof r->input, "%s", input);
    snprintf(r->expect, sizeof r->expect, "%s", expect);
    snprintf(r->got, sizeof r->got, "%s", got);
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
    r->ok = ok;
    r->known = NULL;
    warned[0] = '\0';
    warnings = 0;
}

static const char *short_name(coproc_status s) { return coproc_status_name(s) + 7; }

/* A call that must return `expect`. A failing call on a runtime must leave a
 * message of its own: not empty, not the sentinel the previous row left. */
static coproc_runtime *msg_rt; /* whose message the next row reads (NULL: none) */
static void check(const char *fn, const char *input, coproc_status expect, coproc_status got)
{
    const char *msg = msg_rt && got != COPROC_OK ? coproc_errmsg(msg_rt) : "";
    int ok = got == expect;
    if (ok && msg_rt && got != COPROC_OK && (!*msg || strstr(msg, "123456")))
        ok = 0; /* the previous message left in place, or none */
    char g[48];
    snprintf(g, sizeof g, "%s%s", short_name(got), warnings ? " + logged" : "");
    add_row(fn, input, short_name(expect), g, *msg ? msg : warned, ok);
}

/* A listed deviation: the documented status is `documented`, the call gives
 * `current` today (not fixed here: `where` says where). The row passes only
 * while the call still gives `current`, so a change is noticed and the table
 * regenerated. */
__attribute__((unused)) /* none listed today */
static void check_known(const char *fn, const char *input, coproc_status documented,
                        coproc_status current, coproc_status got, const char *where)
{
    const char *msg = msg_rt && got != COPROC_OK ? coproc_errmsg(msg_rt) : "";
    char e[48];
    snprintf(e, sizeof e, "%s", short_name(current));
    add_row(fn, input, e, short_name(got), msg, got == current);
    row *r = &rows[nrows - 1];
    snprintf(r->expect, sizeof r->expect, "%s", short_name(documented));
    r->known = where;
}

/* An environment/option row: `expect` is a status plus whether a warning is due. */
static void check_warned(const char *fn, const char *input, coproc_status expect, int warn,
                         coproc_status got, const char *msg)
{
    char e[48], g[48];
    snprintf(e, sizeof e, "%s%s", short_name(expect), warn ? " + logged" : "");
    snprintf(g, sizeof g, "%s%s", short_name(got), warnings ? " + logged" : "");
    add_row(fn, input, e, g, msg && *msg ? msg : warned, strcmp(e, g) == 0);
}

/* ---- the runtimes and columns the rows use */

static coproc_runtime *rt, *rt2;
static coproc_column *h32, *h32b, *h32short, *hf32, *hu32, *h64, *hempty, *other, *d32, *hown;
static int32_t data32[64], data32b[64];
static float dataf[64];
static uint32_t datau[64];
static int64_t data64[64];

/* Make a failing call's message recognisable as stale. */
static void sentinel(void)
{
    coproc_device_info info;
    coproc_device_info_get(rt, 123456, &info); /* "device index 123456 ..." */
    msg_rt = rt;
}

#define ROW(fn, input, expect, call)                                                           \
    do {                                                                                       \
        sentinel();                                                                            \
        check(fn, input, expect, (call));                                                      \
    } while (0)

/* ROW, and the message must name `what`. */
#define ROWM(fn, input, expect, what, call)                                                    \
    do {                                                                                       \
        sentinel();                                                                            \
        check(fn, input, expect, (call));                                                      \
        if (!strstr(rows[nrows - 1].msg, what))                                                \
            rows[nrows - 1].ok = 0;                                                            \
    } while (0)

static coproc_runtime *open_logged(coproc_options *o)
{
    o->log = catch_log;
    return test_open_with(o);
}

static void setup_runtimes(void)
{
    for (int i = 0; i < 64; i++) {
        data32[i] = i - 10;
        data32b[i] = i % 7;
        dataf[i] = (float)i;
        datau[i] = (uint32_t)i;
        data64[i] = i;
    }
    coproc_options o;
    coproc_options_init(&o);
    rt = open_logged(&o);
    coproc_options_init(&o);
    rt2 = open_logged(&o);
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data32, 64, &h32));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data32b, 64, &h32b));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, data32, 10, &h32short));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_FLOAT32, dataf, 64, &hf32));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, datau, 64, &hu32));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT64, data64, 64, &h64));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, NULL, 0, &hempty));
    assert_ok(rt2, coproc_column_wrap(rt2, COPROC_INT32, data32, 64, &other));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, data32, 64, &d32));
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 64, &hown));
    memcpy(coproc_column_host_data(hown), data32, sizeof data32);
    warned[0] = '\0';
    warnings = 0;
}

static void free_runtimes(void)
{
    coproc_column *all[] = {h32, h32b, h32short, hf32, hu32, h64, hempty, other, d32, hown};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        coproc_column_free(all[i]);
    coproc_close(rt2);
    coproc_close(rt);
}

/* ---- coproc_open, options and the environment */

/* coproc_open(o) with the environment variable `var` set to `value` (NULL:
 * none); closes the runtime. Returns the status; *msg the error message or
 * the warnings. */
static coproc_status open_once(coproc_options *o, const char *var, const char *value,
                               char *msg, size_t size)
{
    if (var)
        setenv(var, value, 1);
    o->log = catch_log;
    coproc_runtime *r = NULL;
    coproc_status s = coproc_open(o, &r);
    if (var)
        unsetenv(var);
    snprintf(msg, size, "%s", r && s != COPROC_OK ? coproc_errmsg(r) : warned);
    if (s == COPROC_OK) {
        coproc_device_stats ds = {.struct_size = sizeof ds};
        coproc_device_info info;
        /* The variables below must leave the defaults in effect. */
        if (var && strcmp(var, "COPROC_BUDGET") == 0 &&
            (coproc_device_stats_get(r, 0, &ds) != COPROC_OK ||
             coproc_device_info_get(r, 0, &info) != COPROC_OK ||
             ds.budget_bytes != info.global_mem_bytes / 10 * 7))
            fail_msg("COPROC_BUDGET=%s: budget %llu is not the default", value,
                     (unsigned long long)ds.budget_bytes);
    }
    coproc_close(r);
    return s;
}

static void open_rows(const char *fifo)
{
    msg_rt = NULL;
    char msg[2100], in[160];
    coproc_options o;
    coproc_runtime *r = (coproc_runtime *)1;

    check("coproc_open", "out NULL", COPROC_NULL_POINTER, coproc_open(NULL, NULL));
    static const size_t sizes[] = {0, 3, sizeof(coproc_options) + 8};
    for (int i = 0; i < 3; i++) {
        coproc_options_init(&o);
        o.struct_size = sizes[i];
        snprintf(in, sizeof in, "options.struct_size %zu", sizes[i]);
        check("coproc_open", in, COPROC_INVALID_ARGUMENT, coproc_open(&o, &r));
        assert_null(r);
    }
    struct {
        const char *what;
        void (*set)(coproc_options *);
    } bad[] = {
        {"options.log_level 17", NULL},
        {"options.calibration 9", NULL},
        {"options.policy -1", NULL},
        {"options.queue_depth -1", NULL},
        {"options.device_budget_bytes 1000 (below 128 KiB)", NULL},
        {"options.device_budget_bytes 65536 (64 KiB)", NULL},
        {"options.watchdog_seconds NaN", NULL},
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        coproc_options_init(&o);
        switch (i) {
        case 0: o.log_level = (coproc_log_level)17; break;
        case 1: o.calibration = (coproc_calibration)9; break;
        case 2: o.policy = -1; break;
        case 3: o.queue_depth = -1; break;
        case 4: o.device_budget_bytes = 1000; break;
        case 5:
            o.device_budget_bytes = 65536;
            break;
        default:
            o.watchdog_seconds = NAN;
            break;
        }
        o.log = catch_log;
        r = (coproc_runtime *)1;
        coproc_status s = coproc_open(&o, &r);
        assert_null(r);
        /* No runtime to hold a message: it went to the log as an error. */
        check_warned("coproc_open", bad[i].what, COPROC_INVALID_ARGUMENT, 1, s, warned);
    }

    coproc_options_init(&o);
    o.devices = "fast";
    check_warned("coproc_open", "options.devices \"fast\"", COPROC_INVALID_ARGUMENT, 0,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);
    coproc_options_init(&o);
    o.devices = "99";
    check_warned("coproc_open", "options.devices \"99\" (no such device)", COPROC_NO_DEVICE, 0,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);
    coproc_options_init(&o);
    o.devices = "sim:/nonexistent/profile.json";
    check_warned("coproc_open", "sim: profile that does not exist", COPROC_CORRUPT_PROFILE, 0,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);
    char spec[700];
    snprintf(spec, sizeof spec, "sim:%s", fifo);
    coproc_options_init(&o);
    o.devices = spec;
    check_warned("coproc_open", "sim: profile that is a FIFO nobody writes",
                 COPROC_CORRUPT_PROFILE, 0, open_once(&o, NULL, NULL, msg, sizeof msg), msg);
    coproc_options_init(&o);
    o.devices = "sim:x.json:mem=-5";
    check_warned("coproc_open", "sim: option mem=-5", COPROC_INVALID_ARGUMENT, 0,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);
    coproc_options_init(&o);
    o.devices = "sim:x.json:mem=99999999999999999999G";
    check_warned("coproc_open", "sim: option mem=99999999999999999999G",
                 COPROC_INVALID_ARGUMENT, 0, open_once(&o, NULL, NULL, msg, sizeof msg), msg);

    snprintf(spec, sizeof spec, "sim:%s/pocl-ci.json:mem=64K", COPROC_PROFILES_DIR);
    coproc_options_init(&o);
    o.devices = spec;
    check_warned("coproc_open", "sim: option mem=64K (below 1 MiB)", COPROC_INVALID_ARGUMENT, 0,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);

    static const char *const budgets[] = {"-5", "18446744073709551616", "17179869184G",
                                          "512MB", "1.5G", "0", "64K"};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        coproc_options_init(&o);
        snprintf(in, sizeof in, "COPROC_BUDGET=%s", budgets[i]);
        check_warned("coproc_open", in, COPROC_OK, 1,
                     open_once(&o, "COPROC_BUDGET", budgets[i], msg, sizeof msg), msg);
    }
    coproc_options_init(&o);
    r = test_open_with(&o);
    int n = coproc_device_count(r);
    coproc_close(r);
    char past[32];
    snprintf(past, sizeof past, "fixed:%d", n);
    const char *policies[] = {past, "fixed:abc", "fixed:", "fixed:-1", "rr:1", "fastest"};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        coproc_options_init(&o);
        snprintf(in, sizeof in, "COPROC_POLICY=%s%s", policies[i],
                 i == 0 ? " (one past the last device)" : "");
        check_warned("coproc_open", in, COPROC_OK, 1,
                     open_once(&o, "COPROC_POLICY", policies[i], msg, sizeof msg), msg);
    }
    coproc_options_init(&o);
    check_warned("coproc_open", "COPROC_CALIBRATE=sometimes", COPROC_OK, 1,
                 open_once(&o, "COPROC_CALIBRATE", "sometimes", msg, sizeof msg), msg);
    static const char *const watchdogs[] = {"-3", "0", "ten", "1e3", "5s"};
    for (size_t i = 0; i < sizeof watchdogs / sizeof watchdogs[0]; i++) {
        coproc_options_init(&o);
        snprintf(in, sizeof in, "COPROC_WATCHDOG=%s", watchdogs[i]);
        check_warned("coproc_open", in, COPROC_OK, 1,
                     open_once(&o, "COPROC_WATCHDOG", watchdogs[i], msg, sizeof msg), msg);
    }
    static const char *const faults[] = {"nonsense:0:1", "launch:99:1", "alloc:0:0", "h2d:0"};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        coproc_options_init(&o);
        snprintf(in, sizeof in, "COPROC_FAULT=%s", faults[i]);
        check_warned("coproc_open", in, COPROC_OK, 1,
                     open_once(&o, "COPROC_FAULT", faults[i], msg, sizeof msg), msg);
    }
    /* Restore the suite's setting (open_once unset it). */
    setenv("COPROC_CALIBRATE", "off", 1);
    coproc_options_init(&o);
    o.policy = COPROC_POLICY_FIXED;
    o.fixed_device = 99;
    check_warned("coproc_open", "options.fixed_device 99 with the fixed policy", COPROC_OK, 1,
                 open_once(&o, NULL, NULL, msg, sizeof msg), msg);
}

/* ---- columns */

static void column_rows(void)
{
    coproc_column *c = NULL;
    int32_t buf[64] = {0};
    msg_rt = NULL;
    check("coproc_column_upload", "rt NULL", COPROC_NULL_POINTER,
          coproc_column_upload(NULL, 0, COPROC_INT32, buf, 4, &c));
    ROW("coproc_column_upload", "out NULL", COPROC_NULL_POINTER,
        coproc_column_upload(rt, 0, COPROC_INT32, buf, 4, NULL));
    ROW("coproc_column_upload", "device 99", COPROC_INVALID_ARGUMENT,
        coproc_column_upload(rt, 99, COPROC_INT32, buf, 4, &c));
    ROW("coproc_column_upload", "device -1", COPROC_INVALID_ARGUMENT,
        coproc_column_upload(rt, -1, COPROC_INT32, buf, 4, &c));
    ROW("coproc_column_upload", "type 17", COPROC_UNSUPPORTED_TYPE,
        coproc_column_upload(rt, 0, (coproc_type)17, buf, 4, &c));
    ROW("coproc_column_upload", "host NULL, 4 rows", COPROC_NULL_POINTER,
        coproc_column_upload(rt, 0, COPROC_INT32, NULL, 4, &c));
    ROW("coproc_column_upload", "SIZE_MAX rows", COPROC_INVALID_ARGUMENT,
        coproc_column_upload(rt, 0, COPROC_INT32, buf, SIZE_MAX, &c));
    ROW("coproc_column_upload", "2^62 rows (bytes overflow)", COPROC_INVALID_ARGUMENT,
        coproc_column_upload(rt, 0, COPROC_INT32, buf, (size_t)1 << 62, &c));
    check("coproc_column_upload", "0 rows, host NULL", COPROC_OK,
          coproc_column_upload(rt, 0, COPROC_INT32, NULL, 0, &c));
    coproc_column_free(c);

    ROW("coproc_column_alloc", "type -1", COPROC_UNSUPPORTED_TYPE,
        coproc_column_alloc(rt, 0, (coproc_type)-1, 4, &c));
    ROW("coproc_column_alloc", "device 99", COPROC_INVALID_ARGUMENT,
        coproc_column_alloc(rt, 99, COPROC_INT32, 4, &c));
    ROW("coproc_column_alloc", "SIZE_MAX rows", COPROC_INVALID_ARGUMENT,
        coproc_column_alloc(rt, 0, COPROC_INT64, SIZE_MAX, &c));
    ROW("coproc_column_alloc", "2^60 rows (bytes overflow)", COPROC_INVALID_ARGUMENT,
        coproc_column_alloc(rt, 0, COPROC_INT64, (size_t)1 << 60, &c));
    ROW("coproc_column_alloc", "2^40 rows (8 TiB, past the device)", COPROC_DEVICE_OUT_OF_MEMORY,
        coproc_column_alloc(rt, 0, COPROC_INT64, (size_t)1 << 40, &c));

    ROW("coproc_column_wrap", "out NULL", COPROC_NULL_POINTER,
        coproc_column_wrap(rt, COPROC_INT32, buf, 4, NULL));
    ROW("coproc_column_wrap", "host NULL, 4 rows", COPROC_NULL_POINTER,
        coproc_column_wrap(rt, COPROC_INT32, NULL, 4, &c));
    ROW("coproc_column_wrap", "type 6 (COPROC__TYPE_COUNT)", COPROC_UNSUPPORTED_TYPE,
        coproc_column_wrap(rt, COPROC__TYPE_COUNT, buf, 4, &c));
    ROW("coproc_column_wrap", "SIZE_MAX rows", COPROC_INVALID_ARGUMENT,
        coproc_column_wrap(rt, COPROC_INT32, buf, SIZE_MAX, &c));

    ROW("coproc_column_host_alloc", "out NULL", COPROC_NULL_POINTER,
        coproc_column_host_alloc(rt, COPROC_INT32, 4, NULL));
    ROW("coproc_column_host_alloc", "type 17", COPROC_UNSUPPORTED_TYPE,
        coproc_column_host_alloc(rt, (coproc_type)17, 4, &c));
    ROW("coproc_column_host_alloc", "SIZE_MAX rows", COPROC_INVALID_ARGUMENT,
        coproc_column_host_alloc(rt, COPROC_INT32, SIZE_MAX, &c));

    msg_rt = NULL;
    check("coproc_column_download", "column NULL", COPROC_NULL_POINTER,
          coproc_column_download(NULL, buf, 64));
    ROW("coproc_column_download", "host NULL", COPROC_NULL_POINTER,
        coproc_column_download(d32, NULL, 64));
    ROW("coproc_column_download", "capacity 63 < 64 rows", COPROC_LENGTH_MISMATCH,
        coproc_column_download(d32, buf, 63));
    ROW("coproc_column_download", "host column, capacity 0", COPROC_LENGTH_MISMATCH,
        coproc_column_download(h32, buf, 0));
    msg_rt = NULL;
    coproc_column_free(NULL);
    check("coproc_column_free", "NULL (a no-op)", COPROC_OK, COPROC_OK);
    check("coproc_column_length/type/device", "NULL: 0, invalid type, -1", COPROC_OK,
          coproc_column_length(NULL) == 0 && coproc_column_type(NULL) == COPROC__TYPE_COUNT &&
                  coproc_column_device(NULL) == -1
              ? COPROC_OK
              : COPROC_INTERNAL);
}

/* ---- operators */

static void operator_rows(void)
{
    coproc_scalar sc;
    coproc_column *out = NULL;
    uint64_t count;
    msg_rt = NULL;
    check("coproc_reduce", "rt NULL", COPROC_NULL_POINTER,
          coproc_reduce(NULL, COPROC_REDUCE_SUM, h32, &sc));
    ROW("coproc_reduce", "column NULL", COPROC_NULL_POINTER,
        coproc_reduce(rt, COPROC_REDUCE_SUM, NULL, &sc));
    ROW("coproc_reduce", "out NULL", COPROC_NULL_POINTER,
        coproc_reduce(rt, COPROC_REDUCE_SUM, h32, NULL));
    ROW("coproc_reduce", "op 9", COPROC_INVALID_ARGUMENT,
        coproc_reduce(rt, (coproc_reduce_op)9, h32, &sc));
    ROW("coproc_reduce", "op -1 (device column)", COPROC_INVALID_ARGUMENT,
        coproc_reduce(rt, (coproc_reduce_op)-1, d32, &sc));
    ROW("coproc_reduce", "column of another runtime", COPROC_INVALID_ARGUMENT,
        coproc_reduce(rt, COPROC_REDUCE_SUM, other, &sc));
    ROW("coproc_reduce", "0 rows", COPROC_OK, coproc_reduce(rt, COPROC_REDUCE_MIN, hempty, &sc));

    coproc_filter f = {.first = {.col = h32, .cmp = COPROC_CMP_LT, .a.i64 = 5}};
    ROW("coproc_select", "filter NULL", COPROC_NULL_POINTER, coproc_select(rt, NULL, &out, &count));
    f.first.col = NULL;
    ROW("coproc_select", "predicate column NULL", COPROC_NULL_POINTER,
        coproc_select(rt, &f, &out, &count));
    f.first.col = h32;
    f.first.cmp = (coproc_cmp)9;
    ROW("coproc_select", "comparison 9", COPROC_INVALID_ARGUMENT,
        coproc_select(rt, &f, &out, &count));
    f.first.cmp = COPROC_CMP_LT;
    f.logic = (coproc_logic)5;
    ROW("coproc_select", "logic 5", COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    f.logic = COPROC_LOGIC_AND;
    ROW("coproc_select", "AND with the second column NULL", COPROC_NULL_POINTER,
        coproc_select(rt, &f, &out, &count));
    f.second.col = h32short;
    ROW("coproc_select", "AND over 64 and 10 rows", COPROC_LENGTH_MISMATCH,
        coproc_select(rt, &f, &out, &count));
    f.second.col = d32;
    ROW("coproc_select", "AND over a host and a device column", COPROC_WRONG_DEVICE,
        coproc_select(rt, &f, &out, &count));
    f.second.col = other;
    ROW("coproc_select", "second column of another runtime", COPROC_INVALID_ARGUMENT,
        coproc_select(rt, &f, &out, &count));
    f.logic = COPROC_LOGIC_NONE;
    f.first.a.i64 = (int64_t)1 << 40;
    ROW("coproc_select", "int32 column, constant 2^40", COPROC_INVALID_ARGUMENT,
        coproc_select(rt, &f, &out, &count));
    f.first.col = hu32;
    f.first.a.u64 = (uint64_t)1 << 33;
    ROW("coproc_select", "uint32 column, constant 2^33", COPROC_INVALID_ARGUMENT,
        coproc_select(rt, &f, &out, &count));
    f.first.col = h32;
    f.first.cmp = COPROC_CMP_RANGE;
    f.first.a.i64 = 0;
    f.first.b.i64 = -((int64_t)1 << 40);
    ROW("coproc_select", "int32 range, upper bound -2^40", COPROC_INVALID_ARGUMENT,
        coproc_select(rt, &f, &out, &count));
    f.first.b.i64 = 5;
    ROW("coproc_select", "positions and count both NULL", COPROC_OK,
        coproc_select(rt, &f, NULL, NULL));

    coproc_group_result g;
    ROW("coproc_group_by", "keys NULL", COPROC_NULL_POINTER, coproc_group_by(rt, NULL, h32, 0, &g));
    ROW("coproc_group_by", "out NULL", COPROC_NULL_POINTER, coproc_group_by(rt, h32, h32, 0, NULL));
    ROW("coproc_group_by", "float32 keys", COPROC_UNSUPPORTED_TYPE,
        coproc_group_by(rt, hf32, h32, 0, &g));
    ROW("coproc_group_by", "values of 10 rows for 64 keys", COPROC_LENGTH_MISMATCH,
        coproc_group_by(rt, h32, h32short, 0, &g));
    ROW("coproc_group_by", "keys of another runtime", COPROC_INVALID_ARGUMENT,
        coproc_group_by(rt, other, NULL, 0, &g));
    ROW("coproc_group_by", "host keys, device values", COPROC_WRONG_DEVICE,
        coproc_group_by(rt, h32, d32, 0, &g));
    msg_rt = NULL; /* no runtime holds a message */
    check("coproc_group_by_aggs", "rt NULL", COPROC_NULL_POINTER,
          coproc_group_by_aggs(NULL, h32, h32, COPROC_GROUP_SUM, 0, &g));
    ROW("coproc_group_by_aggs", "keys NULL", COPROC_NULL_POINTER,
        coproc_group_by_aggs(rt, NULL, h32, COPROC_GROUP_SUM, 0, &g));
    ROW("coproc_group_by_aggs", "out NULL", COPROC_NULL_POINTER,
        coproc_group_by_aggs(rt, h32, h32, COPROC_GROUP_SUM, 0, NULL));
    ROWM("coproc_group_by_aggs", "aggs 0", COPROC_INVALID_ARGUMENT, "aggs",
         coproc_group_by_aggs(rt, h32, h32, 0, 0, &g));
    ROWM("coproc_group_by_aggs", "aggs with an unknown bit", COPROC_INVALID_ARGUMENT, "aggs",
         coproc_group_by_aggs(rt, h32, h32, COPROC_GROUP_SUM | 0x100, 0, &g));
    ROW("coproc_group_by_aggs", "float32 keys", COPROC_UNSUPPORTED_TYPE,
        coproc_group_by_aggs(rt, hf32, h32, COPROC_GROUP_SUM, 0, &g));

    coproc_join_result j;
    ROW("coproc_hash_join", "left NULL", COPROC_NULL_POINTER, coproc_hash_join(rt, NULL, h32, &j));
    ROW("coproc_hash_join", "out NULL", COPROC_NULL_POINTER, coproc_hash_join(rt, h32, h32b, NULL));
    ROW("coproc_hash_join", "int32 and int64 keys", COPROC_INVALID_ARGUMENT,
        coproc_hash_join(rt, h32, h64, &j));
    ROW("coproc_hash_join", "float32 keys", COPROC_UNSUPPORTED_TYPE,
        coproc_hash_join(rt, hf32, hf32, &j));
    ROW("coproc_hash_join", "right of another runtime", COPROC_INVALID_ARGUMENT,
        coproc_hash_join(rt, h32, other, &j));
    ROW("coproc_hash_join", "host left, device right", COPROC_WRONG_DEVICE,
        coproc_hash_join(rt, h32, d32, &j));
    ROW("coproc_hash_join", "0-row left", COPROC_OK, coproc_hash_join(rt, hempty, h32, &j));
    coproc_join_result_free(&j);
    uint64_t pairs;
    ROW("coproc_hash_join_count", "left NULL", COPROC_NULL_POINTER,
        coproc_hash_join_count(rt, NULL, h32, &pairs));
    ROW("coproc_hash_join_count", "count NULL", COPROC_NULL_POINTER,
        coproc_hash_join_count(rt, h32, h32b, NULL));
    ROW("coproc_hash_join_count", "int32 and int64 keys", COPROC_INVALID_ARGUMENT,
        coproc_hash_join_count(rt, h32, h64, &pairs));
    ROW("coproc_hash_join_count", "host left, device right", COPROC_WRONG_DEVICE,
        coproc_hash_join_count(rt, h32, d32, &pairs));
    ROW("coproc_hash_join_count", "0-row left", COPROC_OK,
        coproc_hash_join_count(rt, hempty, h32, &pairs));

    ROW("coproc_sort", "keys NULL", COPROC_NULL_POINTER, coproc_sort(rt, NULL, NULL));
    ROW("coproc_sort", "wrapped (read-only) keys", COPROC_INVALID_ARGUMENT,
        coproc_sort(rt, h32, NULL));
    coproc_column *own10;
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 10, &own10));
    ROW("coproc_sort", "values of 10 rows for 64 keys", COPROC_LENGTH_MISMATCH,
        coproc_sort(rt, hown, own10));
    ROW("coproc_sort", "wrapped (read-only) values", COPROC_INVALID_ARGUMENT,
        coproc_sort(rt, hown, h32b));
    coproc_column_free(own10);
    ROWM("coproc_sort", "keys of another runtime", COPROC_INVALID_ARGUMENT, "another runtime",
         coproc_sort(rt, other, NULL));

    ROW("coproc_map", "arithmetic 9", COPROC_INVALID_ARGUMENT,
        coproc_map(rt, (coproc_arith)9, h32, h32b, &out));
    ROW("coproc_map", "int32 and float32", COPROC_INVALID_ARGUMENT,
        coproc_map(rt, COPROC_ARITH_ADD, h32, hf32, &out));
    ROW("coproc_map", "64 and 10 rows", COPROC_LENGTH_MISMATCH,
        coproc_map(rt, COPROC_ARITH_ADD, h32, h32short, &out));
    coproc_value big = {.i64 = (int64_t)1 << 40};
    ROW("coproc_map_const", "int32 column, constant 2^40", COPROC_INVALID_ARGUMENT,
        coproc_map_const(rt, COPROC_ARITH_MUL, h32, big, &out));
    ROW("coproc_cast", "to type 17", COPROC_UNSUPPORTED_TYPE,
        coproc_cast(rt, h32, (coproc_type)17, &out));
    ROW("coproc_gather", "positions int32 (not uint32)", COPROC_UNSUPPORTED_TYPE,
        coproc_gather(rt, h32, h32b, &out));
    uint32_t far[4] = {0, 1, 64, 2};
    coproc_column *pos;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, far, 4, &pos));
    ROW("coproc_gather", "position 64 of 64 rows", COPROC_OUT_OF_RANGE,
        coproc_gather(rt, h32, pos, &out));
    coproc_column_free(pos);
}

/* ---- submit and wait */

static coproc_status submit_wait(coproc_runtime *r, const coproc_op *op)
{
    coproc_task *t = NULL;
    coproc_status s = coproc_submit(r, op, &t);
    if (s != COPROC_OK)
        return s;
    /* Argument errors belong to submit: one reported by wait is a wrong row. */
    coproc_result res;
    coproc_status w = coproc_wait(t, &res);
    if (w == COPROC_OK)
        coproc_result_free(&res);
    return w == COPROC_OK ? COPROC_OK : COPROC_INTERNAL;
}

static void submit_rows(void)
{
    coproc_op op;
    coproc_task *t = NULL;
    msg_rt = NULL;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = h32;
    check("coproc_submit", "rt NULL", COPROC_NULL_POINTER, coproc_submit(NULL, &op, &t));
    ROW("coproc_submit", "op NULL", COPROC_NULL_POINTER, coproc_submit(rt, NULL, &t));
    ROW("coproc_submit", "out NULL", COPROC_NULL_POINTER, coproc_submit(rt, &op, NULL));
    op.struct_size = 0;
    ROW("coproc_submit", "op.struct_size 0 (no coproc_op_init)", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    coproc_op_init(&op, (coproc_op_kind)99);
    op.a = h32;
    ROWM("coproc_submit", "kind 99", COPROC_INVALID_ARGUMENT, "kind 99", submit_wait(rt, &op));
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = h32;
    op.variant = (coproc_op_variant)99;
    ROW("coproc_submit", "variant 99", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_CAST; /* a variant of another kind */
    ROW("coproc_submit", "REDUCE with the CAST variant", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_DEFAULT;
    op.device = 99;
    ROW("coproc_submit", "device 99", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.device = -2;
    ROW("coproc_submit", "device -2", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.device = -1;
    op.reduce = (coproc_reduce_op)9;
    ROW("coproc_submit", "REDUCE, reduce op 9", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.reduce = COPROC_REDUCE_SUM;
    op.a = NULL;
    ROW("coproc_submit", "REDUCE, a NULL", COPROC_NULL_POINTER, submit_wait(rt, &op));
    op.a = other;
    ROW("coproc_submit", "REDUCE, a of another runtime", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_REDUCE_WHERE;
    op.a = h32;
    op.b = h32;
    ROW("coproc_submit", "REDUCE_WHERE, int32 bitmap", COPROC_UNSUPPORTED_TYPE,
        submit_wait(rt, &op));
    op.b = hu32; /* 64 words for 64 rows: should be 2 */
    ROW("coproc_submit", "REDUCE_WHERE, bitmap of the wrong length", COPROC_LENGTH_MISMATCH,
        submit_wait(rt, &op));

    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first.col = h32;
    op.filter.first.cmp = (coproc_cmp)9;
    ROW("coproc_submit", "SELECT, comparison 9", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.filter.first.cmp = COPROC_CMP_EQ;
    op.filter.first.a.i64 = (int64_t)1 << 40;
    ROW("coproc_submit", "SELECT, int32 constant 2^40", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_SELECT_BITMAP;
    ROW("coproc_submit", "SELECT_BITMAP, int32 constant 2^40", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_DEFAULT;
    op.filter.first.a.i64 = 1;
    op.filter.logic = (coproc_logic)5;
    ROW("coproc_submit", "SELECT, logic 5", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));

    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = h32;
    op.arith = (coproc_arith)9;
    ROW("coproc_submit", "MAP, arithmetic 9", COPROC_INVALID_ARGUMENT, submit_wait(rt, &op));
    op.arith = COPROC_ARITH_ADD;
    op.c.i64 = -((int64_t)1 << 40);
    ROW("coproc_submit", "MAP, int32 constant -2^40", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.a = hu32;
    op.c.u64 = (uint64_t)1 << 32;
    ROW("coproc_submit", "MAP, uint32 constant 2^32", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    op.variant = COPROC_VARIANT_CAST;
    op.to = (coproc_type)17;
    ROW("coproc_submit", "CAST, to type 17", COPROC_UNSUPPORTED_TYPE, submit_wait(rt, &op));

    coproc_op_init(&op, COPROC_OP_GROUP_BY);
    op.a = hf32;
    ROW("coproc_submit", "GROUP_BY, float32 keys", COPROC_UNSUPPORTED_TYPE, submit_wait(rt, &op));
    coproc_op_init(&op, COPROC_OP_HASH_JOIN);
    op.a = h32;
    op.b = h64;
    ROW("coproc_submit", "HASH_JOIN, int32 and int64 keys", COPROC_INVALID_ARGUMENT,
        submit_wait(rt, &op));
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.variant = COPROC_VARIANT_SCATTER;
    op.a = h32;
    op.b = hu32;
    op.dst = NULL;
    ROW("coproc_submit", "SCATTER, dst NULL", COPROC_NULL_POINTER, submit_wait(rt, &op));

    msg_rt = NULL;
    check("coproc_wait", "task NULL", COPROC_NULL_POINTER, coproc_wait(NULL, NULL));
    check("coproc_wait_timeout", "task NULL", COPROC_NULL_POINTER,
          coproc_wait_timeout(NULL, 1, NULL));
    coproc_drain(NULL);
    check("coproc_drain", "NULL (a no-op)", COPROC_OK, COPROC_OK);
    check("coproc_task_done", "task NULL (0)", COPROC_OK,
          coproc_task_done(NULL) == 0 ? COPROC_OK : COPROC_INTERNAL);
    coproc_result_free(NULL);
    check("coproc_result_free", "NULL (a no-op)", COPROC_OK, COPROC_OK);
}

/* ---- statistics */

static void stats_rows(void)
{
    coproc_stats st;
    coproc_device_stats ds;
    coproc_model_stats ms;
    coproc_device_info info;
    msg_rt = NULL;
    st.struct_size = sizeof st;
    check("coproc_stats_get", "rt NULL", COPROC_NULL_POINTER, coproc_stats_get(NULL, &st));
    ROW("coproc_stats_get", "out NULL", COPROC_NULL_POINTER, coproc_stats_get(rt, NULL));
    st.struct_size = 0;
    ROW("coproc_stats_get", "struct_size 0", COPROC_INVALID_ARGUMENT, coproc_stats_get(rt, &st));
    st.struct_size = 1;
    ROW("coproc_stats_get", "struct_size 1", COPROC_INVALID_ARGUMENT, coproc_stats_get(rt, &st));
    st.struct_size = sizeof st + 1;
    ROW("coproc_stats_get", "struct_size sizeof + 1", COPROC_INVALID_ARGUMENT,
        coproc_stats_get(rt, &st));
    st.struct_size = sizeof(size_t) + sizeof(uint64_t); /* an older, smaller struct */
    ROW("coproc_stats_get", "struct_size of an older version", COPROC_OK,
        coproc_stats_get(rt, &st));

    ds.struct_size = sizeof ds;
    ROW("coproc_device_stats_get", "device 99", COPROC_INVALID_ARGUMENT,
        coproc_device_stats_get(rt, 99, &ds));
    ROW("coproc_device_stats_get", "device -1", COPROC_INVALID_ARGUMENT,
        coproc_device_stats_get(rt, -1, &ds));
    ROW("coproc_device_stats_get", "out NULL", COPROC_NULL_POINTER,
        coproc_device_stats_get(rt, 0, NULL));
    ds.struct_size = 0;
    ROW("coproc_device_stats_get", "struct_size 0", COPROC_INVALID_ARGUMENT,
        coproc_device_stats_get(rt, 0, &ds));
    ms.struct_size = sizeof ms;
    ROW("coproc_model_stats_get", "kind 99", COPROC_INVALID_ARGUMENT,
        coproc_model_stats_get(rt, 0, (coproc_op_kind)99, &ms));
    ROW("coproc_model_stats_get", "out NULL", COPROC_NULL_POINTER,
        coproc_model_stats_get(rt, 0, COPROC_OP_SORT, NULL));
    ms.struct_size = sizeof ms * 2;
    ROW("coproc_model_stats_get", "struct_size 2 x sizeof", COPROC_INVALID_ARGUMENT,
        coproc_model_stats_get(rt, 0, COPROC_OP_SORT, &ms));
    ROW("coproc_device_info_get", "device -1", COPROC_INVALID_ARGUMENT,
        coproc_device_info_get(rt, -1, &info));
    ROW("coproc_device_info_get", "out NULL", COPROC_NULL_POINTER,
        coproc_device_info_get(rt, 0, NULL));
    msg_rt = NULL;
    check("coproc_device_info_get", "rt NULL", COPROC_NULL_POINTER,
          coproc_device_info_get(NULL, 0, &info));
}

/* ---- tables, plans and queries (coproc/query.h) */

/* A builder's row: the plan's recorded status after the call. */
static void plan_row(const char *fn, const char *input, coproc_status expect, coproc_plan *p,
                     const void *built)
{
    coproc_status got = coproc_plan_status(p);
    if (got == COPROC_OK && !built)
        got = COPROC_INTERNAL; /* NULL without an error recorded */
    int ok = got == expect && (got == COPROC_OK) == (built != NULL);
    add_row(fn, input, short_name(expect), short_name(got), coproc_plan_errmsg(p), ok);
}

static void query_rows(void)
{
    coproc_table *t = NULL, *t2 = NULL;
    msg_rt = NULL;
    check("coproc_table_create", "rt NULL", COPROC_NULL_POINTER, coproc_table_create(NULL, &t));
    ROW("coproc_table_create", "out NULL", COPROC_NULL_POINTER, coproc_table_create(rt, NULL));
    assert_ok(rt, coproc_table_create(rt, &t));
    assert_ok(rt, coproc_table_add(t, "k", h32));
    assert_ok(rt, coproc_table_add(t, "v", h32b));
    assert_ok(rt, coproc_table_add(t, "f", hf32));
    msg_rt = NULL; /* no table: no runtime to hold a message */
    check("coproc_table_add", "table NULL", COPROC_NULL_POINTER, coproc_table_add(NULL, "x", h32));
    ROW("coproc_table_add", "name NULL", COPROC_INVALID_ARGUMENT, coproc_table_add(t, NULL, h32));
    ROW("coproc_table_add", "name \"\"", COPROC_INVALID_ARGUMENT, coproc_table_add(t, "", h32));
    ROW("coproc_table_add", "duplicate name", COPROC_INVALID_ARGUMENT,
        coproc_table_add(t, "k", h32b));
    sentinel();
    ROW("coproc_table_add", "column NULL", COPROC_NULL_POINTER, coproc_table_add(t, "x", NULL));
    ROW("coproc_table_add", "column of another runtime", COPROC_INVALID_ARGUMENT,
        coproc_table_add(t, "x", other));
    ROW("coproc_table_add", "10 rows beside 64", COPROC_INVALID_ARGUMENT,
        coproc_table_add(t, "x", h32short));
    msg_rt = NULL;
    check("coproc_table_column_name", "index 99 (NULL)", COPROC_OK,
          coproc_table_column_name(t, 99) == NULL && coproc_table_column_at(t, -1) == NULL &&
                  coproc_table_column(t, "nope") == NULL
              ? COPROC_OK
              : COPROC_INTERNAL);
    assert_ok(rt2, coproc_table_create(rt2, &t2));
    assert_ok(rt2, coproc_table_add(t2, "o", other));

    coproc_plan *p = NULL;
    check("coproc_plan_create", "rt NULL", COPROC_NULL_POINTER, coproc_plan_create(NULL, &p));
    ROW("coproc_plan_create", "out NULL", COPROC_NULL_POINTER, coproc_plan_create(rt, NULL));

#define FRESH()                                                                                \
    do {                                                                                       \
        coproc_plan_free(p);                                                                   \
        assert_ok(rt, coproc_plan_create(rt, &p));                                             \
    } while (0)
    p = NULL;
    coproc_plan *other = NULL; /* whose nodes and expressions p's builders refuse */
    assert_ok(rt, coproc_plan_create(rt, &other));
    FRESH();
    plan_row("coproc_plan_scan", "table NULL", COPROC_NULL_POINTER, p,
             coproc_plan_scan(p, NULL, "t"));
    FRESH();
    plan_row("coproc_plan_scan", "table of another runtime", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_scan(p, t2, "t2"));
    FRESH();
    coproc_node *s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_expr_column", "unknown column \"nope\" in a filter", COPROC_INVALID_ARGUMENT,
             p, coproc_plan_filter(p, s, coproc_expr_compare(p, COPROC_CMP_LT,
                                                             coproc_expr_column(p, "nope"),
                                                             coproc_expr_int(p, 1))));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_filter", "predicate NULL", COPROC_NULL_POINTER, p,
             coproc_plan_filter(p, s, NULL));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_filter", "an integer, not a boolean, as predicate",
             COPROC_INVALID_ARGUMENT, p, coproc_plan_filter(p, s, coproc_expr_column(p, "k")));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_filter", "predicate of another plan", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_filter(p, s, coproc_expr_compare(other, COPROC_CMP_LT,
                                                          coproc_expr_column(other, "k"),
                                                          coproc_expr_int(other, 1))));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_expr_arith", "operand of another plan", COPROC_INVALID_ARGUMENT, p,
             coproc_expr_arith(p, COPROC_ARITH_ADD, coproc_expr_column(p, "k"),
                               coproc_expr_int(other, 1)));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_expr_compare", "comparison 9", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_filter(p, s, coproc_expr_compare(p, (coproc_cmp)9,
                                                          coproc_expr_column(p, "k"),
                                                          coproc_expr_int(p, 1))));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_expr_arith", "arithmetic 9", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_project(p, s, 1, (const char *const[]){"x"},
                                 (coproc_expr *const[]){coproc_expr_arith(
                                     p, (coproc_arith)9, coproc_expr_column(p, "k"),
                                     coproc_expr_int(p, 1))}));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_expr_in", "n -1", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_filter(p, s, coproc_expr_in(p, coproc_expr_column(p, "k"), -1, NULL)));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_project", "n -1", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_project(p, s, -1, NULL, NULL));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_project", "names NULL", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_project(p, s, 1, NULL, (coproc_expr *const[]){coproc_expr_int(p, 1)}));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "kind 7", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_join(p, (coproc_join_kind)7, s, "k", coproc_plan_scan(p, t, "u"), "k"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "unknown probe key", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_join(p, COPROC_JOIN_SEMI, s, "nope", coproc_plan_scan(p, t, "u"), "k"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "float32 keys", COPROC_UNSUPPORTED_TYPE, p,
             coproc_plan_join(p, COPROC_JOIN_SEMI, s, "f", coproc_plan_scan(p, t, "u"), "f"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "inner join, same column names both sides",
             COPROC_INVALID_ARGUMENT, p,
             coproc_plan_join(p, COPROC_JOIN_INNER, s, "k", coproc_plan_scan(p, t, "u"), "k"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "build side NULL", COPROC_NULL_POINTER, p,
             coproc_plan_join(p, COPROC_JOIN_SEMI, s, "k", NULL, "k"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_join", "build side of another plan", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_join(p, COPROC_JOIN_SEMI, s, "k", coproc_plan_scan(other, t, "u"), "k"));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_group_by", "nkeys -1", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_group_by(p, s, -1, NULL, 0, NULL));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    coproc_aggregate agg = {.fn = (coproc_agg_fn)99, .arg = coproc_expr_column(p, "v"),
                            .name = "x"};
    plan_row("coproc_plan_group_by", "aggregate 99", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_group_by(p, s, 1, (const char *const[]){"k"}, 1, &agg));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    agg = (coproc_aggregate){.fn = COPROC_AGG_SUM, .arg = NULL, .name = "x"};
    plan_row("coproc_plan_group_by", "SUM without an argument", COPROC_NULL_POINTER, p,
             coproc_plan_group_by(p, s, 1, (const char *const[]){"k"}, 1, &agg));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    agg = (coproc_aggregate){.fn = COPROC_AGG_COUNT, .arg = NULL, .name = "x"};
    plan_row("coproc_plan_group_by", "float32 key", COPROC_UNSUPPORTED_TYPE, p,
             coproc_plan_group_by(p, s, 1, (const char *const[]){"f"}, 1, &agg));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    coproc_order_key ok = {.column = "nope"};
    plan_row("coproc_plan_order_by", "unknown column", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_order_by(p, s, 1, &ok, 0));
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    plan_row("coproc_plan_order_by", "nkeys 0", COPROC_INVALID_ARGUMENT, p,
             coproc_plan_order_by(p, s, 0, NULL, 0));

    /* Running. */
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    coproc_query_result qr;
    coproc_query_options qo;
    msg_rt = NULL; /* no plan: no runtime to hold a message */
    check("coproc_query_run", "plan NULL", COPROC_NULL_POINTER,
          coproc_query_run(NULL, s, NULL, &qr));
    sentinel();
    check("coproc_query_run", "root NULL", COPROC_NULL_POINTER, coproc_query_run(p, NULL, NULL, &qr));
    sentinel();
    check("coproc_query_run", "out NULL", COPROC_NULL_POINTER, coproc_query_run(p, s, NULL, NULL));
    coproc_query_options_init(&qo);
    qo.struct_size = 0;
    sentinel();
    check("coproc_query_run", "options.struct_size 0", COPROC_INVALID_ARGUMENT,
          coproc_query_run(p, s, &qo, &qr));
    coproc_query_options_init(&qo);
    qo.mode = (coproc_query_mode)9;
    sentinel();
    check("coproc_query_run", "mode 9", COPROC_INVALID_ARGUMENT, coproc_query_run(p, s, &qo, &qr));
    coproc_query_options_init(&qo);
    qo.device = 99;
    sentinel();
    check("coproc_query_run", "device 99", COPROC_INVALID_ARGUMENT,
          coproc_query_run(p, s, &qo, &qr));
    coproc_plan *q = NULL;
    assert_ok(rt, coproc_plan_create(rt, &q));
    coproc_node *foreign = coproc_plan_scan(q, t, "t");
    sentinel();
    check("coproc_query_run", "root of another plan", COPROC_INVALID_ARGUMENT,
          coproc_query_run(p, foreign, NULL, &qr));
    coproc_query_task *qt = NULL;
    sentinel();
    check("coproc_query_submit", "root of another plan", COPROC_INVALID_ARGUMENT,
          coproc_query_submit(p, foreign, NULL, &qt));
    coproc_plan_free(q);
    FRESH();
    s = coproc_plan_scan(p, t, "t");
    coproc_node *bad = coproc_plan_filter(p, s, NULL);
    sentinel();
    check("coproc_query_run", "a plan whose builder failed (root NULL)", COPROC_NULL_POINTER,
          coproc_query_run(p, bad, NULL, &qr));
    sentinel();
    check("coproc_query_submit", "root NULL", COPROC_NULL_POINTER,
          coproc_query_submit(p, NULL, NULL, &qt));
    msg_rt = NULL;
    check("coproc_query_wait", "task NULL", COPROC_NULL_POINTER, coproc_query_wait(NULL, &qr));
    coproc_plan_free(p);
    coproc_plan_free(other);
    coproc_table_free(t2);
    coproc_table_free(t);
#undef FRESH
}

/* ---- the table */

static void cell(FILE *f, const char *s)
{
    fputs("| ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
    fputc(' ', f);
}

static void print_table(FILE *f)
{
    fprintf(f, "| function | bad input | status | as documented | message (or warning) |\n");
    fprintf(f, "| --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        cell(f, r->fn);
        cell(f, r->input);
        cell(f, r->got);
        char e[160];
        if (r->known)
            snprintf(e, sizeof e, "NO: %s documented (listed, %s)", r->expect, r->known);
        else
            snprintf(e, sizeof e, r->ok ? "yes" : "NO: %s expected", r->expect);
        cell(f, e);
        char m[164];
        snprintf(m, sizeof m, "%s%s", r->msg, strlen(r->msg) >= sizeof r->msg - 1 ? "..." : "");
        cell(f, m);
        fputs("|\n", f);
    }
}

/* Write the table to path: between the lines BEGIN and END when the file has
 * them (docs/reliability.md), else as the whole file. */
#define TABLE_BEGIN "<!-- test_bad_input: begin -->"
#define TABLE_END "<!-- test_bad_input: end -->"
static void write_table(const char *path)
{
    char *old = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        old = calloc(len + 1, 1);
        assert_non_null(old);
        assert_int_equal(fread(old, 1, len, f), len);
        fclose(f);
    }
    char *b = old ? strstr(old, TABLE_BEGIN) : NULL;
    char *e = b ? strstr(b, TABLE_END) : NULL;
    f = fopen(path, "wb");
    assert_non_null(f);
    if (e) {
        fwrite(old, 1, (size_t)(b - old) + strlen(TABLE_BEGIN), f);
        fputc('\n', f);
    }
    print_table(f);
    if (e)
        fputs(e, f);
    fclose(f);
    free(old);
}

/* Messages name the temporary directory and the source tree: write them as
 * `as` (3 characters), so that the table is the same on every machine. */
static void hide_dir(const char *dir, const char *as)
{
    size_t n = strlen(dir);
    for (int i = 0; i < nrows; i++) {
        char *m = rows[i].msg, *at;
        while ((at = strstr(m, dir))) {
            memcpy(at, as, 3);
            memmove(at + 3, at + n, strlen(at + n) + 1);
        }
    }
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char *dir = test_temp_dir("bad-input");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/profile.json", dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);

    setup_runtimes();
    open_rows(fifo);
    column_rows();
    operator_rows();
    submit_rows();
    stats_rows();
    query_rows();
    free_runtimes();
    unlink(fifo);
    rmdir(dir);
    hide_dir(dir, "TMP");
    hide_dir(COPROC_PROFILES_DIR, "...");
    free(dir);

    const char *path = getenv("COPROC_BAD_INPUT_TABLE");
    if (path && *path)
        write_table(path);
    int wrong = 0;
    for (int i = 0; i < nrows; i++)
        if (!rows[i].ok) {
            wrong++;
            print_message("WRONG: %s(%s): %s, expected %s; message \"%s\"\n", rows[i].fn,
                          rows[i].input, rows[i].got, rows[i].expect, rows[i].msg);
        }
    print_message("%d calls, %d wrong\n", nrows, wrong);
    assert_int_equal(wrong, 0);
}

int main(void)
{
    alarm(300); /* a call that hangs (a FIFO) fails the test */
    unsetenv("COPROC_BUDGET");
    unsetenv("COPROC_POLICY");
    unsetenv("COPROC_DEVICES");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_inputs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
