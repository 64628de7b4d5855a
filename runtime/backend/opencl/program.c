/* program.c - build embedded kernels once per device, cache binaries on disk. */
#include "backend/opencl/program.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cache.h"
#include "backend/opencl/cl_error.h"
#include "core/runtime.h"
#include "data/column.h"
#include "cost/bandwidth.h"

/* Cache file: magic, key (what it was built from), hash of the binary, binary.
 * The hash is checked before the driver sees the bytes: some drivers abort on
 * a damaged binary instead of returning an error. */
#define BINARY_MAGIC "COPROCBIN2\n"
#define BINARY_MAGIC_LEN 11
#define BINARY_HEADER_LEN (BINARY_MAGIC_LEN + 16)

void coproc__program_options(const coproc__device *dev, char *out, size_t size)
{
    /* COPROC_CL_OPTIONS: extra options for every program, e.g.
     * "-cl-opt-disable" (tests/test_portable.c builds every program so). */
    const char *extra = getenv("COPROC_CL_OPTIONS");
    snprintf(out, size, "-cl-std=CL1.2 %s%s%s", dev->build_options, extra && *extra ? " " : "",
             extra && *extra ? extra : "");
}

static const coproc__cl_source *find_source(const char *name)
{
    for (int i = 0; coproc__cl_sources[i].name; i++)
        if (strcmp(coproc__cl_sources[i].name, name) == 0)
            return &coproc__cl_sources[i];
    return NULL;
}

static void cache_path(coproc_runtime *rt, const char *name, uint64_t key, char *out, size_t size)
{
    snprintf(out, size, "%s/kernels/%s-%016" PRIx64 ".bin", rt->cache_dir, name, key);
}

int coproc__program_cache_parse(const unsigned char *data, size_t len, uint64_t key,
                                const unsigned char **bin, size_t *binlen)
{
    if (len <= BINARY_HEADER_LEN || memcmp(data, BINARY_MAGIC, BINARY_MAGIC_LEN) != 0)
        return 0;
    uint64_t stored, sum;
    memcpy(&stored, data + BINARY_MAGIC_LEN, 8);
    memcpy(&sum, data + BINARY_MAGIC_LEN + 8, 8);
    *bin = data + BINARY_HEADER_LEN;
    *binlen = len - BINARY_HEADER_LEN;
    return stored == key && sum == coproc__hash(COPROC__FNV_SEED, *bin, *binlen);
}

/* Try the binary cache; 1 and *out on a hit, 0 on a miss (absent, foreign or stale). */
static int load_cached(coproc_runtime *rt, coproc__device *dev, const char *path, uint64_t key,
                       const char *options, cl_program *out)
{
    unsigned char *data = NULL;
    size_t len = 0;
    if (coproc__read_cache_file(rt, "kernel binary", path, &data, &len) != 0)
        return 0;
    int hit = 0;
    const unsigned char *bin;
    size_t binlen;
    if (coproc__program_cache_parse(data, len, key, &bin, &binlen)) {
        cl_int status = CL_SUCCESS, err;
        cl_program p =
            clCreateProgramWithBinary(dev->context, 1, &dev->id, &binlen, &bin, &status, &err);
        if (p && err == CL_SUCCESS && status == CL_SUCCESS &&
            clBuildProgram(p, 1, &dev->id, options, NULL, NULL) == CL_SUCCESS) {
            *out = p;
            hit = 1;
        } else if (p) {
            clReleaseProgram(p);
        }
    }
    if (!hit)
        coproc__log(rt, COPROC_LOG_INFO, "kernel cache entry %s unusable; rebuilding", path);
    free(data);
    return hit;
}

static void store_cached(coproc_runtime *rt, coproc__device *dev, cl_program p, const char *path,
                         uint64_t key)
{
    size_t binlen = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof binlen, &binlen, NULL) != CL_SUCCESS ||
        binlen == 0)
        return;
    unsigned char *buf = malloc(BINARY_HEADER_LEN + binlen);
    if (!buf)
        return;
    memcpy(buf, BINARY_MAGIC, BINARY_MAGIC_LEN);
    memcpy(buf + BINARY_MAGIC_LEN, &key, 8);
    unsigned char *bin = buf + BINARY_HEADER_LEN;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
        uint64_t sum = coproc__hash(COPROC__FNV_SEED, bin, binlen);
        memcpy(buf + BINARY_MAGIC_LEN + 8, &sum, 8);
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/kernels", rt->cache_dir);
        if (coproc__mkdirs(dir) == 0 &&
            coproc__write_file_atomic(path, buf, BINARY_HEADER_LEN + binlen) == 0)
            atomic_fetch_add(&rt->program_cache_writes, 1);
        else
            coproc__log(rt, COPROC_LOG_WARN, "could not write kernel cache file %s", path);
    }
    free(buf);
}

