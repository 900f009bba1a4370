/* 2-D convolution, NHWC input, HWIO filter (see conv_kernels.h).
 *
 * Three implementations share one entry point per pass:
 *
 * gemm path (any float dtype, any CPU): im2col of a chunk of output rows
 * into the workspace, then one twk_gemm per chunk:
 *   forward          out[M, O]  = col[M, K] x filter[K, O]
 *   backprop_filter  dfil[K, O] += col[M, K]^T x dout[M, O]
 *   backprop_input   dcol[M, K] = dout[M, O] x filter[K, O]^T, then col2im
 * with M the output pixels of the chunk and K = k_h * k_w * in_c (the HWIO
 * filter is already a row-major [K, O] matrix). col2im gathers: each thread
 * owns whole input rows, so there are no races and no atomics. 1x1
 * stride-1 unpadded convolutions are a single gemm.
 *
 * direct path (float32, AVX-512): the same products, but the column matrix
 * is never built. A register tile of 6 pixels x 64 output channels (24 zmm
 * accumulators) multiplies a row of the virtual column matrix by a block of
 * the repacked filter: per step 4 vector loads and 6 broadcasts feed 24
 * FMAs. From 16 input channels the tile walks the filter tap by tap and a
 * tap in the padding reads a row of zeros; below that the input is copied
 * once into a zero-padded buffer (per image, in the thread's L2) so a
 * kernel row is one contiguous run. The input gradient at stride 1 is the
 * same forward kernel run on the output gradient with the filter flipped
 * and transposed; at larger strides the tile computes the column matrix
 * dout x filter^T for col2im. The filter gradient reduces over pixels with
 * the roles of the tile swapped (6 filter rows x 64 output channels). None
 * of it calls OpenBLAS: switching between OpenMP's and OpenBLAS's thread
 * pools on two cores costs more than the products (the idle pool spins).
 *
 * Winograd F(2x2, 3x3) (float32, AVX-512, 3x3 stride 1, 16+ channels in
 * and out): see its section below; it reuses the direct path's tiles. */
#include <immintrin.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv_kernels.h"
#include "cpu_kernels.h"

#define COLUMN_TARGET_BYTES ((int64_t)4 << 20)  /* im2col chunk */
#define PADDED_TARGET_BYTES ((int64_t)16 << 20) /* padded-input chunk (direct path) */
#define OBLOCK 64                               /* output channels per register tile */
#define TILE_ROWS 6                             /* pixels (forward) or K rows (filter grad) per tile */

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t align64(int64_t bytes) { return (bytes + 63) & ~(int64_t)63; }

static int64_t k_size(const twk_conv2d_shape *s) { return s->k_h * s->k_w * s->in_c; }
static int64_t out_pixels(const twk_conv2d_shape *s) { return s->batch * s->out_h * s->out_w; }

/* 1x1, stride 1, no padding: the convolution is one matrix product. */
static bool plain_1x1(const twk_conv2d_shape *s)
{
    return s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
           s->pad_left == 0 && s->out_h == s->in_h && s->out_w == s->in_w;
}

/* ======================================================================== */
/* gemm path                                                                */
/* ======================================================================== */

/* Output rows (n, oh) per im2col chunk: whole images when they fit. */
static int64_t chunk_rows(const twk_conv2d_shape *s, size_t itemsize)
{
    int64_t rows = s->batch * s->out_h;
    int64_t row_bytes = imax(1, s->out_w * k_size(s) * (int64_t)itemsize);
    int64_t c = imax(1, COLUMN_TARGET_BYTES / row_bytes);
    if (c >= s->out_h)
        c = c / s->out_h * s->out_h;
    return imax(1, imin(c, rows));
}

static size_t gemm_workspace(tw_dtype dtype, const twk_conv2d_shape *s)
{
    if (plain_1x1(s) || out_pixels(s) == 0 || k_size(s) == 0)
        return 0;
    size_t es = tw_dtype_size(dtype);
    return (size_t)(chunk_rows(s, es) * s->out_w * k_size(s)) * es;
}

/* Columns of output rows [r0, r1) (flattened n * out_h + oh). */
static void im2col(size_t es, const twk_conv2d_shape *s, const char *x, int64_t r0, int64_t r1, char *col)
{
    const int64_t C = s->in_c, K = k_size(s), KW = s->k_w;
    const int64_t run = KW * C * (int64_t)es, cb = C * (int64_t)es;
#pragma omp parallel for schedule(static) if ((r1 - r0) * s->out_w * K >= TWK_PARALLEL_MIN && r1 - r0 > 1)
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / s->out_h, oh = r % s->out_h;
        for (int64_t ow = 0; ow < s->out_w; ow++) {
            char *dst = col + ((r - r0) * s->out_w + ow) * K * (int64_t)es;
            int64_t iw0 = ow * s->stride_w - s->pad_left;
            for (int64_t kh = 0; kh < s->k_h; kh++) {
                char *d = dst + kh * run;
                int64_t ih = oh * s->stride_h - s->pad_top + kh * s->dilation_h;
                if (ih < 0 || ih >= s->in_h) {
                    memset(d, 0, (size_t)run);
                    continue;
                }
                const char *src = x + (n * s->in_h + ih) * s->in_w * cb;
                if (s->dilation_w == 1) {
                    int64_t lo = imin(imax(0, -iw0), KW), hi = imax(lo, imin(KW, s->in_w - iw0));
                    memset(d, 0, (size_t)(lo * cb));
                    memcpy(d + lo * cb, src + (iw0 + lo) * cb, (size_t)((hi - lo) * cb));
                    memset(d + hi * cb, 0, (size_t)((KW - hi) * cb));
                } else {
                    for (int64_t kw = 0; kw < KW; kw++) {
                        int64_t iw = iw0 + kw * s->dilation_w;
                        if (iw < 0 || iw >= s->in_w)
                            memset(d + kw * cb, 0, (size_t)cb);
                        else
                            memcpy(d + kw * cb, src + iw * cb, (size_t)cb);
                    }
                }
            }
        }
    }
}

/* dx += col2im(col) for output rows [r0, r1): every input row of the images
 * the chunk touches gathers what the chunk's columns hold for it. */
