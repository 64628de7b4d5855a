/* main.c - the coproc-calibrate program: calibrates each selected device (or
 * loads its cached profile), prints the profiles as tables or JSON, plots
 * them; --list lists the devices. Exit codes follow sysexits.h. */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "coproc.h"
#include "coproc/inspect.h"
#include "check_ops.h"
#include "device_list.h"
#include "plot.h"
#include "profile_view.h"
#include "report.h"

#define CALIBRATION_SCHEMA "coproc.calibration"
#define CALIBRATION_VERSION 1

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coproc-calibrate [--quick] [--force] [--json] [--plot DIR] [--check]\n"
            "                        [--device SPEC] [--quiet] | --list [--json]\n"
            "\n"
            "Calibrates every selected device - host<->device transfers, memory bandwidth,\n"
            "compute, launch latency, build time and each operator's cost curve - or loads\n"
            "its profile from the cache directory when one is there, and prints it.\n"
            "\n"
            "  --quick         the quick pass (seconds): fewer sizes and repeats; a cached\n"
            "                  quick profile satisfies it, the default asks for a full one\n"
            "  --force         calibrate even when a valid profile is cached\n"
            "  --json          print a versioned JSON document on stdout instead of a table\n"
            "  --plot DIR      write the curves as data files and a gnuplot script into DIR\n"
            "                  (PNGs too when gnuplot is installed)\n"
            "  --check         then check the profile's predictions at sizes it was not\n"
            "                  fitted on: transfers (1 MiB up to the sweep's end, pinned\n"
            "                  and pageable) and operators (2^20..2^23 rows, then 2^14..2^20\n"
            "                  apart; a few minutes on PoCL)\n"
            "  --check-points FILE  with --check, every operator size checked, one a line\n"
            "  --list          list the OpenCL devices with their place in the machine\n"
            "  --device SPEC   devices to use: all, cpu, gpu, accelerator or indices \"0,2\"\n"
            "                  (COPROC_DEVICES overrides it)\n"
            "  --quiet         no progress or warnings on stderr\n"
            "  --help          this text\n"
            "  --version       the coproc version\n"
            "\n"
            "Profiles live in $COPROC_CACHE_DIR, else $XDG_CACHE_HOME/coproc, else\n"
            "~/.cache/coproc, under profiles/ (see docs/profile.md).\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void quiet_log(void *user, coproc_log_level level, const char *msg)
{
    (void)user; (void)level; (void)msg;
}

typedef struct progress_state {
    int device;
} progress_state;

/* One line on the terminal, rewritten in place. */
static void show_progress(void *user, const char *what)
{
    const progress_state *ps = user;
    fprintf(stderr, "\r\033[Kcoproc-calibrate: device %d: %s", ps->device, what);
    fflush(stderr);
}

/* Read p into *v (which takes it); 0, or -1 and *rc set when out of memory. */
static int view_of(coproc_profile *p, int i, int quiet, profile_view *v, int *rc)
{
    if (profile_view_init(v, p) == 0)
        return 0;
    if (!quiet)
        fprintf(stderr, "coproc-calibrate: device %d: out of host memory\n", i);
    *rc = EX_OSERR;
    return -1;
}

/* The profile of device i: the cached one if valid (and full when full is
 * wanted) unless force, else a new calibration, saved. *rc gets a sysexits
 * code when something fails; returns 0 when v holds a profile. */
