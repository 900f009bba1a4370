/* Convolution through cuDNN (its legacy descriptor API, still in cuDNN 9),
 * and pooling kernels of our own: cuDNN pads symmetrically and breaks max
 * ties its own way, while the engine's SAME padding puts the odd row after
 * and TensorFlow's rule gives a window's gradient to its first maximum.
 *
 * cuDNN runs every convolution in NCHW (filters KCRS) on copies of the
 * engine's NHWC blocks and HWIO filters, made by twc_copy's tiled transpose.
 * On an H200 (cuDNN 9, float32, FMA math) the ResNet50 training step took
 * 0.067 s this way against 0.072 s on the NHWC blocks themselves, both with
 * cuDNN's heuristics; float64 has no NHWC algorithm for the input gradient
 * there at all. (The CNN of Fashion-MNIST, small images and few channels,
 * lost: 0.89 s an epoch against 0.82 s, its transposes' launches weighing
 * more than its convolutions' gain.) Where the padding after exceeds the
 * padding before, the input is padded explicitly by the difference (zeros
 * after) and cuDNN pads both sides by the amount before. Float32
 * convolutions use FMA math only (no TF32), to stay within float32 rounding
 * of the CPU. */
#include "twc_internal.h"

static cudnnDataType_t dnn_type(twk_dtype dtype)
{
    return dtype == TWK_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/* Descriptors and temporaries of one convolution call. */
typedef struct {
    twc_device *dev;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t conv;
    int64_t xh, xw;     /* input as cuDNN sees it (with the rows added after) */
    size_t itemsize;
    void *tmp[5];       /* blocks from twc_alloc, freed by conv_end */
} conv_call;

/* Rows to add after the input so that cuDNN's symmetric padding reaches out_h. */
static int64_t extra_after(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad_before)
{
    int64_t after = (out - 1) * stride + (k - 1) * dilation + 1 - in - pad_before;
    return after > pad_before ? after - pad_before : 0;
}

static void conv_end(conv_call *c)
{
    if (c->x) cudnnDestroyTensorDescriptor(c->x);
    if (c->y) cudnnDestroyTensorDescriptor(c->y);
    if (c->f) cudnnDestroyFilterDescriptor(c->f);
    if (c->conv) cudnnDestroyConvolutionDescriptor(c->conv);
    for (int i = 0; i < 5; i++)
        twc_free(c->dev, c->tmp[i]);
}

static int conv_begin(conv_call *c, twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const char *what)
{
    *c = conv_call();
    c->dev = dev;
    if (dtype != TWK_FLOAT32 && dtype != TWK_FLOAT64)
        return twc__fail("%s: dtype %d is not a float type", what, dtype);
    if (twc__use(dev) < 0)
        return -1;
    c->itemsize = twk_dtype_size(dtype);
    cudnnTensorFormat_t layout = CUDNN_TENSOR_NCHW;
    c->xh = s->in_h + extra_after(s->in_h, s->out_h, s->k_h, s->stride_h, s->dilation_h, s->pad_top);
    c->xw = s->in_w + extra_after(s->in_w, s->out_w, s->k_w, s->stride_w, s->dilation_w, s->pad_left);
    cudnnDataType_t t = dnn_type(dtype);
    if (twc__dnn(cudnnCreateTensorDescriptor(&c->x), what) < 0 ||
        twc__dnn(cudnnCreateTensorDescriptor(&c->y), what) < 0 ||
        twc__dnn(cudnnCreateFilterDescriptor(&c->f), what) < 0 ||
        twc__dnn(cudnnCreateConvolutionDescriptor(&c->conv), what) < 0 ||
        twc__dnn(cudnnSetTensor4dDescriptor(c->x, layout, t, (int)s->batch, (int)s->in_c, (int)c->xh,
                                            (int)c->xw), what) < 0 ||
        twc__dnn(cudnnSetTensor4dDescriptor(c->y, layout, t, (int)s->batch, (int)s->out_c, (int)s->out_h,
                                            (int)s->out_w), what) < 0 ||
        twc__dnn(cudnnSetFilter4dDescriptor(c->f, t, layout, (int)s->out_c, (int)s->in_c, (int)s->k_h,
                                            (int)s->k_w), what) < 0 ||
        twc__dnn(cudnnSetConvolution2dDescriptor(c->conv, (int)s->pad_top, (int)s->pad_left, (int)s->stride_h,
                                                 (int)s->stride_w, (int)s->dilation_h, (int)s->dilation_w,
                                                 CUDNN_CROSS_CORRELATION, t), what) < 0 ||
        twc__dnn(cudnnSetConvolutionMathType(c->conv, CUDNN_FMA_MATH), what) < 0)
        return -1;
    int n, ch, h, w;
    if (twc__dnn(cudnnGetConvolution2dForwardOutputDim(c->conv, c->x, c->f, &n, &ch, &h, &w), what) < 0)
        return -1;
    if (h != s->out_h || w != s->out_w)
        return twc__fail("%s: cuDNN computes a %dx%d output, the engine asks for %lldx%lld", what, h, w,
                         (long long)s->out_h, (long long)s->out_w);
    return 0;
}

static void *conv_tmp(conv_call *c, int slot, size_t bytes)
{
    c->tmp[slot] = twc_alloc(c->dev, bytes);
    return c->tmp[slot];
}

/* Strides of cuDNN's KCRS filter block, indexed (out, h, w, in). */
static void dnn_filter_strides(const twk_conv2d_shape *s, int64_t st[4])
{
    int64_t kh = s->k_h, kw = s->k_w, ci = s->in_c;
    st[0] = ci * kh * kw, st[1] = kw, st[2] = 1, st[3] = kh * kw;
}

/* HWIO filter -> cuDNN's block and back. */
static int filter_to_dnn(conv_call *c, const twk_conv2d_shape *s, const void *hwio, void *dnn)
{
    int64_t kh = s->k_h, kw = s->k_w, ci = s->in_c, co = s->out_c, dst[4];
    dnn_filter_strides(s, dst);
    const int64_t shape[4] = {co, kh, kw, ci}, src[4] = {1, kw * ci * co, ci * co, co};
    return twc_copy(c->dev, c->itemsize, 4, shape, dnn, dst, hwio, src);
}

static int filter_to_hwio(conv_call *c, const twk_conv2d_shape *s, const void *dnn, void *hwio)
{
    int64_t kh = s->k_h, kw = s->k_w, ci = s->in_c, co = s->out_c, st[4];
    dnn_filter_strides(s, st);
    const int64_t shape[4] = {kh, kw, ci, co}, dst[4] = {kw * ci * co, ci * co, co, 1};
    const int64_t src[4] = {st[1], st[2], st[3], st[0]};
    return twc_copy(c->dev, c->itemsize, 4, shape, hwio, dst, dnn, src);
}

/* An NHWC block (n, h, w, ch) as cuDNN reads it: its NCHW copy in tmp[slot]. */
static const void *to_dnn(conv_call *c, int slot, const void *nhwc, int64_t n, int64_t h, int64_t w, int64_t ch)
{
    if (!nhwc)
        return NULL;
    void *t = conv_tmp(c, slot, (size_t)(n * h * w * ch) * c->itemsize);
    const int64_t shape[4] = {n, ch, h, w}, dst[4] = {ch * h * w, h * w, w, 1}, src[4] = {h * w * ch, 1, w * ch, ch};
    return t && twc_copy(c->dev, c->itemsize, 4, shape, t, dst, nhwc, src) == 0 ? t : NULL;
}

/* cuDNN's NCHW result of (n, ch, dh, dw) into the engine's NHWC block
 * (n, h, w, ch): drops the rows and columns added after. */
static int from_dnn(conv_call *c, const void *dnn, int64_t dh, int64_t dw, void *nhwc, int64_t n, int64_t h,
                    int64_t w, int64_t ch)
{
    const int64_t shape[4] = {n, h, w, ch}, dst[4] = {h * w * ch, w * ch, ch, 1};
    const int64_t src[4] = {ch * dh * dw, dw, 1, dh * dw};
    return twc_copy(c->dev, c->itemsize, 4, shape, nhwc, dst, dnn, src);
}

/* x padded with zeros after to (xh, xw), as cuDNN reads it. */
static const void *dnn_input(conv_call *c, twk_dtype dtype, const twk_conv2d_shape *s, const void *x)
{
    const void *xp = x;
    if (c->xh != s->in_h || c->xw != s->in_w) {
        void *t = conv_tmp(c, 1, (size_t)(s->batch * c->xh * c->xw * s->in_c) * c->itemsize);
        const int64_t shape[4] = {s->batch, s->in_h, s->in_w, s->in_c};
        const int64_t strides[4] = {s->in_h * s->in_w * s->in_c, s->in_w * s->in_c, s->in_c, 1};
        const int64_t pads[8] = {0, 0, 0, c->xh - s->in_h, 0, c->xw - s->in_w, 0, 0};
        if (!t || twc_pad(c->dev, dtype, 4, shape, x, strides, pads, 0.0, t) < 0)
            return NULL;
        xp = t;
    }
    return to_dnn(c, 2, xp, s->batch, c->xh, c->xw, s->in_c);
}

/* The algorithm and workspace size for this convolution's pass: the
 * fastest usable one of cuDNN's timing of every algorithm (cudnnFind*, as
 * PyTorch's cudnn.benchmark), asked once per device, shape, dtype and pass
 * and then kept. On the H200 that made the ResNet50 step 0.063 s against
 * 0.068 s with the heuristics' first choice (cudnnGet*_v7), and the CNN
 * epoch 0.95 s against 0.89 s. The fastest may be a non-deterministic
 * algorithm, so a CUDA run's gradients may differ in their last bits from
 * one run to the next. search(perf, &found) and workspace(algo, &bytes)
 * wrap the pass's two cuDNN calls. 0 or -1. */
template <typename Perf, typename Search, typename Workspace>
static int choose_algo(conv_call *c, twk_dtype dtype, twk_conv_pass pass, const twk_conv2d_shape *s, Search search,
                       Workspace workspace, int *algo, size_t *ws_bytes, const char *what)
{
    std::string key((const char *)s, sizeof *s);
    key.push_back((char)dtype);
    key.push_back((char)pass);
    {
        std::lock_guard<std::mutex> hold(c->dev->conv_lock);
        auto known = c->dev->conv_algos.find(key);
        if (known != c->dev->conv_algos.end()) {
            *algo = known->second.first, *ws_bytes = known->second.second;
            return 0;
        }
    }
    Perf perf[8];
    int found = 0, a = -1;
    if (twc__dnn(search(perf, &found), what) < 0)
        return -1;
    for (int i = 0; i < found && a < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS)
            a = i;
    if (a < 0)
        return twc__fail("%s: cuDNN has no algorithm for this convolution (%d tried)", what, found);
    if (twc__dnn(workspace(perf[a].algo, ws_bytes), what) < 0)
        return -1;
    *algo = (int)perf[a].algo;
    std::lock_guard<std::mutex> hold(c->dev->conv_lock);
    c->dev->conv_algos[key] = {*algo, *ws_bytes};
    return 0;
}

/* Scale factors alpha = 1, beta = 0 in the precision cuDNN wants. */
typedef struct {
    float f[2];
    double d[2];
} blend;
static const void *one(twk_dtype dtype, const blend *b) { return dtype == TWK_FLOAT64 ? (const void *)&b->d[0] : &b->f[0]; }
static const void *zero(twk_dtype dtype, const blend *b) { return dtype == TWK_FLOAT64 ? (const void *)&b->d[1] : &b->f[1]; }
static const blend BLEND = {{1.0f, 0.0f}, {1.0, 0.0}};

/* A 1x1 convolution without padding is a matrix product over the NHWC rows
 * (of every stride-th row and column), its HWIO filter the (in_c, out_c)
 * matrix: cuBLAS on the engine's blocks, without cuDNN's NCHW copies.
 * ResNet50 has 38 such convolutions in its 53, 8 of them of stride 2. */
static bool pointwise(const twk_conv2d_shape *s)
{
    return s->k_h == 1 && s->k_w == 1 && s->pad_top == 0 && s->pad_left == 0 &&
           s->out_h == (s->in_h - 1) / s->stride_h + 1 && s->out_w == (s->in_w - 1) / s->stride_w + 1;
}

/* Between x (n, in_h, in_w, c) and its rows that a strided 1x1 convolution
 * reads, dense (n, out_h, out_w, c): to_rows picks them out of x, else
 * they go back into x's positions (the others left as they are). */
static int strided_rows(twc_device *dev, size_t itemsize, const twk_conv2d_shape *s, int64_t c, void *x, void *rows,
                        bool to_rows)
{
    const int64_t shape[4] = {s->batch, s->out_h, s->out_w, c};
    const int64_t dense[4] = {s->out_h * s->out_w * c, s->out_w * c, c, 1};
    const int64_t in[4] = {s->in_h * s->in_w * c, s->stride_h * s->in_w * c, s->stride_w * c, 1};
    return to_rows ? twc_copy(dev, itemsize, 4, shape, rows, dense, x, in)
                   : twc_copy(dev, itemsize, 4, shape, x, in, rows, dense);
}

static bool strided(const twk_conv2d_shape *s) { return s->stride_h != 1 || s->stride_w != 1; }

/* The rows of x a 1x1 convolution reads, dense: x itself at stride 1, else
 * a copy in *copy (NULL otherwise; freed by the caller once the work that
 * reads it is queued). NULL with the error set when the copy failed. */
static const void *rows_read(twc_device *dev, size_t isz, const twk_conv2d_shape *s, const void *x, void **copy,
                             const char *what)
{
    *copy = NULL;
    if (!strided(s))
        return x;
    *copy = twc_alloc(dev, (size_t)(s->batch * s->out_h * s->out_w * s->in_c) * isz);
    if (!*copy) {
        twc__fail("%s: out of device memory", what);
        return NULL;
    }
    return strided_rows(dev, isz, s, s->in_c, (void *)x, *copy, true) < 0 ? NULL : *copy;
}

/* y = x W over the rows read. */
static int pointwise_forward(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x,
                             const void *filter, void *y)
{
    int64_t rows = s->batch * s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    void *copy;
    const void *xr = rows_read(dev, twk_dtype_size(dtype), s, x, &copy, "conv2d");
    int rc = xr ? twc_gemm(dev, dtype, false, false, rows, co, ci, xr, ci, 0, filter, co, 0, 0.0f, y, co, 0, 1) : -1;
    twc_free(dev, copy); /* reused only by later work on the stream */
    return rc;
}

/* dx = dy W^T at the rows read, zeros elsewhere. */
static int pointwise_input(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                           const void *dy, void *dx)
{
    int64_t rows = s->batch * s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    size_t isz = twk_dtype_size(dtype);
    if (!strided(s))
        return twc_gemm(dev, dtype, false, true, rows, ci, co, dy, co, 0, filter, co, 0, 0.0f, dx, ci, 0, 1);
    void *dxs = twc_alloc(dev, (size_t)(rows * ci) * isz);
    int rc = !dxs ? twc__fail("conv2d input gradient: out of device memory")
             : twc_gemm(dev, dtype, false, true, rows, ci, co, dy, co, 0, filter, co, 0, 0.0f, dxs, ci, 0, 1) < 0 ||
                     twc_fill(dev, dtype, s->batch * s->in_h * s->in_w * ci, dx, 0.0) < 0 ||
                     strided_rows(dev, isz, s, ci, dx, dxs, false) < 0
                 ? -1
                 : 0;
    twc_free(dev, dxs);
    return rc;
}

/* dW = x^T dy over the rows read. */
static int pointwise_filter(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x,
                            const void *dy, void *dfilter)
{
    int64_t rows = s->batch * s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    void *copy;
    const void *xr = rows_read(dev, twk_dtype_size(dtype), s, x, &copy, "conv2d filter gradient");
    int rc = xr ? twc_gemm(dev, dtype, true, false, ci, co, rows, xr, ci, 0, dy, co, 0, 0.0f, dfilter, co, 0, 1) : -1;
    twc_free(dev, copy);
    return rc;
}

int twc_conv2d_forward(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x, const void *filter,
                       void *y)
{
    static const char what[] = "conv2d";
    if (pointwise(s))
        return pointwise_forward(dev, dtype, s, x, filter, y);
    conv_call c;
    int rc = -1;
    if (conv_begin(&c, dev, dtype, s, what) == 0) {
        void *f = conv_tmp(&c, 0, (size_t)(s->k_h * s->k_w * s->in_c * s->out_c) * c.itemsize);
        const void *xd = f ? dnn_input(&c, dtype, s, x) : NULL;
        void *yd = conv_tmp(&c, 3, (size_t)(s->batch * s->out_h * s->out_w * s->out_c) * c.itemsize);
        int algo = 0;
        size_t ws_bytes = 0;
        void *ws = NULL;
        auto search = [&](cudnnConvolutionFwdAlgoPerf_t *perf, int *found) {
            return cudnnFindConvolutionForwardAlgorithm(dev->dnn, c.x, c.f, c.conv, c.y, 8, found, perf);
        };
        auto workspace = [&](cudnnConvolutionFwdAlgo_t a, size_t *bytes) {
            return cudnnGetConvolutionForwardWorkspaceSize(dev->dnn, c.x, c.f, c.conv, c.y, a, bytes);
        };
        if (!f || !xd || !yd)
            twc__fail("%s: out of device memory", what);
        else if (filter_to_dnn(&c, s, filter, f) == 0 &&
                 choose_algo<cudnnConvolutionFwdAlgoPerf_t>(&c, dtype, TWK_CONV_FORWARD, s, search, workspace,
                                                            &algo, &ws_bytes, what) == 0 &&
                 (ws_bytes == 0 || (ws = twc__workspace(dev, ws_bytes)) != NULL) &&
                 twc__dnn(cudnnConvolutionForward(dev->dnn, one(dtype, &BLEND), c.x, xd, c.f, f, c.conv,
                                                  (cudnnConvolutionFwdAlgo_t)algo, ws, ws_bytes,
                                                  zero(dtype, &BLEND), c.y, yd), what) == 0)
            rc = from_dnn(&c, yd, s->out_h, s->out_w, y, s->batch, s->out_h, s->out_w, s->out_c);
    }
    conv_end(&c);
    return rc;
}

int twc_conv2d_backprop_input(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *filter,
                              const void *dy, void *dx)
{
    static const char what[] = "conv2d input gradient";
    if (pointwise(s))
        return pointwise_input(dev, dtype, s, filter, dy, dx);
    conv_call c;
    int rc = -1;
    if (conv_begin(&c, dev, dtype, s, what) == 0) {
        void *f = conv_tmp(&c, 0, (size_t)(s->k_h * s->k_w * s->in_c * s->out_c) * c.itemsize);
        const void *dyd = to_dnn(&c, 3, dy, s->batch, s->out_h, s->out_w, s->out_c);
        void *dxd = conv_tmp(&c, 1, (size_t)(s->batch * c.xh * c.xw * s->in_c) * c.itemsize);
        int algo = 0;
        size_t ws_bytes = 0;
        void *ws = NULL;
        auto search = [&](cudnnConvolutionBwdDataAlgoPerf_t *perf, int *found) {
            return cudnnFindConvolutionBackwardDataAlgorithm(dev->dnn, c.f, c.y, c.conv, c.x, 8, found, perf);
        };
        auto workspace = [&](cudnnConvolutionBwdDataAlgo_t a, size_t *bytes) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(dev->dnn, c.f, c.y, c.conv, c.x, a, bytes);
        };
        if (!f || !dyd || !dxd)
            twc__fail("%s: out of device memory", what);
        else if (filter_to_dnn(&c, s, filter, f) == 0 &&
                 choose_algo<cudnnConvolutionBwdDataAlgoPerf_t>(&c, dtype, TWK_CONV_BACKPROP_INPUT, s, search,
                                                                workspace, &algo, &ws_bytes, what) == 0 &&
                 (ws_bytes == 0 || (ws = twc__workspace(dev, ws_bytes)) != NULL) &&
                 twc__dnn(cudnnConvolutionBackwardData(dev->dnn, one(dtype, &BLEND), c.f, f, c.y, dyd, c.conv,
                                                       (cudnnConvolutionBwdDataAlgo_t)algo, ws, ws_bytes,
                                                       zero(dtype, &BLEND), c.x, dxd), what) == 0)
            rc = from_dnn(&c, dxd, c.xh, c.xw, dx, s->batch, s->in_h, s->in_w, s->in_c);
    }
    conv_end(&c);
    return rc;
}

