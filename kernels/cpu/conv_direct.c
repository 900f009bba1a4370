/* 2-D convolution computed directly (float32, AVX-512; see conv_kernels.h).
 *
 * The same products as the gemm path, but the column matrix is never
 * built: the register tiles of conv_tiles.c multiply rows of the virtual
 * column matrix by blocks of the repacked filter. From 16 input channels
 * the tile walks the filter tap by tap and a tap in the padding reads a row
 * of zeros; below that the input is copied once into a zero-padded buffer
 * (per image, in the thread's L2) so a kernel row is one contiguous run.
 * The input gradient at stride 1 is the same forward kernel run on the
 * output gradient with the filter flipped and transposed (conv.c); at
 * larger strides the tile computes the column matrix dout x filter^T for
 * col2im. The filter gradient reduces over pixels with the roles of the
 * tile swapped. None of it calls OpenBLAS: switching between OpenMP's and
 * OpenBLAS's thread pools on two cores costs more than the products (the
 * idle pool spins). */
#include <string.h>

#include "conv_internal.h"
#include "parallel.h"

#define PADDED_TARGET_BYTES ((int64_t)16 << 20) /* padded-input chunk */

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
                  twk_parallel(s->out_h * s->out_w * k_size(s) * s->out_c);
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

/* Bytes of one padded buffer. */
static int64_t buffer_bytes(const twk_conv2d_shape *s, const padded_geom *p)
{
    return align64(p->chunk * p->src_h * p->src_w * s->in_c * (int64_t)sizeof(float));
}

static int64_t padded_bytes(const twk_conv2d_shape *s, const padded_geom *p)
{
    if (!p->copy)
        return 0;
    int64_t buffers = p->per_image ? p->nthreads : 1;
    return buffers * buffer_bytes(s, p);
}

static float *padded_buffer(const twk_conv2d_shape *s, const padded_geom *p, char *base, int thread)
{
    return (float *)(base + thread * buffer_bytes(s, p));
}

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
    TWK_PARALLEL_FOR(parallel && twk_parallel(rows * p->src_w * C) && rows > 1, schedule(static),
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
    });
}

/* Filter as [block][K][64] (zero-filled past out_c); row k = (kh, kw, c) in
 * HWIO order. flip: the filter of the input-gradient convolution, whose
 * (kh, kw, c, o) is the original's (k_h-1-kh, k_w-1-kw, o, c). The threads
 * take blocks. The flipped filter's output channels lie in_c apart, a
 * power of two of 2 KiB or more in ResNet50, so lines held across output
 * channels fall in the same few L1 sets and evict each other: each line
 * (16 c of one output channel) is used whole as soon as it is read,
 * scattered into 16 rows of the block. */
static void pack_filter(const twk_conv2d_shape *s, const float *f, bool flip, float *packed)
{
    const int64_t K = k_size(s), O = s->out_c, nb = nblocks(s), C = s->in_c, taps = s->k_h * s->k_w;
    TWK_PARALLEL_FOR(twk_parallel(K * O) && nb > 1, schedule(static),
    for (int64_t ob = 0; ob < nb; ob++) {
        const int64_t o0 = ob * OBLOCK, w = imin(OBLOCK, O - o0);
        for (int64_t t = 0; t < taps; t++) {
            const int64_t tf = flip ? (s->k_h - 1 - t / s->k_w) * s->k_w + (s->k_w - 1 - t % s->k_w) : t;
            const float *ft = f + tf * C * O;
            float *dst = packed + (ob * K + t * C) * OBLOCK;
            if (flip) {
                for (int64_t c0 = 0; c0 < C; c0 += 16) {
                    const int64_t cn = imin(16, C - c0);
                    for (int64_t o = 0; o < w; o++)
                        for (int64_t c = 0; c < cn; c++)
                            dst[(c0 + c) * OBLOCK + o] = ft[(o0 + o) * C + c0 + c];
                }
            } else {
                for (int64_t c = 0; c < C; c++)
                    memcpy(dst + c * OBLOCK, ft + c * O + o0, sizeof(float) * (size_t)w);
            }
            if (w < OBLOCK)
                for (int64_t c = 0; c < C; c++)
                    memset(dst + c * OBLOCK + w, 0, sizeof(float) * (size_t)(OBLOCK - w));
        }
    });
}

