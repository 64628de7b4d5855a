/* ssb_cache.c - one binary file per scale factor, so that benchmarks at SF 10
 * do not wait for the generator each run. A header (magic, version, sf, row
 * counts, checksums of the data and of itself) and the columns in
 * ssb__columns order, native int32. Anything that does not check out exactly
 * is treated as no file: the data is generated again and the file replaced. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ssb.h"
#include "ssb_internal.h"

static const char magic[8] = {'S', 'S', 'B', 'C', 'A', 'C', 'H', 'E'};

/* Byte offsets in the header. */
enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_NCOLS = 12,
    H_SF = 16,
    H_ROWS = 24,
    H_DATASUM = H_ROWS + 8 * SSB_NTABLES,
    H_HEADSUM = H_DATASUM + 8,
    HEADER_SIZE = H_HEADSUM + 8
};

#define HASH_SEED 0x53534243ull

char *ssb_cache_path(double sf, const char *dir, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/ssb-sf%g.bin", dir, sf);
    return n > 0 && (size_t)n < len ? buf : NULL;
}

static uint64_t data_hash(const ssb_db *db)
{
    uint64_t h = HASH_SEED;
    for (int i = 0; i < ssb__ncolumns; i++)
        h = ssb__hash_bytes(h, *ssb__colptr((ssb_db *)db, i),
                            db->rows[ssb__columns[i].table] * sizeof(int32_t));
    return h;
}

static void put32(unsigned char *h, int at, uint32_t v) { memcpy(h + at, &v, 4); }
static void put64(unsigned char *h, int at, uint64_t v) { memcpy(h + at, &v, 8); }
static uint32_t get32(const unsigned char *h, int at)
{
    uint32_t v;
    memcpy(&v, h + at, 4);
    return v;
}
static uint64_t get64(const unsigned char *h, int at)
{
    uint64_t v;
    memcpy(&v, h + at, 8);
    return v;
}

static uint64_t file_bytes(const size_t rows[SSB_NTABLES])
{
    uint64_t n = HEADER_SIZE;
    for (int i = 0; i < ssb__ncolumns; i++) n += rows[ssb__columns[i].table] * sizeof(int32_t);
    return n;
}

/* The header says what this sf must have, and the file is exactly as long as
 * the header says: checked before anything is allocated from its counts. */
static int header_ok(const unsigned char *h, double sf, long long size, size_t rows[SSB_NTABLES])
{
    ssb_sizes sz;
    double hsf;
    memcpy(&hsf, h + H_SF, sizeof hsf);
    if (memcmp(h + H_MAGIC, magic, sizeof magic) != 0 || get32(h, H_VERSION) != SSB_CACHE_VERSION ||
        get32(h, H_NCOLS) != (uint32_t)ssb__ncolumns || memcmp(&hsf, &sf, sizeof sf) != 0 ||
        get64(h, H_HEADSUM) != ssb__hash_bytes(HASH_SEED, h, H_HEADSUM) ||
        ssb_sizes_for(sf, &sz) != 0)
        return 0;
    for (int t = 0; t < SSB_NTABLES; t++) rows[t] = (size_t)get64(h, H_ROWS + 8 * t);
    if (rows[SSB_DATE] != sz.dates || rows[SSB_CUSTOMER] != sz.customers ||
        rows[SSB_SUPPLIER] != sz.suppliers || rows[SSB_PART] != sz.parts ||
        rows[SSB_LINEORDER] < sz.orders || rows[SSB_LINEORDER] > 7 * sz.orders)
        return 0;
    return (long long)file_bytes(rows) == size;
}

/* 0 and *out filled, or -1 and *out zeroed. */
static int load(const char *path, double sf, ssb_db *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    struct stat st;
    unsigned char h[HEADER_SIZE];
    if (fstat(fileno(f), &st) != 0 || fread(h, 1, sizeof h, f) != sizeof h ||
        !header_ok(h, sf, (long long)st.st_size, out->rows))
        goto fail;
    out->sf = sf;
    if (ssb__alloc(out) != 0) goto fail;
    for (int i = 0; i < ssb__ncolumns; i++) {
        size_t n = out->rows[ssb__columns[i].table];
        if (fread(*ssb__colptr(out, i), sizeof(int32_t), n, f) != n) goto fail;
    }
    if (data_hash(out) != get64(h, H_DATASUM)) goto fail;
    fclose(f);
    return 0;
fail:
    fclose(f);
    ssb_free(out);
    return -1;
}

/* Best effort: a temporary file renamed over the old one, so that a reader
 * never sees half a file and two writers do not mix theirs. */
static void store(const char *path, const ssb_db *db)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) return;
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    unsigned char h[HEADER_SIZE];
    memset(h, 0, sizeof h);
    memcpy(h + H_MAGIC, magic, sizeof magic);
    put32(h, H_VERSION, SSB_CACHE_VERSION);
    put32(h, H_NCOLS, (uint32_t)ssb__ncolumns);
    memcpy(h + H_SF, &db->sf, sizeof db->sf);
    for (int t = 0; t < SSB_NTABLES; t++) put64(h, H_ROWS + 8 * t, db->rows[t]);
    put64(h, H_DATASUM, data_hash(db));
    put64(h, H_HEADSUM, ssb__hash_bytes(HASH_SEED, h, H_HEADSUM));
    int ok = fwrite(h, 1, sizeof h, f) == sizeof h;
    for (int i = 0; ok && i < ssb__ncolumns; i++) {
        size_t n = db->rows[ssb__columns[i].table];
        ok = fwrite(*ssb__colptr((ssb_db *)db, i), sizeof(int32_t), n, f) == n;
    }
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

int ssb_load_or_generate(double sf, const char *dir, ssb_db *out)
{
    char path[4096];
    ssb_sizes sz;
    if (ssb_sizes_for(sf, &sz) != 0 || !ssb_cache_path(sf, dir, path, sizeof path)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (load(path, sf, out) == 0) return 1;
    if (ssb_generate(sf, out) != 0) return -1;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return 0;
    store(path, out);
    return 0;
}
