/* twb-bench: the Tensor Workbench side of the benchmarks. bench/run runs it
 * next to bench/torch_peer.py, which does the same work in PyTorch and
 * speaks the same protocol.
 *
 *   twb-bench NAME [--reps N | --serve] [--min-time SECONDS] [--products N]
 *             [--device DEVICE] [--batch N]
 *
 * NAME is add16, tiny_step, matmul_1000, conv_step, dataset_epoch,
 * prefetch_wait, mlp_epoch, cnn_epoch, traced_small, traced_mlp_step, depthwise_conv, resnet50_step or
 * resnet_fmnist_step. The
 * program sets the
 * benchmark up, checks its results, warms up and picks how many iterations make one
 * repetition (at least --min-time seconds; matmul_1000 does --products
 * products; prefetch_wait, mlp_epoch and cnn_epoch one epoch, resnet50_step one step),
 * then prints a JSON header line:
 *
 *   {"name": ..., "unit": "ns/op", "iters_per_rep": N, "check": [...], "blas": ...}
 *
 * "check" holds checksums of the results (sums of squares, in double) on
 * inputs both sides generate alike (pattern() here and in torch_peer.py), so
 * bench/run can tell both did the same work. Then it times repetitions and
 * prints one line per repetition, {"value": TIME_PER_OP} (matmul_1000 adds
 * "sgemm": the same products through a bare cblas_sgemm loop, traced_small
 * "eager": the same function run eagerly, traced_mlp_step "eager": the same
 * training steps run eagerly; prefetch_wait prints percentages
 * instead of times, see prefetch_wait below; mlp_epoch and
 * cnn_epoch add samples_per_second, test_accuracy, peak_rss_mb, ...). It runs
 * --reps repetitions, or with --serve one per line "rep" read on stdin until
 * end of input, so bench/run can alternate repetitions of the two sides.
 * mlp_epoch, cnn_epoch and resnet50_step train on --device (cpu:0 by
 * default; tools/gpu-check runs them on cuda:0), with the data moved there
 * once, before timing; --batch sets resnet50_step's batch (8).
 * Exit status 1 (and a message on stderr) when the engine fails. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <tw/data.h>
#include <tw/engine.h>
#include <tw/model.h>
#include <tw/model_file.h>

/* ---- helpers -------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("twb-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

__attribute__((noreturn)) static void die_engine(const char *what)
{
    die("%s failed: %s", what, tw_last_error());
}

/* The value at flat index i of input number `seed`, in [-0.5, 0.5). The
 * arithmetic is exact in int64 and double, so Python gives the same floats. */
static float pattern(int64_t i, int64_t seed)
{
    return (float)((double)((i * 7919 + seed * 104729) % 1013) / 1013.0 - 0.5);
}

/* pattern() times scale, rounded to float32 (torch_peer.py does the same
 * double product). */
static tw_tensor *scaled_pattern_tensor(int64_t seed, double scale, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)n);
    if (!v)
        die("out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((double)pattern(i, seed) * scale);
    tw_tensor *t = tw_tensor_from_data(v, TW_FLOAT32, ndim, shape);
    free(v);
    if (!t)
        die_engine("tw_tensor_from_data");
    return t;
}

static tw_tensor *pattern_tensor(int64_t seed, int ndim, const int64_t *shape)
{
    return scaled_pattern_tensor(seed, 1.0, ndim, shape);
}

/* Sum of squares in double: a checksum that does not cancel. Copies the
 * values out, so it works inside or outside a scope. */
static double sum_squares(tw_tensor *t)
{
    if (!t)
        die_engine("checksum");
    int64_t n = tw_tensor_numel(t);
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!v)
        die("out of memory");
    if (tw_tensor_copy_to(t, v, sizeof(float) * (size_t)n) < 0)
        die_engine("tw_tensor_copy_to");
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)v[i] * (double)v[i];
    free(v);
    return s;
}

/* ---- the benchmarks ------------------------------------------------------- */

#define MAX_CHECKS 4

typedef struct {
    double check[MAX_CHECKS];
    int nchecks;
    char info[256]; /* extra facts for the header, a JSON fragment or "" */
} setup_result;

typedef struct {
    const char *name, *unit;
    double scale; /* seconds per op -> unit */
    bool fixed_iters; /* iterations per repetition given (--products), not calibrated */
    /* Build the inputs, run the work once and fill the checksums. */
    void *(*setup)(setup_result *r);
    /* Do `iters` operations (NULL: measure alone, warmed up by setup). */
    void (*run)(void *state, long iters);
    /* A reference timed right after run (matmul_1000: the bare BLAS;
     * traced_small: the same function eagerly). */
    void (*run_reference)(void *state, long iters);
    void (*teardown)(void *state);
    /* When set, a repetition is measure() instead of timing run(): it
     * returns the value and writes further JSON fields into extra
     * (prefetch_wait). */
    double (*measure)(void *state, int rep, char *extra, size_t size);
    const char *reference_key; /* the reference's field in each repetition's line */
} benchmark;

/* ---- add16: c = a + b on 16 floats, c released each time, as Python's
 * `c = a + b` frees the previous c ----------------------------------------- */

typedef struct {
    tw_tensor *a, *b;
} add_state;

static void *add16_setup(setup_result *r)
{
    add_state *s = malloc(sizeof *s);
    if (!s)
        die("out of memory");
    s->a = pattern_tensor(1, TW_SHAPE(16));
    s->b = pattern_tensor(2, TW_SHAPE(16));
    tw_tensor *c = tw_add(s->a, s->b);
    r->check[r->nchecks++] = sum_squares(c);
    tw_tensor_unref(c);
    return s;
}

static void add16_run(void *p, long iters)
{
    add_state *s = p;
    for (long i = 0; i < iters; i++) {
        tw_tensor *c = tw_add(s->a, s->b);
        if (!c)
            die_engine("tw_add");
        tw_tensor_unref(c);
    }
}

static void pair_teardown(void *p)
{
    add_state *s = p;
    tw_tensor_unref(s->a);
    tw_tensor_unref(s->b);
    free(s);
}

/* ---- tiny_step: y = sum(a*b + a) with a watched on a tape, then dy/da ---- */

static void tiny_step_once(add_state *s, setup_result *r)
{
    tw_scope_begin(); /* releases the intermediates, y and the gradient */
    tw_tape *tape = tw_tape_begin(false);
    if (!tape || tw_tape_watch(tape, s->a) < 0)
        die_engine("tw_tape_begin/watch");
    tw_tensor *y = tw_sum_all(tw_add(tw_mul(s->a, s->b), s->a));
    tw_tape_end(tape);
    tw_tensor *grad = NULL;
    if (!y || tw_tape_gradient(tape, y, 1, &s->a, &grad) < 0 || !grad)
        die_engine("tiny_step");
    if (r) {
        r->check[r->nchecks++] = sum_squares(y);
        r->check[r->nchecks++] = sum_squares(grad);
    }
    tw_tape_free(tape);
    tw_scope_end();
}

