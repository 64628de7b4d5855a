/* test_strings.c - dictionary-encoded string columns (coproc.h "strings")
 * and string predicates in query plans (coproc_expr_string, _prefix) against
 * plain C over the strings (strcmp): encoding with duplicates, the empty
 * string, multi-byte UTF-8 and prefixes of one another; every comparison,
 * BETWEEN, IN and LIKE 'prefix%' with constants inside, between, before,
 * after and absent from the dictionary, the constant on either side; a
 * group-by on the string column whose result keeps the dictionary; in both
 * engines on every device and kernel path; and the bad dictionaries and
 * plans refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/arrow.h"
#include "coproc/query.h"
#include "testlib.h"

static const char *const words[] = {"",     "a",   "ab",      "abc", "abd", "b",
                                    "ba",   "é",   "\xce\xa9", "zz",  "MFGR#12", "MFGR#2"};
#define NWORDS (sizeof words / sizeof words[0])

/* Rows of strings drawn from words (duplicates), and values. */
static void make_rows(size_t n, const char **s, int32_t *v, uint64_t seed)
{
    test_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        s[i] = words[test_rand_below(&r, NWORDS)];
        v[i] = (int32_t)test_rand_below(&r, 1000) - 500;
    }
}

static void check_encoding(coproc_runtime *rt, int device, size_t n)
{
    const char **s = malloc((n + 1) * sizeof *s);
    int32_t *v = malloc((n + 1) * sizeof *v), *codes = malloc((n + 1) * sizeof *codes);
    make_rows(n, s, v, 7 + n);
    coproc_column *c;
    assert_ok(rt, coproc_column_encode_strings(rt, device, s, n, &c));
    assert_int_equal(coproc_column_type(c), COPROC_INT32);
    assert_int_equal(coproc_column_length(c), n);
    int m = coproc_column_dictionary_size(c);
    assert_true(m >= 0 && (size_t)m <= NWORDS);
    for (int i = 1; i < m; i++) /* sorted, distinct */
        assert_true(strcmp(coproc_column_dictionary_value(c, i - 1),
                           coproc_column_dictionary_value(c, i)) < 0);
    assert_null(coproc_column_dictionary_value(c, m));
    assert_null(coproc_column_dictionary_value(c, -1));
    assert_ok(rt, coproc_column_download(c, codes, n));
    for (size_t i = 0; i < n; i++)
        assert_string_equal(coproc_column_dictionary_value(c, codes[i]), s[i]);
    coproc_column_free(c);
    free(s), free(v), free(codes);
}

/* ---------------------------------------------------------------- plans */

typedef struct pred {
    const char *what;
    coproc_expr *(*make)(coproc_plan *p);
    int (*holds)(const char *s);
} pred;

#define COL(p) coproc_expr_column(p, "s")
#define STR(p, v) coproc_expr_string(p, v)

