/* Embedding: integer indices -> rows of a learned table. Input (batch,
 * length) of indices in [0, input_dim); output (batch, length, output_dim).
 * Float inputs (what a float32 dataset gives) are cast to int32, as Keras
 * does. The gradient reaches the table through gather's rule (a scatter-add
 * into the rows that were used).
 * mask_zero is read and written as Keras has it, but Keras' masking (index
 * 0 as a padded step that LSTMs skip and the loss leaves out) is not done
 * here: a layer with it set cannot run, rather than give results that
 * differ from Keras' on padded input. */
#include <stdio.h>

#include "layer_internal.h"

enum { INPUT_DIM, OUTPUT_DIM, EMBEDDINGS_INIT, EMBEDDINGS_REG, MASK_ZERO, INPUT_LENGTH };

static const tw_param_def params[] = {
    [INPUT_DIM] = {"input_dim", TW_PARAM_INT, "1000", 1, 1e9, .help = "Vocabulary size: indices run from 0 to input_dim - 1"},
    [OUTPUT_DIM] = {"output_dim", TW_PARAM_INT, "32", 1, 1e9, .help = "Length of each embedding vector"},
    [EMBEDDINGS_INIT] = {"embeddings_initializer", TW_PARAM_CHOICE, "random_uniform", .choices = tw_initializer_names,
                         .help = "How the table starts"},
    [EMBEDDINGS_REG] = {"embeddings_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on the table"},
    [MASK_ZERO] = {"mask_zero", TW_PARAM_BOOL, "false",
                   .help = "Keras: index 0 marks a padded step that later layers skip. Not done here: a "
                           "model with it set opens and summarizes but cannot run"},
    [INPUT_LENGTH] = {"input_length", TW_PARAM_INT, "", 1, 1e9, .nullable = true,
                      .help = "Length of the sequences when fixed; the input must match it"},
};

static int embedding_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                           int *nw)
{
    char buf[96];
    const tw_param_value *length = tw_layer_param(self, INPUT_LENGTH);
    if (input->ndim < 1 || input->ndim >= TW_MAX_DIMS)
        return TW_LAYER_ERROR(self, "expected input (batch, length) of indices, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    if (!length->is_null && (input->ndim != 2 || (input->dims[1] >= 0 && input->dims[1] != length->number)))
        return TW_LAYER_ERROR(self, "input_length is %lld but the input is %s", (long long)length->number,
                              tw_shape_format(input, buf, sizeof buf));
    int64_t in = tw__param_int(self, INPUT_DIM), out = tw__param_int(self, OUTPUT_DIM);
    *output = *input;
    if (!length->is_null)
        output->dims[1] = (int64_t)length->number;
    output->dims[output->ndim++] = out;
    w[0] = (tw_weight_spec){"embeddings", {2, {in, out}}, tw__param_choice(self, EMBEDDINGS_INIT), true,
                            "embeddings_regularizer"};
    *nw = 1;
    return 0;
}

static const char *embedding_cannot_run(const tw_layer *self)
{
    return tw__param_bool(self, MASK_ZERO) ? "mask_zero=true masks padded steps, which this engine does not do yet; "
                                             "set mask_zero to false to run it without the mask"
                                           : NULL;
}

static tw_tensor *embedding_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    if (embedding_cannot_run(self)) {
        TW_LAYER_ERROR(self, "%s", embedding_cannot_run(self));
        return NULL;
    }
    tw_dtype dtype = tw_tensor_dtype(x);
    if (dtype != TW_INT32 && dtype != TW_INT64)
        x = tw_cast(x, TW_INT32);
    tw_tensor *y = tw_gather(self->weights[0], x, 0);
    if (!y) { /* "Embedding 'words': gather: index 12 at position 3 is out of range for axis 0 of size 10" */
        char why[512];
        snprintf(why, sizeof why, "%s", tw_last_error());
        TW_LAYER_ERROR(self, "%s", why);
    }
    return y;
}

const tw_layer_class tw_layer_class_Embedding = {
    .name = "Embedding",
    .group = "Core",
    .summary = "Turn integer indices (words, ids) into learned vectors",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = embedding_infer,
    .call = embedding_call,
    .cannot_run = embedding_cannot_run,
};
