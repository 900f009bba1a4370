/* The depthwise convolution's three passes over a range of rows, read by
 * depthwise.c once per dtype and instruction set: the includer defines T
 * (float or double), ISA (a target attribute, or nothing), VBYTES (its
 * vector width in bytes) and NAME(x), a name for this copy's functions and
 * types. Channels are the inner loops;
 * a block of CBLOCK outputs collects every tap before it is stored. The
 * common case, multiplier 1 and a full block, runs on GCC vectors of the
 * ISA's width held in local variables, which the compiler keeps in
 * registers across the taps (the general loop keeps its sums in memory). */

typedef T NAME(vec) __attribute__((vector_size(VBYTES)));
typedef T NAME(uvec) __attribute__((vector_size(VBYTES), aligned(sizeof(T)), may_alias)); /* unaligned */
#define NV ((int)(CBLOCK * sizeof(T) / VBYTES)) /* vectors per block */

/* acc[v] += a[v] * b[v] over a block. */
#define BLOCK_FMA(acc, a, b)                                                                                    \
    for (int v = 0; v < NV; v++)                                                                                \
        acc[v] += ((const NAME(uvec) *)(a))[v] * ((const NAME(uvec) *)(b))[v]

/* Output rows q in [r0, r1), q = n * out_h + oh. */
static ISA void NAME(fwd)(const twk_depthwise_shape *s, const T *x, const T *f, T *y, int64_t r0, int64_t r1)
{
    const int64_t C = s->channels, M = s->multiplier, CM = C * M;
    for (int64_t q = r0; q < r1; q++) {
        int64_t n = q / s->out_h, ih0 = q % s->out_h * s->stride_h - s->pad_top;
        for (int64_t ow = 0; ow < s->out_w; ow++) {
            int64_t iw0 = ow * s->stride_w - s->pad_left;
            T *yo = y + (q * s->out_w + ow) * CM;
            for (int64_t b0 = 0; b0 < CM; b0 += CBLOCK) {
                int64_t bl = CM - b0 < CBLOCK ? CM - b0 : CBLOCK;
                bool fast = M == 1 && bl == CBLOCK;
                NAME(vec) vacc[NV] = {0};
                T acc[CBLOCK] = {0};
                for (int64_t kh = 0; kh < s->k_h; kh++) {
                    int64_t ih = ih0 + kh * s->dilation_h;
                    if (ih < 0 || ih >= s->in_h)
                        continue;
                    for (int64_t kw = 0; kw < s->k_w; kw++) {
                        int64_t iw = iw0 + kw * s->dilation_w;
                        if (iw < 0 || iw >= s->in_w)
                            continue;
                        const T *restrict xp = x + ((n * s->in_h + ih) * s->in_w + iw) * C;
                        const T *restrict fp = f + (kh * s->k_w + kw) * CM + b0;
                        if (fast)
                            BLOCK_FMA(vacc, xp + b0, fp);
                        else if (M == 1)
                            for (int64_t c = 0; c < bl; c++)
                                acc[c] += xp[b0 + c] * fp[c];
                        else
                            for (int64_t c = 0; c < bl; c++)
                                acc[c] += xp[(b0 + c) / M] * fp[c];
                    }
                }
                if (fast)
                    for (int v = 0; v < NV; v++)
                        ((NAME(uvec) *)(yo + b0))[v] = vacc[v];
                else
                    memcpy(yo + b0, acc, (size_t)bl * sizeof(T));
            }
        }
    }
}

/* Input rows r in [r0, r1), r = n * in_h + ih: each input pixel gathers the
 * output pixels whose windows hold it, so rows never share an element. */
