/* main.c - the coproc-calibrate program: lists devices (calibration passes
 * are added by later work; see docs/). Exit codes follow sysexits.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "coproc.h"
#include "device_list.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coproc-calibrate [--list] [--json] [--device SPEC] [--quiet]\n"
            "\n"
            "  --list          list the OpenCL devices with their place in the machine\n"
            "                  (the default action)\n"
            "  --json          print a versioned JSON document on stdout instead of a table\n"
            "  --device SPEC   devices to use: all, cpu, gpu, accelerator or indices \"0,2\"\n"
            "                  (COPROC_DEVICES overrides it)\n"
            "  --quiet         no progress or warnings on stderr\n"
            "  --help          this text\n"
            "  --version       the coproc version\n");
}

static void quiet_log(void *user, coproc_log_level level, const char *msg)
{
    (void)user; (void)level; (void)msg;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"list", no_argument, NULL, 'l'},     {"json", no_argument, NULL, 'j'},
        {"device", required_argument, NULL, 'd'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},     {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    int json = 0, quiet = 0;
    const char *devices = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "ljd:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': break;
        case 'j': json = 1; break;
        case 'd': devices = optarg; break;
        case 'q': quiet = 1; break;
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

    coproc_options opts;
    coproc_options_init(&opts);
    opts.devices = devices;
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
    coproc_close(rt);
    return 0;
}
