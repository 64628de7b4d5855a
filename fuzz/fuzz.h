/* fuzz.h - what the fuzz targets (fuzz_*.c) share: the entry points libFuzzer
 * calls, one runtime per process, a private directory, and a reader that takes
 * values off the front of the input. Each target is built twice: with
 * libFuzzer (clang, COPROC_FUZZ, tests/fuzz.sh) and with replay.c, a main()
 * that replays files (the normal build's replay_fuzz_* tests). */
#ifndef COPROC_FUZZ_H
#define COPROC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "coproc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Open the runtime once (from LLVMFuzzerInitialize): PoCL or whatever
 * COPROC_DEVICES names, no calibration, the cache in fuzz_dir(), the log
 * silenced. NULL when there is no device: a target that needs one then sets
 * fuzz_skipped and does nothing (the replay exits 77, skipped). */
coproc_runtime *fuzz_runtime(void);
extern int fuzz_skipped;

/* A private directory, made once and removed at exit (holds the cache). */
const char *fuzz_dir(void);

/* Stop the process with a message: a property the target checks failed. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The input, consumed from the front; past its end every value is 0. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;

uint8_t fuzz_u8(fuzz_in *in);
uint32_t fuzz_u32(fuzz_in *in);
uint64_t fuzz_u64(fuzz_in *in);
/* Up to max bytes: the first byte says how many; *len gets what was taken. */
const uint8_t *fuzz_bytes(fuzz_in *in, size_t max, size_t *len);

#endif
