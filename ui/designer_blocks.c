/* The designer palette's blocks (designer_blocks.h). */
#include "designer_blocks.h"

#include <gio/gio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "designer_arrange.h"

static const tw_designer_block blocks[] = {
    {"Residual block", "Two 3x3 convolutions with batch norm, added to the input (keeps its channels)"},
    {"U-Net down step", "Two 3x3 convolutions (twice the channels), then 2x2 max pooling"},
    {"U-Net up step", "2x2 transposed convolution, concatenated with a skip you connect, two 3x3 convolutions"},
    {"Inception branch", "1x1, 3x3 and 5x5 convolutions and a pooled 1x1 side by side, concatenated"},
    {"Transformer encoder", "Self-attention and a feed-forward network, each added back and layer-normalized"},
};

int tw_designer_block_count(void)
{
    return G_N_ELEMENTS(blocks);
}

const tw_designer_block *tw_designer_block_at(int i)
{
    return i >= 0 && i < (int)G_N_ELEMENTS(blocks) ? &blocks[i] : NULL;
}

const tw_designer_block *tw_designer_block_find(const char *name)
{
    for (size_t i = 0; name && i < G_N_ELEMENTS(blocks); i++)
        if (!strcmp(blocks[i].name, name))
            return &blocks[i];
    return NULL;
}

/* Grid steps of a block's layout: columns side by side, rows down. */
#define COL (TW_DESIGNER_BOX_WIDTH + 50.0)
#define ROW (TW_DESIGNER_BOX_HEIGHT + 44.0)

/* The block being written: its layers and the texts of their numbers. */
typedef struct {
    tw_model_doc_block_layer layers[16];
    char numbers[16][4][24];
    int n;
} builder;

#define FROM TW_MODEL_DOC_BLOCK_FROM
#define OPEN TW_MODEL_DOC_BLOCK_OPEN
#define END (-100)

/* One layer at column col, row row, with inputs (END-terminated) and up
 * to four parameters given as key, printf format of one int, value. */
static void add(builder *b, const char *class_name, double col, double row, const int *inputs, ...)
{
    tw_model_doc_block_layer *l = &b->layers[b->n];
    memset(l, 0, sizeof *l);
    l->class_name = class_name;
    l->dx = col * COL;
    l->dy = row * ROW;
    for (int k = 0; inputs[k] != END; k++)
        l->inputs[l->ninputs++] = inputs[k];
    va_list ap;
    va_start(ap, inputs);
    for (int p = 0;; p++) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        const char *format = va_arg(ap, const char *);
        if (strchr(format, '%')) {
            snprintf(b->numbers[b->n][p], sizeof b->numbers[b->n][p], format, va_arg(ap, int));
            l->params[2 * p + 1] = b->numbers[b->n][p];
        } else
            l->params[2 * p + 1] = format;
        l->params[2 * p] = key;
    }
    va_end(ap);
    b->n++;
}

#define IN(...) ((const int[]){__VA_ARGS__, END})

static void residual(builder *b, int c)
{
    add(b, "Conv2D", 0, 0, IN(FROM), "filters", "%d", c, "kernel_size", "3,3", "padding", "same", NULL);
    add(b, "BatchNormalization", 0, 1, IN(0), NULL);
    add(b, "Activation", 0, 2, IN(1), "activation", "relu", NULL);
    add(b, "Conv2D", 0, 3, IN(2), "filters", "%d", c, "kernel_size", "3,3", "padding", "same", NULL);
    add(b, "BatchNormalization", 0, 4, IN(3), NULL);
    add(b, "Add", 0, 5, IN(4, FROM), NULL);
    add(b, "Activation", 0, 6, IN(5), "activation", "relu", NULL);
}

static void unet_down(builder *b, int c)
{
    int f = 2 * c;
    add(b, "Conv2D", 0, 0, IN(FROM), "filters", "%d", f, "kernel_size", "3,3", "padding", "same", "activation",
        "relu", NULL);
    add(b, "Conv2D", 0, 1, IN(0), "filters", "%d", f, "kernel_size", "3,3", "padding", "same", "activation",
        "relu", NULL);
    add(b, "MaxPooling2D", 0, 2, IN(1), "pool_size", "2,2", NULL);
}