static coproc_expr *p_eq(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_EQ, COL(p), STR(p, "ab")); }
static int h_eq(const char *s) { return strcmp(s, "ab") == 0; }
static coproc_expr *p_eq_absent(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_EQ, COL(p), STR(p, "abb")); }
static int h_eq_absent(const char *s) { (void)s; return 0; }
static coproc_expr *p_ne(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_NE, COL(p), STR(p, "b")); }
static int h_ne(const char *s) { return strcmp(s, "b") != 0; }
static coproc_expr *p_ne_absent(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_NE, COL(p), STR(p, "c")); }
static int h_ne_absent(const char *s) { return strcmp(s, "c") != 0; }
static coproc_expr *p_lt(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_LT, COL(p), STR(p, "abd")); }
static int h_lt(const char *s) { return strcmp(s, "abd") < 0; }
static coproc_expr *p_le(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_LE, COL(p), STR(p, "abd")); }
static int h_le(const char *s) { return strcmp(s, "abd") <= 0; }
static coproc_expr *p_gt(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_GT, COL(p), STR(p, "b")); }
static int h_gt(const char *s) { return strcmp(s, "b") > 0; }
static coproc_expr *p_ge_between(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_GE, COL(p), STR(p, "abcc")); }
static int h_ge_between(const char *s) { return strcmp(s, "abcc") >= 0; }
static coproc_expr *p_lt_first(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_LT, COL(p), STR(p, "")); }
static int h_lt_first(const char *s) { return strcmp(s, "") < 0; }
static coproc_expr *p_flipped(coproc_plan *p) { return coproc_expr_compare(p, COPROC_CMP_LT, STR(p, "b"), COL(p)); }
static int h_flipped(const char *s) { return strcmp("b", s) < 0; }
static coproc_expr *p_between(coproc_plan *p) { return coproc_expr_between(p, COL(p), STR(p, "aa"), STR(p, "abd")); }
static int h_between(const char *s) { return strcmp(s, "aa") >= 0 && strcmp(s, "abd") <= 0; }
static coproc_expr *p_between_mfgr(coproc_plan *p) { return coproc_expr_between(p, COL(p), STR(p, "MFGR#12"), STR(p, "MFGR#19")); }
static int h_between_mfgr(const char *s) { return strcmp(s, "MFGR#12") >= 0 && strcmp(s, "MFGR#19") <= 0; }
static coproc_expr *p_in(coproc_plan *p)
{
    coproc_expr *l[] = {STR(p, "é"), STR(p, "nope"), STR(p, "a")};
    return coproc_expr_in(p, COL(p), 3, l);
}
static int h_in(const char *s) { return !strcmp(s, "é") || !strcmp(s, "a"); }
static coproc_expr *p_in_absent(coproc_plan *p)
{
    coproc_expr *l[] = {STR(p, "nope")};
    return coproc_expr_in(p, COL(p), 1, l);
}
static int h_in_absent(const char *s) { (void)s; return 0; }
static coproc_expr *p_prefix(coproc_plan *p) { return coproc_expr_prefix(p, COL(p), "ab"); }
static int h_prefix(const char *s) { return strncmp(s, "ab", 2) == 0; }
static coproc_expr *p_prefix_all(coproc_plan *p) { return coproc_expr_prefix(p, COL(p), ""); }
static int h_prefix_all(const char *s) { (void)s; return 1; }
static coproc_expr *p_prefix_utf8(coproc_plan *p) { return coproc_expr_prefix(p, COL(p), "\xc3"); }
static int h_prefix_utf8(const char *s) { return (unsigned char)s[0] == 0xc3; }
static coproc_expr *p_not_prefix_or(coproc_plan *p)
{
    return coproc_expr_or(p, coproc_expr_not(p, coproc_expr_prefix(p, COL(p), "a")),
                          coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "v"),
                                              coproc_expr_int(p, 200)));
}
static int h_not_prefix_or(const char *s) { return s[0] != 'a'; } /* or v > 200: checked apart */

static const pred preds[] = {
    {"= present", p_eq, h_eq},           {"= absent", p_eq_absent, h_eq_absent},
    {"<> present", p_ne, h_ne},          {"<> absent", p_ne_absent, h_ne_absent},
    {"<", p_lt, h_lt},                   {"<=", p_le, h_le},
    {">", p_gt, h_gt},                   {">= between two", p_ge_between, h_ge_between},
    {"< the first", p_lt_first, h_lt_first}, {"'b' < s", p_flipped, h_flipped},
    {"between", p_between, h_between},   {"between MFGR", p_between_mfgr, h_between_mfgr},
    {"in", p_in, h_in},                  {"in absent", p_in_absent, h_in_absent},
    {"prefix", p_prefix, h_prefix},      {"prefix ''", p_prefix_all, h_prefix_all},
    {"prefix utf-8", p_prefix_utf8, h_prefix_utf8},
    {"not prefix or v", p_not_prefix_or, h_not_prefix_or},
};