static void *tiny_step_setup(setup_result *r)
{
    add_state *s = malloc(sizeof *s);
    if (!s)
        die("out of memory");
    s->a = pattern_tensor(1, TW_SHAPE(16));
    s->b = pattern_tensor(2, TW_SHAPE(16));
    tiny_step_once(s, r);
    return s;
}

static void tiny_step_run(void *p, long iters)
{
    for (long i = 0; i < iters; i++)
        tiny_step_once(p, NULL);
}

/* ---- matmul_1000: tw_matmul, and a bare cblas_sgemm loop for reference ---- */

enum { N1000 = 1000, CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                         int);

typedef struct {
    tw_tensor *a, *b;
    float *c; /* the bare loop's output */
    sgemm_fn sgemm;
} matmul_state;

static void bare_sgemm(matmul_state *s)
{
    s->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, N1000, N1000, N1000, 1.0f, tw_tensor_data(s->a), N1000,
             tw_tensor_data(s->b), N1000, 0.0f, s->c, N1000);
}

static void *matmul_setup(setup_result *r)
{
    /* The engine opens OpenBLAS first (it may set OPENBLAS_CORETYPE before
     * the library initialises); the bare loop then calls the very same
     * library in the same process. */
    const char *info = tw_blas_info();
    const char *from = strstr(info, " from ");
    void *lib = from ? dlopen(from + 6, RTLD_NOW | RTLD_GLOBAL) : NULL;
    matmul_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->sgemm = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
    if (!s->sgemm)
        die("cannot load cblas_sgemm from the engine's BLAS (%s): %s", info, dlerror());
    typedef char *(*string_fn)(void);
    string_fn corename = (string_fn)dlsym(lib, "openblas_get_corename");
    snprintf(r->info, sizeof r->info, "\"sgemm_core\": \"%s\"", corename ? corename() : "unknown");

    s->a = pattern_tensor(1, TW_SHAPE(N1000, N1000));
    s->b = pattern_tensor(2, TW_SHAPE(N1000, N1000));
    s->c = aligned_alloc(64, sizeof(float) * N1000 * N1000);
    if (!s->c)
        die("out of memory");
    /* Both ways must give the same product. */
    tw_tensor *c = tw_matmul(s->a, s->b);
    if (!c)
        die_engine("tw_matmul");
    bare_sgemm(s);
    const float *tc = tw_tensor_data(c);
    double max_diff = 0;
    for (int64_t i = 0; i < (int64_t)N1000 * N1000; i++)
        max_diff = fmax(max_diff, fabs((double)tc[i] - (double)s->c[i]));
    if (max_diff > 1e-3)
        die("tw_matmul and cblas_sgemm disagree by %g", max_diff);
    r->check[r->nchecks++] = sum_squares(c);
    tw_tensor_unref(c);
    return s;
}

static void matmul_run(void *p, long iters)
{
    matmul_state *s = p;
    for (long i = 0; i < iters; i++) {
        tw_tensor *c = tw_matmul(s->a, s->b);
        if (!c)
            die_engine("tw_matmul");
        tw_tensor_unref(c);
    }
}

static void matmul_run_reference(void *p, long iters)
{
    for (long i = 0; i < iters; i++)
        bare_sgemm(p);
}

static void matmul_teardown(void *p)
{
    matmul_state *s = p;
    tw_tensor_unref(s->a);
    tw_tensor_unref(s->b);
    free(s->c);
    free(s);
}

/* ---- conv_step: tw_conv2d forward, then the tape's gradients wrt input and
 * filter for a given output gradient ------------------------------------- */

typedef struct {
    tw_tensor *x, *w, *gy;
    tw_conv2d_params params;
    tw_tensor *(*op)(tw_tensor *, tw_tensor *, const tw_conv2d_params *); /* tw_conv2d or tw_depthwise_conv2d */
} conv_state;

static void conv_step_once(conv_state *s, setup_result *r)
{
    tw_scope_begin();
    tw_tape *tape = tw_tape_begin(false);
    if (!tape || tw_tape_watch(tape, s->x) < 0 || tw_tape_watch(tape, s->w) < 0)
        die_engine("tw_tape_begin/watch");
    tw_tensor *y = s->op(s->x, s->w, &s->params);
    tw_tape_end(tape);
    if (!y)
        die_engine("convolution");
    tw_tensor *grads[2] = {NULL, NULL};
    if (tw_tape_gradient_ex(tape, y, s->gy, 2, (tw_tensor *const[]){s->x, s->w}, grads) < 0 || !grads[0] ||
        !grads[1])
        die_engine("conv_step gradient");
    if (r) {
        r->check[r->nchecks++] = sum_squares(y);
        r->check[r->nchecks++] = sum_squares(grads[0]);
        r->check[r->nchecks++] = sum_squares(grads[1]);
    }
    tw_tape_free(tape);
    tw_scope_end();
}

static void *conv_setup(setup_result *r)
{
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->x = pattern_tensor(1, TW_SHAPE(64, 28, 28, 32)); /* NHWC */
    s->w = pattern_tensor(2, TW_SHAPE(3, 3, 32, 64));   /* HWIO */
    s->gy = pattern_tensor(3, TW_SHAPE(64, 28, 28, 64));
    s->params = (tw_conv2d_params){.stride_h = 1, .stride_w = 1, .padding = TW_PADDING_SAME};
    s->op = tw_conv2d;
    conv_step_once(s, r);
    return s;
}

/* depthwise_conv: conv_step's work for tw_depthwise_conv2d on a MobileNetV2
 * block's shapes (56x56, 144 channels, 3x3, SAME). */
static void *depthwise_setup(setup_result *r)
{
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->x = pattern_tensor(1, TW_SHAPE(16, 56, 56, 144)); /* NHWC */
    s->w = pattern_tensor(2, TW_SHAPE(3, 3, 144, 1));    /* (kh, kw, in, multiplier) */
    s->gy = pattern_tensor(3, TW_SHAPE(16, 56, 56, 144));
    s->params = (tw_conv2d_params){.stride_h = 1, .stride_w = 1, .padding = TW_PADDING_SAME};
    s->op = tw_depthwise_conv2d;
    conv_step_once(s, r);
    return s;
}

static void conv_step_run(void *p, long iters)
{
    for (long i = 0; i < iters; i++)
        conv_step_once(p, NULL);
}

static void conv_teardown(void *p)
{
    conv_state *s = p;
    tw_tensor_unref(s->x);
    tw_tensor_unref(s->w);
    tw_tensor_unref(s->gy);
    free(s);
}

