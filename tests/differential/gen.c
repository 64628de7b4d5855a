/* gen.c - the differential tester: random tables, random plans over the whole
 * of coproc/query.h, the same plan as SQL in SQLite, and the comparison (gen.h
 * says what and why). Used by tests/test_differential.c and
 * fuzz/fuzz_differential.c; public API only (coproc.h, coproc/query.h).
 *
 * How coproc's semantics are kept apart from SQLite's (docs/api.md,
 * "Differences from SQL engines (SQLite)"):
 * - integer arithmetic that may pass 2^62 is written wadd/wsub/wmul (int64
 *   wrapping), integer division always idiv (x/0 = 0); a SUM that may
 *   overflow is wsum; AVG only where the sum stays below 2^53;
 * - floats are multiples of 1/8 (exact in float32), and float arithmetic is
 *   kept exact (magnitudes and fraction bits tracked; division only by powers
 *   of two), so both engines compute the same doubles in any order; an
 *   integer mixed into float arithmetic stays below 2^20, one compared with a
 *   float is CAST AS REAL in SQL where it may pass 2^53 (coproc compares in
 *   double), and BETWEEN/IN mixing floats take integers below 2^53;
 * - uint64 is bound to SQLite as its int64 bits;
 * - ORDER BY always says NULLS FIRST or NULLS LAST;
 * - SUM/MIN/MAX without keys over an argument without a validity are
 *   coalesce(..., 0) in SQL, and AVG's NaN there reads as NULL;
 * - LIKE 'p%' is written GLOB 'p*' (case-sensitive); strings compare with
 *   SQLite's BINARY collation (byte order, as strcmp);
 * - no NaN or infinity in the data (SQLite stores NaN as NULL). */
#include "gen.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/query.h"

#define MAXTCOLS 7   /* columns of a generated table */
#define MAXS 32      /* columns of a node's output */
#define NAMELEN 16
#define TWO53 9007199254740992.0
#define TWO62 4611686018427387904.0
#define TWO63 9223372036854775808.0

const char *const dg_kind_names[DG_KIND_COUNT] = {"build", "error",  "columns", "rows",
                                                  "values", "order", "sqlite"};

/* ---------------------------------------------------------------- random numbers */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t next(rng *r)
{
    return mix64(r->s++);
}

static uint64_t below(rng *r, uint64_t n)
{
    return n ? next(r) % n : 0;
}

static int chance(rng *r, int pct)
{
    return (int)below(r, 100) < pct;
}

/* ---------------------------------------------------------------- the case's bytes */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void dg_case_encode(const dg_case *c, uint8_t out[DG_CASE_BYTES])
{
    put32(out, (uint32_t)c->seed);
    put32(out + 4, (uint32_t)(c->seed >> 32));
    put32(out + 8, c->mask);
    out[12] = c->modes;
    out[13] = c->config;
    for (int t = 0; t < DG_NTABLES; t++) {
        put32(out + 14 + 8 * t, c->row_off[t]);
        put32(out + 18 + 8 * t, c->row_cap[t]);
    }
}

void dg_case_decode(const uint8_t *data, size_t size, dg_case *c)
{
    uint8_t b[DG_CASE_BYTES] = {0};
    memcpy(b, data, size < DG_CASE_BYTES ? size : DG_CASE_BYTES);
    c->seed = get32(b) | (uint64_t)get32(b + 4) << 32;
    c->mask = get32(b + 8) & ((1u << DG_MASK_BITS) - 1);
    c->modes = b[12] & DG_BOTH;
    c->config = b[13] % DG_CONFIG_COUNT;
    for (int t = 0; t < DG_NTABLES; t++) {
        c->row_off[t] = get32(b + 14 + 8 * t);
        c->row_cap[t] = get32(b + 18 + 8 * t);
    }
}

unsigned dg_parse_skip(const char *s)
{
    unsigned m = 0;
    if (!s)
        return 0;
    if (strstr(s, "all"))
        return ~0u;
    if (strstr(s, "group_null_keys"))
        m |= DG_SKIP_GROUP_NULL_KEYS;
    if (strstr(s, "empty_agg"))
        m |= DG_SKIP_EMPTY_AGG;
    if (strstr(s, "bool_minmax"))
        m |= DG_SKIP_BOOL_MINMAX;
    if (strstr(s, "between_null"))
        m |= DG_SKIP_BETWEEN_NULL;
    if (strstr(s, "u64_keys"))
        m |= DG_SKIP_U64_KEYS;
    return m;
}

/* ---------------------------------------------------------------- string building */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap <= b->n + (size_t)k)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            abort();
        b->p = np;
        b->cap = cap;
    }
}

/* ---------------------------------------------------------------- tables */

enum { K_INT = 0, K_FLOAT, K_STR, K_BOOL };

static const char *const pool[] = {
    "",      "a",     "ab",     "abc", "abd",  "b",           "ba",
    "bb",    "B",     "Ab",     "apple", "apricot", "banana", "z",
    "zz",    "\xc3\xa9", "\xc3\xa9t\xc3\xa9", "a b", "a%", "a_"};
#define NPOOL (int)(sizeof pool / sizeof *pool)

typedef struct tcol {
    char name[NAMELEN];
    coproc_type type; /* INT32 for strings */
    int kind;         /* K_INT, K_FLOAT, K_STR */
    int nullable;     /* carries a validity bitmap */
    void *v;          /* rows values */
    uint32_t *valid;  /* NULL: no bitmap */
    const char **s;   /* K_STR: each row's string */
    int nstr;         /* K_STR: the strings the column draws from */
    const char *strs[8];
    double bound;     /* ints: max |value| (as int64) over valid rows; floats: max |value| */
    int keyish;       /* values from the join keys' small range */
    int u64high;      /* uint64 values above INT64_MAX */
} tcol;

typedef struct table {
    char name[4];
    size_t rows;
    int ncols;
    tcol c[MAXTCOLS];
} table;

static int is_valid(const uint32_t *w, size_t r)
{
    return !w || ((w[r / 32] >> (r % 32)) & 1u);
}

static size_t pick_rows(rng *r, int fact)
{
    unsigned x = (unsigned)below(r, 100);
    if (fact) {
        if (x < 5)
            return 0;
        if (x < 10)
            return 1;
        if (x < 20)
            return 2 + below(r, 8);
        if (x < 35)
            return 63 + below(r, 3);
        if (x < 55)
            return 10 + below(r, 190);
        if (x < 97)
            return 4097;
        return 20000 + below(r, 50000);
    }
    if (x < 5)
        return 0;
    if (x < 12)
        return 1;
    if (x < 35)
        return 2 + below(r, 10);
    if (x < 60)
        return 63 + below(r, 3);
    return 100 + below(r, 200);
}

enum { P_KEY, P_SMALL, P_MED, P_WIDE, P_EXTREME };

static int64_t type_min(coproc_type t)
{
    return t == COPROC_INT32 ? INT32_MIN : t == COPROC_INT64 ? INT64_MIN : 0;
}

static int64_t type_max(coproc_type t)
{
    return t == COPROC_INT32    ? INT32_MAX
           : t == COPROC_UINT32 ? (int64_t)UINT32_MAX
           : t == COPROC_UINT64 ? -1 /* UINT64_MAX's bits */
                                : INT64_MAX;
}

static int is_unsigned(coproc_type t)
{
    return t == COPROC_UINT32 || t == COPROC_UINT64;
}

static int64_t gen_int(rng *r, int prof, coproc_type t)
{
    int64_t v;
    switch (prof) {
    case P_KEY:
        v = (int64_t)below(r, 34) - 3;
        break;
    case P_SMALL:
        v = (int64_t)below(r, 17) - 8;
        break;
    case P_MED:
        v = (int64_t)below(r, 4001) - 2000;
        break;
    case P_WIDE:
        v = (int64_t)next(r);
        if (t == COPROC_INT32)
            v = (int32_t)v;
        else if (t == COPROC_UINT32)
            v = (uint32_t)v;
        return v;
    default: /* extreme: small values and the type's ends */
        if (chance(r, 85)) {
            v = (int64_t)below(r, 17) - 8;
            break;
        }
        switch (below(r, 5)) {
        case 0:
            return type_min(t);
        case 1:
            return type_max(t);
        case 2:
            return type_min(t) + 1;
        case 3:
            return type_max(t) - 1;
        default:
            return 0;
        }
    }
    if (is_unsigned(t) && v < 0)
        v = -v;
    return v;
}

static void store_int(void *v, coproc_type t, size_t i, int64_t x)
{
    switch (t) {
    case COPROC_INT32:
        ((int32_t *)v)[i] = (int32_t)x;
        break;
    case COPROC_UINT32:
        ((uint32_t *)v)[i] = (uint32_t)x;
        break;
    default:
        ((int64_t *)v)[i] = x;
        break;
    }
}

/* The value as SQLite sees it: ints as int64 (uint64 as its bits). */
static int64_t load_int(const void *v, coproc_type t, size_t i)
{
    switch (t) {
    case COPROC_INT32:
        return ((const int32_t *)v)[i];
    case COPROC_UINT32:
        return ((const uint32_t *)v)[i];
    default:
        return ((const int64_t *)v)[i];
    }
}