/* filter(pred) then group by s: count, sum(v); against C over the strings. */
static void check_plan(coproc_runtime *rt, coproc_table *t, const char *const *s,
                       const int32_t *v, size_t n, const pred *pr, coproc_query_mode mode)
{
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, t, "t"), pr->make(p));
    const char *keys[] = {"s"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, coproc_expr_column(p, "v"), "sv"}};
    coproc_node *g = coproc_plan_group_by(p, f, 1, keys, 2, ag);
    coproc_order_key ok[] = {{"s", 0, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 1, ok, 0);
    coproc_query_options opts;
    coproc_query_options_init(&opts);
    opts.mode = mode;
    coproc_query_result r;
    coproc_status st = coproc_query_run(p, o, &opts, &r);
    if (st != COPROC_OK)
        fail_msg("%s (mode %d): %s: %s", pr->what, (int)mode, coproc_status_name(st),
                 coproc_errmsg(rt));
    const coproc_column *ks = coproc_table_column(r.table, "s");
    const coproc_column *kn = coproc_table_column(r.table, "n");
    const coproc_column *kv = coproc_table_column(r.table, "sv");
    assert_non_null(ks);
    size_t m = coproc_column_length(ks);
    int32_t *codes = malloc((m + 1) * 4);
    int64_t *cnt = malloc((m + 1) * 8), *sum = malloc((m + 1) * 8);
    assert_ok(rt, coproc_column_download(ks, codes, m));
    assert_ok(rt, coproc_column_download(kn, cnt, m));
    assert_ok(rt, coproc_column_download(kv, sum, m));
    if (m && coproc_column_dictionary_size(ks) < 0)
        fail_msg("%s: the result's string column lost its dictionary", pr->what);
    /* expected: for each word in strcmp order, its passing rows */
    const char *sorted[NWORDS];
    memcpy(sorted, words, sizeof sorted);
    for (size_t i = 1; i < NWORDS; i++) /* insertion sort by strcmp */
        for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
            const char *x = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = x;
        }
    size_t at = 0;
    for (size_t w = 0; w < NWORDS; w++) {
        int64_t c = 0, sv = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(s[i], sorted[w]) == 0 &&
                (pr->holds(s[i]) || (pr->make == p_not_prefix_or && v[i] > 200)))
                c++, sv += v[i];
        if (!c)
            continue;
        if (at >= m)
            fail_msg("%s (mode %d): %zu groups, expected more", pr->what, (int)mode, m);
        const char *got = coproc_column_dictionary_value(ks, codes[at]);
        if (!got || strcmp(got, sorted[w]) != 0 || cnt[at] != c || sum[at] != sv)
            fail_msg("%s (mode %d): group %zu is \"%s\" x%lld sum %lld, expected \"%s\" x%lld "
                     "sum %lld", pr->what, (int)mode, at, got ? got : "(none)",
                     (long long)cnt[at], (long long)sum[at], sorted[w], (long long)c,
                     (long long)sv);
        at++;
    }
    assert_int_equal(at, m);
    free(codes), free(cnt), free(sum);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

static void each(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)path, (void)user;
    static const size_t sizes[] = {0, 1, 777};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        check_encoding(rt, device, n);
        const char **s = malloc((n + 1) * sizeof *s);
        int32_t *v = malloc((n + 1) * sizeof *v);
        make_rows(n, s, v, 99 + n);
        coproc_column *cs, *cv;
        assert_ok(rt, coproc_column_encode_strings(rt, -1, s, n, &cs));
        assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, n ? v : NULL, n, &cv));
        coproc_table *t;
        assert_ok(rt, coproc_table_create(rt, &t));
        assert_ok(rt, coproc_table_add(t, "s", cs));
        assert_ok(rt, coproc_table_add(t, "v", cv));
        for (size_t k = 0; k < sizeof preds / sizeof preds[0]; k++) {
            check_plan(rt, t, s, v, n, &preds[k], COPROC_QUERY_FUSED);
            check_plan(rt, t, s, v, n, &preds[k], COPROC_QUERY_OPERATORS);
        }
        coproc_table_free(t);
        coproc_column_free(cs);
        coproc_column_free(cv);
        free(s), free(v);
    }
}

/* Joins on strings of two dictionaries (the probe's codes mapped onto the
 * build's): inner, grouped by the probe's string, and semi (fused: the map
 * read by the probe), against nested loops over the strings; both engines. */
