/* codegen.c - one pipeline into OpenCL C 1.2 source: the rows a work-item owns
 * pass through the pipeline's filters, projections and join probes in
 * registers (nothing intermediate is written), into its sink. Everything that
 * depends on the data (key ranges, table sizes, the hash tables' shape) is a
 * kernel argument, so a query shape gives the same source at any scale and the
 * program cache serves it again. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "query/pipeline.h"

void coproc__sb_printf(coproc__strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + n < b->cap) {
            b->len += n;
            return;
        }
        size_t cap = b->cap ? b->cap : 1024;
        while (cap <= b->len + n)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

void coproc__sb_free(coproc__strbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

void coproc__qkernel_free(coproc__qkernel *k) { coproc__sb_free(&k->src); }

/* ---------------------------------------------------------------- names in scope */

typedef struct binding {
    const char *name;
    char code[64];            /* locals: the variable; direct columns: see bcode */
    int qv;                   /* coproc__qv */
    coproc_type type;         /* the type it materialises as */
    const coproc_table *table;/* a direct column: table and col, else NULL */
    int col;
    char row[12];             /* direct columns: the row variable */
    int pay;                  /* a build side's column: its probe (index in k->builds), whose
                               * payload serves it when the table is dense; else -1 */
    char vcode[24];           /* locals that can be null: the local holding their validity */
    int proven;               /* valid in every row past a filter that needs it valid to pass */
    int raw_nullable;         /* locals: computed from a column with a validity, even where
                               * a filter proved it valid (then without vcode) */
} binding;

typedef struct scope {
    binding b[256];
    int n;
} scope;

typedef struct gen {
    int fp64;                 /* the device has doubles: else float64 columns are only copied */
    const coproc__qprog *prog;
    coproc__qkernel *k;
    coproc__strbuf body;
    int locals;
    /* Where gbool writes the statements of a predicate over columns with
     * nulls (the body, or the prefilter's flag loop), indented by ind. */
    coproc__strbuf *stmts;
    const char *ind;
    int depth;                /* gexpr's nesting now */
    int failed;               /* k->why says why */
} gen;

/* Expressions nested deeper than this are not generated: each level opens
 * up to four brackets in the kernel's text, and clang stops at 256 nested
 * brackets ("bracket nesting level exceeded"), so such a plan runs one
 * operator at a time (its note says so) instead of failing to build. */
#define QGEN_MAX_DEPTH 48

static int fail(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(gen *g, const char *fmt, ...)
{
    if (!g->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->k->why, sizeof g->k->why, fmt, ap);
        va_end(ap);
        g->failed = 1;
    }
    return -1;
}

static const char *cl_type(coproc_type t)
{
    static const char *names[] = {"int", "long", "uint", "ulong", "float", "double"};
    return (unsigned)t < COPROC__TYPE_COUNT ? names[t] : "void";
}

static const binding *lookup(const scope *s, const char *name)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (strcmp(s->b[i].name, name) == 0)
            return &s->b[i];
    return NULL;
}

/* The argument number of column col of t (validity 1: of its validity). */
static int arg_find(gen *g, const coproc_table *t, int col, int validity)
{
    for (int i = 0; i < g->k->nargs; i++)
        if (g->k->args[i].table == t && g->k->args[i].col == col &&
            g->k->args[i].validity == validity)
            return i;
    if (g->k->nargs == COPROC__QP_MAX_ARGS)
        return fail(g, "more than %d columns in one pipeline", COPROC__QP_MAX_ARGS);
    g->k->args[g->k->nargs] = (coproc__qarg){t, col, validity};
    return g->k->nargs++;
}

static int arg_of(gen *g, const coproc_table *t, int col)
{
    return arg_find(g, t, col, 0);
}

static binding *push(gen *g, scope *s)
{
    if (s->n == (int)(sizeof s->b / sizeof s->b[0])) {
        fail(g, "more than %zu columns in scope", sizeof s->b / sizeof s->b[0]);
        return NULL;
    }
    binding *b = &s->b[s->n++];
    memset(b, 0, sizeof *b);
    b->col = -1;
    b->pay = -1;
    return b;
}

/* The columns of table t, read at row `row`. A column becomes a kernel
 * argument only when the code reads it (bcode). */
static void scope_table(gen *g, scope *s, const coproc_table *t, const char *row)
{
    for (int c = 0; c < t->n && !g->failed; c++) {
        binding *b = push(g, s);
        if (!b)
            return;
        coproc_type ty = t->cols[c]->type;
        b->name = t->names[c];
        b->type = ty;
        b->qv = coproc__type_is_int(ty) ? COPROC__QV_INT : COPROC__QV_FLOAT;
        b->table = t;
        b->col = c;
        snprintf(b->row, sizeof b->row, "%s", row);
    }
}

/* The payload of probe jb's column arg a (its argument number). */
static int pay_of(gen *g, int jb, int a)
{
    for (int i = 0; i < g->k->npays; i++)
        if (g->k->pays[i].build == jb && g->k->pays[i].arg == a)
            return i;
    if (g->k->npays == COPROC__QP_MAX_ARGS)
        return fail(g, "more than %d build-side columns in one pipeline", COPROC__QP_MAX_ARGS);
    g->k->pays[g->k->npays].build = jb;
    g->k->pays[g->k->npays].arg = a;
    return g->k->npays++;
}

/* The element of direct column b at its row, as the column stores it. A
 * build side's column comes from its payload (the column laid out by key:
 * one load, no row number) when the table is dense. */
static const char *raw_code(gen *g, const binding *b, char *buf, size_t len)
{
    int a = arg_of(g, b->table, b->col);
    a = a < 0 ? 0 : a;
    if (b->pay >= 0) {
        int p = pay_of(g, b->pay, a);
        snprintf(buf, len, "(dense%d ? py%d[d%d] : c%d[%s])", b->pay, p < 0 ? 0 : p, b->pay, a, b->row);
    } else {
        snprintf(buf, len, "c%d[%s]", a, b->row);
    }
    return buf;
}

/* The code that reads binding b (buf holds it for direct columns). */
static const char *bcode(gen *g, const binding *b, char *buf, size_t len)
{
    if (!b->table)
        return b->code;
    if (!g->fp64 && b->type == COPROC_FLOAT64) {
        fail(g, "column \"%s\" is float64: computing with it needs a device with fp64", b->name);
        return "0";
    }
    char raw[48];
    snprintf(buf, len, "((%s)%s)", b->qv == COPROC__QV_INT ? "long" : "real", raw_code(g, b, raw, sizeof raw));
    return buf;
}

/* ---------------------------------------------------------------- nulls */

/* Whether binding b can be null: a column with a validity (known when the
 * kernel is generated, so a plan over columns without nulls gets the code
 * it always had), or a local computed from one. */
static int bnullable_raw(const binding *b)
{
    return b->table ? b->table->cols[b->col]->validity != NULL
                    : b->vcode[0] != 0 || b->raw_nullable;
}

static int bnullable(const binding *b)
{
    if (b->proven)
        return 0;
    return b->table ? b->table->cols[b->col]->validity != NULL : b->vcode[0] != 0;
}

/* The code that is 1 where binding b is valid, 0 where it is null (into
 * buf); NULL when b is never null. A direct column reads its validity bit at
 * its row; a build side's column at the build row its probe found (in a
 * dense table, the row the table holds at the key's slot). */
static const char *bvalid(gen *g, const binding *b, char *buf, size_t len)
{
    if (!bnullable(b))
        return NULL;
    if (!b->table) {
        snprintf(buf, len, "%s", b->vcode);
        return buf;
    }
    int a = arg_find(g, b->table, b->col, 1);
    a = a < 0 ? 0 : a;
    char row[64];
    int w = b->pay >= 0 ? snprintf(row, sizeof row, "(dense%d ? ht%d[d%d] - 1u : %s)", b->pay,
                                   b->pay, b->pay, b->row)
                        : snprintf(row, sizeof row, "%s", b->row);
    if (w < 0 || (size_t)w >= sizeof row ||
        snprintf(buf, len, "((c%d[%s >> 5] >> (%s & 31)) & 1u)", a, row, row) >= (int)len) {
        fail(g, "a validity read too long");
        return "1u";
    }
    return buf;
}

/* Whether expression e reads a value that can be null (raw: of a column
 * with a validity, even where a filter before proved it valid). */
static int nullable_of(const scope *s, const coproc_expr *e, int raw)
{
    if (!e)
        return 0;
    if (e->kind == COPROC__QE_COLUMN) {
        const binding *x = lookup(s, e->name);
        return x && (raw ? bnullable_raw(x) : bnullable(x));
    }
    int r = nullable_of(s, e->a, raw) || nullable_of(s, e->b, raw) || nullable_of(s, e->c, raw);
    for (int i = 0; i < e->n && !r && e->list; i++)
        r = nullable_of(s, e->list[i], raw);
    return r;
}

static int nullable(const scope *s, const coproc_expr *e)
{
    return nullable_of(s, e, 0);
}

/* Whether value expression e reads column `name`. */
static int reads(const coproc_expr *e, const char *name)
{
    if (!e)
        return 0;
    if (e->kind == COPROC__QE_COLUMN)
        return strcmp(e->name, name) == 0;
    return e->kind == COPROC__QE_ARITH && (reads(e->a, name) || reads(e->b, name));
}

/* Whether boolean e being TRUE (is_true) or FALSE needs column `name` valid:
 * a comparison is neither where an operand is null; AND is TRUE when both
 * are, FALSE when either is; OR the other way; NOT swaps. */
