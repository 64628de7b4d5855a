/* topology.h - place devices in the machine with hwloc (NUMA node, nearby cores). */
#ifndef COPROC_TOPOLOGY_H
#define COPROC_TOPOLOGY_H

#include "backend/opencl/device.h"

/*
 * Fill numa_node, nodeset and cpuset of each found device from an hwloc
 * topology with PCI objects: GPUs by PCI bus id, CPU devices get the whole
 * machine (hwloc does not list CPU OpenCL devices). Never fails: on hwloc
 * trouble fields stay unknown (-1, "") and a warning is logged.
 */
void coproc__topology_place(coproc_runtime *rt, coproc__found_device *found, int count);
/* It also sets rt->cpu_cache_bytes (0 when hwloc cannot tell). */

/* Bind the calling thread (a device's feeder) to the cores near device d, when
 * the device sits on one NUMA node; a no-op for devices that span the machine. */
void coproc__topology_bind_thread(coproc_runtime *rt, int d);

#endif