static void check_join_two_dicts(coproc_runtime *rt, size_t n)
{
    const char **s = malloc((n + 1) * sizeof *s);
    int32_t *v = malloc((n + 1) * sizeof *v);
    make_rows(n, s, v, 5 + n);
    /* the build side: some words (one twice), some not in the probe's rows */
    const char *bw[] = {"ab", "zz", "nope", "\xce\xa9", "ab", "", "MFGR#2"};
    int32_t bv[] = {1, 2, 3, 4, 5, 6, 7};
    size_t nb = sizeof bw / sizeof bw[0];
    coproc_column *cs, *cv, *bs, *bvc;
    assert_ok(rt, coproc_column_encode_strings(rt, -1, s, n, &cs));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, n ? v : NULL, n, &cv));
    assert_ok(rt, coproc_column_encode_strings(rt, -1, bw, nb, &bs));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, bv, nb, &bvc));
    coproc_table *t, *b;
    assert_ok(rt, coproc_table_create(rt, &t));
    assert_ok(rt, coproc_table_create(rt, &b));
    assert_ok(rt, coproc_table_add(t, "s", cs));
    assert_ok(rt, coproc_table_add(t, "v", cv));
    assert_ok(rt, coproc_table_add(b, "bs", bs));
    assert_ok(rt, coproc_table_add(b, "bv", bvc));
    for (int semi = 0; semi < 2; semi++)
        for (int mode = 0; mode < 2; mode++) {
            coproc_plan *p;
            assert_ok(rt, coproc_plan_create(rt, &p));
            coproc_node *j = coproc_plan_join(p, semi ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER,
                                              coproc_plan_scan(p, t, "t"), "s",
                                              coproc_plan_scan(p, b, "b"), "bs");
            const char *keys[] = {"s"};
            coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"},
                                     {COPROC_AGG_SUM, coproc_expr_column(p, semi ? "v" : "bv"), "sv"}};
            coproc_node *g = coproc_plan_group_by(p, j, 1, keys, 2, ag);
            coproc_query_options o;
            coproc_query_options_init(&o);
            o.mode = mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
            coproc_query_result r;
            assert_ok(rt, coproc_query_run(p, g, &o, &r));
            const coproc_column *ks = coproc_table_column(r.table, "s");
            size_t m = coproc_column_length(ks);
            int32_t *codes = malloc((m + 1) * 4);
            int64_t *cnt = malloc((m + 1) * 8), *sum = malloc((m + 1) * 8);
            assert_ok(rt, coproc_column_download(ks, codes, m));
            assert_ok(rt, coproc_column_download(coproc_table_column(r.table, "n"), cnt, m));
            assert_ok(rt, coproc_column_download(coproc_table_column(r.table, "sv"), sum, m));
            size_t groups = 0;
            for (size_t w = 0; w < NWORDS; w++) {
                int64_t c = 0, sv = 0;
                for (size_t i = 0; i < n; i++) {
                    if (strcmp(s[i], words[w]) != 0)
                        continue;
                    int hit = 0;
                    for (size_t k = 0; k < nb; k++)
                        if (strcmp(bw[k], s[i]) == 0) {
                            hit = 1;
                            if (!semi)
                                c++, sv += bv[k];
                        }
                    if (semi && hit)
                        c++, sv += v[i];
                }
                if (!c)
                    continue;
                groups++;
                size_t g2 = 0;
                while (g2 < m && strcmp(coproc_column_dictionary_value(ks, codes[g2]), words[w]))
                    g2++;
                if (g2 == m || cnt[g2] != c || sum[g2] != sv)
                    fail_msg("two dictionaries, %s, mode %d, %zu rows: \"%s\" wrong or missing",
                             semi ? "semi" : "inner", mode, n, words[w]);
            }
            assert_int_equal(groups, m);
            /* "ab" twice on the build side: the fused inner join falls back
             * (its table holds one row a key) and says so; the semi join's
             * probe maps the codes itself. */
            if (mode == 0 && n && !semi && !strstr(r.note, "duplicate keys"))
                fail_msg("two dictionaries: the fused inner join should say it met duplicate keys (\"%s\")",
                         r.note);
            if (mode == 0 && semi && r.note[0])
                fail_msg("two dictionaries, semi, %zu rows: fell back: %s", n, r.note);
            free(codes), free(cnt), free(sum);
            coproc_query_result_free(&r);
            coproc_plan_free(p);
        }
    coproc_table_free(t), coproc_table_free(b);
    coproc_column_free(cs), coproc_column_free(cv), coproc_column_free(bs), coproc_column_free(bvc);
    free(s), free(v);
}

static void test_join_two_dictionaries(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    check_join_two_dicts(rt, 0);
    check_join_two_dicts(rt, 1);
    check_join_two_dicts(rt, 777);
    coproc_close(rt);
}

static void test_plans(void **state)
{
    (void)state;
    test_each_device_path(each, NULL);
}