static double load_float(const void *v, coproc_type t, size_t i)
{
    return t == COPROC_FLOAT32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

static double abs_i64(int64_t x)
{
    return x == INT64_MIN ? TWO63 : fabs((double)x);
}

static void gen_col(rng *r, tcol *c, size_t rows, int key, int unique)
{
    static const coproc_type key_types[] = {COPROC_INT32, COPROC_INT32, COPROC_INT32,
                                            COPROC_INT64, COPROC_INT64, COPROC_UINT32,
                                            COPROC_UINT64, COPROC_INT32 /* string */};
    static const coproc_type any_types[] = {
        COPROC_INT32,   COPROC_INT32,   COPROC_INT64,   COPROC_INT64,   COPROC_UINT32,
        COPROC_UINT64,  COPROC_FLOAT32, COPROC_FLOAT64, COPROC_FLOAT64, COPROC_INT32 /* str */,
        COPROC_INT32 /* str */};
    int k = key ? (int)below(r, 8) : (int)below(r, 11);
    c->type = key ? key_types[k] : any_types[k];
    int str = key ? k == 7 : k >= 9;
    c->kind = str ? K_STR
              : (c->type == COPROC_FLOAT32 || c->type == COPROC_FLOAT64) ? K_FLOAT
                                                                        : K_INT;
    unsigned nr = (unsigned)below(r, 100);
    double rate = nr < 50 ? 0 : nr < (key ? 96u : 90u) ? 0.1 : 1.0;
    c->nullable = rate > 0;
    int prof = key ? P_KEY : (int)below(r, 5);
    c->keyish = prof == P_KEY && c->kind != K_FLOAT;
    size_t size = coproc_type_size(c->type);
    c->v = calloc(rows ? rows : 1, size);
    c->valid = c->nullable ? calloc((rows + 31) / 32 + 1, sizeof(uint32_t)) : NULL;
    if (c->kind == K_STR) {
        c->s = calloc(rows ? rows : 1, sizeof *c->s);
        c->nstr = 2 + (int)below(r, 7);
        int common = chance(r, 70); /* mostly from the first 10: columns share strings */
        for (int i = 0; i < c->nstr; i++)
            c->strs[i] = pool[below(r, common ? 10 : NPOOL)];
    }
    c->bound = 0;
    for (size_t i = 0; i < rows; i++) {
        int null = c->nullable && (rate >= 1.0 || chance(r, 10));
        if (c->valid && !null)
            c->valid[i / 32] |= 1u << (i % 32);
        if (c->kind == K_STR) {
            int code = (int)below(r, (uint64_t)c->nstr);
            c->s[i] = c->strs[code];
            ((int32_t *)c->v)[i] = code;
        } else if (c->kind == K_FLOAT) {
            double x = chance(r, 3) ? -0.0 : ((double)below(r, 1025) - 512) / 8.0;
            if (null)
                x = NAN; /* never read */
            if (c->type == COPROC_FLOAT32)
                ((float *)c->v)[i] = (float)x;
            else
                ((double *)c->v)[i] = x;
            if (!null && fabs(x) > c->bound)
                c->bound = fabs(x);
        } else {
            int64_t x = null     ? (int64_t)0x7fff0000
                        : unique ? (int64_t)i - (is_unsigned(c->type) ? 0 : 3)
                                 : gen_int(r, prof, c->type);
            store_int(c->v, c->type, i, x);
            if (!null && abs_i64(load_int(c->v, c->type, i)) > c->bound)
                c->bound = abs_i64(load_int(c->v, c->type, i));
            if (!null && c->type == COPROC_UINT64 && x < 0)
                c->u64high = 1;
        }
    }
}

static void gen_tables(uint64_t seed, table *t)
{
    rng r = {mix64(seed ^ 0xda7a5eedull) ^ seed * 0x2545f4914f6cdd1dull};
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        table *tb = &t[ti];
        memset(tb, 0, sizeof *tb);
        snprintf(tb->name, sizeof tb->name, "t%d", ti);
        tb->rows = pick_rows(&r, ti == 0);
        tb->ncols = ti == 0 ? 4 + (int)below(&r, 4) : 2 + (int)below(&r, 4);
        /* a dimension's first column is often a unique key (a fused inner join
         * holds one build row a key), shuffled */
        int unique = ti > 0 && chance(&r, 60);
        for (int c = 0; c < tb->ncols; c++) {
            snprintf(tb->c[c].name, NAMELEN, "%c%d", 'a' + ti, c);
            gen_col(&r, &tb->c[c], tb->rows, c == 0 || (c == 1 && ti > 0) || chance(&r, 15),
                    c == 0 && unique);
        }
        if (unique && tb->c[0].kind == K_INT && tb->rows > 1) {
            tcol *k = &tb->c[0];
            size_t size = coproc_type_size(k->type);
            char tmp[8];
            for (size_t i = tb->rows - 1; i > 0; i--) { /* values only: nulls stay put */
                size_t j = below(&r, i + 1);
                memcpy(tmp, (char *)k->v + i * size, size);
                memcpy((char *)k->v + i * size, (char *)k->v + j * size, size);
                memcpy((char *)k->v + j * size, tmp, size);
            }
            k->bound = 0;
            for (size_t i = 0; i < tb->rows; i++)
                if (is_valid(k->valid, i) && abs_i64(load_int(k->v, k->type, i)) > k->bound)
                    k->bound = abs_i64(load_int(k->v, k->type, i));
        }
    }
}

static void free_tables(table *t)
{
    for (int ti = 0; ti < DG_NTABLES; ti++)
        for (int c = 0; c < t[ti].ncols; c++) {
            free(t[ti].c[c].v);
            free(t[ti].c[c].valid);
            free(t[ti].c[c].s);
        }
}

/* The rows [off, off + n) of t into w (copies, validity words realigned). */
static void window(const dg_case *cs, const table *full, table *w)
{
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        const table *f = &full[ti];
        table *o = &w[ti];
        *o = *f;
        size_t off = cs->row_off[ti] < f->rows ? cs->row_off[ti] : f->rows;
        size_t n = f->rows - off;
        if (cs->row_cap[ti] && cs->row_cap[ti] - 1 < n)
            n = cs->row_cap[ti] - 1;
        o->rows = n;
        for (int c = 0; c < f->ncols; c++) {
            const tcol *fc = &f->c[c];
            tcol *oc = &o->c[c];
            size_t size = coproc_type_size(fc->type);
            oc->v = calloc(n ? n : 1, size);
            memcpy(oc->v, (const char *)fc->v + off * size, n * size);
            oc->s = NULL;
            if (fc->s) {
                oc->s = calloc(n ? n : 1, sizeof *oc->s);
                memcpy(oc->s, fc->s + off, n * sizeof *oc->s);
            }
            oc->valid = NULL;
            if (fc->valid) {
                oc->valid = calloc((n + 31) / 32 + 1, sizeof(uint32_t));
                for (size_t i = 0; i < n; i++)
                    if (is_valid(fc->valid, off + i))
                        oc->valid[i / 32] |= 1u << (i % 32);
            }
        }
    }
}

/* ---------------------------------------------------------------- plans */

enum {
    E_COL, E_INT, E_FLOAT, E_STR, E_ARITH, E_CMP, E_BETWEEN, E_IN, E_PREFIX, E_AND, E_OR, E_NOT
};

typedef struct expr {
    int op, sub;
    char name[NAMELEN];
    int64_t i;
    double f;
    const char *s;
    struct expr *a, *b, *c;
    int n;
    struct expr *list[6];
    /* attributes */
    int kind;     /* K_INT, K_FLOAT, K_BOOL, K_STR */
    int nullable; /* can be null (reads a column with a validity) */
    double bound; /* ints: max |value|; floats: magnitude */
    int frac;     /* floats: fraction bits (exactness) */
    int wraps;    /* ARITH on ints: may pass 2^62: written with the wrapping functions */
    int cast_a, cast_b; /* CMP: that operand is CAST AS REAL in SQL */
    int has_bool; /* reads a boolean (a comparison or a projected boolean column) */
} expr;

/* A node's output column. */
typedef struct scol {
    char name[NAMELEN];
    int kind;      /* K_INT, K_FLOAT, K_STR */
    int is_bool;   /* a projected boolean (K_INT, 0/1) */
    int nullable;
    double bound;
    int frac;      /* floats: fraction bits; 99: not exact (AVG) */
    const tcol *str; /* K_STR: a column its strings come from (constants) */
    coproc_type type;
    int keyish;    /* a table's key-like column (joins prefer them) */
    int u64high;   /* a uint64 column with values above INT64_MAX */
} scol;

enum { N_SCAN, N_FILTER, N_PROJECT, N_JOIN, N_GROUP, N_ORDER };

typedef struct agg {
    int fn; /* coproc_agg_fn */
    expr *arg;
    char name[NAMELEN];
    int wsum;      /* SUM written wsum */
    int zero_empty; /* coalesce(..., 0): keyless over an argument without a validity */
    int nan_null;  /* keyless AVG over an argument without a validity: NaN reads as NULL */
} agg;

typedef struct okey {
    int col, desc, nulls_first;
    int unsig; /* a uint64 column: coproc sorts it unsigned */
} okey;

typedef struct node {
    int op, id;
    struct node *in, *build;
    int table;
    expr *pred;
    int n;
    char names[8][NAMELEN];
    expr *ex[8];
    int jkind, nk, pk[3], bk[3];
    int ngk, gk[3], na;
    agg ag[5];
    int nok;
    okey ok[3];
    uint64_t limit;
    int ncols;
    scol c[MAXS];
    double rows; /* at most this many rows */
} node;

typedef struct gen {
    rng r;
    uint32_t mask;
    unsigned skip;
    const table *t;
    void **alloc;
    size_t nalloc, capalloc;
    int next_id, next_name;
    sbuf feat;
} gen;

static void *gnew(gen *g, size_t size)
{
    if (g->nalloc == g->capalloc) {
        g->capalloc = g->capalloc ? 2 * g->capalloc : 64;
        g->alloc = realloc(g->alloc, g->capalloc * sizeof *g->alloc);
    }
    void *p = calloc(1, size);
    if (!p || !g->alloc)
        abort();
    return g->alloc[g->nalloc++] = p;
}

static void gen_free(gen *g)
{
    for (size_t i = 0; i < g->nalloc; i++)
        free(g->alloc[i]);
    free(g->alloc);
    free(g->feat.p);
}

static void feature(gen *g, const char *f)
{
    if (!g->feat.p || !strstr(g->feat.p, f))
        sb_add(&g->feat, "%s%s", g->feat.n ? " " : "", f);
}

static void fresh(gen *g, char *name)
{
    snprintf(name, NAMELEN, "x%d", g->next_name++);
}

/* ---- expressions */

static expr *e_new(gen *g, int op)
{
    expr *e = gnew(g, sizeof *e);
    e->op = op;
    return e;
}

static expr *e_col(gen *g, const node *s, int i)
{
    expr *e = e_new(g, E_COL);
    const scol *c = &s->c[i];
    snprintf(e->name, NAMELEN, "%s", c->name);
    e->kind = c->kind;
    e->nullable = c->nullable;
    e->bound = c->bound;
    e->frac = c->frac;
    e->has_bool = c->is_bool;
    return e;
}

static expr *e_int(gen *g, int64_t v)
{
    expr *e = e_new(g, E_INT);
    e->i = v;
    e->kind = K_INT;
    e->bound = abs_i64(v);
    return e;
}

static expr *e_float(gen *g, double v)
{
    expr *e = e_new(g, E_FLOAT);
    e->f = v;
    e->kind = K_FLOAT;
    e->bound = fabs(v);
    e->frac = 3;
    return e;
}

static expr *e_str(gen *g, const char *s)
{
    expr *e = e_new(g, E_STR);
    e->s = s;
    e->kind = K_STR;
    return e;
}

static int64_t rand_int_const(gen *g)
{
    static const int64_t ext[] = {INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 4294967296ll,
                                  -2147483649ll, 4294967295ll, 1ll << 53};
    unsigned x = (unsigned)below(&g->r, 100);
    if (x < 55)
        return (int64_t)below(&g->r, 21) - 10;
    if (x < 85)
        return (int64_t)below(&g->r, 40) - 5;
    if (x < 93)
        return (int64_t)below(&g->r, 4001) - 2000;
    return ext[below(&g->r, sizeof ext / sizeof *ext)];
}

static double rand_float_const(gen *g)
{
    return ((double)below(&g->r, 161) - 80) / 8.0;
}

/* Columns of s usable as numbers (ints, booleans, exact floats). */
static int pick_num_col(gen *g, const node *s)
{
    int idx[MAXS], n = 0;
    for (int i = 0; i < s->ncols; i++)
        if ((s->c[i].kind == K_INT || s->c[i].kind == K_FLOAT) && s->c[i].frac < 99)
            idx[n++] = i;
    return n ? idx[below(&g->r, (uint64_t)n)] : -1;
}

static int pick_kind_col(gen *g, const node *s, int kind)
{
    int idx[MAXS], n = 0;
    for (int i = 0; i < s->ncols; i++)
        if (s->c[i].kind == kind)
            idx[n++] = i;
    return n ? idx[below(&g->r, (uint64_t)n)] : -1;
}

