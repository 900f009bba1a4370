/* The register tiles of the direct and Winograd paths (float32, AVX-512).
 *
 * A tile of 6 pixels x 64 output channels (24 zmm accumulators) multiplies
 * a row of the virtual column matrix by a block of the repacked filter: per
 * step 4 vector loads and 6 broadcasts feed 24 FMAs. The filter gradient
 * reduces over pixels with the roles of the tile swapped (6 filter rows x
 * 64 output channels). Every (rows, vectors) pair is compiled on its own,
 * so the loops unroll fully and the accumulators stay in registers; the
 * tables in conv_internal.h pick one at run time. */
#include "conv_internal.h"

/* acc[0..R)[0..V) = 0 */
static ALWAYS_INLINE TW_AVX512 void tile_zero(const int R, const int V, __m512 acc[][4])
{
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            acc[r][v] = _mm512_setzero_ps();
}

/* acc[r] += ap[r][j] x (row j of the packed block from bp) for j < len;
 * returns the row after the last. */
static ALWAYS_INLINE TW_AVX512 const float *tile_run(const int R, const int V, __m512 acc[][4],
                                                     const float *const ap[], const float *bp, int64_t len)
{
    for (int64_t j = 0; j < len; j++, bp += OBLOCK) {
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
    return bp;
}

/* out[r][0 .. 16 V) = acc[r], the lanes of the last vector that exist. */
static ALWAYS_INLINE TW_AVX512 void tile_store(const int R, const int V, __m512 acc[][4], float *const out[],
                                               __mmask16 last_mask)
{
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
        for (int v = 0; v < V - 1; v++)
            _mm512_storeu_ps(out[r] + 16 * v, acc[r][v]);
        _mm512_mask_storeu_ps(out[r] + 16 * (V - 1), last_mask, acc[r][V - 1]);
    }
}

static ALWAYS_INLINE TW_AVX512 void fwd_tile(const int R, const int V, const fwd_args *t)
{
    __m512 acc[TILE_ROWS][4];
    tile_zero(R, V, acc);
    const float *bp = t->b;
    for (int64_t i = 0; i < t->n_outer; i++) {
        for (int64_t k = 0; k < t->n_inner; k++) {
            const int64_t off = i * t->a_outer + k * t->a_inner;
            const float *ap[TILE_ROWS];
#pragma GCC unroll 6
            for (int r = 0; r < R; r++)
                ap[r] = t->a[r] + off;
            bp = tile_run(R, V, acc, ap, bp, t->len);
        }
    }
    tile_store(R, V, acc, t->out, t->last_mask);
}

/* The same product without a padded copy: the tile walks the filter tap by
 * tap, each pixel reading its tap's in_c values from the image, or from a
 * row of zeros where the tap falls in the padding. */
static ALWAYS_INLINE TW_AVX512 void tap_tile(const int R, const int V, const tap_args *t)
{
    __m512 acc[TAP_TILE_MAX][4];
    tile_zero(R, V, acc);
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
            bp = tile_run(R, V, acc, ap, bp, t->c);
        }
    }
    tile_store(R, V, acc, t->out, t->last_mask);
}

static ALWAYS_INLINE TW_AVX512 void bwf_tile(const int R, const int V, const bwf_args *t)
{
    __m512 acc[TILE_ROWS][4];
    tile_zero(R, V, acc);
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

#define TAP_INSTANCES(X) \
    X(1, 1) X(2, 1) X(3, 1) X(4, 1) X(5, 1) X(6, 1) X(7, 1) X(8, 1) \
    X(1, 2) X(2, 2) X(3, 2) X(4, 2) X(5, 2) X(6, 2) X(7, 2) X(8, 2) \
    X(1, 3) X(2, 3) X(3, 3) X(4, 3) X(5, 3) X(6, 3) \
    X(1, 4) X(2, 4) X(3, 4) X(4, 4) X(5, 4) X(6, 4)
#define INSTANCES(X) \
    X(1, 1) X(1, 2) X(1, 3) X(1, 4) X(2, 1) X(2, 2) X(2, 3) X(2, 4) X(3, 1) X(3, 2) X(3, 3) X(3, 4) \
    X(4, 1) X(4, 2) X(4, 3) X(4, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4) X(6, 1) X(6, 2) X(6, 3) X(6, 4)

#define DEFINE_FWD(R, V) \
    static TW_AVX512 void fwd_##R##_##V(const fwd_args *t) { fwd_tile(R, V, t); }
#define DEFINE_TAP(R, V) \
    static TW_AVX512 void tap_##R##_##V(const tap_args *t) { tap_tile(R, V, t); }
#define DEFINE_BWF(R, V) \
    static TW_AVX512 void bwf_##R##_##V(const bwf_args *t) { bwf_tile(R, V, t); }
INSTANCES(DEFINE_FWD)
TAP_INSTANCES(DEFINE_TAP)
INSTANCES(DEFINE_BWF)

#define FWD_ENTRY(R, V) [R][V] = fwd_##R##_##V,
#define TAP_ENTRY(R, V) [R][V] = tap_##R##_##V,
#define BWF_ENTRY(R, V) [R][V] = bwf_##R##_##V,
void (*const twk_conv_fwd_table[TILE_ROWS + 1][5])(const fwd_args *) = {INSTANCES(FWD_ENTRY)};
void (*const twk_conv_tap_table[TAP_TILE_MAX + 1][5])(const tap_args *) = {TAP_INSTANCES(TAP_ENTRY)};
void (*const twk_conv_bwf_table[TILE_ROWS + 1][5])(const bwf_args *) = {INSTANCES(BWF_ENTRY)};