int twc_conv2d_backprop_filter(twc_device *dev, twk_dtype dtype, const twk_conv2d_shape *s, const void *x,
                               const void *dy, void *dfilter)
{
    static const char what[] = "conv2d filter gradient";
    if (pointwise(s))
        return pointwise_filter(dev, dtype, s, x, dy, dfilter);
    conv_call c;
    int rc = -1;
    if (conv_begin(&c, dev, dtype, s, what) == 0) {
        void *df = conv_tmp(&c, 0, (size_t)(s->k_h * s->k_w * s->in_c * s->out_c) * c.itemsize);
        const void *xd = df ? dnn_input(&c, dtype, s, x) : NULL;
        const void *dyd = to_dnn(&c, 3, dy, s->batch, s->out_h, s->out_w, s->out_c);
        int algo = 0;
        size_t ws_bytes = 0;
        void *ws = NULL;
        auto search = [&](cudnnConvolutionBwdFilterAlgoPerf_t *perf, int *found) {
            return cudnnFindConvolutionBackwardFilterAlgorithm(dev->dnn, c.x, c.y, c.conv, c.f, 8, found, perf);
        };
        auto workspace = [&](cudnnConvolutionBwdFilterAlgo_t a, size_t *bytes) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(dev->dnn, c.x, c.y, c.conv, c.f, a, bytes);
        };
        if (!df || !xd || !dyd)
            twc__fail("%s: out of device memory", what);
        else if (choose_algo<cudnnConvolutionBwdFilterAlgoPerf_t>(&c, dtype, TWK_CONV_BACKPROP_FILTER, s, search,
                                                                  workspace, &algo, &ws_bytes, what) == 0 &&
                 (ws_bytes == 0 || (ws = twc__workspace(dev, ws_bytes)) != NULL) &&
                 twc__dnn(cudnnConvolutionBackwardFilter(dev->dnn, one(dtype, &BLEND), c.x, xd, c.y, dyd, c.conv,
                                                         (cudnnConvolutionBwdFilterAlgo_t)algo, ws, ws_bytes,
                                                         zero(dtype, &BLEND), c.f, df), what) == 0)
            rc = filter_to_hwio(&c, s, df, dfilter);
    }
    conv_end(&c);
    return rc;
}