static int needs_valid(const coproc_expr *e, int is_true, const char *name)
{
    switch (e->kind) {
    case COPROC__QE_CMP:
    case COPROC__QE_IN:
        return reads(e->a, name) || reads(e->b, name);
    case COPROC__QE_BETWEEN: { /* its two comparisons (FALSE needs only one) */
        coproc_expr lo, hi, both;
        coproc__between_split(e, &lo, &hi, &both);
        return needs_valid(&both, is_true, name);
    }
    case COPROC__QE_AND:
    case COPROC__QE_OR:
        if (is_true == (e->kind == COPROC__QE_AND))
            return needs_valid(e->a, is_true, name) || needs_valid(e->b, is_true, name);
        return needs_valid(e->a, is_true, name) && needs_valid(e->b, is_true, name);
    case COPROC__QE_NOT:
        return needs_valid(e->a, !is_true, name);
    default:
        return 0;
    }
}

/* Past filter pred, the columns it needs valid to pass are never null:
 * the code after it reads them as columns without nulls. */
static void prove_valid(scope *s, const coproc_expr *pred)
{
    for (int i = 0; i < s->n; i++)
        if (bnullable(&s->b[i]) && lookup(s, s->b[i].name) == &s->b[i] &&
            needs_valid(pred, 1, s->b[i].name))
            s->b[i].proven = 1;
}

/* " & v" for every nullable column value expression e reads: a value is
 * null when any operand is (SQL's arithmetic). */
static void gvalid_terms(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o)
{
    if (!e)
        return;
    if (e->kind == COPROC__QE_COLUMN) {
        const binding *x = lookup(s, e->name);
        char buf[160];
        const char *v = x ? bvalid(g, x, buf, sizeof buf) : NULL;
        if (v)
            coproc__sb_printf(o, " & %s", v);
        return;
    }
    if (e->kind == COPROC__QE_ARITH) {
        gvalid_terms(g, s, e->a, o);
        gvalid_terms(g, s, e->b, o);
    }
}

/* The validity of value expression e as an int expression (1: valid). */
static void gvalid(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o)
{
    coproc__sb_printf(o, "(int)(1u");
    gvalid_terms(g, s, e, o);
    coproc__sb_printf(o, ")");
}

static int gexpr(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o);

static void as_real(coproc__strbuf *o, int qv, const coproc__strbuf *x)
{
    if (qv == COPROC__QV_INT)
        coproc__sb_printf(o, "((real)%s)", x->s);
    else
        coproc__sb_printf(o, "%s", x->s);
}

static void constant(coproc__strbuf *o, const coproc_expr *e)
{
    if (e->kind == COPROC__QE_INT) {
        if (e->i == INT64_MIN)
            coproc__sb_printf(o, "((long)(-9223372036854775807L - 1))");
        else
            coproc__sb_printf(o, "((long)%" PRId64 "L)", e->i);
    } else if (isnan(e->f)) {
        coproc__sb_printf(o, "((real)NAN)");
    } else if (isinf(e->f)) {
        coproc__sb_printf(o, "((real)(%sINFINITY))", e->f < 0 ? "-" : "");
    } else {
        coproc__sb_printf(o, "((real)%a)", e->f);
    }
}

static const char *cmp_op(coproc_cmp c)
{
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
    return ops[c];
}

/* Two operands, as long when both are integers, else as real. */
static int binary(gen *g, const scope *s, const coproc_expr *a, const coproc_expr *b,
                  coproc__strbuf *oa, coproc__strbuf *ob, int *as_float)
{
    coproc__strbuf xa = {0}, xb = {0};
    int qa = gexpr(g, s, a, &xa), qb = gexpr(g, s, b, &xb);
    int r = 0;
    if (qa < 0 || qb < 0 || xa.failed || xb.failed) {
        r = fail(g, "expression too large");
    } else {
        *as_float = qa == COPROC__QV_FLOAT || qb == COPROC__QV_FLOAT;
        if (*as_float) {
            as_real(oa, qa, &xa);
            as_real(ob, qb, &xb);
        } else {
            coproc__sb_printf(oa, "%s", xa.s);
            coproc__sb_printf(ob, "%s", xb.s);
        }
    }
    coproc__sb_free(&xa);
    coproc__sb_free(&xb);
    return r;
}

/* A 32-bit operand: an int32 column read directly, or an integer constant
 * in int's range. Comparisons between such operands are exact in int,
 * which a CPU compares twice as many of a vector instruction as long. */
static int narrow(gen *g, const scope *s, const coproc_expr *e, char *buf, size_t len)
{
    if (e->kind == COPROC__QE_INT && e->i >= INT32_MIN && e->i <= INT32_MAX) {
        snprintf(buf, len, "(%" PRId64 ")", e->i);
        return 1;
    }
    if (e->kind != COPROC__QE_COLUMN)
        return 0;
    const binding *x = lookup(s, e->name);
    if (!x || !x->table || x->type != COPROC_INT32)
        return 0;
    raw_code(g, x, buf, len);
    return 1;
}

static int gexpr_at(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o);

static int gexpr(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o)
{
    if (g->depth >= QGEN_MAX_DEPTH)
        return fail(g, "an expression nested more than %d deep", QGEN_MAX_DEPTH);
    g->depth++;
    int r = gexpr_at(g, s, e, o);
    g->depth--;
    return r;
}

static int gexpr_at(gen *g, const scope *s, const coproc_expr *e, coproc__strbuf *o)
{
    coproc__strbuf a = {0}, b = {0};
    char na[64], nb[64], nc[64];
    int fl = 0, r = -1;
    switch (e->kind) {
    case COPROC__QE_COLUMN: {
        const binding *x = lookup(s, e->name);
        if (!x)
            return fail(g, "no column \"%s\" in the pipeline", e->name);
        char buf[64];
        coproc__sb_printf(o, "%s", bcode(g, x, buf, sizeof buf));
        return x->qv;
    }
    case COPROC__QE_INT:
    case COPROC__QE_FLOAT:
        constant(o, e);
        return e->kind == COPROC__QE_INT ? COPROC__QV_INT : COPROC__QV_FLOAT;
    case COPROC__QE_ARITH:
        if (binary(g, s, e->a, e->b, &a, &b, &fl) == 0) {
            static const char ops[] = "+-*/";
            if (fl)
                coproc__sb_printf(o, "(%s %c %s)", a.s, ops[e->arith], b.s);
            else if (e->arith == COPROC_ARITH_DIV)
                coproc__sb_printf(o, "qdiv(%s, %s)", a.s, b.s);
            else /* wrapping: signed overflow is undefined in OpenCL C as in C */
                coproc__sb_printf(o, "((long)((ulong)%s %c (ulong)%s))", a.s, ops[e->arith], b.s);
            r = fl ? COPROC__QV_FLOAT : COPROC__QV_INT;
        }
        break;
    case COPROC__QE_CMP:
        if (narrow(g, s, e->a, na, sizeof na) && narrow(g, s, e->b, nb, sizeof nb)) {
            coproc__sb_printf(o, "(%s %s %s)", na, cmp_op(e->cmp), nb);
            return COPROC__QV_BOOL;
        }
        if (binary(g, s, e->a, e->b, &a, &b, &fl) == 0) {
            coproc__sb_printf(o, "(%s %s %s)", a.s, cmp_op(e->cmp), b.s);
            r = COPROC__QV_BOOL;
        }
        break;
    case COPROC__QE_BETWEEN: {
        if (narrow(g, s, e->a, na, sizeof na) && narrow(g, s, e->b, nb, sizeof nb) &&
            narrow(g, s, e->c, nc, sizeof nc)) {
            coproc__sb_printf(o, "(%s <= %s & %s <= %s)", nb, na, na, nc);
            return COPROC__QV_BOOL;
        }
        coproc__strbuf c = {0}, d = {0};
        int fl2 = 0;
        if (binary(g, s, e->a, e->b, &a, &b, &fl) == 0 && binary(g, s, e->a, e->c, &c, &d, &fl2) == 0) {
            coproc__sb_printf(o, "(%s <= %s & %s <= %s)", b.s, a.s, c.s, d.s);
            r = COPROC__QV_BOOL;
        }
        coproc__sb_free(&c);
        coproc__sb_free(&d);
        break;
    }
    case COPROC__QE_IN:
        coproc__sb_printf(o, "(");
        for (int i = 0; i < e->n; i++) {
            coproc__strbuf x = {0}, y = {0};
            int f = 0;
            if (narrow(g, s, e->a, na, sizeof na) && narrow(g, s, e->list[i], nb, sizeof nb))
                coproc__sb_printf(o, "%s%s == %s", i ? " | " : "", na, nb);
            else if (binary(g, s, e->a, e->list[i], &x, &y, &f) == 0)
                coproc__sb_printf(o, "%s%s == %s", i ? " | " : "", x.s, y.s);
            coproc__sb_free(&x);
            coproc__sb_free(&y);
        }
        coproc__sb_printf(o, ")");
        r = g->failed ? -1 : COPROC__QV_BOOL;
        break;
    case COPROC__QE_AND:
    case COPROC__QE_OR:
        if (gexpr(g, s, e->a, &a) >= 0 && gexpr(g, s, e->b, &b) >= 0) {
            /* & and |, not && and ||: both sides are 0/1 ints without side
             * effects, and evaluating both spares a branch a row that the
             * data would mispredict (Crystal predicates the same way). */
            coproc__sb_printf(o, "(%s %s %s)", a.s, e->kind == COPROC__QE_AND ? "&" : "|", b.s);
            r = COPROC__QV_BOOL;
        }
        break;
    case COPROC__QE_NOT:
        if (gexpr(g, s, e->a, &a) >= 0) {
            coproc__sb_printf(o, "(!%s)", a.s);
            r = COPROC__QV_BOOL;
        }
        break;
    case COPROC__QE_STRING: /* resolved into codes when the node was built */
    case COPROC__QE_PREFIX:
        break;
    }
    coproc__sb_free(&a);
    coproc__sb_free(&b);
    if (r < 0)
        return fail(g, "an expression could not be generated");
    return r;
}

