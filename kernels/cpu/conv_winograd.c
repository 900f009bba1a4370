/* 2-D convolution by Winograd F(2x2, 3x3) (float32, AVX-512; see
 * conv_kernels.h).
 *
 * 3x3, stride 1, undilated convolutions with at least 16 channels in and
 * out do 2.25x fewer multiplications this way. Each 2x2 block of outputs
 * ("tile") comes from a 4x4 block of the input:
 *     Y = A^T [ (G g G^T) . (B^T d B) ] A        (. elementwise)
 * summed over input channels: 16 independent products, one per position e
 * of the 4x4 transformed tile,
 *     M[e][tile][o] = sum_c V[e][tile][c] U[e][c][o],
 * which run on the register tiles of the direct path (conv_tiles.c). Tiles go in
 * blocks small enough that V and M stay in the thread's L2. The filter
 * gradient follows from the same transforms transposed:
 *     dU[e][c][o] = sum_tiles V[e][tile][c] (A dY A^T)[e][tile][o],
 *     dg = G^T dU G,
 * each thread summing into its own dU, which every block reads and writes:
 * when dU outgrows L2 the blocks are as large as WINO_BIG_BLOCK_BYTES
 * allows instead (wino_of).
 * The input gradient is the forward pass of the flipped filter on the
 * output gradient, as in the direct path. Rounding differs from a direct
 * sum by a few float32 ulps of the largest terms. */
#include <string.h>

#include "conv_internal.h"

#define WINO_L2_BYTES ((int64_t)768 << 10) /* per thread: one block's V and M */
/* Per thread, one block's V and dM for a filter gradient whose partial dU
 * outgrows L2 (see wino_of). */
#define WINO_BIG_BLOCK_BYTES ((int64_t)8 << 20)

bool twk_conv_winograd_shape_ok(const twk_conv2d_shape *s)
{
    return s->k_h == 3 && s->k_w == 3 && s->stride_h == 1 && s->stride_w == 1 && s->dilation_h == 1 &&
           s->dilation_w == 1 && s->in_c >= 16 && s->out_c >= 16 && out_pixels(s) > 0;
}

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
    g.nthreads = omp_get_max_threads();
    int64_t per_tile = 16 * (g.cp + g.op) * (int64_t)sizeof(float);
    if (!filter_grad || 16 * s->in_c * g.op * (int64_t)sizeof(float) <= WINO_L2_BYTES) {
        g.nt = imax(TILE_ROWS, imin(120, WINO_L2_BYTES / per_tile) / TILE_ROWS * TILE_ROWS);
    } else {
        /* Each block reads and writes the thread's whole partial dU (16 in_c
         * x out_c): past L2, 12-tile blocks of ResNet50's 512-channel layers
         * spent twice the products' time on that traffic. So blocks as
         * large as WINO_BIG_BLOCK_BYTES allows, as few per thread as that
         * makes, of equal size. */
        int64_t share = (g.ntiles + g.nthreads - 1) / g.nthreads;
        int64_t cap = imax(TILE_ROWS, WINO_BIG_BLOCK_BYTES / per_tile);
        int64_t nblk = g.nthreads * ((share + cap - 1) / cap);
        int64_t nt = (g.ntiles + nblk - 1) / nblk;
        g.nt = (nt + TILE_ROWS - 1) / TILE_ROWS * TILE_ROWS;
    }
    g.u_floats = align64(16 * nblocks(s) * s->in_c * OBLOCK * (int64_t)sizeof(float)) / (int64_t)sizeof(float);
    g.thread_floats = align64(16 * g.nt * (g.cp + g.op) * (int64_t)sizeof(float) +
                              (filter_grad ? 16 * s->in_c * g.op * (int64_t)sizeof(float) : 0)) /
                      (int64_t)sizeof(float);
    return g;
}

size_t twk_conv_winograd_workspace(const twk_conv2d_shape *s, bool filter_grad)
{
    wino_geom g = wino_of(s, filter_grad);
    return (size_t)((g.u_floats + g.thread_floats * g.nthreads) * (int64_t)sizeof(float));
}

/* U[e][block][c][64] = (G g G^T)[e] for every (c, o), 16 output channels a
 * vector (lanes past out_c zero; the vectors of a block past its last are
 * never read); flip: the filter of the input-gradient convolution (see
 * pack_filter in conv_direct.c), whose 16 output channels lie in_c apart:
 * each line of them (16 c of one output channel) is copied whole into a
 * transposed 16 x 16 block on the stack as soon as it is read, for the
 * reason pack_filter gives (gathering them one c at a time kept 16 lines
 * in the same few L1 sets). */