/* ---- dataset_epoch: one pass over Fashion-MNIST's 60,000 training images,
 * shuffled over the whole set, batched by 64 and scaled to float32 [0, 1],
 * touching every batch. The files are read once, in setup. --------------- */

enum { EPOCH_BATCH = 64, EPOCH_SHUFFLE_SEED = 42 };

/* fashion_mnist -> shuffle(60000, reshuffled each pass) -> batch(64) ->
 * scale(1/255); a new reference. */
static tw_dataset *fashion_mnist_batches(void)
{
    tw_dataset *source = tw_dataset_fashion_mnist("train");
    if (!source)
        die("%s", tw_last_error());
    int64_t n = tw_dataset_cardinality(source);
    tw_dataset *ds = tw_dataset_scale(
        tw_dataset_batch(tw_dataset_shuffle(source, n, EPOCH_SHUFFLE_SEED, true), EPOCH_BATCH, false), 0,
        1.0 / 255.0);
    if (!ds)
        die_engine("the Fashion-MNIST pipeline");
    return ds;
}

static volatile float epoch_sink;

/* Checksums of one pass that do not depend on the order: batches, examples,
 * the sum of every scaled pixel, the sum of the labels. */
static void epoch_checksums(tw_dataset *ds, setup_result *r)
{
    tw_iterator *it = tw_dataset_iter(ds);
    if (!it)
        die_engine("tw_dataset_iter");
    double batches = 0, examples = 0, pixels = 0, labels = 0;
    tw_element e;
    int rc;
    while ((rc = tw_iterator_next(it, &e)) > 0) {
        if (e.n != 2 || tw_tensor_dtype(e.t[0]) != TW_FLOAT32)
            die("dataset_epoch: expected (float32 images, labels) batches");
        tw_tensor *x = tw_contiguous(e.t[0]), *y = tw_cast(e.t[1], TW_FLOAT64);
        if (!x || !y)
            die_engine("dataset_epoch checksum");
        const float *v = tw_tensor_data(x);
        for (int64_t i = 0, n = tw_tensor_numel(x); i < n; i++)
            pixels += v[i];
        const double *l = tw_tensor_data(y);
        for (int64_t i = 0, n = tw_tensor_numel(y); i < n; i++)
            labels += l[i];
        batches++;
        examples += (double)tw_tensor_dim(x, 0);
        tw_tensor_unref(x);
        tw_tensor_unref(y);
        tw_element_clear(&e);
    }
    if (rc < 0)
        die_engine("tw_iterator_next");
    tw_iterator_free(it);
    r->check[r->nchecks++] = batches;
    r->check[r->nchecks++] = examples;
    r->check[r->nchecks++] = pixels;
    r->check[r->nchecks++] = labels;
}

static void *dataset_epoch_setup(setup_result *r)
{
    tw_dataset *ds = fashion_mnist_batches();
    epoch_checksums(ds, r);
    return ds;
}

/* Each pass a new iterator (a new shuffle); every batch is touched: its
 * first pixel is read. */
static void dataset_epoch_run(void *p, long iters)
{
    for (long i = 0; i < iters; i++) {
        tw_iterator *it = tw_dataset_iter(p);
        if (!it)
            die_engine("tw_dataset_iter");
        tw_element e;
        int rc;
        float sum = 0;
        while ((rc = tw_iterator_next(it, &e)) > 0) {
            sum += *(const float *)tw_tensor_data(e.t[0]);
            tw_element_clear(&e);
        }
        if (rc < 0)
            die_engine("tw_iterator_next");
        tw_iterator_free(it);
        epoch_sink = sum;
    }
}

static void dataset_teardown(void *p)
{
    tw_dataset_unref(p);
}

/* ---- prefetch_wait: how long a training loop waits on its data. An MLP
 * 784-256-10 (relu, softmax cross-entropy, plain SGD) trains on each batch
 * of the dataset_epoch pipeline, once with prefetch(8) after the scale and
 * once without. Waiting is the time spent creating the iterator and inside
 * tw_iterator_next; a repetition is one epoch each way, and its value is
 * the waiting share of the whole loop in percent. ------------------------ */

enum { MLP_IN = 784, MLP_HIDDEN = 256, MLP_OUT = 10, PREFETCH_BUFFER = 8 };
#define MLP_LEARNING_RATE 0.05

typedef struct {
    tw_dataset *plain, *prefetched;
    tw_tensor *w1, *b1, *w2, *b2;
    tw_rng *rng;
} prefetch_state;

/* One training step on a batch; returns the loss. */
static double train_step(prefetch_state *s, tw_tensor *images, tw_tensor *labels)
{
    tw_scope_begin();
    int64_t n = tw_tensor_dim(images, 0);
    tw_tensor *x = tw_reshape(images, TW_SHAPE(n, MLP_IN));
    tw_tensor *y = tw_cast(labels, TW_INT64);
    tw_tape *tape = tw_tape_begin(false);
    if (!tape)
        die_engine("tw_tape_begin");
    tw_tensor *h = tw_relu(tw_add(tw_matmul(x, s->w1), s->b1));
    tw_tensor *logits = tw_add(tw_matmul(h, s->w2), s->b2);
    tw_tensor *loss = tw_mean_all(tw_sparse_softmax_cross_entropy(logits, y));
    tw_tape_end(tape);
    tw_tensor *grads[4] = {NULL, NULL, NULL, NULL};
    if (!loss || tw_tape_gradient(tape, loss, TW_TENSORS(s->w1, s->b1, s->w2, s->b2), grads) < 0)
        die_engine("train step");
    tw_tape_free(tape);
    tw_tensor *vars[4] = {s->w1, s->b1, s->w2, s->b2};
    for (int i = 0; i < 4; i++)
        if (!grads[i] || tw_assign_sub(vars[i], tw_mul_scalar(grads[i], MLP_LEARNING_RATE)) < 0)
            die_engine("SGD update");
    double value = tw_tensor_item(loss);
    tw_scope_end();
    return value;
}

typedef struct {
    double total, wait, first_batch; /* seconds */
    long steps;
    double last_loss;
} epoch_timing;

static epoch_timing train_epoch(prefetch_state *s, tw_dataset *ds)
{
    epoch_timing t = {0};
    double start = now();
    tw_iterator *it = tw_dataset_iter(ds);
    if (!it)
        die_engine("tw_dataset_iter");
    t.wait = now() - start;
    for (;;) {
        tw_element e;
        double before = now();
        int rc = tw_iterator_next(it, &e);
        double waited = now() - before;
        t.wait += waited;
        if (t.steps == 0)
            t.first_batch = t.wait;
        if (rc < 0)
            die_engine("tw_iterator_next");
        if (rc == 0)
            break;
        t.last_loss = train_step(s, e.t[0], e.t[1]);
        tw_element_clear(&e);
        t.steps++;
    }
    tw_iterator_free(it);
    t.total = now() - start;
    return t;
}