static int ilog2(double x)
{
    int e;
    frexp(x, &e);
    return x < 1 ? 0 : e;
}

static expr *small_int(gen *g)
{
    return e_int(g, (int64_t)below(&g->r, 21) - 10);
}

static expr *mk_arith(gen *g, int op, expr *a, expr *b)
{
    expr *e = e_new(g, E_ARITH);
    e->sub = op;
    if (a->kind == K_FLOAT || b->kind == K_FLOAT) {
        /* exact float arithmetic: small integers, division by powers of two */
        if (a->kind != K_FLOAT && a->bound > 1048576.0)
            a = small_int(g);
        if (b->kind != K_FLOAT && b->bound > 1048576.0)
            b = small_int(g);
        double mb = b->bound;
        int fa = a->kind == K_FLOAT ? a->frac : 0, fb = b->kind == K_FLOAT ? b->frac : 0;
        double mag;
        int frac;
        if (op == COPROC_ARITH_DIV) {
            static const double p2[] = {0.5, 2, 4, 0.25, -0.5, -2, 8};
            b = e_float(g, p2[below(&g->r, sizeof p2 / sizeof *p2)]);
            mag = a->bound / fabs(b->f);
            frac = fa + (fabs(b->f) > 1 ? ilog2(fabs(b->f)) - 1 : 0);
        } else if (op == COPROC_ARITH_MUL) {
            mag = a->bound * mb;
            frac = fa + fb;
        } else {
            mag = a->bound + mb;
            frac = fa > fb ? fa : fb;
        }
        if (frac > 30 || ilog2(mag + 1) + frac > 50)
            return a->kind == K_FLOAT ? a : b; /* would round: keep an operand */
        e->kind = K_FLOAT;
        e->bound = mag;
        e->frac = frac;
    } else {
        double bound = op == COPROC_ARITH_DIV   ? a->bound
                       : op == COPROC_ARITH_MUL ? a->bound * b->bound
                                                : a->bound + b->bound;
        e->kind = K_INT;
        e->wraps = bound >= TWO62 || a->wraps || b->wraps;
        e->bound = bound >= TWO62 ? TWO63 : bound;
    }
    e->a = a;
    e->b = b;
    e->nullable = a->nullable || b->nullable;
    e->has_bool = a->has_bool || b->has_bool;
    return e;
}

static expr *gen_num(gen *g, const node *s, int depth)
{
    if (depth > 0 && !(g->mask & DG_NO_ARITH) && chance(&g->r, 35)) {
        int op = (int)below(&g->r, 4);
        expr *a = gen_num(g, s, depth - 1), *b = gen_num(g, s, depth - 1);
        feature(g, "arith");
        return mk_arith(g, op, a, b);
    }
    int c = chance(&g->r, 75) ? pick_num_col(g, s) : -1;
    if (c >= 0)
        return e_col(g, s, c);
    return chance(&g->r, 70) ? e_int(g, rand_int_const(g)) : e_float(g, rand_float_const(g));
}

/* An integer operand mixed with floats where exactness needs it below 2^53. */
static expr *fit53(gen *g, expr *e)
{
    return e->kind == K_INT && e->bound > TWO53 ? small_int(g) : e;
}

static const char *pick_string(gen *g, const tcol *src)
{
    if (src && src->nstr && chance(&g->r, 75))
        return src->strs[below(&g->r, (uint64_t)src->nstr)];
    return pool[below(&g->r, NPOOL)];
}

static expr *gen_pred(gen *g, const node *s, int depth);

static expr *gen_str_pred(gen *g, const node *s, int ci)
{
    const tcol *src = s->c[ci].str;
    expr *col = e_col(g, s, ci), *e;
    unsigned x = (unsigned)below(&g->r, 100);
    feature(g, "strings");
    if (x < 40) {
        e = e_new(g, E_CMP);
        e->sub = (int)below(&g->r, 6);
        e->a = col;
        e->b = e_str(g, pick_string(g, src));
        if (chance(&g->r, 25)) { /* the constant first */
            expr *t = e->a;
            e->a = e->b;
            e->b = t;
        }
    } else if (x < 55) {
        e = e_new(g, E_BETWEEN);
        e->a = col;
        e->b = e_str(g, pick_string(g, src));
        e->c = e_str(g, pick_string(g, src));
    } else if (x < 75) {
        e = e_new(g, E_IN);
        e->a = col;
        e->n = 1 + (int)below(&g->r, 4);
        for (int i = 0; i < e->n; i++)
            e->list[i] = e_str(g, pick_string(g, src));
    } else {
        e = e_new(g, E_PREFIX);
        e->a = col;
        e->s = pick_string(g, src);
        if (strlen(e->s) > 2 && chance(&g->r, 50))
            e->s = chance(&g->r, 50) ? "a" : "ap";
    }
    e->kind = K_BOOL;
    e->nullable = col->nullable;
    return e;
}

static expr *gen_leaf_pred(gen *g, const node *s)
{
    int sc = pick_kind_col(g, s, K_STR);
    if (sc >= 0 && chance(&g->r, 30))
        return gen_str_pred(g, s, sc);
    unsigned x = (unsigned)below(&g->r, 100);
    expr *e;
    if (x < 55) {
        e = e_new(g, E_CMP);
        e->sub = (int)below(&g->r, 6);
        e->a = gen_num(g, s, 1);
        e->b = chance(&g->r, 55) ? (chance(&g->r, 70) ? e_int(g, rand_int_const(g))
                                                      : e_float(g, rand_float_const(g)))
                                 : gen_num(g, s, 1);
        if (chance(&g->r, 20)) {
            expr *t = e->a;
            e->a = e->b;
            e->b = t;
        }
        /* coproc compares an integer with a float in double */
        if (e->a->kind == K_FLOAT && e->b->kind == K_INT && e->b->bound > TWO53)
            e->cast_b = 1;
        if (e->b->kind == K_FLOAT && e->a->kind == K_INT && e->a->bound > TWO53)
            e->cast_a = 1;
    } else if (x < 75) {
        e = e_new(g, E_BETWEEN);
        feature(g, "between");
        e->a = chance(&g->r, 75) ? gen_num(g, s, 1) : e_int(g, (int64_t)below(&g->r, 11) - 2);
        for (int k = 0; k < 2; k++) {
            expr *b = chance(&g->r, 50) ? (chance(&g->r, 75) ? e_int(g, rand_int_const(g))
                                                             : e_float(g, rand_float_const(g)))
                                        : gen_num(g, s, 0);
            if ((g->skip & DG_SKIP_BETWEEN_NULL) && b->nullable)
                b = small_int(g);
            if (k)
                e->c = b;
            else
                e->b = b;
        }
        int consts = (e->b->op == E_INT || e->b->op == E_FLOAT) &&
                     (e->c->op == E_INT || e->c->op == E_FLOAT);
        if (consts && chance(&g->r, 80)) { /* mostly lo <= hi */
            double lo = e->b->op == E_INT ? (double)e->b->i : e->b->f;
            double hi = e->c->op == E_INT ? (double)e->c->i : e->c->f;
            if (lo > hi) {
                expr *t = e->b;
                e->b = e->c;
                e->c = t;
            }
        }
        if (e->a->kind == K_FLOAT || e->b->kind == K_FLOAT || e->c->kind == K_FLOAT) {
            e->a = fit53(g, e->a);
            e->b = fit53(g, e->b);
            e->c = fit53(g, e->c);
        }
        if (!(g->mask & DG_FLAT_PRED) && chance(&g->r, 30)) { /* NOT BETWEEN: false vs unknown */
            e->kind = K_BOOL;
            e->nullable = e->a->nullable || e->b->nullable || e->c->nullable;
            e->has_bool = 1;
            expr *n = e_new(g, E_NOT);
            n->a = e;
            e = n;
            feature(g, "not");
        }
    } else {
        e = e_new(g, E_IN);
        feature(g, "in");
        e->a = gen_num(g, s, chance(&g->r, 80) ? 0 : 1);
        e->n = 1 + (int)below(&g->r, 5);
        int floats = e->a->kind == K_FLOAT || e->a->bound <= TWO53;
        for (int i = 0; i < e->n; i++)
            e->list[i] = floats && chance(&g->r, e->a->kind == K_FLOAT ? 70 : 15)
                             ? e_float(g, rand_float_const(g))
                             : e_int(g, chance(&g->r, 70) ? (int64_t)below(&g->r, 40) - 5
                                                          : rand_int_const(g));
    }
    e->kind = K_BOOL;
    e->nullable = e->a->nullable || (e->b && e->b->nullable) || (e->c && e->c->nullable);
    e->has_bool = 1;
    return e;
}

static expr *gen_pred(gen *g, const node *s, int depth)
{
    if (depth > 0 && !(g->mask & DG_FLAT_PRED) && chance(&g->r, 45)) {
        unsigned x = (unsigned)below(&g->r, 10);
        expr *e = e_new(g, x < 4 ? E_AND : x < 8 ? E_OR : E_NOT);
        e->a = gen_pred(g, s, depth - 1);
        if (e->op != E_NOT)
            e->b = gen_pred(g, s, depth - 1);
        feature(g, e->op == E_AND ? "and" : e->op == E_OR ? "or" : "not");
        e->kind = K_BOOL;
        e->nullable = e->a->nullable || (e->b && e->b->nullable);
        e->has_bool = 1;
        return e;
    }
    return gen_leaf_pred(g, s);
}

/* ---- nodes */

static node *n_new(gen *g, int op, node *in)
{
    node *n = gnew(g, sizeof *n);
    n->op = op;
    n->id = ++g->next_id;
    n->in = in;
    if (in) {
        n->ncols = in->ncols;
        memcpy(n->c, in->c, sizeof n->c);
        n->rows = in->rows;
    }
    return n;
}

static node *scan(gen *g, int ti)
{
    node *n = n_new(g, N_SCAN, NULL);
    const table *t = &g->t[ti];
    n->table = ti;
    n->ncols = t->ncols;
    n->rows = (double)t->rows;
    for (int i = 0; i < t->ncols; i++) {
        scol *c = &n->c[i];
        const tcol *tc = &t->c[i];
        snprintf(c->name, NAMELEN, "%s", tc->name);
        c->kind = tc->kind;
        c->nullable = tc->nullable;
        c->bound = tc->bound;
        c->frac = tc->kind == K_FLOAT ? 3 : 0;
        c->str = tc->kind == K_STR ? tc : NULL;
        c->type = tc->type;
        c->keyish = tc->keyish || tc->kind == K_STR;
        c->u64high = tc->u64high;
        if (tc->nullable)
            feature(g, "nulls");
    }
    return n;
}

static node *filter(gen *g, node *in, int depth)
{
    node *n = n_new(g, N_FILTER, in);
    n->pred = gen_pred(g, in, depth);
    feature(g, "filter");
    return n;
}

static int name_used(const node *n, int upto, const char *name)
{
    for (int i = 0; i < upto; i++)
        if (!strcmp(n->c[i].name, name))
            return 1;
    return 0;
}