static TW_AVX512 void wino_filter_transform_vector(const twk_conv2d_shape *s, const float *f, bool flip, float *u,
                                                   int64_t ov)
{
    const int64_t C = s->in_c, O = s->out_c, nb = nblocks(s);
    const int64_t estride = nb * C * OBLOCK;
    const __m512 half = _mm512_set1_ps(0.5f);
    const int64_t o = ov * 16, on = imin(16, O - o);
    const __mmask16 m = first_lanes(O - o);
    float ft[9][16][16]; /* flip: [kh * 3 + kw][c - c0][o lane] */
    for (int64_t c0 = 0; c0 < C; c0 += 16) {
        const int64_t cn = imin(16, C - c0);
        if (flip)
            for (int kh = 0; kh < 3; kh++)
                for (int kw = 0; kw < 3; kw++) {
                    const float *src = f + (((2 - kh) * 3 + (2 - kw)) * O + o) * C + c0;
                    for (int64_t ol = 0; ol < on; ol++)
                        for (int64_t cl = 0; cl < cn; cl++)
                            ft[kh * 3 + kw][cl][ol] = src[ol * C + cl];
                }
        for (int64_t c = c0; c < c0 + cn; c++) {
            __m512 g[3][3], t[4][3];
            for (int kh = 0; kh < 3; kh++)
                for (int kw = 0; kw < 3; kw++)
                    g[kh][kw] = !flip ? _mm512_maskz_loadu_ps(m, f + ((kh * 3 + kw) * C + c) * O + o)
                                      : _mm512_maskz_loadu_ps(m, ft[kh * 3 + kw][c - c0]);
            for (int j = 0; j < 3; j++) {
                t[0][j] = g[0][j];
                t[1][j] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(g[0][j], g[1][j]), g[2][j]));
                t[2][j] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(g[0][j], g[1][j]), g[2][j]));
                t[3][j] = g[2][j];
            }
            float *dst = u + ((ov / 4) * C + c) * OBLOCK + (ov % 4) * 16;
            for (int a = 0; a < 4; a++) {
                __m512 sum = _mm512_add_ps(_mm512_add_ps(t[a][0], t[a][1]), t[a][2]);
                __m512 dif = _mm512_add_ps(_mm512_sub_ps(t[a][0], t[a][1]), t[a][2]);
                _mm512_store_ps(dst + (a * 4 + 0) * estride, t[a][0]);
                _mm512_store_ps(dst + (a * 4 + 1) * estride, _mm512_mul_ps(half, sum));
                _mm512_store_ps(dst + (a * 4 + 2) * estride, _mm512_mul_ps(half, dif));
                _mm512_store_ps(dst + (a * 4 + 3) * estride, t[a][2]);
            }
        }
    }
}

/* The parallel loop stays outside the AVX-512 functions: clang outlines an
 * OpenMP region into a function of its own, without their target
 * attribute. */