#define DEFINE_COL2IM(T, sfx)                                                                                    \
    static void col2im_##sfx(const twk_conv2d_shape *s, const T *col, int64_t r0, int64_t r1, T *dx)           \
    {                                                                                                          \
        const int64_t C = s->in_c, K = k_size(s);                                                              \
        int64_t n0 = r0 / s->out_h, n1 = (r1 - 1) / s->out_h + 1;                                              \
        int64_t nrows = (n1 - n0) * s->in_h;                                                                   \
        _Pragma("omp parallel for schedule(static) if (nrows * s->in_w * C >= TWK_PARALLEL_MIN && nrows > 1)") \
        for (int64_t q = 0; q < nrows; q++) {                                                                  \
            int64_t n = n0 + q / s->in_h, ih = q % s->in_h;                                                    \
            T *drow = dx + (n * s->in_h + ih) * s->in_w * C;                                                   \
            for (int64_t kh = 0; kh < s->k_h; kh++) {                                                          \
                int64_t t = ih + s->pad_top - kh * s->dilation_h;                                              \
                if (t < 0 || t % s->stride_h)                                                                  \
                    continue;                                                                                  \
                int64_t r = n * s->out_h + t / s->stride_h;                                                    \
                if (t / s->stride_h >= s->out_h || r < r0 || r >= r1)                                          \
                    continue;                                                                                  \
                const T *crow = col + (r - r0) * s->out_w * K + kh * s->k_w * C;                               \
                for (int64_t iw = 0; iw < s->in_w; iw++) {                                                     \
                    T *d = drow + iw * C;                                                                      \
                    for (int64_t kw = 0; kw < s->k_w; kw++) {                                                  \
                        int64_t u = iw + s->pad_left - kw * s->dilation_w;                                     \
                        if (u < 0 || u % s->stride_w || u / s->stride_w >= s->out_w)                           \
                            continue;                                                                          \
                        const T *c = crow + (u / s->stride_w) * K + kw * C;                                    \
                        for (int64_t ch = 0; ch < C; ch++)                                                     \
                            d[ch] += c[ch];                                                                    \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }
DEFINE_COL2IM(float, f32)
DEFINE_COL2IM(double, f64)

static void gemm_forward(tw_dtype dtype, const twk_conv2d_shape *s, const char *x, const void *f, char *y,
                         char *ws)
{
    size_t es = tw_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    if (M == 0 || O == 0)
        return;
    if (K == 0) {
        twk_fill(dtype, M * O, y, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, false, false, M, O, K, x, K, f, O, 0.0f, y, O);
        return;
    }
    int64_t rows = s->batch * s->out_h, step = chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        im2col(es, s, x, r0, r1, ws);
        twk_gemm(dtype, false, false, (r1 - r0) * s->out_w, O, K, ws, K, f, O, 0.0f,
                 y + r0 * s->out_w * O * (int64_t)es, O);
    }
}

static void gemm_backprop_input(tw_dtype dtype, const twk_conv2d_shape *s, const void *f, const char *dy, char *dx,
                                char *ws)
{
    size_t es = tw_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    int64_t nx = s->batch * s->in_h * s->in_w * s->in_c;
    if (nx == 0)
        return;
    if (M == 0 || O == 0) {
        twk_fill(dtype, nx, dx, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, false, true, M, s->in_c, O, dy, O, f, O, 0.0f, dx, s->in_c);
        return;
    }
    twk_fill(dtype, nx, dx, 0);
    int64_t rows = s->batch * s->out_h, step = chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        twk_gemm(dtype, false, true, (r1 - r0) * s->out_w, K, O, dy + r0 * s->out_w * O * (int64_t)es, O, f, O, 0.0f,
                 ws, K);
        if (dtype == TW_FLOAT32)
            col2im_f32(s, (const float *)ws, r0, r1, (float *)dx);
        else
            col2im_f64(s, (const double *)ws, r0, r1, (double *)dx);
    }
}

static void gemm_backprop_filter(tw_dtype dtype, const twk_conv2d_shape *s, const char *x, const char *dy, char *df,
                                 char *ws)
{
    size_t es = tw_dtype_size(dtype);
    int64_t K = k_size(s), M = out_pixels(s), O = s->out_c;
    if (K == 0 || O == 0)
        return;
    if (M == 0) {
        twk_fill(dtype, K * O, df, 0);
        return;
    }
    if (plain_1x1(s)) {
        twk_gemm(dtype, true, false, K, O, M, x, K, dy, O, 0.0f, df, O);
        return;
    }
    int64_t rows = s->batch * s->out_h, step = chunk_rows(s, es);
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        int64_t r1 = imin(rows, r0 + step);
        im2col(es, s, x, r0, r1, ws);
        twk_gemm(dtype, true, false, K, O, (r1 - r0) * s->out_w, ws, K, dy + r0 * s->out_w * O * (int64_t)es, O,
                 r0 == 0 ? 0.0f : 1.0f, df, O);
    }
}

/* ======================================================================== */
/* direct path (float32, AVX-512)                                           */
/* ======================================================================== */

static atomic_int direct_state = -1; /* -1 unknown, 0 off, 1 on */

bool twk_conv2d_direct_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}

static bool direct_enabled(void)
{
    int st = atomic_load_explicit(&direct_state, memory_order_relaxed);
    if (st < 0) {
        const char *env = getenv("TW_CONV_DIRECT");
        st = twk_conv2d_direct_available() && !(env && strcmp(env, "0") == 0);
        atomic_store_explicit(&direct_state, st, memory_order_relaxed);
    }
    return st == 1;
}

bool twk_conv2d_set_direct(bool enabled)
{
    bool was = direct_enabled();
    atomic_store_explicit(&direct_state, enabled && twk_conv2d_direct_available(), memory_order_relaxed);
    return was;
}

/* Geometry of the padded source the direct kernels read, and the schedule:
 * per_image: each thread takes whole images, pads one into its own buffer
 * (which then stays in its L2) and computes it at once; otherwise chunks of
 * images are padded together and their pixels split between threads (few
 * images, or a single thread). */
typedef struct {
    int64_t src_h, src_w; /* rows/columns of each (padded) image */
    bool copy;            /* false: the input is read in place */
    bool per_image;
    int64_t chunk;        /* images per padded buffer (per thread when per_image) */
    int nthreads;
} padded_geom;

static padded_geom padded_of(const twk_conv2d_shape *s)
{
    padded_geom p;
    p.src_h = (s->out_h - 1) * s->stride_h + (s->k_h - 1) * s->dilation_h + 1;
    p.src_w = (s->out_w - 1) * s->stride_w + (s->k_w - 1) * s->dilation_w + 1;
    p.copy = s->pad_top || s->pad_left || p.src_h > s->in_h || p.src_w > s->in_w;
    p.nthreads = omp_get_max_threads();
    int64_t img = imax(1, p.src_h * p.src_w * s->in_c * (int64_t)sizeof(float));
    /* Whole images per thread when they divide evenly enough and each is worth a thread. */
    p.per_image = p.nthreads > 1 && (s->batch % p.nthreads == 0 || s->batch >= 4 * p.nthreads) &&
                  s->out_h * s->out_w * k_size(s) * s->out_c >= TWK_PARALLEL_MIN;
    if (!p.copy) {
        p.src_h = s->in_h;
        p.src_w = s->in_w;
        p.chunk = imax(1, s->batch);
    } else if (p.per_image) {
        p.chunk = 1;
    } else {
        p.chunk = imax(1, imin(s->batch, PADDED_TARGET_BYTES / img));
    }
    return p;
}

static int64_t padded_bytes(const twk_conv2d_shape *s, const padded_geom *p)
{
    if (!p->copy)
        return 0;
    int64_t buffers = p->per_image ? p->nthreads : 1;
    return buffers * align64(p->chunk * p->src_h * p->src_w * s->in_c * (int64_t)sizeof(float));
}

static float *padded_buffer(const twk_conv2d_shape *s, const padded_geom *p, char *base, int thread)
{
    return (float *)(base + thread * align64(p->chunk * p->src_h * p->src_w * s->in_c * (int64_t)sizeof(float)));
}

static int64_t nblocks(const twk_conv2d_shape *s) { return (s->out_c + OBLOCK - 1) / OBLOCK; }
static int64_t packed_bytes(const twk_conv2d_shape *s)
{
    return align64(nblocks(s) * k_size(s) * OBLOCK * (int64_t)sizeof(float));
}

/* Images [n0, n0 + cn) of x, zero-padded, into dst. */
static void pad_images(const twk_conv2d_shape *s, const padded_geom *p, const float *x, int64_t n0, int64_t cn,
                       float *dst, bool parallel)
{
    const int64_t C = s->in_c, rows = cn * p->src_h;
    const int64_t lo = imin(s->pad_left, p->src_w), hi = imax(lo, imin(s->pad_left + s->in_w, p->src_w));
#pragma omp parallel for schedule(static) if (parallel && rows * p->src_w * C >= TWK_PARALLEL_MIN && rows > 1)
    for (int64_t q = 0; q < rows; q++) {
        int64_t n = n0 + q / p->src_h, ih = q % p->src_h - s->pad_top;
        float *d = dst + q * p->src_w * C;
        if (ih < 0 || ih >= s->in_h) {
            memset(d, 0, sizeof(float) * (size_t)(p->src_w * C));
            continue;
        }
        memset(d, 0, sizeof(float) * (size_t)(lo * C));
        if (hi > lo)
            memcpy(d + lo * C, x + ((n * s->in_h + ih) * s->in_w + (lo - s->pad_left)) * C,
                   sizeof(float) * (size_t)((hi - lo) * C));
        memset(d + hi * C, 0, sizeof(float) * (size_t)((p->src_w - hi) * C));
    }
}