/* Every column of in under a fresh name (an inner join's sides differ). */
static node *rename_all(gen *g, node *in)
{
    node *n = n_new(g, N_PROJECT, in);
    n->n = in->ncols < 8 ? in->ncols : 8;
    n->ncols = n->n;
    for (int i = 0; i < n->n; i++) {
        n->ex[i] = e_col(g, in, i);
        fresh(g, n->names[i]);
        n->c[i] = in->c[i];
        snprintf(n->c[i].name, NAMELEN, "%s", n->names[i]);
    }
    return n;
}

static node *project(gen *g, node *in)
{
    node *n = n_new(g, N_PROJECT, in);
    n->n = (g->mask & DG_FEW_COLS) ? 1 : 1 + (int)below(&g->r, 5);
    n->ncols = n->n;
    feature(g, "project");
    for (int i = 0; i < n->n; i++) {
        unsigned x = (unsigned)below(&g->r, 100);
        scol *c = &n->c[i];
        memset(c, 0, sizeof *c);
        if (x < 50) {
            int ci = (int)below(&g->r, (uint64_t)in->ncols);
            n->ex[i] = e_col(g, in, ci);
            *c = in->c[ci];
            if (chance(&g->r, 50) && !name_used(n, i, in->c[ci].name))
                snprintf(n->names[i], NAMELEN, "%s", in->c[ci].name);
            else
                fresh(g, n->names[i]);
        } else {
            expr *e = x < 80 ? gen_num(g, in, 2) : gen_pred(g, in, 1);
            n->ex[i] = e;
            fresh(g, n->names[i]);
            c->kind = e->kind == K_BOOL ? K_INT : e->kind;
            c->is_bool = e->kind == K_BOOL || (e->op == E_COL && e->has_bool);
            c->nullable = e->nullable;
            c->bound = e->kind == K_BOOL ? 1 : e->bound;
            c->frac = e->kind == K_FLOAT ? e->frac : 0;
            if (e->op == E_COL) {
                int ci = -1;
                for (int k = 0; k < in->ncols; k++)
                    if (!strcmp(in->c[k].name, e->name))
                        ci = k;
                *c = in->c[ci];
            } else {
                c->type = e->kind == K_BOOL    ? COPROC_INT32
                          : e->kind == K_FLOAT ? COPROC_FLOAT64
                                               : COPROC_INT64;
            }
            if (e->kind == K_BOOL)
                feature(g, "bool-project");
        }
        snprintf(c->name, NAMELEN, "%s", n->names[i]);
    }
    return n;
}

static unsigned skip_now; /* the generator's skips, for key_kind */

static int key_kind(const scol *c)
{
    if ((skip_now & DG_SKIP_U64_KEYS) && c->u64high && c->type == COPROC_UINT64)
        return -1;
    return c->kind == K_STR ? K_STR : c->kind == K_INT ? K_INT : -1;
}

static node *group(gen *g, node *in, int allow_keyless);

static node *build_side(gen *g, const node *probe, int inner)
{
    int ti = 1 + (int)below(&g->r, 2);
    if (g->t[0].rows <= 300 && chance(&g->r, 10))
        ti = 0;
    node *b = scan(g, ti);
    if (!(g->mask & DG_PLAIN_BUILD)) {
        if (!(g->mask & DG_NO_FILTER) && chance(&g->r, 25))
            b = filter(g, b, 1);
        if (!(g->mask & DG_NO_GROUP) && chance(&g->r, 15)) {
            node *gb = group(g, b, 0);
            if (gb) {
                b = gb;
                feature(g, "group-build");
            }
        }
    }
    int clash = 0;
    for (int i = 0; i < b->ncols; i++)
        clash |= name_used(probe, probe->ncols, b->c[i].name);
    if ((inner && clash) || (!(g->mask & DG_PLAIN_BUILD) && chance(&g->r, 15)))
        b = rename_all(g, b);
    return b;
}

static node *join(gen *g, node *probe)
{
    int inner = chance(&g->r, 55);
    if (inner && probe->rows * 300 / 30 > 60000)
        inner = 0; /* keep results small */
    if (inner && probe->ncols > MAXS - 8)
        inner = 0;
    node *b = build_side(g, probe, inner);
    if (inner && probe->ncols + b->ncols > MAXS)
        inner = 0;
    node *n = n_new(g, N_JOIN, probe);
    n->build = b;
    n->jkind = inner ? COPROC_JOIN_INNER : COPROC_JOIN_SEMI;
    int want = (g->mask & DG_ONE_KEY) ? 1 : chance(&g->r, 75) ? 1 : chance(&g->r, 75) ? 2 : 3;
    for (int k = 0; k < want; k++) {
        for (int tries = 0; tries < 12; tries++) {
            int pi = (int)below(&g->r, (uint64_t)probe->ncols);
            int kk = key_kind(&probe->c[pi]);
            int keyish = tries < 6 && chance(&g->r, 85); /* mostly key-like columns */
            if (kk < 0 || (keyish && !probe->c[pi].keyish))
                continue;
            int cand[MAXS], nc = 0, same[MAXS], ns = 0;
            for (int i = 0; i < b->ncols; i++)
                if (key_kind(&b->c[i]) == kk && (!keyish || b->c[i].keyish)) {
                    cand[nc++] = i;
                    if (b->c[i].type == probe->c[pi].type)
                        same[ns++] = i;
                }
            if (!nc)
                continue;
            /* mostly the same types; now and then int32 against int64 and such */
            int bi = ns && chance(&g->r, 85) ? same[below(&g->r, (uint64_t)ns)]
                                             : cand[below(&g->r, (uint64_t)nc)];
            int dup = 0;
            for (int j = 0; j < n->nk; j++)
                dup |= n->pk[j] == pi || n->bk[j] == bi;
            if (dup)
                continue;
            n->pk[n->nk] = pi;
            n->bk[n->nk++] = bi;
            break;
        }
    }
    if (!n->nk)
        return probe; /* no key pair: no join */
    feature(g, inner ? "inner" : "semi");
    if (n->nk > 1)
        feature(g, "multikey-join");
    if (inner) {
        for (int i = 0; i < b->ncols; i++)
            n->c[n->ncols++] = b->c[i];
        n->rows = probe->rows * (b->rows > 1 ? b->rows : 1);
    }
    return n;
}

static int is_bool_expr(const expr *e)
{
    return e && (e->kind == K_BOOL || (e->op == E_COL && e->has_bool));
}

static node *group(gen *g, node *in, int allow_keyless)
{
    node *n = n_new(g, N_GROUP, in);
    unsigned x = (unsigned)below(&g->r, 100);
    int nk = x < 28 ? 0 : x < 68 ? 1 : x < 90 ? 2 : 3;
    if (!allow_keyless && nk == 0)
        nk = 1;
    if ((g->mask & DG_ONE_KEY) && nk > 1)
        nk = 1;
    n->ncols = 0;
    for (int k = 0; k < nk; k++) {
        for (int tries = 0; tries < 8; tries++) {
            int ci = (int)below(&g->r, (uint64_t)in->ncols);
            if (key_kind(&in->c[ci]) < 0)
                continue;
            int dup = 0;
            for (int j = 0; j < n->ngk; j++)
                dup |= n->gk[j] == ci;
            if (dup)
                continue;
            if ((g->skip & DG_SKIP_GROUP_NULL_KEYS) && nk > 1 && in->c[ci].nullable)
                continue;
            n->gk[n->ngk++] = ci;
            n->c[n->ncols++] = in->c[ci];
            break;
        }
    }
    if (!allow_keyless && !n->ngk)
        return NULL;
    int keyless = n->ngk == 0;
    n->rows = keyless ? 1 : in->rows;
    double rows = in->rows > 1 ? in->rows : 1;
    n->na = (g->mask & DG_ONE_AGG) ? 1 : 1 + (int)below(&g->r, 4);
    for (int i = 0; i < n->na; i++) {
        agg *a = &n->ag[i];
        a->fn = (int)below(&g->r, 6); /* 5: COUNT(*) */
        fresh(g, a->name);
        if (a->fn == 5) {
            a->fn = COPROC_AGG_COUNT;
        } else {
            unsigned y = (unsigned)below(&g->r, 100);
            int ci = -1;
            if (y < 70 || a->fn == COPROC_AGG_COUNT) {
                ci = a->fn == COPROC_AGG_COUNT ? (int)below(&g->r, (uint64_t)in->ncols)
                                               : pick_num_col(g, in);
            }
            /* (a predicate is no aggregate's argument: "a boolean where a number is
             * needed"; a projected boolean, an INT32 column, is) */
            a->arg = ci >= 0 ? e_col(g, in, ci) : gen_num(g, in, 1);
            expr *e = a->arg;
            if (e->kind == K_STR && a->fn != COPROC_AGG_COUNT)
                a->fn = COPROC_AGG_COUNT;
            if (is_bool_expr(e) && (a->fn == COPROC_AGG_MIN || a->fn == COPROC_AGG_MAX)) {
                feature(g, "bool-minmax");
                if (g->skip & DG_SKIP_BOOL_MINMAX)
                    a->fn = COPROC_AGG_COUNT;
            }
            if (keyless && e->nullable) {
                feature(g, "keyless-nullable");
                if (g->skip & DG_SKIP_EMPTY_AGG)
                    a->fn = COPROC_AGG_COUNT;
            }
            if (a->fn == COPROC_AGG_SUM && e->kind == K_FLOAT &&
                (e->frac > 30 || ilog2(e->bound * rows + 1) + e->frac > 52))
                a->fn = COPROC_AGG_MIN; /* the float sum would round */
            if (a->fn == COPROC_AGG_SUM && e->kind != K_FLOAT)
                a->wsum = e->wraps || e->bound * rows >= TWO62;
            if (a->fn == COPROC_AGG_AVG && e->kind != K_FLOAT && e->bound * rows > TWO53)
                a->fn = COPROC_AGG_COUNT;
            if (keyless && !e->nullable) {
                a->zero_empty = a->fn == COPROC_AGG_SUM || a->fn == COPROC_AGG_MIN ||
                                a->fn == COPROC_AGG_MAX;
                a->nan_null = a->fn == COPROC_AGG_AVG;
            }
        }
        scol *c = &n->c[n->ncols++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, NAMELEN, "%s", a->name);
        expr *e = a->arg;
        switch (a->fn) {
        case COPROC_AGG_COUNT:
            c->kind = K_INT;
            c->bound = rows;
            c->type = COPROC_INT64;
            break;
        case COPROC_AGG_SUM:
            c->kind = e->kind == K_FLOAT ? K_FLOAT : K_INT;
            c->bound = e->bound * rows >= TWO62 && c->kind == K_INT ? TWO63 : e->bound * rows;
            c->frac = e->frac;
            c->nullable = e->nullable;
            c->type = c->kind == K_FLOAT ? COPROC_FLOAT64 : COPROC_INT64;
            break;
        case COPROC_AGG_MIN:
        case COPROC_AGG_MAX:
            c->kind = e->kind == K_BOOL ? K_INT : e->kind;
            c->is_bool = is_bool_expr(e);
            c->bound = e->kind == K_BOOL ? 1 : e->bound;
            c->frac = e->frac;
            c->nullable = e->nullable;
            c->type = c->kind == K_FLOAT ? COPROC_FLOAT64 : COPROC_INT64;
            for (int k = 0; e->op == E_COL && k < in->ncols; k++)
                if (!strcmp(in->c[k].name, e->name))
                    c->type = in->c[k].type; /* the argument's type */
            break;
        default: /* AVG */
            c->kind = K_FLOAT;
            c->bound = e->bound;
            c->frac = 99;
            c->nullable = e->nullable;
            c->type = COPROC_FLOAT64;
            break;
        }
        if (keyless && (a->zero_empty || a->nan_null))
            c->nullable = 0;
    }
    char f[32];
    snprintf(f, sizeof f, "group%d", n->ngk);
    feature(g, f);
    return n;
}

