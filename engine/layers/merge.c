/* The elementwise merge layers: Add, Subtract, Multiply, Average, Maximum,
 * Minimum (Keras' _Merge subclasses). Each takes two or more tensors
 * (Subtract exactly two) whose shapes, batch aside, broadcast as Keras'
 * _compute_elemwise_op_output_shape has them: aligned from the last axis,
 * equal sizes, a 1 against any size, an unknown size against any. */
#include <string.h>

#include "layer_internal.h"

typedef enum { MERGE_ADD, MERGE_SUBTRACT, MERGE_MULTIPLY, MERGE_AVERAGE, MERGE_MAXIMUM, MERGE_MINIMUM } merge_kind;

/* What the messages say the inputs could not be: "cannot be added". */
static const char *const verbs[] = {"added", "subtracted", "multiplied", "averaged", "compared", "compared"};

static merge_kind kind_of(const tw_layer *self)
{
    static const char *const names[] = {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(self->klass->name, names[i]))
            return (merge_kind)i;
    return MERGE_ADD;
}

/* Keras' pairwise rule on the shapes without their batch axes; out gets the
 * broadcast shape (with a batch axis). -1 when a and b do not broadcast. */
static int broadcast_pair(const tw_shape *a, const tw_shape *b, tw_shape *out)
{
    const tw_shape *longer = a->ndim >= b->ndim ? a : b, *shorter = longer == a ? b : a;
    *out = *longer;
    int offset = longer->ndim - shorter->ndim;
    for (int i = 1; i < shorter->ndim; i++) {
        int64_t x = longer->dims[offset + i], y = shorter->dims[i];
        if (x < 0 || y < 0)
            out->dims[offset + i] = x == 1 ? y : y == 1 ? x : -1;
        else if (x == 1)
            out->dims[offset + i] = y;
        else if (y != 1 && x != y)
            return -1;
    }
    out->dims[0] = a->dims[0] == b->dims[0] ? a->dims[0] : -1;
    return 0;
}

static int merge_infer_n(const tw_layer *self, const tw_shape *inputs, int n, tw_shape *outputs, int *noutputs,
                         tw_weight_spec *w, int *nw)
{
    (void)w;
    merge_kind kind = kind_of(self);
    *nw = 0;
    *noutputs = 1;
    if (kind == MERGE_SUBTRACT && n != 2)
        return TW_LAYER_ERROR(self, "takes exactly 2 inputs, got %d", n);
    if (n < 2)
        return TW_LAYER_ERROR(self, "takes at least 2 inputs, got %d", n);
    tw_shape out = inputs[0];
    for (int i = 0; i < n; i++) {
        char a[96], b[96];
        if (inputs[i].ndim < 1)
            return TW_LAYER_ERROR(self, "input %d has no batch axis: %s", i,
                                  tw_shape_format(&inputs[i], a, sizeof a));
        if (i && broadcast_pair(&out, &inputs[i], &out))
            return TW_LAYER_ERROR(self, "inputs %s and %s cannot be %s", tw_shape_format(&inputs[0], a, sizeof a),
                                  tw_shape_format(&inputs[i], b, sizeof b), verbs[kind]);
    }
    outputs[0] = out;
    return 0;
}

static int merge_call_n(tw_layer *self, tw_tensor *const *inputs, int n, tw_tensor **outputs,
                        const tw_call_context *ctx)
{
    (void)ctx;
    merge_kind kind = kind_of(self);
    tw_tensor *y = inputs[0];
    for (int i = 1; i < n; i++) {
        switch (kind) {
        case MERGE_ADD:
        case MERGE_AVERAGE:
            y = tw_add(y, inputs[i]);
            break;
        case MERGE_SUBTRACT:
            y = tw_sub(y, inputs[i]);
            break;
        case MERGE_MULTIPLY:
            y = tw_mul(y, inputs[i]);
            break;
        case MERGE_MAXIMUM:
            y = tw_maximum(y, inputs[i]);
            break;
        case MERGE_MINIMUM:
            y = tw_minimum(y, inputs[i]);
            break;
        }
    }
    if (kind == MERGE_AVERAGE)
        y = tw_div_scalar(y, n);
    outputs[0] = y;
    return y ? 1 : -1;
}

#define MERGE_CLASS(class_name, line)                                                                      \
    const tw_layer_class tw_layer_class_##class_name = {                                                   \
        .name = #class_name,                                                                               \
        .group = "Merging",                                                                                \
        .summary = line,                                                                                   \
        .infer_n = merge_infer_n,                                                                          \
        .call_n = merge_call_n,                                                                            \
    };

MERGE_CLASS(Add, "Sum of its inputs, elementwise")
MERGE_CLASS(Subtract, "The first input minus the second, elementwise")
MERGE_CLASS(Multiply, "Product of its inputs, elementwise")
MERGE_CLASS(Average, "Mean of its inputs, elementwise")
MERGE_CLASS(Maximum, "Largest of its inputs, elementwise")
MERGE_CLASS(Minimum, "Smallest of its inputs, elementwise")
