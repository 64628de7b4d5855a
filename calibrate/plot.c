/* plot.c - a device's calibration curves as gnuplot data and script. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

static const char *const transfer_files[4] = {"h2d_pinned", "d2h_pinned", "h2d_pageable",
                                              "d2h_pageable"};
static const char *const transfer_titles[4] = {"host->device pinned", "device->host pinned",
                                               "host->device pageable", "device->host pageable"};

static const view_transfer *transfer_at(const profile_view *p, int i)
{
    const view_transfer *f[4] = {&p->h2d_pinned, &p->d2h_pinned, &p->h2d_pageable,
                                        &p->d2h_pageable};
    return f[i];
}

/* mkdir -p: dir after its missing parents; 0, or -1 with errno set. */
static int make_dirs(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        errno = ENOTDIR;
        return -1;
    }
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash && slash > parent) { /* the parent first ("/" and "." are there) */
        *slash = '\0';
        if (make_dirs(parent) != 0)
            return -1;
    }
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int fail(char *why, size_t size, const char *what, const char *path)
{
    snprintf(why, size, "%s %s: %s", what, path, strerror(errno));
    return -1;
}

static int write_transfer(const char *path, const profile_view *p, int i)
{
    const view_transfer *t = transfer_at(p, i);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# %s: measured points\n# bytes seconds GB/s\n", transfer_titles[i]);
    for (int j = 0; j < t->points; j++)
        fprintf(f, "%.0f %.9g %.6g\n", t->bytes[j], t->seconds[j],
                t->seconds[j] > 0 ? t->bytes[j] / t->seconds[j] / 1e9 : 0);
    fprintf(f, "\n\n# model\n# bytes predicted_seconds predicted_GB/s fitted_line_GB/s\n");
    double lo = t->points ? t->bytes[0] / 2 : 4096, hi = t->points ? t->bytes[t->points - 1] * 2
                                                                    : 512.0 * 1048576;
    for (int j = 0; j <= 64; j++) {
        double b = lo * pow(hi / lo, j / 64.0);
        double s = coproc_profile_transfer_time(p->profile, i % 2 == 0, i < 2, b);
        double line = t->latency_s + (t->bytes_per_s > 0 ? b / t->bytes_per_s : 0);
        fprintf(f, "%.0f %.9g %.6g %.6g\n", b, s, s > 0 ? b / s / 1e9 : 0,
                line > 0 ? b / line / 1e9 : 0);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* One line per calibration point; a blank line where the first feature falls,
 * so gnuplot draws each shape (selectivity, groups, ...) as its own line. */
static int write_operator(const char *path, const profile_view *p, coproc_op_kind k)
{
    const view_model *m = &p->ops[k];
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# %s:", coproc_op_kind_name(k));
    for (int j = 0; j < m->features; j++)
        fprintf(f, " %s,", coproc_report_feature_name(k, j));
    fprintf(f, " measured seconds, model seconds, shape\n");
    double prev = -1;
    int shape = 1;
    for (int i = 0; i < m->points; i++) {
        double x[COPROC_MODEL_MAX_FEATURES], y;
        coproc_report_point(m, i, x, &y);
        if (x[0] < prev) {
            fputc('\n', f);
            shape++;
        }
        prev = x[0];
        for (int j = 0; j < m->features; j++)
            fprintf(f, "%.9g ", x[j]);
        fprintf(f, "%.9g %.9g %d\n", y, m->fitted ? coproc_profile_predict(p->profile, k, x) : NAN,
                shape);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* A gnuplot single-quoted string: ' doubled. */
static void quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

static int write_script(const char *path, int index, const coproc_device_info *info,
                        const profile_view *p)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    char title[256];
    fprintf(f, "# coproc-calibrate curves of device %d; render with: gnuplot device%d.gnuplot\n"
               "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo noenhanced size 1000,650\n"
               "} else {\n"
               "    set terminal png noenhanced size 1000,650\n"
               "}\n"
               "set grid\nset key left top\nset logscale x 2\nset format x '%%.0b %%BB'\n",
            index, index);

    snprintf(title, sizeof title, "device %d: %s: transfer bandwidth against size", index,
             info->name);
    fprintf(f, "\nset output 'device%d-transfer.png'\nset title ", index);
    quoted(f, title);
    fprintf(f, "\nset xlabel 'bytes per transfer'\nset ylabel 'GB/s'\nset yrange [0:*]\nplot ");
    for (int i = 0; i < 4; i++) {
        char data[64];
        snprintf(data, sizeof data, "device%d-transfer-%s.dat", index, transfer_files[i]);
        fprintf(f, "%s'%s' index 0 using 1:3 with points pt 7 lc %d title '%s measured', \\\n"
                   "     '%s' index 1 using 1:3 with lines lw 2 lc %d title 'model', \\\n"
                   "     '%s' index 1 using 1:4 with lines dt 2 lc %d title 'fitted line'",
                i ? ", \\\n     " : "", data, i + 1, transfer_titles[i], data, i + 1, data,
                i + 1);
    }
    if (p->both_directions_bytes_per_s > 0)
        fprintf(f, ", \\\n     %.6g with lines dt 3 lc 8 title 'both directions at once (sum)'",
                p->both_directions_bytes_per_s / 1e9);
    fprintf(f, "\nunset yrange\n");

    fprintf(f, "\nset logscale xy\nset format x '%%.0s %%cB'\nset format y '%%.0s %%cs'\n"
               "set ylabel 'seconds'\n");
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        const view_model *m = &p->ops[k];
        if (m->points == 0)
            continue;
        const char *name = coproc_op_kind_name((coproc_op_kind)k);
        snprintf(title, sizeof title, "device %d: %s: %s, time against %s", index, info->name,
                 name, coproc_report_feature_name((coproc_op_kind)k, 0));
        fprintf(f, "\nset output 'device%d-op-%s.png'\nset title ", index, name);
        quoted(f, title);
        fprintf(f, "\nset xlabel '%s'\n"
                   "plot 'device%d-op-%s.dat' using 1:%d:%d with points pt 7 lc variable "
                   "title 'measured (a colour per shape)', \\\n"
                   "     '' using 1:%d:%d with linespoints pt 6 lc variable title 'model'\n",
                coproc_report_feature_name((coproc_op_kind)k, 0), index, name,
                m->features + 1, m->features + 3, m->features + 2, m->features + 3);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* Find gnuplot on PATH: 0 and its path in out, or -1. */
static int find_gnuplot(char *out, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        snprintf(out, size, "%.*s/gnuplot", (int)len, len ? path : ".");
        if (access(out, X_OK) == 0)
            return 0;
        path = end ? end + 1 : NULL;
    }
    return -1;
}

/* Run gnuplot on `script` inside dir; its output goes to stderr (or nowhere
 * when quiet), never to stdout, which may carry a JSON document. */
static int render(const char *gnuplot, const char *dir, const char *script, int quiet)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = quiet ? open("/dev/null", O_WRONLY) : -1;
        if (null >= 0)
            dup2(null, 2);
        dup2(2, 1);
        if (chdir(dir) == 0)
            execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int coproc_plot_profile(const char *dir, int index, const coproc_device_info *info,
                        const profile_view *p, int quiet, int *rendered, char *why,
                        size_t why_size)
{
    *rendered = 0;
    char path[4096];
    if (make_dirs(dir) != 0)
        return fail(why, why_size, "cannot create directory", dir);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/device%d-transfer-%s.dat", dir, index, transfer_files[i]);
        if (write_transfer(path, p, i) != 0)
            return fail(why, why_size, "cannot write", path);
    }
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        if (p->ops[k].points == 0)
            continue;
        snprintf(path, sizeof path, "%s/device%d-op-%s.dat", dir, index,
                 coproc_op_kind_name((coproc_op_kind)k));
        if (write_operator(path, p, (coproc_op_kind)k) != 0)
            return fail(why, why_size, "cannot write", path);
    }
    char script[64];
    snprintf(script, sizeof script, "device%d.gnuplot", index);
    snprintf(path, sizeof path, "%s/%s", dir, script);
    if (write_script(path, index, info, p) != 0)
        return fail(why, why_size, "cannot write", path);
    char gnuplot[4096];
    if (find_gnuplot(gnuplot, sizeof gnuplot) != 0)
        return 0;
    if (render(gnuplot, dir, script, quiet) != 0) {
        snprintf(why, why_size, "gnuplot failed on %s", path);
        return -1;
    }
    *rendered = 1;
    return 0;
}