/* ---- pooling ---------------------------------------------------------------------- */
/* Output element i = ((n * out_h + oh) * out_w + ow) * C + ch: its valid window. */
typedef struct {
    int64_t n, ch, h0, h1, w0, w1;
} pool_window;

static __device__ pool_window window_of(const twk_pool2d_shape &s, int64_t i)
{
    pool_window p;
    int64_t C = s.channels;
    p.ch = i % C;
    int64_t pix = i / C, ow = pix % s.out_w, oh = (pix / s.out_w) % s.out_h;
    p.n = pix / (s.out_w * s.out_h);
    int64_t hs = oh * s.stride_h - s.pad_top, ws = ow * s.stride_w - s.pad_left;
    p.h0 = hs > 0 ? hs : 0;
    p.h1 = hs + s.pool_h < s.in_h ? hs + s.pool_h : s.in_h;
    p.w0 = ws > 0 ? ws : 0;
    p.w1 = ws + s.pool_w < s.in_w ? ws + s.pool_w : s.in_w;
    return p;
}

static __device__ int64_t pixel(const twk_pool2d_shape &s, const pool_window &p, int64_t h, int64_t w)
{
    return ((p.n * s.in_h + h) * s.in_w + w) * s.channels + p.ch;
}

/* Offset of the window's first maximum (NaN counts as the maximum), -1 when empty. */
template <typename T> static __device__ int64_t window_argmax(const twk_pool2d_shape &s, const pool_window &p, const T *x)
{
    int64_t best = -1;
    T bv = 0;
    for (int64_t h = p.h0; h < p.h1; h++)
        for (int64_t w = p.w0; w < p.w1; w++) {
            int64_t off = pixel(s, p, h, w);
            T v = x[off];
            if (best < 0 || (bv == bv && (v > bv || v != v))) {
                best = off;
                bv = v;
            }
        }
    return best;
}

