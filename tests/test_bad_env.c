/* test_bad_env.c - environment variables and options that do not parse or do
 * not fit (issue 18). The strict parser (core/parse.c) on its own; then
 * COPROC_BUDGET and COPROC_POLICY values that must be refused with a warning
 * naming the variable (caught through the log callback) while the default
 * stays in effect; a budget option below COPROC_MIN_DEVICE_BUDGET refused at
 * open with an error line naming the minimum; the stats getters leaving their
 * own message, not the previous call's.
 * Reaches into core/runtime.h for the policy in effect: there is no public
 * getter for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "core/parse.h"
#include "core/runtime.h"

/* ---- the parser */

static void test_parse_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        uint64_t v;
    } good[] = {
        {"0", 0}, {"1", 1}, {"123", 123}, {"64K", 64 << 10}, {"64k", 64 << 10},
        {"512M", 512ull << 20}, {"16G", 16ull << 30}, {"2t", 2ull << 40},
        {"18446744073709551615", UINT64_MAX}, {"16777215T", 16777215ull << 40},
        {"0000000000000000000000042", 42},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 7;
        const char *why = NULL;
        if (coproc__parse_bytes(good[i].s, &v, &why) != 0 || v != good[i].v)
            fail_msg("\"%s\" -> %llu (%s), expected %llu", good[i].s, (unsigned long long)v,
                     why ? why : "ok", (unsigned long long)good[i].v);
    }
    static const struct {
        const char *s, *why;
    } bad[] = {
        {"", "empty"}, {"-5", "negative"}, {"-0", "negative"}, {"+5", "not a number"},
        {" 5", "not a number"}, {"K", "not a number"}, {"abc", "not a number"},
        {"18446744073709551616", "does not fit 64 bits"},
        {"99999999999999999999999", "does not fit 64 bits"},
        {"16777216T", "does not fit 64 bits"}, {"17179869184G", "does not fit 64 bits"},
        {"5 ", "trailing characters"}, {"5KB", "trailing characters"},
        {"1.5G", "trailing characters"}, {"12Q", "trailing characters"},
        {"0x10", "trailing characters"}, {"5KK", "trailing characters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        const char *why = NULL;
        if (coproc__parse_bytes(bad[i].s, &v, &why) == 0)
            fail_msg("\"%s\" accepted as %llu", bad[i].s, (unsigned long long)v);
        assert_int_equal(v, 7); /* untouched */
        if (!why || strcmp(why, bad[i].why) != 0)
            fail_msg("\"%s\": reason \"%s\", expected \"%s\"", bad[i].s, why ? why : "(none)",
                     bad[i].why);
    }
    uint64_t v;
    assert_int_equal(coproc__parse_bytes(NULL, &v, NULL), -1); /* why may be NULL */
}

static void test_parse_int(void **state)
{
    (void)state;
    long long v = 7;
    const char *why = NULL;
    assert_int_equal(coproc__parse_int("0", 0, 3, &v, &why), 0);
    assert_int_equal(v, 0);
    assert_int_equal(coproc__parse_int("3", 0, 3, &v, &why), 0);
    assert_int_equal(v, 3);
    assert_int_equal(coproc__parse_int("-3", -5, 5, &v, &why), 0);
    assert_int_equal(v, -3);
    assert_int_equal(coproc__parse_int("-9223372036854775808", INT64_MIN, 0, &v, &why), 0);
    assert_true(v == INT64_MIN);
    v = 7;
    static const char *const bad[] = {"4", "-1", "", "abc", "1x", " 1", "+1", "1 ",
                                      "99999999999999999999", "9223372036854775808"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (coproc__parse_int(bad[i], 0, 3, &v, &why) == 0)
            fail_msg("\"%s\" accepted in [0, 3] as %lld", bad[i], v);
    assert_int_equal(v, 7);
    assert_int_equal(coproc__parse_int("9223372036854775808", INT64_MIN, INT64_MAX, &v, &why), -1);
    assert_string_equal(why, "out of range");
    assert_int_equal(coproc__parse_int("1x", 0, 3, &v, &why), -1);
    assert_string_equal(why, "trailing characters");
}

/* ---- the log, caught */

typedef struct logbuf {
    char text[16384];
    int warnings, errors;
} logbuf;

static void catch_log(void *user, coproc_log_level level, const char *msg)
{
    logbuf *b = user;
    if (level == COPROC_LOG_WARN)
        b->warnings++;
    if (level == COPROC_LOG_ERROR)
        b->errors++;
    size_t n = strlen(b->text);
    snprintf(b->text + n, sizeof b->text - n, "%s\n", msg);
}

/* Open device 0 (or all the COPROC_DEVICES selection names) with the log
 * caught into *b and the given budget option. */
static coproc_runtime *open_logged(logbuf *b, uint64_t budget)
{
    memset(b, 0, sizeof *b);
    coproc_options o;
    coproc_options_init(&o);
    o.log = catch_log;
    o.log_user = b;
    o.device_budget_bytes = budget;
    return test_open_with(&o);
}

static uint64_t budget_of(coproc_runtime *rt, int device)
{
    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_ok(rt, coproc_device_stats_get(rt, device, &ds));
    return ds.budget_bytes;
}

/* The budget each device gets without COPROC_BUDGET, for an option value. */
static uint64_t default_budget(coproc_runtime *rt, int device, uint64_t option)
{
    if (option)
        return option;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, device, &info));
    return info.global_mem_bytes / 10 * 7;
}