/* Filter as [block][K][64] (zero-filled past out_c); row k = (kh, kw, c) in
 * HWIO order. flip: the filter of the input-gradient convolution, whose
 * (kh, kw, c, o) is the original's (k_h-1-kh, k_w-1-kw, o, c). */
static void pack_filter(const twk_conv2d_shape *s, const float *f, bool flip, float *packed)
{
    const int64_t K = k_size(s), O = s->out_c, nb = nblocks(s);
    const int64_t C = s->in_c;
    memset(packed, 0, sizeof(float) * (size_t)(nb * K * OBLOCK));
    for (int64_t k = 0; k < K; k++) {
        int64_t kh = k / (s->k_w * C), kw = k / C % s->k_w, c = k % C;
        for (int64_t o = 0; o < O; o++) {
            float v = !flip ? f[k * O + o]
                            : f[(((s->k_h - 1 - kh) * s->k_w + (s->k_w - 1 - kw)) * O + o) * C + c];
            packed[((o / OBLOCK) * K + k) * OBLOCK + o % OBLOCK] = v;
        }
    }
}

#define TW_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma")))
#define ALWAYS_INLINE inline __attribute__((always_inline))

typedef struct {
    const float *a[TILE_ROWS]; /* each pixel's first tap in the padded source */
    float *out[TILE_ROWS];     /* each pixel's first output channel of the block */
    const float *b;            /* packed filter block, [K][64] */
    int64_t n_outer, n_inner, len, a_outer, a_inner;
    __mmask16 last_mask; /* lanes of the last vector that exist */
} fwd_args;

