/* strings.c - dictionary-encoded string columns, the public calls (coproc.h,
 * "strings"; the dictionaries themselves: dictionary.h). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/runtime.h"
#include "data/column.h"
#include "data/dictionary.h"

coproc_status coproc_column_encode_strings(coproc_runtime *rt, int device,
                                           const char *const *values, size_t n,
                                           coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out || (n && !values))
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_column_encode_strings: %s is NULL",
                            out ? "values" : "out");
    *out = NULL;
    int32_t *codes = malloc((n ? n : 1) * sizeof *codes);
    if (!codes)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY,
                            "coproc_column_encode_strings: %zu codes", n);
    const char *why = NULL;
    coproc__dict *d = coproc__dict_encode(n, values, codes, &why);
    if (!d) {
        free(codes);
        return coproc__fail(rt, strcmp(why, "out of host memory") == 0 ? COPROC_HOST_OUT_OF_MEMORY
                                                                        : COPROC_NULL_POINTER,
                            "coproc_column_encode_strings: %s", why);
    }
    coproc_status s;
    if (device >= 0) {
        s = coproc_column_upload(rt, device, COPROC_INT32, codes, n, out);
    } else {
        s = coproc_column_host_alloc(rt, COPROC_INT32, n, out);
        if (s == COPROC_OK && n)
            memcpy(coproc_column_host_data(*out), codes, n * sizeof *codes);
    }
    free(codes);
    if (s != COPROC_OK) {
        coproc__dict_unref(d);
        return s;
    }
    (*out)->dict = d;
    return COPROC_OK;
}

coproc_status coproc_column_set_dictionary(coproc_column *codes, int n,
                                           const char *const *strings)
{
    if (!codes)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = codes->rt;
    if (codes->type != COPROC_INT32)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE,
                            "coproc_column_set_dictionary: codes are INT32, not %s",
                            coproc_type_name(codes->type));
    if (n < 0 || (n > 0 && !strings))
        return coproc__fail(rt, n < 0 ? COPROC_INVALID_ARGUMENT : COPROC_NULL_POINTER,
                            "coproc_column_set_dictionary: %d strings%s", n,
                            n > 0 ? " at NULL" : "");
    /* Every valid row's code must name a string: a code beyond the
     * dictionary would make a predicate's answer, or a result's string,
     * wrong. A null row's code is never read as a string. */
    if (codes->length) {
        coproc_scalar lo = {.count = 0}, hi = {.count = 0};
        coproc_status s;
        if (codes->dev) { /* min and max skip the nulls; count 0: every row null */
            if ((s = coproc_reduce(rt, COPROC_REDUCE_MIN, codes, &lo)) != COPROC_OK ||
                (s = coproc_reduce(rt, COPROC_REDUCE_MAX, codes, &hi)) != COPROC_OK)
                return s;
        } else {
            const int32_t *c = codes->host;
            const uint32_t *valid = codes->validity ? codes->validity->host : NULL;
            for (size_t i = 0; i < codes->length; i++) {
                if (valid && !(valid[i / 32] >> (i % 32) & 1u))
                    continue;
                lo.v.i64 = !lo.count || c[i] < lo.v.i64 ? c[i] : lo.v.i64;
                hi.v.i64 = !hi.count || c[i] > hi.v.i64 ? c[i] : hi.v.i64;
                lo.count++, hi.count++;
            }
        }
        if (lo.count && (lo.v.i64 < 0 || hi.v.i64 >= n))
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                "coproc_column_set_dictionary: code %lld is not one of the %d "
                                "strings", (long long)(lo.v.i64 < 0 ? lo.v.i64 : hi.v.i64), n);
    }
    const char *why = NULL;
    coproc__dict *d = coproc__dict_new(n, strings, NULL, &why);
    if (!d)
        return coproc__fail(rt, strcmp(why, "out of host memory") == 0 ? COPROC_HOST_OUT_OF_MEMORY
                                                                       : COPROC_INVALID_ARGUMENT,
                            "coproc_column_set_dictionary: %s", why);
    coproc__dict_unref(codes->dict);
    codes->dict = d;
    return COPROC_OK;
}

int coproc_column_dictionary_size(const coproc_column *col)
{
    return col && col->dict ? col->dict->n : -1;
}

const char *coproc_column_dictionary_value(const coproc_column *col, int code)
{
    return col ? coproc__dict_value(col->dict, code, NULL) : NULL;
}