static coproc_status program_build(coproc_runtime *rt, coproc__device *dev, const char *name,
                                   const char *source, size_t length, cl_program *out);

/* Lower the device's work-group limit to the smallest its new kernels allow
 * (device.h kernel_group_limit); a driver that cannot say leaves it. */
static void learn_group_limit(coproc__device *dev, cl_program p)
{
    cl_uint nk = 0;
    if (clCreateKernelsInProgram(p, 0, NULL, &nk) != CL_SUCCESS || nk == 0)
        return;
    cl_kernel *ks = calloc(nk, sizeof *ks);
    if (!ks)
        return;
    if (clCreateKernelsInProgram(p, nk, ks, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < nk; i++) {
            size_t wg = 0;
            if (clGetKernelWorkGroupInfo(ks[i], dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                         NULL) == CL_SUCCESS &&
                wg > 0) {
                size_t cur = atomic_load(&dev->kernel_group_limit);
                while ((cur == 0 || wg < cur) &&
                       !atomic_compare_exchange_weak(&dev->kernel_group_limit, &cur, wg))
                    ;
            }
            clReleaseKernel(ks[i]);
        }
    }
    free(ks);
}

coproc_status coproc__program_build(coproc_runtime *rt, coproc__device *dev, const char *name,
                                    const char *source, size_t length, cl_program *out)
{
    atomic_fetch_add(&dev->building, 1);
    double slow = coproc__fault_delay(rt, dev->index, COPROC__FAULT_SLOW_BUILD);
    for (double until = coproc__now() + slow, left; (left = until - coproc__now()) > 0;) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL); /* COPROC_FAULT=slowbuild: a slow compiler */
    }
    coproc_status s = program_build(rt, dev, name, source, length, out);
    /* Only the GPU path launches groups of more than one work-item. */
    if (s == COPROC_OK && !dev->cpu_path)
        learn_group_limit(dev, *out);
    atomic_store(&dev->build_end_ns, (uint64_t)(coproc__now() * 1e9));
    atomic_fetch_sub(&dev->building, 1);
    return s;
}

/* Whether the driver keeps built programs on disk itself, so that our copy
 * would only cost (quirks.h driver_kernel_cache: PoCL, unless its cache is
 * off with POCL_KERNEL_CACHE=0). COPROC_KEEP_BINARIES=1 stores them all the
 * same (the tests of the binary cache). */
static int driver_keeps_builds(const coproc__device *dev)
{
    const char *keep = getenv("COPROC_KEEP_BINARIES"), *cache = getenv("POCL_KERNEL_CACHE");
    return dev->quirks.driver_kernel_cache && !(keep && strcmp(keep, "1") == 0) &&
           !(cache && strcmp(cache, "0") == 0);
}

static coproc_status program_build(coproc_runtime *rt, coproc__device *dev, const char *name,
                                   const char *source, size_t length, cl_program *out)
{
    *out = NULL;
    int injected = coproc__fault(rt, dev->index, COPROC__FAULT_BUILD);
    if (injected)
        return coproc__fail(rt, COPROC_BUILD_FAILED,
                            "kernel program '%s' failed to build on "
                            "device %d (%s): COPROC_FAULT",
                            name, dev->index, dev->info.name);
    const coproc__cl_source *prelude = find_source(COPROC__PRELUDE_NAME);
    const char *parts[2] = {prelude ? prelude->source : "", source};
    size_t lens[2] = {prelude ? prelude->length : 0, length};
    char options[1024];
    coproc__program_options(dev, options, sizeof options);

    uint64_t key = coproc__hash_str(COPROC__FNV_SEED, dev->fingerprint);
    key = coproc__hash_str(key, options);
    key = coproc__hash(key, parts[0], lens[0]);
    key = coproc__hash(key, parts[1], lens[1]);
    char path[1400] = "";
    int use_cache = rt->cache_dir[0] && !rt->disable_binary_cache;
    if (use_cache) {
        cache_path(rt, name, key, path, sizeof path);
        if (load_cached(rt, dev, path, key, options, out)) {
            atomic_fetch_add(&rt->programs_from_cache, 1);
            atomic_fetch_add(&dev->programs_made, 1);
            return COPROC_OK;
        }
    }

    cl_int err;
    cl_program p = clCreateProgramWithSource(dev->context, 2, parts, lens, &err);
    if (!p)
        return coproc__fail_cl(rt, err, "clCreateProgramWithSource(%s)", name);
    err = clBuildProgram(p, 1, &dev->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t loglen = 0;
        char *log = NULL;
        clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
        if (loglen && (log = malloc(loglen + 1))) {
            if (clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, loglen, log, NULL) !=
                CL_SUCCESS)
                loglen = 0;
            log[loglen] = '\0';
        }
        coproc_status s = coproc__fail(
            rt, COPROC_BUILD_FAILED, "kernel program '%s' failed to build on device %d (%s): %s "
            "(%d); build log:\n%s", name, dev->index, dev->info.name,
            coproc__cl_error_name(err), err, log && *log ? log : "(empty)");
        free(log);
        clReleaseProgram(p);
        return s;
    }
    atomic_fetch_add(&rt->programs_built, 1);
    atomic_fetch_add(&dev->programs_made, 1);
    if (use_cache && !driver_keeps_builds(dev))
        store_cached(rt, dev, p, path, key);
    *out = p;
    return COPROC_OK;
}

