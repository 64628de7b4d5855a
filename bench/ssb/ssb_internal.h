/* ssb_internal.h - what the files of coproc_ssb share and its users need not:
 * dictionary sizes and the table of columns. */
#ifndef SSB_INTERNAL_H
#define SSB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ssb.h"

#define SSB_NREGIONS 5
#define SSB_NNATIONS 25
#define SSB_NSHIPMODES 7

/* The region of a nation code (TPC-H's mapping). */
int32_t ssb__nation_region(int32_t nation);

/* One column of ssb_db: its table, name and where its pointer lies in the struct. */
typedef struct ssb__coldef {
    ssb_table table;
    const char *name;
    size_t offset;
} ssb__coldef;

extern const ssb__coldef ssb__columns[];
extern const int ssb__ncolumns;

static inline int32_t **ssb__colptr(ssb_db *db, int i)
{
    return (int32_t **)((char *)db + ssb__columns[i].offset);
}

/* Allocate every column of db for db->rows (uninitialised); 0, or -1 with
 * everything freed and db zeroed. */
int ssb__alloc(ssb_db *db);

/* Fold len bytes into the running hash h (ssb_checksum and the cache's checks). */
uint64_t ssb__hash_bytes(uint64_t h, const void *data, size_t len);

#endif