/* A boolean expression over values that can be null, in SQL's three-valued
 * logic: statements (into g->stmts) that set two int locals, named in t and
 * f: t is 1 where e is TRUE, f where it is FALSE (both 0: UNKNOWN). A
 * comparison with a null operand is UNKNOWN; AND and OR are Kleene's
 * (FALSE AND x is FALSE, TRUE OR x is TRUE); NOT swaps the two. Locals keep
 * the text linear in the expression's size. */
static int gbool(gen *g, const scope *s, const coproc_expr *e, char *t, char *f, size_t len)
{
    coproc__strbuf x = {0}, v = {0};
    int r = 0;
    switch (e->kind) {
    case COPROC__QE_NOT:
        /* NOT: TRUE and FALSE swap, UNKNOWN stays */
        return gbool(g, s, e->a, f, t, len);
    case COPROC__QE_BETWEEN: {
        coproc_expr lo, hi, both;
        coproc__between_split(e, &lo, &hi, &both);
        return gbool(g, s, &both, t, f, len);
    }
    case COPROC__QE_AND:
    case COPROC__QE_OR: {
        char ta[24], fa[24], tb[24], fb[24];
        if (gbool(g, s, e->a, ta, fa, sizeof ta) != 0 || gbool(g, s, e->b, tb, fb, sizeof tb) != 0)
            return -1;
        int n = g->locals++, is_and = e->kind == COPROC__QE_AND;
        coproc__sb_printf(g->stmts, "%sint qt%d = %s %s %s, qf%d = %s %s %s;\n", g->ind, n, ta,
                          is_and ? "&" : "|", tb, n, fa, is_and ? "|" : "&", fb);
        snprintf(t, len, "qt%d", n);
        snprintf(f, len, "qf%d", n);
        return 0;
    }
    default:
        break;
    }
    int qv = gexpr(g, s, e, &x);
    if (qv < 0 || x.failed) {
        coproc__sb_free(&x);
        return fail(g, "expression too large");
    }
    /* The operands' validity (a comparison, BETWEEN, IN; a value tested as
     * a boolean is its own operand). */
    if (e->kind == COPROC__QE_CMP || e->kind == COPROC__QE_BETWEEN || e->kind == COPROC__QE_IN) {
        coproc__sb_printf(&v, "(int)(1u");
        gvalid_terms(g, s, e->a, &v);
        gvalid_terms(g, s, e->b, &v);
        gvalid_terms(g, s, e->c, &v);
        coproc__sb_printf(&v, ")");
    } else {
        gvalid(g, s, e, &v);
    }
    if (v.failed) {
        r = fail(g, "expression too large");
    } else {
        int n = g->locals++;
        coproc__sb_printf(g->stmts,
                          "%sint qt%d, qf%d;\n"
                          "%s{\n"
                          "%s    int x_ = (%s) != 0, v_ = %s;\n"
                          "%s    qt%d = v_ & x_;\n"
                          "%s    qf%d = v_ & !x_;\n"
                          "%s}\n",
                          g->ind, n, n, g->ind, g->ind, x.s, v.s, g->ind, n, g->ind, n, g->ind);
        snprintf(t, len, "qt%d", n);
        snprintf(f, len, "qf%d", n);
    }
    coproc__sb_free(&x);
    coproc__sb_free(&v);
    return r;
}

/* bind_local for an expression that can be null: its value vN and its
 * validity qvN (a boolean is 1 where TRUE, null where UNKNOWN). */
static int bind_local_nullable(gen *g, scope *s, const char *name, const coproc_expr *e,
                               coproc_type out)
{
    coproc__strbuf x = {0}, v = {0};
    int qv = COPROC__QV_INT, r = 0;
    g->stmts = &g->body;
    g->ind = "        ";
    if (e->kind >= COPROC__QE_CMP && e->kind <= COPROC__QE_NOT) {
        char t[24], f[24];
        if (gbool(g, s, e, t, f, sizeof t) != 0)
            return -1;
        coproc__sb_printf(&x, "%s", t);
        coproc__sb_printf(&v, "(%s | %s)", t, f);
    } else {
        qv = gexpr(g, s, e, &x);
        gvalid(g, s, e, &v);
    }
    binding *b = qv < 0 || x.failed || v.failed ? NULL : push(g, s);
    if (b) {
        int n = g->locals++;
        coproc__sb_printf(&g->body, "        %s v%d = %s;\n        int qv%d = %s;\n",
                          qv == COPROC__QV_FLOAT ? "real" : "long", n, x.s, n, v.s);
        b->name = name;
        b->qv = qv;
        b->type = out;
        snprintf(b->code, sizeof b->code, "v%d", n);
        snprintf(b->vcode, sizeof b->vcode, "qv%d", n);
    } else {
        r = fail(g, "expression too large");
    }
    coproc__sb_free(&x);
    coproc__sb_free(&v);
    return r;
}

/* Emit `type vN = expr;` and bind name to vN. */
static int bind_local(gen *g, scope *s, const char *name, const coproc_expr *e, coproc_type out)
{
    if (nullable(s, e))
        return bind_local_nullable(g, s, name, e, out);
    coproc__strbuf x = {0};
    int qv = gexpr(g, s, e, &x);
    if (qv < 0 || x.failed) {
        coproc__sb_free(&x);
        return fail(g, "expression too large");
    }
    /* over a column a filter proved valid: an aggregate of it over no rows
     * is still null, as one operator at a time (the column has a validity) */
    int raw_nullable = nullable_of(s, e, 1);
    binding *b = push(g, s);
    if (!b) {
        coproc__sb_free(&x);
        return -1;
    }
    int v = g->locals++;
    const char *t = qv == COPROC__QV_INT ? "long" : qv == COPROC__QV_FLOAT ? "real" : "int";
    coproc__sb_printf(&g->body, "        %s v%d = %s;\n", t, v, x.s);
    coproc__sb_free(&x);
    b->name = name;
    b->qv = qv == COPROC__QV_BOOL ? COPROC__QV_INT : qv;
    b->raw_nullable = raw_nullable;
    b->type = out;
    snprintf(b->code, sizeof b->code, "v%d", v);
    return 0;
}

/* ---------------------------------------------------------------- steps */

static int steps(gen *g, scope *s, int pi, const char *row, int filters);

/* A project replaces the scope by its outputs. */
static int project(gen *g, scope *s, const coproc_node *n)
{
    scope *out = calloc(1, sizeof *out);
    if (!out)
        return fail(g, "out of host memory");
    for (int m = 0; m < n->n && !g->failed; m++) {
        const coproc_expr *e = n->exprs[m];
        if (e->kind == COPROC__QE_COLUMN) {
            const binding *x = lookup(s, e->name);
            binding *b = push(g, out);
            if (!x || !b) {
                fail(g, "%s: no column \"%s\"", n->label, e->name);
                break;
            }
            *b = *x;
            b->name = n->names[m];
        } else {
            /* Its local is computed in the current scope, then bound in the new one. */
            scope *tmp = s;
            if (bind_local(g, tmp, n->names[m], e, n->schema.types[m]) == 0) {
                binding *b = push(g, out);
                if (b)
                    *b = tmp->b[--tmp->n];
            }
        }
    }
    if (!g->failed)
        *s = *out;
    free(out);
    return g->failed ? -1 : 0;
}

/* The column of the build pipeline's source table that its key `name` is,
 * through the renames of its projections; -1 when it is computed. */
static int build_key_col(const coproc__qpipe *bp, const char *name)
{
    for (int i = bp->nsteps - 1; i >= 0; i--) {
        const coproc_node *n = bp->steps[i].node;
        if (bp->steps[i].kind != COPROC__QS_PROJECT)
            continue;
        int m = 0;
        while (m < n->n && strcmp(n->names[m], name) != 0)
            m++;
        if (m == n->n || n->exprs[m]->kind != COPROC__QE_COLUMN)
            return -1;
        name = n->exprs[m]->name;
    }
    for (int c = 0; c < bp->src->n; c++)
        if (strcmp(bp->src->names[c], name) == 0)
            return c;
    return -1;
}

/* The key of a join on several columns packed into one long: the sum over
 * its columns m of (x_m - klo<tag>m) * kst<tag>m, where x_m is the code in
 * xs[m] (kernel arguments klo/kst: the source depends on the query's shape,
 * not on the ranges). The caller has checked each x_m within its range. */
static void packed_key(coproc__strbuf *o, int n, char xs[][96], const char *tag)
{
    coproc__sb_printf(o, "(");
    for (int m = 0; m < n; m++)
        coproc__sb_printf(o, "%s(%s - klo%s%d) * kst%s%d", m ? " + " : "", xs[m], tag, m, tag, m);
    coproc__sb_printf(o, ")");
}

/* The build side's key at row `row` of its source, as a long: its column,
 * or its columns packed (the table holds only keys within the ranges). */
