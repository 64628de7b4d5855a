/* arrow_roundtrip.c - hand an Arrow array to coproc and take the result back as
 * one: build an int64 ArrowArray by hand (as pyarrow/DuckDB/Polars would hand
 * one over), import it, double it on the device (coproc_map_const), export the
 * result, print it, release everything. */
#include <stdio.h>
#include <stdlib.h>

#include <coproc.h>
#include <coproc/arrow.h>

#define ROWS 8

/* The producer side: the array owns one malloc'd block (the buffers array and
 * the data); release frees it and marks the array released. */
typedef struct block {
    const void *buffers[2];
    int64_t data[ROWS];
} block;

static void release_block(struct ArrowArray *a)
{
    free(a->private_data);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

int main(void)
{
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(NULL, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc_open: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return 69; /* EX_UNAVAILABLE */
    }

    block *b = malloc(sizeof *b);
    if (!b) {
        coproc_close(rt);
        return 71;
    }
    for (int i = 0; i < ROWS; i++)
        b->data[i] = (int64_t)i * i - 10;
    b->buffers[0] = NULL; /* no validity bitmap: no nulls */
    b->buffers[1] = b->data;
    struct ArrowSchema schema = {.format = "l", .release = release_schema};
    struct ArrowArray array = {.length = ROWS - 1, .offset = 1, .n_buffers = 2,
                               .buffers = b->buffers, .release = release_block,
                               .private_data = b};

    coproc_column *in = NULL, *doubled = NULL;
    struct ArrowSchema out_schema = {0};
    struct ArrowArray out = {0};
    int rc = 1;
    /* On success the column takes the array: array.release is NULL afterwards. */
    s = coproc_column_import_arrow(rt, 0, &schema, &array, &in);
    if (s == COPROC_OK)
        s = coproc_map_const(rt, COPROC_ARITH_MUL, in, (coproc_value){.i64 = 2}, &doubled);
    if (s == COPROC_OK)
        s = coproc_column_export_arrow(doubled, &out_schema, &out);
    if (s != COPROC_OK) {
        fprintf(stderr, "arrow round trip: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        goto done;
    }

    const int64_t *result = out.buffers[1];
    printf("format \"%s\", %lld rows, %lld nulls:", out_schema.format, (long long)out.length,
           (long long)out.null_count);
    rc = 0;
    for (int64_t i = 0; i < out.length; i++) {
        printf(" %lld", (long long)result[i]);
        if (result[i] != 2 * ((i + 1) * (i + 1) - 10))
            rc = 1;
    }
    printf("\n%s\n", rc ? "MISMATCH" : "ok");

done:
    if (out.release)
        out.release(&out);
    if (out_schema.release)
        out_schema.release(&out_schema);
    coproc_column_free(doubled);
    coproc_column_free(in);     /* releases the imported array if the column still held it */
    if (array.release)          /* import failed: the array is still ours */
        array.release(&array);
    schema.release(&schema);
    coproc_close(rt);
    return rc;
}