static int device_profile(coproc_runtime *rt, int i, int full, int force, int quiet,
                          profile_view *v, char *source, size_t source_size, int *rc)
{
    if (!force) {
        coproc_profile *loaded = NULL;
        double t0 = now_s();
        coproc_status s = coproc_profile_load(rt, i, &loaded);
        double t = now_s() - t0;
        if (s == COPROC_OK && view_of(loaded, i, quiet, v, rc) != 0)
            return -1;
        if (s == COPROC_OK && (v->full || !full)) {
            snprintf(source, source_size, "loaded from the cache in %.1f ms", t * 1e3);
            return 0;
        }
        if (s == COPROC_OK)
            profile_view_free(v); /* a quick profile where a full one is wanted */
        if (s == COPROC_CORRUPT_PROFILE && !quiet)
            fprintf(stderr, "coproc-calibrate: device %d: ignoring its cached profile and "
                    "recalibrating: %s\n", i, coproc_errmsg(rt));
    }
    progress_state ps = {i};
    int show = !quiet && isatty(STDERR_FILENO);
    coproc_profile *p = NULL;
    coproc_status s = coproc_calibrate(rt, i, full, show ? show_progress : NULL, &ps, &p);
    if (show)
        fprintf(stderr, "\r\033[K");
    if (s != COPROC_OK) {
        if (!quiet)
            fprintf(stderr, "coproc-calibrate: device %d: calibration failed: %s: %s\n", i,
                    coproc_status_name(s), coproc_errmsg(rt));
        *rc = s == COPROC_DEVICE_LOST || s == COPROC_DRIVER_ERROR ? EX_UNAVAILABLE : EX_SOFTWARE;
        return -1;
    }
    snprintf(source, source_size, "calibrated now");
    if (coproc_profile_save_device(rt, i, p) != COPROC_OK) {
        if (!quiet)
            fprintf(stderr, "coproc-calibrate: device %d: profile not saved: %s\n", i,
                    coproc_errmsg(rt));
        *rc = EX_IOERR;
    }
    return view_of(p, i, quiet, v, rc);
}

/* The profiles of a set of devices that share hardware, one after another
 * (their timings would disturb each other); sets apart run in parallel. */
typedef struct profile_job {
    coproc_runtime *rt;
    int full, force, quiet;
    const int *devices; /* indices into the arrays below */
    int count;
    profile_view *views;
    int *have;          /* 1 where views[i] holds device i's profile */
    char (*source)[128];
    int *rc;            /* per device */
} profile_job;

static void *profile_job_run(void *arg)
{
    profile_job *j = arg;
    for (int k = 0; k < j->count; k++) {
        int i = j->devices[k];
        j->have[i] = device_profile(j->rt, i, j->full, j->force, j->quiet, &j->views[i],
                                    j->source[i], sizeof j->source[i], &j->rc[i]) == 0;
    }
    return NULL;
}

/* Every device's profile into views[]: devices grouped by the hardware they
 * share (coproc_device_info.same_hardware_as), each group in its own thread. */
static void all_profiles(coproc_runtime *rt, int n, int full, int force, int quiet,
                         profile_view *views, int *have, char (*source)[128], int *rc)
{
    int *group = calloc((size_t)n, sizeof *group), *order = calloc((size_t)n, sizeof *order);
    profile_job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    int *started = calloc((size_t)n, sizeof *started);
    int groups = 0;
    if (group && order && jobs && threads && started) {
        for (int i = 0; i < n; i++) { /* a device joins the group of one it shares with */
            coproc_device_info info;
            group[i] = -1;
            if (coproc_device_info_get(rt, i, &info) == COPROC_OK && info.same_hardware_as >= 0 &&
                info.same_hardware_as < i)
                group[i] = group[info.same_hardware_as];
            for (int j = 0; j < i && group[i] < 0; j++) { /* or one that names it */
                coproc_device_info other;
                if (coproc_device_info_get(rt, j, &other) == COPROC_OK &&
                    other.same_hardware_as == i)
                    group[i] = group[j];
            }
            if (group[i] < 0)
                group[i] = groups++;
        }
        int at = 0;
        for (int g = 0; g < groups; g++) {
            jobs[g] = (profile_job){rt, full, force, quiet, order + at, 0, views, have, source, rc};
            for (int i = 0; i < n; i++)
                if (group[i] == g)
                    order[at++] = i, jobs[g].count++;
        }
    } else { /* out of memory: one group, in order */
        groups = 0;
    }
    if (groups > 1) {
        for (int g = 0; g < groups; g++)
            started[g] = pthread_create(&threads[g], NULL, profile_job_run, &jobs[g]) == 0;
        for (int g = 0; g < groups; g++) {
            if (started[g])
                pthread_join(threads[g], NULL);
            else
                profile_job_run(&jobs[g]);
        }
    } else if (groups == 1) {
        profile_job_run(&jobs[0]);
    } else {
        for (int i = 0; i < n; i++)
            have[i] = device_profile(rt, i, full, force, quiet, &views[i], source[i],
                                     sizeof source[i], &rc[i]) == 0;
    }
    free(group);
    free(order);
    free(jobs);
    free(threads);
    free(started);
}

