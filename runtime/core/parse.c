/* parse.c - strict number parsing (parse.h). Digits are read by hand rather
 * than with strtoull, which skips blanks, accepts a sign (and negates "-5"
 * into a huge unsigned value) and saturates on overflow without a word. */
#include "core/parse.h"

/* Leading decimal digits of s into *v; returns the first other character.
 * *overflow is set when the digits exceed UINT64_MAX. */
static const char *digits(const char *s, uint64_t *v, int *overflow)
{
    uint64_t x = 0;
    *overflow = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            *overflow = 1;
        else
            x = x * 10 + d;
    }
    *v = x;
    return s;
}

int coproc__parse_bytes(const char *s, uint64_t *out, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!s || !*s)
        return *why = "empty", -1;
    if (*s == '-')
        return *why = "negative", -1;
    if (*s < '0' || *s > '9')
        return *why = "not a number", -1;
    uint64_t v;
    int overflow;
    const char *end = digits(s, &v, &overflow);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end)
        return *why = "trailing characters", -1;
    if (overflow || (shift && v > (UINT64_MAX >> shift)))
        return *why = "does not fit 64 bits", -1;
    *out = v << shift;
    return 0;
}

int coproc__parse_int(const char *s, long long lo, long long hi, long long *out,
                      const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!s || !*s)
        return *why = "empty", -1;
    int neg = *s == '-' && lo < 0;
    const char *p = s + neg;
    if (*p < '0' || *p > '9')
        return *why = *s == '-' ? "out of range" : "not a number", -1;
    uint64_t v;
    int overflow;
    const char *end = digits(p, &v, &overflow);
    if (*end)
        return *why = "trailing characters", -1;
    /* Every long long in range has a magnitude below 2^63 + 1. */
    if (overflow || v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return *why = "out of range", -1;
    long long x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)v) : (long long)v;
    if (x < lo || x > hi)
        return *why = "out of range", -1;
    *out = x;
    return 0;
}

int coproc__parse_seconds(const char *s, double *out, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!s || !*s)
        return *why = "empty", -1;
    double v = 0, scale = 1;
    int seen = 0, point = 0;
    for (; *s; s++) {
        if (*s == '.' && !point) {
            point = 1;
            continue;
        }
        if (*s < '0' || *s > '9')
            break;
        seen = 1;
        if (point)
            v += (scale /= 10) * (*s - '0');
        else
            v = v * 10 + (*s - '0');
    }
    if (!seen)
        return *why = "not a number", -1;
    if (*s)
        return *why = "trailing characters", -1;
    if (v <= 0)
        return *why = "zero", -1;
    if (v > 1e9)
        return *why = "too large", -1;
    *out = v;
    return 0;
}
