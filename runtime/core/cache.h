/* cache.h - the on-disk cache directory: where it is, hashing, atomic files. */
#ifndef COPROC_CACHE_H
#define COPROC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "coproc.h"

/* 64-bit FNV-1a over data, continuing from h (start with COPROC__FNV_SEED). */
#define COPROC__FNV_SEED 0xcbf29ce484222325ULL
uint64_t coproc__hash(uint64_t h, const void *data, size_t len);
uint64_t coproc__hash_str(uint64_t h, const char *s);

/*
 * Resolve the cache directory: `explicit_dir` if non-NULL, else
 * $COPROC_CACHE_DIR (unless skip_env: the option outranks it),
 * $XDG_CACHE_HOME/coproc, ~/.cache/coproc; create it (with parents).
 * Returns 0 and fills out, or -1 when none can be made.
 */
int coproc__cache_dir_resolve(const char *explicit_dir, int skip_env, char *out, size_t size);

/* mkdir -p. 0 on success. */
int coproc__mkdirs(const char *path);

/* Read a whole regular file into a malloc'd buffer (NUL-terminated beyond
 * *len). 0 on success; -1 if absent or unreadable; -2 if the path is not a
 * regular file (a FIFO, a device, a directory): it is opened non-blocking and
 * never read, so a FIFO nobody writes cannot make the caller wait. */
int coproc__read_file(const char *path, unsigned char **data, size_t *len);

/* coproc__read_file for a cache file (a profile, a kernel binary): a path that
 * is not a regular file is also reported on rt's log as a warning naming
 * `what` and the path, so the caller can treat it as absent. */
int coproc__read_cache_file(coproc_runtime *rt, const char *what, const char *path,
                            unsigned char **data, size_t *len);

/*
 * Write a file atomically: a unique temporary beside it, fsync, rename. Two
 * processes writing the same path leave one whole file, never a mix. 0 on success.
 */
int coproc__write_file_atomic(const char *path, const void *data, size_t len);

#endif