static bool use_taps(const twk_conv2d_shape *s) { return s->in_c >= TAP_MIN_CHANNELS; }
/* Pixels per tap tile: more when a block has at most 2 vectors. */
static int64_t tap_tile_rows(const twk_conv2d_shape *s) { return s->out_c <= 32 ? TAP_TILE_MAX : TILE_ROWS; }

size_t twk_conv_direct_forward_workspace(const twk_conv2d_shape *s)
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
    const int tile = (int)tap_tile_rows(s);
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
            twk_conv_tap_table[R][V](&t);
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
            twk_conv_fwd_table[R][V](&t);
            for (int r = 0; r < R; r++)
                t.out[r] += OBLOCK;
        }
    }
}

/* The images [n0, n0 + cn) the kernels read: x itself, or their zero-padded
 * copy in buf. */
static const float *padded_source(const twk_conv2d_shape *s, const padded_geom *p, const float *x, int64_t n0,
                                  int64_t cn, float *buf, bool parallel)
{
    if (!p->copy)
        return x + n0 * s->in_h * s->in_w * s->in_c;
    pad_images(s, p, x, n0, cn, buf, parallel);
    return buf;
}

/* out = conv(x, filter) by tap tiles, the filter packed. */
static void tap_forward(const twk_conv2d_shape *s, const float *packed, float *zeros, const float *x, float *y)
{
    memset(zeros, 0, sizeof(float) * (size_t)s->in_c);
    const int64_t npix = out_pixels(s), tile = tap_tile_rows(s);
    const int64_t ntiles = (npix + tile - 1) / tile;
    /* Threads take equal runs of whole tiles. */
    TWK_PARALLEL(twk_parallel(npix * k_size(s) * s->out_c) && ntiles > 1, ,
    {
        int64_t t0, t1;
        thread_share(ntiles, &t0, &t1);
        tap_pixels(s, packed, zeros, x, t0 * tile, imin(npix, t1 * tile), y);
    });
}

/* out = conv(x, filter) from the padded input, the filter packed. */
static void padded_forward(const twk_conv2d_shape *s, const float *packed, char *padbase, const float *x, float *y)
{
    padded_geom p = padded_of(s);
    const int64_t O = s->out_c, opix = s->out_h * s->out_w;
    if (p.per_image) {
#pragma omp parallel num_threads(p.nthreads)
        {
            float *buf = p.copy ? padded_buffer(s, &p, padbase, omp_get_thread_num()) : NULL;
#pragma omp for schedule(static)
            for (int64_t n = 0; n < s->batch; n++) {
                const float *src = padded_source(s, &p, x, n, 1, buf, false);
                fwd_pixels(s, &p, packed, src, 0, opix, y + n * opix * O);
            }
        }
        return;
    }
    float *padbuf = padded_buffer(s, &p, padbase, 0);
    for (int64_t n0 = 0; n0 < s->batch; n0 += p.chunk) {
        int64_t cn = imin(p.chunk, s->batch - n0);
        const float *src = padded_source(s, &p, x, n0, cn, padbuf, true);
        float *yc = y + n0 * opix * O;
        int64_t npix = cn * opix, ntiles = (npix + TILE_ROWS - 1) / TILE_ROWS;
        /* Threads take equal runs of whole tiles. */
        TWK_PARALLEL(twk_parallel(npix * k_size(s) * O) && ntiles > 1, ,
        {
            int64_t t0, t1;
            thread_share(ntiles, &t0, &t1);
            fwd_pixels(s, &p, packed, src, t0 * TILE_ROWS, imin(npix, t1 * TILE_ROWS), yc);
        });
    }
}

void twk_conv_direct_forward(const twk_conv2d_shape *s, const float *f, bool flip, const float *x, float *y,
                             char *ws)
{
    float *packed = (float *)ws;
    char *padbase = ws + packed_bytes(s);
    pack_filter(s, f, flip, packed);
    if (use_taps(s))
        tap_forward(s, packed, (float *)padbase, x, y);
    else
        padded_forward(s, packed, padbase, x, y);
}