static int build_key_at(gen *g, const coproc__qpipe *bp, const coproc_node *j, const char *row,
                        const char *tag, coproc__strbuf *o)
{
    char xs[COPROC__QP_MAX_JOIN_KEYS][96];
    for (int m = 0; m < j->njoin_keys; m++) {
        int bc = build_key_col(bp, j->build_keys[m]);
        if (bc < 0)
            return fail(g, "%s: build key \"%s\" is computed, not a column", j->label, j->build_keys[m]);
        int kc = arg_of(g, bp->src, bc);
        if (kc < 0)
            return -1;
        snprintf(xs[m], sizeof xs[m], "(long)c%d[%s]", kc, row);
    }
    if (j->njoin_keys == 1)
        coproc__sb_printf(o, "%s", xs[0]);
    else
        packed_key(o, j->njoin_keys, xs, tag);
    return o->failed ? fail(g, "out of host memory") : 0;
}

static int probe(gen *g, scope *s, const coproc__qstep *st)
{
    const coproc_node *j = st->node;
    const coproc__qpipe *bp = &g->prog->p[st->build];
    int nk = j->njoin_keys;
    if (nk > COPROC__QP_MAX_JOIN_KEYS)
        return fail(g, "%s: a key of %d columns (%d at most)", j->label, nk, COPROC__QP_MAX_JOIN_KEYS);
    if (!bp->src)
        return fail(g, "%s: the build side has not run", j->label);
    int jb = g->k->nbuilds++;
    g->k->builds[jb] = st->build;
    coproc__strbuf *o = &g->body;
    char tag[16], held_row[24], xs[COPROC__QP_MAX_JOIN_KEYS][96];
    snprintf(tag, sizeof tag, "%d_", jb);
    snprintf(held_row, sizeof held_row, "r%d - 1u", jb);
    /* The build side's key first: its columns take the lower argument numbers. */
    coproc__strbuf pk = {0}, bk = {0};
    if (build_key_at(g, bp, j, held_row, tag, &bk) < 0) {
        coproc__sb_free(&bk);
        return -1;
    }
    for (int m = 0; m < nk; m++) {
        const binding *key = lookup(s, j->probe_keys[m]);
        if (!key) {
            coproc__sb_free(&bk);
            return fail(g, "%s: no probe key \"%s\"", j->label, j->probe_keys[m]);
        }
        char kbuf[64], vbuf[160];
        const char *kcode = bcode(g, key, kbuf, sizeof kbuf);
        /* A null key matches nothing. */
        const char *kvalid = bvalid(g, key, vbuf, sizeof vbuf);
        if (kvalid)
            coproc__sb_printf(o, "        if (!%s)\n            continue;\n", kvalid);
        snprintf(xs[m], sizeof xs[m], "%s", kcode);
        if (j->key_remap[m]) {
            /* Strings of two dictionaries: the probe's code becomes the
             * build side's (-1 where it lacks the string: no match). */
            coproc__sb_printf(o,
                              "        long pm%d_%d = %s;\n"
                              "        long pk%d_%d = (ulong)pm%d_%d < (ulong)nrm%d_%d ? (long)rm%d_%d[pm%d_%d] : -1L;\n",
                              jb, m, kcode, jb, m, jb, m, jb, m, jb, m, jb, m);
            snprintf(xs[m], sizeof xs[m], "pk%d_%d", jb, m);
        }
        if (nk > 1) {
            /* A column outside the build side's range matches nothing. */
            if (!j->key_remap[m])
                coproc__sb_printf(o, "        long pk%d_%d = %s;\n", jb, m, kcode);
            snprintf(xs[m], sizeof xs[m], "pk%d_%d", jb, m);
            coproc__sb_printf(o,
                              "        if (pk%d_%d < klo%d_%d || pk%d_%d > khi%d_%d)\n"
                              "            continue;\n",
                              jb, m, jb, m, jb, m, jb, m);
        }
    }
    if (nk > 1)
        packed_key(&pk, nk, xs, tag);
    else
        coproc__sb_printf(&pk, "%s", xs[0]);
    if (pk.failed) {
        coproc__sb_free(&pk);
        coproc__sb_free(&bk);
        return fail(g, "out of host memory");
    }
    /* Dense: the key bitmap says whether the key is in the table, and the
     * build side's columns are read from their payloads at d. Hashed: the
     * row number r, then the columns at r. The probe loop ends on a flag, not
     * a break: Mesa 22.3's llvmpipe (rusticl) gave wrong r to work-items that
     * broke out while others of their SIMD batch probed on (a semi join of
     * test_query lost 14 % of its rows on the GPU path). */
    coproc__sb_printf(o,
                      "        long pk%d = %s;\n"
                      "        uint r%d = 0u;\n"
                      "        ulong d%d = 0;\n"
                      "        if (dense%d) {\n"
                      "            if (pk%d < kmin%d || pk%d > kmax%d)\n"
                      "                continue;\n"
                      "            d%d = (ulong)(pk%d - kmin%d);\n"
                      "            if (!((bm%d[d%d >> 5] >> (d%d & 31)) & 1u))\n"
                      "                continue;\n"
                      "        } else {\n"
                      "            uint h = QHASH(pk%d) & mask%d;\n"
                      "            for (int go = 1; go;) {\n"
                      "                r%d = ht%d[h];\n"
                      "                go = r%d != 0u && %s != pk%d;\n"
                      "                h = (h + 1u) & mask%d;\n"
                      "            }\n"
                      "            if (r%d == 0u)\n"
                      "                continue;\n"
                      "            r%d -= 1u;\n"
                      "        }\n",
                      jb, pk.s, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, jb, bk.s,
                      jb, jb, jb, jb);
    coproc__sb_free(&pk);
    coproc__sb_free(&bk);
    if (j->join == COPROC_JOIN_SEMI)
        return 0;
    /* The build side's columns, read at the matching row. */
    scope *bs = calloc(1, sizeof *bs);
    if (!bs)
        return fail(g, "out of host memory");
    char row[16];
    snprintf(row, sizeof row, "r%d", jb);
    scope_table(g, bs, bp->src, row);
    for (int i = 0; i < bs->n; i++)
        bs->b[i].pay = jb;
    if (!g->failed)
        steps(g, bs, st->build, row, 0);
    for (int i = 0; i < bs->n && !g->failed; i++) {
        binding *b = push(g, s);
        if (b)
            *b = bs->b[i];
    }
    free(bs);
    return g->failed ? -1 : 0;
}

/* The steps of pipeline pi over scope s; filters only when asked (a build
 * side's filters ran when it was built). */
static int steps(gen *g, scope *s, int pi, const char *row, int filters)
{
    const coproc__qpipe *q = &g->prog->p[pi];
    (void)row;
    for (int i = 0; i < q->nsteps && !g->failed; i++) {
        const coproc__qstep *st = &q->steps[i];
        switch (st->kind) {
        case COPROC__QS_FILTER:
            if (filters && nullable(s, st->node->pred)) {
                /* only the rows where it is TRUE pass (not FALSE, not UNKNOWN) */
                char t[24], f[24];
                g->stmts = &g->body;
                g->ind = "        ";
                if (gbool(g, s, st->node->pred, t, f, sizeof t) == 0)
                    coproc__sb_printf(&g->body, "        if (!%s)\n            continue;\n", t);
                prove_valid(s, st->node->pred);
            } else if (filters) {
                coproc__strbuf x = {0};
                if (gexpr(g, s, st->node->pred, &x) >= 0)
                    coproc__sb_printf(&g->body, "        if (!%s)\n            continue;\n", x.s);
                coproc__sb_free(&x);
            }
            break;
        case COPROC__QS_PROJECT:
            project(g, s, st->node);
            break;
        case COPROC__QS_PROBE:
            if (!filters)
                return fail(g, "a build side that probes");
            probe(g, s, st);
            break;
        }
    }
    return g->failed ? -1 : 0;
}

/* ---------------------------------------------------------------- the row loop */

/* Rows a CPU work-item tests at once before running the body on the survivors
 * (2048 against 512: q3.1 about 6 % faster on PoCL, within noise elsewhere). */
#define QTILE 2048

/* Branch-free statements that clear `keep` for a row that certainly fails
 * pipeline pi's leading steps: its filters up to the first projection or
 * probe, and that probe's miss when its table is dense. The row body still
 * checks everything, so this only has to be right where it says 0. Empty
 * when there is nothing to test. */
