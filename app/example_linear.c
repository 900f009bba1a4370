/* twb example linear-regression.
 *
 * 1000 points x ~ N(0, 1), y = 3x + 2 + N(0, 1) noise; variables W = 5 and
 * B = 10; loss = mean((W x + B - y)^2); plain gradient descent. Each step runs
 * inside a scope so its intermediates (predictions, loss, gradients) are
 * released when it ends; the data and the variables outlive the steps and are
 * kept with tw_tensor_ref. */
#include "example_linear.h"

#include <stdbool.h>

#include <tw/engine.h>

#define N_POINTS 1000

static tw_tensor *linear_loss(tw_tensor *W, tw_tensor *B, tw_tensor *x, tw_tensor *y)
{
    return tw_mean_all(tw_square(tw_sub(tw_add(tw_mul(W, x), B), y)));
}

/* One step: the loss before the update into *loss; 0 or -1. Runs in a scope. */
static int train_step(tw_tensor *W, tw_tensor *B, tw_tensor *x, tw_tensor *y, double learning_rate, double *loss)
{
    tw_tape *tape = tw_tape_begin(false);
    if (!tape)
        return -1;
    tw_tensor *current = linear_loss(W, B, x, y);
    tw_tape_end(tape);
    tw_tensor *grads[2] = {NULL, NULL};
    int status = current ? tw_tape_gradient(tape, current, TW_TENSORS(W, B), grads) : -1;
    tw_tape_free(tape);
    if (status != 0)
        return -1;
    if (!grads[0] || !grads[1])
        return tw_error_set("linear-regression: the loss does not depend on W and B");
    *loss = tw_tensor_item(current);
    if (tw_assign_sub(W, tw_mul_scalar(grads[0], learning_rate)) != 0 ||
        tw_assign_sub(B, tw_mul_scalar(grads[1], learning_rate)) != 0)
        return -1;
    return 0;
}

/* A reference that outlives the current scope (NULL stays NULL). */
static tw_tensor *keep(tw_tensor *t)
{
    return t ? tw_tensor_ref(t) : NULL;
}

int twb_example_linear_run(const twb_linear_options *options, FILE *out, twb_linear_result *result)
{
    tw_tensor *x = NULL, *y = NULL, *W = NULL, *B = NULL;
    int status = -1;
    tw_rng *rng = tw_rng_new(options->seed);
    if (!rng)
        goto done;

    /* The data and the variables, kept past the scope. */
    tw_scope_begin();
    x = keep(tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(N_POINTS), 0.0, 1.0));
    tw_tensor *noise = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(N_POINTS), 0.0, 1.0);
    y = keep(tw_add(tw_add_scalar(tw_mul_scalar(x, 3.0), 2.0), noise));
    W = keep(tw_variable(tw_scalar_of(5.0, TW_FLOAT32), "W", true));
    B = keep(tw_variable(tw_scalar_of(10.0, TW_FLOAT32), "B", true));
    tw_scope_end();
    if (!x || !y || !W || !B)
        goto done;

    fprintf(out, "Fitting y = W x + B to %d points of y = 3x + 2 + noise, from W = 5, B = 10\n", N_POINTS);
    for (int step = 0; step < options->steps; step++) {
        double loss = 0.0, w = tw_tensor_item(W), b = tw_tensor_item(B);
        tw_scope_begin();
        int failed = train_step(W, B, x, y, options->learning_rate, &loss);
        tw_scope_end();
        if (failed)
            goto done;
        if (options->report_every > 0 && step % options->report_every == 0)
            fprintf(out, "step %4d: loss=%.4f  W=%.4f  B=%.4f\n", step, loss, w, b);
    }

    tw_scope_begin();
    tw_tensor *final_loss = linear_loss(W, B, x, y);
    bool computed = final_loss != NULL;
    double loss = computed ? tw_tensor_item(final_loss) : 0.0;
    tw_scope_end();
    if (!computed)
        goto done;
    double w = tw_tensor_item(W), b = tw_tensor_item(B);
    fprintf(out, "after %d steps: loss=%.4f  W=%.4f  B=%.4f  (true W=3, B=2)\n", options->steps, loss, w, b);
    if (result)
        *result = (twb_linear_result){.loss = loss, .w = w, .b = b};
    status = 0;

done:
    if (status != 0)
        fprintf(stderr, "twb: linear-regression: %s\n",
                tw_error_pending() ? tw_last_error() : "could not create the generator");
    tw_tensor_unref(x);
    tw_tensor_unref(y);
    tw_tensor_unref(W);
    tw_tensor_unref(B);
    if (rng)
        tw_rng_free(rng);
    return status;
}