static void test_bad_dictionaries(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t codes[3] = {0, 2, 1};
    int64_t wide[3] = {0, 1, 2};
    coproc_column *c, *w;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, codes, 3, &c));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, wide, 3, &w));
    const char *ok[] = {"a", "b", "c"}, *unsorted[] = {"b", "a", "c"}, *dup[] = {"a", "a", "c"},
               *nul[] = {"a", NULL, "c"};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 3, unsorted));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 3, dup));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 3, nul));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 2, ok)); /* code 2 */
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_column_set_dictionary(w, 3, ok));
    assert_status(COPROC_NULL_POINTER, coproc_column_set_dictionary(NULL, 3, ok));
    assert_status(COPROC_NULL_POINTER, coproc_column_set_dictionary(c, 3, NULL));
    assert_int_equal(coproc_column_dictionary_size(c), -1);
    /* strings with nulls, either way round: a null row's code is not
     * checked (row 1's code 2 is outside a dictionary of 2 under a null) */
    uint32_t word = 0x5, none = 0;
    coproc_column *bits, *bits2, *allnull;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, &word, 1, &bits));
    assert_ok(rt, coproc_column_set_validity(c, bits));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 1, ok)); /* row 2: 1 */
    assert_ok(rt, coproc_column_set_dictionary(c, 2, ok));
    assert_int_equal(coproc_column_dictionary_size(c), 2);
    assert_ok(rt, coproc_column_set_validity(c, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(c, 2, ok));
    assert_ok(rt, coproc_column_set_dictionary(c, 3, ok));
    assert_int_equal(coproc_column_dictionary_size(c), 3);
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, &word, 1, &bits2));
    assert_ok(rt, coproc_column_set_validity(c, bits2));
    assert_int_equal(coproc_column_dictionary_size(c), 3);
    assert_ok(rt, coproc_column_set_validity(c, NULL));
    assert_string_equal(coproc_column_dictionary_value(c, 2), "c");
    /* every row null: no code is checked, on the device and on the host */
    int32_t junk[3] = {-5, 99, 7};
    coproc_column *j, *hj;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, junk, 3, &j));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, &none, 1, &allnull));
    assert_ok(rt, coproc_column_set_validity(j, allnull));
    assert_ok(rt, coproc_column_set_dictionary(j, 1, ok));
    coproc_column_free(j);
    coproc_column *hbits;
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 3, &hj));
    memcpy(coproc_column_host_data(hj), junk, sizeof junk);
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_UINT32, 1, &hbits));
    *(uint32_t *)coproc_column_host_data(hbits) = 0x4; /* row 2 valid: code 7 */
    assert_ok(rt, coproc_column_set_validity(hj, hbits));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_dictionary(hj, 3, ok));
    *(uint32_t *)coproc_column_host_data(hbits) = 0x0;
    assert_ok(rt, coproc_column_set_dictionary(hj, 3, ok));
    coproc_column_free(hj);
    const char *vals[] = {"x", NULL};
    coproc_column *e;
    assert_status(COPROC_NULL_POINTER, coproc_column_encode_strings(rt, 0, vals, 2, &e));
    assert_status(COPROC_NULL_POINTER, coproc_column_encode_strings(rt, 0, NULL, 2, &e));

    /* plans: a string against a number column, a prefix of one, a join and a
     * comparison across two dictionaries */
    coproc_column *c2;
    const char *other[] = {"a", "c"};
    assert_ok(rt, coproc_column_encode_strings(rt, 0, other, 2, &c2));
    coproc_table *t, *t2;
    assert_ok(rt, coproc_table_create(rt, &t));
    assert_ok(rt, coproc_table_create(rt, &t2));
    assert_ok(rt, coproc_table_add(t, "s", c));
    assert_ok(rt, coproc_table_add(t, "w", w));
    assert_ok(rt, coproc_table_add(t2, "s2", c2));
    coproc_plan *p;
    assert_ok(rt, coproc_plan_create(rt, &p));
    assert_null(coproc_plan_filter(p, coproc_plan_scan(p, t, "t"),
                                   coproc_expr_compare(p, COPROC_CMP_EQ, coproc_expr_column(p, "w"),
                                                       coproc_expr_string(p, "a"))));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p);
    assert_ok(rt, coproc_plan_create(rt, &p));
    assert_null(coproc_plan_filter(p, coproc_plan_scan(p, t, "t"),
                                   coproc_expr_prefix(p, coproc_expr_column(p, "w"), "a")));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p);
    assert_ok(rt, coproc_plan_create(rt, &p));
    coproc_expr *strs[] = {coproc_expr_string(p, "a")};
    assert_null(coproc_plan_filter(p, coproc_plan_scan(p, t, "t"),
                                   coproc_expr_in(p, coproc_expr_column(p, "w"), 1, strs)));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p);
    assert_ok(rt, coproc_plan_create(rt, &p));
    assert_null(coproc_plan_join(p, COPROC_JOIN_SEMI, coproc_plan_scan(p, t, "t"), "w",
                                 coproc_plan_scan(p, t2, "t2"), "s2"));
    assert_int_equal(coproc_plan_status(p), COPROC_UNSUPPORTED);
    coproc_plan_free(p);
    assert_ok(rt, coproc_plan_create(rt, &p));
    assert_null(coproc_expr_string(p, NULL));
    assert_int_equal(coproc_plan_status(p), COPROC_NULL_POINTER);
    coproc_plan_free(p);
    coproc_table_free(t), coproc_table_free(t2);
    coproc_column_free(c), coproc_column_free(w), coproc_column_free(c2);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- Arrow */

