/* twb-bench: the Tensor Workbench side of the benchmarks. bench/run runs it
 * next to bench/torch_peer.py, which does the same work in PyTorch and
 * speaks the same protocol.
 *
 *   twb-bench NAME [--reps N | --serve] [--min-time SECONDS] [--products N]
 *
 * NAME is add16, tiny_step, matmul_1000 or conv_step. The program sets the
 * benchmark up, checks its results, warms up and picks how many iterations
 * make one repetition (at least --min-time seconds; matmul_1000 does
 * --products products), then prints a JSON header line:
 *
 *   {"name": ..., "unit": "ns/op", "iters_per_rep": N, "check": [...], "blas": ...}
 *
 * "check" holds checksums of the results (sums of squares, in double) on
 * inputs both sides generate alike (pattern() here and in torch_peer.py), so
 * bench/run can tell both did the same work. Then it times repetitions and
 * prints one line per repetition, {"value": TIME_PER_OP} (matmul_1000 adds
 * "sgemm": the same products through a bare cblas_sgemm loop). It runs
 * --reps repetitions, or with --serve one per line "rep" read on stdin until
 * end of input, so bench/run can alternate repetitions of the two sides.
 * Exit status 1 (and a message on stderr) when the engine fails. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tw/engine.h>

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

static tw_tensor *pattern_tensor(int64_t seed, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)n);
    if (!v)
        die("out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = pattern(i, seed);
    tw_tensor *t = tw_tensor_from_data(v, TW_FLOAT32, ndim, shape);
    free(v);
    if (!t)
        die_engine("tw_tensor_from_data");
    return t;
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

#define MAX_CHECKS 3

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
    /* Do `iters` operations. */
    void (*run)(void *state, long iters);
    /* matmul_1000: the bare-BLAS reference, timed right after run. */
    void (*run_reference)(void *state, long iters);
    void (*teardown)(void *state);
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
} conv_state;

static void conv_step_once(conv_state *s, setup_result *r)
{
    tw_scope_begin();
    tw_tape *tape = tw_tape_begin(false);
    if (!tape || tw_tape_watch(tape, s->x) < 0 || tw_tape_watch(tape, s->w) < 0)
        die_engine("tw_tape_begin/watch");
    tw_tensor *y = tw_conv2d(s->x, s->w, &s->params);
    tw_tape_end(tape);
    if (!y)
        die_engine("tw_conv2d");
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

static const benchmark benchmarks[] = {
    {"add16", "ns/op", 1e9, false, add16_setup, add16_run, NULL, pair_teardown},
    {"tiny_step", "us/step", 1e6, false, tiny_step_setup, tiny_step_run, NULL, pair_teardown},
    {"matmul_1000", "ms/product", 1e3, true, matmul_setup, matmul_run, matmul_run_reference, matmul_teardown},
    {"conv_step", "ms/step", 1e3, false, conv_setup, conv_step_run, NULL, conv_teardown},
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
          "NAME: add16 tiny_step matmul_1000 conv_step\n"
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
        else
            b = NULL;
    }
    if (!b || reps < 1 || !(min_time > 0) || products < 1) {
        usage(stderr);
        return 2;
    }

    setup_result r = {.nchecks = 0};
    void *state = b->setup(&r);
    b->run(state, 1); /* warm the pools and caches */
    if (b->run_reference)
        b->run_reference(state, 1);
    long iters = b->fixed_iters ? products : calibrate(b, state, min_time);

    printf("{\"name\": \"%s\", \"unit\": \"%s\", \"iters_per_rep\": %ld, \"check\": [", b->name, b->unit, iters);
    for (int i = 0; i < r.nchecks; i++)
        printf("%s%.10g", i ? ", " : "", r.check[i]);
    printf("], \"blas\": \"%s\"%s%s}\n", tw_blas_info(), r.info[0] ? ", " : "", r.info);
    fflush(stdout);

    char line[64];
    for (int rep = 0; serve ? fgets(line, sizeof line, stdin) != NULL : rep < reps; rep++) {
        if (serve && strncmp(line, "rep", 3) != 0)
            break;
        if (b->run_reference) {
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
            printf("{\"value\": %.10g, \"sgemm\": %.10g}\n", value, reference);
        } else {
            printf("{\"value\": %.10g}\n", time_run(b->run, state, iters, b->scale));
        }
        fflush(stdout);
    }
    b->teardown(state);
    return 0;
}