static node *order(gen *g, node *in)
{
    node *n = n_new(g, N_ORDER, in);
    n->nok = 1 + (int)below(&g->r, 3);
    if (n->nok > in->ncols)
        n->nok = in->ncols;
    for (int k = 0; k < n->nok; k++) {
        int ci, dup;
        do {
            ci = (int)below(&g->r, (uint64_t)in->ncols);
            dup = 0;
            for (int j = 0; j < k; j++)
                dup |= n->ok[j].col == ci;
        } while (dup);
        n->ok[k].col = ci;
        n->ok[k].desc = chance(&g->r, 50);
        n->ok[k].nulls_first = chance(&g->r, 50);
        n->ok[k].unsig = in->c[ci].kind == K_INT && in->c[ci].type == COPROC_UINT64;
    }
    if (!(g->mask & DG_NO_LIMIT) && chance(&g->r, 50)) {
        n->limit = chance(&g->r, 80) ? 1 + below(&g->r, 20) : 1 + below(&g->r, 5000);
        feature(g, "limit");
    }
    feature(g, "order");
    return n;
}

static node *gen_plan(gen *g)
{
    node *n = scan(g, 0);
    if (!(g->mask & DG_NO_JOIN)) {
        unsigned x = (unsigned)below(&g->r, 100);
        int nj = x < 45 ? 0 : x < 85 ? 1 : 2;
        if ((g->mask & DG_ONE_JOIN) && nj > 1)
            nj = 1;
        for (int j = 0; j < nj; j++)
            n = join(g, n);
    }
    if (!(g->mask & DG_NO_FILTER) && chance(&g->r, 60))
        n = filter(g, n, 2);
    if (!(g->mask & DG_NO_PROJECT) && chance(&g->r, 35))
        n = project(g, n);
    int keyless = 0;
    if (!(g->mask & DG_NO_GROUP) && chance(&g->r, 50)) {
        n = group(g, n, 1);
        keyless = n->ngk == 0;
        if (!keyless && !(g->mask & DG_NO_HAVING)) {
            if (!(g->mask & DG_NO_FILTER) && chance(&g->r, 25))
                n = filter(g, n, 2);
            if (!(g->mask & DG_NO_PROJECT) && chance(&g->r, 15))
                n = project(g, n);
        }
    }
    if (!keyless && !(g->mask & DG_NO_ORDER) && chance(&g->r, 45))
        n = order(g, n);
    return n;
}

/* ---------------------------------------------------------------- SQL */

static void sql_num_const(sbuf *b, const expr *e)
{
    if (e->op == E_INT) {
        if (e->i == INT64_MIN)
            sb_add(b, "(-9223372036854775807 - 1)");
        else if (e->i < 0)
            sb_add(b, "(%" PRId64 ")", e->i);
        else
            sb_add(b, "%" PRId64, e->i);
    } else {
        char t[40];
        snprintf(t, sizeof t, "%.17g", e->f);
        if (!strpbrk(t, ".e"))
            strcat(t, ".0");
        sb_add(b, t[0] == '-' ? "(%s)" : "%s", t);
    }
}

static void sql_str(sbuf *b, const char *s)
{
    sb_add(b, "'");
    for (; *s; s++)
        sb_add(b, *s == '\'' ? "''" : "%c", *s);
    sb_add(b, "'");
}

static const char *const cmp_sql[] = {"=", "<>", "<", "<=", ">", ">="};

static void sql_expr(sbuf *b, const expr *e)
{
    switch (e->op) {
    case E_COL:
        sb_add(b, "%s", e->name);
        break;
    case E_INT:
    case E_FLOAT:
        sql_num_const(b, e);
        break;
    case E_STR:
        sql_str(b, e->s);
        break;
    case E_ARITH:
        if (e->kind == K_INT && (e->wraps || e->sub == COPROC_ARITH_DIV)) {
            static const char *const fn[] = {"wadd", "wsub", "wmul", "idiv"};
            sb_add(b, "%s(", fn[e->sub]);
            sql_expr(b, e->a);
            sb_add(b, ", ");
            sql_expr(b, e->b);
            sb_add(b, ")");
        } else {
            static const char *const op[] = {"+", "-", "*", "/"};
            sb_add(b, "(");
            sql_expr(b, e->a);
            sb_add(b, " %s ", op[e->sub]);
            sql_expr(b, e->b);
            sb_add(b, ")");
        }
        break;
    case E_CMP:
        sb_add(b, "(");
        if (e->cast_a)
            sb_add(b, "CAST(");
        sql_expr(b, e->a);
        if (e->cast_a)
            sb_add(b, " AS REAL)");
        sb_add(b, " %s ", cmp_sql[e->sub]);
        if (e->cast_b)
            sb_add(b, "CAST(");
        sql_expr(b, e->b);
        if (e->cast_b)
            sb_add(b, " AS REAL)");
        sb_add(b, ")");
        break;
    case E_BETWEEN:
        sb_add(b, "(");
        sql_expr(b, e->a);
        sb_add(b, " BETWEEN ");
        sql_expr(b, e->b);
        sb_add(b, " AND ");
        sql_expr(b, e->c);
        sb_add(b, ")");
        break;
    case E_IN:
        sb_add(b, "(");
        sql_expr(b, e->a);
        sb_add(b, " IN (");
        for (int i = 0; i < e->n; i++) {
            if (i)
                sb_add(b, ", ");
            sql_expr(b, e->list[i]);
        }
        sb_add(b, "))");
        break;
    case E_PREFIX:
        sb_add(b, "(");
        sql_expr(b, e->a);
        sb_add(b, " GLOB ");
        {
            char pat[64];
            snprintf(pat, sizeof pat, "%s*", e->s);
            sql_str(b, pat);
        }
        sb_add(b, ")");
        break;
    case E_AND:
    case E_OR:
        sb_add(b, "(");
        sql_expr(b, e->a);
        sb_add(b, e->op == E_AND ? " AND " : " OR ");
        sql_expr(b, e->b);
        sb_add(b, ")");
        break;
    case E_NOT:
        sb_add(b, "(NOT ");
        sql_expr(b, e->a);
        sb_add(b, ")");
        break;
    }
}

static void sql_node(sbuf *b, const node *n, int with_limit);

/* FROM's operand: a table's name or a sub-query in parentheses. */
static void sql_from(sbuf *b, const node *n)
{
    if (n->op == N_SCAN) {
        sb_add(b, "t%d", n->table);
        return;
    }
    sb_add(b, "(");
    sql_node(b, n, 0);
    sb_add(b, ")");
}

static void sql_node(sbuf *b, const node *n, int with_limit)
{
    switch (n->op) {
    case N_SCAN:
        sb_add(b, "SELECT * FROM t%d", n->table);
        break;
    case N_FILTER:
        sb_add(b, "SELECT * FROM ");
        sql_from(b, n->in);
        sb_add(b, " WHERE ");
        sql_expr(b, n->pred);
        break;
    case N_PROJECT:
        sb_add(b, "SELECT ");
        for (int i = 0; i < n->n; i++) {
            if (i)
                sb_add(b, ", ");
            sql_expr(b, n->ex[i]);
            sb_add(b, " AS %s", n->names[i]);
        }
        sb_add(b, " FROM ");
        sql_from(b, n->in);
        break;
    case N_JOIN:
        sb_add(b, "SELECT * FROM ");
        sql_from(b, n->in);
        sb_add(b, " AS j%dp ", n->id);
        if (n->jkind == COPROC_JOIN_INNER) {
            sb_add(b, "JOIN ");
            sql_from(b, n->build);
            sb_add(b, " AS j%db ON ", n->id);
        } else {
            sb_add(b, "WHERE EXISTS (SELECT 1 FROM ");
            sql_from(b, n->build);
            sb_add(b, " AS j%db WHERE ", n->id);
        }
        for (int k = 0; k < n->nk; k++)
            sb_add(b, "%sj%dp.%s = j%db.%s", k ? " AND " : "", n->id, n->in->c[n->pk[k]].name,
                   n->id, n->build->c[n->bk[k]].name);
        if (n->jkind != COPROC_JOIN_INNER)
            sb_add(b, ")");
        break;
    case N_GROUP:
        sb_add(b, "SELECT ");
        for (int k = 0; k < n->ngk; k++)
            sb_add(b, "%s, ", n->in->c[n->gk[k]].name);
        for (int i = 0; i < n->na; i++) {
            const agg *a = &n->ag[i];
            static const char *const fn[] = {"sum", "count", "min", "max", "avg"};
            if (i)
                sb_add(b, ", ");
            if (a->zero_empty)
                sb_add(b, "coalesce(");
            sb_add(b, "%s(", a->wsum ? "wsum" : fn[a->fn]);
            if (a->arg)
                sql_expr(b, a->arg);
            else
                sb_add(b, "*");
            sb_add(b, ")");
            if (a->zero_empty)
                sb_add(b, ", 0)");
            sb_add(b, " AS %s", a->name);
        }
        sb_add(b, " FROM ");
        sql_from(b, n->in);
        for (int k = 0; k < n->ngk; k++)
            sb_add(b, "%s%s", k ? ", " : " GROUP BY ", n->in->c[n->gk[k]].name);
        break;
    case N_ORDER:
        sb_add(b, "SELECT * FROM ");
        sql_from(b, n->in);
        for (int k = 0; k < n->nok; k++) {
            const char *dir = n->ok[k].desc ? "DESC" : "ASC";
            const char *nulls = n->ok[k].nulls_first ? "FIRST" : "LAST";
            sb_add(b, "%s", k ? ", " : " ORDER BY ");
            if (n->ok[k].unsig) /* uint64 in unsigned order: its int64 bits' sign first */
                sb_add(b, "(%s < 0) %s NULLS %s, ", n->c[n->ok[k].col].name, dir, nulls);
            sb_add(b, "%s %s NULLS %s", n->c[n->ok[k].col].name, dir, nulls);
        }
        if (with_limit && n->limit)
            sb_add(b, " LIMIT %" PRIu64, n->limit);
        break;
    }
}

/* ---------------------------------------------------------------- SQLite */

