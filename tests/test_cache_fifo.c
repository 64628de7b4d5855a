/* test_cache_fifo.c - cache files that are not regular files (issue 18): a
 * FIFO nobody writes in place of a device profile, of the kernel binaries or
 * of a sim: profile made coproc_open (or the first operator) wait forever.
 * Each must now be refused at once - the profile with a warning naming it and
 * a fresh calibration saved in its place, the binaries rebuilt - and an alarm
 * turns a regression into a failure instead of a hang.
 * Reaches into cost/profile.h for the profile's path (a hash of the device's
 * fingerprint) and the loader's status. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#include "core/runtime.h"
#include "cost/profile.h"

typedef struct logbuf {
    char text[16384];
} logbuf;

static void catch_log(void *user, coproc_log_level level, const char *msg)
{
    logbuf *b = user;
    if (level > COPROC_LOG_WARN)
        return;
    size_t n = strlen(b->text);
    snprintf(b->text + n, sizeof b->text - n, "%s\n", msg);
}

static coproc_runtime *open_in(const char *dir, coproc_calibration cal, logbuf *b)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.cache_dir = dir;
    o.calibration = cal;
    if (b) {
        memset(b, 0, sizeof *b);
        o.log = catch_log;
        o.log_user = b;
    }
    return test_open_with(&o);
}

static int is_fifo(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

static int is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void sum_once(coproc_runtime *rt)
{
    int32_t x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i;
    coproc_column *c = NULL;
    coproc_scalar s;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 100, &c));
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, c, &s));
    assert_int_equal(s.v.i64, 4950);
    coproc_column_free(c);
}

static void remove_tree(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_profile_fifo(void **state)
{
    (void)state;
    char *dir = test_temp_dir("fifo-profile");
    coproc_runtime *rt = open_in(dir, COPROC_CALIBRATION_OFF, NULL);
    char path[1200];
    assert_int_equal(coproc__profile_path(rt, &rt->devices[0], path, sizeof path), 0);
    assert_int_equal(mkfifo(path, 0644), 0);

    /* The loader refuses it at once, as it does a corrupt file. */
    coproc__profile *p = malloc(sizeof *p);
    assert_int_equal(coproc__profile_load(rt, &rt->devices[0], p), COPROC_CORRUPT_PROFILE);
    assert_non_null(strstr(coproc_errmsg(rt), "not a regular file"));
    free(p);
    coproc_close(rt);

    /* coproc_open with calibration: a warning naming the file, a quick
     * calibration, and its profile saved in place of the FIFO. */
    logbuf b;
    rt = open_in(dir, COPROC_CALIBRATION_AUTO, &b);
    if (!strstr(b.text, "not a regular file") || !strstr(b.text, path))
        fail_msg("no warning naming %s; log:\n%s", path, b.text);
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    coproc_close(rt);
    assert_true(is_regular(path));
    remove_tree(dir);
    free(dir);
}

/* Replace every kernels/<program>-<key>.bin of dir by a FIFO; how many. */
static int fifo_every_binary(const char *dir)
{
    char kdir[1100], path[1400];
    snprintf(kdir, sizeof kdir, "%s/kernels", dir);
    DIR *d = opendir(kdir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", kdir, e->d_name);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkfifo(path, 0644), 0);
        assert_true(is_fifo(path));
        n++;
    }
    closedir(d);
    return n;
}

static void test_kernel_cache_fifo(void **state)
{
    (void)state;
    char *dir = test_temp_dir("fifo-kernels");
    coproc_runtime *rt = open_in(dir, COPROC_CALIBRATION_OFF, NULL);
    sum_once(rt); /* builds the reduce program and caches its binary */
    coproc_close(rt);
    assert_true(fifo_every_binary(dir) >= 1);

    rt = open_in(dir, COPROC_CALIBRATION_OFF, NULL);
    sum_once(rt); /* must not wait on the FIFO: rebuilt from source */
    coproc_stats st = {.struct_size = sizeof st};
    assert_ok(rt, coproc_stats_get(rt, &st));
    assert_true(st.programs_built >= 1);
    assert_int_equal(st.programs_from_cache, 0);
    coproc_close(rt);
    remove_tree(dir);
    free(dir);
}

static void test_sim_profile_fifo(void **state)
{
    (void)state;
    char *dir = test_temp_dir("fifo-sim");
    char path[1200], spec[1300];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    snprintf(spec, sizeof spec, "sim:%s", path);
    coproc_options o;
    coproc_options_init(&o);
    o.devices = spec;
    char *saved = getenv("COPROC_DEVICES") ? strdup(getenv("COPROC_DEVICES")) : NULL;
    unsetenv("COPROC_DEVICES"); /* it would override the selection */
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (saved) {
        setenv("COPROC_DEVICES", saved, 1);
        free(saved);
    }
    if (s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE) {
        coproc_close(rt);
        remove_tree(dir);
        free(dir);
        skip();
    }
    assert_int_equal(s, COPROC_CORRUPT_PROFILE);
    assert_non_null(strstr(coproc_errmsg(rt), "not a regular file"));
    coproc_close(rt);
    remove_tree(dir);
    free(dir);
}

int main(void)
{
    /* Binaries are stored even where the driver keeps its own builds (PoCL). */
    setenv("COPROC_KEEP_BINARIES", "1", 1);
    /* A hang is the failure this test exists for: end it as one. */
    alarm(240);
    unsetenv("COPROC_CACHE_DIR");  /* it would override options.cache_dir */
    unsetenv("COPROC_CALIBRATE");  /* it would override options.calibration */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_fifo),
        cmocka_unit_test(test_kernel_cache_fifo),
        cmocka_unit_test(test_sim_profile_fifo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
