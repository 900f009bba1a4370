/* Bidirectional, Keras' wrapper for recurrent layers: the sequence is read
 * by a forward layer and by a backward one (the same layer with
 * go_backwards flipped, or a backward_layer of its own), and the two
 * outputs merge by concatenation, sum, product or mean (merge_mode None:
 * both are outputs; with the wrapped layer's return_state, the final
 * states follow, forward first). A backward
 * layer's sequence output comes out in reading order, last step first; it
 * is reversed back before merging. The two layers are the wrapper's
 * children 0 ("forward_<name>") and 1 ("backward_<name>"), so its weights
 * are the forward layer's, then the backward layer's, as in Keras. */
#include <string.h>

#include "wrapper.h"

extern const tw_layer_class tw_layer_class_Bidirectional;

enum { MERGE_MODE };

static const char *const merge_modes[] = {"concat", "sum", "mul", "ave", NULL};

static const tw_param_def params[] = {
    {"merge_mode", TW_PARAM_CHOICE, "concat", .choices = merge_modes, .nullable = true,
     .help = "How the forward and backward outputs combine: concat, sum, mul or ave; none gives both"},
};

/* Keras' usual Bidirectional(LSTM(...)) until tw_layer_wrap replaces it. */
static int bidirectional_configure(tw_layer *self)
{
    return wrapper_default_layer(self, "LSTM");
}

static bool flag(const tw_layer *layer, const char *key)
{
    return tw_layer_get(layer, key)->number != 0;
}

static const char *yes_no(bool value)
{
    return value ? "true" : "false";
}

static int check_recurrent(const tw_layer *self, const tw_layer *layer, const char *role)
{
    if (tw_layer_class_param(layer->klass, "go_backwards") && tw_layer_class_param(layer->klass, "return_sequences"))
        return 0;
    return TW_LAYER_ERROR(self, "its %s layer is a %s; Bidirectional wraps a recurrent layer (SimpleRNN, LSTM, GRU)",
                          role, layer->klass->name);
}

/* Keras' _verify_layer_config. */
static int check_pair(const tw_layer *self, const tw_layer *forward, const tw_layer *backward)
{
    bool fb = flag(forward, "go_backwards"), bb = flag(backward, "go_backwards");
    bool fs = flag(forward, "return_sequences"), bs = flag(backward, "return_sequences");
    if (fb == bb)
        return TW_LAYER_ERROR(self, "the forward layer '%s' and the backward layer '%s' both have go_backwards=%s; "
                                    "they must differ",
                              forward->name, backward->name, yes_no(fb));
    if (fs != bs)
        return TW_LAYER_ERROR(self, "the forward layer '%s' has return_sequences=%s and the backward layer '%s' %s; "
                                    "they must match",
                              forward->name, yes_no(fs), backward->name, yes_no(bs));
    return 0;
}

int tw__bidirectional_wrap(tw_layer *self, tw_layer *layer)
{
    tw_layer *backward = NULL;
    if (check_recurrent(self, layer, "wrapped") || wrapper_adopt(self, layer, "forward_"))
        goto fail;
    /* The copy is named from the forward layer's name less "forward_". */
    backward = tw_layer_clone(layer, layer->name + strlen("forward_"));
    if (!backward || tw_layer_set(backward, "go_backwards", yes_no(!flag(layer, "go_backwards"))) ||
        wrapper_adopt(self, backward, "backward_"))
        goto fail;
    wrapper_set_child(self, 0, layer);
    wrapper_set_child(self, 1, backward);
    return 0;
fail:
    tw_layer_unref(layer);
    tw_layer_unref(backward);
    return -1;
}

int tw_bidirectional_set_backward(tw_layer *self, tw_layer *backward)
{
    int rc = wrapper_check_wrap(self, backward);
    if (!rc && self->klass != &tw_layer_class_Bidirectional)
        rc = TW_LAYER_ERROR(self, "only a Bidirectional layer has a backward layer");
    if (!rc && !self->nchildren)
        rc = TW_LAYER_ERROR(self, "wrap the forward layer before setting the backward one");
    if (!rc)
        rc = check_recurrent(self, backward, "backward");
    if (!rc)
        rc = wrapper_adopt(self, backward, "backward_");
    if (!rc)
        rc = check_pair(self, self->children[0], backward);
    if (rc) {
        tw_layer_unref(backward);
        return -1;
    }
    wrapper_set_child(self, 1, backward);
    return 0;
}

static int merge_shapes(const tw_layer *self, const tw_shape *f, const tw_shape *b, tw_shape *out)
{
    char a[96], c[96];
    const char *mode = tw_layer_param(self, MERGE_MODE)->choice;
    bool concat = !strcmp(mode, "concat");
    bool same = f->ndim == b->ndim;
    for (int i = 1; same && i < f->ndim - concat; i++)
        same = f->dims[i] == b->dims[i];
    if (!same)
        return TW_LAYER_ERROR(self, "merge_mode %s cannot merge the forward output %s with the backward output %s",
                              mode, tw_shape_format(f, a, sizeof a), tw_shape_format(b, c, sizeof c));
    *out = *f;
    if (concat)
        out->dims[f->ndim - 1] += b->dims[f->ndim - 1];
    return 0;
}

/* The states each direction has: LSTM's h and c, the others' h. */
static int nstates_of(const tw_layer *layer)
{
    return strcmp(layer->klass->name, "LSTM") ? 1 : 2;
}

/* Keras' initial_state for Bidirectional: the forward layer's states, then
 * the backward layer's. in[0] is the sequence. */
