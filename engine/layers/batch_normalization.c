/* BatchNormalization: normalise each feature (the `axis` entries) by the
 * batch's mean and variance while training, by moving averages of them in
 * inference, then scale by gamma and shift by beta.
 *
 * While training, the moving statistics follow Keras' update
 *     moving = moving * momentum + batch * (1 - momentum)
 * with the batch's population variance; the update is not recorded on any
 * tape (it is state, not part of the function being differentiated). As in
 * Keras 2, a frozen layer (trainable false) always runs in inference mode,
 * which is what fine-tuning a pretrained trunk needs.
 *
 * In data-parallel training (tw_call_context.sync_batch_stats) the batch
 * statistics are the global batch's, as SyncBN's: each rank's mean, then
 * its variance around the global mean, averaged over the ranks weighted by
 * their examples. So N ranks at batch B train as one process at batch N x B,
 * and the moving statistics stay equal on every rank. */
#include <string.h>

#include "distributed_internal.h"
#include "layer_internal.h"

enum {
    AXIS, MOMENTUM, EPSILON, CENTER, SCALE,
    BETA_INIT, GAMMA_INIT, MEAN_INIT, VARIANCE_INIT, BETA_REG, GAMMA_REG,
};

static const tw_param_def params[] = {
    [AXIS] = {"axis", TW_PARAM_INTS, "-1", -TW_MAX_DIMS, TW_MAX_DIMS - 1, 0,
              .help = "The feature axis (or axes) that keeps its own statistics; -1 is the last"},
    [MOMENTUM] = {"momentum", TW_PARAM_FLOAT, "0.99", 0, 1, .help = "How slowly the moving statistics follow the batches"},
    [EPSILON] = {"epsilon", TW_PARAM_FLOAT, "0.001", 0, 1e9, .help = "Added to the variance to avoid dividing by zero"},
    [CENTER] = {"center", TW_PARAM_BOOL, "true", .help = "Learn an offset beta"},
    [SCALE] = {"scale", TW_PARAM_BOOL, "true", .help = "Learn a scale gamma"},
    [BETA_INIT] = {"beta_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How beta starts"},
    [GAMMA_INIT] = {"gamma_initializer", TW_PARAM_CHOICE, "ones", .choices = tw_initializer_names,
                    .help = "How gamma starts"},
    [MEAN_INIT] = {"moving_mean_initializer", TW_PARAM_CHOICE, "zeros", .choices = tw_initializer_names,
                   .help = "How the moving mean starts"},
    [VARIANCE_INIT] = {"moving_variance_initializer", TW_PARAM_CHOICE, "ones", .choices = tw_initializer_names,
                       .help = "How the moving variance starts"},
    [BETA_REG] = {"beta_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on beta"},
    [GAMMA_REG] = {"gamma_regularizer", TW_PARAM_REGULARIZER, "", .help = "L1/L2 penalty on gamma"},
};

/* The feature axes normalised against the rank: is_feature[d] for each axis
 * d, and the shape statistics broadcast in (size 1 off the feature axes). */
static int feature_axes(const tw_layer *self, const tw_shape *input, bool *is_feature, tw_shape *broadcast)
{
    const tw_param_value *axis = tw_layer_param(self, AXIS);
    char buf[96];
    memset(is_feature, 0, sizeof(bool) * TW_MAX_DIMS);
    *broadcast = (tw_shape){input->ndim};
    for (int d = 0; d < input->ndim; d++)
        broadcast->dims[d] = 1;
    for (int i = 0; i < axis->n; i++) {
        int64_t a = axis->ints[i] < 0 ? axis->ints[i] + input->ndim : axis->ints[i];
        if (a < 0 || a >= input->ndim)
            return TW_LAYER_ERROR(self, "axis %lld is out of range for input %s", (long long)axis->ints[i],
                                  tw_shape_format(input, buf, sizeof buf));
        if (is_feature[a])
            return TW_LAYER_ERROR(self, "axis %lld is given twice", (long long)a);
        if (input->dims[a] < 0)
            return TW_LAYER_ERROR(self, "the size of axis %lld of input %s must be known", (long long)a,
                                  tw_shape_format(input, buf, sizeof buf));
        is_feature[a] = true;
        broadcast->dims[a] = input->dims[a];
    }
    return 0;
}

static int bn_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    bool is_feature[TW_MAX_DIMS];
    tw_shape shape;
    if (feature_axes(self, input, is_feature, &shape))
        return -1;
    /* One axis: weights of shape (C,) as Keras; several: the broadcast shape. */
    const tw_param_value *axis = tw_layer_param(self, AXIS);
    if (axis->n == 1)
        shape = (tw_shape){1, {tw_shape_numel(&shape)}};
    *nw = 0;
    if (tw__param_bool(self, SCALE))
        w[(*nw)++] = (tw_weight_spec){"gamma", shape, tw__param_choice(self, GAMMA_INIT), true, "gamma_regularizer"};
    if (tw__param_bool(self, CENTER))
        w[(*nw)++] = (tw_weight_spec){"beta", shape, tw__param_choice(self, BETA_INIT), true, "beta_regularizer"};
    w[(*nw)++] = (tw_weight_spec){"moving_mean", shape, tw__param_choice(self, MEAN_INIT), false, NULL};
    w[(*nw)++] = (tw_weight_spec){"moving_variance", shape, tw__param_choice(self, VARIANCE_INIT), false, NULL};
    *output = *input;
    return 0;
}