static tw_tensor *mlp_weights(tw_rng *rng, int64_t in, int64_t out, const char *name)
{
    /* He initialisation for the relu layer, as Keras' he_normal. */
    tw_scope_begin();
    tw_tensor *init = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(in, out), 0.0, sqrt(2.0 / (double)in));
    tw_tensor *v = tw_tensor_ref(tw_variable(init, name, true));
    tw_scope_end();
    if (!v)
        die_engine("tw_variable");
    return v;
}

static tw_tensor *mlp_bias(int64_t n, const char *name)
{
    tw_scope_begin();
    tw_tensor *v = tw_tensor_ref(tw_variable(tw_zeros(TW_FLOAT32, TW_SHAPE(n)), name, true));
    tw_scope_end();
    if (!v)
        die_engine("tw_variable");
    return v;
}

static void *prefetch_setup(setup_result *r)
{
    prefetch_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->plain = fashion_mnist_batches();
    s->prefetched = tw_dataset_prefetch(tw_dataset_ref(s->plain), PREFETCH_BUFFER);
    if (!s->prefetched)
        die_engine("tw_dataset_prefetch");
    s->rng = tw_rng_new(7);
    if (!s->rng)
        die_engine("tw_rng_new");
    s->w1 = mlp_weights(s->rng, MLP_IN, MLP_HIDDEN, "w1");
    s->b1 = mlp_bias(MLP_HIDDEN, "b1");
    s->w2 = mlp_weights(s->rng, MLP_HIDDEN, MLP_OUT, "w2");
    s->b2 = mlp_bias(MLP_OUT, "b2");
    r->check[r->nchecks++] = (double)tw_dataset_cardinality(s->prefetched);
    return s;
}

/* Warm-up: epochs with prefetch. */
static void prefetch_run(void *p, long iters)
{
    for (long i = 0; i < iters; i++)
        train_epoch(p, ((prefetch_state *)p)->prefetched);
}

static double prefetch_measure(void *p, int rep, char *extra, size_t size)
{
    prefetch_state *s = p;
    /* Alternate which goes first, so a drift in machine speed touches both. */
    epoch_timing with, without;
    if (rep % 2 == 0) {
        with = train_epoch(s, s->prefetched);
        without = train_epoch(s, s->plain);
    } else {
        without = train_epoch(s, s->plain);
        with = train_epoch(s, s->prefetched);
    }
    snprintf(extra, size,
             "\"no_prefetch\": %.6g, \"steps\": %ld, \"epoch_s\": %.6g, \"epoch_s_no_prefetch\": %.6g, "
             "\"first_batch_ms\": %.6g, \"first_batch_ms_no_prefetch\": %.6g, \"wait_ms_after_first\": %.6g, "
             "\"loss\": %.6g",
             100.0 * without.wait / without.total, with.steps, with.total, without.total, 1e3 * with.first_batch,
             1e3 * without.first_batch, 1e3 * (with.wait - with.first_batch), with.last_loss);
    return 100.0 * with.wait / with.total;
}

static void prefetch_teardown(void *p)
{
    prefetch_state *s = p;
    tw_dataset_unref(s->prefetched);
    tw_dataset_unref(s->plain);
    tw_tensor_unref(s->w1);
    tw_tensor_unref(s->b1);
    tw_tensor_unref(s->w2);
    tw_tensor_unref(s->b2);
    tw_rng_free(s->rng);
    free(s);
}

/* ---- mlp_epoch, cnn_epoch: one epoch of Keras-style training, as a user
 * runs it: tw_model_compile (Adam 0.001, Keras' betas and epsilon 1e-7,
 * sparse categorical cross-entropy from logits, accuracy) and tw_model_fit
 * (batch 64, no shuffle: the file order) on Fashion-MNIST's 60,000 training
 * images, then tw_model_evaluate on the 10,000 test images. Every kernel
 * starts from pattern() scaled to Keras' glorot_uniform range, the biases
 * at zero, and torch_peer.py lays the same numbers out for PyTorch, so both
 * train the same model. A repetition is measure(): a fresh model, the fit
 * timed (the value, seconds), then the evaluation. ----------------------- */

enum { FIT_BATCH = 64, FIT_SEED = 1, CHECK_STEPS = 10 };

/* --device: where the training benchmarks build their models and keep their data. */
static tw_device bench_device = {TW_DEVICE_CPU, 0};

/* t moved to bench_device (t itself on the CPU). */
static tw_tensor *on_bench_device(tw_tensor *t)
{
    if (bench_device.kind == TW_DEVICE_CPU)
        return t;
    tw_tensor *moved = tw_tensor_to(t, bench_device);
    if (!moved)
        die_engine("copying the data to the device");
    tw_tensor_unref(t);
    return moved;
}

/* From here on, new tensors and models live on bench_device. */
static void use_bench_device(void)
{
    if (tw_set_default_device(bench_device) < 0)
        die_engine("--device");
}

typedef struct {
    tw_model *(*make)(void);
    tw_tensor *x, *y, *x_test, *y_test;
} fit_state;

/* A Fashion-MNIST split ("train", "test") as two whole tensors: the images
 * scaled to [0, 1] float32 and shaped (n, 28, 28) or, with channels, (n, 28,
 * 28, 1); the labels int64. */
static void fashion_mnist_arrays(const char *split, bool channels, tw_tensor **x, tw_tensor **y)
{
    tw_dataset *source = tw_dataset_fashion_mnist(split);
    if (!source)
        die("%s", tw_last_error());
    int64_t n = tw_dataset_cardinality(source);
    tw_dataset *ds = tw_dataset_scale(tw_dataset_batch(source, n, false), 0, 1.0 / 255.0);
    tw_iterator *it = ds ? tw_dataset_iter(ds) : NULL;
    tw_element e;
    if (!it || tw_iterator_next(it, &e) <= 0)
        die_engine("loading Fashion-MNIST");
    *x = channels ? tw_reshape(e.t[0], TW_SHAPE(n, 28, 28, 1)) : tw_tensor_ref(e.t[0]);
    *y = tw_cast(e.t[1], TW_INT64);
    if (!*x || !*y)
        die_engine("Fashion-MNIST tensors");
    tw_element_clear(&e);
    tw_iterator_free(it);
    tw_dataset_unref(ds);
}

static void add_layer(tw_model *model, tw_layer *layer)
{
    if (!model || tw_model_add(model, layer) < 0)
        die_engine("building the model");
}

static tw_model *mlp_model(void)
{
    tw_model *m = tw_sequential_new("mlp");
    add_layer(m, tw_input_layer(&(tw_shape){3, {-1, 28, 28}}));
    add_layer(m, tw_flatten_layer());
    add_layer(m, tw_dense(256, "relu"));
    add_layer(m, tw_dense(128, "relu"));
    add_layer(m, tw_dense(10, NULL));
    return m;
}

