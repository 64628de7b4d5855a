/* run.c - coproc_query_run/submit/wait: one run's bookkeeping, the choice of
 * engine (fused, else one operator at a time) and the result. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "core/error.h"
#include "core/runtime.h"
#include "data/column.h"
#include "data/dictionary.h"
#include "query/run.h"
#include "query/state.h"
#include "query/verify.h"

/* The runtime's clock: the wall clock, or simulated devices' virtual one. */
double coproc__qrun_now(const coproc__qrun *run) { return run->rt->backend->now(run->rt) - run->t0; }

coproc_status coproc__qrun_report(coproc__qrun *run, const coproc_pipeline_info *info)
{
    if (run->ninfo == run->cap) {
        int cap = run->cap ? 2 * run->cap : 8;
        coproc_pipeline_info *p = realloc(run->info, cap * sizeof *p);
        if (!p)
            return coproc__fail(run->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
        run->info = p;
        run->cap = cap;
    }
    run->info[run->ninfo++] = *info;
    return COPROC_OK;
}

void coproc_query_options_init(coproc_query_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->mode = COPROC_QUERY_FUSED;
    o->device = -1;
    o->verify = -1;
}

void coproc_query_result_free(coproc_query_result *r)
{
    if (!r)
        return;
    coproc_table_free(r->table);
    free(r->pipeline);
    memset(r, 0, sizeof *r);
}

/* The result's string columns (group-by keys, columns passed through) carry
 * their dictionary, as the plan's output schema knows it. */
static void attach_dictionaries(const coproc_node *root, coproc_table *t)
{
    for (int i = 0; i < t->n && i < root->schema.n; i++) {
        coproc_column *c = t->owned ? t->owned[i] : NULL;
        if (c && root->schema.dicts[i] && c->type == COPROC_INT32 && !c->dict)
            c->dict = coproc__dict_ref(root->schema.dicts[i]);
    }
}

coproc_status coproc_query_run(coproc_plan *p, coproc_node *root, const coproc_query_options *opts,
                               coproc_query_result *out)
{
    if (!p)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = p->rt;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_query_run: out is NULL");
    memset(out, 0, sizeof *out);
    if (p->status != COPROC_OK)
        return coproc__fail(rt, p->status, "coproc_query_run: the plan has an error: %s", p->errmsg);
    if (!root)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_query_run: root is NULL");
    if (root->plan != p)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                            "coproc_query_run: root (%s) is a node of another plan", root->label);
    coproc__qrun run = {.rt = rt, .plan = p, .t0 = rt->backend->now(rt)};
    coproc_query_options_init(&run.opts);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                "coproc_query_run: options not set up by coproc_query_options_init");
        run.opts = *opts;
    }
    if (run.opts.mode != COPROC_QUERY_FUSED && run.opts.mode != COPROC_QUERY_OPERATORS)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_query_run: unknown mode %d",
                            (int)run.opts.mode);
    if (run.opts.device < -1 || run.opts.device >= rt->device_count)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_query_run: no device %d (%d devices)",
                            run.opts.device, rt->device_count);
    if (rt->device_count == 0)
        return coproc__fail(rt, COPROC_NO_DEVICE, "coproc_query_run: the runtime has no device");
    uint64_t built0 = atomic_load(&rt->programs_built);
    coproc_table *table = NULL;
    coproc_status s;
    /* Columns with nulls run fused where the engine reads their validity;
     * a shape it cannot run with nulls returns UNSUPPORTED with the note. */
    if (run.opts.mode == COPROC_QUERY_FUSED) {
        s = coproc__fused_run(&run, root, &table);
        if (s == COPROC_BUILD_FAILED) {
            /* One rule: what the driver's compiler refuses runs one operator
             * at a time, as what the code generator refuses does. */
            snprintf(run.note, sizeof run.note, "the generated kernel did not build: %s",
                     coproc_errmsg(rt));
            s = COPROC_UNSUPPORTED;
        } else if (s == COPROC_UNSUPPORTED && !run.note[0]) {
            /* refused without a note of its own (a key's values, a type): the
             * runtime's message says why */
            snprintf(run.note, sizeof run.note, "%s", coproc_errmsg(rt));
        }
        if (s == COPROC_UNSUPPORTED && run.note[0]) {
            coproc__log(rt, COPROC_LOG_INFO, "query: one operator at a time: %s", run.note);
            s = coproc__operators_run(&run, root, &table);
        }
    } else {
        s = coproc__operators_run(&run, root, &table);
    }
    if (s != COPROC_OK) {
        coproc_table_free(table);
        free(run.info);
        return s;
    }
    attach_dictionaries(root, table);
    out->table = table;
    out->pipelines = run.ninfo;
    out->pipeline = run.info;
    out->seconds = coproc__qrun_now(&run);
    out->kernels_built = atomic_load(&rt->programs_built) - built0;
    memcpy(out->note, run.note, sizeof out->note);
    coproc__verify_run(p, root, &run.opts, out);
    return COPROC_OK;
}

