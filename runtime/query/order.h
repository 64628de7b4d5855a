/* order.h - an order-by (with limit) over a host table, on the host: the
 * fused engine's results between breakers are small host tables. */
#ifndef COPROC_QUERY_ORDER_H
#define COPROC_QUERY_ORDER_H

#include "query/plan.h"

/* A new table: in's rows ordered by n's keys (stable; NaN after every number
 * ascending, before them descending), the first n->limit (0: all). */
coproc_status coproc__order_by_host(coproc_runtime *rt, const coproc_table *in, const coproc_node *n,
                                    coproc_table **out);

#endif
