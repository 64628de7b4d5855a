/* model_check.c - coproc-model-check: how well the learned cost models predict.
 * For each device and operator kind it runs the operator on sizes drawn at
 * random between 2^17 and 2^22 rows (never the powers of two calibration
 * uses), 200 times; the models refit after 100 of them, and the relative error
 * of each prediction made before its run is reported (median and p90 over the
 * last 100), from coproc_model_stats. Exit 1 if an operator fails.
 * These are single runs, launch jitter and all; `coproc-calibrate --check`
 * scores the same models against the median of several runs per size (a
 * typical run, which is what a model predicts) and checks the transfer
 * predictions too (docs/performance.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include <jansson.h>

#include "coproc.h"

#define RUNS 200
#define MIN_LOG2 17.0
#define MAX_LOG2 22.0
#define MAX_ROWS (1u << 22)

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Run operator kind k once on the first n rows of the device columns. */
static coproc_status run_once(coproc_runtime *rt, coproc_op_kind k, int dev, const int32_t *a,
                              const uint32_t *keys, size_t n)
{
    coproc_column *ca = NULL, *ck = NULL, *out = NULL;
    coproc_status s = coproc_column_upload(rt, dev, COPROC_INT32, a, n, &ca);
    if (s == COPROC_OK)
        s = coproc_column_upload(rt, dev, COPROC_UINT32, keys, n, &ck);
    if (s != COPROC_OK)
        goto done;
    switch (k) {
    case COPROC_OP_REDUCE: { coproc_scalar r; s = coproc_reduce(rt, COPROC_REDUCE_SUM, ca, &r); break; }
    case COPROC_OP_SELECT: {
        coproc_filter f = {.first = {.col = ca, .cmp = COPROC_CMP_LT, .a = {.i64 = 0}}};
        s = coproc_select(rt, &f, &out, NULL);
        break; }
    case COPROC_OP_MAP: s = coproc_map_const(rt, COPROC_ARITH_MUL, ca, (coproc_value){.i64 = 3}, &out); break;
    case COPROC_OP_GATHER: {
        coproc_column *pos = NULL; /* keys mod n: random positions inside the column */
        s = coproc_map_const(rt, COPROC_ARITH_DIV, ck, (coproc_value){.u64 = (4294967296u + n - 1) / n}, &pos);
        if (s == COPROC_OK)
            s = coproc_gather(rt, ca, pos, &out);
        coproc_column_free(pos);
        break; }
    case COPROC_OP_SCAN: s = coproc_scan(rt, ca, 0, &out); break;
    case COPROC_OP_SORT: s = coproc_sort(rt, ck, NULL); break;
    case COPROC_OP_GROUP_BY: {
        coproc_column *g = NULL;
        s = coproc_map_const(rt, COPROC_ARITH_DIV, ck, (coproc_value){.u64 = 1u << 22}, &g);
        coproc_group_result r;
        if (s == COPROC_OK && (s = coproc_group_by(rt, g, ca, 0, &r)) == COPROC_OK)
            coproc_group_result_free(&r);
        coproc_column_free(g);
        break; }
    case COPROC_OP_HASH_JOIN: {
        coproc_join_result j;
        size_t nb = n / 16 ? n / 16 : 1;
        coproc_column *b = NULL;
        s = coproc_column_upload(rt, dev, COPROC_UINT32, keys, nb, &b);
        if (s == COPROC_OK && (s = coproc_hash_join(rt, b, ck, &j)) == COPROC_OK)
            coproc_join_result_free(&j);
        coproc_column_free(b);
        break; }
    default: break;
    }
done:
    coproc_column_free(out);
    coproc_column_free(ca);
    coproc_column_free(ck);
    return s;
}

int main(int argc, char **argv)
{
    int json = 0;
    const char *devices = NULL;
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"device", required_argument, NULL, 'd'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "jd:h", longopts, NULL)) != -1) {
        if (c == 'j') json = 1;
        else if (c == 'd') devices = optarg;
        else {
            fprintf(c == 'h' ? stdout : stderr, "usage: coproc-model-check [--json] [--device SPEC]\n");
            return c == 'h' ? 0 : EX_USAGE;
        }
    }
    coproc_options o;
    coproc_options_init(&o);
    o.devices = devices;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt); /* loads the profile, or calibrates quickly */
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-model-check: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return EX_UNAVAILABLE;
    }
    int32_t *a = malloc(MAX_ROWS * sizeof *a);
    uint32_t *keys = malloc(MAX_ROWS * sizeof *keys);
    if (!a || !keys)
        return EX_OSERR;
    uint64_t seed = 7;
    for (size_t i = 0; i < MAX_ROWS; i++) {
        uint64_t r = next(&seed);
        a[i] = (int32_t)(uint32_t)r;
        keys[i] = (uint32_t)(r >> 32);
    }
    static const coproc_op_kind kinds[] = {COPROC_OP_REDUCE, COPROC_OP_SELECT, COPROC_OP_MAP,
                                           COPROC_OP_GATHER, COPROC_OP_SCAN, COPROC_OP_SORT,
                                           COPROC_OP_GROUP_BY, COPROC_OP_HASH_JOIN};
    json_t *jdev = json_array();
    int failures = 0;
    FILE *out = json ? stderr : stdout;
    for (int d = 0; d < coproc_device_count(rt); d++) {
        coproc_device_info info;
        coproc_device_info_get(rt, d, &info);
        fprintf(out, "device %d: %s\n%-12s %8s %8s %10s %10s\n", d, info.name, "operator", "runs",
                "refits", "median err", "p90 err");
        json_t *jops = json_object();
        for (size_t ki = 0; ki < sizeof kinds / sizeof *kinds; ki++) {
            coproc_op_kind k = kinds[ki];
            for (int r = 0; r < RUNS; r++) {
                /* log-uniform sizes, never a power of two */
                size_t n = (size_t)exp2(MIN_LOG2 + (MAX_LOG2 - MIN_LOG2) * (double)(next(&seed) % 10000) / 10000.0);
                n |= 1;
                if ((s = run_once(rt, k, d, a, keys, n)) != COPROC_OK) {
                    fprintf(stderr, "%s: %s\n", coproc_op_kind_name(k), coproc_errmsg(rt));
                    failures++;
                    break;
                }
            }
            coproc_model_stats m = {.struct_size = sizeof m};
            coproc_model_stats_get(rt, d, k, &m);
            fprintf(out, "%-12s %8llu %8llu %9.1f%% %9.1f%%\n", coproc_op_kind_name(k),
                    (unsigned long long)m.observations, (unsigned long long)m.refits,
                    m.median_rel_error * 100, m.p90_rel_error * 100);
            json_t *j = json_object();
            json_object_set_new(j, "observations", json_integer((json_int_t)m.observations));
            json_object_set_new(j, "refits", json_integer((json_int_t)m.refits));
            json_object_set_new(j, "median_rel_error", json_real(m.median_rel_error));
            json_object_set_new(j, "p90_rel_error", json_real(m.p90_rel_error));
            json_object_set_new(jops, coproc_op_kind_name(k), j);
        }
        json_t *jd = json_object();
        json_object_set_new(jd, "name", json_string(info.name));
        json_object_set_new(jd, "operators", jops);
        json_array_append_new(jdev, jd);
    }
    if (json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string("coproc.model_check"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "devices", jdev);
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(jdev);
    }
    free(a);
    free(keys);
    coproc_close(rt);
    return failures ? 1 : 0;
}
