/* profile_view.c - a profile's JSON document read into plain fields. */
#include "profile_view.h"

#include <stdlib.h>
#include <string.h>

/* obj's member key as a number; 0 where there is none (the document writes
 * 0 for what was not measured). */
static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static void read_transfer(const json_t *transfer, const char *name, view_transfer *t)
{
    const json_t *f = json_object_get(transfer, name);
    const json_t *pts = json_object_get(f, "points");
    t->latency_s = num(f, "latency_s");
    t->bytes_per_s = num(f, "bytes_per_s");
    size_t n = json_array_size(pts);
    t->points = n < VIEW_SWEEP_MAX ? (int)n : VIEW_SWEEP_MAX;
    for (int i = 0; i < t->points; i++) {
        const json_t *pt = json_array_get(pts, (size_t)i);
        t->bytes[i] = json_number_value(json_array_get(pt, 0));
        t->seconds[i] = json_number_value(json_array_get(pt, 1));
    }
}

static void read_model(const json_t *m, view_model *v)
{
    const json_t *coef = json_object_get(m, "coef"), *pts = json_object_get(m, "points");
    int k = (int)json_integer_value(json_object_get(m, "features"));
    v->features = k < 1 ? 1 : k > COPROC_MODEL_MAX_FEATURES ? COPROC_MODEL_MAX_FEATURES : k;
    v->fitted = json_is_array(coef);
    for (size_t j = 0; j < json_array_size(coef) && j <= COPROC_MODEL_MAX_FEATURES; j++)
        v->coef[j] = json_number_value(json_array_get(coef, j));
    v->knot = num(m, "knot");
    size_t n = json_array_size(pts);
    v->points = n < VIEW_POINTS_MAX ? (int)n : VIEW_POINTS_MAX;
    for (int i = 0; i < v->points; i++) {
        const json_t *pt = json_array_get(pts, (size_t)i); /* [x..., seconds] */
        for (int j = 0; j < v->features; j++)
            v->x[i][j] = json_number_value(json_array_get(pt, (size_t)j));
        v->y[i] = json_number_value(json_array_get(pt, (size_t)v->features));
    }
}

int profile_view_init(profile_view *v, coproc_profile *p)
{
    memset(v, 0, sizeof *v);
    char *text = coproc_profile_json(p);
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!doc) {
        coproc_profile_free(p);
        return -1;
    }
    v->profile = p;
    v->doc = doc;
    v->full = json_is_true(json_object_get(doc, "full"));
    v->created_unix = num(doc, "created_unix");
    v->calibration_seconds = num(doc, "calibration_seconds");
    const json_t *transfer = json_object_get(doc, "transfer");
    read_transfer(transfer, "h2d_pinned", &v->h2d_pinned);
    read_transfer(transfer, "d2h_pinned", &v->d2h_pinned);
    read_transfer(transfer, "h2d_pageable", &v->h2d_pageable);
    read_transfer(transfer, "d2h_pageable", &v->d2h_pageable);
    v->both_directions_bytes_per_s = num(doc, "both_directions_bytes_per_s");
    v->mem_copy_bytes_per_s = num(json_object_get(doc, "memory"), "copy_bytes_per_s");
    v->mem_read_bytes_per_s = num(json_object_get(doc, "memory"), "read_bytes_per_s");
    v->int_ops_per_s = num(json_object_get(doc, "compute"), "int_ops_per_s");
    v->float_ops_per_s = num(json_object_get(doc, "compute"), "float_ops_per_s");
    v->launch_latency_s = num(doc, "launch_latency_s");
    v->build_source_s = num(json_object_get(doc, "build"), "source_s");
    v->build_cached_s = num(json_object_get(doc, "build"), "cached_s");
    const json_t *ops = json_object_get(doc, "operators");
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
        read_model(json_object_get(ops, coproc_op_kind_name((coproc_op_kind)k)), &v->ops[k]);
    return 0;
}

void profile_view_free(profile_view *v)
{
    coproc_profile_free(v->profile);
    json_decref(v->doc);
    memset(v, 0, sizeof *v);
}