template <typename T> __global__ void max_pool_kernel(twk_pool2d_shape s, int64_t n, const T *x, T *y)
{
    TWC_FOR(i, n)
    {
        int64_t best = window_argmax(s, window_of(s, i), x);
        y[i] = best < 0 ? (T)0 : x[best];
    }
}

template <typename T> __global__ void max_pool_grad_kernel(twk_pool2d_shape s, int64_t n, const T *x, const T *dy, T *dx)
{
    TWC_FOR(i, n)
    {
        int64_t best = window_argmax(s, window_of(s, i), x);
        if (best >= 0)
            atomicAdd(dx + best, dy[i]);
    }
}

template <typename T> __global__ void avg_pool_kernel(twk_pool2d_shape s, int64_t n, const T *x, T *y)
{
    TWC_FOR(i, n)
    {
        pool_window p = window_of(s, i);
        T acc = 0;
        for (int64_t h = p.h0; h < p.h1; h++)
            for (int64_t w = p.w0; w < p.w1; w++)
                acc += x[pixel(s, p, h, w)];
        int64_t count = (p.h1 - p.h0) * (p.w1 - p.w0);
        y[i] = count > 0 ? acc / (T)count : (T)0;
    }
}

template <typename T> __global__ void avg_pool_grad_kernel(twk_pool2d_shape s, int64_t n, const T *dy, T *dx)
{
    TWC_FOR(i, n)
    {
        pool_window p = window_of(s, i);
        int64_t count = (p.h1 - p.h0) * (p.w1 - p.w0);
        if (count <= 0)
            continue;
        T g = dy[i] * ((T)1 / (T)count);
        for (int64_t h = p.h0; h < p.h1; h++)
            for (int64_t w = p.w0; w < p.w1; w++)
                atomicAdd(dx + pixel(s, p, h, w), g);
    }
}