static void prefilter(gen *g, const scope *s, int pi, coproc__strbuf *filters, coproc__strbuf *o)
{
    const coproc__qpipe *q = &g->prog->p[pi];
    int nprobes = 0;
    for (int i = 0; i < q->nsteps && !g->failed; i++) {
        const coproc__qstep *st = &q->steps[i];
        if (st->kind == COPROC__QS_FILTER && nprobes == 0 && nullable(s, st->node->pred)) {
            char t[24], f[24];
            g->stmts = filters;
            g->ind = "            ";
            if (gbool(g, s, st->node->pred, t, f, sizeof t) == 0)
                coproc__sb_printf(filters, "            keep &= %s;\n", t);
            continue;
        }
        if (st->kind == COPROC__QS_FILTER && nprobes == 0) {
            coproc__strbuf x = {0};
            if (gexpr(g, s, st->node->pred, &x) >= 0)
                coproc__sb_printf(filters, "            keep &= %s;\n", x.s);
            coproc__sb_free(&x);
            continue;
        }
        if (st->kind != COPROC__QS_PROBE)
            break;
        /* The leading probes are tables 0, 1, ... (probe() numbers them in
         * step order); a key read directly from the row is tested against
         * a dense table's bitmap. Slot 0 exists in every bitmap: the load
         * is always in bounds. */
        int jb = nprobes++;
        const binding *key = lookup(s, st->node->probe_key);
        if (!key || !key->table || st->node->njoin_keys > 1 || st->node->key_remap[0])
            break;
        /* In the body an earlier probe's build columns shadow the row's. */
        int shadowed = 0;
        for (int e = i - jb; e < i; e++)
            shadowed |= coproc__schema_find(&q->steps[e].node->build->schema, st->node->probe_key) >= 0;
        if (shadowed)
            break;
        char buf[64];
        const char *kcode = bcode(g, key, buf, sizeof buf);
        if (jb == 0 && filters->len == 0 && key->type == COPROC_INT32) {
            /* No filter before it: the first probe's test goes into the
             * vectorised flag loop over every row, in 32-bit lanes for an
             * int32 key (row_loop sets lo32_, hi32_ and skip32_). */
            char nbuf[64];
            coproc__sb_printf(filters,
                              "            {\n"
                              "                int pk_ = %s;\n"
                              "                int in_ = (pk_ >= lo32_) & (pk_ <= hi32_);\n"
                              "                uint d_ = in_ ? (uint)(pk_ - lo32_) : 0u;\n"
                              "                uint w_ = bm0[d_ >> 5];\n"
                              "                keep &= skip32_ | !dense0 | (in_ & (int)((w_ >> (d_ & 31u)) & 1u));\n"
                              "            }\n",
                              raw_code(g, key, nbuf, sizeof nbuf));
            continue;
        }
        if (jb == 0 && filters->len == 0) {
            /* No filter before it: the first probe's test goes into the
             * vectorised flag loop over every row. */
            coproc__sb_printf(filters,
                              "            {\n"
                              "                long pk_ = %s;\n"
                              "                int in_ = (pk_ >= kmin0) & (pk_ <= kmax0);\n"
                              "                ulong d_ = in_ ? (ulong)(pk_ - kmin0) : 0;\n"
                              "                uint w_ = bm0[d_ >> 5];\n"
                              "                keep &= !dense0 | (in_ & (int)((w_ >> (d_ & 31)) & 1u));\n"
                              "            }\n",
                              kcode);
            continue;
        }
        coproc__sb_printf(o,
                          "        for (uint x_ = 0; x_ < k_; x_++) {\n"
                          "            ulong i = t_ + sel_[x_];\n"
                          "            long pk_ = %s;\n"
                          "            int in_ = (pk_ >= kmin%d) & (pk_ <= kmax%d);\n"
                          "            ulong d_ = in_ ? (ulong)(pk_ - kmin%d) : 0;\n"
                          "            uint w_ = bm%d[d_ >> 5];\n"
                          "            sel_[k2_] = sel_[x_];\n"
                          "            k2_ += !dense%d | (in_ & (int)((w_ >> (d_ & 31)) & 1u));\n"
                          "        }\n"
                          "        k_ = k2_;\n"
                          "        k2_ = 0;\n",
                          kcode, jb, jb, jb, jb, jb);
    }
}

/* The loop over the rows this work-item owns with `body` (which may
 * `continue`) inside. On CPU devices rows are tested a tile at a time by the
 * branch-free prefilter, which compacts the survivors' indices; the body then
 * runs on those alone, so a selective filter costs no mispredicted branch a
 * row. GPUs keep one row a work-item per step (Crystal's model). */
/* The source's columns the body reads at row i that the passes before it did
 * not: read once for every surviving row in a loop of their own, before the
 * body, so their cache misses overlap (many loads in flight) instead of
 * each waiting behind the body's probes. The read's result goes to a
 * volatile, so the compiler keeps it. */
