/* lower.c - cutting a plan into pipelines at its breakers: a join's build side,
 * a group-by, an order-by (pipeline.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "query/pipeline.h"

static int pipe_new(coproc__qprog *prog, const coproc_table *src, int src_pipe, const char *name,
                    const coproc_node *top)
{
    if (prog->n == prog->cap) {
        int cap = prog->cap ? 2 * prog->cap : 8;
        coproc__qpipe *p = realloc(prog->p, cap * sizeof *p);
        if (!p)
            return -1;
        prog->p = p;
        prog->cap = cap;
    }
    coproc__qpipe *q = &prog->p[prog->n];
    memset(q, 0, sizeof *q);
    q->src = src;
    q->src_pipe = src_pipe;
    snprintf(q->src_name, sizeof q->src_name, "%s", name);
    q->top = top;
    q->consumer = -1;
    q->device = -1;
    return prog->n++;
}

static coproc_status add_step(coproc_runtime *rt, coproc__qprog *prog, int pi,
                              coproc__qstep_kind kind, const coproc_node *node, int build)
{
    coproc__qpipe *q = &prog->p[pi];
    if (q->nsteps == COPROC__QP_MAX_STEPS)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: more than %d steps in one pipeline",
                            node->label, COPROC__QP_MAX_STEPS);
    q->steps[q->nsteps++] = (coproc__qstep){kind, node, build};
    q->top = node;
    return COPROC_OK;
}

/* Close pipeline pi with sink k and open a new one over its output. */
static int close_into(coproc__qprog *prog, int pi, coproc__qsink k, const coproc_node *sink_node,
                      const coproc_node *top)
{
    prog->p[pi].sink = k;
    prog->p[pi].sink_node = sink_node;
    char name[96];
    snprintf(name, sizeof name, "%s", sink_node ? sink_node->label : prog->p[pi].top->label);
    return pipe_new(prog, NULL, pi, name, top);
}

static int lower(coproc_runtime *rt, const coproc_node *n, coproc__qprog *prog, coproc_status *s)
{
    int pi, bi;
    switch (n->kind) {
    case COPROC__QN_SCAN:
        pi = pipe_new(prog, n->table, -1, n->label + strcspn(n->label, " ") + 1, n);
        if (pi < 0)
            *s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
        return pi;
    case COPROC__QN_FILTER:
    case COPROC__QN_PROJECT:
        if ((pi = lower(rt, n->in, prog, s)) < 0)
            return -1;
        *s = add_step(rt, prog, pi, n->kind == COPROC__QN_FILTER ? COPROC__QS_FILTER : COPROC__QS_PROJECT,
                      n, -1);
        return *s == COPROC_OK ? pi : -1;
    case COPROC__QN_JOIN:
        if ((bi = lower(rt, n->build, prog, s)) < 0)
            return -1;
        /* A build side that probes other tables itself is materialised first:
         * the hash table then indexes rows of one table. */
        for (int i = 0; i < prog->p[bi].nsteps; i++)
            if (prog->p[bi].steps[i].kind == COPROC__QS_PROBE) {
                if ((bi = close_into(prog, bi, COPROC__QK_MATERIALIZE, NULL, n->build)) < 0)
                    goto oom;
                break;
            }
        prog->p[bi].sink = COPROC__QK_BUILD;
        prog->p[bi].sink_node = n;
        if ((pi = lower(rt, n->in, prog, s)) < 0)
            return -1;
        prog->p[bi].consumer = pi;
        *s = add_step(rt, prog, pi, COPROC__QS_PROBE, n, bi);
        return *s == COPROC_OK ? pi : -1;
    case COPROC__QN_GROUP_BY:
        if ((pi = lower(rt, n->in, prog, s)) < 0)
            return -1;
        if ((pi = close_into(prog, pi, COPROC__QK_GROUP, n, n)) < 0)
            goto oom;
        return pi;
    case COPROC__QN_ORDER_BY:
        if ((pi = lower(rt, n->in, prog, s)) < 0)
            return -1;
        /* Sort the table the input pipeline makes; an empty pipeline over an
         * earlier pipeline's output sorts that output. */
        if (prog->p[pi].nsteps == 0 && prog->p[pi].src_pipe >= 0 && !prog->p[prog->p[pi].src_pipe].order) {
            prog->p[prog->p[pi].src_pipe].order = n;
            prog->p[pi].top = n;
            return pi;
        }
        prog->p[pi].order = n;
        if ((pi = close_into(prog, pi, COPROC__QK_MATERIALIZE, NULL, n)) < 0)
            goto oom;
        return pi;
    }
    *s = coproc__fail(rt, COPROC_INTERNAL, "%s: unknown node kind", n->label);
    return -1;
oom:
    *s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    return -1;
}

coproc_status coproc__lower(coproc_runtime *rt, const coproc_node *root, coproc__qprog *prog)
{
    memset(prog, 0, sizeof *prog);
    coproc_status s = COPROC_OK;
    int pi = lower(rt, root, prog, &s);
    if (pi < 0)
        return s;
    coproc__qpipe *q = &prog->p[pi];
    if (q->nsteps == 0 && q->src_pipe >= 0) {
        /* The result is what the pipeline before made: drop the empty one. */
        prog->result = q->src_pipe;
        prog->n--;
    } else {
        q->sink = COPROC__QK_MATERIALIZE;
        prog->result = pi;
    }
    return COPROC_OK;
}

void coproc__qbuilt_free(coproc__qbuilt *t)
{
    if (t->ht)
        clReleaseMemObject(t->ht);
    if (t->bits)
        clReleaseMemObject(t->bits);
    for (int m = 0; m < COPROC__QP_MAX_JOIN_KEYS; m++)
        if (t->remap[m])
            clReleaseMemObject(t->remap[m]);
    for (int c = 0; c < t->npay; c++)
        if (t->pay[c])
            clReleaseMemObject(t->pay[c]);
    free(t->pay);
    memset(t, 0, sizeof *t);
}

void coproc__qprog_free(coproc__qprog *prog)
{
    for (int i = 0; i < prog->n; i++) {
        coproc_table_free(prog->p[i].out);
        coproc__qbuilt_free(&prog->p[i].built);
    }
    free(prog->p);
    memset(prog, 0, sizeof *prog);
}
