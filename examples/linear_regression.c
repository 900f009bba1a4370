/* Fit y = W x + B to noisy points of y = 3x + 2 by gradient descent.
 * cc linear_regression.c $(pkg-config --cflags --libs tw-engine) */
#include <stdio.h>
#include <tw/engine.h>

static tw_tensor *loss_of(tw_tensor *W, tw_tensor *B, tw_tensor *x, tw_tensor *y)
{
    return tw_mean_all(tw_square(tw_sub(tw_add(tw_mul(W, x), B), y)));
}

int main(void)
{
    tw_scope_begin(); /* owns every tensor made below until tw_scope_end() */
    tw_rng *rng = tw_rng_new(42);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(1000), 0.0, 1.0);
    tw_tensor *noise = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(1000), 0.0, 1.0);
    tw_tensor *y = tw_add(tw_add_scalar(tw_mul_scalar(x, 3.0), 2.0), noise);
    tw_tensor *W = tw_variable(tw_scalar_of(5.0, TW_FLOAT32), "W", true);
    tw_tensor *B = tw_variable(tw_scalar_of(10.0, TW_FLOAT32), "B", true);

    int failed = 0;
    for (int step = 0; step < 200 && !failed; step++) {
        tw_scope_begin(); /* this step's loss and gradients go at its end */
        tw_tape *tape = tw_tape_begin(false);
        tw_tensor *loss = loss_of(W, B, x, y);
        tw_tape_end(tape);
        tw_tensor *grads[2];
        failed = tw_tape_gradient(tape, loss, TW_TENSORS(W, B), grads) != 0;
        tw_tape_free(tape);
        if (!failed && step % 20 == 0)
            printf("step %3d: loss=%.4f W=%.4f B=%.4f\n", step, tw_tensor_item(loss),
                   tw_tensor_item(W), tw_tensor_item(B));
        if (!failed)
            failed = tw_assign_sub(W, tw_mul_scalar(grads[0], 0.01)) != 0 ||
                     tw_assign_sub(B, tw_mul_scalar(grads[1], 0.01)) != 0;
        tw_scope_end();
    }
    if (!failed)
        printf("final:    loss=%.4f W=%.4f B=%.4f\n", tw_tensor_item(loss_of(W, B, x, y)),
               tw_tensor_item(W), tw_tensor_item(B));
    else
        fprintf(stderr, "error: %s\n", tw_last_error()); /* e.g. which op failed and why */
    tw_scope_end();
    tw_rng_free(rng);
    return failed;
}