coproc_status coproc__program_get(coproc_runtime *rt, coproc__device *dev, const char *name,
                                  cl_program *out)
{
    const coproc__cl_source *src = find_source(name);
    if (!src || strcmp(name, COPROC__PRELUDE_NAME) == 0)
        return coproc__fail(rt, COPROC_INTERNAL, "no embedded kernel program '%s'", name);
    int slot = (int)(src - coproc__cl_sources);
    if (slot >= COPROC__MAX_PROGRAMS)
        return coproc__fail(rt, COPROC_INTERNAL, "too many kernel programs; raise "
                                                 "COPROC__MAX_PROGRAMS");
    coproc_status s = COPROC_OK;
    pthread_mutex_lock(&dev->program_lock);
    if (!dev->programs[slot])
        s = coproc__program_build(rt, dev, name, src->source, src->length, &dev->programs[slot]);
    *out = dev->programs[slot];
    pthread_mutex_unlock(&dev->program_lock);
    return s;
}

/* One built variant; the device's list of them (program_lock). */
struct coproc__program_variant {
    struct coproc__program_variant *next;
    const coproc__cl_source *src;
    char *defines;
    cl_program program;
};

coproc_status coproc__program_variant(coproc_runtime *rt, coproc__device *dev, const char *name,
                                      const char *defines, cl_program *out)
{
    *out = NULL;
    const coproc__cl_source *src = find_source(name);
    if (!src || strcmp(name, COPROC__PRELUDE_NAME) == 0)
        return coproc__fail(rt, COPROC_INTERNAL, "no embedded kernel program '%s'", name);
    coproc_status s = COPROC_OK;
    char *source = NULL;
    struct coproc__program_variant *v = NULL;
    int count = 0;
    /* Held while building, so two threads never build one variant twice. */
    pthread_mutex_lock(&dev->program_lock);
    for (v = dev->variants; v; v = v->next, count++)
        if (v->src == src && strcmp(v->defines, defines) == 0)
            goto found;
    if (count >= COPROC__MAX_VARIANTS) {
        s = coproc__fail(rt, COPROC_INTERNAL, "%s: more than %d program variants on device %d",
                         name, COPROC__MAX_VARIANTS, dev->index);
        goto unlock;
    }
    size_t dlen = strlen(defines);
    v = calloc(1, sizeof *v);
    source = malloc(dlen + src->length);
    if (!v || !source || !(v->defines = strdup(defines))) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        goto error;
    }
    memcpy(source, defines, dlen);
    memcpy(source + dlen, src->source, src->length);
    s = coproc__program_build(rt, dev, name, source, dlen + src->length, &v->program);
    if (s != COPROC_OK)
        goto error;
    v->src = src;
    v->next = dev->variants;
    dev->variants = v;
    free(source);
found:
    *out = v->program;
    goto unlock;
error:
    free(source);
    if (v)
        free(v->defines);
    free(v);
unlock:
    pthread_mutex_unlock(&dev->program_lock);
    return s;
}

void coproc__program_variants_release(coproc__device *dev)
{
    while (dev->variants) {
        struct coproc__program_variant *v = dev->variants;
        dev->variants = v->next;
        clReleaseProgram(v->program);
        free(v->defines);
        free(v);
    }
}

/* A new kernel object: its first launch may compile (progress.h). */
static coproc_status kernel_of(coproc_runtime *rt, coproc__device *dev, cl_program p,
                               const char *program, const char *kernel, cl_kernel *out)
{
    cl_int err;
    *out = clCreateKernel(p, kernel, &err);
    if (!*out)
        return coproc__fail_cl(rt, err, "clCreateKernel(%s/%s)", program, kernel);
    coproc__kernel_fresh(dev, *out);
    return COPROC_OK;
}

coproc_status coproc__kernel_create_variant(coproc_runtime *rt, coproc__device *dev,
                                            const char *program, const char *defines,
                                            const char *kernel, cl_kernel *out)
{
    cl_program p;
    coproc_status s = coproc__program_variant(rt, dev, program, defines, &p);
    if (s != COPROC_OK)
        return s;
    return kernel_of(rt, dev, p, program, kernel, out);
}

