/* What the convolution files share (conv.c chooses the algorithm;
 * conv_gemm.c, conv_direct.c, conv_winograd.c and conv_tiles.c hold them):
 * small geometry helpers, the register tiles' arguments and tables, and
 * each algorithm's passes. The functions declared here are hidden: they are
 * no part of libtw-engine's interface. */
#ifndef TWK_CONV_INTERNAL_H
#define TWK_CONV_INTERNAL_H

#include <immintrin.h>
#include <omp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_kernels.h"
#include "cpu_kernels.h"

#define OBLOCK 64           /* output channels per register tile */
#define TILE_ROWS 6         /* pixels (forward) or K rows (filter grad) per tile */
#define TAP_TILE_MAX 8      /* pixels per tap tile, when a block has at most 2 vectors */
#define TAP_MIN_CHANNELS 16 /* input channels from which the direct path reads tap by tap */

#define TW_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma")))
#define ALWAYS_INLINE inline __attribute__((always_inline))

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t align64(int64_t bytes) { return (bytes + 63) & ~(int64_t)63; }

static inline int64_t k_size(const twk_conv2d_shape *s) { return s->k_h * s->k_w * s->in_c; }
static inline int64_t out_pixels(const twk_conv2d_shape *s) { return s->batch * s->out_h * s->out_w; }
/* Blocks of OBLOCK output channels. */
static inline int64_t nblocks(const twk_conv2d_shape *s) { return (s->out_c + OBLOCK - 1) / OBLOCK; }

/* The first n lanes of a vector (all 16 from n = 16 on, none for n <= 0). */
static inline __mmask16 first_lanes(int64_t n)
{
    return (__mmask16)(n <= 0 ? 0 : n >= 16 ? 0xFFFF : (1u << n) - 1);
}

/* Vectors in block ob of width channels and the lanes of its last one. */
static inline int block_vectors(int64_t width, int64_t ob, __mmask16 *mask)
{
    int64_t w = imin(OBLOCK, width - ob * OBLOCK);
    int v = (int)((w + 15) / 16);
    *mask = first_lanes(w - 16 * (v - 1));
    return v;
}

/* The convolution whose forward pass is the input gradient at stride 1:
 * dy convolved with the filter flipped in space, in and out channels
 * swapped, padded by what the dilated kernel reaches less the forward
 * padding. */
static inline twk_conv2d_shape twk_conv_input_grad_shape(const twk_conv2d_shape *s)
{
    twk_conv2d_shape t = *s;
    t.in_h = s->out_h;
    t.in_w = s->out_w;
    t.in_c = s->out_c;
    t.out_h = s->in_h;
    t.out_w = s->in_w;
    t.out_c = s->in_c;
    t.pad_top = (s->k_h - 1) * s->dilation_h - s->pad_top;
    t.pad_left = (s->k_w - 1) * s->dilation_w - s->pad_left;
    return t;
}

/* Whether twk_conv_input_grad_shape describes the input gradient. */
static inline bool twk_conv_input_grad_as_forward(const twk_conv2d_shape *s)
{
    return s->stride_h == 1 && s->stride_w == 1 && s->pad_top <= (s->k_h - 1) * s->dilation_h &&
           s->pad_left <= (s->k_w - 1) * s->dilation_w;
}

/* This thread's equal share [*lo, *hi) of n jobs, inside a parallel region. */
static inline void thread_share(int64_t n, int64_t *lo, int64_t *hi)
{
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}

#pragma GCC visibility push(hidden)

/* ---- register tiles (conv_tiles.c) ----------------------------------------
 * Each table entry [R][V] multiplies R rows by V vectors of 16 output
 * channels (V = 1..4, from block_vectors). */

/* out[r][0, 64) = sum over i < n_outer, k < n_inner, j < len of
 *     a[r][i * a_outer + k * a_inner + j] x (the next row of b),
 * the rows of b taken in order: a row of the virtual column matrix times a
 * block of the packed filter. */
typedef struct {
    const float *a[TILE_ROWS]; /* each pixel's first tap in the padded source */
    float *out[TILE_ROWS];     /* each pixel's first output channel of the block */
    const float *b;            /* packed filter block, [K][64] */
    int64_t n_outer, n_inner, len, a_outer, a_inner;
    __mmask16 last_mask; /* lanes of the last vector that exist */
} fwd_args;

/* The same product read tap by tap from the image (in_c >= TAP_MIN_CHANNELS),
 * a tap in the padding reading zeros; up to TAP_TILE_MAX pixels when the
 * block has at most 2 vectors. */
