/* test_util.c - see testlib.h. */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/runtime.h"

coproc_runtime *test_open(const char *devices)
{
    coproc_options opts;
    coproc_options_init(&opts);
    opts.devices = devices;
    return test_open_with(&opts);
}

coproc_runtime *test_open_with(const coproc_options *opts)
{
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(opts, &rt);
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        fprintf(stderr, "skipped: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        exit(TEST_SKIP);
    }
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        exit(1);
    }
    return rt;
}

void test_force_path(coproc_runtime *rt, int device, int cpu_path)
{
    coproc__device_set_path(&rt->devices[device], cpu_path);
}

void test_each_device_path(test_device_fn fn, void *user)
{
    coproc_runtime *probe = test_open(NULL);
    int n = coproc_device_count(probe);
    coproc_device_info info[16];
    for (int i = 0; i < n && i < 16; i++)
        coproc_device_info_get(probe, i, &info[i]);
    coproc_close(probe);
    /* COPROC_KERNEL_PATH=cpu|gpu: only that path, on every device (the Oclgrind
     * checks run the CPU path on its simulated GPU so). */
    const char *only = getenv("COPROC_KERNEL_PATH");
    if (only && strcmp(only, "cpu") != 0 && strcmp(only, "gpu") != 0)
        only = NULL;
    for (int i = 0; i < n && i < 16; i++) {
        for (int cpu_path = 1; cpu_path >= 0; cpu_path--) {
            if (only && strcmp(only, cpu_path ? "cpu" : "gpu") != 0)
                continue;
            if (!only && info[i].type != COPROC_DEVICE_CPU && cpu_path)
                continue; /* GPUs run only their own path */
            char spec[16];
            snprintf(spec, sizeof spec, "%d", info[i].discovered_index);
            coproc_runtime *rt = test_open(spec);
            test_force_path(rt, 0, cpu_path);
            fn(rt, 0, cpu_path ? "cpu-path" : "gpu-path", user);
            coproc_close(rt);
        }
    }
}

void test_each_device_path_quirks(const char *quirks, test_device_fn fn, void *user)
{
    const char *old = getenv("COPROC_QUIRKS");
    char *keep = old ? strdup(old) : NULL, q[256];
    snprintf(q, sizeof q, "%s%s%s", keep ? keep : "", keep ? "," : "", quirks);
    setenv("COPROC_QUIRKS", q, 1);
    test_each_device_path(fn, user);
    if (keep)
        setenv("COPROC_QUIRKS", keep, 1);
    else
        unsetenv("COPROC_QUIRKS");
    free(keep);
}

uint64_t test_rand(test_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t test_rand_below(test_rng *r, uint64_t bound)
{
    return bound ? test_rand(r) % bound : 0;
}

const size_t test_edge_sizes[] = {0,    1,    2,    3,    7,    8,    9,     63,    64,
                                  65,   255,  256,  257,  1023, 1024, 1025,  4095,  4096,
                                  4097, 8191, 8193, 65537, 100003, 1u << 20, (size_t)-1};

char *test_temp_dir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/coproc-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    char *dir = mkdtemp(tmpl);
    if (!dir) {
        perror("mkdtemp");
        exit(1);
    }
    return strdup(dir);
}

int test_cmp_pair(const void *a, const void *b)
{
    const test_pair *x = a, *y = b;
    if (x->l != y->l)
        return x->l < y->l ? -1 : 1;
    return x->r < y->r ? -1 : x->r > y->r;
}

static uint64_t join_key(size_t ks, const void *k, size_t i)
{
    return ks == 4 ? ((const uint32_t *)k)[i] : ((const uint64_t *)k)[i];
}

typedef struct row_ref { uint64_t key; uint32_t row; } row_ref;

static int cmp_row_ref(const void *a, const void *b)
{
    const row_ref *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

test_pair *test_join_reference(size_t ks, const void *left, size_t nl, const void *right,
                               size_t nr, size_t *count)
{
    size_t cap = 1024, m = 0;
    test_pair *p = malloc(cap * sizeof *p);
    if (nl * nr <= 4000000) { /* the plainest possible: a nested loop */
        for (size_t l = 0; l < nl; l++)
            for (size_t r = 0; r < nr; r++)
                if (join_key(ks, left, l) == join_key(ks, right, r)) {
                    if (m == cap)
                        p = realloc(p, (cap *= 2) * sizeof *p);
                    p[m++] = (test_pair){(uint32_t)l, (uint32_t)r};
                }
    } else { /* big inputs: equal-key runs of the sorted left side */
        row_ref *s = malloc(nl * sizeof *s);
        for (size_t l = 0; l < nl; l++)
            s[l] = (row_ref){join_key(ks, left, l), (uint32_t)l};
        qsort(s, nl, sizeof *s, cmp_row_ref);
        for (size_t r = 0; r < nr; r++) {
            uint64_t k = join_key(ks, right, r);
            size_t lo = 0, hi = nl;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s[mid].key < k) lo = mid + 1; else hi = mid;
            }
            for (; lo < nl && s[lo].key == k; lo++) {
                if (m == cap)
                    p = realloc(p, (cap *= 2) * sizeof *p);
                p[m++] = (test_pair){s[lo].row, (uint32_t)r};
            }
        }
        free(s);
    }
    qsort(p, m, sizeof *p, test_cmp_pair);
    *count = m;
    return p;
}

int test_sort_cmp_keys(coproc_type t, const void *d, size_t a, size_t b)
{
    if (t == COPROC_INT32 || t == COPROC_INT64) {
        int64_t x = test_get_i(t, d, a), y = test_get_i(t, d, b);
        return x < y ? -1 : x > y;
    }
    if (t == COPROC_UINT32 || t == COPROC_UINT64) {
        uint64_t x = test_get_u(t, d, a), y = test_get_u(t, d, b);
        return x < y ? -1 : x > y;
    }
    double x = test_get_f(t, d, a), y = test_get_f(t, d, b);
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    if (x == 0 && y == 0)
        return (signbit(y) != 0) - (signbit(x) != 0);
    return x < y ? -1 : x > y;
}

void test_check_pairs(const uint32_t *gl, const uint32_t *gr, size_t m, const test_pair *want,
                      const char *ctx)
{
    test_pair *got = malloc((m ? m : 1) * sizeof *got);
    for (size_t i = 0; i < m; i++)
        got[i] = (test_pair){gl[i], gr[i]};
    qsort(got, m, sizeof *got, test_cmp_pair);
    for (size_t i = 0; i < m; i++)
        if (got[i].l != want[i].l || got[i].r != want[i].r)
            fail_msg("%s: pair %zu is (%u, %u), want (%u, %u)", ctx, i, got[i].l, got[i].r,
                     want[i].l, want[i].r);
    free(got);
}

void test_ref_argsort(coproc_type t, const void *d, size_t n, uint32_t *perm)
{
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = test_sort_cmp_keys(t, d, perm[b], perm[a]) < 0 ? perm[b++] : perm[a++];
            while (a < mid)
                tmp[o++] = perm[a++];
            while (b < hi)
                tmp[o++] = perm[b++];
        }
        memcpy(perm, tmp, n * sizeof *perm);
    }
    free(tmp);
}

double test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void test_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}
