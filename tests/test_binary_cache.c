/* test_binary_cache.c - kernels are compiled once, then loaded from the on-disk
 * binary cache by the next runtime (proved by the runtime's counters and a
 * timing ratio printed, not asserted); corrupt or truncated cache files are
 * rebuilt, never trusted. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static coproc_runtime *open_cache(const char *dir, int disable)
{
    coproc_options o;
    coproc_options_init(&o);
    o.cache_dir = dir;
    o.devices = "0";
    o.disable_binary_cache = disable;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        coproc_close(rt);
        exit(TEST_SKIP);
    }
    assert_int_equal(s, COPROC_OK);
    return rt;
}

/* Run a sum (builds the reduce program); returns seconds taken. */
static double run_sum(coproc_runtime *rt)
{
    int32_t x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = i - 300;
    coproc_column *col = NULL;
    coproc_scalar sum;
    double t0 = test_now();
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 1000, &col));
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum));
    double t = test_now() - t0;
    assert_int_equal(sum.v.i64, 999 * 1000 / 2 - 300 * 1000);
    coproc_column_free(col);
    return t;
}

static coproc_stats stats(coproc_runtime *rt)
{
    coproc_stats s = {.struct_size = sizeof s};
    assert_ok(rt, coproc_stats_get(rt, &s));
    return s;
}

/* Apply fn to every file in dir/kernels; returns how many. */
static int for_each_cache_file(const char *dir, void (*fn)(const char *path))
{
    char kdir[600], path[1200];
    snprintf(kdir, sizeof kdir, "%s/kernels", dir);
    DIR *d = opendir(kdir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", kdir, e->d_name);
        fn(path);
        n++;
    }
    closedir(d);
    return n;
}

static void garble(const char *path)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 40, SEEK_SET); /* past the header: the binary itself */
    fputs("garbage garbage garbage", f);
    fclose(f);
}

static void truncate_file(const char *path) { assert_int_equal(truncate(path, 5), 0); }
static void remove_file(const char *path) { unlink(path); }

/* Remove a test's cache directory (its kernels/ files) and free its name. */
static void remove_cache_dir(char *dir)
{
    for_each_cache_file(dir, remove_file);
    char kdir[600];
    snprintf(kdir, sizeof kdir, "%s/kernels", dir);
    rmdir(kdir);
    rmdir(dir);
    free(dir);
}

static void test_second_open_hits_cache(void **state)
{
    (void)state;
    unsetenv("COPROC_CACHE_DIR"); /* it would override options.cache_dir */
    char *dir = test_temp_dir("kcache");

    coproc_runtime *rt = open_cache(dir, 0);
    double cold = run_sum(rt);
    coproc_stats s = stats(rt);
    assert_true(s.programs_built >= 1);
    assert_int_equal(s.programs_from_cache, 0);
    assert_true(s.program_cache_writes >= 1);
    /* Built once per device per runtime: a second operator builds nothing. */
    run_sum(rt);
    assert_int_equal(stats(rt).programs_built, s.programs_built);
    coproc_close(rt);

    rt = open_cache(dir, 0);
    double warm = run_sum(rt);
    s = stats(rt);
    assert_int_equal(s.programs_built, 0);
    assert_true(s.programs_from_cache >= 1);
    coproc_close(rt);
    printf("first operator: %.1f ms compiling, %.1f ms from the binary cache (%.1fx)\n",
           cold * 1e3, warm * 1e3, cold / warm);

    /* A garbled binary: whether the driver rejects it or not, the key check or
     * the build must not give a wrong answer; a truncated one is rebuilt. */
    assert_true(for_each_cache_file(dir, truncate_file) >= 1);
    rt = open_cache(dir, 0);
    run_sum(rt);
    assert_true(stats(rt).programs_built >= 1);
    coproc_close(rt);
    assert_true(for_each_cache_file(dir, garble) >= 1);
    rt = open_cache(dir, 0);
    run_sum(rt); /* asserts the right sum */
    coproc_close(rt);

    /* Disabled cache: always compiles, writes nothing. */
    rt = open_cache(dir, 1);
    run_sum(rt);
    s = stats(rt);
    assert_true(s.programs_built >= 1);
    assert_int_equal(s.programs_from_cache + s.program_cache_writes, 0);
    coproc_close(rt);

    remove_cache_dir(dir);
}

/* Where the driver keeps its own builds (PoCL, its kernel cache on) nothing
 * is written, and a second runtime builds from source again; elsewhere the
 * binary is written. COPROC_KEEP_BINARIES other than "1" changes nothing. */
static void test_driver_kept_builds(void **state)
{
    (void)state;
    unsetenv("COPROC_CACHE_DIR");
    char *dir = test_temp_dir("kcache-driver");
    setenv("COPROC_KEEP_BINARIES", "yes", 1);
    coproc_runtime *rt = open_cache(dir, 0);
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    const char *pocl_cache = getenv("POCL_KERNEL_CACHE");
    int kept = strstr(info.platform, "Portable Computing Language") != NULL &&
               !(pocl_cache && strcmp(pocl_cache, "0") == 0);
    run_sum(rt);
    coproc_stats s = stats(rt);
    assert_true(s.programs_built >= 1);
    if (kept)
        assert_int_equal(s.program_cache_writes, 0);
    else
        assert_true(s.program_cache_writes >= 1);
    coproc_close(rt);
    rt = open_cache(dir, 0);
    run_sum(rt); /* asserts the right sum */
    s = stats(rt);
    if (kept)
        assert_int_equal(s.programs_from_cache, 0);
    else
        assert_true(s.programs_from_cache >= 1);
    coproc_close(rt);
    setenv("COPROC_KEEP_BINARIES", "1", 1);
    remove_cache_dir(dir);
}

/* Several processes share one cache directory and build the same programs
 * at the same moment (each writes its binary: a temporary file renamed into
 * place): every process gets the right sum, and the cache they leave is whole
 * - the next runtime builds nothing. The children are this program again,
 * started with COPROC_TEST_CACHE_CHILD=DIR (a fork of a process that has run
 * OpenCL would not have the driver's threads). */
enum { WRITERS = 4 };

static void test_concurrent_writers(void **state)
{
    (void)state;
    char *dir = test_temp_dir("cache-writers");
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    pid_t pid[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        pid[i] = fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) {
            setenv("COPROC_TEST_CACHE_CHILD", dir, 1);
            execl(self, self, (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < WRITERS; i++) {
        int status = 0;
        assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == TEST_SKIP)
            skip();
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    coproc_runtime *rt = open_cache(dir, 0);
    run_sum(rt);
    coproc_stats s = stats(rt);
    assert_int_equal(s.programs_built, 0);
    assert_true(s.programs_from_cache >= 1);
    coproc_close(rt);
    remove_cache_dir(dir);
}

/* A child of test_concurrent_writers: one sum through the shared cache. */
static int cache_child(const char *dir)
{
    coproc_runtime *rt = open_cache(dir, 0);
    run_sum(rt);
    coproc_close(rt);
    return 0;
}

int main(void)
{
    /* Binaries are stored even where the driver keeps its own builds (PoCL). */
    setenv("COPROC_KEEP_BINARIES", "1", 1);
    const char *child = getenv("COPROC_TEST_CACHE_CHILD");
    if (child)
        return cache_child(child);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_second_open_hits_cache),
                                       cmocka_unit_test(test_driver_kept_builds),
                                       cmocka_unit_test(test_concurrent_writers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
