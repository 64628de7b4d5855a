/* dictionary.h - the strings of a dictionary-encoded column (coproc.h,
 * "strings"): distinct UTF-8 strings in ascending byte order, so that a
 * code's order is its string's order, in one buffer, each string ended by a
 * NUL (so a value is a C string too; Arrow's utf8 layout leaves the NULs
 * out). Immutable once made; shared by reference between the columns
 * that carry it (a column and the results a query reads from it). */
#ifndef COPROC_DICTIONARY_H
#define COPROC_DICTIONARY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coproc__dict {
    atomic_int refs;
    int32_t n;        /* strings */
    int32_t *offsets; /* n + 1: string i is data[offsets[i] .. offsets[i + 1] - 1), a NUL after */
    char *data;
} coproc__dict;

/* A dictionary of the n strings given (lens[i] bytes each; lens NULL: C
 * strings), which must be in strictly ascending byte order: NULL when they
 * are not (*why says which), or out of memory (*why says so). refs = 1. */
coproc__dict *coproc__dict_new(int32_t n, const char *const *strings, const size_t *lens,
                               const char **why);

/* The sorted distinct strings of values[0..n) as a dictionary, and each
 * value's code into codes[0..n); NULL out of memory or on a NULL value. */
coproc__dict *coproc__dict_encode(size_t n, const char *const *values, int32_t *codes,
                                  const char **why);

coproc__dict *coproc__dict_ref(coproc__dict *d);
void coproc__dict_unref(coproc__dict *d); /* NULL: nothing */

/* String `code` and its length; NULL when code is out of range. */
const char *coproc__dict_value(const coproc__dict *d, int32_t code, size_t *len);

/* The first code whose string is >= (after: >) s, n when none: codes
 * [lower, upper) hold exactly the strings equal to s. */
int32_t coproc__dict_lower(const coproc__dict *d, const char *s, size_t len, int after);

/* Whether two dictionaries hold the same strings (then codes agree). */
int coproc__dict_same(const coproc__dict *a, const coproc__dict *b);

#endif