static void wino_filter_transform(const twk_conv2d_shape *s, const float *f, bool flip, float *u)
{
    const int64_t C = s->in_c, O = s->out_c, nv = (O + 15) / 16;
#pragma omp parallel for schedule(static) if (C * O >= 4096)
    for (int64_t ov = 0; ov < nv; ov++)
        wino_filter_transform_vector(s, f, flip, u, ov);
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
            __mmask16 m = first_lanes(C - c);
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
                twk_conv_fwd_table[R][V](&t);
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
            __mmask16 mask = first_lanes(O - o);
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

void twk_conv_winograd_forward(const twk_conv2d_shape *s, const float *f, bool flip, const float *x, float *y,
                               char *ws)
{
    wino_geom g = wino_of(s, false);
    float *u = (float *)ws, *threads = u + g.u_floats;
    wino_filter_transform(s, f, flip, u);
    const int64_t nblk = (g.ntiles + g.nt - 1) / g.nt;
#pragma omp parallel num_threads(g.nthreads) if (nblk > 1)
    {
        float *v = threads + omp_get_thread_num() * g.thread_floats, *m = v + 16 * g.nt * g.cp;
        int64_t b0, b1;
        thread_share(nblk, &b0, &b1);
        for (int64_t b = b0; b < b1; b++) {
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
            __mmask16 mask = first_lanes(O - o);
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

/* part[e][c][:] += sum_i V[e][i][c] dM[e][i][:] over the cnt tiles of a
 * block: the direct path's filter-gradient tile, the tiles taken as one row
 * of cnt pixels (V rows cp floats apart, dM rows op apart). */
static void wino_filter_products(const twk_conv2d_shape *s, const wino_geom *g, const float *v, const float *dm,
                                 int64_t cnt, float *part)
{
    const int64_t C = s->in_c, O = s->out_c, nb = nblocks(s);
    bwf_args a;
    a.ldp = g->op;
    a.r0 = 0;
    a.r1 = 1;
    a.a_off = 0;
    a.out_h = 1;
    a.out_w = cnt;
    a.out_c = g->op;
    a.row_step = a.img_step = 0;
    a.pix_step = g->cp;
    for (int e = 0; e < 16; e++)
        for (int64_t c0 = 0; c0 < C; c0 += TILE_ROWS) {
            int R = (int)imin(TILE_ROWS, C - c0);
            a.src = v + e * g->nt * g->cp + c0;
            for (int64_t ob = 0; ob < nb; ob++) {
                int V = block_vectors(O, ob, &a.last_mask);
                a.dy = dm + e * g->nt * g->op + ob * OBLOCK;
                a.part = part + (e * C + c0) * g->op + ob * OBLOCK;
                twk_conv_bwf_table[R][V](&a);
            }
        }
}

/* dg = G^T (sum of the used threads' dU) G, 16 output channels a vector. */
static TW_AVX512 void wino_filter_output_channel(const twk_conv2d_shape *s, const wino_geom *g,
                                                 const float *threads, int used, float *df, int64_t c)
{
    const int64_t C = s->in_c, O = s->out_c, nv = (O + 15) / 16;
    const float *dus = threads + 16 * g->nt * (g->cp + g->op);
    const __m512 half = _mm512_set1_ps(0.5f);
    for (int64_t ov = 0; ov < nv; ov++) {
        const int64_t o = ov * 16;
        const __mmask16 m = first_lanes(O - o);
        __m512 du[4][4], r[3][4];
        for (int e = 0; e < 16; e++) {
            __m512 sum = _mm512_load_ps(dus + (e * C + c) * g->op + o);
            for (int t = 1; t < used; t++)
                sum = _mm512_add_ps(sum, _mm512_load_ps(dus + t * g->thread_floats + (e * C + c) * g->op + o));
            du[e / 4][e % 4] = sum;
        }
        for (int j = 0; j < 4; j++) {
            __m512 mid = _mm512_mul_ps(half, _mm512_add_ps(du[1][j], du[2][j]));
            r[0][j] = _mm512_add_ps(du[0][j], mid);
            r[1][j] = _mm512_mul_ps(half, _mm512_sub_ps(du[1][j], du[2][j]));
            r[2][j] = _mm512_add_ps(mid, du[3][j]);
        }
        for (int kh = 0; kh < 3; kh++) {
            __m512 mid = _mm512_mul_ps(half, _mm512_add_ps(r[kh][1], r[kh][2]));
            _mm512_mask_storeu_ps(df + ((kh * 3 + 0) * C + c) * O + o, m, _mm512_add_ps(r[kh][0], mid));
            _mm512_mask_storeu_ps(df + ((kh * 3 + 1) * C + c) * O + o, m,
                                  _mm512_mul_ps(half, _mm512_sub_ps(r[kh][1], r[kh][2])));
            _mm512_mask_storeu_ps(df + ((kh * 3 + 2) * C + c) * O + o, m, _mm512_add_ps(mid, r[kh][3]));
        }
    }
}

/* Its parallel loop outside the AVX-512 function, as wino_filter_transform's. */
static void wino_filter_output(const twk_conv2d_shape *s, const wino_geom *g, const float *threads, int used,
                               float *df)
{
    const int64_t C = s->in_c, O = s->out_c;
#pragma omp parallel for schedule(static) if (C * O >= 4096)
    for (int64_t c = 0; c < C; c++)
        wino_filter_output_channel(s, g, threads, used, df, c);
}

void twk_conv_winograd_backprop_filter(const twk_conv2d_shape *s, const float *x, const float *dy, float *df,
                                       char *ws)
{
    wino_geom g = wino_of(s, true);
    const int64_t part_floats = 16 * s->in_c * g.op;
    float *threads = (float *)ws + g.u_floats; /* no transformed filter here: U's room is unused */
    const int64_t nblk = (g.ntiles + g.nt - 1) / g.nt;
    int used = 1;
#pragma omp parallel num_threads(g.nthreads) if (nblk > 1)
    {
#pragma omp single
        used = omp_get_num_threads();
        float *v = threads + omp_get_thread_num() * g.thread_floats, *dm = v + 16 * g.nt * g.cp;
        float *part = dm + 16 * g.nt * g.op;
        memset(part, 0, sizeof(float) * (size_t)part_floats);
        int64_t b0, b1;
        thread_share(nblk, &b0, &b1);
        for (int64_t b = b0; b < b1; b++) {
            int64_t t0 = b * g.nt, cnt = imin(g.nt, g.ntiles - t0);
            wino_input(s, &g, x, t0, cnt, v);
            wino_grad_output(s, &g, dy, t0, cnt, dm);
            wino_filter_products(s, &g, v, dm, cnt, part);
        }
    }
    wino_filter_output(s, &g, threads, used, df);
}