static void unet_up(builder *b, int c)
{
    int f = MAX(c / 2, 1);
    add(b, "Conv2DTranspose", 0, 0, IN(FROM), "filters", "%d", f, "kernel_size", "2,2", "strides", "2,2",
        "padding", "same", NULL);
    add(b, "Concatenate", 0, 1, IN(0, OPEN), NULL);
    add(b, "Conv2D", 0, 2, IN(1), "filters", "%d", f, "kernel_size", "3,3", "padding", "same", "activation",
        "relu", NULL);
    add(b, "Conv2D", 0, 3, IN(2), "filters", "%d", f, "kernel_size", "3,3", "padding", "same", "activation",
        "relu", NULL);
}

static void inception(builder *b, int c)
{
    (void)c;
    add(b, "Conv2D", 0, 0, IN(FROM), "filters", "16", "kernel_size", "1,1", "activation", "relu", NULL);
    add(b, "Conv2D", 1, 0, IN(FROM), "filters", "16", "kernel_size", "1,1", "activation", "relu", NULL);
    add(b, "Conv2D", 1, 1, IN(1), "filters", "24", "kernel_size", "3,3", "padding", "same", "activation", "relu",
        NULL);
    add(b, "Conv2D", 2, 0, IN(FROM), "filters", "8", "kernel_size", "1,1", "activation", "relu", NULL);
    add(b, "Conv2D", 2, 1, IN(3), "filters", "8", "kernel_size", "5,5", "padding", "same", "activation", "relu",
        NULL);
    add(b, "MaxPooling2D", 3, 0, IN(FROM), "pool_size", "3,3", "strides", "1,1", "padding", "same", NULL);
    add(b, "Conv2D", 3, 1, IN(5), "filters", "8", "kernel_size", "1,1", "activation", "relu", NULL);
    add(b, "Concatenate", 1.5, 2, IN(0, 2, 4, 6), NULL);
}

static void transformer(builder *b, int d)
{
    add(b, "MultiHeadAttention", 1, 0, IN(FROM, FROM), "num_heads", "2", "key_dim", "%d", MAX(d / 2, 1), NULL);
    add(b, "Add", 0, 1, IN(FROM, 0), NULL);
    add(b, "LayerNormalization", 0, 2, IN(1), NULL);
    add(b, "Dense", 1, 3, IN(2), "units", "%d", 2 * d, "activation", "relu", NULL);
    add(b, "Dense", 1, 4, IN(3), "units", "%d", d, NULL);
    add(b, "Add", 0, 5, IN(2, 4), NULL);
    add(b, "LayerNormalization", 0, 6, IN(5), NULL);
}

int tw_designer_block_insert(TwModelDoc *doc, const char *name, int from, GError **error)
{
    const tw_designer_block *block = tw_designer_block_find(name);
    if (!block) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no block named \"%s\"", name);
        return -1;
    }
    if (from < 0 || from >= tw_model_doc_n_layers(doc)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "%s: select the layer the block follows (its output sizes the block)", name);
        return -1;
    }
    /* The width the block keeps: the last axis of from's output. */
    const tw_shape *in = tw_model_doc_node_output(doc, from, 0);
    int width = in && in->ndim > 0 && in->dims[in->ndim - 1] > 0 ? (int)in->dims[in->ndim - 1] : 0;
    if (!width) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "%s: the output of %s has no known size yet (fix its error or its input first)", name,
                    tw_layer_name(tw_model_doc_layer(doc, from)));
        return -1;
    }
    builder b = {.n = 0};
    switch (block - blocks) {
    case 0: residual(&b, width); break;
    case 1: unet_down(&b, width); break;
    case 2: unet_up(&b, width); break;
    case 3: inception(&b, width); break;
    default: transformer(&b, width); break;
    }
    /* Right below from when something follows it (those boxes make room
     * for the block's rows), else below every box, in from's column. */
    double x, y, bottom = -G_MAXDOUBLE, depth = 0;
    gboolean fed = FALSE;
    tw_model_doc_node_position(doc, from, &x, &y);
    for (int k = 0; k < b.n; k++)
        depth = MAX(depth, b.layers[k].dy + ROW);
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++) {
        double bx, by;
        tw_model_doc_node_position(doc, i, &bx, &by);
        bottom = MAX(bottom, by + TW_DESIGNER_BOX_HEIGHT);
        for (int k = 0, src, port; tw_model_doc_node_input(doc, i, k, &src, &port); k++)
            fed |= src == from && port == 0;
    }
    if (fed)
        return tw_model_doc_add_block(doc, b.layers, b.n, from, x, y + ROW, depth, error);
    return tw_model_doc_add_block(doc, b.layers, b.n, from, x, bottom + 60.0, 0, error);
}