static tw_model *cnn_model(void)
{
    tw_model *m = tw_sequential_new("cnn");
    add_layer(m, tw_input_layer(&(tw_shape){4, {-1, 28, 28, 1}}));
    add_layer(m, tw_conv2d_layer(32, 3, "relu"));
    add_layer(m, tw_max_pooling2d_layer(2));
    add_layer(m, tw_conv2d_layer(64, 3, "relu"));
    add_layer(m, tw_max_pooling2d_layer(2));
    add_layer(m, tw_flatten_layer());
    add_layer(m, tw_dense(128, "relu"));
    add_layer(m, tw_dense(10, NULL));
    return m;
}

/* Kernels, in the model's order, get seeds 1, 2, ...: pattern() times twice
 * Keras' glorot_uniform limit sqrt(6 / (fan_in + fan_out)), the fans from
 * the last two axes times the receptive field, as Keras computes them.
 * Biases are zero. */
static int set_initial_weight(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    int *seed = user_data;
    int ndim = tw_tensor_ndim(weight);
    const int64_t *shape = tw_tensor_shape(weight);
    const char *leaf = strrchr(path, '/');
    tw_tensor *value;
    if (strcmp(leaf ? leaf + 1 : path, "kernel") == 0 && ndim >= 2) {
        int64_t receptive = 1;
        for (int d = 0; d < ndim - 2; d++)
            receptive *= shape[d];
        double fan_in = (double)(shape[ndim - 2] * receptive), fan_out = (double)(shape[ndim - 1] * receptive);
        value = scaled_pattern_tensor(++*seed, 2.0 * sqrt(6.0 / (fan_in + fan_out)), ndim, shape);
    } else {
        value = tw_zeros(TW_FLOAT32, ndim, shape);
    }
    int rc = value ? tw_assign(weight, value) : -1;
    tw_tensor_unref(value);
    return rc;
}

/* A new model with the initial weights, compiled. */
static tw_model *fresh_model(fit_state *s)
{
    tw_model *m = s->make();
    int seed = 0;
    if (tw_model_build(m, NULL, FIT_SEED) < 0 || tw_layer_foreach_weight(m, set_initial_weight, &seed) < 0)
        die_engine("initial weights");
    tw_optimizer_config adam = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    adam.learning_rate = (tw_lr_schedule){.kind = TW_SCHEDULE_CONSTANT, .initial_learning_rate = 0.001};
    adam.beta_1 = 0.9;
    adam.beta_2 = 0.999;
    adam.epsilon = 1e-7;
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    if (tw_model_compile(m, tw_optimizer_new(&adam), &loss, 1, (const char *const[]){"accuracy"}) < 0)
        die_engine("tw_model_compile");
    return m;
}

static tw_fit_options fit_options(void)
{
    tw_fit_options opt = tw_fit_options_default();
    opt.batch_size = FIT_BATCH;
    opt.shuffle = false;
    opt.seed = FIT_SEED;
    return opt;
}

/* fit's running loss after the first step and after the first CHECK_STEPS
 * (their mean); stops the fit there. */
static int record_check(tw_model *model, const tw_progress *progress, const tw_logs *logs, void *user_data)
{
    double *losses = user_data;
    if (progress->step == 0)
        losses[0] = tw_logs_get(logs, "loss");
    if (progress->step < CHECK_STEPS - 1)
        return 0;
    losses[1] = tw_logs_get(logs, "loss");
    return 1;
}

static void *fit_setup(setup_result *r, tw_model *(*make)(void), bool channels)
{
    fit_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->make = make;
    fashion_mnist_arrays("train", channels, &s->x, &s->y);
    fashion_mnist_arrays("test", channels, &s->x_test, &s->y_test);
    s->x = on_bench_device(s->x), s->y = on_bench_device(s->y);
    s->x_test = on_bench_device(s->x_test), s->y_test = on_bench_device(s->y_test);
    use_bench_device();
    /* The check, which also warms up: CHECK_STEPS steps of a fresh model. */
    tw_model *m = fresh_model(s);
    tw_fit_options opt = fit_options();
    opt.ncallbacks = 1;
    opt.callbacks = &(tw_callback){.on_batch_end = record_check, .user_data = r->check};
    tw_history *h = tw_model_fit(m, s->x, s->y, &opt);
    if (!h)
        die_engine("tw_model_fit");
    r->nchecks = 2;
    tw_history_free(h);
    tw_layer_unref(m);
    return s;
}

static void *mlp_epoch_setup(setup_result *r)
{
    return fit_setup(r, mlp_model, false);
}

static void *cnn_epoch_setup(setup_result *r)
{
    return fit_setup(r, cnn_model, true);
}

static double fit_measure(void *p, int rep, char *extra, size_t size)
{
    fit_state *s = p;
    tw_model *m = fresh_model(s);
    tw_fit_options opt = fit_options();
    double t0 = now();
    tw_history *h = tw_model_fit(m, s->x, s->y, &opt);
    double seconds = now() - t0;
    if (!h)
        die_engine("tw_model_fit");
    tw_logs test = {0};
    t0 = now();
    if (tw_model_evaluate(m, s->x_test, s->y_test, FIT_BATCH, &test) < 0)
        die_engine("tw_model_evaluate");
    double eval_s = now() - t0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    int64_t n = tw_tensor_dim(s->x, 0);
    snprintf(extra, size,
             "\"samples_per_second\": %.6g, \"test_accuracy\": %.6g, \"peak_rss_mb\": %.6g, \"loss\": %.6g, "
             "\"accuracy\": %.6g, \"test_loss\": %.6g, \"eval_s\": %.6g",
             (double)n / seconds, tw_logs_get(&test, "accuracy"), (double)usage.ru_maxrss / 1024.0,
             tw_logs_get(&h->epoch_logs[0], "loss"), tw_logs_get(&h->epoch_logs[0], "accuracy"),
             tw_logs_get(&test, "loss"), eval_s);
    tw_history_free(h);
    tw_layer_unref(m);
    return seconds;
}

static void fit_teardown(void *p)
{
    fit_state *s = p;
    tw_tensor_unref(s->x);
    tw_tensor_unref(s->y);
    tw_tensor_unref(s->x_test);
    tw_tensor_unref(s->y_test);
    free(s);
}

/* ---- traced_small: 30 elementwise ops on two 1,000-element float32 vectors,
 * eagerly and as a traced tw_function (torch_peer.py: torch.jit.trace) ---- */

