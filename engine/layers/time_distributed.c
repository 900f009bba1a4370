/* TimeDistributed, Keras' wrapper that applies one layer to every timestep:
 * input (batch, timesteps, ...) is folded to (batch * timesteps, ...), the
 * inner layer runs once on it, and its output unfolds to (batch,
 * timesteps, ...). One set of weights serves every step. The inner layer is
 * the wrapper's only child and keeps its name ("time_distributed/dense/
 * kernel"). */
#include "wrapper.h"

int tw__time_distributed_wrap(tw_layer *self, tw_layer *layer)
{
    if (wrapper_adopt(self, layer, "")) {
        tw_layer_unref(layer);
        return -1;
    }
    wrapper_set_child(self, 0, layer);
    return 0;
}

/* A Dense layer until tw_layer_wrap replaces it. */
static int td_configure(tw_layer *self)
{
    return wrapper_default_layer(self, "Dense");
}

static int td_infer_wrapped(const tw_layer *self, const tw_shape *input, tw_shape *output, int64_t *trainable,
                            int64_t *non_trainable)
{
    char buf[96];
    if (input->ndim < 3)
        return TW_LAYER_ERROR(self, "expected input (batch, timesteps, ...) of rank 3 or more, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    /* The inner layer sees one step of a batch of unknown size. */
    tw_shape step = {.ndim = input->ndim - 1, .dims = {-1}}, out;
    for (int i = 2; i < input->ndim; i++)
        step.dims[i - 1] = input->dims[i];
    int64_t t, nt;
    if (tw_layer_infer(self->children[0], &step, &out, &t, &nt))
        return -1;
    if (out.ndim < 1 || out.ndim >= TW_MAX_DIMS)
        return TW_LAYER_ERROR(self, "the inner layer's output %s cannot take a time axis",
                              tw_shape_format(&out, buf, sizeof buf));
    output->ndim = out.ndim + 1;
    output->dims[0] = input->dims[0];
    output->dims[1] = input->dims[1];
    for (int i = 1; i < out.ndim; i++)
        output->dims[i + 1] = out.dims[i];
    *trainable = self->trainable ? t : 0;
    *non_trainable = nt + (self->trainable ? 0 : t);
    return 0;
}

static int td_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    int64_t t, nt;
    (void)w;
    *nw = 0;
    return td_infer_wrapped(self, input, output, &t, &nt);
}

static int td_build_children(tw_layer *self, const tw_shape *input, tw_rng *rng)
{
    tw_shape step = {.ndim = input->ndim - 1, .dims = {-1}};
    for (int i = 2; i < input->ndim; i++)
        step.dims[i - 1] = input->dims[i];
    return tw_layer_build(self->children[0], &step, rng);
}

static tw_tensor *td_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    int nd = tw_tensor_ndim(x);
    const int64_t *shape = tw_tensor_shape(x);
    if (nd < 3)
        return (TW_LAYER_ERROR(self, "expected input (batch, timesteps, ...) of rank 3 or more, got rank %d", nd),
                NULL);
    int64_t folded[TW_MAX_DIMS] = {shape[0] * shape[1]};
    for (int i = 2; i < nd; i++)
        folded[i - 1] = shape[i];
    tw_tensor *y = tw_layer_call_ex(self->children[0], tw_reshape(tw_contiguous(x), nd - 1, folded), ctx);
    if (!y)
        return NULL;
    int ny = tw_tensor_ndim(y);
    int64_t unfolded[TW_MAX_DIMS] = {shape[0], shape[1]};
    for (int i = 1; i < ny; i++)
        unfolded[i + 1] = tw_tensor_dim(y, i);
    return tw_reshape(y, ny + 1, unfolded);
}

const tw_layer_class tw_layer_class_TimeDistributed = {
    .name = "TimeDistributed",
    .group = "Recurrent",
    .summary = "Applies one layer to every timestep of a sequence, with one set of weights",
    .configure = td_configure,
    .infer = td_infer,
    .call = td_call,
    .build_children = td_build_children,
    .infer_wrapped = td_infer_wrapped,
};
