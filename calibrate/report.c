/* report.c - one device's profile as a readable table with units. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const feature_names[COPROC_OP_KIND_COUNT][COPROC_MODEL_MAX_FEATURES] = {
    [COPROC_OP_REDUCE] = {"input bytes"},
    [COPROC_OP_SELECT] = {"input bytes", "output rows"},
    [COPROC_OP_MAP] = {"input bytes", "output bytes"},
    [COPROC_OP_GATHER] = {"input bytes", "output bytes"},
    [COPROC_OP_SCAN] = {"input bytes", "output bytes"},
    [COPROC_OP_GROUP_BY] = {"input bytes", "groups"},
    [COPROC_OP_SORT] = {"bytes moved", "rows*log2(rows)"},
    [COPROC_OP_HASH_JOIN] = {"input bytes", "output pairs"},
    [COPROC_OP_MERGE_JOIN] = {"input bytes", "output pairs"},
    [COPROC_OP_SEMI_JOIN] = {"input bytes", "output rows"},
};

const char *coproc_report_feature_name(coproc_op_kind k, int j)
{
    if ((unsigned)k >= COPROC_OP_KIND_COUNT || j < 0 || j >= COPROC_MODEL_MAX_FEATURES ||
        !feature_names[k][j])
        return "feature";
    return feature_names[k][j];
}

int coproc_report_feature_is_bytes(coproc_op_kind k, int j)
{
    return strstr(coproc_report_feature_name(k, j), "bytes") != NULL;
}

void coproc_report_point(const view_model *m, int i, double *x, double *seconds)
{
    for (int j = 0; j < COPROC_MODEL_MAX_FEATURES; j++)
        x[j] = m->x[i][j];
    *seconds = m->y[i];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void coproc_report_fit_error(const profile_view *p, coproc_op_kind k, double *median,
                             double *p90)
{
    const view_model *m = &p->ops[k];
    *median = *p90 = -1;
    double err[VIEW_POINTS_MAX];
    int n = 0;
    for (int i = 0; m->fitted && i < m->points; i++) {
        double x[COPROC_MODEL_MAX_FEATURES], y;
        coproc_report_point(m, i, x, &y);
        double pred = coproc_profile_predict(p->profile, k, x);
        if (y > 0 && pred >= 0)
            err[n++] = fabs(pred - y) / y;
    }
    if (n == 0)
        return;
    qsort(err, (size_t)n, sizeof *err, cmp_double);
    *median = n % 2 ? err[n / 2] : 0.5 * (err[n / 2 - 1] + err[n / 2]);
    *p90 = err[(int)ceil(0.9 * n) - 1];
}

/* "850 ns", "12.3 µs", "4.56 ms", "1.23 s" */
static const char *fmt_time(double s, char *buf, size_t size)
{
    if (!(s > 0))
        snprintf(buf, size, "-");
    else if (s < 1e-6)
        snprintf(buf, size, "%.0f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, size, "%.1f µs", s * 1e6);
    else if (s < 1)
        snprintf(buf, size, "%.2f ms", s * 1e3);
    else
        snprintf(buf, size, "%.2f s", s);
    return buf;
}

/* Decimal units, as bandwidths are quoted: "12.34 GB/s", "2.91 TB/s". */
static const char *fmt_rate(double v, const char *unit, char *buf, size_t size)
{
    if (!(v > 0))
        snprintf(buf, size, "-");
    else if (v >= 1e12)
        snprintf(buf, size, "%.2f T%s", v / 1e12, unit);
    else if (v >= 1e9)
        snprintf(buf, size, "%.2f G%s", v / 1e9, unit);
    else
        snprintf(buf, size, "%.2f M%s", v / 1e6, unit);
    return buf;
}

static void fmt_size(double bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, "%g %s", bytes, units[u]);
}

/* printf width for s so that it fills `width` columns: UTF-8 continuation
 * bytes ("µ" is two bytes) take no column. */
static int cols(const char *s, int width)
{
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) == 0x80)
            width++;
    return width;
}

static void print_transfer(FILE *f, const char *name, const view_transfer *t)
{
    char a[32], b[32], c[32], d[32];
    if (t->points > 0) {
        int last = t->points - 1;
        fmt_size(t->bytes[last], d, sizeof d);
        double rate = t->seconds[last] > 0 ? t->bytes[last] / t->seconds[last] : 0;
        fmt_time(t->latency_s, a, sizeof a);
        fprintf(f, "  %-18s %*s %12s   %10s at %s\n", name, cols(a, 10), a,
                fmt_rate(t->bytes_per_s, "B/s", b, sizeof b), fmt_rate(rate, "B/s", c, sizeof c),
                d);
    } else {
        fmt_time(t->latency_s, a, sizeof a);
        fprintf(f, "  %-18s %*s %12s\n", name, cols(a, 10), a,
                fmt_rate(t->bytes_per_s, "B/s", b, sizeof b));
    }
}

