/* fuzz_kernel_cache.c - the kernel-binary cache reader. Feeds the input as the
 * contents of a cache file (runtime/backend/opencl/program.c): header (magic,
 * key, hash of the binary) then the binary. It goes through the reader the
 * runtime uses, coproc__read_cache_file (runtime/core/cache.c), from a real
 * file, and then through coproc__program_cache_parse, the header check that
 * load_cached makes before a driver sees the bytes, for the key the file's own
 * header names and for another. Checked: the binary it hands on lies inside
 * the file, and is the one the header's hash is of. Why: the cache lives in a
 * user's directory, may be truncated by a crash or written by another coproc
 * version, and some drivers abort on a damaged binary instead of failing. The
 * driver itself (clCreateProgramWithBinary) is not fuzzed: that would fuzz
 * PoCL, and the header check exists so that no damaged binary reaches it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "backend/opencl/program.h"
#include "core/cache.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_runtime(); /* coproc__read_cache_file logs through it */
    fuzz_dir();
    return 0;
}

static void parse(const unsigned char *data, size_t len, uint64_t key)
{
    const unsigned char *bin = NULL;
    size_t binlen = 0;
    if (!coproc__program_cache_parse(data, len, key, &bin, &binlen))
        return;
    if (bin < data || binlen == 0 || binlen > len || bin + binlen != data + len)
        fuzz_fail("the binary (%zu bytes) is not the tail of the file (%zu bytes)", binlen, len);
    uint64_t sum;
    memcpy(&sum, bin - 8, 8);
    if (sum != coproc__hash(COPROC__FNV_SEED, bin, binlen))
        fuzz_fail("a binary whose hash is not the header's was accepted");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Straight from memory, for the key in the header and for another. */
    uint64_t key = 0;
    if (size >= 19)
        memcpy(&key, data + 11, 8);
    parse(data, size, key);
    parse(data, size, key ^ 1);

    /* From a file, as load_cached reads it. */
    char path[512];
    snprintf(path, sizeof path, "%s/kernel.bin", fuzz_dir());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        fuzz_fail("cannot write %s", path);
    fclose(f);
    unsigned char *file = NULL;
    size_t len = 0;
    coproc_runtime *rt = fuzz_runtime();
    int rc = rt ? coproc__read_cache_file(rt, "kernel binary", path, &file, &len)
                : coproc__read_file(path, &file, &len);
    if (rc != 0)
        fuzz_fail("a regular file of %zu bytes was not read (%d)", size, rc);
    if (len != size || memcmp(file, data, size) != 0 || file[len] != 0)
        fuzz_fail("the file read back differs from what was written");
    parse(file, len, key);
    free(file);
    return 0;
}
