/* 2-D convolution, NHWC input, HWIO filter (see conv_kernels.h): the entry
 * points, which choose one of three implementations per pass.
 *
 * gemm path (conv_gemm.c; any float dtype, any CPU): im2col of a chunk of
 * output rows into the workspace, then one twk_gemm per chunk; the input
 * gradient as the forward pass of twk_conv_input_grad_shape at stride 1
 * (when it moves less memory), col2im otherwise. 1x1 stride-1 unpadded
 * convolutions are a single gemm.
 *
 * direct path (conv_direct.c, with the register tiles of conv_tiles.c;
 * float32, AVX-512): the same products, but the column matrix is never
 * built. The input gradient at stride 1 is the same forward kernel run on
 * the output gradient with the filter flipped and transposed (the
 * convolution twk_conv_input_grad_shape describes); at larger strides the tile
 * computes the column matrix for col2im.
 *
 * Winograd F(2x2, 3x3) (conv_winograd.c; float32, AVX-512, 3x3 stride 1,
 * 16+ channels in and out): 2.25x fewer multiplications, on the direct
 * path's tiles. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"

/* ---- switches -------------------------------------------------------------- */

static atomic_int direct_state = -1; /* -1 unknown, 0 off, 1 on */
static atomic_int winograd_state = -1;

/* Whether a switch is on: on first use, on unless $name is "0" or the CPU
 * lacks what it needs (available, when not NULL, says). */
static bool switch_on(atomic_int *state, const char *name, bool (*available)(void))
{
    int st = atomic_load_explicit(state, memory_order_relaxed);
    if (st < 0) {
        const char *env = getenv(name);
        st = (!available || available()) && !(env && strcmp(env, "0") == 0);
        atomic_store_explicit(state, st, memory_order_relaxed);
    }
    return st == 1;
}

bool twk_conv2d_direct_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}

static bool direct_enabled(void) { return switch_on(&direct_state, "TW_CONV_DIRECT", twk_conv2d_direct_available); }
static bool winograd_enabled(void) { return switch_on(&winograd_state, "TW_CONV_WINOGRAD", NULL); }

bool twk_conv2d_set_direct(bool enabled)
{
    bool was = direct_enabled();
    atomic_store_explicit(&direct_state, enabled && twk_conv2d_direct_available(), memory_order_relaxed);
    return was;
}

bool twk_conv2d_set_winograd(bool enabled)
{
    bool was = winograd_enabled();
    atomic_store_explicit(&winograd_state, enabled, memory_order_relaxed);
    return was;
}

/* ---- choosing a path ------------------------------------------------------- */

static bool use_direct(twk_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    return dtype == TWK_FLOAT32 && direct_enabled();
}

static bool use_winograd(twk_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    if (!use_direct(dtype, s, pass) || !winograd_enabled())
        return false;
    if (pass == TWK_CONV_BACKPROP_INPUT) {
        twk_conv2d_shape t = twk_conv_input_grad_shape(s);
        return twk_conv_input_grad_as_forward(s) && twk_conv_winograd_shape_ok(&t);
    }
    return twk_conv_winograd_shape_ok(s);
}

/* The direct kernels use aligned vector loads and stores on the workspace:
 * ask for 64 bytes more and align it here rather than trust the caller. */
static char *aligned(void *workspace)
{
    return (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
}

/* ---- entry points ---------------------------------------------------------- */

size_t twk_conv2d_workspace(twk_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    if (use_winograd(dtype, s, pass)) {
        twk_conv2d_shape t = twk_conv_input_grad_shape(s);
        return 64 + twk_conv_winograd_workspace(pass == TWK_CONV_BACKPROP_INPUT ? &t : s,
                                                pass == TWK_CONV_BACKPROP_FILTER);
    }
    if (!use_direct(dtype, s, pass))
        return pass == TWK_CONV_BACKPROP_INPUT ? twk_conv_gemm_input_grad_workspace(dtype, s)
                                               : twk_conv_gemm_workspace(dtype, s);
    switch (pass) {
    case TWK_CONV_FORWARD: return 64 + twk_conv_direct_forward_workspace(s);
    case TWK_CONV_BACKPROP_INPUT: {
        if (!twk_conv_input_grad_as_forward(s))
            return 64 + twk_conv_direct_input_grad_cols_workspace(s);
        twk_conv2d_shape t = twk_conv_input_grad_shape(s);
        return 64 + twk_conv_direct_forward_workspace(&t);
    }
    case TWK_CONV_BACKPROP_FILTER: return 64 + twk_conv_direct_filter_workspace(s);
    }
    return 0;
}

void twk_conv2d_forward(twk_dtype dtype, const twk_conv2d_shape *s, const void *input, const void *filter,
                        void *output, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_FORWARD)) {
        twk_conv_gemm_forward(dtype, s, input, filter, output, workspace);
        return;
    }
    if (out_pixels(s) == 0 || s->out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_FORWARD))
        twk_conv_winograd_forward(s, filter, false, input, output, aligned(workspace));
    else
        twk_conv_direct_forward(s, filter, false, input, output, aligned(workspace));
}

void twk_conv2d_backprop_input(twk_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                               const void *grad_output, void *grad_input, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_BACKPROP_INPUT)) {
        twk_conv_gemm_backprop_input(dtype, s, filter, grad_output, grad_input, workspace);
        return;
    }
    if (!twk_conv_input_grad_as_forward(s)) {
        twk_conv_direct_input_grad_cols(s, filter, grad_output, grad_input, aligned(workspace));
        return;
    }
    twk_conv2d_shape t = twk_conv_input_grad_shape(s);
    if (out_pixels(&t) == 0 || t.out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_BACKPROP_INPUT))
        twk_conv_winograd_forward(&t, filter, true, grad_output, grad_input, aligned(workspace));
    else
        twk_conv_direct_forward(&t, filter, true, grad_output, grad_input, aligned(workspace));
}

void twk_conv2d_backprop_filter(twk_dtype dtype, const twk_conv2d_shape *s, const void *input,
                                const void *grad_output, void *grad_filter, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_BACKPROP_FILTER)) {
        twk_conv_gemm_backprop_filter(dtype, s, input, grad_output, grad_filter, workspace);
        return;
    }
    if (k_size(s) == 0 || s->out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_BACKPROP_FILTER))
        twk_conv_winograd_backprop_filter(s, input, grad_output, grad_filter, aligned(workspace));
    else
        twk_conv_direct_backprop_filter(s, input, grad_output, grad_filter, aligned(workspace));
}
