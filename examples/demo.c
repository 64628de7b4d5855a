/* demo.c - the main job: list every device, then run an operator on each and
 * check it against a plain C loop. Start here to see how coproc is used. */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>

#define ROWS (1u << 22)

int main(void)
{
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(NULL, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return 69; /* EX_UNAVAILABLE */
    }

    int32_t *data = malloc(ROWS * sizeof *data);
    if (!data) {
        coproc_close(rt);
        return 71;
    }
    int64_t expected = 0;
    unsigned seed = 42;
    for (size_t i = 0; i < ROWS; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = (int32_t)(seed >> 8) - (1 << 22);
        expected += data[i];
    }

    int failures = 0;
    printf("coproc %s: %d device(s)\n", coproc_version_string(), coproc_device_count(rt));
    for (int i = 0; i < coproc_device_count(rt); i++) {
        coproc_device_info d;
        coproc_device_info_get(rt, i, &d);
        printf("  [%d] %-4s %s (%s, driver %s), %u CUs, %llu MiB, PCI %s, NUMA node %d, cores %s\n",
               i, coproc_device_type_name(d.type), d.name, d.platform, d.driver_version,
               d.compute_units, (unsigned long long)(d.global_mem_bytes >> 20),
               d.pci_bus_id[0] ? d.pci_bus_id : "-", d.numa_node, d.cpuset);
    }
    for (int i = 0; i < coproc_device_count(rt); i++) {
        coproc_column *col = NULL;
        coproc_scalar sum;
        s = coproc_column_upload(rt, i, COPROC_INT32, data, ROWS, &col);
        if (s == COPROC_OK)
            s = coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum);
        if (s != COPROC_OK) {
            printf("  device %d: sum failed: %s: %s\n", i, coproc_status_name(s), coproc_errmsg(rt));
            failures++;
        } else {
            int ok = sum.v.i64 == expected;
            printf("  device %d: sum of %u int32 = %lld (C loop: %lld) %s\n", i, ROWS,
                   (long long)sum.v.i64, (long long)expected, ok ? "ok" : "MISMATCH");
            failures += !ok;
        }
        coproc_column_free(col);
    }
    free(data);
    coproc_close(rt);
    return failures ? 1 : 0;
}