static void fn_arith(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    int64_t a = sqlite3_value_int64(argv[0]), b = sqlite3_value_int64(argv[1]), r;
    switch ((int)(intptr_t)sqlite3_user_data(ctx)) {
    case COPROC_ARITH_ADD:
        r = (int64_t)((uint64_t)a + (uint64_t)b);
        break;
    case COPROC_ARITH_SUB:
        r = (int64_t)((uint64_t)a - (uint64_t)b);
        break;
    case COPROC_ARITH_MUL:
        r = (int64_t)((uint64_t)a * (uint64_t)b);
        break;
    default:
        r = b == 0 ? 0 : (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
        break;
    }
    sqlite3_result_int64(ctx, r);
}

typedef struct wsum_state {
    uint64_t sum;
    int any;
} wsum_state;

static void wsum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    wsum_state *s = sqlite3_aggregate_context(ctx, sizeof *s);
    if (s && sqlite3_value_type(argv[0]) != SQLITE_NULL) {
        s->sum += (uint64_t)sqlite3_value_int64(argv[0]);
        s->any = 1;
    }
}

static void wsum_final(sqlite3_context *ctx)
{
    wsum_state *s = sqlite3_aggregate_context(ctx, 0);
    if (s && s->any)
        sqlite3_result_int64(ctx, (int64_t)s->sum);
    else
        sqlite3_result_null(ctx);
}

int dg_sqlite_functions(void *dbp)
{
    sqlite3 *db = dbp;
    static const char *const names[] = {"wadd", "wsub", "wmul", "idiv"};
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    for (int i = 0; i < 4; i++)
        if (sqlite3_create_function(db, names[i], 2, flags, (void *)(intptr_t)i, fn_arith, NULL,
                                    NULL) != SQLITE_OK)
            return -1;
    return sqlite3_create_function(db, "wsum", 1, flags, NULL, NULL, wsum_step, wsum_final) ==
                   SQLITE_OK
               ? 0
               : -1;
}

static int load_sqlite(sqlite3 *db, const table *t)
{
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        const table *tb = &t[ti];
        sbuf b = {0};
        sb_add(&b, "CREATE TABLE %s(", tb->name);
        for (int c = 0; c < tb->ncols; c++)
            sb_add(&b, "%s%s %s", c ? ", " : "", tb->c[c].name,
                   tb->c[c].kind == K_STR     ? "TEXT"
                   : tb->c[c].kind == K_FLOAT ? "REAL"
                                              : "INTEGER");
        sb_add(&b, ")");
        int rc = sqlite3_exec(db, b.p, NULL, NULL, NULL);
        b.n = 0;
        sb_add(&b, "INSERT INTO %s VALUES(", tb->name);
        for (int c = 0; c < tb->ncols; c++)
            sb_add(&b, "%s?", c ? ", " : "");
        sb_add(&b, ")");
        sqlite3_stmt *st = NULL;
        if (rc != SQLITE_OK || sqlite3_prepare_v2(db, b.p, -1, &st, NULL) != SQLITE_OK) {
            free(b.p);
            return -1;
        }
        free(b.p);
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        for (size_t r = 0; r < tb->rows; r++) {
            for (int c = 0; c < tb->ncols; c++) {
                const tcol *tc = &tb->c[c];
                if (!is_valid(tc->valid, r))
                    sqlite3_bind_null(st, c + 1);
                else if (tc->kind == K_STR)
                    sqlite3_bind_text(st, c + 1, tc->s[r], -1, SQLITE_STATIC);
                else if (tc->kind == K_FLOAT)
                    sqlite3_bind_double(st, c + 1, load_float(tc->v, tc->type, r));
                else
                    sqlite3_bind_int64(st, c + 1, load_int(tc->v, tc->type, r));
            }
            if (sqlite3_step(st) != SQLITE_DONE) {
                sqlite3_finalize(st);
                return -1;
            }
            sqlite3_reset(st);
        }
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        sqlite3_finalize(st);
    }
    return 0;
}

/* ---------------------------------------------------------------- rows */

typedef struct cell {
    unsigned char null, is_float, is_str;
    int64_t i;
    double f;
    const char *s; /* is_str: interned (the pool, or a result's dictionary copied) */
} cell;

typedef struct rowset {
    size_t n;
    int ncols;
    cell *c;
    char **strs; /* strings this rowset owns */
    size_t nstrs;
} rowset;

static void rowset_free(rowset *r)
{
    for (size_t i = 0; i < r->nstrs; i++)
        free(r->strs[i]);
    free(r->strs);
    free(r->c);
    memset(r, 0, sizeof *r);
}

static const char *own_str(rowset *r, const char *s)
{
    r->strs = realloc(r->strs, (r->nstrs + 1) * sizeof *r->strs);
    return r->strs[r->nstrs++] = strdup(s);
}

static int from_sqlite(sqlite3 *db, const char *sql, rowset *r, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    memset(r, 0, sizeof *r);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    r->ncols = sqlite3_column_count(st);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n == cap) {
            cap = cap ? 2 * cap : 64;
            r->c = realloc(r->c, cap * (size_t)(r->ncols ? r->ncols : 1) * sizeof(cell));
        }
        for (int c = 0; c < r->ncols; c++) {
            cell *x = &r->c[r->n * r->ncols + c];
            memset(x, 0, sizeof *x);
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_NULL:
                x->null = 1;
                break;
            case SQLITE_FLOAT:
                x->is_float = 1;
                x->f = sqlite3_column_double(st, c);
                break;
            case SQLITE_TEXT:
                x->is_str = 1;
                x->s = own_str(r, (const char *)sqlite3_column_text(st, c));
                break;
            default:
                x->i = sqlite3_column_int64(st, c);
                break;
            }
        }
        r->n++;
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

static void from_coproc(const coproc_table *t, const node *root, rowset *r)
{
    memset(r, 0, sizeof *r);
    r->n = coproc_table_rows(t);
    r->ncols = coproc_table_column_count(t);
    r->c = calloc(r->n * (size_t)r->ncols + 1, sizeof(cell));
    for (int c = 0; c < r->ncols; c++) {
        const coproc_column *col = coproc_table_column_at(t, c);
        const coproc_column *v = coproc_column_validity(col);
        const uint32_t *w = v ? coproc_column_host_data(v) : NULL;
        const void *d = coproc_column_host_data(col);
        coproc_type ty = coproc_column_type(col);
        int dict = coproc_column_dictionary_size(col) >= 0;
        const char **strs = NULL;
        if (dict) {
            int nd = coproc_column_dictionary_size(col);
            strs = calloc((size_t)nd + 1, sizeof *strs);
            for (int k = 0; k < nd; k++)
                strs[k] = own_str(r, coproc_column_dictionary_value(col, k));
        }
        int nan_null = 0;
        if (root->op == N_GROUP && c >= root->ngk && c - root->ngk < root->na)
            nan_null = root->ag[c - root->ngk].nan_null;
        for (size_t i = 0; i < r->n; i++) {
            cell *x = &r->c[i * r->ncols + c];
            x->null = (w && !is_valid(w, i)) || !d;
            if (x->null)
                continue;
            if (dict) {
                int32_t code = ((const int32_t *)d)[i];
                x->is_str = 1;
                x->s = code >= 0 && code < coproc_column_dictionary_size(col)
                           ? strs[code]
                           : own_str(r, "<code out of range>");
            } else if (ty == COPROC_FLOAT32 || ty == COPROC_FLOAT64) {
                x->is_float = 1;
                x->f = load_float(d, ty, i);
                if (nan_null && isnan(x->f))
                    x->null = 1, x->is_float = 0;
            } else {
                x->i = load_int(d, ty, i);
            }
        }
        free(strs);
    }
}

