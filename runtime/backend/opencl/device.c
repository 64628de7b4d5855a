/* device.c - OpenCL discovery, device selection, per-device context and queue. */
#include "backend/opencl/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <CL/cl_ext.h>

#include "backend/backend.h"

#include "data/residency.h"
#include "core/error.h"
#include "core/runtime.h"
#include "backend/opencl/program.h"
#include "backend/opencl/transfer.h"
#include "backend/opencl/sync.h"

/* NVIDIA's vendor queries (cl_nv_device_attribute_query); not in every header. */
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

#define MAX_PLATFORMS 16
#define MAX_DEVICES_PER_PLATFORM 64

/* A device string, truncated to size - 1 characters: drivers refuse a buffer
 * shorter than the whole string (PoCL's CL_DEVICE_VERSION exceeds 64 bytes). */
static void get_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return;
    char *all = malloc(len + 1);
    if (!all)
        return;
    if (clGetDeviceInfo(d, what, len, all, NULL) == CL_SUCCESS) {
        all[len] = '\0';
        snprintf(buf, size, "%s", all);
    }
    free(all);
}

static int has_extension(cl_device_id d, const char *ext)
{
    size_t len = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char *all = malloc(len + 1);
    if (!all)
        return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, all, NULL) == CL_SUCCESS) {
        all[len] = '\0';
        size_t elen = strlen(ext);
        for (char *p = strstr(all, ext); p; p = strstr(p + 1, ext)) {
            if ((p == all || p[-1] == ' ') && (p[elen] == ' ' || p[elen] == '\0')) {
                found = 1;
                break;
            }
        }
    }
    free(all);
    return found;
}

/* PCI bus id from cl_khr_pci_bus_info, else NVIDIA's or AMD's vendor query. */
static void query_pci_bus_id(cl_device_id d, char *out, size_t size)
{
    out[0] = '\0';
    if (has_extension(d, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr info;
        if (clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, NULL) == CL_SUCCESS) {
            snprintf(out, size, "%04x:%02x:%02x.%x", info.pci_domain & 0xffffu,
                     info.pci_bus & 0xffu, info.pci_device & 0x1fu, info.pci_function & 7u);
            return;
        }
    }
    if (has_extension(d, "cl_nv_device_attribute_query")) {
        cl_uint bus = 0, slot = 0, domain = 0;
        if (clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, NULL) == CL_SUCCESS &&
            clGetDeviceInfo(d, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, NULL) == CL_SUCCESS) {
            if (clGetDeviceInfo(d, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, NULL) !=
                CL_SUCCESS)
                domain = 0;
            /* The NV "slot" packs device (bits 3..7) and function (bits 0..2). */
            snprintf(out, size, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, (slot >> 3) & 0x1fu,
                     slot & 7u);
            return;
        }
    }
    if (has_extension(d, "cl_amd_device_attribute_query")) {
        cl_device_topology_amd topo;
        if (clGetDeviceInfo(d, CL_DEVICE_TOPOLOGY_AMD, sizeof topo, &topo, NULL) == CL_SUCCESS &&
            topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
            snprintf(out, size, "%04x:%02x:%02x.%x", 0u, (unsigned)(unsigned char)topo.pcie.bus,
                     (unsigned)(unsigned char)topo.pcie.device,
                     (unsigned)(unsigned char)topo.pcie.function);
        }
    }
}

static coproc_device_type map_type(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return COPROC_DEVICE_GPU;
    if (t & CL_DEVICE_TYPE_CPU) return COPROC_DEVICE_CPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return COPROC_DEVICE_ACCELERATOR;
    return COPROC_DEVICE_OTHER;
}

