/* topology.c - where each device sits in the machine, from hwloc. */
#include "backend/opencl/topology.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "core/runtime.h"

static void fill_sets(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                      hwloc_const_nodeset_t nodeset, coproc_device_info *info)
{
    if (cpuset)
        hwloc_bitmap_list_snprintf(info->cpuset, sizeof info->cpuset, cpuset);
    if (nodeset && !hwloc_bitmap_iszero(nodeset)) {
        hwloc_bitmap_list_snprintf(info->nodeset, sizeof info->nodeset, nodeset);
        info->numa_node = hwloc_bitmap_weight(nodeset) == 1 ? hwloc_bitmap_first(nodeset) : -1;
    }
    (void)topo;
}

/* Bytes of the outermost level of data caches, summed over its instances. */
static uint64_t largest_caches(hwloc_topology_t topo)
{
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                              HWLOC_OBJ_L1CACHE};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        uint64_t sum = 0;
        hwloc_obj_t o = NULL;
        while ((o = hwloc_get_next_obj_by_type(topo, levels[l], o)))
            if (o->attr && o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION)
                sum += o->attr->cache.size;
        if (sum)
            return sum;
    }
    return 0;
}

void coproc__topology_place(coproc_runtime *rt, coproc__found_device *found, int count)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) {
        coproc__log(rt, COPROC_LOG_WARN, "hwloc_topology_init failed; device placement unknown");
        return;
    }
    /* PCI devices and the OS devices behind them (GPUs, OpenCL), nothing else. */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        coproc__log(rt, COPROC_LOG_WARN, "hwloc_topology_load failed; device placement unknown");
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    rt->cpu_cache_bytes = largest_caches(topo);
    for (int i = 0; i < count; i++) {
        coproc_device_info *info = &found[i].info;
        unsigned domain, bus, dev, func;
        if (info->pci_bus_id[0] &&
            sscanf(info->pci_bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &func) == 4) {
            hwloc_obj_t pci = hwloc_get_pcidev_by_busid(topo, domain, bus, dev, func);
            hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
            if (near) {
                fill_sets(topo, near->cpuset, near->nodeset, info);
                continue;
            }
            coproc__log(rt, COPROC_LOG_INFO,
                        "device %s at PCI %s not in the hwloc topology; placing it on the "
                        "whole machine", info->name, info->pci_bus_id);
        }
        /* CPU devices (hwloc does not list CPU OpenCL devices) and devices
         * without PCI information span the machine. */
        fill_sets(topo, root->cpuset, root->nodeset, info);
    }
    hwloc_topology_destroy(topo);
}

void coproc__topology_bind_thread(coproc_runtime *rt, int d)
{
    const coproc_device_info *info = &rt->devices[d].info;
    if (info->numa_node < 0 || info->type == COPROC_DEVICE_CPU || !info->cpuset[0])
        return;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (hwloc_bitmap_list_sscanf(set, info->cpuset) == 0) {
        unsigned i;
        hwloc_bitmap_foreach_begin(i, set) {
            if (i < CPU_SETSIZE)
                CPU_SET(i, &cpus);
        }
        hwloc_bitmap_foreach_end();
        if (CPU_COUNT(&cpus) > 0 && pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0)
            coproc__log(rt, COPROC_LOG_DEBUG, "could not bind device %d's worker to cores %s", d,
                        info->cpuset);
    }
    hwloc_bitmap_free(set);
}