static int64_t row_block(const twk_conv2d_shape *s)
{
    /* About 16 KB of output gradient per block stays in L1 with the input rows it meets. */
    return imax(1, ((int64_t)16 << 10) / imax(1, s->out_w * imin(s->out_c, OBLOCK) * (int64_t)sizeof(float)));
}

size_t twk_conv_direct_filter_workspace(const twk_conv2d_shape *s)
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
                        twk_conv_bwf_table[R][V](&a);
                    }
                }
            }
        }
    }
}

/* Each thread's partial filter gradient (part_floats apart from parts on)
 * over the whole batch. */
static void bwf_partials(const twk_conv2d_shape *s, const padded_geom *p, const float *x, const float *dy,
                         float *parts, int64_t part_floats, char *padbase)
{
    const int64_t K = k_size(s), O = s->out_c, opix = s->out_h * s->out_w;
    if (p->per_image) {
#pragma omp parallel num_threads(p->nthreads)
        {
            int t = omp_get_thread_num();
            float *buf = p->copy ? padded_buffer(s, p, padbase, t) : NULL;
#pragma omp for schedule(static)
            for (int64_t n = 0; n < s->batch; n++) {
                const float *src = padded_source(s, p, x, n, 1, buf, false);
                bwf_rows(s, p, src, dy + n * opix * O, 0, s->out_h, parts + t * part_floats);
            }
        }
        return;
    }
    float *padbuf = padded_buffer(s, p, padbase, 0);
    for (int64_t n0 = 0; n0 < s->batch; n0 += p->chunk) {
        int64_t cn = imin(p->chunk, s->batch - n0);
        const float *src = padded_source(s, p, x, n0, cn, padbuf, true);
        const float *dyc = dy + n0 * opix * O;
        int64_t rows = cn * s->out_h;
        TWK_PARALLEL(twk_parallel(rows * s->out_w * K * O), num_threads(p->nthreads),
        {
            int64_t q0, q1;
            thread_share(rows, &q0, &q1);
            bwf_rows(s, p, src, dyc, q0, q1, parts + omp_get_thread_num() * part_floats);
        });
    }
}

void twk_conv_direct_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df,
                                     char *ws)
{
    padded_geom p = padded_of(s);
    const int64_t K = k_size(s), O = s->out_c, nb = nblocks(s), ldp = nb * OBLOCK;
    const int64_t part_floats = align64(K * ldp * (int64_t)sizeof(float)) / (int64_t)sizeof(float);
    const int nthreads = p.nthreads;
    float *parts = (float *)ws;
    char *padbase = ws + part_floats * (int64_t)sizeof(float) * nthreads;
    memset(parts, 0, sizeof(float) * (size_t)(part_floats * nthreads));
    bwf_partials(s, &p, x, dy, parts, part_floats, padbase);
    TWK_PARALLEL_FOR(twk_parallel(K * O * nthreads), schedule(static),
    for (int64_t k = 0; k < K; k++) {
        for (int64_t o = 0; o < O; o++) {
            float sum = 0;
            for (int t = 0; t < nthreads; t++)
                sum += parts[t * part_floats + k * ldp + o];
            df[k * O + o] = sum;
        }
    });
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

size_t twk_conv_direct_input_grad_cols_workspace(const twk_conv2d_shape *s)
{
    return (size_t)(transposed_bytes(s) + align64((int64_t)twk_conv_gemm_workspace(TWK_FLOAT32, s)));
}

void twk_conv_direct_input_grad_cols(const twk_conv2d_shape *s, const float *f, const float *dy, float *dx,
                                     char *ws)
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
    const int64_t rows = s->batch * s->out_h, step = twk_conv_chunk_rows(s, sizeof(float));
    for (int64_t r0 = 0; r0 < rows; r0 += step) {
        const int64_t r1 = imin(rows, r0 + step), npix = (r1 - r0) * s->out_w;
        const int64_t ntiles = (npix + TILE_ROWS - 1) / TILE_ROWS;
        const float *g = dy + r0 * s->out_w * O;
        TWK_PARALLEL_FOR(twk_parallel(npix * K * O) && ntiles > 1, schedule(static),
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
                twk_conv_fwd_table[R][V](&t);
            }
        });
        twk_conv_col2im_f32(s, col, r0, r1, dx);
    }
}
