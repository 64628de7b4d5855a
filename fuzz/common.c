/* common.c - the fuzz targets' shared helpers (fuzz.h). */
#include "fuzz.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fuzz_skipped;

static char dir[256];
static coproc_runtime *rt;
static int opened;

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void cleanup(void)
{
    coproc_close(rt);
    rt = NULL;
    if (dir[0])
        nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/coproc-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            fuzz_fail("cannot make a directory %s", dir);
        atexit(cleanup);
    }
    return dir;
}

static void quiet(void *user, coproc_log_level level, const char *msg)
{
}

coproc_runtime *fuzz_runtime(void)
{
    if (opened)
        return rt;
    opened = 1;
    coproc_options o;
    coproc_options_init(&o);
    o.cache_dir = fuzz_dir();
    o.calibration = COPROC_CALIBRATION_OFF;
    o.log = quiet;
    o.log_level = COPROC_LOG_ERROR;
    if (coproc_open(&o, &rt) != COPROC_OK) {
        fprintf(stderr, "fuzz: no runtime (%s); the targets that need one do nothing\n",
                rt ? coproc_errmsg(rt) : "coproc_open failed");
        coproc_close(rt);
        rt = NULL;
    }
    return rt;
}

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

uint8_t fuzz_u8(fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

uint32_t fuzz_u32(fuzz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

uint64_t fuzz_u64(fuzz_in *in)
{
    return fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

const uint8_t *fuzz_bytes(fuzz_in *in, size_t max, size_t *len)
{
    size_t want = fuzz_u8(in);
    if (want > max)
        want = max;
    if (want > in->n)
        want = in->n;
    const uint8_t *p = in->p;
    in->p += want;
    in->n -= want;
    *len = want;
    return p;
}