/* "12.3 µs + input bytes / 10.2 GB/s + 2.1 ns x output rows" */
static void model_formula(coproc_op_kind k, const view_model *m, char *buf, size_t size)
{
    char t[32];
    size_t o = (size_t)snprintf(buf, size, "%s", fmt_time(m->coef[0], t, sizeof t));
    if (!(m->coef[0] > 0))
        o = (size_t)snprintf(buf, size, "0");
    for (int j = 0; j < m->features && o < size; j++) {
        double c = m->coef[j + 1];
        if (!(c > 0))
            continue; /* a dropped feature */
        const char *name = coproc_report_feature_name(k, j);
        if (coproc_report_feature_is_bytes(k, j))
            o += (size_t)snprintf(buf + o, size - o, " + %s / %s", name,
                                  fmt_rate(1.0 / c, "B/s", t, sizeof t));
        else
            o += (size_t)snprintf(buf + o, size - o, " + %s x %s", fmt_time(c, t, sizeof t),
                                  name);
    }
    double c = m->coef[m->features + 1];
    if (m->knot > 0 && c > 0 && o < size) { /* the bend (model.h) */
        char u[32];
        if (coproc_report_feature_is_bytes(k, 0))
            snprintf(buf + o, size - o, " + beyond %.3g MB, %s / %s", m->knot / 1e6,
                     coproc_report_feature_name(k, 0), fmt_rate(1.0 / c, "B/s", u, sizeof u));
        else
            snprintf(buf + o, size - o, " + beyond %.3g, %s x %s", m->knot,
                     fmt_time(c, u, sizeof u), coproc_report_feature_name(k, 0));
    }
}

void coproc_print_profile(FILE *f, int index, const coproc_device_info *info,
                          const profile_view *p, const char *source)
{
    char a[32], b[32], when[32] = "?";
    time_t created = (time_t)p->created_unix;
    struct tm tm;
    if (localtime_r(&created, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    fprintf(f, "device %d: %s (%s, %s)\n", index, info->name,
            coproc_device_type_name(info->type), info->platform);
    fprintf(f, "  profile: %s calibration of %s taking %s, %s\n", p->full ? "full" : "quick",
            when, fmt_time(p->calibration_seconds, a, sizeof a), source);

    fprintf(f, "\n  %-18s %10s %12s   %s\n", "transfer", "latency", "bandwidth",
            "measured at the largest size");
    print_transfer(f, "host->dev pinned", &p->h2d_pinned);
    print_transfer(f, "dev->host pinned", &p->d2h_pinned);
    print_transfer(f, "host->dev pageable", &p->h2d_pageable);
    print_transfer(f, "dev->host pageable", &p->d2h_pageable);
    fprintf(f, "  %-18s %10s %12s   (pinned, one queue each way, sum of both)\n",
            "both directions", "", fmt_rate(p->both_directions_bytes_per_s, "B/s", a, sizeof a));
    fprintf(f, "  (latency, bandwidth: the line t = latency + bytes / bandwidth fitted for "
               "relative error;\n   predictions inside the sweep interpolate the measured "
               "points)\n");

    fprintf(f, "\n  %-22s %s (bytes read + written)\n", "memory copy",
            fmt_rate(p->mem_copy_bytes_per_s, "B/s", a, sizeof a));
    fprintf(f, "  %-22s %s\n", "memory read",
            fmt_rate(p->mem_read_bytes_per_s, "B/s", a, sizeof a));
    fprintf(f, "  %-22s %s (32-bit multiply-adds)\n", "compute int32",
            fmt_rate(p->int_ops_per_s, "op/s", a, sizeof a));
    fprintf(f, "  %-22s %s (an FMA is 2 flops)\n", "compute fp32",
            fmt_rate(p->float_ops_per_s, "flop/s", a, sizeof a));
    fprintf(f, "  %-22s %s (empty kernel, enqueue + finish, median)\n", "launch latency",
            fmt_time(p->launch_latency_s, a, sizeof a));
    fprintf(f, "  %-22s %s from source, %s cached (coproc's binary cache, or the driver's own where it keeps builds)\n", "program build",
            fmt_time(p->build_source_s, a, sizeof a), fmt_time(p->build_cached_s, b, sizeof b));

    fprintf(f, "\n  %-10s %6s %17s  %s\n", "operator", "points", "fit error med/p90",
            "model: seconds =");
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        const view_model *m = &p->ops[k];
        char formula[256] = "not fitted", err[32] = "-";
        if (m->fitted)
            model_formula((coproc_op_kind)k, m, formula, sizeof formula);
        double med, p90;
        coproc_report_fit_error(p, (coproc_op_kind)k, &med, &p90);
        if (med >= 0)
            snprintf(err, sizeof err, "%.1f %% / %.1f %%", med * 100, p90 * 100);
        fprintf(f, "  %-10s %6d %17s  %s\n", coproc_op_kind_name((coproc_op_kind)k),
                m->points, err, formula);
    }
    fputc('\n', f);
}
