/* twb-step-bench: the per-step cost of fit on one thread, for finding what
 * in a training step does not shrink with the batch (docs/distributed.md,
 * "What limits the scaling").
 *
 *   twb-step-bench MODEL.json BATCH STEPS [REPS] [--traced]
 *
 * Loads a Keras model file (examples/models/NAME.json), compiles it as `twb
 * train` does by default (Adam, sparse categorical cross-entropy from
 * logits, accuracy), fills STEPS batches of BATCH random examples shaped
 * like its input (uniform [0, 1) floats, labels 0-9) and fits them, one
 * epoch without shuffling, REPS times after one warm-up fit. Steps run
 * eagerly, as a data-parallel fit's do (--traced: fit's default instead).
 * One thread (tw_set_num_threads(1)), as each rank of bench/run dp_mlp
 * dp_cnn. Prints the median ms per step and samples/s, and each rep's.
 *
 * The timed fits run inside timed_fit(), so callgrind can count only
 * them: valgrind --tool=callgrind --collect-atstart=no
 * --toggle-collect=timed_fit twb-step-bench ... (instructions per step:
 * the total over STEPS x REPS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tw/engine.h>
#include <tw/losses.h>
#include <tw/model.h>
#include <tw/model_file.h>
#include <tw/ops.h>
#include <tw/optimizers.h>
#include <tw/random.h>

static void die(const char *what)
{
    fprintf(stderr, "twb-step-bench: %s: %s\n", what, tw_last_error());
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static tw_model *compiled_model(const char *path)
{
    tw_model *m = tw_model_load(path);
    if (!m)
        die(path);
    tw_optimizer_config adam = tw_optimizer_defaults(TW_OPTIMIZER_ADAM);
    tw_optimizer *opt = tw_optimizer_new(&adam);
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss.from_logits = true;
    if (!opt || tw_model_build(m, NULL, 1) < 0 ||
        tw_model_compile(m, opt, &loss, 1, (const char *const[]){"accuracy"}) < 0)
        die("compiling the model");
    return m;
}

/* One fit of x and y, timed. Kept out of line: callgrind's --toggle-collect
 * names it. */
__attribute__((noinline)) double timed_fit(tw_model *m, tw_tensor *x, tw_tensor *y, const tw_fit_options *opt)
{
    double t0 = now();
    tw_history *h = tw_model_fit(m, x, y, opt);
    double seconds = now() - t0;
    if (!h)
        die("fit");
    tw_history_free(h);
    return seconds;
}

int main(int argc, char **argv)
{
    bool traced = argc > 1 && strcmp(argv[argc - 1], "--traced") == 0;
    int nargs = argc - traced;
    if (nargs < 4 || nargs > 5) {
        fprintf(stderr, "usage: twb-step-bench MODEL.json BATCH STEPS [REPS] [--traced]\n");
        return 2;
    }
    const char *path = argv[1];
    int64_t batch = atoll(argv[2]), steps = atoll(argv[3]);
    int reps = nargs == 5 ? atoi(argv[4]) : 5;
    if (batch < 1 || steps < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "twb-step-bench: BATCH and STEPS must be >= 1, REPS 1-1000\n");
        return 2;
    }
    tw_set_num_threads(1);

    tw_model *probe = tw_model_load(path);
    if (!probe)
        die(path);
    const tw_shape *in = tw_model_input_shape(probe);
    if (!in)
        die("the model's input shape");
    tw_shape shape = *in;
    shape.dims[0] = batch * steps;
    tw_layer_unref(probe);

    tw_rng *rng = tw_rng_new(1);
    tw_tensor *x = tw_random_uniform(rng, TW_FLOAT32, shape.ndim, shape.dims, 0.0, 1.0);
    tw_tensor *u = tw_random_uniform(rng, TW_FLOAT32, 1, (int64_t[]){batch * steps}, 0.0, 10.0);
    tw_tensor *labels = u ? tw_floor(u) : NULL;
    tw_tensor *y = labels ? tw_cast(labels, TW_INT64) : NULL;
    if (!x || !y)
        die("random data");

    tw_fit_options opt = tw_fit_options_default();
    opt.batch_size = batch;
    opt.shuffle = false;
    opt.seed = 1;
    opt.traced = traced ? TW_TRACE_AUTO : TW_TRACE_OFF;

    /* A warm-up fit (OpenBLAS opens, the allocator's caches fill), then
     * each rep a fresh model. */
    tw_model *m = compiled_model(path);
    tw_history *h = tw_model_fit(m, x, y, &opt);
    if (!h)
        die("fit");
    tw_history_free(h);
    tw_layer_unref(m);
    double seconds[1000];
    for (int r = 0; r < reps; r++) {
        m = compiled_model(path);
        seconds[r] = timed_fit(m, x, y, &opt);
        tw_layer_unref(m);
    }

    printf("%s batch %lld, %lld steps, %s, 1 thread: ms/step", path, (long long)batch, (long long)steps,
           traced ? "traced" : "eager");
    for (int r = 0; r < reps; r++)
        printf(" %.3f", 1e3 * seconds[r] / (double)steps);
    qsort(seconds, (size_t)reps, sizeof seconds[0], cmp_double);
    double median = reps % 2 ? seconds[reps / 2] : 0.5 * (seconds[reps / 2 - 1] + seconds[reps / 2]);
    printf("; median %.3f ms/step, %.0f samples/s\n", 1e3 * median / (double)steps,
           (double)(batch * steps) / median);
    tw_tensor_unref(u);
    tw_tensor_unref(labels);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
    tw_rng_free(rng);
    return 0;
}