static ALWAYS_INLINE TW_AVX512 void fwd_tile(const int R, const int V, const fwd_args *t)
{
    __m512 acc[TILE_ROWS][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_setzero_ps();
    const float *bp = t->b;
    for (int64_t i = 0; i < t->n_outer; i++) {
        for (int64_t k = 0; k < t->n_inner; k++) {
            const int64_t off = i * t->a_outer + k * t->a_inner;
            const float *ap[TILE_ROWS];
#pragma GCC unroll 6
            for (int r = 0; r < R; r++)
                ap[r] = t->a[r] + off;
            for (int64_t j = 0; j < t->len; j++, bp += OBLOCK) {
                __m512 bv[4];
#pragma GCC unroll 4
                for (int v = 0; v < V; v++)
                    bv[v] = _mm512_load_ps(bp + 16 * v);
#pragma GCC unroll 6
                for (int r = 0; r < R; r++) {
                    __m512 av = _mm512_set1_ps(ap[r][j]);
#pragma GCC unroll 4
                    for (int v = 0; v < V; v++)
                        acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
                }
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
        for (int v = 0; v < V - 1; v++)
            _mm512_storeu_ps(t->out[r] + 16 * v, acc[r][v]);
        _mm512_mask_storeu_ps(t->out[r] + 16 * (V - 1), t->last_mask, acc[r][V - 1]);
    }
}

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

static ALWAYS_INLINE TW_AVX512 void bwf_tile(const int R, const int V, const bwf_args *t)
{
    __m512 acc[TILE_ROWS][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_setzero_ps();
    for (int64_t row = t->r0; row < t->r1; row++) {
        int64_t n = row / t->out_h, oh = row % t->out_h;
        const float *xa = t->src + n * t->img_step + oh * t->row_step + t->a_off;
        const float *g = t->dy + row * t->out_w * t->out_c;
        for (int64_t ow = 0; ow < t->out_w; ow++, xa += t->pix_step, g += t->out_c) {
            __m512 gv[4];
#pragma GCC unroll 4
            for (int v = 0; v < V - 1; v++)
                gv[v] = _mm512_loadu_ps(g + 16 * v);
            gv[V - 1] = _mm512_maskz_loadu_ps(t->last_mask, g + 16 * (V - 1));
#pragma GCC unroll 6
            for (int r = 0; r < R; r++) {
                __m512 av = _mm512_set1_ps(xa[r]);
#pragma GCC unroll 4
                for (int v = 0; v < V; v++)
                    acc[r][v] = _mm512_fmadd_ps(av, gv[v], acc[r][v]);
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            float *p = t->part + r * t->ldp + 16 * v;
            _mm512_store_ps(p, _mm512_add_ps(_mm512_load_ps(p), acc[r][v]));
        }
}

/* The same product without a padded copy (in_c >= TAP_MIN_CHANNELS): the
 * tile walks the filter tap by tap, each pixel reading its tap's in_c
 * values from the image, or from a row of zeros where the tap falls in
 * the padding. Up to 8 pixels when the block has at most 2 vectors. */
#define TAP_TILE_MAX 8
#define TAP_MIN_CHANNELS 16

typedef struct {
    const float *img[TAP_TILE_MAX];               /* the image each pixel reads */
    int64_t ih0[TAP_TILE_MAX], iw0[TAP_TILE_MAX]; /* its window's first row/column (may be < 0) */
    float *out[TAP_TILE_MAX];
    const float *b;     /* packed filter block, [K][64] */
    const float *zeros; /* in_c zeros */
    int64_t in_h, in_w, c, k_h, k_w, dh, dw;
    __mmask16 last_mask;
} tap_args;

static ALWAYS_INLINE TW_AVX512 void tap_tile(const int R, const int V, const tap_args *t)
{
    __m512 acc[TAP_TILE_MAX][4];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_setzero_ps();
    const float *bp = t->b;
    for (int64_t kh = 0; kh < t->k_h; kh++) {
        for (int64_t kw = 0; kw < t->k_w; kw++) {
            const float *ap[TAP_TILE_MAX];
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) {
                int64_t ih = t->ih0[r] + kh * t->dh, iw = t->iw0[r] + kw * t->dw;
                ap[r] = (uint64_t)ih < (uint64_t)t->in_h && (uint64_t)iw < (uint64_t)t->in_w
                            ? t->img[r] + (ih * t->in_w + iw) * t->c
                            : t->zeros;
            }
            for (int64_t j = 0; j < t->c; j++, bp += OBLOCK) {
                __m512 bv[4];
#pragma GCC unroll 4
                for (int v = 0; v < V; v++)
                    bv[v] = _mm512_load_ps(bp + 16 * v);
#pragma GCC unroll 8
                for (int r = 0; r < R; r++) {
                    __m512 av = _mm512_set1_ps(ap[r][j]);
#pragma GCC unroll 4
                    for (int v = 0; v < V; v++)
                        acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
        for (int v = 0; v < V - 1; v++)
            _mm512_storeu_ps(t->out[r] + 16 * v, acc[r][v]);
        _mm512_mask_storeu_ps(t->out[r] + 16 * (V - 1), t->last_mask, acc[r][V - 1]);
    }
}

#define TAP_INSTANCES(X) \
    X(1, 1) X(2, 1) X(3, 1) X(4, 1) X(5, 1) X(6, 1) X(7, 1) X(8, 1) \
    X(1, 2) X(2, 2) X(3, 2) X(4, 2) X(5, 2) X(6, 2) X(7, 2) X(8, 2) \
    X(1, 3) X(2, 3) X(3, 3) X(4, 3) X(5, 3) X(6, 3) \
    X(1, 4) X(2, 4) X(3, 4) X(4, 4) X(5, 4) X(6, 4)
#define DEFINE_TAP(R, V) \
    static TW_AVX512 void tap_##R##_##V(const tap_args *t) { tap_tile(R, V, t); }
TAP_INSTANCES(DEFINE_TAP)
#define TAP_ENTRY(R, V) [R][V] = tap_##R##_##V,
static void (*const tap_table[TAP_TILE_MAX + 1][5])(const tap_args *) = {TAP_INSTANCES(TAP_ENTRY)};

#define INSTANCES(X) \
    X(1, 1) X(1, 2) X(1, 3) X(1, 4) X(2, 1) X(2, 2) X(2, 3) X(2, 4) X(3, 1) X(3, 2) X(3, 3) X(3, 4) \
    X(4, 1) X(4, 2) X(4, 3) X(4, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4) X(6, 1) X(6, 2) X(6, 3) X(6, 4)

#define DEFINE_FWD(R, V) \
    static TW_AVX512 void fwd_##R##_##V(const fwd_args *t) { fwd_tile(R, V, t); }
#define DEFINE_BWF(R, V) \
    static TW_AVX512 void bwf_##R##_##V(const bwf_args *t) { bwf_tile(R, V, t); }
INSTANCES(DEFINE_FWD)
INSTANCES(DEFINE_BWF)
#define FWD_ENTRY(R, V) [R][V] = fwd_##R##_##V,
#define BWF_ENTRY(R, V) [R][V] = bwf_##R##_##V,
static void (*const fwd_table[TILE_ROWS + 1][5])(const fwd_args *) = {INSTANCES(FWD_ENTRY)};
static void (*const bwf_table[TILE_ROWS + 1][5])(const bwf_args *) = {INSTANCES(BWF_ENTRY)};

/* Vectors in block ob and the lanes of its last one. */
static int block_vectors(int64_t out_c, int64_t ob, __mmask16 *mask)
{
    int64_t width = imin(OBLOCK, out_c - ob * OBLOCK);
    int v = (int)((width + 15) / 16);
    int64_t last = width - 16 * (v - 1);
    *mask = (__mmask16)(last == 16 ? 0xFFFF : (1u << last) - 1);
    return v;
}

static bool use_taps(const twk_conv2d_shape *s) { return s->in_c >= TAP_MIN_CHANNELS; }

static size_t direct_forward_workspace(const twk_conv2d_shape *s)
{
    if (use_taps(s))
        return (size_t)(packed_bytes(s) + align64(s->in_c * (int64_t)sizeof(float)));
    padded_geom p = padded_of(s);
    return (size_t)(packed_bytes(s) + padded_bytes(s, &p));
}

/* Output pixels [q0, q1) (flattened over the batch) by tap tiles. */
static void tap_pixels(const twk_conv2d_shape *s, const float *packed, const float *zeros, const float *x,
                       int64_t q0, int64_t q1, float *y)
{
    const int64_t C = s->in_c, K = k_size(s), O = s->out_c, nb = nblocks(s), opix = s->out_h * s->out_w;
    const int tile = O <= 32 ? TAP_TILE_MAX : 6;
    tap_args t;
    t.zeros = zeros;
    t.in_h = s->in_h;
    t.in_w = s->in_w;
    t.c = C;
    t.k_h = s->k_h;
    t.k_w = s->k_w;
    t.dh = s->dilation_h;
    t.dw = s->dilation_w;
    /* The next pixel's image, row and column, advanced without divisions. */
    int64_t n = q0 / opix, oh = q0 % opix / s->out_w, ow = q0 % s->out_w;
    for (int64_t p0 = q0; p0 < q1; p0 += tile) {
        int R = (int)imin(tile, q1 - p0);
        for (int r = 0; r < R; r++) {
            t.img[r] = x + n * s->in_h * s->in_w * C;
            t.ih0[r] = oh * s->stride_h - s->pad_top;
            t.iw0[r] = ow * s->stride_w - s->pad_left;
            t.out[r] = y + (p0 + r) * O;
            if (++ow == s->out_w) {
                ow = 0;
                if (++oh == s->out_h) {
                    oh = 0;
                    n++;
                }
            }
        }
        for (int64_t ob = 0; ob < nb; ob++) {
            int V = block_vectors(O, ob, &t.last_mask);
            t.b = packed + ob * K * OBLOCK;
            tap_table[R][V](&t);
            for (int r = 0; r < R; r++)
                t.out[r] += OBLOCK;
        }
    }
}

/* Output pixels [q0, q1) of the images at src (padded geometry p), written
 * from y on (pixel 0 of image 0 of src at y). */
static void fwd_pixels(const twk_conv2d_shape *s, const padded_geom *p, const float *packed, const float *src,
                       int64_t q0, int64_t q1, float *y)
{
    const int64_t C = s->in_c, K = k_size(s), O = s->out_c, nb = nblocks(s), opix = s->out_h * s->out_w;
    const bool merged = s->dilation_w == 1;
    fwd_args t;
    t.n_outer = s->k_h;
    t.a_outer = s->dilation_h * p->src_w * C;
    t.n_inner = merged ? 1 : s->k_w;
    t.a_inner = merged ? 0 : s->dilation_w * C;
    t.len = merged ? s->k_w * C : C;
    for (int64_t p0 = q0; p0 < q1; p0 += TILE_ROWS) {
        int R = (int)imin(TILE_ROWS, q1 - p0);
        for (int r = 0; r < R; r++) {
            int64_t q = p0 + r, n = q / opix, oh = q % opix / s->out_w, ow = q % s->out_w;
            t.a[r] = src + ((n * p->src_h + oh * s->stride_h) * p->src_w + ow * s->stride_w) * C;
            t.out[r] = y + q * O;
        }
        for (int64_t ob = 0; ob < nb; ob++) {
            int V = block_vectors(O, ob, &t.last_mask);
            t.b = packed + ob * K * OBLOCK;
            fwd_table[R][V](&t);
            for (int r = 0; r < R; r++)
                t.out[r] += OBLOCK;
        }
    }
}

/* out = conv(x, filter) with the filter already packed at ws. */
static void direct_forward(const twk_conv2d_shape *s, const float *x, float *y, char *ws)
{
    const float *packed = (const float *)ws;
    char *padbase = ws + packed_bytes(s);
    if (use_taps(s)) {
        float *zeros = (float *)padbase;
        memset(zeros, 0, sizeof(float) * (size_t)s->in_c);
        const int64_t npix = out_pixels(s), tile = s->out_c <= 32 ? TAP_TILE_MAX : 6;
        const int64_t ntiles = (npix + tile - 1) / tile;
        /* Threads take equal runs of whole tiles. */
#pragma omp parallel if (npix * k_size(s) * s->out_c >= TWK_PARALLEL_MIN && ntiles > 1)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t t0 = ntiles * t / nt, t1 = ntiles * (t + 1) / nt;
            tap_pixels(s, packed, zeros, x, t0 * tile, imin(npix, t1 * tile), y);
        }
        return;
    }
    padded_geom p = padded_of(s);
    const int64_t C = s->in_c, O = s->out_c, opix = s->out_h * s->out_w, img = s->in_h * s->in_w * C;
    if (p.per_image) {
#pragma omp parallel num_threads(p.nthreads)
        {
            float *buf = p.copy ? padded_buffer(s, &p, padbase, omp_get_thread_num()) : NULL;
#pragma omp for schedule(static)
            for (int64_t n = 0; n < s->batch; n++) {
                const float *src = x + n * img;
                if (p.copy) {
                    pad_images(s, &p, x, n, 1, buf, false);
                    src = buf;
                }
                fwd_pixels(s, &p, packed, src, 0, opix, y + n * opix * O);
            }
        }
        return;
    }
    float *padbuf = padded_buffer(s, &p, padbase, 0);
    for (int64_t n0 = 0; n0 < s->batch; n0 += p.chunk) {
        int64_t cn = imin(p.chunk, s->batch - n0);
        const float *src = x + n0 * img;
        if (p.copy) {
            pad_images(s, &p, x, n0, cn, padbuf, true);
            src = padbuf;
        }
        float *yc = y + n0 * opix * O;
        int64_t npix = cn * opix, ntiles = (npix + TILE_ROWS - 1) / TILE_ROWS;
        /* Threads take equal runs of whole tiles. */
#pragma omp parallel if (npix * k_size(s) * O >= TWK_PARALLEL_MIN && ntiles > 1)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t t0 = ntiles * t / nt, t1 = ntiles * (t + 1) / nt;
            fwd_pixels(s, &p, packed, src, t0 * TILE_ROWS, imin(npix, t1 * TILE_ROWS), yc);
        }
    }
}

/* The convolution whose forward pass is the input gradient at stride 1. */
static twk_conv2d_shape input_grad_shape(const twk_conv2d_shape *s)
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

static bool direct_input_grad_ok(const twk_conv2d_shape *s)
{
    return s->stride_h == 1 && s->stride_w == 1 && s->pad_top <= (s->k_h - 1) * s->dilation_h &&
           s->pad_left <= (s->k_w - 1) * s->dilation_w;
}

static int64_t row_block(const twk_conv2d_shape *s)
{
    /* About 16 KB of output gradient per block stays in L1 with the input rows it meets. */
    return imax(1, ((int64_t)16 << 10) / imax(1, s->out_w * imin(s->out_c, OBLOCK) * (int64_t)sizeof(float)));
}

static size_t direct_filter_workspace(const twk_conv2d_shape *s)
{
    padded_geom p = padded_of(s);
    int64_t part = align64(k_size(s) * nblocks(s) * OBLOCK * (int64_t)sizeof(float));
    return (size_t)(part * p.nthreads + padded_bytes(s, &p));
}

/* Accumulate output rows [r0, r1) (n * out_h + oh, images at src / dy) into
 * one thread's partial filter gradient. */
static void bwf_rows(const twk_conv2d_shape *s, const padded_geom *p, const float *src, const float *dy,
                     int64_t r0, int64_t r1, float *part)
{
    const int64_t C = s->in_c, O = s->out_c, nb = nblocks(s), ldp = nb * OBLOCK;
    const bool merged = s->dilation_w == 1;
    const int64_t n_inner = merged ? 1 : s->k_w, len = merged ? s->k_w * C : C;
    const int64_t rb = row_block(s);
    bwf_args a;
    a.src = src;
    a.ldp = ldp;
    a.out_h = s->out_h;
    a.out_w = s->out_w;
    a.out_c = O;
    a.row_step = s->stride_h * p->src_w * C;
    a.pix_step = s->stride_w * C;
    a.img_step = p->src_h * p->src_w * C;
    for (int64_t rs = r0; rs < r1; rs += rb) {
        a.r0 = rs;
        a.r1 = imin(r1, rs + rb);
        for (int64_t kh = 0; kh < s->k_h; kh++) {
            for (int64_t kw = 0; kw < n_inner; kw++) {
                int64_t krow = (kh * n_inner + kw) * len;
                for (int64_t j0 = 0; j0 < len; j0 += TILE_ROWS) {
                    int R = (int)imin(TILE_ROWS, len - j0);
                    a.a_off = kh * s->dilation_h * p->src_w * C + kw * s->dilation_w * C + j0;
                    for (int64_t ob = 0; ob < nb; ob++) {
                        int V = block_vectors(O, ob, &a.last_mask);
                        a.dy = dy + ob * OBLOCK;
                        a.part = part + (krow + j0) * ldp + ob * OBLOCK;
                        bwf_table[R][V](&a);
                    }
                }
            }
        }
    }
}

static void direct_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df, char *ws)
{
    padded_geom p = padded_of(s);
    const int64_t C = s->in_c, K = k_size(s), O = s->out_c, nb = nblocks(s), ldp = nb * OBLOCK;
    const int64_t part_floats = align64(K * ldp * (int64_t)sizeof(float)) / (int64_t)sizeof(float);
    const int nthreads = p.nthreads;
    const int64_t opix = s->out_h * s->out_w, img = s->in_h * s->in_w * C;
    float *parts = (float *)ws;
    char *padbase = ws + part_floats * (int64_t)sizeof(float) * nthreads;
    memset(parts, 0, sizeof(float) * (size_t)(part_floats * nthreads));
    if (p.per_image) {
#pragma omp parallel num_threads(nthreads)
        {
            int t = omp_get_thread_num();
            float *buf = p.copy ? padded_buffer(s, &p, padbase, t) : NULL;
#pragma omp for schedule(static)
            for (int64_t n = 0; n < s->batch; n++) {
                const float *src = x + n * img;
                if (p.copy) {
                    pad_images(s, &p, x, n, 1, buf, false);
                    src = buf;
                }
                bwf_rows(s, &p, src, dy + n * opix * O, 0, s->out_h, parts + t * part_floats);
            }
        }
    } else {
        float *padbuf = padded_buffer(s, &p, padbase, 0);
        for (int64_t n0 = 0; n0 < s->batch; n0 += p.chunk) {
            int64_t cn = imin(p.chunk, s->batch - n0);
            const float *src = x + n0 * img;
            if (p.copy) {
                pad_images(s, &p, x, n0, cn, padbuf, true);
                src = padbuf;
            }
            const float *dyc = dy + n0 * opix * O;
            int64_t rows = cn * s->out_h;
#pragma omp parallel num_threads(nthreads) if (rows * s->out_w * K * O >= TWK_PARALLEL_MIN)
            {
                int t = omp_get_thread_num(), nt = omp_get_num_threads();
                bwf_rows(s, &p, src, dyc, rows * t / nt, rows * (t + 1) / nt, parts + t * part_floats);
            }
        }
    }
#pragma omp parallel for schedule(static) if (K * O * nthreads >= TWK_PARALLEL_MIN)
    for (int64_t k = 0; k < K; k++) {
        for (int64_t o = 0; o < O; o++) {
            float sum = 0;
            for (int t = 0; t < nthreads; t++)
                sum += parts[t * part_floats + k * ldp + o];
            df[k * O + o] = sum;
        }
    }
}

/* Input gradient at any stride: dcol[M, K] = dout[M, O] x filter^T, the
 * register tile running over rows of the output gradient, then col2im, in
 * chunks of output rows as the gemm path (whose col2im it shares). All of it
 * runs on OpenMP threads: no switching to OpenBLAS's thread pool. */
static int64_t k_blocks(const twk_conv2d_shape *s) { return (k_size(s) + OBLOCK - 1) / OBLOCK; }

static int64_t transposed_bytes(const twk_conv2d_shape *s)
{
    return align64(k_blocks(s) * s->out_c * OBLOCK * (int64_t)sizeof(float));
}

static size_t direct_input_grad_cols_workspace(const twk_conv2d_shape *s)
{
    return (size_t)(transposed_bytes(s) + align64((int64_t)gemm_workspace(TW_FLOAT32, s)));
}

static void direct_input_grad_cols(const twk_conv2d_shape *s, const float *f, const float *dy, float *dx, char *ws)
{
    const int64_t K = k_size(s), O = s->out_c, kb = k_blocks(s);
    const int64_t nx = s->batch * s->in_h * s->in_w * s->in_c;
    float *packed = (float *)ws, *col = (float *)(ws + transposed_bytes(s));
    memset(dx, 0, sizeof(float) * (size_t)nx);
    if (out_pixels(s) == 0 || O == 0)
        return;
    /* filter^T as [block of 64 k][O][64] */
    memset(packed, 0, sizeof(float) * (size_t)(kb * O * OBLOCK));
    for (int64_t k = 0; k < K; k++)
        for (int64_t o = 0; o < O; o++)
            packed[((k / OBLOCK) * O + o) * OBLOCK + k % OBLOCK] = f[k * O + o];
    const int64_t rows = s->batch * s->out_h, step = chunk_rows(s, sizeof(float));
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        const int64_t r1 = imin(rows, r0 + step), npix = (r1 - r0) * s->out_w;
        const int64_t ntiles = (npix + TILE_ROWS - 1) / TILE_ROWS;
        const float *g = dy + r0 * s->out_w * O;
#pragma omp parallel for schedule(static) if (npix * K * O >= TWK_PARALLEL_MIN && ntiles > 1)
        for (int64_t tile = 0; tile < ntiles; tile++) {
            fwd_args t;
            int64_t p0 = tile * TILE_ROWS;
            int R = (int)imin(TILE_ROWS, npix - p0);
            t.n_outer = t.n_inner = 1;
            t.a_outer = t.a_inner = 0;
            t.len = O;
            for (int r = 0; r < R; r++)
                t.a[r] = g + (p0 + r) * O;
            for (int64_t b = 0; b < kb; b++) {
                int V = block_vectors(K, b, &t.last_mask);
                for (int r = 0; r < R; r++)
                    t.out[r] = col + (p0 + r) * K + b * OBLOCK;
                t.b = packed + b * O * OBLOCK;
                fwd_table[R][V](&t);
            }
        }
        col2im_f32(s, col, r0, r1, dx);
    }
}

/* ======================================================================== */
/* Winograd F(2x2, 3x3) (float32, AVX-512)                                  */
/* ======================================================================== */

/* 3x3, stride 1, undilated convolutions with at least 16 channels in and
 * out do 2.25x fewer multiplications this way. Each 2x2 block of outputs
 * ("tile") comes from a 4x4 block of the input:
 *     Y = A^T [ (G g G^T) . (B^T d B) ] A        (. elementwise)
 * summed over input channels: 16 independent products, one per position e
 * of the 4x4 transformed tile,
 *     M[e][tile][o] = sum_c V[e][tile][c] U[e][c][o],
 * which run on the register-tiled kernel of the direct path. Tiles go in
 * blocks small enough that V and M stay in the thread's L2. The filter
 * gradient follows from the same transforms transposed:
 *     dU[e][c][o] = sum_tiles V[e][tile][c] (A dY A^T)[e][tile][o],
 *     dg = G^T dU G.
 * The input gradient is the forward pass of the flipped filter on the
 * output gradient, as in the direct path. Rounding differs from a direct
 * sum by a few float32 ulps of the largest terms. */

static atomic_int winograd_state = -1;

static bool winograd_enabled(void)
{
    int st = atomic_load_explicit(&winograd_state, memory_order_relaxed);
    if (st < 0) {
        const char *env = getenv("TW_CONV_WINOGRAD");
        st = !(env && strcmp(env, "0") == 0);
        atomic_store_explicit(&winograd_state, st, memory_order_relaxed);
    }
    return st == 1;
}

bool twk_conv2d_set_winograd(bool enabled)
{
    bool was = winograd_enabled();
    atomic_store_explicit(&winograd_state, enabled, memory_order_relaxed);
    return was;
}

static bool winograd_shape_ok(const twk_conv2d_shape *s)
{
    return s->k_h == 3 && s->k_w == 3 && s->stride_h == 1 && s->stride_w == 1 && s->dilation_h == 1 &&
           s->dilation_w == 1 && s->in_c >= 16 && s->out_c >= 16 && out_pixels(s) > 0;
}

#define WINO_L2_BYTES ((int64_t)768 << 10) /* per thread: one block's V and M */

typedef struct {
    int64_t tiles_h, tiles_w, ntiles; /* tiles per image column/row, and over the batch */
    int64_t cp, op;                   /* row strides of V (in_c) and M (out_c), in floats */
    int64_t nt;                       /* tiles per block */
    int64_t u_floats, thread_floats;  /* transformed filter; one thread's V + M (+ partial) */
    int nthreads;
} wino_geom;

static wino_geom wino_of(const twk_conv2d_shape *s, bool filter_grad)
{
    wino_geom g;
    g.tiles_h = (s->out_h + 1) / 2;
    g.tiles_w = (s->out_w + 1) / 2;
    g.ntiles = s->batch * g.tiles_h * g.tiles_w;
    g.cp = (s->in_c + 15) / 16 * 16;
    g.op = nblocks(s) * OBLOCK;
    int64_t per_tile = 16 * (g.cp + g.op) * (int64_t)sizeof(float);
    g.nt = imax(TILE_ROWS, imin(120, WINO_L2_BYTES / per_tile) / TILE_ROWS * TILE_ROWS);
    g.u_floats = align64(16 * nblocks(s) * s->in_c * OBLOCK * (int64_t)sizeof(float)) / (int64_t)sizeof(float);
    g.thread_floats = align64(16 * g.nt * (g.cp + g.op) * (int64_t)sizeof(float) +
                              (filter_grad ? 16 * s->in_c * g.op * (int64_t)sizeof(float) : 0)) /
                      (int64_t)sizeof(float);
    g.nthreads = omp_get_max_threads();
    return g;
}

static size_t wino_workspace(const twk_conv2d_shape *s, bool filter_grad)
{
    wino_geom g = wino_of(s, filter_grad);
    return (size_t)((g.u_floats + g.thread_floats * g.nthreads) * (int64_t)sizeof(float));
}

/* U[e][block][c][64] = (G g G^T)[e] for every (c, o); flip: the filter of
 * the input-gradient convolution (see pack_filter). */
static void wino_filter_transform(const twk_conv2d_shape *s, const float *f, bool flip, float *u)
{
    const int64_t C = s->in_c, O = s->out_c, nb = nblocks(s);
    memset(u, 0, sizeof(float) * (size_t)(16 * nb * C * OBLOCK));
#pragma omp parallel for schedule(static) if (C * O >= 4096)
    for (int64_t c = 0; c < C; c++) {
        for (int64_t o = 0; o < O; o++) {
            float g[3][3], t[4][3];
            for (int kh = 0; kh < 3; kh++)
                for (int kw = 0; kw < 3; kw++)
                    g[kh][kw] = !flip ? f[((kh * 3 + kw) * C + c) * O + o]
                                      : f[(((2 - kh) * 3 + (2 - kw)) * O + o) * C + c];
            for (int j = 0; j < 3; j++) {
                t[0][j] = g[0][j];
                t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
                t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
                t[3][j] = g[2][j];
            }
            for (int a = 0; a < 4; a++) {
                float v[4] = {t[a][0], 0.5f * (t[a][0] + t[a][1] + t[a][2]), 0.5f * (t[a][0] - t[a][1] + t[a][2]),
                              t[a][2]};
                for (int b = 0; b < 4; b++)
                    u[(((a * 4 + b) * nb + o / OBLOCK) * C + c) * OBLOCK + o % OBLOCK] = v[b];
            }
        }
    }
}

/* The tile's image and top-left output position, for tiles t0.. in order. */
typedef struct {
    int64_t n, th, tw;
} tile_pos;

static tile_pos tile_at(const wino_geom *g, int64_t t)
{
    tile_pos p = {t / (g->tiles_h * g->tiles_w), t % (g->tiles_h * g->tiles_w) / g->tiles_w, t % g->tiles_w};
    return p;
}

static void tile_next(const wino_geom *g, tile_pos *p)
{
    if (++p->tw == g->tiles_w) {
        p->tw = 0;
        if (++p->th == g->tiles_h) {
            p->th = 0;
            p->n++;
        }
    }
}

/* V[e][i][c] = (B^T d B)[e] for tiles t0 .. t0 + cnt of input x. */
static TW_AVX512 void wino_input(const twk_conv2d_shape *s, const wino_geom *g, const float *x, int64_t t0,
                                 int64_t cnt, float *v)
{
    const int64_t C = s->in_c, H = s->in_h, W = s->in_w, estride = g->nt * g->cp;
    tile_pos p = tile_at(g, t0);
    for (int64_t i = 0; i < cnt; i++, tile_next(g, &p)) {
        const int64_t h0 = 2 * p.th - s->pad_top, w0 = 2 * p.tw - s->pad_left;
        const float *img = x + p.n * H * W * C;
        bool inside = h0 >= 0 && w0 >= 0 && h0 + 4 <= H && w0 + 4 <= W;
        for (int64_t c = 0; c < C; c += 16) {
            __mmask16 m = (__mmask16)(C - c >= 16 ? 0xFFFF : (1u << (C - c)) - 1);
            __m512 d[4][4], t[4][4];
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) {
                    int64_t ih = h0 + a, iw = w0 + b;
                    d[a][b] = inside || ((uint64_t)ih < (uint64_t)H && (uint64_t)iw < (uint64_t)W)
                                  ? _mm512_maskz_loadu_ps(m, img + (ih * W + iw) * C + c)
                                  : _mm512_setzero_ps();
                }
            for (int b = 0; b < 4; b++) {
                t[0][b] = _mm512_sub_ps(d[0][b], d[2][b]);
                t[1][b] = _mm512_add_ps(d[1][b], d[2][b]);
                t[2][b] = _mm512_sub_ps(d[2][b], d[1][b]);
                t[3][b] = _mm512_sub_ps(d[1][b], d[3][b]);
            }
            float *out = v + i * g->cp + c;
            for (int a = 0; a < 4; a++) {
                _mm512_store_ps(out + (a * 4 + 0) * estride, _mm512_sub_ps(t[a][0], t[a][2]));
                _mm512_store_ps(out + (a * 4 + 1) * estride, _mm512_add_ps(t[a][1], t[a][2]));
                _mm512_store_ps(out + (a * 4 + 2) * estride, _mm512_sub_ps(t[a][2], t[a][1]));
                _mm512_store_ps(out + (a * 4 + 3) * estride, _mm512_sub_ps(t[a][1], t[a][3]));
            }
        }
    }
}

/* M[e][i][:] = V[e][i][:] x U[e] for the cnt tiles of a block. */
static void wino_products(const twk_conv2d_shape *s, const wino_geom *g, const float *v, const float *u,
                          int64_t cnt, float *m)
{
    const int64_t C = s->in_c, nb = nblocks(s);
    fwd_args t;
    t.n_outer = t.n_inner = 1;
    t.a_outer = t.a_inner = 0;
    t.len = C;
    t.last_mask = 0xFFFF; /* M has room for whole blocks */
    for (int e = 0; e < 16; e++) {
        for (int64_t r0 = 0; r0 < cnt; r0 += TILE_ROWS) {
            int R = (int)imin(TILE_ROWS, cnt - r0);
            for (int r = 0; r < R; r++)
                t.a[r] = v + (e * g->nt + r0 + r) * g->cp;
            for (int64_t ob = 0; ob < nb; ob++) {
                __mmask16 unused;
                int V = block_vectors(s->out_c, ob, &unused);
                for (int r = 0; r < R; r++)
                    t.out[r] = m + (e * g->nt + r0 + r) * g->op + ob * OBLOCK;
                t.b = u + (e * nb + ob) * C * OBLOCK;
                fwd_table[R][V](&t);
            }
        }
    }
}

/* y at tiles t0 .. t0 + cnt = (A^T M A), the parts inside the output. */
static TW_AVX512 void wino_output(const twk_conv2d_shape *s, const wino_geom *g, const float *m, int64_t t0,
                                  int64_t cnt, float *y)
{
    const int64_t O = s->out_c, OH = s->out_h, OW = s->out_w, estride = g->nt * g->op;
    tile_pos p = tile_at(g, t0);
    for (int64_t i = 0; i < cnt; i++, tile_next(g, &p)) {
        const int64_t oh = 2 * p.th, ow = 2 * p.tw;
        const bool full_h = oh + 1 < OH, full_w = ow + 1 < OW;
        float *img = y + p.n * OH * OW * O;
        for (int64_t o = 0; o < O; o += 16) {
            __mmask16 mask = (__mmask16)(O - o >= 16 ? 0xFFFF : (1u << (O - o)) - 1);
            const float *in = m + i * g->op + o;
            __m512 r[2][4];
            for (int b = 0; b < 4; b++) {
                __m512 m0 = _mm512_load_ps(in + (0 * 4 + b) * estride), m1 = _mm512_load_ps(in + (1 * 4 + b) * estride);
                __m512 m2 = _mm512_load_ps(in + (2 * 4 + b) * estride), m3 = _mm512_load_ps(in + (3 * 4 + b) * estride);
                r[0][b] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
                r[1][b] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
            }
            for (int a = 0; a < (full_h ? 2 : 1); a++) {
                float *row = img + ((oh + a) * OW + ow) * O + o;
                _mm512_mask_storeu_ps(row, mask, _mm512_add_ps(_mm512_add_ps(r[a][0], r[a][1]), r[a][2]));
                if (full_w)
                    _mm512_mask_storeu_ps(row + O, mask, _mm512_sub_ps(_mm512_sub_ps(r[a][1], r[a][2]), r[a][3]));
            }
        }
    }
}

/* out = conv(x, filter) (flip: the input gradient's convolution). */
static void wino_forward(const twk_conv2d_shape *s, const float *f, bool flip, const float *x, float *y, char *ws)
{
    wino_geom g = wino_of(s, false);
    float *u = (float *)ws, *threads = u + g.u_floats;
    wino_filter_transform(s, f, flip, u);
    const int64_t nblk = (g.ntiles + g.nt - 1) / g.nt;
#pragma omp parallel num_threads(g.nthreads) if (nblk > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        float *v = threads + t * g.thread_floats, *m = v + 16 * g.nt * g.cp;
        for (int64_t b = nblk * t / nt; b < nblk * (t + 1) / nt; b++) {
            int64_t t0 = b * g.nt, cnt = imin(g.nt, g.ntiles - t0);
            wino_input(s, &g, x, t0, cnt, v);
            wino_products(s, &g, v, u, cnt, m);
            wino_output(s, &g, m, t0, cnt, y);
        }
    }
}

/* dM[e][i][o] = (A dY A^T)[e] for tiles t0 .. t0 + cnt of the output gradient
 * (zero past the output's edge). */
static TW_AVX512 void wino_grad_output(const twk_conv2d_shape *s, const wino_geom *g, const float *dy, int64_t t0,
                                       int64_t cnt, float *dm)
{
    const int64_t O = s->out_c, OH = s->out_h, OW = s->out_w, estride = g->nt * g->op;
    tile_pos p = tile_at(g, t0);
    for (int64_t i = 0; i < cnt; i++, tile_next(g, &p)) {
        const int64_t oh = 2 * p.th, ow = 2 * p.tw;
        const float *img = dy + p.n * OH * OW * O;
        for (int64_t o = 0; o < g->op; o += 16) {
            __mmask16 mask = (__mmask16)(o >= O ? 0 : O - o >= 16 ? 0xFFFF : (1u << (O - o)) - 1);
            __m512 d[2][2], t[4][2];
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    d[a][b] = oh + a < OH && ow + b < OW
                                  ? _mm512_maskz_loadu_ps(mask, img + ((oh + a) * OW + ow + b) * O + o)
                                  : _mm512_setzero_ps();
            for (int b = 0; b < 2; b++) {
                t[0][b] = d[0][b];
                t[1][b] = _mm512_add_ps(d[0][b], d[1][b]);
                t[2][b] = _mm512_sub_ps(d[0][b], d[1][b]);
                t[3][b] = _mm512_sub_ps(_mm512_setzero_ps(), d[1][b]);
            }
            float *out = dm + i * g->op + o;
            for (int a = 0; a < 4; a++) {
                _mm512_store_ps(out + (a * 4 + 0) * estride, t[a][0]);
                _mm512_store_ps(out + (a * 4 + 1) * estride, _mm512_add_ps(t[a][0], t[a][1]));
                _mm512_store_ps(out + (a * 4 + 2) * estride, _mm512_sub_ps(t[a][0], t[a][1]));
                _mm512_store_ps(out + (a * 4 + 3) * estride, _mm512_sub_ps(_mm512_setzero_ps(), t[a][1]));
            }
        }
    }
}

typedef struct {
    const float *v;  /* V rows of the block, first channel of the tile applied; stride cp */
    const float *dm; /* dM rows, block offset applied; stride op */
    float *part;     /* partial dU rows, [R][op] */
    int64_t cnt, cp, op;
    __mmask16 last_mask;
} wgf_args;

/* part[r][:] += sum_i v[i][r] dm[i][:] over the block's tiles. */
static ALWAYS_INLINE TW_AVX512 void wgf_tile(const int R, const int V, const wgf_args *t)
{
    __m512 acc[TILE_ROWS][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_setzero_ps();
    const float *a = t->v, *g = t->dm;
    for (int64_t i = 0; i < t->cnt; i++, a += t->cp, g += t->op) {
        __m512 gv[4];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            gv[v] = _mm512_load_ps(g + 16 * v);
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m512 av = _mm512_set1_ps(a[r]);
#pragma GCC unroll 4
            for (int v = 0; v < V; v++)
                acc[r][v] = _mm512_fmadd_ps(av, gv[v], acc[r][v]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            float *p = t->part + r * t->op + 16 * v;
            _mm512_store_ps(p, _mm512_add_ps(_mm512_load_ps(p), acc[r][v]));
        }
}

#define DEFINE_WGF(R, V) \
    static TW_AVX512 void wgf_##R##_##V(const wgf_args *t) { wgf_tile(R, V, t); }
INSTANCES(DEFINE_WGF)
#define WGF_ENTRY(R, V) [R][V] = wgf_##R##_##V,
static void (*const wgf_table[TILE_ROWS + 1][5])(const wgf_args *) = {INSTANCES(WGF_ENTRY)};

static void wino_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df, char *ws)
{
    wino_geom g = wino_of(s, true);
    const int64_t C = s->in_c, O = s->out_c, nb = nblocks(s);
    const int64_t part_floats = 16 * C * g.op;
    float *threads = (float *)ws + g.u_floats; /* no transformed filter here: U's room is unused */
    const int64_t nblk = (g.ntiles + g.nt - 1) / g.nt;
    int used = 1;
#pragma omp parallel num_threads(g.nthreads) if (nblk > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp single
        used = nt;
        float *v = threads + t * g.thread_floats, *dm = v + 16 * g.nt * g.cp, *part = dm + 16 * g.nt * g.op;
        memset(part, 0, sizeof(float) * (size_t)part_floats);
        for (int64_t b = nblk * t / nt; b < nblk * (t + 1) / nt; b++) {
            int64_t t0 = b * g.nt, cnt = imin(g.nt, g.ntiles - t0);
            wino_input(s, &g, x, t0, cnt, v);
            wino_grad_output(s, &g, dy, t0, cnt, dm);
            wgf_args a;
            a.cnt = cnt;
            a.cp = g.cp;
            a.op = g.op;
            for (int e = 0; e < 16; e++)
                for (int64_t c0 = 0; c0 < C; c0 += TILE_ROWS) {
                    int R = (int)imin(TILE_ROWS, C - c0);
                    a.v = v + e * g.nt * g.cp + c0;
                    for (int64_t ob = 0; ob < nb; ob++) {
                        int V = block_vectors(O, ob, &a.last_mask);
                        a.dm = dm + e * g.nt * g.op + ob * OBLOCK;
                        a.part = part + (e * C + c0) * g.op + ob * OBLOCK;
                        wgf_table[R][V](&a);
                    }
                }
        }
    }
    /* dg = G^T (sum of the threads' dU) G */
#pragma omp parallel for schedule(static) if (C * O >= 4096)
    for (int64_t c = 0; c < C; c++) {
        for (int64_t o = 0; o < O; o++) {
            float du[4][4], r[3][4];
            for (int e = 0; e < 16; e++) {
                float sum = 0;
                for (int t = 0; t < used; t++)
                    sum += threads[t * g.thread_floats + 16 * g.nt * (g.cp + g.op) + (e * C + c) * g.op + o];
                du[e / 4][e % 4] = sum;
            }
            for (int j = 0; j < 4; j++) {
                r[0][j] = du[0][j] + 0.5f * (du[1][j] + du[2][j]);
                r[1][j] = 0.5f * (du[1][j] - du[2][j]);
                r[2][j] = 0.5f * (du[1][j] + du[2][j]) + du[3][j];
            }
            for (int kh = 0; kh < 3; kh++) {
                df[((kh * 3 + 0) * C + c) * O + o] = r[kh][0] + 0.5f * (r[kh][1] + r[kh][2]);
                df[((kh * 3 + 1) * C + c) * O + o] = 0.5f * (r[kh][1] - r[kh][2]);
                df[((kh * 3 + 2) * C + c) * O + o] = 0.5f * (r[kh][1] + r[kh][2]) + r[kh][3];
            }
        }
    }
}

/* ======================================================================== */
/* entry points                                                             */
/* ======================================================================== */

static bool use_direct(tw_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    return dtype == TW_FLOAT32 && direct_enabled();
}

/* The direct kernels use aligned vector loads and stores on the workspace:
 * ask for 64 bytes more and align it here rather than trust the caller. */
static char *aligned(void *workspace)
{
    return (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
}

static bool use_winograd(tw_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    if (!use_direct(dtype, s, pass) || !winograd_enabled())
        return false;
    if (pass == TWK_CONV_BACKPROP_INPUT) {
        twk_conv2d_shape t = input_grad_shape(s);
        return direct_input_grad_ok(s) && winograd_shape_ok(&t);
    }
    return winograd_shape_ok(s);
}

size_t twk_conv2d_workspace(tw_dtype dtype, const twk_conv2d_shape *s, twk_conv_pass pass)
{
    if (use_winograd(dtype, s, pass)) {
        twk_conv2d_shape t = input_grad_shape(s);
        return 64 + wino_workspace(pass == TWK_CONV_BACKPROP_INPUT ? &t : s, pass == TWK_CONV_BACKPROP_FILTER);
    }
    if (!use_direct(dtype, s, pass))
        return gemm_workspace(dtype, s);
    switch (pass) {
    case TWK_CONV_FORWARD: return 64 + direct_forward_workspace(s);
    case TWK_CONV_BACKPROP_INPUT: {
        if (!direct_input_grad_ok(s))
            return 64 + direct_input_grad_cols_workspace(s);
        twk_conv2d_shape t = input_grad_shape(s);
        return 64 + direct_forward_workspace(&t);
    }
    case TWK_CONV_BACKPROP_FILTER: return 64 + direct_filter_workspace(s);
    }
    return 0;
}

void twk_conv2d_forward(tw_dtype dtype, const twk_conv2d_shape *s, const void *input, const void *filter,
                        void *output, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_FORWARD)) {
        gemm_forward(dtype, s, input, filter, output, workspace);
        return;
    }
    if (out_pixels(s) == 0 || s->out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_FORWARD)) {
        wino_forward(s, filter, false, input, output, aligned(workspace));
        return;
    }
    pack_filter(s, filter, false, (float *)aligned(workspace));
    direct_forward(s, input, output, aligned(workspace));
}