static int split_states(const tw_layer *self, int ninputs, int *nstates)
{
    *nstates = nstates_of(self->children[0]);
    if (ninputs == 1 || ninputs == 1 + 2 * *nstates)
        return 0;
    return TW_LAYER_ERROR(self, "takes a sequence and %d initial states (the forward layer's %d, then the backward "
                                "layer's), got %d input%s besides the sequence",
                          2 * *nstates, *nstates, ninputs - 1, ninputs == 2 ? "" : "s");
}

/* Outputs: the merged output (merge_mode None: the forward and the backward
 * output), then with return_state the forward layer's final states and the
 * backward layer's, as Keras lists them. */
static int bidirectional_infer_wrapped_n(const tw_layer *self, const tw_shape *inputs, int ninputs,
                                         tw_shape *outputs, int *noutputs, int64_t *trainable,
                                         int64_t *non_trainable)
{
    int ns;
    if (check_pair(self, self->children[0], self->children[1]) || split_states(self, ninputs, &ns))
        return -1;
    int each = ninputs == 1 ? 1 : 1 + ns;
    tw_shape fin[3] = {inputs[0]}, bin[3] = {inputs[0]}, f[TW_MAX_LAYER_IO], b[TW_MAX_LAYER_IO];
    for (int i = 1; i < each; i++) {
        fin[i] = inputs[i];
        bin[i] = inputs[ns + i];
    }
    int64_t ft, fnt, bt, bnt;
    int nf, nb, n = 0;
    if (tw_layer_infer_n(self->children[0], fin, each, f, &nf, &ft, &fnt) ||
        tw_layer_infer_n(self->children[1], bin, each, b, &nb, &bt, &bnt))
        return -1;
    if (tw_layer_param(self, MERGE_MODE)->is_null) {
        outputs[n++] = f[0];
        outputs[n++] = b[0];
    } else if (merge_shapes(self, &f[0], &b[0], &outputs[n++])) {
        return -1;
    }
    for (int i = 1; i < nf; i++)
        outputs[n++] = f[i];
    for (int i = 1; i < nb; i++)
        outputs[n++] = b[i];
    *noutputs = n;
    *trainable = self->trainable ? ft + bt : 0;
    *non_trainable = fnt + bnt + (self->trainable ? 0 : ft + bt);
    return 0;
}

static int bidirectional_infer_n(const tw_layer *self, const tw_shape *inputs, int ninputs, tw_shape *outputs,
                                 int *noutputs, tw_weight_spec *w, int *nw)
{
    int64_t t, nt;
    (void)w;
    *nw = 0;
    return bidirectional_infer_wrapped_n(self, inputs, ninputs, outputs, noutputs, &t, &nt);
}

/* Forward first, as Keras builds them: the weights draw in that order. */
static int bidirectional_build_children(tw_layer *self, const tw_shape *input, tw_rng *rng)
{
    return tw_layer_build(self->children[0], input, rng) || tw_layer_build(self->children[1], input, rng) ? -1 : 0;
}

/* y[:, ::-1] */
static tw_tensor *reverse_time(tw_tensor *y)
{
    int64_t steps = tw_tensor_dim(y, 1);
    return tw_gather(y, tw_arange((double)steps - 1, -1, -1, TW_INT64), 1);
}

static tw_tensor *merge(const tw_layer *self, tw_tensor *y, tw_tensor *y_rev)
{
    const char *mode = tw_layer_param(self, MERGE_MODE)->choice;
    if (!strcmp(mode, "concat"))
        return tw_concat(TW_TENSORS(y, y_rev), tw_tensor_ndim(y) - 1);
    if (!strcmp(mode, "sum"))
        return tw_add(y, y_rev);
    if (!strcmp(mode, "mul"))
        return tw_mul(y, y_rev);
    return tw_mul_scalar(tw_add(y, y_rev), 0.5);
}

static int bidirectional_call_n(tw_layer *self, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs,
                                const tw_call_context *ctx)
{
    tw_layer *forward = self->children[0], *backward = self->children[1];
    int ns;
    if (split_states(self, ninputs, &ns))
        return -1;
    int each = ninputs == 1 ? 1 : 1 + ns;
    tw_tensor *fin[3] = {inputs[0]}, *bin[3] = {inputs[0]}, *f[TW_MAX_LAYER_IO], *b[TW_MAX_LAYER_IO];
    for (int i = 1; i < each; i++) {
        fin[i] = inputs[i];
        bin[i] = inputs[ns + i];
    }
    int nf = tw_layer_call_n(forward, fin, each, f, ctx);
    int nb = nf > 0 ? tw_layer_call_n(backward, bin, each, b, ctx) : -1;
    if (nb < 1)
        return -1;
    if (flag(backward, "return_sequences") && !(b[0] = reverse_time(b[0])))
        return -1;
    int n = 0;
    if (tw_layer_param(self, MERGE_MODE)->is_null) {
        outputs[n++] = f[0];
        outputs[n++] = b[0];
    } else if (!(outputs[n++] = merge(self, f[0], b[0]))) {
        return -1;
    }
    for (int i = 1; i < nf; i++)
        outputs[n++] = f[i];
    for (int i = 1; i < nb; i++)
        outputs[n++] = b[i];
    return n;
}

const tw_layer_class tw_layer_class_Bidirectional = {
    .name = "Bidirectional",
    .group = "Recurrent",
    .summary = "Runs a recurrent layer forwards and backwards over the sequence and merges the two",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .configure = bidirectional_configure,
    .infer_n = bidirectional_infer_n,
    .call_n = bidirectional_call_n,
    .build_children = bidirectional_build_children,
    .infer_wrapped_n = bidirectional_infer_wrapped_n,
};
