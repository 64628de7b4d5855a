/* reduce_fold.c - the host side shared by coproc_reduce and
 * coproc_reduce_where: identities, partial sizes, folding partials. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/reduce_fold.h"

static int is_float(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }
static int is_signed(coproc_type t) { return t == COPROC_INT32 || t == COPROC_INT64; }

/* Size of one partial as the kernel writes it (see cl/reduce.cl). */
size_t coproc__reduce_partial_size(const coproc__device *dev, coproc_reduce_op op, coproc_type t)
{
    if (op == COPROC_REDUCE_SUM) /* without fp64: prelude.cl's coproc_fsum */
        return t == COPROC_FLOAT32 && !dev->info.has_fp64 ? 16 : 8;
    return coproc_type_size(t);
}

/* Identity value for an empty input. */
void coproc__reduce_identity(coproc_reduce_op op, coproc_type t, coproc_scalar *r)
{
    memset(r, 0, sizeof *r);
    if (op == COPROC_REDUCE_COUNT || op == COPROC_REDUCE_SUM) {
        r->type = is_float(t) ? COPROC_FLOAT64 : is_signed(t) ? COPROC_INT64 : COPROC_UINT64;
        if (op == COPROC_REDUCE_COUNT)
            r->type = COPROC_UINT64;
        return;
    }
    int mn = op == COPROC_REDUCE_MIN;
    switch (t) {
    case COPROC_INT32: r->type = COPROC_INT64; r->v.i64 = mn ? INT32_MAX : INT32_MIN; break;
    case COPROC_INT64: r->type = COPROC_INT64; r->v.i64 = mn ? INT64_MAX : INT64_MIN; break;
    case COPROC_UINT32: r->type = COPROC_UINT64; r->v.u64 = mn ? UINT32_MAX : 0; break;
    case COPROC_UINT64: r->type = COPROC_UINT64; r->v.u64 = mn ? UINT64_MAX : 0; break;
    default: r->type = COPROC_FLOAT64; r->v.f64 = mn ? INFINITY : -INFINITY; break;
    }
}

/* A float sum partial of a device without fp64 (cl/prelude.cl's coproc_fsum:
 * float hi, float lo, int64 count of 2^-149), as a double. When hi is not
 * finite (an infinite or NaN row), lo is NaN and hi alone is the answer. */
static double fsum_value(const unsigned char *p)
{
    float hi, lo;
    int64_t sub;
    memcpy(&hi, p, 4);
    memcpy(&lo, p + 4, 4);
    memcpy(&sub, p + 8, 8);
    if (!isfinite(hi))
        return hi;
    return (double)hi + (double)lo + ldexp((double)sub, -149);
}

/* Fold partial k (raw bytes as the kernel wrote them) into r. */
void coproc__reduce_fold(coproc_reduce_op op, coproc_type t, size_t psize, const unsigned char *p,
                 coproc_scalar *r, int first)
{
    if (op == COPROC_REDUCE_SUM) {
        if (is_float(t)) {
            double v;
            if (psize == 16) {
                v = fsum_value(p);
            } else {
                memcpy(&v, p, 8);
            }
            r->v.f64 += v;
        } else {
            uint64_t v;
            memcpy(&v, p, 8);
            r->v.u64 += v; /* two's complement: the same bits for signed sums */
        }
        return;
    }
    int mn = op == COPROC_REDUCE_MIN;
    switch (t) {
    case COPROC_INT32:
    case COPROC_INT64: {
        int64_t v;
        if (t == COPROC_INT32) { int32_t w; memcpy(&w, p, 4); v = w; } else memcpy(&v, p, 8);
        if (first || (mn ? v < r->v.i64 : v > r->v.i64))
            r->v.i64 = v;
        break;
    }
    case COPROC_UINT32:
    case COPROC_UINT64: {
        uint64_t v;
        if (t == COPROC_UINT32) { uint32_t w; memcpy(&w, p, 4); v = w; } else memcpy(&v, p, 8);
        if (first || (mn ? v < r->v.u64 : v > r->v.u64))
            r->v.u64 = v;
        break;
    }
    default: {
        double v;
        if (t == COPROC_FLOAT32) { float f; memcpy(&f, p, 4); v = f; } else memcpy(&v, p, 8);
        r->v.f64 = first ? v : (mn ? fmin(r->v.f64, v) : fmax(r->v.f64, v)); break; }
    }
}

void coproc__reduce_combine(coproc_reduce_op op, const coproc_scalar *part, coproc_scalar *acc,
                            int first)
{
    if (first) {
        *acc = *part;
        return;
    }
    uint64_t had = acc->count;
    acc->count += part->count;
    if (op == COPROC_REDUCE_SUM || op == COPROC_REDUCE_COUNT) {
        if (acc->type == COPROC_FLOAT64 || acc->type == COPROC_FLOAT32)
            acc->v.f64 += part->v.f64;
        else
            acc->v.u64 += part->v.u64; /* two's complement: signed sums wrap alike */
        return;
    }
    if (part->count == 0)
        return;
    if (had == 0) {
        acc->v = part->v;
        return;
    }
    int mn = op == COPROC_REDUCE_MIN;
    if (acc->type == COPROC_INT64) {
        if (mn ? part->v.i64 < acc->v.i64 : part->v.i64 > acc->v.i64)
            acc->v.i64 = part->v.i64;
    } else if (acc->type == COPROC_UINT64) {
        if (mn ? part->v.u64 < acc->v.u64 : part->v.u64 > acc->v.u64)
            acc->v.u64 = part->v.u64;
    } else { /* fmin/fmax drop NaN: a part of only NaN does not hide the others */
        acc->v.f64 = mn ? fmin(acc->v.f64, part->v.f64) : fmax(acc->v.f64, part->v.f64);
    }
}
