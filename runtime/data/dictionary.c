/* dictionary.c - sorted string dictionaries (dictionary.h). */
#include "data/dictionary.h"

#include <stdlib.h>
#include <string.h>

/* <0, 0, >0: byte order, a prefix before its extensions (as strcmp on UTF-8). */
static int bytes_cmp(const char *a, size_t la, const char *b, size_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

coproc__dict *coproc__dict_new(int32_t n, const char *const *strings, const size_t *lens,
                               const char **why)
{
    if (n < 0 || (n > 0 && !strings)) {
        *why = "no strings";
        return NULL;
    }
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!strings[i]) {
            *why = "a NULL string";
            return NULL;
        }
        size_t l = lens ? lens[i] : strlen(strings[i]);
        if (i > 0) {
            size_t lp = lens ? lens[i - 1] : strlen(strings[i - 1]);
            if (bytes_cmp(strings[i - 1], lp, strings[i], l) >= 0) {
                *why = "the strings are not distinct and in ascending byte order";
                return NULL;
            }
        }
        total += l + 1;
        if (total > INT32_MAX) {
            *why = "more than 2 GiB of strings";
            return NULL;
        }
    }
    coproc__dict *d = calloc(1, sizeof *d);
    if (d) {
        d->offsets = malloc(((size_t)n + 1) * sizeof *d->offsets);
        d->data = malloc(total ? total : 1);
    }
    if (!d || !d->offsets || !d->data) {
        if (d)
            free(d->offsets), free(d->data);
        free(d);
        *why = "out of host memory";
        return NULL;
    }
    atomic_init(&d->refs, 1);
    d->n = n;
    int32_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        size_t l = lens ? lens[i] : strlen(strings[i]);
        d->offsets[i] = at;
        memcpy(d->data + at, strings[i], l);
        d->data[at + l] = '\0';
        at += (int32_t)l + 1;
    }
    d->offsets[n] = at;
    return d;
}

/* qsort order of string pointers: strcmp's (unsigned bytes, as bytes_cmp). */
static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

coproc__dict *coproc__dict_encode(size_t n, const char *const *values, int32_t *codes,
                                  const char **why)
{
    for (size_t i = 0; i < n; i++)
        if (!values[i]) {
            *why = "a NULL string";
            return NULL;
        }
    /* The values' pointers sorted, then made distinct. */
    const char **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        *why = "out of host memory";
        return NULL;
    }
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_strp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || strcmp(sorted[m - 1], sorted[i]) != 0)
            sorted[m++] = sorted[i];
    if (m > INT32_MAX) {
        free(sorted);
        *why = "more than 2^31 - 1 distinct strings";
        return NULL;
    }
    coproc__dict *d = coproc__dict_new((int32_t)m, sorted, NULL, why);
    free(sorted);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++)
        codes[i] = coproc__dict_lower(d, values[i], strlen(values[i]), 0);
    return d;
}

coproc__dict *coproc__dict_ref(coproc__dict *d)
{
    if (d)
        atomic_fetch_add(&d->refs, 1);
    return d;
}

void coproc__dict_unref(coproc__dict *d)
{
    if (d && atomic_fetch_sub(&d->refs, 1) == 1) {
        free(d->offsets);
        free(d->data);
        free(d);
    }
}

const char *coproc__dict_value(const coproc__dict *d, int32_t code, size_t *len)
{
    if (!d || code < 0 || code >= d->n)
        return NULL;
    if (len)
        *len = (size_t)(d->offsets[code + 1] - d->offsets[code]) - 1;
    return d->data + d->offsets[code];
}

int32_t coproc__dict_lower(const coproc__dict *d, const char *s, size_t len, int after)
{
    int32_t lo = 0, hi = d->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        size_t l = 0;
        const char *v = coproc__dict_value(d, mid, &l);
        int c = bytes_cmp(v, l, s, len);
        if (c < 0 || (after && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int coproc__dict_same(const coproc__dict *a, const coproc__dict *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->n != b->n)
        return 0;
    return memcmp(a->offsets, b->offsets, ((size_t)a->n + 1) * sizeof *a->offsets) == 0 &&
           memcmp(a->data, b->data, (size_t)a->offsets[a->n]) == 0;
}