static void describe(cl_platform_id p, cl_device_id d, coproc_device_info *info)
{
    memset(info, 0, sizeof *info);
    get_string(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    get_string(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    get_string(d, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    get_string(d, CL_DEVICE_VERSION, info->opencl_version, sizeof info->opencl_version);
    get_string(d, CL_DEVICE_OPENCL_C_VERSION, info->opencl_c_version,
               sizeof info->opencl_c_version);
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) !=
        CL_SUCCESS)
        info->platform[0] = '\0';
    info->platform[sizeof info->platform - 1] = '\0';

    cl_device_type type = 0;
    cl_uint cu = 0;
    cl_ulong gmem = 0, lmem = 0, maxalloc = 0;
    size_t wg = 0;
    cl_bool unified = CL_FALSE;
    cl_device_fp_config fp64 = 0, fp32 = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS)
        fp64 = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp32, &fp32, NULL) != CL_SUCCESS)
        fp32 = 0;
    info->has_fp32_subnormals = (fp32 & CL_FP_DENORM) != 0;
    info->type = map_type(type);
    info->compute_units = cu;
    info->global_mem_bytes = gmem;
    info->local_mem_bytes = lmem;
    info->max_alloc_bytes = maxalloc;
    info->max_work_group_size = wg;
    info->host_unified_memory = unified == CL_TRUE;
    info->has_fp64 = fp64 != 0 || has_extension(d, "cl_khr_fp64");
    info->has_int64_atomics = has_extension(d, "cl_khr_int64_base_atomics");
    query_pci_bus_id(d, info->pci_bus_id, sizeof info->pci_bus_id);
    info->numa_node = -1;
    info->same_hardware_as = -1;
}

coproc_status coproc__discover(coproc_runtime *rt, coproc__found_device **out, int *count)
{
    *out = NULL;
    *count = 0;
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint nplat = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, platforms, &nplat);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && nplat == 0))
        return coproc__fail(rt, COPROC_NO_PLATFORM,
                            "no OpenCL platform found (CL_PLATFORM_NOT_FOUND_KHR, -1001): install "
                            "an OpenCL driver, e.g. `apt-get install pocl-opencl-icd` for the CPU, "
                            "and check that /etc/OpenCL/vendors (or $OCL_ICD_VENDORS) lists it");
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "clGetPlatformIDs failed; the OpenCL loader or a driver "
                                        "is broken (try `clinfo`)");
    if (nplat > MAX_PLATFORMS)
        nplat = MAX_PLATFORMS;

    coproc__found_device *found = calloc((size_t)nplat * MAX_DEVICES_PER_PLATFORM, sizeof *found);
    if (!found)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory in discovery");
    int n = 0, failed = 0;
    for (cl_uint p = 0; p < nplat; p++) {
        cl_device_id ids[MAX_DEVICES_PER_PLATFORM];
        cl_uint ndev = 0;
        err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES_PER_PLATFORM, ids, &ndev);
        if (err == CL_DEVICE_NOT_FOUND)
            continue;
        if (err != CL_SUCCESS) {
            char pname[128] = "";
            clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
            pname[sizeof pname - 1] = '\0';
            coproc__log(rt, COPROC_LOG_WARN, "OpenCL platform %u (%s) skipped: clGetDeviceIDs: %d",
                        p, pname, err);
            failed++;
            continue;
        }
        if (ndev > MAX_DEVICES_PER_PLATFORM)
            ndev = MAX_DEVICES_PER_PLATFORM;
        for (cl_uint i = 0; i < ndev; i++) {
            cl_bool available = CL_TRUE;
            clGetDeviceInfo(ids[i], CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
            if (!available)
                continue;
            found[n].platform = platforms[p];
            found[n].id = ids[i];
            describe(platforms[p], ids[i], &found[n].info);
            found[n].info.discovered_index = n;
            n++;
        }
    }
    if (n == 0 && failed == (int)nplat) {
        free(found);
        return coproc__fail(rt, COPROC_DRIVER_ERROR,
                            "every OpenCL platform (%u) failed to list its devices; the driver is "
                            "broken or lacks permissions (try `clinfo`)", nplat);
    }
    /* The same CPU behind two drivers: keep both, mark the later one. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (found[i].info.type == COPROC_DEVICE_CPU && found[j].info.type == COPROC_DEVICE_CPU &&
                found[i].info.same_hardware_as < 0) {
                found[i].info.same_hardware_as = j; /* a discovered index; remapped on selection */
                break;
            }
    *out = found;
    *count = n;
    return COPROC_OK;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

