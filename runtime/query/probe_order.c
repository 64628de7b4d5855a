/* probe_order.c - the order in which a pipeline probes its join tables.
 *
 * Consecutive probes of independent joins commute: a row survives all of
 * them or not, whatever the order. Each probe costs a load from its table
 * (cheap when the table sits in a near cache) and lets a fraction of the
 * rows through (for a key/foreign-key join, the share of the build side's
 * rows that passed its filters). Running them in ascending
 * cost / (1 - pass) minimises the expected work a row (the classic
 * ordering of independent filters); Crystal's SSB kernels probe in the
 * same order by hand. The plan's order is kept where the measurements tie
 * and wherever a reorder could change which column a name means. */
#include <math.h>
#include <string.h>

#include "query/pipeline.h"

/* Relative cost of one probe by where its table can live: a core's L1,
 * its L2, or further out. A hashed table also compares the key. */
static double probe_cost(const coproc__qbuilt *t)
{
    double bytes = t->bytes;
    double c = bytes <= 32768 ? 1 : bytes <= (1u << 20) ? 2 : 4;
    return t->dense ? c : c + 1;
}

static double rank(const coproc__qprog *prog, const coproc__qstep *st)
{
    const coproc__qbuilt *t = &prog->p[st->build].built;
    double pass = t->src_rows ? (double)t->rows / (double)t->src_rows : 0;
    if (pass >= 1)
        return INFINITY;
    return probe_cost(t) / (1 - pass);
}

static int in_schema(const coproc__schema *s, const char *name)
{
    return name && coproc__schema_find(s, name) >= 0;
}

/* Steps [a, b) may be permuted: no probe key is a column a build side of
 * the run brings, and no two build sides bring the same name. */
static int independent(const coproc__qpipe *q, int a, int b)
{
    for (int i = a; i < b; i++) {
        const coproc_node *ji = q->steps[i].node;
        for (int j = a; j < b; j++) {
            if (i == j)
                continue;
            const coproc_node *jj = q->steps[j].node;
            for (int k = 0; k < ji->njoin_keys; k++)
                if (in_schema(&jj->build->schema, ji->probe_keys[k]))
                    return 0;
            if (ji->join == COPROC_JOIN_INNER && jj->join == COPROC_JOIN_INNER)
                for (int c = 0; c < ji->build->schema.n; c++)
                    if (in_schema(&jj->build->schema, ji->build->schema.names[c]))
                        return 0;
        }
    }
    return 1;
}

void coproc__order_probes(coproc__qprog *prog, int pi)
{
    coproc__qpipe *q = &prog->p[pi];
    for (int a = 0; a < q->nsteps;) {
        int b = a;
        while (b < q->nsteps && q->steps[b].kind == COPROC__QS_PROBE && prog->p[q->steps[b].build].built.ht)
            b++;
        if (b - a > 1 && independent(q, a, b)) {
            /* Insertion sort: stable, so ties keep the plan's order. */
            for (int i = a + 1; i < b; i++) {
                coproc__qstep x = q->steps[i];
                double r = rank(prog, &x);
                int j = i;
                while (j > a && rank(prog, &q->steps[j - 1]) > r) {
                    q->steps[j] = q->steps[j - 1];
                    j--;
                }
                q->steps[j] = x;
            }
        }
        a = b > a ? b : a + 1;
    }
}
