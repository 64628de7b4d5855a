/* plot.h - coproc-calibrate --plot DIR: a device's curves as data files and a
 * gnuplot script, rendered to PNG when gnuplot is installed. */
#ifndef COPROC_CALIBRATE_PLOT_H
#define COPROC_CALIBRATE_PLOT_H

#include <stddef.h>

#include "coproc.h"
#include "profile_view.h"

/*
 * Write into dir (created if missing), for device `index`:
 *   device<i>-transfer-<h2d|d2h>_<pinned|pageable>.dat  measured points (index 0:
 *       bytes, seconds, GB/s) and the model (index 1: bytes, predicted seconds,
 *       predicted GB/s, GB/s of the fitted line)
 *   device<i>-op-<kind>.dat  per calibration point: features..., measured s, model s,
 *                            shape number (a blank line between shapes)
 *   device<i>.gnuplot        the script; renders device<i>-transfer.png and
 *                            device<i>-op-<kind>.png
 * and run gnuplot on the script when it is on PATH (*rendered = 1 then).
 * Returns 0, or -1 with the reason in why when a file cannot be written or
 * gnuplot fails.
 */
int coproc_plot_profile(const char *dir, int index, const coproc_device_info *info,
                        const profile_view *p, int quiet, int *rendered, char *why,
                        size_t why_size);

#endif