static void touch_survivors(coproc__strbuf *o, const coproc__strbuf *filters, const coproc__strbuf *probe,
                            const char *body)
{
    char seen[COPROC__QP_MAX_ARGS] = {0};
    for (const char *p = body; (p = strstr(p, "c")) != NULL; p++) {
        if (p > body && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        char *end;
        long a = strtol(p + 1, &end, 10);
        if (end == p + 1 || strncmp(end, "[i]", 3) != 0 || a < 0 || a >= COPROC__QP_MAX_ARGS || seen[a])
            continue;
        char tok[24];
        snprintf(tok, sizeof tok, "c%ld[i]", a);
        seen[a] = 1;
        if ((filters->s && strstr(filters->s, tok)) || (probe->s && strstr(probe->s, tok)))
            continue;
        coproc__sb_printf(o,
                          "        {\n"
                          "            uint t_n = 0;\n"
                          "            for (uint x_ = 0; x_ < k_; x_++)\n"
                          "                t_n += c%ld[t_ + sel_[x_]] != 0;\n"
                          "            volatile uint t_sink = t_n;\n"
                          "            (void)t_sink;\n"
                          "        }\n",
                          a);
    }
}

/* QSEL[b]: the positions of b's set bits, in order (the rest 0); read by
 * the row loop's compaction on the CPU path (and wherever rows keep their
 * order). Once a program, at its scope: as a kernel's own __constant it made
 * PoCL 3.1's clBuildProgram 4x slower (1.4 s against 0.36 s for a group-by
 * pipeline). */
static void qsel_table(coproc__strbuf *o, int keep_order)
{
    coproc__sb_printf(o, "#if COPROC_CPU || %d\n__constant ushort8 QSEL[256] = {", keep_order);
    for (int b = 0; b < 256; b++) {
        int pos[8] = {0}, np = 0;
        for (int x = 0; x < 8; x++)
            if (b >> x & 1)
                pos[np++] = x;
        coproc__sb_printf(o, "%s(ushort8)(%d,%d,%d,%d,%d,%d,%d,%d)", b ? "," : "", pos[0], pos[1], pos[2],
                          pos[3], pos[4], pos[5], pos[6], pos[7]);
    }
    coproc__sb_printf(o, "};\n#endif\n\n");
}

static void row_loop(coproc__strbuf *o, const coproc__strbuf *filters, const coproc__strbuf *probe,
                     const char *body, int keep_order)
{
    int pre = filters->len || probe->len;
    if (keep_order && !pre) {
        /* Rows in order on any device: a contiguous chunk a work-item. */
        coproc__sb_printf(o,
                          "    ulong chunk_ = (n + get_global_size(0) - 1) / get_global_size(0);\n"
                          "    ulong end_ = min((ulong)n, (get_global_id(0) + 1) * chunk_);\n"
                          "    for (ulong i = get_global_id(0) * chunk_; i < end_; i++) {\n%s    }\n",
                          body);
        return;
    }
    if (pre) {
        /* Three passes a tile: the filters into flags (a loop without
         * branches that the compiler vectorises), the flags into the
         * indices of the rows that passed, then the first probe's test on
         * those, compacting in place. */
        /* In order on any device when asked (keep_order): a tile's rows
         * stay in order, and work-items' chunks are contiguous. */
        if (strstr(filters->s ? filters->s : "", "lo32_"))
            /* Table 0's key bounds as ints: an empty range (lo > hi) when
             * no int can match; no test (skip32_) when its offsets do not
             * fit an int's arithmetic. */
            coproc__sb_printf(o, "#if COPROC_CPU || %d\n"
                                 "    int lo32_ = 1, hi32_ = 0, skip32_ = kmin0 < INT_MIN;\n"
                                 "    if (!skip32_ && kmin0 <= kmax0 && kmin0 <= INT_MAX) {\n"
                                 "        lo32_ = (int)kmin0;\n"
                                 "        hi32_ = (int)min(kmax0, (long)INT_MAX);\n"
                                 "    }\n"
                                 "#endif\n",
                              keep_order);
        coproc__sb_printf(o,
                          "#if COPROC_CPU || %d\n"
                          "    ulong chunk_ = (n + get_global_size(0) - 1) / get_global_size(0);\n"
                          "    ulong beg_ = get_global_id(0) * chunk_, end_ = min((ulong)n, beg_ + chunk_);\n"
                          "    for (ulong t_ = beg_; t_ < end_; t_ += %d) {\n"
                          "        uint m_ = (uint)min((ulong)%d, end_ - t_);\n"
                          "        ushort sel_[%d];\n"
                          "        uint k_ = 0;\n",
                          keep_order, QTILE, QTILE, QTILE + 8);
        /* The flags to indices eight at a time: their low bits gathered
         * into a byte by one multiply, the byte's set positions from a
         * table (QSEL), stored at once; sel_ has room for the overhang. */
        if (filters->len)
            coproc__sb_printf(o,
                              "        uchar f_[%d];\n"
                              "        for (uint j_ = 0; j_ < m_; j_++) {\n"
                              "            ulong i = t_ + j_;\n"
                              "            int keep = 1;\n%s"
                              "            f_[j_] = (uchar)keep;\n"
                              "        }\n"
                              "        for (uint j_ = m_; j_ < ((m_ + 7u) & ~7u); j_++)\n"
                              "            f_[j_] = 0;\n"
                              "        for (uint j_ = 0; j_ < m_; j_ += 8) {\n"
                              "            ulong w_ = as_ulong(vload8(0, f_ + j_));\n"
                              "            uint b_ = (uint)((w_ * 0x0102040810204080UL) >> 56);\n"
                              "            vstore8(QSEL[b_] + (ushort8)((ushort)j_), 0, sel_ + k_);\n"
                              "            k_ += popcount(b_);\n"
                              "        }\n",
                              QTILE, filters->s);
        else
            coproc__sb_printf(o,
                              "        for (uint j_ = 0; j_ < m_; j_++)\n"
                              "            sel_[j_] = (ushort)j_;\n"
                              "        k_ = m_;\n");
        if (probe->len)
            coproc__sb_printf(o, "        uint k2_ = 0;\n%s", probe->s);
        touch_survivors(o, filters, probe, body);
        coproc__sb_printf(o,
                          "        for (uint x_ = 0; x_ < k_; x_++) {\n"
                          "        ulong i = t_ + sel_[x_];\n%s"
                          "        }\n"
                          "    }\n"
                          "#else\n",
                          body);
    }
    coproc__sb_printf(o, "    COPROC_FOR_EACH_ROW(i, n) {\n%s    }\n", body);
    if (pre)
        coproc__sb_printf(o, "#endif\n");
}

/* ---------------------------------------------------------------- kernels */

static const char *PRELUDE =
    "#ifdef COPROC_FP64\n"
    "typedef double real;\n"
    "#else\n"
    "typedef float real;\n"
    "#endif\n"
    "#define QHASH(k) ((uint)(((ulong)(k) * 0x9E3779B97F4A7C15UL) >> 32))\n"
    "long qdiv(long a, long b)\n"
    "{\n"
    "    return b == 0 ? 0 : (b == -1 ? (long)(0UL - (ulong)a) : a / b);\n"
    "}\n";

/* A column's element type in the kernel: float64 as its bits (ulong) on a
 * device without doubles, where it can only be copied. */
static const char *arg_type(const gen *g, coproc_type t)
{
    return t == COPROC_FLOAT64 && !g->fp64 ? "ulong" : cl_type(t);
}

/* The kernel's leading arguments: rows, the columns, the probed tables. */
static void params(gen *g, coproc__strbuf *o)
{
    coproc__sb_printf(o, "ulong n");
    for (int i = 0; i < g->k->nargs; i++) {
        const coproc__qarg *a = &g->k->args[i];
        coproc__sb_printf(o, ", __global const %s *restrict c%d",
                          arg_type(g, coproc__qarg_column(a)->type), i);
    }
    for (int j = 0; j < g->k->nbuilds; j++) {
        coproc__sb_printf(o, ", __global const uint *ht%d, __global const uint *bm%d, int dense%d, long kmin%d,"
                          " long kmax%d, uint mask%d", j, j, j, j, j, j);
        /* a key of several columns: each column's range and stride */
        /* a key of several columns: each column's range and stride; a
         * string key of two dictionaries: its map of codes */
        const coproc_node *jn = g->prog->p[g->k->builds[j]].sink_node;
        for (int m = 0; m < jn->njoin_keys; m++) {
            if (jn->njoin_keys > 1)
                coproc__sb_printf(o, ", long klo%d_%d, long khi%d_%d, long kst%d_%d", j, m, j, m, j, m);
            if (jn->key_remap[m])
                coproc__sb_printf(o, ", __global const int *rm%d_%d, long nrm%d_%d", j, m, j, m);
        }
    }
    for (int p = 0; p < g->k->npays; p++) {
        const coproc__qarg *a = &g->k->args[g->k->pays[p].arg];
        coproc__sb_printf(o, ", __global const %s *restrict py%d", arg_type(g, a->table->cols[a->col]->type), p);
    }
}

static const char *agg_identity(int fn, int fl)
{
    /* fmin/fmax return the other argument when one is NaN, so a NaN
     * identity gives the operators' rule: NaN ignored unless every row is NaN. */
    if (fn == COPROC_AGG_MIN)
        return fl ? "((real)NAN)" : "LONG_MAX";
    if (fn == COPROC_AGG_MAX)
        return fl ? "((real)NAN)" : "LONG_MIN";
    return fl ? "((real)0)" : "0L";
}

static void agg_update(coproc__strbuf *o, int fn, int fl, const char *dst, const char *v)
{
    /* v cast to dst's type: a boolean is an int, and min(long, int) is
     * ambiguous in OpenCL C (the kernel would not build) */
    if (fn == COPROC_AGG_MIN)
        coproc__sb_printf(o, "%s = %s(%s, (%s)(%s));\n", dst, fl ? "fmin" : "min", dst,
                          fl ? "real" : "long", v);
    else if (fn == COPROC_AGG_MAX)
        coproc__sb_printf(o, "%s = %s(%s, (%s)(%s));\n", dst, fl ? "fmax" : "max", dst,
                          fl ? "real" : "long", v);
    else if (fl)
        coproc__sb_printf(o, "%s += %s;\n", dst, v);
    else
        coproc__sb_printf(o, "%s = (long)((ulong)%s + (ulong)%s);\n", dst, dst, v);
}

/* Aggregate a's partial v into dst (formats taking a's number): counts
 * and sums add, min and max keep theirs. */
static void partial_combine(coproc__strbuf *o, const coproc__qkernel *k, int a, const char *indent,
                            const char *dst_fmt, const char *v_fmt)
{
    char dst[32], v[32];
    snprintf(dst, sizeof dst, dst_fmt, a);
    snprintf(v, sizeof v, v_fmt, a);
    coproc__sb_printf(o, "%s", indent);
    agg_update(o, k->agg_fn[a] == COPROC_AGG_COUNT ? COPROC_AGG_SUM : k->agg_fn[a], k->agg_float[a],
               dst, v);
}

static int gen_group(gen *g, scope *s, const coproc_node *gb, coproc__strbuf *head, coproc__strbuf *tail,
                     coproc__strbuf *atomic, coproc__strbuf *aparams)
{
    coproc__qkernel *k = g->k;
    if (gb->naggs > 16)
        return fail(g, "%s: more than 16 aggregates", gb->label);
    /* Slot: mixed radix over each key's range in its column. */
    coproc__sb_printf(tail, "        ulong slot = 0;\n");
    for (int m = 0; m < gb->n; m++) {
        const binding *b = lookup(s, gb->names[m]);
        if (!b || !b->table)
            return fail(g, "%s: key \"%s\" is computed, not a column", gb->label, gb->names[m]);
        k->keys[m] = (coproc__qarg){b->table, b->col, 0};
        char buf[64], vbuf[160];
        const char *valid = bvalid(g, b, vbuf, sizeof vbuf);
        if (valid) {
            /* Null keys group together: in the slot after the key's range (gnull). */
            k->key_nullable[m] = 1;
            coproc__sb_printf(
                tail, "        slot += (%s ? (ulong)(%s - gmin%d) : gnull%d) * gstride%d;\n", valid,
                bcode(g, b, buf, sizeof buf), m, m, m);
        } else {
            coproc__sb_printf(tail, "        slot += (ulong)(%s - gmin%d) * gstride%d;\n",
                              bcode(g, b, buf, sizeof buf), m, m);
        }
    }
    k->nkeys = gb->n;
    /* Aggregates over values that can be null skip them: each counts its
     * valid values in a hidden aggregate of its own, after the others. */
    k->naggs = gb->naggs;
    for (int a = 0; a < gb->naggs; a++)
        if (gb->aggs[a].arg && nullable(s, gb->aggs[a].arg)) {
            if (gb->aggs[a].arg->kind >= COPROC__QE_CMP)
                return fail(g, "%s: aggregate \"%s\" of a boolean that can be null", gb->label,
                            gb->aggs[a].name);
            if (k->naggs == COPROC__QP_MAX_PARTIALS)
                return fail(g, "%s: more than %d aggregates with their counts of valid values",
                            gb->label, COPROC__QP_MAX_PARTIALS);
            k->agg_valid[a] = 1 + k->naggs;
            k->agg_fn[k->naggs] = COPROC_AGG_SUM;
            k->agg_float[k->naggs++] = 0;
        } else if (gb->aggs[a].arg && nullable_of(s, gb->aggs[a].arg, 1)) {
            /* valid wherever a row gets here (a filter proved it): null only
             * where the group has no row (no keys, no rows) */
            k->agg_valid[a] = -1;
        }
    int W = 2 * (1 + k->naggs);
    /* The GPU path's atomic tables: (lo, hi) word pairs a slot, the count
     * first, added by QADD (the kernel defines it for its address space). */
    k->atomic_ok = gb->n > 0;
    coproc__sb_printf(atomic, "%s        QADD(t_ + slot * %d, 1L);\n", tail->s ? tail->s : "", W);
    /* Without keys the one slot's partials live in registers (written once
     * at the end); with keys in this work-item's own slots in global memory. */
    int regs = gb->n == 0;
    coproc__sb_printf(tail, regs ? "        cnt_r += 1;\n" : "        cnt[slot] += 1;\n");
    for (int a = 0; a < gb->naggs; a++) {
        const coproc__agg *ag = &gb->aggs[a];
        k->agg_fn[a] = ag->fn;
        /* v: the argument's validity, for an argument that can be null */
        coproc__strbuf v = {0};
        int h = k->agg_valid[a] - 1;
        if (h >= 0) {
            gvalid(g, s, ag->arg, &v);
            char dst[32];
            snprintf(dst, sizeof dst, regs ? "a%d_r" : "a%d[slot]", h);
            coproc__sb_printf(tail, "        %s = (long)((ulong)%s + (ulong)%s);\n", dst, dst, v.s);
            coproc__sb_printf(atomic, "        QADD(t_ + slot * %d + %d, (long)%s);\n", W,
                              2 + 2 * h, v.s);
        }
        if (ag->fn == COPROC_AGG_COUNT || !ag->arg) {
            k->agg_float[a] = 0;
            coproc__sb_free(&v);
            continue;
        }
        coproc__strbuf x = {0};
        int qv = gexpr(g, s, ag->arg, &x);
        if (qv < 0 || v.failed) {
            coproc__sb_free(&x);
            coproc__sb_free(&v);
            return fail(g, "expression too large");
        }
        k->agg_float[a] = qv == COPROC__QV_FLOAT;
        if (k->agg_float[a] || ag->fn == COPROC_AGG_MIN || ag->fn == COPROC_AGG_MAX)
            k->atomic_ok = 0;
        else if (h >= 0) /* a null adds 0 */
            coproc__sb_printf(atomic, "        QADD(t_ + slot * %d + %d, %s ? %s : 0L);\n", W,
                              2 + 2 * a, v.s, x.s);
        else
            coproc__sb_printf(atomic, "        QADD(t_ + slot * %d + %d, %s);\n", W, 2 + 2 * a,
                              x.s);
        char dst[32];
        snprintf(dst, sizeof dst, regs ? "a%d_r" : "a%d[slot]", a);
        coproc__sb_printf(tail, "        ");
        if (h >= 0) { /* a null row updates with the identity: no branch */
            coproc__strbuf sel = {0};
            int fn = ag->fn == COPROC_AGG_AVG ? COPROC_AGG_SUM : ag->fn;
            coproc__sb_printf(&sel, "(%s ? %s : %s)", v.s, x.s, agg_identity(fn, k->agg_float[a]));
            agg_update(tail, ag->fn, k->agg_float[a], dst, sel.s ? sel.s : "0");
            if (sel.failed)
                fail(g, "out of host memory");
            coproc__sb_free(&sel);
        } else {
            agg_update(tail, ag->fn, k->agg_float[a], dst, x.s);
        }
        coproc__sb_free(&x);
        coproc__sb_free(&v);
    }
    /* Every column is known now: the arguments. */
    params(g, head);
    for (int m = 0; m < gb->n; m++)
        coproc__sb_printf(head,
                          k->key_nullable[m] ? ", long gmin%d, ulong gstride%d, ulong gnull%d"
                                             : ", long gmin%d, ulong gstride%d",
                          m, m, m);
    coproc__sb_printf(aparams, "%s", head->s);
    coproc__sb_printf(head, ", ulong S, __global long *pcnt");
    for (int a = 0; a < k->naggs; a++)
        coproc__sb_printf(head, ", __global %s *pa%d", k->agg_float[a] ? "real" : "long", a);
    return 0;
}

/* The GPU path's group-by (Crystal's): each work-group adds its rows into a
 * table in local memory, then adds the table's non-empty slots into the
 * result in global memory (q_local); a table too large for local memory is
 * added into the result directly (q_global). Values are 64-bit, added as
 * two 32-bit words with the carry (32-bit atomics are core OpenCL 1.2; the
 * sum is exact modulo 2^64 like the long it stands for). W words a slot. */
static void atomic_kernels(coproc__strbuf *o, const char *params, const char *body, const char *upd, int w)
{
    static const char *adder =
        "static void qadd_%c(volatile %s uint *p, long v)\n"
        "{\n"
        "    uint lo = (uint)v, hi = (uint)((ulong)v >> 32);\n"
        "    uint old = atomic_add(p, lo);\n"
        "    hi += (uint)(old + lo < old);\n"
        "    if (hi)\n"
        "        atomic_add(p + 1, hi);\n"
        "}\n\n";
    coproc__sb_printf(o, "\n");
    coproc__sb_printf(o, adder, 'l', "__local");
    coproc__sb_printf(o, adder, 'g', "__global");
    coproc__sb_printf(o,
                      "__kernel void q_local(%s, ulong S, __local uint *t_, __global uint *out)\n{\n"
                      "    for (ulong s = get_local_id(0); s < S * %d; s += get_local_size(0))\n"
                      "        t_[s] = 0u;\n"
                      "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                      "#define QADD(p, v) qadd_l(p, v)\n"
                      "    COPROC_FOR_EACH_ROW(i, n) {\n%s%s    }\n"
                      "#undef QADD\n"
                      "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                      "    for (ulong s = get_local_id(0); s < S; s += get_local_size(0)) {\n"
                      "        if ((t_[s * %d] | t_[s * %d + 1]) == 0u)\n"
                      "            continue;\n"
                      "        for (uint w = 0; w < %d; w += 2)\n"
                      "            qadd_g(out + s * %d + w, (long)(((ulong)t_[s * %d + w + 1] << 32) | t_[s * %d + w]));\n"
                      "    }\n"
                      "}\n\n",
                      params, w, body, upd, w, w, w, w, w, w);
    coproc__sb_printf(o,
                      "__kernel void q_global(%s, ulong S, __global uint *t_)\n{\n"
                      "#define QADD(p, v) qadd_g(p, v)\n"
                      "    COPROC_FOR_EACH_ROW(i, n) {\n%s%s    }\n"
                      "#undef QADD\n"
                      "}\n",
                      params, body, upd);
}

int coproc__codegen(const coproc__qprog *prog, int pi, int fp64, coproc__qkernel *k)
{
    memset(k, 0, sizeof *k);
    gen g = {.fp64 = fp64, .prog = prog, .k = k};
    const coproc__qpipe *q = &prog->p[pi];
    scope *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(k->why, sizeof k->why, "out of host memory");
        return -1;
    }
    scope_table(&g, s, q->src, "i");
    coproc__strbuf pre_f = {0}, pre = {0};
    if (q->sink != COPROC__QK_BUILD)
        prefilter(&g, s, pi, &pre_f, &pre);
    steps(&g, s, pi, "i", 1);

    coproc__strbuf *o = &k->src;
    coproc__strbuf head = {0}, tail = {0}, atomic = {0}, aparams = {0};
    coproc__sb_printf(o, "%s\n", PRELUDE);
    /* Rows keep their order where it matters: into a stable order-by, and
     * out of one (the GPU path's strided rows would interleave them). */
    int keep_order = q->sink == COPROC__QK_MATERIALIZE &&
                     (q->order != NULL || (q->src_pipe >= 0 && prog->p[q->src_pipe].order != NULL));
    if (pre_f.len)
        qsel_table(o, keep_order);
    if (!g.failed && q->sink == COPROC__QK_GROUP) {
        const coproc_node *gb = q->sink_node;
        if (gen_group(&g, s, gb, &head, &tail, &atomic, &aparams) == 0) {
            /* q_fresh 0: add to the partials of the launch before (morsels). */
            coproc__sb_printf(o, "__kernel void q_main(%s, uint q_fresh)\n{\n", head.s);
            coproc__sb_printf(o, "    ulong p = get_global_id(0);\n"
                                 "    __global long *cnt = pcnt + p * S;\n");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, "    __global %s *a%d = pa%d + p * S;\n",
                                  k->agg_float[a] ? "real" : "long", a, a);
            coproc__sb_printf(o, "    for (ulong s = 0; q_fresh && s < S; s++) {\n        cnt[s] = 0;\n");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, "        a%d[s] = %s;\n", a, agg_identity(k->agg_fn[a], k->agg_float[a]));
            coproc__sb_printf(o, "    }\n    long cnt_r = 0;\n");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, "    %s a%d_r = %s;\n", k->agg_float[a] ? "real" : "long", a,
                                  agg_identity(k->agg_fn[a], k->agg_float[a]));
            coproc__strbuf rowcode = {0};
            coproc__sb_printf(&rowcode, "%s%s", g.body.s ? g.body.s : "", tail.s);
            row_loop(o, &pre_f, &pre, rowcode.s, 0);
            if (rowcode.failed)
                fail(&g, "out of host memory");
            coproc__sb_free(&rowcode);
            if (gb->n == 0) {
                coproc__sb_printf(o, "    cnt[0] += cnt_r;\n");
                for (int a = 0; a < k->naggs; a++)
                    partial_combine(o, k, a, "    ", "a%d[0]", "a%d_r");
            }
            coproc__sb_printf(o, "}\n\n");
            /* Combine: the partitions' partials, slot by slot. */
            coproc__sb_printf(o, "__kernel void q_combine(ulong P, ulong S, __global const long *pcnt, "
                                 "__global long *ocnt");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, ", __global const %s *pa%d, __global %s *oa%d",
                                  k->agg_float[a] ? "real" : "long", a, k->agg_float[a] ? "real" : "long", a);
            coproc__sb_printf(o, ")\n{\n    ulong s = get_global_id(0);\n    if (s >= S)\n        return;\n"
                                 "    long c = 0;\n");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, "    %s x%d = %s;\n", k->agg_float[a] ? "real" : "long", a,
                                  agg_identity(k->agg_fn[a], k->agg_float[a]));
            coproc__sb_printf(o, "    for (ulong p = 0; p < P; p++) {\n        c += pcnt[p * S + s];\n");
            for (int a = 0; a < k->naggs; a++)
                partial_combine(o, k, a, "        ", "x%d", "pa%d[p * S + s]");
            coproc__sb_printf(o, "    }\n    ocnt[s] = c;\n");
            for (int a = 0; a < k->naggs; a++)
                coproc__sb_printf(o, "    oa%d[s] = x%d;\n", a, a);
            coproc__sb_printf(o, "}\n");
            /* Only the GPU path runs them (group_sink.c): CPU-path builds
             * leave them out rather than compile them for nothing. */
            if (k->atomic_ok) {
                coproc__sb_printf(o, "\n#if !COPROC_CPU");
                atomic_kernels(o, aparams.s, g.body.s ? g.body.s : "", atomic.s,
                               2 * (1 + k->naggs));
                coproc__sb_printf(o, "#endif\n");
            }
        }
    } else if (!g.failed && q->sink == COPROC__QK_MATERIALIZE) {
        const coproc__schema *out = &q->top->schema;
        for (int m = 0; m < out->n && !g.failed; m++) {
            const binding *b = lookup(s, out->names[m]);
            if (!b) {
                fail(&g, "no column \"%s\" to materialise", out->names[m]);
                break;
            }
            char buf[64], vbuf[160];
            const char *valid = m < 256 ? bvalid(&g, b, vbuf, sizeof vbuf) : NULL;
            if (valid) {
                k->out_valid[m] = 1;
                coproc__sb_printf(&tail, "        ov%d[o] = (uchar)%s;\n", m, valid);
            }
            if (!g.fp64 && out->types[m] == COPROC_FLOAT64) {
                /* Copied bit for bit; a computed float64 needs doubles. */
                if (!b->table || b->type != COPROC_FLOAT64) {
                    fail(&g, "a float64 result (\"%s\") needs a device with fp64", out->names[m]);
                    break;
                }
                coproc__sb_printf(&tail, "        o%d[o] = %s;\n", m, raw_code(&g, b, buf, sizeof buf));
                continue;
            }
            coproc__sb_printf(&tail, "        o%d[o] = (%s)%s;\n", m, cl_type(out->types[m]),
                              bcode(&g, b, buf, sizeof buf));
        }
        params(&g, &head);
        if (!g.failed) {
            coproc__strbuf count = {0}, write = {0};
            coproc__sb_printf(&count, "%s        o++;\n", g.body.s ? g.body.s : "");
            coproc__sb_printf(&write, "%s%s        o++;\n", g.body.s ? g.body.s : "", tail.s);
            coproc__sb_printf(o, "__kernel void q_count(%s, __global uint *counts)\n{\n    uint o = 0;\n", head.s);
            row_loop(o, &pre_f, &pre, count.s, keep_order);
            coproc__sb_printf(o, "    counts[get_global_id(0)] = o;\n}\n\n");
            coproc__sb_printf(o, "__kernel void q_write(%s, __global const ulong *offsets", head.s);
            for (int m = 0; m < out->n; m++)
                coproc__sb_printf(o, ", __global %s *o%d", arg_type(&g, out->types[m]), m);
            for (int m = 0; m < out->n && m < 256; m++)
                if (k->out_valid[m])
                    coproc__sb_printf(o, ", __global uchar *ov%d", m);
            coproc__sb_printf(o, ")\n{\n    ulong o = offsets[get_global_id(0)];\n");
            row_loop(o, &pre_f, &pre, write.s, keep_order);
            coproc__sb_printf(o, "}\n");
            if (count.failed || write.failed)
                fail(&g, "out of host memory");
            coproc__sb_free(&count);
            coproc__sb_free(&write);
        }
    } else if (!g.failed && q->sink == COPROC__QK_BUILD) {
        const coproc_node *j = q->sink_node;
        int nk = j->njoin_keys;
        const binding *kb[COPROC__QP_MAX_JOIN_KEYS] = {0};
        for (int m = 0; m < nk && m < COPROC__QP_MAX_JOIN_KEYS && !g.failed; m++) {
            kb[m] = lookup(s, j->build_keys[m]);
            if (!kb[m] || kb[m]->table != q->src)
                fail(&g, "%s: build key \"%s\" is computed, not a column", j->label, j->build_keys[m]);
        }
        if (nk > COPROC__QP_MAX_JOIN_KEYS)
            fail(&g, "%s: a key of %d columns (%d at most)", j->label, nk, COPROC__QP_MAX_JOIN_KEYS);
        if (!g.failed) {
            const binding *b = kb[0];
            k->nkey_cols = nk;
            char buf[64];
            /* The key as a long (several columns: packed, klo_m and kst_m),
             * and the key of the row a hashed slot holds, to compare. */
            coproc__strbuf kcs = {0}, held = {0}, kparams = {0};
            char xs[COPROC__QP_MAX_JOIN_KEYS][96];
            for (int m = 0; m < nk; m++) {
                k->key_cols[m] = kb[m]->col;
                snprintf(xs[m], sizeof xs[m], "%s", bcode(&g, kb[m], buf, sizeof buf));
            }
            if (nk == 1) {
                coproc__sb_printf(&kcs, "%s", xs[0]);
                coproc__sb_printf(&held, "(long)c%d[old - 1u]", arg_of(&g, q->src, b->col));
            } else {
                packed_key(&kcs, nk, xs, "_");
                for (int m = 0; m < nk; m++) {
                    snprintf(xs[m], sizeof xs[m], "(long)c%d[old - 1u]", arg_of(&g, q->src, kb[m]->col));
                    coproc__sb_printf(&kparams, ", long klo_%d, long kst_%d", m, m);
                }
                packed_key(&held, nk, xs, "_");
            }
            /* The ranges of the probing group-by's keys over the rows inserted. */
            coproc__strbuf ranges = {0};
            for (int r = 0; r < q->nranges; r++) {
                coproc_type t = q->src->cols[q->range_col[r]]->type;
                if (t != COPROC_INT32 && t != COPROC_UINT32)
                    continue;
                int a = arg_of(&g, q->src, q->range_col[r]);
                const char *ct = t == COPROC_INT32 ? "int" : "uint";
                /* a key's null rows are not part of its range */
                char rvbuf[160];
                binding rb = {.table = q->src, .col = q->range_col[r], .pay = -1, .row = "i"};
                const char *rvalid = bvalid(&g, &rb, rvbuf, sizeof rvbuf);
                if (rvalid)
                    coproc__sb_printf(&ranges, "        if (%s) {\n", rvalid);
                coproc__sb_printf(&ranges,
                                  "        atomic_min((volatile __global %s *)&kr[%d], (%s)c%d[i]);\n"
                                  "        atomic_max((volatile __global %s *)&kr[%d], (%s)c%d[i]);\n",
                                  ct, 2 * r, ct, a, ct, 2 * r + 1, ct, a);
                if (rvalid)
                    coproc__sb_printf(&ranges, "        }\n");
            }
            /* A null key is left out of the table (it matches nothing), and
             * its row out of the measured ranges. */
            coproc__strbuf skip = {0};
            for (int m = 0; m < nk; m++) {
                char vbuf[160];
                const char *kvalid = bvalid(&g, kb[m], vbuf, sizeof vbuf);
                if (kvalid)
                    coproc__sb_printf(&skip, "        if (!%s)\n            continue;\n", kvalid);
            }
            if (skip.len) {
                coproc__sb_printf(&skip, "%s", ranges.s ? ranges.s : "");
                coproc__sb_free(&ranges);
                ranges = skip;
            }
            if (ranges.failed || kcs.failed || held.failed || kparams.failed)
                fail(&g, "out of host memory");
            params(&g, &head);
            /* The insert loop ends on a flag, not a break, as the probe's does. */
            coproc__sb_printf(o,
                              "__kernel void q_build(%s, __global uint *ht, __global uint *bm, int dense, long kmin,"
                              " uint mask, int check_dup, __global uint *flag, __global uint *kr%s)\n{\n"
                              "    uint inserted = 0;\n"
                              "    COPROC_FOR_EACH_ROW(i, n) {\n%s%s"
                              "        long k = %s;\n"
                              "        uint me = (uint)i + 1u;\n"
                              "        if (dense) {\n"
                              "            ulong d = (ulong)(k - kmin);\n"
                              "            atomic_or(&bm[d >> 5], 1u << (d & 31));\n"
                              "            if (atomic_cmpxchg(&ht[d], 0u, me) == 0u)\n"
                              "                inserted++;\n"
                              "            else if (check_dup)\n"
                              "                atomic_or(flag, 1u);\n"
                              "            continue;\n"
                              "        }\n"
                              "        uint h = QHASH(k) & mask;\n"
                              "        for (int go = 1; go;) {\n"
                              "            uint old = atomic_cmpxchg(&ht[h], 0u, me);\n"
                              "            if (old == 0u) {\n"
                              "                inserted++;\n"
                              "                go = 0;\n"
                              "            } else if (%s == k) {\n"
                              "                if (check_dup)\n"
                              "                    atomic_or(flag, 1u);\n"
                              "                go = 0;\n"
                              "            } else {\n"
                              "                h = (h + 1u) & mask;\n"
                              "            }\n"
                              "        }\n"
                              "    }\n"
                              "    if (inserted)\n"
                              "        atomic_add(&flag[1], inserted);\n"
                              "}\n",
                              head.s, kparams.s ? kparams.s : "", g.body.s ? g.body.s : "",
                              ranges.s ? ranges.s : "", kcs.s ? kcs.s : "0", held.s ? held.s : "0");
            coproc__sb_free(&ranges);
            coproc__sb_free(&kcs);
            coproc__sb_free(&held);
            coproc__sb_free(&kparams);
        }
    } else if (!g.failed) {
        fail(&g, "pipeline without a sink");
    }
    /* The payloads' fill: slot d gets the column at the row the table holds. */
    if (!g.failed && k->npays)
        coproc__sb_printf(o, "\n__kernel void q_pay4(ulong n, __global const uint *ht, __global const uint *col,"
                             " __global uint *pay)\n{\n"
                             "    COPROC_FOR_EACH_ROW(d, n) {\n"
                             "        uint r = ht[d];\n"
                             "        pay[d] = r ? col[r - 1u] : 0u;\n"
                             "    }\n}\n\n"
                             "__kernel void q_pay8(ulong n, __global const uint *ht, __global const ulong *col,"
                             " __global ulong *pay)\n{\n"
                             "    COPROC_FOR_EACH_ROW(d, n) {\n"
                             "        uint r = ht[d];\n"
                             "        pay[d] = r ? col[r - 1u] : 0ul;\n"
                             "    }\n}\n");
    free(s);
    if (g.body.failed || head.failed || tail.failed || atomic.failed || aparams.failed || pre_f.failed ||
        pre.failed || o->failed)
        fail(&g, "out of host memory");
    coproc__sb_free(&atomic);
    coproc__sb_free(&aparams);
    coproc__sb_free(&pre_f);
    coproc__sb_free(&pre);
    coproc__sb_free(&g.body);
    coproc__sb_free(&head);
    coproc__sb_free(&tail);
    return g.failed ? -1 : 0;
}
