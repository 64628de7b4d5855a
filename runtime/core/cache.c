/* cache.c - cache directory, hashing and atomic file writes. */
#include "core/cache.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t coproc__hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t coproc__hash_str(uint64_t h, const char *s)
{
    return coproc__hash(h, s, strlen(s) + 1); /* the NUL separates fields */
}

int coproc__mkdirs(const char *path)
{
    char buf[1024];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int coproc__cache_dir_resolve(const char *explicit_dir, int skip_env, char *out, size_t size)
{
    const char *env;
    int n;
    if (explicit_dir && *explicit_dir)
        n = snprintf(out, size, "%s", explicit_dir);
    else if (!skip_env && (env = getenv("COPROC_CACHE_DIR")) && *env)
        n = snprintf(out, size, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        n = snprintf(out, size, "%s/coproc", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(out, size, "%s/.cache/coproc", env);
    else
        return -1;
    if (n < 0 || (size_t)n >= size)
        return -1;
    return coproc__mkdirs(out);
}

int coproc__read_file(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO nobody writes would otherwise wait forever;
     * only a regular file is read (its size is known, reading it never blocks). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return -2;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size >= SIZE_MAX) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size, got = 0;
    unsigned char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return -1;
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* an error, or the file shrank while read: not whole */
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return -1;
    }
    buf[size] = 0;
    *data = buf;
    *len = size;
    return 0;
}

int coproc__read_cache_file(coproc_runtime *rt, const char *what, const char *path,
                            unsigned char **data, size_t *len)
{
    int rc = coproc__read_file(path, data, len);
    if (rc == -2)
        coproc__log(rt, COPROC_LOG_WARN, "%s %s is not a regular file; ignored", what, path);
    return rc;
}

int coproc__write_file_atomic(const char *path, const void *data, size_t len)
{
    char tmp[1100];
    /* pid, thread and clock make the name unique without any shared counter. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lx.%ld%09ld", path, (long)getpid(),
                     (unsigned long)pthread_self(), (long)ts.tv_sec, ts.tv_nsec);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    const unsigned char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto fail;
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}
