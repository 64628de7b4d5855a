/* table.c - the operator table (table.h): one line per public operator, and
 * what every operator shares: looking an entry up, the argument checks made
 * before an operator is queued, and the output sizes seen so far. */
#include "ops/table.h"

#include <math.h>

#include "core/runtime.h"
#include "data/column.h"
#include "ops/ops.h"

static const coproc__op_def *const table[] = {
    &coproc__op_reduce,
    &coproc__op_reduce_where,
    &coproc__op_select,
    &coproc__op_select_bitmap,
    &coproc__op_map,
    &coproc__op_cast,
    &coproc__op_gather,
    &coproc__op_scatter,
    &coproc__op_compact,
    &coproc__op_scan,
    &coproc__op_group_by,
    &coproc__op_sort,
    &coproc__op_argsort,
    &coproc__op_hash_join,
    &coproc__op_merge_join,
    &coproc__op_semi_join,
    &coproc__op_hash_join_count,
    &coproc__op_select_count,
};

const coproc__op_def *coproc__op_def_of(const coproc_op *op)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->kind == op->kind && table[i]->variant == op->variant)
            return table[i];
    return NULL;
}

double coproc__col_bytes(const coproc_column *c)
{
    if (!c)
        return 0;
    return (double)c->length * (double)coproc_type_size(c->type) + coproc__col_bytes(c->validity);
}

int coproc__inputs_a(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS])
{
    in[0] = op->a;
    return 1;
}

int coproc__inputs_ab(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS])
{
    in[0] = op->a;
    in[1] = op->b;
    return 2;
}

int coproc__inputs_a_opt_b(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS])
{
    in[0] = op->a;
    if (!op->b)
        return 1;
    in[1] = op->b;
    return 2;
}

double coproc__col_rows(const coproc_column *c) { return c ? (double)c->length : 0; }

double coproc__n_log_n(double n) { return n > 1 ? n * log2(n) : 0; }

coproc_status coproc__check_keys(coproc_runtime *rt, const char *what, const coproc_column *a,
                                 const coproc_column *b)
{
    const coproc_column *bad = !coproc__is_key_type(a->type) ? a
                               : b && !coproc__is_key_type(b->type) ? b : NULL;
    if (bad)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_submit: %s keys must be "
                            "integers, not %s", what, coproc_type_name(bad->type));
    if (b && a->type != b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: %s keys of types %s "
                            "and %s", what, coproc_type_name(a->type), coproc_type_name(b->type));
    return COPROC_OK;
}

coproc_status coproc__check_bitmap(coproc_runtime *rt, const char *what,
                                   const coproc_column *bitmap, size_t rows)
{
    if (bitmap->type != COPROC_UINT32)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_submit: %s bitmap is %s; it "
                            "must be uint32", what, coproc_type_name(bitmap->type));
    if (bitmap->length != (rows + 31) / 32)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_submit: %s bitmap of %zu words "
                            "for %zu rows (needs %zu)", what, bitmap->length, rows,
                            (rows + 31) / 32);
    return COPROC_OK;
}

coproc_status coproc__op_check(coproc_runtime *rt, const coproc_op *op,
                               const coproc__op_def **out)
{
    if (op->struct_size != sizeof *op)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: op not initialised with "
                            "coproc_op_init");
    if ((unsigned)op->kind >= COPROC_OP_KIND_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: unknown operator kind "
                            "%d has no variant %d", (int)op->kind, (int)op->variant);
    const coproc__op_def *def = coproc__op_def_of(op);
    if (!def)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: %s has no variant %d",
                            coproc_op_kind_name(op->kind), (int)op->variant);
    const coproc_column *in[COPROC__OP_MAX_INPUTS];
    int n = def->inputs(op, in);
    int home = -2;
    for (int i = 0; i < n; i++) {
        if (!in[i])
            return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_submit: %s input %d is NULL",
                                def->name, i);
        if (in[i]->rt != rt)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: %s input %d belongs "
                                "to another runtime", def->name, i);
        if ((unsigned)in[i]->type >= COPROC__TYPE_COUNT)
            return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_submit: %s input %d has the "
                                "invalid type %d", def->name, i, (int)in[i]->type);
        int d = in[i]->dev ? in[i]->dev->index : -1;
        if (home != -2 && d != home)
            return coproc__fail(rt, COPROC_WRONG_DEVICE, "coproc_submit: %s inputs live in "
                                "different places (host, device %d, device %d)", def->name,
                                home, d);
        home = d;
        if (def->same_length && i > 0 && in[i]->length != in[0]->length)
            return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_submit: %s inputs of %zu and "
                                "%zu rows", def->name, in[0]->length, in[i]->length);
    }
    if (op->device >= rt->device_count || op->device < -1)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: device %d out of range "
                            "(%d devices)", op->device, rt->device_count);
    if (home >= 0 && op->device >= 0 && op->device != home)
        return coproc__fail(rt, COPROC_WRONG_DEVICE, "coproc_submit: inputs live on device %d, "
                            "not on the requested device %d", home, op->device);
    coproc_status s = def->check ? def->check(rt, op, in, n) : COPROC_OK;
    if (s == COPROC_OK)
        *out = def;
    return s;
}

/* ---- output sizes seen so far */

void coproc__op_seen_init(coproc__op_seen *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->selectivity = 0.5;
    s->pairs_per_row = 1;
    s->groups = 1024;
}

void coproc__op_seen_destroy(coproc__op_seen *s) { pthread_mutex_destroy(&s->lock); }

coproc__op_seen coproc__op_seen_get(coproc__op_seen *s)
{
    pthread_mutex_lock(&s->lock);
    coproc__op_seen c = *s;
    pthread_mutex_unlock(&s->lock);
    return c;
}

void coproc__op_seen_learn(coproc__op_seen *s, double selectivity, double pairs_per_row,
                           double groups)
{
    const double w = 0.2;
    pthread_mutex_lock(&s->lock);
    if (!isnan(selectivity))
        s->selectivity += w * (selectivity - s->selectivity);
    if (!isnan(pairs_per_row))
        s->pairs_per_row += w * (pairs_per_row - s->pairs_per_row);
    if (!isnan(groups))
        s->groups += w * (groups - s->groups);
    pthread_mutex_unlock(&s->lock);
}