typedef struct {
    const float *img[TAP_TILE_MAX];               /* the image each pixel reads */
    int64_t ih0[TAP_TILE_MAX], iw0[TAP_TILE_MAX]; /* its window's first row/column (may be < 0) */
    float *out[TAP_TILE_MAX];
    const float *b;     /* packed filter block, [K][64] */
    const float *zeros; /* in_c zeros */
    int64_t in_h, in_w, c, k_h, k_w, dh, dw;
    __mmask16 last_mask;
} tap_args;

/* part[r][0, 64) += sum over pixels of src[pixel + a_off + r] x dy[pixel]: a
 * reduction over pixels with the roles of the tile swapped (R filter rows x
 * 64 output channels). The pixels are rows r0 .. r1 - 1 (n * out_h + oh) of
 * out_w each; pixel (n, oh, ow) starts at n * img_step + oh * row_step +
 * ow * pix_step in src and at ((n * out_h + oh) * out_w + ow) * out_c in dy. */
typedef struct {
    const float *src;  /* padded source of the chunk */
    const float *dy;   /* output gradient of the chunk, block offset applied */
    float *part;       /* partial filter gradient rows, [R][ldp] */
    int64_t ldp;       /* row stride of part */
    int64_t r0, r1;    /* output rows (n * out_h + oh) of the chunk */
    int64_t a_off;     /* tap offset within a pixel's padded window */
    int64_t out_h, out_w, out_c, row_step, pix_step, img_step;
    __mmask16 last_mask;
} bwf_args;

extern void (*const twk_conv_fwd_table[TILE_ROWS + 1][5])(const fwd_args *);
extern void (*const twk_conv_tap_table[TAP_TILE_MAX + 1][5])(const tap_args *);
extern void (*const twk_conv_bwf_table[TILE_ROWS + 1][5])(const bwf_args *);

/* ---- im2col + gemm, any float dtype (conv_gemm.c) ------------------------- */
size_t twk_conv_gemm_workspace(twk_dtype dtype, const twk_conv2d_shape *s);
/* What twk_conv_gemm_backprop_input needs (more than the other passes at
 * stride 1: the flipped filter and dy's columns). */
size_t twk_conv_gemm_input_grad_workspace(twk_dtype dtype, const twk_conv2d_shape *s);
void twk_conv_gemm_forward(twk_dtype dtype, const twk_conv2d_shape *s, const char *x, const void *f, char *y,
                           char *ws);
void twk_conv_gemm_backprop_input(twk_dtype dtype, const twk_conv2d_shape *s, const void *f, const char *dy,
                                  char *dx, char *ws);
void twk_conv_gemm_backprop_filter(twk_dtype dtype, const twk_conv2d_shape *s, const char *x, const char *dy,
                                   char *df, char *ws);
/* Output rows (n, oh) per im2col chunk. */
int64_t twk_conv_chunk_rows(const twk_conv2d_shape *s, size_t itemsize);
/* dx += col2im(col) for output rows [r0, r1). */
void twk_conv_col2im_f32(const twk_conv2d_shape *s, const float *col, int64_t r0, int64_t r1, float *dx);
void twk_conv_col2im_f64(const twk_conv2d_shape *s, const double *col, int64_t r0, int64_t r1, double *dx);

/* ---- direct, float32 AVX-512 (conv_direct.c) -------------------------------
 * ws is 64-byte aligned. */
size_t twk_conv_direct_forward_workspace(const twk_conv2d_shape *s);
/* out = conv(x, filter); flip: the filter of the input-gradient convolution
 * (see pack_filter in conv_direct.c). */
void twk_conv_direct_forward(const twk_conv2d_shape *s, const float *f, bool flip, const float *x, float *y,
                             char *ws);
size_t twk_conv_direct_filter_workspace(const twk_conv2d_shape *s);
void twk_conv_direct_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df,
                                     char *ws);
/* The input gradient at any stride, through the column matrix and col2im. */
size_t twk_conv_direct_input_grad_cols_workspace(const twk_conv2d_shape *s);
void twk_conv_direct_input_grad_cols(const twk_conv2d_shape *s, const float *f, const float *dy, float *dx,
                                     char *ws);

/* ---- Winograd F(2x2, 3x3), float32 AVX-512 (conv_winograd.c) --------------
 * ws is 64-byte aligned. */
bool twk_conv_winograd_shape_ok(const twk_conv2d_shape *s);
size_t twk_conv_winograd_workspace(const twk_conv2d_shape *s, bool filter_grad);
/* out = conv(x, filter) (flip: the input gradient's convolution). */
void twk_conv_winograd_forward(const twk_conv2d_shape *s, const float *f, bool flip, const float *x, float *y,
                               char *ws);
void twk_conv_winograd_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df,
                                       char *ws);

#pragma GCC visibility pop

#endif