/* ---------------------------------------------------------------- asynchronous */

/* A submitted run: on the runtime's list of query tasks (state.h) from
 * submit until coproc_query_wait, or coproc_close frees it. */
struct coproc_query_task {
    pthread_t thread;
    coproc_runtime *rt;
    coproc_plan *plan;
    coproc_node *root;
    coproc_query_options opts;
    int has_opts;
    coproc_status status;
    coproc_query_result result;
    uint64_t seq;                 /* submission order */
    int finished;                 /* its run has ended (under the list's lock) */
    coproc_query_task *prev, *next;
};

static void *task_main(void *arg)
{
    coproc_query_task *t = arg;
    cl_context own = coproc__thread_context_begin(t->rt); /* quirks.h context_per_thread */
    t->status = coproc_query_run(t->plan, t->root, t->has_opts ? &t->opts : NULL, &t->result);
    coproc__thread_context_end(own);
    coproc__query_tasks *q = coproc__query_tasks_of(t->rt);
    pthread_mutex_lock(&q->lock);
    t->finished = 1;
    pthread_cond_broadcast(&q->finished);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

static void unlink_task(coproc__query_tasks *q, coproc_query_task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        q->live = t->next;
    if (t->next)
        t->next->prev = t->prev;
}

coproc_status coproc_query_submit(coproc_plan *p, coproc_node *root, const coproc_query_options *opts,
                                  coproc_query_task **out)
{
    if (!p)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(p->rt, COPROC_NULL_POINTER, "coproc_query_submit: out is NULL");
    *out = NULL;
    if (p->status != COPROC_OK)
        return coproc__fail(p->rt, p->status, "coproc_query_submit: the plan has an error: %s", p->errmsg);
    if (!root)
        return coproc__fail(p->rt, COPROC_NULL_POINTER, "coproc_query_submit: root is NULL");
    if (root->plan != p)
        return coproc__fail(p->rt, COPROC_INVALID_ARGUMENT,
                            "coproc_query_submit: root (%s) is a node of another plan", root->label);
    coproc__query_tasks *q = coproc__query_tasks_of(p->rt);
    coproc_query_task *t = q ? calloc(1, sizeof *t) : NULL;
    if (!t)
        return coproc__fail(p->rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_query_submit: out of host memory");
    t->rt = p->rt;
    t->plan = p;
    t->root = root;
    if (opts) {
        t->opts = *opts;
        t->has_opts = 1;
    }
    /* Listed before it starts: its end is always seen under the lock. */
    pthread_mutex_lock(&q->lock);
    t->seq = q->next_seq++;
    t->next = q->live;
    if (q->live)
        q->live->prev = t;
    q->live = t;
    int started = pthread_create(&t->thread, NULL, task_main, t) == 0;
    if (!started)
        unlink_task(q, t);
    pthread_mutex_unlock(&q->lock);
    if (!started) {
        free(t);
        return coproc__fail(p->rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_query_submit: cannot start a thread");
    }
    *out = t;
    return COPROC_OK;
}

coproc_status coproc_query_wait(coproc_query_task *t, coproc_query_result *out)
{
    if (!t)
        return COPROC_NULL_POINTER;
    pthread_join(t->thread, NULL);
    coproc__query_tasks *q = coproc__query_tasks_of(t->rt);
    pthread_mutex_lock(&q->lock);
    unlink_task(q, t);
    pthread_mutex_unlock(&q->lock);
    coproc_status s = t->status;
    if (out)
        *out = t->result;
    else
        coproc_query_result_free(&t->result);
    free(t);
    return s;
}

void coproc__query_tasks_drain(coproc_runtime *rt)
{
    coproc__query_tasks *q = coproc__query_tasks_of(rt);
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    uint64_t upto = q->next_seq;
    for (;;) {
        const coproc_query_task *t = q->live;
        while (t && (t->finished || t->seq >= upto))
            t = t->next;
        if (!t)
            break;
        pthread_cond_wait(&q->finished, &q->lock);
    }
    pthread_mutex_unlock(&q->lock);
}

void coproc__query_tasks_close(coproc_runtime *rt)
{
    coproc__query_tasks *q = coproc__query_tasks_of(rt);
    if (!q)
        return;
    /* No other call on the runtime is in progress (coproc_close's rule): the
     * list is this thread's; the runs still going are waited for. */
    pthread_mutex_lock(&q->lock);
    coproc_query_task *t = q->live;
    q->live = NULL;
    pthread_mutex_unlock(&q->lock);
    for (coproc_query_task *next; t; t = next) {
        next = t->next;
        pthread_join(t->thread, NULL);
        coproc_query_result_free(&t->result);
        free(t);
    }
}
