/* state.c - the query layer's per-runtime state (state.h). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/program.h"
#include "core/error.h"
#include "core/runtime.h"
#include "query/state.h"
#include "query/verify.h"

#define MAX_DEVICES 64

typedef struct entry {
    int device;
    char *source;
    size_t length;
    cl_program program;
} entry;

struct coproc__query_state {
    pthread_mutex_t lock;
    entry *e;
    size_t n, cap;
    double log_ratio[MAX_DEVICES]; /* mean log(measured / estimated), recent runs weighted */
    int runs[MAX_DEVICES];
    coproc__verify verify;         /* the shadow check's (verify.c) */
    coproc__query_tasks tasks;
};

struct coproc__query_state *coproc__query_state_new(void)
{
    struct coproc__query_state *q = calloc(1, sizeof *q);
    if (q) {
        pthread_mutex_init(&q->lock, NULL);
        coproc__verify_init(&q->verify);
        pthread_mutex_init(&q->tasks.lock, NULL);
        pthread_cond_init(&q->tasks.finished, NULL);
    }
    return q;
}

void coproc__query_state_configure(coproc_runtime *rt)
{
    if (rt->query)
        coproc__verify_configure(rt, &rt->query->verify);
}

coproc__verify *coproc__query_verify(coproc_runtime *rt)
{
    return rt->query ? &rt->query->verify : NULL;
}

coproc__query_tasks *coproc__query_tasks_of(coproc_runtime *rt)
{
    return rt->query ? &rt->query->tasks : NULL;
}

void coproc__query_state_free(struct coproc__query_state *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++) {
        clReleaseProgram(q->e[i].program);
        free(q->e[i].source);
    }
    free(q->e);
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->tasks.lock);
    pthread_cond_destroy(&q->tasks.finished);
    free(q);
}

coproc_status coproc__query_program(coproc_runtime *rt, coproc__device *dev, const char *source,
                                    size_t length, cl_program *out)
{
    struct coproc__query_state *q = rt->query;
    if (!q)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: no state (out of host memory)");
    /* Held while building, so two threads never build one program twice. */
    pthread_mutex_lock(&q->lock);
    for (size_t i = 0; i < q->n; i++)
        if (q->e[i].device == dev->index && q->e[i].length == length &&
            memcmp(q->e[i].source, source, length) == 0) {
            *out = q->e[i].program;
            pthread_mutex_unlock(&q->lock);
            return COPROC_OK;
        }
    coproc_status s = COPROC_HOST_OUT_OF_MEMORY;
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        entry *e = realloc(q->e, cap * sizeof *e);
        if (!e)
            goto done;
        q->e = e;
        q->cap = cap;
    }
    char *copy = malloc(length);
    if (!copy)
        goto done;
    memcpy(copy, source, length);
    cl_program prog;
    s = coproc__program_build(rt, dev, "query", source, length, &prog);
    if (s != COPROC_OK) {
        free(copy);
        pthread_mutex_unlock(&q->lock);
        return s;
    }
    q->e[q->n++] = (entry){dev->index, copy, length, prog};
    *out = prog;
done:
    pthread_mutex_unlock(&q->lock);
    if (s == COPROC_HOST_OUT_OF_MEMORY)
        return coproc__fail(rt, s, "query: out of host memory");
    return s;
}

double coproc__query_correction(coproc_runtime *rt, int device)
{
    struct coproc__query_state *q = rt->query;
    if (!q || device < 0 || device >= MAX_DEVICES)
        return 1.0;
    pthread_mutex_lock(&q->lock);
    double c = q->runs[device] ? exp(q->log_ratio[device]) : 1.0;
    pthread_mutex_unlock(&q->lock);
    return c;
}

void coproc__query_observe(coproc_runtime *rt, int device, double estimate_s, double measured_s)
{
    struct coproc__query_state *q = rt->query;
    if (!q || device < 0 || device >= MAX_DEVICES || !(estimate_s > 0) || !(measured_s > 0))
        return;
    double r = log(measured_s / estimate_s);
    pthread_mutex_lock(&q->lock);
    /* The mean of the first runs, then an exponential average (weight 1/8):
     * the correction follows the device's recent pipelines. */
    int k = q->runs[device] < 8 ? q->runs[device] + 1 : 8;
    q->log_ratio[device] += (r - q->log_ratio[device]) / k;
    q->runs[device]++;
    pthread_mutex_unlock(&q->lock);
}
