/* StringLookup: strings to int64 indices through a vocabulary (Keras'
 * preprocessing layer, vocabulary inline in the config). The engine has no
 * string dtype, so the layer opens, reads and writes its config, infers
 * shapes ((None,) strings to (None,) indices) and counts its parameters
 * (none), which lets models holding it summarize; calling it fails naming
 * the layer. See docs/architecture.md. */
#include "lookup.h"

static const char *string_lookup_cannot_run(const tw_layer *self)
{
    (void)self;
    return "maps strings to indices, and the engine has no string tensors: a model holding it opens, summarizes "
           "and shows its shapes, but cannot run; feed the indices instead";
}

static tw_tensor *string_lookup_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    (void)x;
    (void)ctx;
    TW_LAYER_ERROR(self, "%s", string_lookup_cannot_run(self));
    return NULL;
}

static int string_lookup_configure(tw_layer *self)
{
    return lookup_configure(self, false, "[UNK]");
}

const tw_layer_class tw_layer_class_StringLookup = {
    .name = "StringLookup",
    .group = "Preprocessing",
    .summary = "Strings to vocabulary indices (opens and summarizes; cannot run: no string tensors)",
    .params = lookup_params,
    .nparams = LOOKUP_NPARAMS,
    .state_size = sizeof(lookup_state),
    .configure = string_lookup_configure,
    .infer = lookup_infer,
    .call = string_lookup_call,
    .finalize = lookup_finalize,
    .clone_extra = lookup_clone_extra,
    .cannot_run = string_lookup_cannot_run,
};