/* A total order on cells (nulls first, then strings, then numbers). */
static int cell_cmp(const cell *x, const cell *y)
{
    if (x->null || y->null)
        return (int)y->null - (int)x->null;
    if (x->is_str || y->is_str)
        return x->is_str != y->is_str ? (int)y->is_str - (int)x->is_str : strcmp(x->s, y->s);
    if (!x->is_float && !y->is_float)
        return (x->i > y->i) - (x->i < y->i);
    double a = x->is_float ? x->f : (double)x->i, b = y->is_float ? y->f : (double)y->i;
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int cell_eq(const cell *x, const cell *y)
{
    if (x->null || y->null)
        return x->null == y->null;
    if (x->is_str || y->is_str)
        return x->is_str == y->is_str && !strcmp(x->s, y->s);
    if (!x->is_float && !y->is_float)
        return x->i == y->i;
    double a = x->is_float ? x->f : (double)x->i, b = y->is_float ? y->f : (double)y->i;
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b || fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static __thread int sort_ncols;
static int row_cmp(const void *pa, const void *pb)
{
    const cell *a = pa, *b = pb;
    for (int c = 0; c < sort_ncols; c++) {
        int r = cell_cmp(&a[c], &b[c]);
        if (r)
            return r;
    }
    return 0;
}

static void sort_rows(cell *c, size_t n, int ncols)
{
    sort_ncols = ncols;
    if (n > 1 && ncols)
        qsort(c, n, (size_t)ncols * sizeof(cell), row_cmp);
}

static int row_eq(const cell *a, const cell *b, int ncols)
{
    for (int c = 0; c < ncols; c++)
        if (!cell_eq(&a[c], &b[c]))
            return 0;
    return 1;
}

/* Multisets: equal (sub 0) or got within want (sub 1); both sorted here.
 * *at: the first row of got that differs. */
static int multiset_check(cell *got, size_t ng, cell *want, size_t nw, int ncols, int sub,
                          size_t *at)
{
    sort_rows(got, ng, ncols);
    sort_rows(want, nw, ncols);
    if (!sub) {
        if (ng != nw) {
            *at = 0;
            return 0;
        }
        for (size_t i = 0; i < ng; i++)
            if (!row_eq(got + i * ncols, want + i * ncols, ncols)) {
                *at = i;
                return 0;
            }
        return 1;
    }
    size_t j = 0;
    for (size_t i = 0; i < ng; i++) {
        while (j < nw && !row_eq(got + i * ncols, want + j * ncols, ncols) &&
               row_cmp(want + j * ncols, got + i * ncols) < 0)
            j++;
        if (j == nw || !row_eq(got + i * ncols, want + j * ncols, ncols)) {
            *at = i;
            return 0;
        }
        j++;
    }
    return 1;
}

static int keys_eq(const node *o, const cell *a, const cell *b)
{
    for (int k = 0; k < o->nok; k++)
        if (!cell_eq(&a[o->ok[k].col], &b[o->ok[k].col]))
            return 0;
    return 1;
}

/* a before or with b in the order-by's order (coproc's: nulls as asked). */
static int in_order(const node *o, const cell *a, const cell *b)
{
    for (int k = 0; k < o->nok; k++) {
        const cell *x = &a[o->ok[k].col], *y = &b[o->ok[k].col];
        if (cell_eq(x, y))
            continue;
        if (x->null || y->null)
            return o->ok[k].nulls_first ? x->null : y->null;
        int c = o->ok[k].unsig && !x->is_float && !y->is_float
                    ? ((uint64_t)x->i > (uint64_t)y->i) - ((uint64_t)x->i < (uint64_t)y->i)
                    : cell_cmp(x, y);
        return o->ok[k].desc ? c > 0 : c < 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- coproc plans */

typedef struct cp_tables {
    coproc_table *t[DG_NTABLES];
    coproc_column *cols[DG_NTABLES][MAXTCOLS];
} cp_tables;

static coproc_status make_cp_tables(coproc_runtime *rt, const table *w, cp_tables *ct)
{
    memset(ct, 0, sizeof *ct);
    coproc_status s;
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        const table *tb = &w[ti];
        if ((s = coproc_table_create(rt, &ct->t[ti])) != COPROC_OK)
            return s;
        for (int c = 0; c < tb->ncols; c++) {
            const tcol *tc = &tb->c[c];
            coproc_column *col = NULL;
            if (tc->kind == K_STR && tb->rows) {
                s = coproc_column_encode_strings(rt, -1, tc->s, tb->rows, &col);
            } else if (tc->kind == K_STR) { /* no rows: the column's strings as dictionary */
                const char *d[8];
                int nd = 0;
                for (int i = 0; i < tc->nstr; i++) {
                    int dup = 0;
                    for (int j = 0; j < nd; j++)
                        dup |= !strcmp(d[j], tc->strs[i]);
                    if (!dup)
                        d[nd++] = tc->strs[i];
                }
                for (int i = 1; i < nd; i++) /* insertion sort, byte order */
                    for (int j = i; j > 0 && strcmp(d[j - 1], d[j]) > 0; j--) {
                        const char *t = d[j];
                        d[j] = d[j - 1];
                        d[j - 1] = t;
                    }
                s = coproc_column_wrap(rt, COPROC_INT32, tc->v, 0, &col);
                if (s == COPROC_OK)
                    s = coproc_column_set_dictionary(col, nd, d);
            } else {
                s = coproc_column_wrap(rt, tc->type, tc->v, tb->rows, &col);
            }
            ct->cols[ti][c] = col;
            if (s != COPROC_OK)
                return s;
            if (tc->valid) {
                coproc_column *bits;
                if ((s = coproc_column_wrap(rt, COPROC_UINT32, tc->valid, (tb->rows + 31) / 32,
                                            &bits)) != COPROC_OK)
                    return s;
                if ((s = coproc_column_set_validity(col, bits)) != COPROC_OK) {
                    coproc_column_free(bits);
                    return s;
                }
            }
            if ((s = coproc_table_add(ct->t[ti], tc->name, col)) != COPROC_OK)
                return s;
        }
    }
    return COPROC_OK;
}

static void free_cp_tables(cp_tables *ct)
{
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        coproc_table_free(ct->t[ti]);
        for (int c = 0; c < MAXTCOLS; c++)
            coproc_column_free(ct->cols[ti][c]);
    }
}

static const char *const g_table_names[DG_NTABLES] = {"t0", "t1", "t2"};

static coproc_expr *cp_expr(coproc_plan *p, const expr *e)
{
    switch (e->op) {
    case E_COL:
        return coproc_expr_column(p, e->name);
    case E_INT:
        return coproc_expr_int(p, e->i);
    case E_FLOAT:
        return coproc_expr_float(p, e->f);
    case E_STR:
        return coproc_expr_string(p, e->s);
    case E_ARITH:
        return coproc_expr_arith(p, (coproc_arith)e->sub, cp_expr(p, e->a), cp_expr(p, e->b));
    case E_CMP:
        return coproc_expr_compare(p, (coproc_cmp)e->sub, cp_expr(p, e->a), cp_expr(p, e->b));
    case E_BETWEEN:
        return coproc_expr_between(p, cp_expr(p, e->a), cp_expr(p, e->b), cp_expr(p, e->c));
    case E_IN: {
        coproc_expr *l[6];
        for (int i = 0; i < e->n; i++)
            l[i] = cp_expr(p, e->list[i]);
        return coproc_expr_in(p, cp_expr(p, e->a), e->n, l);
    }
    case E_PREFIX:
        return coproc_expr_prefix(p, cp_expr(p, e->a), e->s);
    case E_AND:
        return coproc_expr_and(p, cp_expr(p, e->a), cp_expr(p, e->b));
    case E_OR:
        return coproc_expr_or(p, cp_expr(p, e->a), cp_expr(p, e->b));
    default:
        return coproc_expr_not(p, cp_expr(p, e->a));
    }
}

static coproc_node *cp_node(coproc_plan *p, const node *n, const cp_tables *ct)
{
    switch (n->op) {
    case N_SCAN:
        return coproc_plan_scan(p, ct->t[n->table], g_table_names[n->table]);
    case N_FILTER:
        return coproc_plan_filter(p, cp_node(p, n->in, ct), cp_expr(p, n->pred));
    case N_PROJECT: {
        const char *names[8];
        coproc_expr *ex[8];
        coproc_node *in = cp_node(p, n->in, ct);
        for (int i = 0; i < n->n; i++) {
            names[i] = n->names[i];
            ex[i] = cp_expr(p, n->ex[i]);
        }
        return coproc_plan_project(p, in, n->n, names, ex);
    }
    case N_JOIN: {
        const char *pk[3], *bk[3];
        for (int k = 0; k < n->nk; k++) {
            pk[k] = n->in->c[n->pk[k]].name;
            bk[k] = n->build->c[n->bk[k]].name;
        }
        coproc_node *pr = cp_node(p, n->in, ct), *bu = cp_node(p, n->build, ct);
        if (n->nk == 1)
            return coproc_plan_join(p, (coproc_join_kind)n->jkind, pr, pk[0], bu, bk[0]);
        return coproc_plan_join_keys(p, (coproc_join_kind)n->jkind, pr, n->nk, pk, bu, bk);
    }
    case N_GROUP: {
        const char *keys[3];
        coproc_aggregate ag[5];
        coproc_node *in = cp_node(p, n->in, ct);
        for (int k = 0; k < n->ngk; k++)
            keys[k] = n->in->c[n->gk[k]].name;
        for (int i = 0; i < n->na; i++) {
            ag[i].fn = (coproc_agg_fn)n->ag[i].fn;
            ag[i].arg = n->ag[i].arg ? cp_expr(p, n->ag[i].arg) : NULL;
            ag[i].name = n->ag[i].name;
        }
        return coproc_plan_group_by(p, in, n->ngk, keys, n->na, ag);
    }
    default: {
        coproc_order_key ok[3];
        coproc_node *in = cp_node(p, n->in, ct);
        for (int k = 0; k < n->nok; k++) {
            ok[k].column = n->c[n->ok[k].col].name;
            ok[k].descending = n->ok[k].desc;
            ok[k].nulls_first = n->ok[k].nulls_first;
        }
        return coproc_plan_order_by(p, in, n->nok, ok, n->limit);
    }
    }
}

/* ---------------------------------------------------------------- running a case */

static void print_cell(FILE *f, const cell *x)
{
    if (x->null)
        fprintf(f, " NULL");
    else if (x->is_str)
        fprintf(f, " '%s'", x->s);
    else if (x->is_float)
        fprintf(f, " %.17g", x->f);
    else
        fprintf(f, " %" PRId64, x->i);
}

static void print_rows(FILE *f, const char *who, const rowset *r, size_t from, size_t count)
{
    for (size_t i = from; i < from + count && i < r->n; i++) {
        fprintf(f, "    %s[%zu]:", who, i);
        for (int c = 0; c < r->ncols; c++)
            print_cell(f, &r->c[i * r->ncols + c]);
        fprintf(f, "\n");
    }
}

/* Compare got with want (SQLite's, without the LIMIT); the kind or -1. */
static int compare(const node *root, rowset *got, rowset *want, size_t *at)
{
    *at = 0;
    if (got->ncols != want->ncols)
        return DG_KIND_COLUMNS;
    int nc = got->ncols;
    if (root->op != N_ORDER) {
        if (got->n != want->n)
            return DG_KIND_ROWS;
        return multiset_check(got->c, got->n, want->c, want->n, nc, 0, at) ? -1 : DG_KIND_VALUES;
    }
    size_t expect = root->limit && root->limit < want->n ? root->limit : want->n;
    if (got->n != expect)
        return DG_KIND_ROWS;
    for (size_t i = 0; i + 1 < got->n; i++)
        if (!in_order(root, got->c + i * nc, got->c + (i + 1) * nc)) {
            *at = i;
            return DG_KIND_ORDER;
        }
    for (size_t i = 0; i < got->n; i++)
        if (!keys_eq(root, got->c + i * nc, want->c + i * nc)) {
            *at = i;
            return DG_KIND_VALUES;
        }
    /* groups of equal keys: the same rows, the last one cut by the LIMIT a subset */
    for (size_t i = 0; i < got->n;) {
        size_t j = i + 1;
        while (j < want->n && keys_eq(root, want->c + i * nc, want->c + j * nc))
            j++;
        size_t gend = j < got->n ? j : got->n, a;
        if (!multiset_check(got->c + i * nc, gend - i, want->c + i * nc, j - i, nc, j > got->n,
                            &a)) {
            *at = i + a;
            return DG_KIND_VALUES;
        }
        i = j;
    }
    return -1;
}

typedef struct prepared {
    table full[DG_NTABLES], win[DG_NTABLES];
    gen g;
    node *root;
    char *sql;      /* with the LIMIT */
    char *sql_exec; /* without */
} prepared;

static void prepare(const dg_case *c, const dg_options *o, prepared *pr)
{
    memset(pr, 0, sizeof *pr);
    gen_tables(c->seed, pr->full);
    window(c, pr->full, pr->win);
    pr->g.r.s = mix64(c->seed ^ 0x91a4c0deull) ^ c->seed * 0x9e3779b97f4a7c15ull;
    pr->g.mask = c->mask;
    pr->g.skip = o ? o->skip : 0;
    pr->g.t = pr->full; /* the plan follows the whole tables, whatever the window */
    skip_now = pr->g.skip;
    pr->root = gen_plan(&pr->g);
    sbuf b = {0};
    sql_node(&b, pr->root, 1);
    pr->sql = b.p;
    sbuf e = {0};
    sql_node(&e, pr->root, 0);
    pr->sql_exec = e.p;
}

static void unprepare(prepared *pr)
{
    for (int ti = 0; ti < DG_NTABLES; ti++)
        for (int c = 0; c < pr->win[ti].ncols; c++) {
            free(pr->win[ti].c[c].v);
            free(pr->win[ti].c[c].valid);
            free(pr->win[ti].c[c].s);
        }
    free_tables(pr->full);
    gen_free(&pr->g);
    free(pr->sql);
    free(pr->sql_exec);
}

char *dg_case_sql(const dg_case *c, const dg_options *o)
{
    prepared pr;
    prepare(c, o, &pr);
    char *s = strdup(pr.sql);
    unprepare(&pr);
    return s;
}

static void case_header(FILE *f, const dg_case *c, const prepared *pr)
{
    uint8_t b[DG_CASE_BYTES];
    dg_case_encode(c, b);
    fprintf(f, "  seed %" PRIu64 " (COPROC_DIFF_SEED=%" PRIu64 " COPROC_DIFF_CASES=1", c->seed,
            c->seed);
    if (c->mask || c->row_cap[0] || c->row_cap[1] || c->row_cap[2] || c->row_off[0] ||
        c->row_off[1] || c->row_off[2] || c->config) {
        fprintf(f, "; minimised: COPROC_DIFF_CASE=");
        for (int i = 0; i < DG_CASE_BYTES; i++)
            fprintf(f, "%02x", b[i]);
    }
    fprintf(f, ")\n  tables:");
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        const table *t = &pr->win[ti];
        fprintf(f, " %s(%zu rows:", t->name, t->rows);
        for (int k = 0; k < t->ncols; k++)
            fprintf(f, " %s %s%s%s", t->c[k].name,
                    t->c[k].kind == K_STR ? "string" : coproc_type_name(t->c[k].type),
                    t->c[k].nullable ? " null" : "", k + 1 < t->ncols ? "," : "");
        fprintf(f, ")");
    }
    fprintf(f, "\n  features: %s\n  SQL: %s;\n", pr->g.feat.p ? pr->g.feat.p : "",
            pr->sql);
}

/* With few rows, the tables' rows themselves (to make a test of them by hand). */
static void print_data(FILE *f, const prepared *pr)
{
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        const table *t = &pr->win[ti];
        if (t->rows > 12)
            continue;
        for (size_t r = 0; r < t->rows; r++) {
            fprintf(f, "    %s[%zu]:", t->name, r);
            for (int k = 0; k < t->ncols; k++) {
                const tcol *c = &t->c[k];
                if (!is_valid(c->valid, r))
                    fprintf(f, " NULL");
                else if (c->kind == K_STR)
                    fprintf(f, " '%s'", c->s[r]);
                else if (c->kind == K_FLOAT)
                    fprintf(f, " %.17g", load_float(c->v, c->type, r));
                else if (c->type == COPROC_UINT64)
                    fprintf(f, " %" PRIu64, (uint64_t)load_int(c->v, c->type, r));
                else
                    fprintf(f, " %" PRId64, load_int(c->v, c->type, r));
            }
            fprintf(f, "\n");
        }
    }
}

