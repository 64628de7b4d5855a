/* test_discovery.c - discovery finds the devices with sane fields, and the
 * device selection (COPROC_DEVICES / options.devices) filters them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static void check_info(const coproc_device_info *d)
{
    assert_true(d->name[0] != '\0');
    assert_true(d->platform[0] != '\0');
    assert_true(d->driver_version[0] != '\0');
    assert_true(strncmp(d->opencl_version, "OpenCL ", 7) == 0);
    assert_true(d->type == COPROC_DEVICE_CPU || d->type == COPROC_DEVICE_GPU ||
                d->type == COPROC_DEVICE_ACCELERATOR || d->type == COPROC_DEVICE_OTHER);
    assert_true(d->compute_units > 0);
    assert_true(d->global_mem_bytes > 0);
    assert_true(d->max_alloc_bytes > 0 && d->max_alloc_bytes <= d->global_mem_bytes);
    assert_true(d->local_mem_bytes > 0);
    assert_true(d->max_work_group_size >= 1);
    assert_true(d->numa_node >= -1);
    assert_true(d->cpuset[0] != '\0'); /* hwloc placed it somewhere */
    if (d->pci_bus_id[0]) {
        unsigned a, b, c, e;
        assert_int_equal(sscanf(d->pci_bus_id, "%x:%x:%x.%x", &a, &b, &c, &e), 4);
    }
}

static void test_finds_devices(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int n = coproc_device_count(rt);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
        coproc_device_info d;
        assert_ok(rt, coproc_device_info_get(rt, i, &d));
        check_info(&d);
    }
    coproc_device_info d;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_info_get(rt, n, &d));
    assert_true(strstr(coproc_errmsg(rt), "out of range") != NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_info_get(rt, -1, &d));
    assert_status(COPROC_NULL_POINTER, coproc_device_info_get(rt, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_device_info_get(NULL, 0, &d));
    assert_int_equal(coproc_device_count(NULL), 0);
    coproc_close(rt);
}

static void test_pocl_cpu_device(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open("cpu"); /* exits 77 without a CPU device */
    int found_pocl = 0;
    for (int i = 0; i < coproc_device_count(rt); i++) {
        coproc_device_info d;
        assert_ok(rt, coproc_device_info_get(rt, i, &d));
        assert_int_equal(d.type, COPROC_DEVICE_CPU);
        if (strstr(d.platform, "Portable Computing Language")) {
            found_pocl = 1;
            assert_true(d.host_unified_memory);
            assert_true(d.pci_bus_id[0] == '\0'); /* CPUs have no PCI id */
            /* hwloc gives the CPU device the whole machine: a node set and cores. */
            assert_true(d.nodeset[0] != '\0');
            assert_true(d.numa_node >= 0 || strchr(d.nodeset, '-') || strchr(d.nodeset, ','));
        }
    }
    coproc_close(rt);
    if (!found_pocl) {
        fprintf(stderr, "skipped: no PoCL CPU device\n");
        exit(TEST_SKIP);
    }
}

static int open_with(const char *spec, coproc_runtime **rt)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = spec;
    return coproc_open(&o, rt);
}

