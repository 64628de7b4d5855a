/* parse.h - strict parsing of the numbers people write in environment
 * variables and device selections (COPROC_BUDGET, COPROC_POLICY=fixed:N,
 * sim:...:mem=). Nothing is guessed: a value either parses whole or is
 * refused with the reason, and the caller keeps its default. */
#ifndef COPROC_PARSE_H
#define COPROC_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * "123", "64K", "512M", "16G", "1T" (suffixes in either case, powers of 1024)
 * -> *out bytes. Only decimal digits and one optional suffix: no sign, no
 * blanks, no fraction, nothing after the suffix. Returns 0, or -1 with *why
 * (a static string: "empty", "not a number", "negative", "does not fit 64
 * bits", "trailing characters") and *out untouched.
 */
int coproc__parse_bytes(const char *s, uint64_t *out, const char **why);

/*
 * A decimal integer in [lo, hi] -> *out (an optional leading '-' only when
 * lo < 0). Returns 0, or -1 with *why ("empty", "not a number", "out of
 * range", "trailing characters") and *out untouched.
 */
int coproc__parse_int(const char *s, long long lo, long long hi, long long *out,
                      const char **why);

/*
 * Seconds as a plain decimal number, "10", "0.5", ".25" -> *out (> 0). No
 * sign, exponent, blank or unit. Returns 0, or -1 with *why ("empty", "not a
 * number", "zero", "too large", "trailing characters") and *out untouched.
 */
int coproc__parse_seconds(const char *s, double *out, const char **why);

#endif