int dg_run_case(coproc_runtime *rt, const dg_case *c, const dg_options *o, dg_outcome *out)
{
    static const dg_options defaults = {0, -1, 0, NULL, NULL};
    if (!o)
        o = &defaults;
    FILE *f = o->out ? o->out : stdout;
    int quiet = o->verbose < 0;
    dg_outcome res;
    memset(&res, 0, sizeof res);
    res.kind[0] = res.kind[1] = -1;
    prepared pr;
    prepare(c, o, &pr);
    snprintf(res.features, sizeof res.features, "%s", pr.g.feat.p ? pr.g.feat.p : "");
    if (o->verbose > 0) {
        fprintf(f, "case:\n");
        case_header(f, c, &pr);
    }

    sqlite3 *db = NULL;
    rowset want = {0};
    char err[512] = "";
    int sqlite_ok = sqlite3_open(":memory:", &db) == SQLITE_OK && dg_sqlite_functions(db) == 0 &&
                    load_sqlite(db, pr.win) == 0 &&
                    from_sqlite(db, pr.sql_exec, &want, err, sizeof err) == 0;
    if (!sqlite_ok) {
        res.disagreements = 1;
        res.kind[0] = DG_KIND_SQLITE;
        if (!quiet) {
            fprintf(f, "DISAGREEMENT (sqlite): SQLite failed: %s\n",
                    err[0] ? err : sqlite3_errmsg(db));
            case_header(f, c, &pr);
        }
        goto done;
    }
    res.rows = want.n;

    cp_tables ct;
    coproc_status ts = make_cp_tables(rt, pr.win, &ct);
    int modes = c->modes ? c->modes : DG_BOTH;
    if (!(modes & DG_FUSED) && o->fused_features && pr.g.feat.p) {
        /* shapes the fused engine runs whatever the case says */
        char list[256];
        snprintf(list, sizeof list, "%s", o->fused_features);
        for (char *save, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            size_t n = strlen(t);
            for (const char *q = pr.g.feat.p; (q = strstr(q, t)); q += n)
                if ((q == pr.g.feat.p || q[-1] == ' ') && (q[n] == ' ' || !q[n]))
                    modes |= DG_FUSED;
        }
    }
    for (int m = 0; m < 2; m++) {
        if (!(modes & (m ? DG_OPERATORS : DG_FUSED)))
            continue;
        res.ran[m] = 1;
        const char *mode = m ? "operators" : "fused";
        int kind = -1;
        size_t at = 0;
        coproc_plan *p = NULL;
        coproc_query_result qr;
        int have = 0;
        rowset got = {0};
        char msg[600] = "";
        if (ts != COPROC_OK) {
            kind = DG_KIND_BUILD;
            snprintf(msg, sizeof msg, "making the tables: %s: %s", coproc_status_name(ts),
                     coproc_errmsg(rt));
        } else if (coproc_plan_create(rt, &p) != COPROC_OK) {
            kind = DG_KIND_BUILD;
            snprintf(msg, sizeof msg, "coproc_plan_create: %s", coproc_errmsg(rt));
        } else {
            coproc_node *root = cp_node(p, pr.root, &ct);
            if (coproc_plan_status(p) != COPROC_OK || !root) {
                kind = DG_KIND_BUILD;
                snprintf(msg, sizeof msg, "building the plan: %s: %s",
                         coproc_status_name(coproc_plan_status(p)), coproc_plan_errmsg(p));
            } else {
                coproc_query_options qo;
                coproc_query_options_init(&qo);
                qo.mode = m ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
                qo.device = o->device;
                coproc_status s = coproc_query_run(p, root, &qo, &qr);
                if (s != COPROC_OK) {
                    kind = DG_KIND_ERROR;
                    snprintf(msg, sizeof msg, "coproc_query_run: %s: %s", coproc_status_name(s),
                             coproc_errmsg(rt));
                } else {
                    have = 1;
                    if (!m) {
                        res.fell_back = qr.note[0] != 0;
                        res.kernels_built = qr.kernels_built;
                    }
                    from_coproc(qr.table, pr.root, &got);
                    /* compare copies: the comparison sorts in place */
                    rowset w = want;
                    w.c = malloc((want.n * (size_t)want.ncols + 1) * sizeof(cell));
                    if (want.n && want.c)
                        memcpy(w.c, want.c, want.n * (size_t)want.ncols * sizeof(cell));
                    rowset gcopy = got;
                    gcopy.c = malloc((got.n * (size_t)got.ncols + 1) * sizeof(cell));
                    if (got.n && got.c)
                        memcpy(gcopy.c, got.c, got.n * (size_t)got.ncols * sizeof(cell));
                    kind = compare(pr.root, &gcopy, &w, &at);
                    if (kind >= 0 && !quiet) { /* print the sorted forms */
                        snprintf(msg, sizeof msg,
                                 "coproc %zu rows x %d columns, SQLite %zu x %d; first "
                                 "difference at row %zu%s%s",
                                 got.n, got.ncols, want.n, want.ncols, at,
                                 qr.note[0] ? "; note: " : "", qr.note);
                        if (got.n && gcopy.c)
                            memcpy(got.c, gcopy.c, got.n * (size_t)got.ncols * sizeof(cell));
                        if (want.n && w.c)
                            memcpy(want.c, w.c, want.n * (size_t)want.ncols * sizeof(cell));
                    }
                    free(w.c);
                    free(gcopy.c);
                }
            }
        }
        if (kind >= 0) {
            res.kind[m] = kind;
            res.disagreements++;
            if (!quiet) {
                fprintf(f, "DISAGREEMENT (%s, %s): %s\n", mode, dg_kind_names[kind], msg);
                case_header(f, c, &pr);
                if (have) {
                    size_t from = at > 2 ? at - 2 : 0;
                    print_rows(f, "coproc", &got, from, 6);
                    print_rows(f, "SQLite", &want, from, 6);
                }
                print_data(f, &pr);
            }
        } else if (o->verbose > 1) {
            fprintf(f, "  %s: %zu rows agree%s%s\n", mode, got.n, qr.note[0] ? "; note: " : "",
                    qr.note);
        }
        rowset_free(&got);
        if (have)
            coproc_query_result_free(&qr);
        coproc_plan_free(p);
    }
    free_cp_tables(&ct);
done:
    rowset_free(&want);
    sqlite3_close(db);
    unprepare(&pr);
    if (out)
        *out = res;
    return res.disagreements;
}

/* ---------------------------------------------------------------- minimising */

static int still_fails(coproc_runtime *rt, const dg_case *c, int mi, int kind, const dg_options *o,
                       int *runs)
{
    dg_options q = *o;
    q.verbose = -1;
    dg_outcome r;
    ++*runs;
    dg_run_case(rt, c, &q, &r);
    int k = r.kind[mi];
    if (kind == DG_KIND_ROWS || kind == DG_KIND_VALUES || kind == DG_KIND_ORDER)
        return k == DG_KIND_ROWS || k == DG_KIND_VALUES || k == DG_KIND_ORDER;
    return k == kind;
}

int dg_minimize(coproc_runtime *rt, dg_case *c, int mode, const dg_options *o)
{
    static const dg_options defaults = {0, -1, 0, NULL, NULL};
    if (!o)
        o = &defaults;
    int runs = 0, mi = mode == DG_OPERATORS ? 1 : 0;
    dg_case best = *c;
    best.modes = (uint8_t)mode;
    dg_options q = *o;
    q.verbose = -1;
    dg_outcome r;
    runs++;
    dg_run_case(rt, &best, &q, &r);
    int kind = r.kind[mi];
    if (kind < 0)
        return runs;
    for (int bit = 0; bit < DG_MASK_BITS; bit++) {
        if (best.mask & (1u << bit))
            continue;
        dg_case t = best;
        t.mask |= 1u << bit;
        if (still_fails(rt, &t, mi, kind, o, &runs))
            best = t;
    }
    table full[DG_NTABLES];
    gen_tables(best.seed, full);
    for (int ti = 0; ti < DG_NTABLES; ti++) {
        size_t n = full[ti].rows;
        size_t off = best.row_off[ti] < n ? best.row_off[ti] : n;
        size_t len = n - off;
        if (best.row_cap[ti] && best.row_cap[ti] - 1 < len)
            len = best.row_cap[ti] - 1;
        int progress = 1, trims = 0;
        while (progress && len > 0) {
            progress = 0;
            size_t half = len / 2;
            size_t tries[4][2] = {{off, half}, {off + half, len - half}, {off + 1, len - 1},
                                  {off, len - 1}};
            for (int k = 0; k < 4 && !progress; k++) {
                if (k < 2 && (half == 0 || len < 4))
                    continue;
                if (k >= 2 && trims > 200)
                    break;
                dg_case t = best;
                t.row_off[ti] = (uint32_t)tries[k][0];
                t.row_cap[ti] = (uint32_t)tries[k][1] + 1;
                if (k >= 2)
                    trims++;
                if (still_fails(rt, &t, mi, kind, o, &runs)) {
                    best = t;
                    off = tries[k][0];
                    len = tries[k][1];
                    progress = 1;
                }
            }
        }
    }
    free_tables(full);
    /* a second pass over the mask: fewer rows may let more go */
    for (int bit = 0; bit < DG_MASK_BITS; bit++) {
        if (best.mask & (1u << bit))
            continue;
        dg_case t = best;
        t.mask |= 1u << bit;
        if (still_fails(rt, &t, mi, kind, o, &runs))
            best = t;
    }
    best.config = c->config;
    *c = best;
    return runs;
}
