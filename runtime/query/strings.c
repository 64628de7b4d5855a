/* strings.c - predicates on dictionary-encoded strings become predicates on
 * their codes when a node is built (plan.h, coproc__resolve_strings): the
 * dictionary is searched once per plan, and the engines see only integers.
 * A dictionary is sorted (coproc.h, "strings"), so every comparison, BETWEEN
 * and prefix holds for one run of consecutive codes. */
#include <string.h>

#include "core/error.h"
#include "data/dictionary.h"
#include "query/plan.h"

static coproc__dict *dict_of(const coproc_expr *e, const coproc__schema *s)
{
    if (e->kind != COPROC__QE_COLUMN)
        return NULL;
    int i = coproc__schema_find(s, e->name);
    return i < 0 ? NULL : s->dicts[i];
}

static int32_t lower(const coproc__dict *d, const char *v, int after)
{
    return coproc__dict_lower(d, v, strlen(v), after);
}

/* col's codes in [lo, hi): false for none (codes are never negative). */
static coproc_expr *codes_in(coproc_plan *p, coproc_expr *col, int32_t lo, int32_t hi)
{
    if (lo >= hi)
        return coproc_expr_compare(p, COPROC_CMP_LT, col, coproc_expr_int(p, 0));
    if (hi - lo == 1)
        return coproc_expr_compare(p, COPROC_CMP_EQ, col, coproc_expr_int(p, lo));
    return coproc_expr_between(p, col, coproc_expr_int(p, lo), coproc_expr_int(p, hi - 1));
}

/* col op "v" on a dictionary d. */
static coproc_expr *compare(coproc_plan *p, coproc_cmp op, coproc_expr *col,
                            const coproc__dict *d, const char *v)
{
    int32_t eq = lower(d, v, 0), gt = lower(d, v, 1); /* [eq, gt): the codes equal to v */
    switch (op) {
    case COPROC_CMP_EQ: return codes_in(p, col, eq, gt);
    case COPROC_CMP_NE: return coproc_expr_not(p, codes_in(p, col, eq, gt));
    case COPROC_CMP_LT: return codes_in(p, col, 0, eq);
    case COPROC_CMP_LE: return codes_in(p, col, 0, gt);
    case COPROC_CMP_GT: return codes_in(p, col, gt, d->n);
    default: return codes_in(p, col, eq, d->n); /* GE */
    }
}

static coproc_expr *fail_two(coproc_plan *p, const char *label)
{
    coproc__plan_fail(p, COPROC_UNSUPPORTED,
                      "%s: compares strings of two different dictionaries (their codes name "
                      "different strings)",
                      label);
    return NULL;
}

coproc_expr *coproc__resolve_strings(coproc_plan *p, const char *label, coproc_expr *e,
                                     const coproc__schema *s)
{
    coproc__dict *da = e->a ? dict_of(e->a, s) : NULL;
    switch (e->kind) {
    case COPROC__QE_CMP: {
        coproc__dict *db = dict_of(e->b, s);
        if (da && e->b->kind == COPROC__QE_STRING)
            return compare(p, e->cmp, e->a, da, e->b->name);
        if (db && e->a->kind == COPROC__QE_STRING)
            return compare(p, coproc__cmp_swap(e->cmp), e->b, db, e->a->name);
        if (da && db && !coproc__dict_same(da, db))
            return fail_two(p, label);
        return e;
    }
    case COPROC__QE_BETWEEN:
        if (da && e->b->kind == COPROC__QE_STRING && e->c->kind == COPROC__QE_STRING)
            return codes_in(p, e->a, lower(da, e->b->name, 0), lower(da, e->c->name, 1));
        return e;
    case COPROC__QE_PREFIX: {
        if (!da)
            return e; /* refused by the type check, naming why */
        int32_t lo = lower(da, e->name, 0), hi = lo;
        size_t plen = strlen(e->name), len;
        const char *v;
        while ((v = coproc__dict_value(da, hi, &len)) && len >= plen &&
               memcmp(v, e->name, plen) == 0)
            hi++;
        return codes_in(p, e->a, lo, hi);
    }
    case COPROC__QE_IN: {
        int strings = 0;
        for (int i = 0; i < e->n; i++)
            strings += e->list[i]->kind == COPROC__QE_STRING;
        if (!da || !strings)
            return e;
        /* the codes of the strings the dictionary holds (integers kept as codes) */
        coproc_expr *items[e->n];
        int m = 0;
        for (int i = 0; i < e->n; i++) {
            const coproc_expr *it = e->list[i];
            if (it->kind != COPROC__QE_STRING) {
                items[m++] = e->list[i];
                continue;
            }
            int32_t c = lower(da, it->name, 0);
            if (c < lower(da, it->name, 1) && !(items[m++] = coproc_expr_int(p, c)))
                return NULL;
        }
        return m ? coproc_expr_in(p, e->a, m, items) : codes_in(p, e->a, 0, 0);
    }
    case COPROC__QE_ARITH:
    case COPROC__QE_AND:
    case COPROC__QE_OR:
    case COPROC__QE_NOT: {
        coproc_expr *a = coproc__resolve_strings(p, label, e->a, s);
        coproc_expr *b = e->b ? coproc__resolve_strings(p, label, e->b, s) : NULL;
        if (!a || (e->b && !b))
            return NULL;
        if (a == e->a && b == e->b)
            return e;
        switch (e->kind) {
        case COPROC__QE_ARITH: return coproc_expr_arith(p, e->arith, a, b);
        case COPROC__QE_AND: return coproc_expr_and(p, a, b);
        case COPROC__QE_OR: return coproc_expr_or(p, a, b);
        default: return coproc_expr_not(p, a);
        }
    }
    default:
        return e;
    }
}