static int pool_check(twc_device *dev, twk_dtype dtype, const char *what)
{
    if (dtype != TWK_FLOAT32 && dtype != TWK_FLOAT64)
        return twc__fail("%s: dtype %d is not a float type", what, dtype);
    return twc__use(dev);
}

static int64_t pool_outputs(const twk_pool2d_shape *s)
{
    return s->batch * s->out_h * s->out_w * s->channels;
}

#define POOL_LAUNCH(KERNEL, N, ...)                                                                           \
    (dtype == TWK_FLOAT32 ? KERNEL<float><<<twc__grid(N), TWC_THREADS, 0, dev->stream>>>(*s, N, __VA_ARGS__)  \
                          : KERNEL<double><<<twc__grid(N), TWC_THREADS, 0, dev->stream>>>(*s, N, __VA_ARGS__))

int twc_max_pool2d(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x, void *y)
{
    int64_t n = pool_outputs(s);
    if (n == 0)
        return 0;
    if (pool_check(dev, dtype, "max_pool2d") < 0)
        return -1;
    if (dtype == TWK_FLOAT32)
        max_pool_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const float *)x, (float *)y);
    else
        max_pool_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const double *)x, (double *)y);
    return twc__launched("max_pool2d");
}

int twc_max_pool2d_grad(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x, const void *dy,
                        void *dx)
{
    int64_t n = pool_outputs(s);
    if (pool_check(dev, dtype, "max_pool2d gradient") < 0 ||
        twc_fill(dev, dtype, s->batch * s->in_h * s->in_w * s->channels, dx, 0.0) < 0)
        return -1;
    if (n == 0)
        return 0;
    if (dtype == TWK_FLOAT32)
        max_pool_grad_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const float *)x,
                                                                            (const float *)dy, (float *)dx);
    else
        max_pool_grad_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const double *)x,
                                                                            (const double *)dy, (double *)dx);
    return twc__launched("max_pool2d gradient");
}

int twc_avg_pool2d(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *x, void *y)
{
    int64_t n = pool_outputs(s);
    if (n == 0)
        return 0;
    if (pool_check(dev, dtype, "avg_pool2d") < 0)
        return -1;
    if (dtype == TWK_FLOAT32)
        avg_pool_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const float *)x, (float *)y);
    else
        avg_pool_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const double *)x, (double *)y);
    return twc__launched("avg_pool2d");
}

int twc_avg_pool2d_grad(twc_device *dev, twk_dtype dtype, const twk_pool2d_shape *s, const void *dy, void *dx)
{
    int64_t n = pool_outputs(s);
    if (pool_check(dev, dtype, "avg_pool2d gradient") < 0 ||
        twc_fill(dev, dtype, s->batch * s->in_h * s->in_w * s->channels, dx, 0.0) < 0)
        return -1;
    if (n == 0)
        return 0;
    if (dtype == TWK_FLOAT32)
        avg_pool_grad_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const float *)dy, (float *)dx);
    else
        avg_pool_grad_kernel<<<twc__grid(n), TWC_THREADS, 0, dev->stream>>>(*s, n, (const double *)dy, (double *)dx);
    return twc__launched("avg_pool2d gradient");
}