coproc_status coproc__kernel_create(coproc_runtime *rt, coproc__device *dev, const char *program,
                                    const char *kernel, cl_kernel *out)
{
    cl_program p;
    coproc_status s = coproc__program_get(rt, dev, program, &p);
    if (s != COPROC_OK)
        return s;
    return kernel_of(rt, dev, p, program, kernel, out);
}

/* ---- the kernel pool: an open-addressed table of names, each with a list
 * of idle leases. A name once made stays (a device uses a few dozen). */

#define POOL_NAMES 256 /* the embedded programs hold fewer kernels than this */

typedef struct pool_name {
    char program[32], kernel[64]; /* program[0] == 0: free slot */
    coproc__kernel_lease *idle;
} pool_name;

struct coproc__kernel_pool {
    pool_name names[POOL_NAMES];
};

/* The slot of (program, kernel): found, or the free one to take; -1: full. */
static int pool_slot(struct coproc__kernel_pool *p, const char *program, const char *kernel)
{
    uint64_t h = coproc__hash_str(coproc__hash_str(COPROC__FNV_SEED, program), kernel);
    for (int i = 0; i < POOL_NAMES; i++) {
        int at = (int)((h + (uint64_t)i) % POOL_NAMES);
        pool_name *n = &p->names[at];
        if (!n->program[0] || (strcmp(n->kernel, kernel) == 0 && strcmp(n->program, program) == 0))
            return at;
    }
    return -1;
}

coproc_status coproc__kernel_borrow(coproc_runtime *rt, coproc__device *dev, const char *program,
                                    const char *kernel, coproc__kernel_lease **out)
{
    *out = NULL;
    if (strlen(program) >= sizeof ((pool_name *)0)->program ||
        strlen(kernel) >= sizeof ((pool_name *)0)->kernel)
        return coproc__fail(rt, COPROC_INTERNAL, "kernel name %s/%s too long", program, kernel);
    pthread_mutex_lock(&dev->kernel_lock);
    if (!dev->kernels && !(dev->kernels = calloc(1, sizeof *dev->kernels))) {
        pthread_mutex_unlock(&dev->kernel_lock);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    int at = pool_slot(dev->kernels, program, kernel);
    coproc__kernel_lease *l = NULL;
    if (at >= 0) {
        pool_name *n = &dev->kernels->names[at];
        if (!n->program[0]) {
            snprintf(n->program, sizeof n->program, "%s", program);
            snprintf(n->kernel, sizeof n->kernel, "%s", kernel);
        }
        if ((l = n->idle))
            n->idle = l->next;
    }
    pthread_mutex_unlock(&dev->kernel_lock);
    if (at < 0)
        return coproc__fail(rt, COPROC_INTERNAL, "more than %d kernels on device %d", POOL_NAMES,
                            dev->index);
    if (!l) {
        if (!(l = calloc(1, sizeof *l)))
            return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        l->entry = at;
        coproc_status s = coproc__kernel_create(rt, dev, program, kernel, &l->kernel);
        if (s != COPROC_OK) {
            free(l);
            return s;
        }
    }
    l->next = NULL;
    *out = l;
    return COPROC_OK;
}

coproc_status coproc__lease_scratch(coproc_runtime *rt, coproc__device *dev,
                                    coproc__kernel_lease *l, size_t bytes)
{
    if (bytes <= l->scratch_bytes && l->scratch)
        return COPROC_OK;
    if (bytes < 256)
        bytes = 256;
    void *host = malloc(bytes);
    if (!host)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    /* As every buffer (the device's pool, the write-new-buffers quirk). */
    cl_mem mem = NULL;
    coproc_status s = coproc__buffer_new(rt, dev, bytes, &mem);
    if (s != COPROC_OK) {
        free(host);
        return s;
    }
    if (l->scratch)
        clReleaseMemObject(l->scratch);
    free(l->scratch_host);
    l->scratch = mem;
    l->scratch_host = host;
    l->scratch_bytes = bytes;
    return COPROC_OK;
}

void coproc__kernel_return(coproc__device *dev, coproc__kernel_lease *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&dev->kernel_lock);
    pool_name *n = &dev->kernels->names[l->entry];
    l->next = n->idle;
    n->idle = l;
    pthread_mutex_unlock(&dev->kernel_lock);
}

void coproc__kernel_pool_release(coproc__device *dev)
{
    if (!dev->kernels)
        return;
    for (int i = 0; i < POOL_NAMES; i++) {
        coproc__kernel_lease *l = dev->kernels->names[i].idle;
        while (l) {
            coproc__kernel_lease *next = l->next;
            clReleaseKernel(l->kernel);
            if (l->scratch)
                clReleaseMemObject(l->scratch);
            free(l->scratch_host);
            free(l);
            l = next;
        }
    }
    free(dev->kernels);
    dev->kernels = NULL;
}