static tw_tensor *small_chain(tw_tensor *x, tw_tensor *y)
{
    tw_tensor *t1 = tw_mul(x, y), *t2 = tw_add(t1, x), *t3 = tw_mul_scalar(t2, 0.5), *t4 = tw_sub(t3, y);
    tw_tensor *t5 = tw_relu(t4), *t6 = tw_abs(t2), *t7 = tw_add(t5, t6), *t8 = tw_mul(t7, t7);
    tw_tensor *t9 = tw_sub(t8, t3), *t10 = tw_maximum(t9, y), *t11 = tw_minimum(t10, x);
    tw_tensor *t12 = tw_mul_scalar(t11, 1.5), *t13 = tw_add_scalar(t12, 0.25), *t14 = tw_square(t13);
    tw_tensor *t15 = tw_div(t14, tw_add_scalar(tw_abs(y), 1.0)), *t16 = tw_neg(t15), *t17 = tw_add(t16, t9);
    tw_tensor *t18 = tw_mul(t17, x), *t19 = tw_clip(t18, -2.0, 2.0), *t20 = tw_sub(t19, t12);
    tw_tensor *t21 = tw_relu(t20), *t22 = tw_mul(t21, y), *t23 = tw_add(t22, t13), *t24 = tw_sub_scalar(t23, 0.1);
    tw_tensor *t25 = tw_maximum(t24, t5), *t26 = tw_mul_scalar(t25, 0.9);
    return tw_add(t26, t1);
}

static int small_chain_fn(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = small_chain(in[0], in[1]);
    return out[0] ? 1 : -1;
}

typedef struct {
    tw_tensor *x, *y;
    tw_function *f;
} traced_state;

static void *traced_small_setup(setup_result *r)
{
    traced_state *s = malloc(sizeof *s);
    if (!s)
        die("out of memory");
    s->x = pattern_tensor(1, TW_SHAPE(1000));
    s->y = pattern_tensor(2, TW_SHAPE(1000));
    s->f = tw_function_new("small_chain", small_chain_fn, NULL);
    if (!s->f)
        die_engine("tw_function_new");
    tw_scope_begin();
    tw_tensor *eager = small_chain(s->x, s->y), *traced = tw_function_call1(s->f, TW_TENSORS(s->x, s->y));
    double e = sum_squares(eager), t = sum_squares(traced);
    if (e != t)
        die("traced_small: traced and eager results differ (sums of squares %.17g and %.17g)", t, e);
    r->check[r->nchecks++] = e;
    tw_scope_end();
    snprintf(r->info, sizeof r->info, "\"graph_nodes\": %d",
             tw_graph_node_count(tw_function_graph_at(s->f, 0)));
    return s;
}

static void traced_small_run(void *p, long iters)
{
    traced_state *s = p;
    for (long i = 0; i < iters; i++) {
        tw_tensor *y = tw_function_call1(s->f, TW_TENSORS(s->x, s->y));
        if (!y)
            die_engine("traced call");
        tw_tensor_unref(y);
    }
}

static void traced_small_run_eager(void *p, long iters)
{
    traced_state *s = p;
    for (long i = 0; i < iters; i++) {
        tw_scope_begin(); /* releases the intermediates and the result */
        if (!small_chain(s->x, s->y))
            die_engine("eager chain");
        tw_scope_end();
    }
}

static void traced_small_teardown(void *p)
{
    traced_state *s = p;
    tw_function_free(s->f);
    tw_tensor_unref(s->x);
    tw_tensor_unref(s->y);
    free(s);
}

/* ---- traced_mlp_step: the mlp_epoch model's training step as fit runs it,
 * traced (tw_fit_options.traced = ON) against eager (OFF). A repetition's
 * unit is one fit of STEP_BATCHES batches of FIT_BATCH pattern() images
 * (labels row % 10, no shuffle), so the time per step includes fit's own
 * per-step work (the loss read, metrics, logs, callbacks) on both sides.
 * Two models from the same initial weights train side by side; the check is
 * the first fit's mean loss, which must agree between traced and eager.
 * torch_peer.py: the same steps in eager PyTorch (torch.optim.Adam). ----- */

enum { STEP_BATCHES = 20 };

typedef struct {
    fit_state data; /* make and x, y (no test split) */
    tw_model *traced, *eager;
} step_state;

static double fit_steps(step_state *s, tw_model *m, tw_trace_mode mode)
{
    tw_fit_options opt = fit_options();
    opt.traced = mode;
    tw_history *h = tw_model_fit(m, s->data.x, s->data.y, &opt);
    if (!h)
        die_engine("tw_model_fit");
    double loss = tw_logs_get(&h->epoch_logs[0], "loss");
    tw_history_free(h);
    return loss;
}

static void *traced_mlp_step_setup(setup_result *r)
{
    step_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->data.make = mlp_model;
    int64_t n = STEP_BATCHES * FIT_BATCH;
    s->data.x = pattern_tensor(1, TW_SHAPE(n, 28, 28));
    int64_t *labels = malloc(sizeof *labels * (size_t)n);
    if (!labels)
        die("out of memory");
    for (int64_t i = 0; i < n; i++)
        labels[i] = i % 10;
    s->data.y = tw_tensor_from_data(labels, TW_INT64, 1, (int64_t[]){n});
    free(labels);
    s->traced = fresh_model(&s->data);
    s->eager = fresh_model(&s->data);
    double traced = fit_steps(s, s->traced, TW_TRACE_ON), eager = fit_steps(s, s->eager, TW_TRACE_OFF);
    if (!(fabs(traced - eager) <= 1e-5 * fabs(eager)))
        die("traced_mlp_step: traced and eager fits differ (mean losses %.9g and %.9g)", traced, eager);
    r->check[r->nchecks++] = eager;
    const tw_graph *g = tw_model_train_step_graph(s->traced);
    snprintf(r->info, sizeof r->info, "\"graph_nodes\": %d, \"steps_per_rep_unit\": %d", g ? tw_graph_node_count(g) : 0,
             STEP_BATCHES);
    return s;
}

static void traced_mlp_step_run(void *p, long iters)
{
    step_state *s = p;
    for (long i = 0; i < iters; i++)
        fit_steps(s, s->traced, TW_TRACE_ON);
}

static void traced_mlp_step_run_eager(void *p, long iters)
{
    step_state *s = p;
    for (long i = 0; i < iters; i++)
        fit_steps(s, s->eager, TW_TRACE_OFF);
}

static void traced_mlp_step_teardown(void *p)
{
    step_state *s = p;
    tw_layer_unref(s->traced);
    tw_layer_unref(s->eager);
    tw_tensor_unref(s->data.x);
    tw_tensor_unref(s->data.y);
    free(s);
}

