/* device_list.c - print the devices with their topology. */
#include "device_list.h"

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

void coproc_print_device_table(FILE *f, const coproc_runtime *rt)
{
    int n = coproc_device_count(rt);
    fprintf(f, "%-3s %-4s %-34s %-22s %4s %9s %9s %-13s %-4s %-10s %s\n", "#", "type", "name",
            "platform / driver", "CUs", "mem MiB", "alloc MiB", "PCI", "NUMA", "cores", "notes");
    for (int i = 0; i < n; i++) {
        coproc_device_info d;
        if (coproc_device_info_get(rt, i, &d) != COPROC_OK)
            continue;
        char drv[64], numa[72], notes[256] = "";
        snprintf(drv, sizeof drv, "%.12s %.9s", d.platform, d.driver_version);
        if (d.numa_node >= 0)
            snprintf(numa, sizeof numa, "%d", d.numa_node);
        else
            snprintf(numa, sizeof numa, "%s", d.nodeset[0] ? d.nodeset : "?");
        size_t o = 0;
        if (d.host_unified_memory)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "host-unified ");
        if (!d.has_fp64 && o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "no-fp64 ");
        if (!d.has_int64_atomics && o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "no-int64-atomics ");
        if (!d.has_fp32_subnormals && o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "fp32-flushes-subnormals ");
        if (d.quirks[0] && o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "quirks=%s ", d.quirks);
        if (d.max_rows_per_item && o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "rows/work-item<=%llu ",
                                  (unsigned long long)d.max_rows_per_item);
        if (o < sizeof notes)
            o += (size_t)snprintf(notes + o, sizeof notes - o, "work-group<=%zu ",
                                  d.quirk_max_work_group && d.quirk_max_work_group <
                                  d.max_work_group_size ? d.quirk_max_work_group
                                  : d.max_work_group_size);
        if (d.same_hardware_as >= 0 && o < sizeof notes)
            snprintf(notes + o, sizeof notes - o, "same CPU as #%d", d.same_hardware_as);
        fprintf(f, "%-3d %-4s %-34.34s %-22.22s %4u %9llu %9llu %-13s %-4s %-10.10s %s\n", i,
                coproc_device_type_name(d.type), d.name, drv, d.compute_units,
                (unsigned long long)(d.global_mem_bytes >> 20),
                (unsigned long long)(d.max_alloc_bytes >> 20), or_dash(d.pci_bus_id), numa,
                or_dash(d.cpuset), notes);
    }
}

json_t *coproc_device_list_json(const coproc_runtime *rt)
{
    json_t *arr = json_array();
    int n = coproc_device_count(rt);
    for (int i = 0; i < n; i++) {
        coproc_device_info d;
        if (coproc_device_info_get(rt, i, &d) != COPROC_OK)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(i));
        json_object_set_new(o, "discovered_index", json_integer(d.discovered_index));
        json_object_set_new(o, "name", json_string(d.name));
        json_object_set_new(o, "vendor", json_string(d.vendor));
        json_object_set_new(o, "type", json_string(coproc_device_type_name(d.type)));
        json_object_set_new(o, "platform", json_string(d.platform));
        json_object_set_new(o, "driver_version", json_string(d.driver_version));
        json_object_set_new(o, "opencl_version", json_string(d.opencl_version));
        json_object_set_new(o, "opencl_c_version", json_string(d.opencl_c_version));
        json_object_set_new(o, "compute_units", json_integer(d.compute_units));
        json_object_set_new(o, "global_mem_bytes", json_integer((json_int_t)d.global_mem_bytes));
        json_object_set_new(o, "local_mem_bytes", json_integer((json_int_t)d.local_mem_bytes));
        json_object_set_new(o, "max_alloc_bytes", json_integer((json_int_t)d.max_alloc_bytes));
        json_object_set_new(o, "max_work_group_size", json_integer((json_int_t)d.max_work_group_size));
        json_object_set_new(o, "host_unified_memory", json_boolean(d.host_unified_memory));
        json_object_set_new(o, "fp64", json_boolean(d.has_fp64));
        json_object_set_new(o, "int64_atomics", json_boolean(d.has_int64_atomics));
        json_object_set_new(o, "fp32_subnormals", json_boolean(d.has_fp32_subnormals));
        json_object_set_new(o, "quirks", json_string(d.quirks));
        json_object_set_new(o, "max_rows_per_item", json_integer((json_int_t)d.max_rows_per_item));
        json_object_set_new(o, "quirk_max_work_group",
                            json_integer((json_int_t)d.quirk_max_work_group));
        json_object_set_new(o, "pci_bus_id", d.pci_bus_id[0] ? json_string(d.pci_bus_id) : json_null());
        json_object_set_new(o, "numa_node", d.numa_node >= 0 ? json_integer(d.numa_node) : json_null());
        json_object_set_new(o, "nodeset", json_string(d.nodeset));
        json_object_set_new(o, "cpuset", json_string(d.cpuset));
        json_object_set_new(o, "same_hardware_as",
                            d.same_hardware_as >= 0 ? json_integer(d.same_hardware_as) : json_null());
        json_array_append_new(arr, o);
    }
    return arr;
}