static int released;
static void count_release(struct ArrowArray *a)
{
    released++;
    a->release = NULL;
}
static void schema_noop(struct ArrowSchema *s) { s->release = NULL; }

/* Each row's string of an imported column, against want[]. */
static void expect_strings(coproc_runtime *rt, const coproc_column *c, const char *const *want,
                           size_t n)
{
    assert_int_equal(coproc_column_length(c), n);
    int32_t codes[16];
    assert_ok(rt, coproc_column_download(c, codes, n));
    for (size_t i = 0; i < n; i++)
        assert_string_equal(coproc_column_dictionary_value(c, codes[i]), want[i]);
}

static void test_arrow_strings(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    coproc_column *c;
    /* utf8, sliced by one: "zz" "" "ab" "zz" of "x" "zz" "" "ab" "zz" */
    int32_t off[] = {0, 1, 3, 3, 5, 7};
    const char bytes[] = "xzzabzz";
    const void *ubuf[] = {NULL, off, bytes};
    struct ArrowArray a = {.length = 4, .offset = 1, .n_buffers = 3, .buffers = ubuf,
                           .release = count_release};
    struct ArrowSchema su = {.format = "u", .release = schema_noop};
    released = 0;
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &su, &a, &c));
    assert_int_equal(released, 1);
    const char *want_u[] = {"zz", "", "ab", "zz"};
    expect_strings(rt, c, want_u, 4);
    assert_int_equal(coproc_column_dictionary_size(c), 3);

    /* export it: a dictionary array, read by hand */
    struct ArrowSchema es;
    struct ArrowArray ea;
    assert_ok(rt, coproc_column_export_arrow(c, &es, &ea));
    assert_string_equal(es.format, "i");
    assert_non_null(es.dictionary);
    assert_string_equal(es.dictionary->format, "u");
    assert_non_null(ea.dictionary);
    const int32_t *idx = ea.buffers[1];
    const int32_t *doff = ea.dictionary->buffers[1];
    const char *dbytes = ea.dictionary->buffers[2];
    for (int i = 0; i < 4; i++) {
        int32_t k = idx[i];
        assert_true(k >= 0 && k < ea.dictionary->length);
        assert_int_equal((size_t)(doff[k + 1] - doff[k]), strlen(want_u[i]));
        assert_memory_equal(dbytes + doff[k], want_u[i], strlen(want_u[i]));
    }
    coproc_column_free(c);
    ea.release(&ea); /* the export outlives its column */
    es.release(&es);

    /* a dictionary array: int8 indices, sliced, into an unsorted dictionary
     * with a duplicate ("b" twice); large utf8 */
    int64_t loff[] = {0, 1, 2, 3, 5};
    const char lbytes[] = "bcbaa";
    const void *dbuf[] = {NULL, loff, lbytes};
    struct ArrowArray dict = {.length = 4, .n_buffers = 3, .buffers = dbuf,
                              .release = count_release};
    int8_t ind[] = {3, 0, 1, 2, 3, 0};
    const void *ibuf[] = {NULL, ind};
    struct ArrowArray da = {.length = 5, .offset = 1, .null_count = -1, .n_buffers = 2,
                            .buffers = ibuf, .dictionary = &dict, .release = count_release};
    struct ArrowSchema sd = {.format = "U", .release = schema_noop};
    struct ArrowSchema si = {.format = "c", .dictionary = &sd, .release = schema_noop};
    released = 0;
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &si, &da, &c));
    const char *want_d[] = {"b", "c", "b", "aa", "b"};
    expect_strings(rt, c, want_d, 5);
    assert_int_equal(coproc_column_dictionary_size(c), 3); /* aa b c */
    assert_string_equal(coproc_column_dictionary_value(c, 0), "aa");
    coproc_column_free(c);

    /* refused, the array kept by the caller: an index outside, nulls, a
     * dictionary of numbers, a NUL inside a string, offsets going back */
    int8_t bad_ind[] = {0, 4};
    const void *bibuf[] = {NULL, bad_ind};
    struct ArrowArray bad = {.length = 2, .n_buffers = 2, .buffers = bibuf, .dictionary = &dict,
                             .release = count_release};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &si, &bad, &c));
    assert_non_null(bad.release);
    assert_null(c);
    uint8_t valid = 0x5;
    const void *nbuf[] = {&valid, ind};
    struct ArrowArray nul = {.length = 3,
                             .null_count = 4,
                             .n_buffers = 2,
                             .buffers = nbuf,
                             .dictionary = &dict,
                             .release = count_release}; /* 4 nulls of 3 */
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &si, &nul, &c));
    const void *dnbuf[] = {&valid, loff, lbytes}; /* a dictionary with a null string */
    struct ArrowArray ndict = {
        .length = 4, .null_count = 2, .n_buffers = 3, .buffers = dnbuf, .release = count_release};
    struct ArrowArray nd = {.length = 2,
                            .n_buffers = 2,
                            .buffers = ibuf,
                            .dictionary = &ndict,
                            .release = count_release};
    assert_status(COPROC_UNSUPPORTED, coproc_column_import_arrow(rt, 0, &si, &nd, &c));
    assert_non_null(nd.release);
    struct ArrowSchema snum = {.format = "i", .release = schema_noop};
    struct ArrowSchema sidx = {.format = "c", .dictionary = &snum, .release = schema_noop};
    struct ArrowArray da2 = da; /* da was taken over by the import above */
    da2.release = count_release;
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_column_import_arrow(rt, 0, &sidx, &da2, &c));
    int32_t zoff[] = {0, 3};
    const char zbytes[] = {'a', '\0', 'b'};
    const void *zbuf[] = {NULL, zoff, zbytes};
    struct ArrowArray z = {.length = 1, .n_buffers = 3, .buffers = zbuf, .release = count_release};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &su, &z, &c));
    int32_t back[] = {0, 2, 1};
    const void *bbuf[] = {NULL, back, "abc"};
    struct ArrowArray b = {.length = 2, .n_buffers = 3, .buffers = bbuf, .release = count_release};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_import_arrow(rt, 0, &su, &b, &c));
    assert_non_null(b.release);
    coproc_close(rt);
}