void twk_conv2d_backprop_input(tw_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                               const void *grad_output, void *grad_input, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_BACKPROP_INPUT)) {
        gemm_backprop_input(dtype, s, filter, grad_output, grad_input, workspace);
        return;
    }
    if (!direct_input_grad_ok(s)) {
        direct_input_grad_cols(s, filter, grad_output, grad_input, aligned(workspace));
        return;
    }
    twk_conv2d_shape t = input_grad_shape(s);
    if (out_pixels(&t) == 0 || t.out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_BACKPROP_INPUT)) {
        wino_forward(&t, filter, true, grad_output, grad_input, aligned(workspace));
        return;
    }
    pack_filter(&t, filter, true, (float *)aligned(workspace));
    direct_forward(&t, grad_output, grad_input, aligned(workspace));
}

void twk_conv2d_backprop_filter(tw_dtype dtype, const twk_conv2d_shape *s, const void *input,
                                const void *grad_output, void *grad_filter, void *workspace)
{
    if (!use_direct(dtype, s, TWK_CONV_BACKPROP_FILTER)) {
        gemm_backprop_filter(dtype, s, input, grad_output, grad_filter, workspace);
        return;
    }
    if (k_size(s) == 0 || s->out_c == 0)
        return;
    if (use_winograd(dtype, s, TWK_CONV_BACKPROP_FILTER)) {
        wino_backprop_filter(s, input, grad_output, grad_filter, aligned(workspace));
        return;
    }
    direct_backprop_filter(s, input, grad_output, grad_filter, aligned(workspace));
}