/* The 1-minute load average, or -1: the checks' figures mean little on a
 * machine that other work keeps busy, so they are printed with it. */
static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* --check: device i's transfer predictions against new measurements at sizes
 * not in the sweep, pinned then pageable; a table on `out` and a JSON object
 * (NULL on failure). Both directions together make each summary. */
static json_t *check_transfers(coproc_runtime *rt, int i, const coproc_profile *p, FILE *out)
{
    json_t *j = json_object();
    json_object_set_new(j, "device", json_integer(i));
    for (int pinned = 1; pinned >= 0; pinned--) {
        coproc_transfer_check r = {.struct_size = sizeof r};
        if (coproc_check_transfers(rt, i, p, pinned, 16, 1234 + (uint64_t)i, &r) != COPROC_OK) {
            fprintf(stderr, "coproc-calibrate: device %d: transfer check: %s\n", i,
                    coproc_errmsg(rt));
            json_decref(j);
            return NULL;
        }
        const char *kind = pinned ? "pinned" : "pageable";
        fprintf(out, "device %d: transfer check, %s, %d sizes each way from 1 MiB to the sweep's "
                "end, none swept;\ntypical (median) device time against the prediction\n"
                "%10s  %12s %12s %7s  %12s %12s %7s\n", i, kind, r.points, "MiB",
                "h2d us", "predicted", "error", "d2h us", "predicted", "error");
        double err[2 * COPROC_CHECK_MAX], interp[2 * COPROC_CHECK_MAX],
            live[2 * COPROC_CHECK_MAX];
        int n = 0;
        json_t *pts = json_array();
        int order[COPROC_CHECK_MAX];
        for (int k = 0; k < r.points; k++)
            order[k] = k;
        for (int a = 1; a < r.points; a++) /* by size, for reading */
            for (int b = a; b > 0 && r.bytes[0][order[b]] < r.bytes[0][order[b - 1]]; b--) {
                int t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        for (int o = 0; o < r.points; o++) {
            int k = order[o];
            double e[2];
            for (int d = 0; d < 2; d++) {
                e[d] = fabs(r.predicted[d][k] - r.measured[d][k]) / r.measured[d][k];
                interp[n] = fabs(r.interpolated[d][k] - r.measured[d][k]) / r.measured[d][k];
                live[n] = fabs(r.live[d][k] - r.measured[d][k]) / r.measured[d][k];
                err[n++] = e[d];
            }
            fprintf(out, "%10.2f  %12.1f %12.1f %6.1f%%  %12.1f %12.1f %6.1f%%\n",
                    r.bytes[0][k] / 1048576.0, r.measured[0][k] * 1e6, r.predicted[0][k] * 1e6,
                    e[0] * 100, r.measured[1][k] * 1e6, r.predicted[1][k] * 1e6, e[1] * 100);
            json_array_append_new(
                pts, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "bytes", r.bytes[0][k],
                               "h2d_seconds", r.measured[0][k], "h2d_predicted",
                               r.predicted[0][k], "h2d_live", r.live[0][k], "d2h_seconds",
                               r.measured[1][k], "d2h_predicted", r.predicted[1][k], "d2h_live",
                               r.live[1][k]));
        }
        double med = coproc_check_quantile(err, n, 0.5);
        double p90 = coproc_check_quantile(err, n, 0.9);
        double imed = coproc_check_quantile(interp, n, 0.5);
        double ip90 = coproc_check_quantile(interp, n, 0.9);
        double lmed = coproc_check_quantile(live, n, 0.5);
        double lp90 = coproc_check_quantile(live, n, 0.9);
        fprintf(out, "%s, both directions: median error %.1f %%, p90 %.1f %%\n"
                "  the sweep's sizes from 1 MiB measured again: now / at calibration %.3f h2d, "
                "%.3f d2h (drift);\n  predicted from those instead (interpolation alone): "
                "median error %.1f %%, p90 %.1f %%\n"
                "  the runtime's own prediction, its level learned from the sweep sizes' copies "
                "as they ran\n  (never from the sizes scored): median error %.1f %%, p90 %.1f %%; "
                "level at the end %.3f h2d, %.3f d2h\n\n",
                kind, med * 100, p90 * 100, r.drift[0], r.drift[1], imed * 100, ip90 * 100,
                lmed * 100, lp90 * 100, r.level[0], r.level[1]);
        json_object_set_new(
            j, kind,
            json_pack("{s:f, s:f, s:[f, f], s:f, s:f, s:f, s:f, s:[f, f], s:o}",
                      "median_rel_error", med, "p90_rel_error", p90, "drift", r.drift[0],
                      r.drift[1], "interpolation_median_rel_error", imed,
                      "interpolation_p90_rel_error", ip90, "live_median_rel_error", lmed,
                      "live_p90_rel_error", lp90, "level", r.level[0], r.level[1], "points",
                      pts));
    }
    return j;
}

