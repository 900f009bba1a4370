/* A layer class of two outputs for the tests, registered as a program
 * would register one: the last axis split in halves (the shape of what
 * recurrent layers' return_state will give). */
#ifndef TW_TESTS_HALVES_LAYER_H
#define TW_TESTS_HALVES_LAYER_H

#include "tw/layers.h"
#include "tw/ops.h"

static int halves_infer_n(const tw_layer *self, const tw_shape *in, int n, tw_shape *out, int *nout,
                          tw_weight_spec *w, int *nw)
{
    (void)self;
    (void)n;
    (void)w;
    *nw = 0;
    *nout = 2;
    out[0] = out[1] = in[0];
    out[0].dims[in[0].ndim - 1] = out[1].dims[in[0].ndim - 1] = in[0].dims[in[0].ndim - 1] / 2;
    return 0;
}

static int halves_call_n(tw_layer *self, tw_tensor *const *in, int n, tw_tensor **out, const tw_call_context *ctx)
{
    (void)self;
    (void)n;
    (void)ctx;
    return tw_split(in[0], 2, -1, out) ? -1 : 2;
}

static const tw_layer_class halves_layer_class = {
    .name = "Halves", .group = "Core", .summary = "test", .infer_n = halves_infer_n, .call_n = halves_call_n};

#endif