/* ---- resnet50_step: one training step of Keras applications' ResNet50
 * (examples/models/resnet50.json) as fit runs it: forward, backward and an
 * SGD update (learning rate 0.01, sparse categorical cross-entropy) on one
 * batch of RESNET_BATCH pattern() images, 224x224x3 float32, labels
 * i * 37 % 1000. Each side starts from its own random weights, so the check
 * is the batch only (its sum of squares and the labels' sum). A repetition
 * is measure(): one step timed; it adds samples_per_second and the
 * process's peak resident memory (VmHWM). torch_peer.py: torchvision's
 * resnet50 on the same batch. ---------------------------------------------- */

static int64_t resnet_batch = 8; /* --batch */

typedef struct {
    tw_model *model;
    tw_tensor *x, *y;
} resnet_state;

/* The process's peak resident memory in MiB (VmHWM), as torch_peer.py reads it. */
static double peak_rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = NAN;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024.0;
}

/* examples/models/NAME: from $TW_EXAMPLES_DIR when set (tools/gpu-check's
 * folder, run where this tree is not), else from this source tree. */
static tw_model *load_example(const char *name)
{
    const char *dir = getenv("TW_EXAMPLES_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/models/%s", dir && *dir ? dir : TW_EXAMPLES_DIR, name);
    return tw_model_load(path);
}

static double resnet_step(resnet_state *s)
{
    tw_fit_options opt = fit_options();
    opt.batch_size = resnet_batch;
    tw_history *h = tw_model_fit(s->model, s->x, s->y, &opt);
    if (!h)
        die_engine("tw_model_fit");
    double loss = tw_logs_get(&h->epoch_logs[0], "loss");
    tw_history_free(h);
    if (!isfinite(loss))
        die("resnet50_step: the loss is %g", loss);
    return loss;
}

static void *resnet50_step_setup(setup_result *r)
{
    resnet_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    use_bench_device();
    s->model = load_example("resnet50.json");
    if (!s->model)
        die_engine("tw_model_load");
    tw_optimizer_config sgd = tw_optimizer_defaults(TW_OPTIMIZER_SGD);
    sgd.learning_rate = (tw_lr_schedule){.kind = TW_SCHEDULE_CONSTANT, .initial_learning_rate = 0.01};
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    if (tw_model_build(s->model, NULL, FIT_SEED) < 0 || tw_model_compile(s->model, tw_optimizer_new(&sgd), &loss, 0, NULL) < 0)
        die_engine("tw_model_compile");
    tw_set_default_device(TW_CPU); /* the batch is made and checked on the CPU */
    s->x = pattern_tensor(1, TW_SHAPE(resnet_batch, 224, 224, 3));
    int64_t *labels = malloc((size_t)resnet_batch * sizeof *labels);
    double label_sum = 0;
    if (!labels)
        die("out of memory");
    for (int64_t i = 0; i < resnet_batch; i++)
        label_sum += (double)(labels[i] = i * 37 % 1000);
    s->y = tw_tensor_from_data(labels, TW_INT64, 1, (int64_t[]){resnet_batch});
    free(labels);
    r->check[r->nchecks++] = sum_squares(s->x);
    r->check[r->nchecks++] = label_sum;
    s->x = on_bench_device(s->x), s->y = on_bench_device(s->y);
    use_bench_device();
    double first = resnet_step(s); /* warms up (and traces the step when it can) */
    snprintf(r->info, sizeof r->info, "\"traced\": %s, \"first_loss\": %.6g",
             tw_model_train_step_graph(s->model) ? "true" : "false", first);
    return s;
}

static double resnet50_step_measure(void *p, int rep, char *extra, size_t size)
{
    (void)rep;
    resnet_state *s = p;
    double t0 = now();
    double loss = resnet_step(s);
    double seconds = now() - t0;
    snprintf(extra, size, "\"samples_per_second\": %.6g, \"peak_rss_mb\": %.6g, \"loss\": %.6g",
             (double)resnet_batch / seconds, peak_rss_mb(), loss);
    return seconds;
}

static void resnet50_step_teardown(void *p)
{
    resnet_state *s = p;
    tw_layer_unref(s->model);
    tw_tensor_unref(s->x);
    tw_tensor_unref(s->y);
    free(s);
}

/* ---- resnet_fmnist_step: the residual Fashion-MNIST template
 * (examples/models/resnet_fashion_mnist.json: two residual blocks of 3x3
 * convolutions with batch normalization, 515,146 parameters) trained as
 * fit runs it: RESNET_FMNIST_STEPS steps of FIT_BATCH pattern() images
 * 28x28x1 (in [-0.5, 0.5)), labels i % 10, Adam at 0.001, sparse categorical
 * cross-entropy. A repetition is one fit over those steps, timed; it adds
 * samples_per_second and peak_rss_mb. torch_peer.py: the same network. */

enum { RESNET_FMNIST_STEPS = 10 };

static void *resnet_fmnist_step_setup(setup_result *r)
{
    resnet_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->model = load_example("resnet_fashion_mnist.json");
    if (!s->model)
        die_engine("tw_model_load");
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    tw_optimizer_config adam = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    if (tw_model_build(s->model, NULL, FIT_SEED) < 0 ||
        tw_model_compile(s->model, tw_optimizer_new(&adam), &loss, 0, NULL) < 0)
        die_engine("tw_model_compile");
    int64_t n = RESNET_FMNIST_STEPS * FIT_BATCH;
    s->x = pattern_tensor(1, TW_SHAPE(n, 28, 28, 1));
    int64_t *labels = malloc(sizeof *labels * (size_t)n);
    double label_sum = 0;
    for (int64_t i = 0; i < n; i++)
        label_sum += (double)(labels[i] = i % 10);
    s->y = tw_tensor_from_data(labels, TW_INT64, 1, &n);
    free(labels);
    r->check[r->nchecks++] = sum_squares(s->x);
    r->check[r->nchecks++] = label_sum;
    tw_fit_options opt = fit_options();
    tw_history *h = tw_model_fit(s->model, s->x, s->y, &opt); /* warms up */
    if (!h)
        die_engine("tw_model_fit");
    snprintf(r->info, sizeof r->info, "\"first_loss\": %.6g", tw_logs_get(&h->epoch_logs[0], "loss"));
    tw_history_free(h);
    return s;
}

static double resnet_fmnist_step_measure(void *p, int rep, char *extra, size_t size)
{
    (void)rep;
    resnet_state *s = p;
    tw_fit_options opt = fit_options();
    double t0 = now();
    tw_history *h = tw_model_fit(s->model, s->x, s->y, &opt);
    double seconds = now() - t0;
    if (!h)
        die_engine("tw_model_fit");
    double loss = tw_logs_get(&h->epoch_logs[0], "loss");
    tw_history_free(h);
    if (!isfinite(loss))
        die("resnet_fmnist_step: the loss is %g", loss);
    snprintf(extra, size, "\"samples_per_second\": %.6g, \"peak_rss_mb\": %.6g, \"loss\": %.6g",
             RESNET_FMNIST_STEPS * FIT_BATCH / seconds, peak_rss_mb(), loss);
    return 1e3 * seconds / RESNET_FMNIST_STEPS; /* ms/step, as the unit says */
}