coproc_status coproc__select_devices(coproc_runtime *rt, const char *spec,
                                     const coproc__found_device *found, int count, int *keep)
{
    if (!spec || !*spec || strcmp(spec, "all") == 0) {
        for (int i = 0; i < count; i++)
            keep[i] = 1;
        return COPROC_OK;
    }
    for (int i = 0; i < count; i++)
        keep[i] = 0;
    const char *p = spec, *start;
    size_t len;
    while (coproc__selection_next(&p, &start, &len)) {
        char word[64];
        if (len == 0 || len >= sizeof word)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "bad device selection \"%s\"", spec);
        memcpy(word, start, len);
        word[len] = '\0';
        if (strncmp(word, "platform=", 9) == 0 && word[9]) {
            /* Every device of the platforms whose name contains the rest
             * (ignoring case): "platform=rusticl", "platform=portable". */
            for (int i = 0; i < count; i++)
                if (contains_nocase(found[i].info.platform, word + 9))
                    keep[i] = 1;
            continue;
        }
        int mask = 0;
        if (strcmp(word, "cpu") == 0) mask = COPROC_DEVICE_CPU;
        else if (strcmp(word, "gpu") == 0) mask = COPROC_DEVICE_GPU;
        else if (strcmp(word, "accelerator") == 0) mask = COPROC_DEVICE_ACCELERATOR;
        else if (strcmp(word, "all") == 0) mask = ~0;
        if (mask) {
            for (int i = 0; i < count; i++)
                if (found[i].info.type & mask)
                    keep[i] = 1;
            continue;
        }
        char *end = NULL;
        long idx = strtol(word, &end, 10);
        if (end == word || *end != '\0' || idx < 0)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                "bad device selection \"%s\": \"%s\" is neither cpu, gpu, "
                                "accelerator, all, platform=NAME nor a device index", spec, word);
        if (idx >= count)
            return coproc__fail(rt, COPROC_NO_DEVICE,
                                "device selection \"%s\": index %ld but only %d device(s) found",
                                spec, idx, count);
        keep[idx] = 1;
    }
    return COPROC_OK;
}

/* Whether dev's profiling counters tell time (quirks.h no_profiling): a
 * command enqueued 200 us (or two timer ticks, up to 10 ms) after another one
 * finished starts at least that much later on any clock that counts
 * nanoseconds; half of it is asked. Counters the driver does not give (an
 * error) are not placeholders. */
static int profiling_tells_time(coproc__device *dev)
{
    cl_int err;
    cl_mem buf = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
    if (!buf)
        return 1;
    cl_uint word = 0;
    cl_event a = NULL, b = NULL;
    cl_ulong a_end = 0, b_start = 0;
    int tells = 1;
    size_t tick = 0;
    clGetDeviceInfo(dev->id, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof tick, &tick, NULL);
    long gap_ns = tick > 100000 ? (long)(tick < 5000000 ? 2 * tick : 10000000) : 200000;
    if (coproc__write_now(dev, dev->queue, buf, 0, sizeof word, &word, 0, NULL, &a) == CL_SUCCESS) {
        struct timespec gap = {0, gap_ns};
        nanosleep(&gap, NULL);
        if (coproc__write_now(dev, dev->queue, buf, 0, sizeof word, &word, 0, NULL, &b) ==
                CL_SUCCESS &&
            clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_END, sizeof a_end, &a_end, NULL) ==
                CL_SUCCESS &&
            clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_START, sizeof b_start, &b_start,
                                    NULL) == CL_SUCCESS)
            tells = b_start >= a_end && b_start - a_end >= (cl_ulong)gap_ns / 2;
    }
    if (a)
        clReleaseEvent(a);
    if (b)
        clReleaseEvent(b);
    clReleaseMemObject(buf);
    return tells;
}

