/* The seeds' multi-headed model: one shared trunk, two heads.
 *
 *     trunk = Sequential([...]); head1 = Sequential([...]); head2 = ...
 *     path1 = Sequential([trunk, head1]); path2 = Sequential([trunk, head2])
 *
 * Train path1 (trunk and head1 together), then fine-tune head2 alone on
 * path2: only head2's variables go to the tape and the optimizer, so the
 * trunk and head1 stay exactly as they were. The program checks that and
 * prints each phase's loss. Exit status 1 if anything is off. */
#include <stdio.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model.h>

#define MAX_VARS 16

/* One custom-loop step: the loss of `path`, gradients for `trained` only. */
static double train_step(tw_model *path, tw_model *trained, tw_optimizer *opt, const tw_loss *loss_fn, tw_tensor *x,
                         tw_tensor *y)
{
    tw_scope_begin();
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *loss = tw_loss_compute(loss_fn, y, tw_model_call(path, x, true));
    tw_tape_end(tape);
    tw_variables vars = tw_model_trainable_variables(trained);
    tw_tensor *grads[MAX_VARS];
    int rc = tw_tape_gradient(tape, loss, vars.n, vars.items, grads);
    if (!rc)
        rc = tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads);
    tw_tape_free(tape);
    double value = rc ? -1 : tw_tensor_item(loss);
    tw_scope_end();
    return value;
}

static tw_model *stack(const char *name, int n, tw_layer *const *layers)
{
    tw_model *m = tw_sequential_new(name);
    for (int i = 0; i < n; i++)
        tw_model_add(m, layers[i]);
    return m;
}

/* The sum of every weight's values: a fingerprint to see a model unchanged. */
static double fingerprint(tw_model *m)
{
    tw_variables vars = tw_model_variables(m);
    double sum = 0;
    tw_scope_begin();
    for (int i = 0; i < vars.n; i++)
        sum += tw_tensor_item(tw_sum_all(tw_square(vars.items[i])));
    tw_scope_end();
    return sum;
}

int main(void)
{
    tw_scope_begin(); /* owns every tensor main makes */
    tw_rng *rng = tw_rng_new(7);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(256, 4), 0, 1);
    /* Head 1 learns which of three directions x points to most; head 2 the sign of x[:, 0]. */
    tw_tensor *dirs = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(4, 3), 0, 1);
    tw_tensor *y1 = tw_argmax(tw_matmul(x, dirs), 1);
    tw_tensor *y2 = tw_cast(tw_greater(tw_slice(x, 1, 0, 1, 1), tw_scalar(0)), TW_FLOAT32);

    tw_model *trunk = stack("trunk", 2, (tw_layer *[]){tw_dense(16, "relu"), tw_dense(16, "relu")});
    tw_model *head1 = stack("head1", 1, (tw_layer *[]){tw_dense(3, NULL)});
    tw_model *head2 = stack("head2", 1, (tw_layer *[]){tw_dense(1, NULL)});
    tw_model *path1 = stack("path1", 2, (tw_layer *[]){tw_layer_ref(trunk), tw_layer_ref(head1)});
    tw_model *path2 = stack("path2", 2, (tw_layer *[]){tw_layer_ref(trunk), tw_layer_ref(head2)});

    tw_loss loss1 = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss1.from_logits = true;
    tw_loss loss2 = tw_loss_default(TW_LOSS_BINARY_CROSSENTROPY);
    loss2.from_logits = true;
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.01);

    double first = 0, last = 0;
    for (int step = 0; step < 200; step++) {
        last = train_step(path1, path1, opt, &loss1, x, y1);
        first = step == 0 ? last : first;
    }
    printf("path1 (trunk + head1): loss %.4f -> %.4f\n", first, last);

    double trunk_before = fingerprint(trunk), head1_before = fingerprint(head1);
    tw_optimizer *opt2 = tw_optimizer_new_named("adam", 0.01);
    for (int step = 0; step < 200; step++) {
        last = train_step(path2, head2, opt2, &loss2, x, y2);
        first = step == 0 ? last : first;
    }
    printf("path2 (head2 only):    loss %.4f -> %.4f\n", first, last);
    bool untouched = fingerprint(trunk) == trunk_before && fingerprint(head1) == head1_before;
    printf("trunk and head1 unchanged by head2's fine-tuning: %s\n", untouched ? "yes" : "NO");

    int status = untouched && last < first && last >= 0 ? 0 : 1;
    tw_optimizer_free(opt);
    tw_optimizer_free(opt2);
    tw_layer_unref(path1);
    tw_layer_unref(path2);
    tw_layer_unref(trunk);
    tw_layer_unref(head1);
    tw_layer_unref(head2);
    tw_rng_free(rng);
    tw_scope_end();
    return status;
}