static void test_selection(void **state)
{
    (void)state;
    coproc_runtime *all = test_open(NULL);
    int n = coproc_device_count(all), ncpu = 0, ngpu = 0;
    for (int i = 0; i < n; i++) {
        coproc_device_info d;
        coproc_device_info_get(all, i, &d);
        ncpu += d.type == COPROC_DEVICE_CPU;
        ngpu += d.type == COPROC_DEVICE_GPU;
    }
    coproc_close(all);

    coproc_runtime *rt = NULL;
    /* By index: exactly that device. */
    assert_int_equal(open_with("0", &rt), COPROC_OK);
    assert_int_equal(coproc_device_count(rt), 1);
    coproc_close(rt);
    /* By kind. */
    coproc_status s = open_with("gpu", &rt);
    if (ngpu) {
        assert_int_equal(s, COPROC_OK);
        assert_int_equal(coproc_device_count(rt), ngpu);
    } else {
        assert_int_equal(s, COPROC_NO_DEVICE);
        assert_true(strstr(coproc_errmsg(rt), "gpu") != NULL);
    }
    coproc_close(rt);
    s = open_with("cpu", &rt);
    assert_int_equal(s, ncpu ? COPROC_OK : COPROC_NO_DEVICE);
    if (ncpu)
        assert_int_equal(coproc_device_count(rt), ncpu);
    coproc_close(rt);
    /* Out-of-range index and nonsense. */
    assert_int_equal(open_with("99", &rt), COPROC_NO_DEVICE);
    assert_true(strstr(coproc_errmsg(rt), "99") != NULL);
    coproc_close(rt);
    assert_int_equal(open_with("fast", &rt), COPROC_INVALID_ARGUMENT);
    assert_true(strstr(coproc_errmsg(rt), "fast") != NULL);
    coproc_close(rt);
    /* The environment overrides the options. */
    setenv("COPROC_DEVICES", "99", 1);
    assert_int_equal(open_with("0", &rt), COPROC_NO_DEVICE);
    coproc_close(rt);
    setenv("COPROC_DEVICES", "0", 1);
    assert_int_equal(open_with("all", &rt), COPROC_OK);
    assert_int_equal(coproc_device_count(rt), 1);
    coproc_close(rt);
    unsetenv("COPROC_DEVICES");
}

static void test_bad_options(void **state)
{
    (void)state;
    coproc_runtime *rt = (coproc_runtime *)1;
    assert_int_equal(coproc_open(NULL, NULL), COPROC_NULL_POINTER);
    coproc_options o;
    coproc_options_init(&o);
    o.struct_size = 3; /* not initialised by coproc_options_init */
    assert_int_equal(coproc_open(&o, &rt), COPROC_INVALID_ARGUMENT);
    assert_null(rt);
    o.struct_size = sizeof o + 64; /* from a newer, larger version: refused */
    assert_int_equal(coproc_open(&o, &rt), COPROC_INVALID_ARGUMENT);
    coproc_options_init(&o);
    o.log_level = (coproc_log_level)17;
    assert_int_equal(coproc_open(&o, &rt), COPROC_INVALID_ARGUMENT);
    /* Defaults when opts is NULL. */
    assert_int_equal(coproc_open(NULL, &rt), COPROC_OK);
    coproc_close(rt);
    coproc_close(NULL); /* a no-op */
    assert_string_equal(coproc_errmsg(NULL), "no runtime (NULL handle)");
    coproc_stats st = {.struct_size = 1};
    assert_int_equal(coproc_stats_get(NULL, &st), COPROC_NULL_POINTER);
}

static void test_status_names_and_version(void **state)
{
    (void)state;
    assert_string_equal(coproc_status_name(COPROC_OK), "COPROC_OK");
    assert_string_equal(coproc_status_name(COPROC_NO_PLATFORM), "COPROC_NO_PLATFORM");
    assert_string_equal(coproc_status_name((coproc_status)999), "COPROC_UNKNOWN");
    for (int s = 0; s < COPROC__STATUS_COUNT; s++) {
        assert_true(strncmp(coproc_status_name((coproc_status)s), "COPROC_", 7) == 0);
        assert_true(coproc_status_message((coproc_status)s)[0] != '\0');
    }
    assert_int_equal(coproc_version(), COPROC_VERSION_HEX);
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", COPROC_VERSION_MAJOR, COPROC_VERSION_MINOR,
             COPROC_VERSION_PATCH);
    assert_string_equal(coproc_version_string(), v);
    assert_int_equal(coproc_type_size(COPROC_INT64), 8);
    assert_int_equal(coproc_type_size((coproc_type)77), 0);
    assert_string_equal(coproc_type_name(COPROC_FLOAT32), "float32");
}

int main(void)
{
    /* Selection is this test's subject (it sets COPROC_DEVICES itself): one
     * from outside (the rusticl run's platform=rusticl) would replace every
     * selection it makes. Discovery still sees every platform, rusticl's too. */
    unsetenv("COPROC_DEVICES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_devices),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_status_names_and_version),
        cmocka_unit_test(test_pocl_cpu_device), /* last: it may exit 77 */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
