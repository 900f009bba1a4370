/* Permute: reorder the axes of each example; dims is a permutation of
 * 1..rank-1 (the batch axis 0 stays first), as Keras writes it: (2, 1)
 * swaps the two axes of a sequence of vectors. The result is packed
 * (contiguous) so any layer can follow. */
#include <string.h>

#include "layer_common.h"

enum { DIMS };

static const tw_param_def params[] = {
    [DIMS] = {"dims", TW_PARAM_INTS, "1", 1, TW_MAX_DIMS - 1, 0,
              .help = "The new order of the axes, counted from 1 (the batch axis stays first)"},
};

static int permute_configure(tw_layer *self)
{
    const tw_param_value *dims = tw_layer_param(self, DIMS);
    bool seen[TW_MAX_DIMS] = {0};
    char buf[160];
    for (int i = 0; i < dims->n; i++) {
        if (dims->ints[i] > dims->n || seen[dims->ints[i]])
            return tw_error_set("dims: expected a permutation of 1 to %d, got %s", dims->n,
                                tw_shape_str(dims->n, dims->ints, buf, sizeof buf));
        seen[dims->ints[i]] = true;
    }
    if (dims->n + 1 > TW_MAX_DIMS)
        return tw_error_set("dims: at most %d axes (the batch takes one of %d), got %d", TW_MAX_DIMS - 1,
                            TW_MAX_DIMS, dims->n);
    return 0;
}

static int permute_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    const tw_param_value *dims = tw_layer_param(self, DIMS);
    char a[96], b[160];
    if (input->ndim != dims->n + 1)
        return TW_LAYER_ERROR(self, "dims %s needs input of rank %d, got %s", tw_shape_str(dims->n, dims->ints, b, sizeof b),
                              dims->n + 1, tw_shape_format(input, a, sizeof a));
    *output = (tw_shape){input->ndim, {input->dims[0]}};
    for (int i = 0; i < dims->n; i++)
        output->dims[i + 1] = input->dims[dims->ints[i]];
    *nw = 0;
    return 0;
}

static tw_tensor *permute_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)ctx;
    const tw_param_value *dims = tw_layer_param(self, DIMS);
    tw_shape in = tw__shape_of(x), out;
    tw_weight_spec none[1];
    int nw;
    if (permute_infer(self, &in, &out, none, &nw))
        return NULL;
    int perm[TW_MAX_DIMS] = {0};
    for (int i = 0; i < dims->n; i++)
        perm[i + 1] = (int)dims->ints[i];
    return tw_contiguous(tw_permute(x, in.ndim, perm));
}

const tw_layer_class tw_layer_class_Permute = {
    .name = "Permute",
    .group = "Core",
    .summary = "Reorder the axes of each example",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = permute_configure,
    .infer = permute_infer,
    .call = permute_call,
};