static void print_device_list(coproc_runtime *rt, int json)
{
    if (json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string(COPROC_DEVICE_LIST_SCHEMA));
        json_object_set_new(doc, "schema_version", json_integer(COPROC_DEVICE_LIST_VERSION));
        json_object_set_new(doc, "coproc_version", json_string(coproc_version_string()));
        json_object_set_new(doc, "devices", coproc_device_list_json(rt));
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        coproc_print_device_table(stdout, rt);
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"list", no_argument, NULL, 'l'},     {"json", no_argument, NULL, 'j'},
        {"device", required_argument, NULL, 'd'}, {"quiet", no_argument, NULL, 'q'},
        {"quick", no_argument, NULL, 'k'},    {"force", no_argument, NULL, 'f'},
        {"plot", required_argument, NULL, 'p'}, {"check", no_argument, NULL, 'c'},
        {"check-points", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},     {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    int json = 0, quiet = 0, list = 0, quick = 0, force = 0, check = 0;
    const char *devices = NULL, *plot_dir = NULL, *points_path = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "ljd:qkfp:cP:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': list = 1; break;
        case 'j': json = 1; break;
        case 'd': devices = optarg; break;
        case 'q': quiet = 1; break;
        case 'k': quick = 1; break;
        case 'f': force = 1; break;
        case 'p': plot_dir = optarg; break;
        case 'c': check = 1; break;
        case 'P': points_path = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("coproc-calibrate %s\n", coproc_version_string()); return 0;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "coproc-calibrate: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return EX_USAGE;
    }
    if (plot_dir && !*plot_dir) {
        fprintf(stderr, "coproc-calibrate: --plot needs a directory\n");
        return EX_USAGE;
    }

    coproc_options opts;
    coproc_options_init(&opts);
    opts.devices = devices;
    opts.calibration = COPROC_CALIBRATION_OFF; /* this program decides what to calibrate */
    if (quiet)
        opts.log = quiet_log;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&opts, &rt);
    if (s != COPROC_OK) {
        if (!quiet)
            fprintf(stderr, "coproc-calibrate: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE || s == COPROC_DRIVER_ERROR
                   ? EX_UNAVAILABLE
                   : s == COPROC_INVALID_ARGUMENT ? EX_USAGE : EX_SOFTWARE;
    }
    if (list) {
        print_device_list(rt, json);
        coproc_close(rt);
        return 0;
    }

    int rc = 0;
    int n = coproc_device_count(rt);
    size_t slots = n > 0 ? (size_t)n : 1;
    profile_view *views = calloc(slots, sizeof *views);
    int *have = calloc(slots, sizeof *have), *rcs = calloc(slots, sizeof *rcs);
    char (*sources)[128] = calloc(slots, sizeof *sources);
    json_t *docs = json_array(), *checks = check ? json_array() : NULL;
    if (!views || !have || !rcs || !sources || !docs) {
        fprintf(stderr, "coproc-calibrate: out of memory\n");
        free(views);
        free(have);
        free(rcs);
        free(sources);
        json_decref(docs);
        coproc_close(rt);
        return EX_OSERR;
    }
    all_profiles(rt, n, !quick, force, quiet, views, have, sources, rcs);
    for (int i = 0; i < n; i++) {
        if (rcs[i])
            rc = rcs[i];
        if (!have[i])
            continue;
        profile_view *p = &views[i];
        const char *source = sources[i];
        coproc_device_info info;
        coproc_device_info_get(rt, i, &info);
        if (json)
            json_array_append(docs, p->doc);
        else
            coproc_print_profile(stdout, i, &info, p, source);
        if (plot_dir) {
            char why[4200];
            int rendered = 0;
            if (coproc_plot_profile(plot_dir, i, &info, p, quiet, &rendered, why,
                                    sizeof why) != 0) {
                if (!quiet)
                    fprintf(stderr, "coproc-calibrate: --plot: %s\n", why);
                rc = EX_IOERR;
            } else if (!quiet) {
                fprintf(stderr, "coproc-calibrate: device %d: curves in %s/device%d.gnuplot%s\n",
                        i, plot_dir, i,
                        rendered ? " and its PNGs" : " (install gnuplot to render the PNGs)");
            }
        }
        if (check) {
            FILE *out = json ? stderr : stdout;
            double load0 = load_average();
            /* the runtime predicts from this profile: its transfer level
             * (learned during the transfer check) and its operator models */
            json_t *r = NULL;
            if (coproc_profile_use(rt, i, p->profile) != COPROC_OK)
                fprintf(stderr, "coproc-calibrate: device %d: %s\n", i, coproc_errmsg(rt));
            else
                r = check_transfers(rt, i, p->profile, out);
            FILE *points = points_path ? fopen(points_path, i ? "a" : "w") : NULL;
            if (points_path && !points)
                perror(points_path);
            /* the headline: columns of 4-32 MiB, where moving work to a device
             * is worth deciding; then the small sizes, launch-bound, apart */
            json_t *ops = r ? coproc_check_operators(rt, i, 20, 23, out, points) : NULL;
            json_t *small = ops ? coproc_check_operators(rt, i, 14, 20, out, points) : NULL;
            if (points)
                fclose(points);
            if (small)
                json_object_set_new(r, "operators_small", small);
            else if (ops) {
                json_decref(ops);
                ops = NULL;
            }
            double load1 = load_average();
            fprintf(out, "load average (1 min) before the check %.2f, after %.2f, on %ld "
                    "cores\n", load0, load1, sysconf(_SC_NPROCESSORS_ONLN));
            if (ops)
                json_object_set_new(r, "operators", ops);
            if (r) {
                json_object_set_new(r, "load_average_before", json_real(load0));
                json_object_set_new(r, "load_average_after", json_real(load1));
            }
            if (r && ops)
                json_array_append_new(checks, r);
            else {
                json_decref(r);
                rc = EX_SOFTWARE;
            }
        }
        fflush(stdout);
        profile_view_free(p);
    }
    if (json) {
        json_t *doc = json_pack("{s:s, s:i, s:s, s:o}", "schema", CALIBRATION_SCHEMA,
                                "schema_version", CALIBRATION_VERSION, "coproc_version",
                                coproc_version_string(), "devices", docs);
        if (checks)
            json_object_set_new(doc, "check", checks);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(docs);
        json_decref(checks);
    }
    free(views);
    free(have);
    free(rcs);
    free(sources);
    coproc_close(rt);
    return rc;
}
