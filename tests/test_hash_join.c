/* test_hash_join.c - coproc_hash_join and coproc_hash_join_count against a
 * nested-loop reference (a sorted-run reference for big inputs): pairs
 * compared as sorted lists, counts as numbers, for
 * every key type, duplicates on both sides, no matches, empty sides and
 * extreme keys, on every device and kernel path; and bad inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { KD_RANDOM, KD_DUPS, KD_EXTREME, KD_EQUAL, KD_DISJOINT, KD_SKEW, KD_COUNT, KD_HEAVY };
static const char *const kd_name[] = {"random", "dups", "extreme", "equal", "disjoint", "skew",
                                      "",       "heavy"};

/* side: 0 left, 1 right (KD_DISJOINT gives the sides different keys). */
static void fill_keys(size_t ks, void *k, size_t n, size_t other_n, int dist, int side,
                      test_rng *r)
{
    static const uint64_t extreme[] = {0, 1, UINT64_MAX, 0x8000000000000000ull,
                                       0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFull, 0x100000000ull,
                                       0x80000000ull, 0x7FFFFFFFull, 0xFFFFFFFF00000000ull};
    size_t range = n > other_n ? n : other_n;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r), v;
        switch (dist) {
        case KD_RANDOM: v = x % (range + 1) * 0x9E3779B97F4A7C15ull; break; /* ~1 match */
        case KD_DUPS: v = (uint64_t)((int64_t)(x % 13) - 6); break;
        case KD_EXTREME: v = extreme[x % (sizeof extreme / sizeof *extreme)]; break;
        case KD_EQUAL: v = UINT64_MAX; break;
        case KD_SKEW: v = x % 50 ? 0x5EED : x % (range + 1) * 0x9E3779B97F4A7C15ull; break;
        case KD_HEAVY: /* build: 90 % one key; probe: that key once, in row 0 */
            v = (side ? i != 0 : x % 10 != 0) ? x % (range + 1) * 0x9E3779B97F4A7C15ull : 0x5EED;
            break;
        default: v = 2 * (x % (range + 1)) + (uint64_t)side; break; /* even vs odd */
        }
        if (ks == 4)
            ((uint32_t *)k)[i] = (uint32_t)v;
        else
            ((uint64_t *)k)[i] = v;
    }
}



static void check_one(coproc_runtime *rt, int dev, coproc_type t, size_t nl, size_t nr, int dist,
                      const char *path, test_rng *rng)
{
    size_t ks = coproc_type_size(t);
    void *left = malloc((nl ? nl : 1) * ks), *right = malloc((nr ? nr : 1) * ks);
    fill_keys(ks, left, nl, nr, dist, 0, rng);
    fill_keys(ks, right, nr, nl, dist, 1, rng);
    size_t m;
    test_pair *want = test_join_reference(ks, left, nl, right, nr, &m);
    char where[160];
    snprintf(where, sizeof where, "%s type=%s left=%zu right=%zu dist=%s", path,
             coproc_type_name(t), nl, nr, kd_name[dist]);

    coproc_column *lc = NULL, *rc = NULL;
    assert_ok(rt, coproc_column_upload(rt, dev, t, left, nl, &lc));
    assert_ok(rt, coproc_column_upload(rt, dev, t, right, nr, &rc));
    coproc_join_result res;
    coproc_status s = coproc_hash_join(rt, lc, rc, &res);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(rt));
    if (res.count != m)
        fail_msg("%s: %zu pairs, want %zu", where, res.count, m);
    assert_int_equal(coproc_column_length(res.left), m);
    assert_int_equal(coproc_column_length(res.right), m);
    assert_int_equal(coproc_column_type(res.left), COPROC_UINT32);
    assert_int_equal(coproc_column_type(res.right), COPROC_UINT32);
    uint32_t *gl = malloc((m ? m : 1) * 4), *gr = malloc((m ? m : 1) * 4);
    assert_ok(rt, coproc_column_download(res.left, gl, m));
    assert_ok(rt, coproc_column_download(res.right, gr, m));
    test_check_pairs(gl, gr, m, want, where);
    uint64_t count = UINT64_MAX;
    s = coproc_hash_join_count(rt, lc, rc, &count);
    if (s != COPROC_OK)
        fail_msg("%s: count: %s: %s", where, coproc_status_name(s), coproc_errmsg(rt));
    if (count != m)
        fail_msg("%s: counted %llu pairs, want %zu", where, (unsigned long long)count, m);
    coproc_join_result_free(&res);
    assert_null(res.left);
    coproc_column_free(lc);
    coproc_column_free(rc);
    free(left); free(right); free(want); free(gl); free(gr);
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {4242};
    static const size_t sizes[][2] = {{0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 300}, {300, 1},
                                      {7, 64}, {257, 255}, {1025, 4097}, {4097, 1023},
                                      {300, 300}, {20011, 9}};
    for (int t = COPROC_INT32; t <= COPROC_UINT64; t++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (int dist = 0; dist < KD_COUNT; dist++) {
                if ((dist == KD_EQUAL || dist == KD_SKEW) && sizes[si][0] * sizes[si][1] > 200000)
                    continue; /* every pair matches */
                check_one(rt, dev, (coproc_type)t, sizes[si][0], sizes[si][1], dist, path, &rng);
            }
    /* Bigger: a build side of 2^16 + 1 rows, probed 100003 times. */
    check_one(rt, dev, COPROC_INT32, 65537, 100003, KD_RANDOM, path, &rng);
    check_one(rt, dev, COPROC_UINT64, 100003, 65537, KD_RANDOM, path, &rng);
    check_one(rt, dev, COPROC_INT64, 20011, 2003, KD_DUPS, path, &rng); /* ~3M pairs */
    /* Every build row the same key (one slot, a list of 50000), probed 3 times. */
    check_one(rt, dev, COPROC_UINT32, 50000, 3, KD_EQUAL, path, &rng);
}

