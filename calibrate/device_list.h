/* device_list.h - the device listing of coproc-calibrate: a table or JSON. */
#ifndef COPROC_CALIBRATE_DEVICE_LIST_H
#define COPROC_CALIBRATE_DEVICE_LIST_H

#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

#define COPROC_DEVICE_LIST_SCHEMA "coproc.devices"
#define COPROC_DEVICE_LIST_VERSION 1

/* Print the runtime's devices as a readable table. */
void coproc_print_device_table(FILE *f, const coproc_runtime *rt);

/* The devices as a JSON array (new reference). */
json_t *coproc_device_list_json(const coproc_runtime *rt);

#endif
