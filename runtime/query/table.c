/* table.c - coproc_table: named columns of equal length, borrowed (or owned by
 * a result table), kept alive by its user and by every plan that scans it. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/column.h"
#include "query/plan.h"

coproc_status coproc_table_create(coproc_runtime *rt, coproc_table **out)
{
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_table_create: out is NULL");
    *out = NULL;
    if (!rt)
        return COPROC_NULL_POINTER;
    coproc_table *t = calloc(1, sizeof *t);
    if (!t)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_table_create: out of host memory");
    t->rt = rt;
    atomic_init(&t->refs, 1);
    *out = t;
    return COPROC_OK;
}

static coproc_status table_append(coproc_table *t, const char *name, const coproc_column *col,
                                  coproc_column *owned)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        char **names = realloc(t->names, cap * sizeof *names);
        if (names)
            t->names = names;
        const coproc_column **cols = realloc(t->cols, cap * sizeof *cols);
        if (cols)
            t->cols = cols;
        coproc_column **own = realloc(t->owned, cap * sizeof *own);
        if (own)
            t->owned = own;
        if (!names || !cols || !own)
            return coproc__fail(t->rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_table_add: out of host memory");
        t->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return coproc__fail(t->rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_table_add: out of host memory");
    if (t->n == 0)
        t->rows = col->length;
    t->names[t->n] = copy;
    t->cols[t->n] = col;
    t->owned[t->n] = owned;
    t->n++;
    return COPROC_OK;
}

coproc_status coproc_table_add(coproc_table *t, const char *name, const coproc_column *col)
{
    if (!t)
        return COPROC_NULL_POINTER;
    if (!name || !*name)
        return coproc__fail(t->rt, COPROC_INVALID_ARGUMENT, "coproc_table_add: the column needs a name");
    if (!col)
        return coproc__fail(t->rt, COPROC_NULL_POINTER, "coproc_table_add: column \"%s\" is NULL", name);
    if (col->rt != t->rt)
        return coproc__fail(t->rt, COPROC_INVALID_ARGUMENT,
                            "coproc_table_add: column \"%s\" belongs to another runtime", name);
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return coproc__fail(t->rt, COPROC_INVALID_ARGUMENT,
                                "coproc_table_add: the table already has a column \"%s\"", name);
    if (t->n > 0 && col->length != t->rows)
        return coproc__fail(t->rt, COPROC_INVALID_ARGUMENT,
                            "coproc_table_add: column \"%s\" has %zu rows, the table %zu", name,
                            col->length, t->rows);
    return table_append(t, name, col, NULL);
}

coproc_status coproc__table_add_owned(coproc_table *t, const char *name, coproc_column *col)
{
    coproc_status s = table_append(t, name, col, col);
    if (s != COPROC_OK)
        coproc_column_free(col);
    return s;
}

int coproc_table_column_count(const coproc_table *t) { return t ? t->n : 0; }
size_t coproc_table_rows(const coproc_table *t) { return t ? t->rows : 0; }

const char *coproc_table_column_name(const coproc_table *t, int i)
{
    return t && i >= 0 && i < t->n ? t->names[i] : NULL;
}

const coproc_column *coproc_table_column_at(const coproc_table *t, int i)
{
    return t && i >= 0 && i < t->n ? t->cols[i] : NULL;
}

const coproc_column *coproc_table_column(const coproc_table *t, const char *name)
{
    if (!t || !name)
        return NULL;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return t->cols[i];
    return NULL;
}

void coproc__table_ref(const coproc_table *t)
{
    /* The count is the table's bookkeeping, not its contents: a plan holds a
     * const table and still keeps it alive. */
    atomic_fetch_add_explicit(&((coproc_table *)t)->refs, 1, memory_order_relaxed);
}

void coproc_table_free(coproc_table *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < t->n; i++) {
        free(t->names[i]);
        coproc_column_free(t->owned[i]);
    }
    free(t->names);
    free(t->cols);
    free(t->owned);
    free(t);
}