static const benchmark benchmarks[] = {
    {"add16", "ns/op", 1e9, false, add16_setup, add16_run, NULL, pair_teardown},
    {"tiny_step", "us/step", 1e6, false, tiny_step_setup, tiny_step_run, NULL, pair_teardown},
    {"matmul_1000", "ms/product", 1e3, true, matmul_setup, matmul_run, matmul_run_reference, matmul_teardown, NULL,
     "sgemm"},
    {"conv_step", "ms/step", 1e3, false, conv_setup, conv_step_run, NULL, conv_teardown},
    {"depthwise_conv", "ms/step", 1e3, false, depthwise_setup, conv_step_run, NULL, conv_teardown},
    {"dataset_epoch", "ms/epoch", 1e3, false, dataset_epoch_setup, dataset_epoch_run, NULL, dataset_teardown},
    {"prefetch_wait", "% of loop time waiting on data", 1, true, prefetch_setup, prefetch_run, NULL,
     prefetch_teardown, prefetch_measure},
    /* No run: their setup's check steps warm up. */
    {"mlp_epoch", "s/epoch", 1, true, mlp_epoch_setup, NULL, NULL, fit_teardown, fit_measure},
    {"cnn_epoch", "s/epoch", 1, true, cnn_epoch_setup, NULL, NULL, fit_teardown, fit_measure},
    {"traced_small", "us/call", 1e6, false, traced_small_setup, traced_small_run, traced_small_run_eager,
     traced_small_teardown, NULL, "eager"},
    {"traced_mlp_step", "ms/step", 1e3 / STEP_BATCHES, false, traced_mlp_step_setup, traced_mlp_step_run,
     traced_mlp_step_run_eager, traced_mlp_step_teardown, NULL, "eager"},
    {"resnet50_step", "s/step", 1, true, resnet50_step_setup, NULL, NULL, resnet50_step_teardown,
     resnet50_step_measure},
    {"resnet_fmnist_step", "ms/step", 1e3, true, resnet_fmnist_step_setup, NULL, NULL, resnet50_step_teardown,
     resnet_fmnist_step_measure},
};

/* ---- timing ---------------------------------------------------------------- */

/* How many iterations make a repetition of at least min_time seconds. */
static long calibrate(const benchmark *b, void *state, double min_time)
{
    long iters = 1;
    for (;;) {
        double t0 = now();
        b->run(state, iters);
        double dt = now() - t0;
        if (dt >= min_time / 4 || iters >= (1L << 40)) {
            double per = dt / (double)iters;
            long n = per > 0 ? (long)(min_time / per) + 1 : iters;
            return n > 0 ? n : 1;
        }
        iters *= dt > 0 && min_time / 4 / dt < 16 ? 4 : 16;
    }
}

static double time_run(void (*run)(void *, long), void *state, long iters, double scale)
{
    double t0 = now();
    run(state, iters);
    return (now() - t0) / (double)iters * scale;
}

static void usage(FILE *out)
{
    fputs("usage: twb-bench NAME [--reps N | --serve] [--min-time SECONDS] [--products N]\n"
          "                 [--device DEVICE] [--batch N]\n"
          "NAME: add16 tiny_step matmul_1000 conv_step dataset_epoch prefetch_wait mlp_epoch cnn_epoch traced_small\n"
          "      traced_mlp_step depthwise_conv resnet50_step resnet_fmnist_step\n"
          "--device: where mlp_epoch, cnn_epoch and resnet50_step train (cpu:0, cuda:0, ...);\n"
          "--batch: resnet50_step's batch size (8).\n"
          "Prints a JSON header, then the time per operation of each repetition (see bench/README.md).\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    const benchmark *b = NULL;
    for (size_t i = 0; i < sizeof benchmarks / sizeof benchmarks[0]; i++)
        if (strcmp(argv[1], benchmarks[i].name) == 0)
            b = &benchmarks[i];
    int reps = 7;
    bool serve = false;
    double min_time = 0.25;
    long products = 25;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--serve") == 0)
            serve = true;
        else if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc)
            min_time = atof(argv[++i]);
        else if (strcmp(argv[i], "--products") == 0 && i + 1 < argc)
            products = atol(argv[++i]);
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            if (tw_device_parse(argv[++i], &bench_device) < 0)
                die_engine("--device");
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            resnet_batch = atol(argv[++i]);
        else
            b = NULL;
    }
    bool trains = b && (!strcmp(b->name, "mlp_epoch") || !strcmp(b->name, "cnn_epoch") ||
                        !strcmp(b->name, "resnet50_step"));
    if (!b || reps < 1 || !(min_time > 0) || products < 1 || resnet_batch < 1 ||
        (bench_device.kind != TW_DEVICE_CPU && !trains)) {
        usage(stderr);
        return 2;
    }

    setup_result r = {.nchecks = 0};
    void *state = b->setup(&r);
    if (b->run)
        b->run(state, 1); /* warm the pools and caches */
    if (b->run_reference)
        b->run_reference(state, 1);
    long iters = b->measure ? 1 : b->fixed_iters ? products : calibrate(b, state, min_time);

    printf("{\"name\": \"%s\", \"unit\": \"%s\", \"iters_per_rep\": %ld, \"check\": [", b->name, b->unit, iters);
    for (int i = 0; i < r.nchecks; i++)
        printf("%s%.10g", i ? ", " : "", r.check[i]);
    printf("], \"blas\": \"%s\"%s%s}\n", tw_blas_info(), r.info[0] ? ", " : "", r.info);
    fflush(stdout);

    char line[64];
    for (int rep = 0; serve ? fgets(line, sizeof line, stdin) != NULL : rep < reps; rep++) {
        if (serve && strncmp(line, "rep", 3) != 0)
            break;
        if (b->measure) {
            char extra[512] = "";
            double value = b->measure(state, rep, extra, sizeof extra);
            printf("{\"value\": %.10g%s%s}\n", value, extra[0] ? ", " : "", extra);
        } else if (b->run_reference) {
            /* Alternate which goes first, so a drift in machine speed
             * touches both alike. */
            double value, reference;
            if (rep % 2 == 0) {
                value = time_run(b->run, state, iters, b->scale);
                reference = time_run(b->run_reference, state, iters, b->scale);
            } else {
                reference = time_run(b->run_reference, state, iters, b->scale);
                value = time_run(b->run, state, iters, b->scale);
            }
            printf("{\"value\": %.10g, \"%s\": %.10g}\n", value, b->reference_key, reference);
        } else {
            printf("{\"value\": %.10g}\n", time_run(b->run, state, iters, b->scale));
        }
        fflush(stdout);
    }
    b->teardown(state);
    return 0;
}