static ISA void NAME(bwi)(const twk_depthwise_shape *s, const T *f, const T *g, T *dx, int64_t r0, int64_t r1)
{
    const int64_t C = s->channels, M = s->multiplier, CM = C * M;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / s->in_h, ih = r % s->in_h;
        for (int64_t iw = 0; iw < s->in_w; iw++) {
            T *dxo = dx + (r * s->in_w + iw) * C;
            for (int64_t c0 = 0; c0 < C; c0 += CBLOCK) {
                int64_t cl = C - c0 < CBLOCK ? C - c0 : CBLOCK;
                bool fast = M == 1 && cl == CBLOCK;
                NAME(vec) vacc[NV] = {0};
                T acc[CBLOCK] = {0};
                for (int64_t kh = 0; kh < s->k_h; kh++) {
                    int64_t th = ih + s->pad_top - kh * s->dilation_h;
                    if (th < 0 || th % s->stride_h || th / s->stride_h >= s->out_h)
                        continue;
                    int64_t oh = th / s->stride_h;
                    for (int64_t kw = 0; kw < s->k_w; kw++) {
                        int64_t tw = iw + s->pad_left - kw * s->dilation_w;
                        if (tw < 0 || tw % s->stride_w || tw / s->stride_w >= s->out_w)
                            continue;
                        int64_t ow = tw / s->stride_w;
                        const T *restrict gp = g + ((n * s->out_h + oh) * s->out_w + ow) * CM + c0 * M;
                        const T *restrict fp = f + (kh * s->k_w + kw) * CM + c0 * M;
                        if (fast)
                            BLOCK_FMA(vacc, gp, fp);
                        else if (M == 1)
                            for (int64_t c = 0; c < cl; c++)
                                acc[c] += gp[c] * fp[c];
                        else
                            for (int64_t c = 0; c < cl; c++)
                                for (int64_t m = 0; m < M; m++)
                                    acc[c] += gp[c * M + m] * fp[c * M + m];
                    }
                }
                if (fast)
                    for (int v = 0; v < NV; v++)
                        ((NAME(uvec) *)(dxo + c0))[v] = vacc[v];
                else
                    memcpy(dxo + c0, acc, (size_t)cl * sizeof(T));
            }
        }
    }
}

/* part (k_h * k_w * C * M, zeroed by the caller) += the filter gradient
 * over output rows q in [r0, r1). For each tap and block of channels the
 * block's sums run along the row of output pixels, stored once. */
static ISA void NAME(bwf)(const twk_depthwise_shape *s, const T *x, const T *g, T *part, int64_t r0, int64_t r1)
{
    const int64_t C = s->channels, M = s->multiplier, CM = C * M;
    for (int64_t q = r0; q < r1; q++) {
        int64_t n = q / s->out_h, ih0 = q % s->out_h * s->stride_h - s->pad_top;
        for (int64_t kh = 0; kh < s->k_h; kh++) {
            int64_t ih = ih0 + kh * s->dilation_h;
            if (ih < 0 || ih >= s->in_h)
                continue;
            const T *xrow = x + (n * s->in_h + ih) * s->in_w * C;
            for (int64_t kw = 0; kw < s->k_w; kw++) {
                /* The output pixels whose tap kw falls inside the row:
                 * 0 <= ow * stride - pad_left + kw * dilation < in_w. */
                int64_t shift = kw * s->dilation_w - s->pad_left, last = s->in_w - 1 - shift;
                int64_t ow0 = shift >= 0 ? 0 : (-shift + s->stride_w - 1) / s->stride_w;
                int64_t ow1 = last < 0 ? 0 : last / s->stride_w + 1;
                ow1 = ow1 < s->out_w ? ow1 : s->out_w;
                T *pp = part + (kh * s->k_w + kw) * CM;
                for (int64_t b0 = 0; b0 < CM; b0 += CBLOCK) {
                    int64_t bl = CM - b0 < CBLOCK ? CM - b0 : CBLOCK;
                    bool fast = M == 1 && bl == CBLOCK;
                    NAME(vec) vacc[NV] = {0};
                    T acc[CBLOCK] = {0};
                    for (int64_t ow = ow0; ow < ow1; ow++) {
                        const T *restrict xp = xrow + (ow * s->stride_w + shift) * C;
                        const T *restrict gp = g + (q * s->out_w + ow) * CM + b0;
                        if (fast)
                            BLOCK_FMA(vacc, xp + b0, gp);
                        else if (M == 1)
                            for (int64_t c = 0; c < bl; c++)
                                acc[c] += xp[b0 + c] * gp[c];
                        else
                            for (int64_t c = 0; c < bl; c++)
                                acc[c] += xp[(b0 + c) / M] * gp[c];
                    }
                    if (fast)
                        for (int v = 0; v < NV; v++)
                            ((NAME(uvec) *)(pp + b0))[v] += vacc[v];
                    else
                        for (int64_t c = 0; c < bl; c++)
                            pp[b0 + c] += acc[c];
                }
            }
        }
    }
}

#undef NV
#undef BLOCK_FMA