static void expect_budget_refused(const char *value, uint64_t option)
{
    setenv("COPROC_BUDGET", value, 1);
    logbuf b;
    coproc_runtime *rt = open_logged(&b, option);
    unsetenv("COPROC_BUDGET");
    char want[128];
    snprintf(want, sizeof want, "COPROC_BUDGET=%s ignored", value);
    if (b.warnings < 1 || !strstr(b.text, want))
        fail_msg("COPROC_BUDGET=%s: no warning naming it; log:\n%s", value, b.text);
    for (int d = 0; d < coproc_device_count(rt); d++) {
        uint64_t got = budget_of(rt, d), exp = default_budget(rt, d, option);
        if (got != exp)
            fail_msg("COPROC_BUDGET=%s (option %llu): device %d budget %llu, expected the "
                     "default %llu", value, (unsigned long long)option, d,
                     (unsigned long long)got, (unsigned long long)exp);
    }
    coproc_close(rt);
}

static void test_budget_env(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "-5", "-1", "18446744073709551616", "99999999999999999999G", "17179869184G",
        "12Q", "1.5G", "512MB", "abc", " 512M", "0", "1000", "127K",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_budget_refused(bad[i], 0);
        expect_budget_refused(bad[i], 3ull << 20); /* the option stands */
    }
    /* Good values apply, without a word. */
    static const struct {
        const char *s;
        uint64_t v;
    } good[] = {{"128K", 128 << 10}, {"512M", 512ull << 20}, {"131072", 131072}, {"2g", 2ull << 30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("COPROC_BUDGET", good[i].s, 1);
        logbuf b;
        coproc_runtime *rt = open_logged(&b, 0);
        unsetenv("COPROC_BUDGET");
        if (strstr(b.text, "COPROC_BUDGET"))
            fail_msg("COPROC_BUDGET=%s warned: %s", good[i].s, b.text);
        for (int d = 0; d < coproc_device_count(rt); d++)
            assert_int_equal(budget_of(rt, d), good[i].v);
        coproc_close(rt);
    }
}

static void expect_policy_refused(const char *value, const char *reason)
{
    setenv("COPROC_POLICY", value, 1);
    logbuf b;
    coproc_runtime *rt = open_logged(&b, 0);
    unsetenv("COPROC_POLICY");
    char want[128];
    snprintf(want, sizeof want, "COPROC_POLICY=%s ignored", value);
    if (!strstr(b.text, want) || !strstr(b.text, reason))
        fail_msg("COPROC_POLICY=%s: no warning naming it with \"%s\"; log:\n%s", value, reason,
                 b.text);
    /* The default policy stays in effect. */
    assert_int_equal(rt->policy, COPROC_POLICY_WTAR);
    assert_int_equal(rt->fixed_device, 0);
    coproc_close(rt);
}

static void test_policy_env(void **state)
{
    (void)state;
    logbuf b;
    coproc_runtime *rt = open_logged(&b, 0);
    int n = coproc_device_count(rt);
    coproc_close(rt);
    char past[32];
    snprintf(past, sizeof past, "fixed:%d", n); /* one past the last device */
    expect_policy_refused(past, "out of range");
    expect_policy_refused("fixed:9", "out of range");
    expect_policy_refused("fixed:-1", "out of range");
    expect_policy_refused("fixed:abc", "not a number");
    expect_policy_refused("fixed:", "empty");
    expect_policy_refused("fixed:0x", "trailing characters");
    expect_policy_refused("fixed:99999999999999999999", "out of range");
    expect_policy_refused("rr:1", "only fixed takes a device");
    expect_policy_refused("fastest", "unknown policy");
    expect_policy_refused("averyveryveryverylongpolicyname:1", "unknown policy");

    /* Good values apply, without a word. */
    static const struct {
        const char *s;
        int policy;
    } good[] = {{"rr", COPROC_POLICY_RR}, {"SRT", COPROC_POLICY_SRT},
                {"fixed", COPROC_POLICY_FIXED}, {"fixed:0", COPROC_POLICY_FIXED}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("COPROC_POLICY", good[i].s, 1);
        rt = open_logged(&b, 0);
        unsetenv("COPROC_POLICY");
        if (strstr(b.text, "COPROC_POLICY"))
            fail_msg("COPROC_POLICY=%s warned: %s", good[i].s, b.text);
        assert_int_equal(rt->policy, good[i].policy);
        assert_int_equal(rt->fixed_device, 0);
        coproc_close(rt);
    }
    if (n > 1) { /* the last device by number */
        snprintf(past, sizeof past, "fixed:%d", n - 1);
        setenv("COPROC_POLICY", past, 1);
        rt = open_logged(&b, 0);
        unsetenv("COPROC_POLICY");
        assert_int_equal(rt->policy, COPROC_POLICY_FIXED);
        assert_int_equal(rt->fixed_device, n - 1);
        coproc_close(rt);
    }

    /* The option out of range with the fixed policy: a warning, device 0. */
    coproc_options o;
    coproc_options_init(&o);
    memset(&b, 0, sizeof b);
    o.log = catch_log;
    o.log_user = &b;
    o.policy = COPROC_POLICY_FIXED;
    o.fixed_device = n + 3;
    rt = test_open_with(&o);
    if (!strstr(b.text, "fixed_device") || !strstr(b.text, "out of range"))
        fail_msg("fixed_device %d of %d devices: no warning; log:\n%s", n + 3, n, b.text);
    assert_int_equal(rt->policy, COPROC_POLICY_FIXED);
    assert_int_equal(rt->fixed_device, 0);
    coproc_close(rt);
}