/* The rows of an imported column against want[] (NULL: a null row). */
static void expect_nullable(coproc_runtime *rt, const coproc_column *c, const char *const *want,
                            size_t n)
{
    assert_int_equal(coproc_column_length(c), n);
    int32_t codes[16];
    uint32_t bits = ~0u;
    assert_ok(rt, coproc_column_download(c, codes, n));
    const coproc_column *v = coproc_column_validity(c);
    if (v)
        assert_ok(rt, coproc_column_download(v, &bits, 1));
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(bits >> i & 1u, want[i] != NULL);
        if (want[i])
            assert_string_equal(coproc_column_dictionary_value(c, codes[i]), want[i]);
    }
}

static void test_arrow_strings_nulls(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    coproc_column *c, *back;
    /* utf8 of 9 rows sliced from row 3, nulls at rows 4 (its bytes "?"
     * ignored) and 7: "a" "b" "c" | "q" NULL "" "q" NULL "é" */
    int32_t off[] = {0, 1, 2, 3, 4, 5, 5, 6, 6, 8};
    const char bytes[] = "abcq?q\xc3\xa9";
    uint8_t vbits[2] = {0x6f, 0x01};
    const void *ubuf[] = {vbits, off, bytes};
    struct ArrowSchema su = {.format = "u", .release = schema_noop};
    const char *want[] = {"q", NULL, "", "q", NULL, "\xc3\xa9"};
    for (int known = 0; known < 2; known++) { /* null_count given, and -1 */
        struct ArrowArray a = {.length = 6,
                               .offset = 3,
                               .null_count = known ? 2 : -1,
                               .n_buffers = 3,
                               .buffers = ubuf,
                               .release = count_release};
        released = 0;
        assert_ok(rt, coproc_column_import_arrow(rt, 0, &su, &a, &c));
        assert_int_equal(released, 1);
        expect_nullable(rt, c, want, 6);
        assert_int_equal(coproc_column_dictionary_size(c), 3); /* "" "q" "é": not "?" */
        uint64_t nulls = 0;
        assert_ok(rt, coproc_column_null_count(c, &nulls));
        assert_int_equal(nulls, 2);
        coproc_scalar count;
        assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_COUNT, c, &count));
        assert_int_equal(count.v.u64, 4);
        if (!known) /* the second is exported below */
            coproc_column_free(c);
    }

    /* export: a dictionary array with the validity; a null row's index is 0 */
    struct ArrowSchema es;
    struct ArrowArray ea;
    assert_ok(rt, coproc_column_export_arrow(c, &es, &ea));
    assert_int_equal(ea.null_count, 2);
    assert_true(es.flags & ARROW_FLAG_NULLABLE);
    const uint8_t *ev = ea.buffers[0];
    const int32_t *idx = ea.buffers[1];
    assert_non_null(ev);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ev[i >> 3] >> (i & 7) & 1, want[i] != NULL);
        assert_true(idx[i] >= 0 && idx[i] < ea.dictionary->length);
        if (!want[i])
            assert_int_equal(idx[i], 0);
    }
    /* and back in */
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &es, &ea, &back));
    expect_nullable(rt, back, want, 6);
    es.release(&es);
    coproc_column_free(back);
    coproc_column_free(c);

    /* a dictionary array with nulls: their indices (77, -3) are not looked at */
    int32_t ind[] = {1, 77, 0, 2, -3};
    uint8_t ibits = 0x0d;
    int32_t doff[] = {0, 1, 2, 3};
    const void *dbuf[] = {NULL, doff, "xyz"};
    struct ArrowArray dict = {
        .length = 3, .n_buffers = 3, .buffers = dbuf, .release = count_release};
    const void *ibuf[] = {&ibits, ind};
    struct ArrowArray da = {.length = 5,
                            .null_count = 2,
                            .n_buffers = 2,
                            .buffers = ibuf,
                            .dictionary = &dict,
                            .release = count_release};
    struct ArrowSchema sd = {.format = "u", .release = schema_noop};
    struct ArrowSchema si = {.format = "i", .dictionary = &sd, .release = schema_noop};
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &si, &da, &c));
    const char *want_d[] = {"y", NULL, "x", "z", NULL};
    expect_nullable(rt, c, want_d, 5);
    coproc_column_free(c);

    /* a validity buffer with no null in it (null_count -1): no validity */
    uint8_t all = 0xff;
    const void *abuf[] = {&all, ind};
    struct ArrowArray dict2 = dict;
    dict2.release = count_release;
    int32_t ind_ok[] = {1, 0, 2};
    abuf[1] = ind_ok;
    struct ArrowArray none = {.length = 3,
                              .null_count = -1,
                              .n_buffers = 2,
                              .buffers = abuf,
                              .dictionary = &dict2,
                              .release = count_release};
    assert_ok(rt, coproc_column_import_arrow(rt, 0, &si, &none, &c));
    assert_null(coproc_column_validity(c));
    const char *want_n[] = {"y", "x", "z"};
    expect_strings(rt, c, want_n, 3);
    coproc_column_free(c);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_dictionaries),
        cmocka_unit_test(test_arrow_strings),
        cmocka_unit_test(test_arrow_strings_nulls),
        cmocka_unit_test(test_join_two_dictionaries),
        cmocka_unit_test(test_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
