/* ssb_result.c - the query result type: ordering its rows, comparing two
 * results (the message names the first differing row of each), freeing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssb.h"
#include "ssb_internal.h"

void ssb_result_free(ssb_result *r)
{
    if (!r) return;
    free(r->values);
    memset(r, 0, sizeof *r);
}

/* <0, 0, >0 as row a sorts before, with or after row b under order[] (result
 * columns from 1; negative: descending; 0 ends the list). */
static int cmp_rows(const int64_t *a, const int64_t *b, const int *order)
{
    for (; *order; order++) {
        int c = (*order > 0 ? *order : -*order) - 1;
        int s = (a[c] > b[c]) - (a[c] < b[c]);
        if (s) return *order > 0 ? s : -s;
    }
    return 0;
}

/* Insertion sort: results have at most a few thousand rows, and it is plainly right. */
void ssb_result_sort(ssb_result *r, const int *order)
{
    size_t w = (size_t)r->ncols;
    int64_t row[SSB_RESULT_MAXCOLS];
    for (size_t i = 1; i < r->nrows; i++) {
        memcpy(row, r->values + i * w, w * sizeof *row);
        size_t j = i;
        for (; j > 0 && cmp_rows(r->values + (j - 1) * w, row, order) > 0; j--)
            memcpy(r->values + j * w, r->values + (j - 1) * w, w * sizeof *row);
        memcpy(r->values + j * w, row, w * sizeof *row);
    }
}

/* "(d_year=1993, p_brand1=1201, revenue=123)", or "(none)" past the end. */
static int print_row(char *buf, size_t len, const ssb_result *r, size_t i)
{
    if (i >= r->nrows) return snprintf(buf, len, "(none: %zu rows)", r->nrows);
    size_t used = 0;
    int n = snprintf(buf, len, "(");
    for (int c = 0; c < r->ncols && n >= 0; c++) {
        used += (size_t)n;
        if (used >= len) return (int)used;
        n = snprintf(buf + used, len - used, "%s%s=%lld", c ? ", " : "", r->names[c],
                     (long long)r->values[i * (size_t)r->ncols + c]);
    }
    used += n > 0 ? (size_t)n : 0;
    if (used < len) used += (size_t)snprintf(buf + used, len - used, ")");
    return (int)used;
}

int ssb_result_equal(const ssb_result *a, const ssb_result *b, char *why, size_t whylen)
{
    char dummy[1];
    if (!why || !whylen) {
        why = dummy;
        whylen = sizeof dummy;
    }
    why[0] = 0;
    if (a->ncols != b->ncols) {
        snprintf(why, whylen, "%d columns vs %d", a->ncols, b->ncols);
        return 0;
    }
    for (int c = 0; c < a->ncols; c++) {
        if (strcmp(a->names[c], b->names[c]) != 0) {
            snprintf(why, whylen, "column %d is %s vs %s", c, a->names[c], b->names[c]);
            return 0;
        }
    }
    size_t w = (size_t)a->ncols, n = a->nrows < b->nrows ? a->nrows : b->nrows, i = 0;
    while (i < n && memcmp(a->values + i * w, b->values + i * w, w * sizeof(int64_t)) == 0) i++;
    if (i == n && a->nrows == b->nrows) return 1;
    char ra[512], rb[512];
    print_row(ra, sizeof ra, a, i);
    print_row(rb, sizeof rb, b, i);
    snprintf(why, whylen, "%zu rows vs %zu; first difference at row %zu: %s vs %s", a->nrows,
             b->nrows, i, ra, rb);
    return 0;
}