/* ---- a budget option below the minimum */

static void test_budget_option_minimum(void **state)
{
    (void)state;
    const uint64_t below[] = {1, 1000, 64 << 10, COPROC_MIN_DEVICE_BUDGET - 1};
    char want[64];
    snprintf(want, sizeof want, "%llu", (unsigned long long)COPROC_MIN_DEVICE_BUDGET);
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        logbuf b;
        memset(&b, 0, sizeof b);
        coproc_options o;
        coproc_options_init(&o);
        o.log = catch_log;
        o.log_user = &b;
        o.device_budget_bytes = below[i];
        coproc_runtime *rt = (coproc_runtime *)1;
        assert_status(COPROC_INVALID_ARGUMENT, coproc_open(&o, &rt));
        assert_null(rt); /* a bad option makes no runtime (coproc.h) */
        if (b.errors != 1 || !strstr(b.text, "device_budget_bytes") || !strstr(b.text, want))
            fail_msg("budget %llu: the error line does not name the option and the minimum "
                     "%s:\n%s", (unsigned long long)below[i], want, b.text);
    }
    /* The minimum itself is accepted and applied. */
    logbuf b;
    coproc_runtime *rt = open_logged(&b, COPROC_MIN_DEVICE_BUDGET);
    for (int d = 0; d < coproc_device_count(rt); d++)
        assert_int_equal(budget_of(rt, d), COPROC_MIN_DEVICE_BUDGET);
    coproc_close(rt);
}

/* ---- getters with a bad struct_size or out leave their own message */

static void test_getters_own_message(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    coproc_device_info info;
    /* Leave an unrelated error on the runtime first. */
#define STALE()                                                                                \
    do {                                                                                       \
        assert_status(COPROC_INVALID_ARGUMENT, coproc_device_info_get(rt, 999, &info));        \
        assert_non_null(strstr(coproc_errmsg(rt), "999"));                                     \
    } while (0)
#define OWN(what)                                                                              \
    do {                                                                                       \
        if (strstr(coproc_errmsg(rt), "999") || !strstr(coproc_errmsg(rt), what))             \
            fail_msg("message \"%s\" is not about %s", coproc_errmsg(rt), what);               \
    } while (0)

    coproc_stats st;
    size_t sizes[] = {0, 1, sizeof st + 1, (size_t)-1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        STALE();
        st.struct_size = sizes[i];
        assert_status(COPROC_INVALID_ARGUMENT, coproc_stats_get(rt, &st));
        OWN("struct_size");
    }
    STALE();
    assert_status(COPROC_NULL_POINTER, coproc_stats_get(rt, NULL));
    OWN("coproc_stats_get");

    coproc_device_stats ds;
    STALE();
    ds.struct_size = 3;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_stats_get(rt, 0, &ds));
    OWN("struct_size");
    STALE();
    assert_status(COPROC_NULL_POINTER, coproc_device_stats_get(rt, 0, NULL));
    OWN("coproc_device_stats_get");

    coproc_model_stats ms;
    STALE();
    ms.struct_size = sizeof ms + 8;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, &ms));
    OWN("struct_size");
    STALE();
    assert_status(COPROC_NULL_POINTER, coproc_model_stats_get(rt, 0, COPROC_OP_REDUCE, NULL));
    OWN("coproc_model_stats_get");

    STALE();
    assert_status(COPROC_NULL_POINTER, coproc_device_info_get(rt, 0, NULL));
    OWN("coproc_device_info_get");

    /* A good call still works after all that. */
    st.struct_size = sizeof st;
    assert_ok(rt, coproc_stats_get(rt, &st));
    coproc_close(rt);
#undef STALE
#undef OWN
}

int main(void)
{
    unsetenv("COPROC_BUDGET");
    unsetenv("COPROC_POLICY");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bytes),
        cmocka_unit_test(test_parse_int),
        cmocka_unit_test(test_budget_env),
        cmocka_unit_test(test_policy_env),
        cmocka_unit_test(test_budget_option_minimum),
        cmocka_unit_test(test_getters_own_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