static tw_tensor *weight_named(const tw_layer *self, const char *name)
{
    for (int i = 0; i < self->nweights; i++)
        if (!strcmp(self->specs[i].name, name))
            return self->weights[i];
    return NULL;
}

/* moving = moving * momentum + batch * (1 - momentum), off the tapes. */
static int update_moving(tw_layer *self, tw_tensor *mean, tw_tensor *variance)
{
    double momentum = tw__param_float(self, MOMENTUM);
    tw_tensor *stats[2] = {weight_named(self, "moving_mean"), weight_named(self, "moving_variance")};
    tw_tensor *batch[2] = {mean, variance};
    int rc = 0;
    tw_tape_pause();
    for (int i = 0; i < 2 && !rc; i++) {
        tw_tensor *b = tw_reshape(batch[i], tw_tensor_ndim(stats[i]), tw_tensor_shape(stats[i]));
        rc = tw_assign(stats[i], tw_add(tw_mul_scalar(stats[i], momentum), tw_mul_scalar(b, 1 - momentum)));
    }
    tw_tape_resume();
    return rc;
}

/* The moments over every rank's batch (kept dimensions), as tw_moments
 * computes them on one: the mean first, then the variance around it. */
static int sync_moments(tw_tensor *x, int nreduce, const int *reduce, tw_tensor **mean, tw_tensor **variance)
{
    double count = 1;
    for (int i = 0; i < nreduce; i++)
        count *= (double)tw_tensor_dim(x, reduce[i]);
    *mean = tw__allreduce_weighted_mean(tw_mean(x, nreduce, reduce, true), count);
    *variance = *mean ? tw__allreduce_weighted_mean(tw_mean(tw_square(tw_sub(x, *mean)), nreduce, reduce, true), count)
                      : NULL;
    return *variance ? 0 : -1;
}

/* Training with the features on the last axis: the fused batch_norm op (one
 * pass for the statistics, one for y), on any device. The moving variance
 * gets the batch variance back from inv_std = 1 / sqrt(variance + epsilon),
 * equal to the composite path's to float rounding of variance + epsilon. */
static tw_tensor *fused_call(tw_layer *self, tw_tensor *x)
{
    double epsilon = tw__param_float(self, EPSILON);
    tw_tensor *moving = weight_named(self, "moving_mean");
    tw_tensor *gamma = weight_named(self, "gamma"), *beta = weight_named(self, "beta");
    tw_tensor *y, *mean, *inv;
    if (tw_batch_norm(x, gamma ? gamma : tw_ones_like(moving), beta ? beta : tw_zeros_like(moving), epsilon, &y,
                      &mean, &inv) < 0)
        return NULL;
    tw_tape_pause();
    tw_tensor *variance = tw_sub_scalar(tw_rdiv_scalar(1, tw_square(inv)), epsilon);
    tw_tape_resume();
    return update_moving(self, mean, variance) ? NULL : y;
}

static tw_tensor *bn_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx)
{
    tw_shape in = {tw_tensor_ndim(x)}, shape;
    memcpy(in.dims, tw_tensor_shape(x), sizeof(int64_t) * in.ndim);
    bool is_feature[TW_MAX_DIMS];
    if (feature_axes(self, &in, is_feature, &shape))
        return NULL;
    int reduce[TW_MAX_DIMS], nreduce = 0;
    for (int d = 0; d < in.ndim; d++)
        if (!is_feature[d])
            reduce[nreduce++] = d;

    tw_tensor *mean, *variance;
    /* (an input of another dtype than the weights keeps the composite path's promotion) */
    if (ctx->training && self->trainable && !ctx->sync_batch_stats && nreduce == in.ndim - 1 &&
        is_feature[in.ndim - 1] && tw_tensor_dtype(x) == tw_tensor_dtype(weight_named(self, "moving_mean")))
        return fused_call(self, x);
    if (ctx->training && self->trainable) {
        if ((ctx->sync_batch_stats ? sync_moments(x, nreduce, reduce, &mean, &variance)
                                   : tw_moments(x, nreduce, reduce, true, &mean, &variance)) ||
            update_moving(self, mean, variance))
            return NULL;
    } else {
        mean = tw_reshape(weight_named(self, "moving_mean"), shape.ndim, shape.dims);
        variance = tw_reshape(weight_named(self, "moving_variance"), shape.ndim, shape.dims);
    }
    /* y = x * inv + (beta - mean * inv) with inv = gamma / sqrt(variance + epsilon):
     * two passes over x, the rest is per feature. */
    tw_tensor *inv = tw_rsqrt(tw_add_scalar(variance, tw__param_float(self, EPSILON)));
    tw_tensor *gamma = weight_named(self, "gamma"), *beta = weight_named(self, "beta");
    if (gamma)
        inv = tw_mul(inv, tw_reshape(gamma, shape.ndim, shape.dims));
    tw_tensor *shift = tw_neg(tw_mul(mean, inv));
    if (beta)
        shift = tw_add(shift, tw_reshape(beta, shape.ndim, shape.dims));
    return tw_add(tw_mul(x, inv), shift);
}

const tw_layer_class tw_layer_class_BatchNormalization = {
    .name = "BatchNormalization",
    .group = "Normalization",
    .summary = "Normalise each feature over the batch, then scale and shift",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .infer = bn_infer,
    .call = bn_call,
};
