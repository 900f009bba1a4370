/* Reshape: each example to target_shape (the batch axis stays). One entry
 * may be -1, inferred from the example's element count as NumPy does. */
#include <string.h>

#include "layer_internal.h"

enum { TARGET_SHAPE };

static const tw_param_def params[] = {
    [TARGET_SHAPE] = {"target_shape", TW_PARAM_INTS, "-1", -1, 1e9, 0,
                      .help = "Shape of each example, without the batch axis; one entry may be -1"},
};

static int reshape_configure(tw_layer *self)
{
    const tw_param_value *t = tw_layer_param(self, TARGET_SHAPE);
    char buf[160];
    int unknown = 0;
    for (int i = 0; i < t->n; i++) {
        unknown += t->ints[i] == -1;
        if (t->ints[i] == 0)
            return tw_error_set("target_shape: sizes must be positive or -1, got %s",
                                tw_shape_str(t->n, t->ints, buf, sizeof buf));
    }
    if (unknown > 1)
        return tw_error_set("target_shape: only one size may be -1, got %s",
                            tw_shape_str(t->n, t->ints, buf, sizeof buf));
    if (t->n + 1 > TW_MAX_DIMS)
        return tw_error_set("target_shape: at most %d sizes (the batch takes one of %d axes), got %d",
                            TW_MAX_DIMS - 1, TW_MAX_DIMS, t->n);
    return 0;
}

static int reshape_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    const tw_param_value *t = tw_layer_param(self, TARGET_SHAPE);
    char a[96], b[160];
    if (input->ndim < 1)
        return TW_LAYER_ERROR(self, "expected input with a batch axis, got %s", tw_shape_format(input, a, sizeof a));
    tw_shape rest = {input->ndim - 1};
    memcpy(rest.dims, input->dims + 1, sizeof(int64_t) * rest.ndim);
    int64_t have = tw_shape_numel(&rest), known = 1;
    int free_axis = -1;
    *output = (tw_shape){t->n + 1, {input->dims[0]}};
    for (int i = 0; i < t->n; i++) {
        output->dims[i + 1] = t->ints[i];
        if (t->ints[i] == -1)
            free_axis = i + 1;
        else
            known *= t->ints[i];
    }
    *nw = 0;
    if (have < 0) /* an unknown size in the input: nothing to check yet */
        return 0;
    if (free_axis < 0 ? have != known : have % known != 0)
        return TW_LAYER_ERROR(self, "cannot reshape input %s (%lld values per example) to target_shape %s",
                              tw_shape_format(input, a, sizeof a), (long long)have,
                              tw_shape_str(t->n, t->ints, b, sizeof b));
    if (free_axis > 0)
        output->dims[free_axis] = have / known;
    return 0;
}

static tw_tensor *reshape_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    /* The output shape comes from the built one, with this batch's size:
     * the -1 is already resolved, so a batch of 0 stays well defined. */
    tw_shape out = self->output_shape;
    out.dims[0] = tw_tensor_dim(x, 0);
    return tw_reshape(tw_contiguous(x), out.ndim, out.dims);
}

const tw_layer_class tw_layer_class_Reshape = {
    .name = "Reshape",
    .group = "Core",
    .summary = "Reshape each example to target_shape",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = reshape_configure,
    .infer = reshape_infer,
    .call = reshape_call,
};
