/* test_util.c - see testlib.h. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

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
    for (int i = 0; i < n && i < 16; i++) {
        for (int cpu_path = 1; cpu_path >= 0; cpu_path--) {
            if (info[i].type != COPROC_DEVICE_CPU && cpu_path)
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