double coproc__device_event_seconds(const coproc__device *dev, cl_event start, cl_event end)
{
    cl_ulong t0 = 0, t1 = 0;
    if (dev->quirks.no_profiling || !start || !end ||
        clGetEventProfilingInfo(start, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(end, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) !=
            CL_SUCCESS ||
        t1 <= t0)
        return -1;
    return (double)(t1 - t0) * 1e-9;
}

coproc_status coproc__device_init(coproc_runtime *rt, coproc__device *dev,
                                  const coproc__found_device *found, int index)
{
    memset(dev, 0, sizeof *dev);
    dev->info = found->info;
    dev->index = index;
    dev->rt = rt;
    dev->backend = &coproc__backend_opencl;
    dev->platform = found->platform;
    dev->id = found->id;
    pthread_mutex_init(&dev->program_lock, NULL);
    pthread_mutex_init(&dev->kernel_lock, NULL);
    pthread_mutex_init(&dev->model_lock, NULL);
    pthread_mutex_init(&dev->submit_lock, NULL);
    if (coproc__progress_init(dev) != 0)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    coproc__pool_init(&dev->pool, dev->info.global_mem_bytes);

    coproc__quirks_find(&dev->info, &dev->quirks);
    snprintf(dev->info.quirks, sizeof dev->info.quirks, "%s", dev->quirks.names);
    dev->info.max_rows_per_item = dev->quirks.max_rows_per_item;
    dev->info.quirk_max_work_group = dev->quirks.max_work_group;
    if (dev->quirks.no_fp64)
        dev->info.has_fp64 = 0;
    /* COPROC_KERNEL_PATH=cpu|gpu forces the kernel path on every device (the
     * Oclgrind checks run the CPU path on its simulated GPU so). */
    const char *path = getenv("COPROC_KERNEL_PATH");
    int cpu_path = dev->info.type == COPROC_DEVICE_CPU;
    if (path && strcmp(path, "cpu") == 0)
        cpu_path = 1;
    else if (path && strcmp(path, "gpu") == 0)
        cpu_path = 0;
    coproc__device_set_path(dev, cpu_path);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform, 0};
    cl_int err;
    dev->context = clCreateContext(props, 1, &dev->id, NULL, NULL, &err);
    if (!dev->context)
        return coproc__fail_cl(rt, err, "clCreateContext for device %d (%s)", index, dev->info.name);
    dev->queue = clCreateCommandQueue(dev->context, dev->id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!dev->queue)
        return coproc__fail_cl(rt, err, "clCreateCommandQueue for device %d (%s)", index,
                               dev->info.name);
    dev->copy_queue = clCreateCommandQueue(dev->context, dev->id, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!dev->copy_queue)
        return coproc__fail_cl(rt, err, "clCreateCommandQueue (copies) for device %d (%s)", index,
                               dev->info.name);
    if (!dev->quirks.no_profiling && !profiling_tells_time(dev)) {
        dev->quirks.no_profiling = 1;
        coproc__quirks_name(&dev->quirks, "no-profiling-times");
        snprintf(dev->info.quirks, sizeof dev->info.quirks, "%s", dev->quirks.names);
    }
    /* The quirks too: a profile measured under others (placeholder counters
     * before the probe) is not this device's. */
    char pver[128] = "";
    clGetPlatformInfo(dev->platform, CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
    pver[sizeof pver - 1] = '\0';
    snprintf(dev->fingerprint, sizeof dev->fingerprint, "%s|%s|%s|%s|%s|%s|coproc-%s|%s",
             dev->info.platform, pver, dev->info.name, dev->info.driver_version,
             dev->info.opencl_version, dev->info.pci_bus_id, coproc_version_string(),
             dev->quirks.names);
    dev->budget_bytes = dev->info.global_mem_bytes / 10 * 7;
    dev->zero_copy = 1;
    if (!(dev->residency = malloc(sizeof *dev->residency)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    coproc__residency_init(dev->residency);
    if (!(dev->staging = malloc(sizeof *dev->staging)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    coproc__staging_init(dev->staging);
    return COPROC_OK;
}

void coproc__device_set_path(coproc__device *dev, int cpu_path)
{
    /* Kernels pick their access pattern from these: a contiguous chunk per
     * work-item on CPUs, a strided (coalesced) loop on GPUs. */
    dev->cpu_path = cpu_path != 0;
    int len = snprintf(dev->build_options, sizeof dev->build_options, "-DCOPROC_CPU=%d%s",
                       dev->cpu_path, dev->info.has_fp64 ? " -DCOPROC_FP64=1" : "");
    /* The quirks that shape launches are in the options too, so programs built
     * under them are cached apart and kernels may size themselves by them. */
    if (dev->quirks.max_rows_per_item && len > 0 && (size_t)len < sizeof dev->build_options)
        len += snprintf(dev->build_options + len, sizeof dev->build_options - (size_t)len,
                        " -DCOPROC_MAX_ROWS_PER_ITEM=%llu",
                        (unsigned long long)dev->quirks.max_rows_per_item);
    if (dev->quirks.max_work_group && len > 0 && (size_t)len < sizeof dev->build_options)
        snprintf(dev->build_options + len, sizeof dev->build_options - (size_t)len,
                 " -DCOPROC_MAX_WORK_GROUP=%zu", dev->quirks.max_work_group);
}

void coproc__device_release(coproc__device *dev)
{
    if (dev->queue)
        coproc__finish(dev, dev->queue); /* no leased kernel still runs */
    coproc__kernel_pool_release(dev);
    for (int i = 0; i < COPROC__MAX_PROGRAMS; i++)
        if (dev->programs[i])
            clReleaseProgram(dev->programs[i]);
    coproc__program_variants_release(dev);
    if (dev->queue)
        coproc__finish(dev, dev->queue);
    if (dev->copy_queue)
        coproc__finish(dev, dev->copy_queue);
    if (dev->residency)
        coproc__residency_release_all(dev->residency);
    free(dev->residency);
    if (dev->staging)
        coproc__staging_release(dev, dev->staging);
    free(dev->staging);
    coproc__pool_release_all(&dev->pool);
    if (dev->copy_queue)
        clReleaseCommandQueue(dev->copy_queue);
    if (dev->queue)
        clReleaseCommandQueue(dev->queue);
    if (dev->context)
        clReleaseContext(dev->context);
    pthread_mutex_destroy(&dev->program_lock);
    pthread_mutex_destroy(&dev->kernel_lock);
    pthread_mutex_destroy(&dev->model_lock);
    pthread_mutex_destroy(&dev->submit_lock);
    coproc__progress_release(dev);
    free(dev->profile);
    memset(dev, 0, sizeof *dev);
}

cl_context coproc__thread_context_begin(coproc_runtime *rt)
{
    /* One is enough for every such device: Oclgrind's per-thread pool is
     * shared by all its contexts in the process. */
    for (int d = 0; d < rt->device_count; d++) {
        coproc__device *dev = &rt->devices[d];
        if (!dev->quirks.context_per_thread)
            continue;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform,
                                         0};
        cl_int err;
        cl_context own = clCreateContext(props, 1, &dev->id, NULL, NULL, &err);
        return err == CL_SUCCESS ? own : NULL;
    }
    return NULL;
}

void coproc__thread_context_end(cl_context own)
{
    if (own)
        clReleaseContext(own);
}