static void test_hash_join_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* A build key repeated 100,000 times, probed by rows all of that key, and the
 * sides swapped; 98% one key among distinct ones. One key's pairs are far more
 * than a work-item may loop where a device caps that (Mesa's llvmpipe: 65535
 * steps; the pairs are then written by tasks that start mid-key). */
static void run_long_runs(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {77};
    check_one(rt, dev, COPROC_UINT32, 100000, 60, KD_EQUAL, path, &rng);
    check_one(rt, dev, COPROC_INT64, 60, 100000, KD_EQUAL, path, &rng);
    check_one(rt, dev, COPROC_INT32, 30011, 97, KD_SKEW, path, &rng);
    check_one(rt, dev, COPROC_UINT64, 97, 30011, KD_SKEW, path, &rng);
    /* One probe row meets a build key held by 90 % of 200003 rows, the others
     * one row each: on the GPU path that row's pairs are split into tasks
     * (coproc__join_skew_per_task), on the CPU path its list is walked. */
    check_one(rt, dev, COPROC_INT32, 200003, 5003, KD_HEAVY, path, &rng);
    check_one(rt, dev, COPROC_UINT64, 200003, 5003, KD_HEAVY, path, &rng);
}

static void test_hash_join_long_runs(void **state)
{
    (void)state;
    test_each_device_path(run_long_runs, NULL);
}

/* The tasks' splitting on any device: a loop cap forced so low that most
 * work-items' pairs are split, many of them mid-key. */
static void run_capped(coproc_runtime *rt, int dev, const char *path, void *user)
{
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    assert_non_null(strstr(info.quirks, "forced-loop-steps"));
    run_device(rt, dev, path, user);
    run_long_runs(rt, dev, path, user);
}

static void test_hash_join_loop_cap(void **state)
{
    (void)state;
    test_each_device_path_quirks("max_loop_steps=300", run_capped, NULL);
}

static void test_hash_join_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t k[4] = {1, 2, 1, 2};
    uint32_t u[4] = {1, 2, 3, 4};
    float f[4] = {1, 2, 3, 4};
    coproc_column *a = NULL, *b = NULL, *fc = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, k, 4, &a));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, u, 4, &b));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_FLOAT32, f, 4, &fc));
    coproc_join_result r;
    memset(&r, 0xAB, sizeof r);
    assert_status(COPROC_NULL_POINTER, coproc_hash_join(NULL, a, a, &r));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join(rt, a, a, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join(rt, NULL, a, &r));
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    assert_null(r.left); /* failures leave no output */
    assert_int_equal(r.count, 0);
    assert_status(COPROC_NULL_POINTER, coproc_hash_join(rt, a, NULL, &r));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_hash_join(rt, fc, fc, &r));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_hash_join(rt, a, fc, &r));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_hash_join(rt, a, b, &r));
    assert_true(strstr(coproc_errmsg(rt), "same type") != NULL);
    assert_null(r.left);
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_hash_join(rt2, a, a, &r));
    coproc_column *other = NULL;
    assert_ok(rt2, coproc_column_upload(rt2, 0, COPROC_INT32, k, 4, &other));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_hash_join(rt, a, other, &r));
    assert_null(r.right);
    coproc_column_free(other);
    coproc_close(rt2);
    if (coproc_device_count(rt) > 1) {
        coproc_column *c1 = NULL;
        assert_ok(rt, coproc_column_upload(rt, 1, COPROC_INT32, k, 4, &c1));
        assert_status(COPROC_WRONG_DEVICE, coproc_hash_join(rt, a, c1, &r));
        coproc_column_free(c1);
    }
    /* A good call after the bad ones: {1,2,1,2} with itself gives 8 pairs. */
    assert_ok(rt, coproc_hash_join(rt, a, a, &r));
    assert_int_equal(r.count, 8);
    coproc_join_result_free(&r);
    uint64_t count = 99;
    assert_ok(rt, coproc_hash_join_count(rt, a, a, &count));
    assert_int_equal(count, 8);
    assert_status(COPROC_NULL_POINTER, coproc_hash_join_count(NULL, a, a, &count));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join_count(rt, a, a, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_hash_join_count(rt, NULL, a, &count));
    assert_int_equal(count, 0);
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_hash_join_count(rt, fc, fc, &count));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_hash_join_count(rt, a, b, &count));
    assert_true(strstr(coproc_errmsg(rt), "same type") != NULL);
    coproc_join_result_free(NULL);
    coproc_column_free(a);
    coproc_column_free(b);
    coproc_column_free(fc);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_join_matches_reference),
        cmocka_unit_test(test_hash_join_long_runs),
        cmocka_unit_test(test_hash_join_loop_cap),
        cmocka_unit_test(test_hash_join_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
