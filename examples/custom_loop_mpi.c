/* examples/custom_loop.c made data-parallel, Horovod's way: the same loop
 * with two lines added (marked "added"), the shuffle seeded by the rank
 * (so each rank draws its own batches) and the rank in what it prints:
 *
 *     tw_distributed_init(&argc, &argv);        // added: join the ranks
 *     tw_distributed_optimizer(opt, 0);         // added: average the gradients
 *
 * The optimizer broadcasts rank 0's weights before its first update and
 * averages the gradients in fused buckets before every update, so every
 * rank applies the same update. Run it on two ranks:
 *
 *     mpirun -np 2 build/app/custom_loop_mpi [STEPS]   (default 938 steps a rank)
 *
 * (as root in a container, see tests/mpirun-test for the settings). Each
 * rank prints its own loss; the weights, hence the test accuracy, are the
 * same on every rank. Without mpirun it trains alone, as custom_loop.
 *
 * Exit status 77 (skipped) when Fashion-MNIST is not installed. */
#include <stdio.h>
#include <stdlib.h>

#include <tw/data.h>
#include <tw/distributed.h>
#include <tw/engine.h>
#include <tw/model.h>

#define LOG_EVERY 100

static tw_model *mlp(void)
{
    tw_model *model = tw_sequential_new("mlp");
    tw_model_add(model, tw_input_layer(&(tw_shape){3, {-1, 28, 28}}));
    tw_model_add(model, tw_flatten_layer());
    tw_model_add(model, tw_dense(256, "relu"));
    tw_model_add(model, tw_dense(128, "relu"));
    tw_model_add(model, tw_dense(10, NULL));
    return model;
}

/* The seeds' train_step: forward under a tape, gradients, one update. */
static double train_step(tw_model *model, tw_optimizer *opt, const tw_loss *loss_fn, tw_tensor *images,
                         tw_tensor *labels)
{
    tw_tape *tape = tw_tape_begin(false);
    tw_tensor *loss = tw_loss_compute(loss_fn, labels, tw_model_call(model, images, true));
    tw_tape_end(tape);
    tw_variables vars = tw_model_trainable_variables(model);
    tw_tensor *grads[16];
    tw_tape_gradient(tape, loss, vars.n, vars.items, grads);
    tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads);
    tw_tape_free(tape);
    return tw_tensor_item(loss);
}

static double test_accuracy(tw_model *model)
{
    tw_dataset *test = tw_dataset_batch(tw_dataset_scale(tw_dataset_fashion_mnist("test"), 0, 1.0 / 255), 1000, false);
    tw_metric *acc = tw_metric_new("sparse_categorical_accuracy");
    tw_iterator *it = tw_dataset_iter(test);
    tw_element e;
    while (tw_iterator_next(it, &e) > 0) {
        tw_scope_begin();
        tw_metric_update_state(acc, e.t[1], tw_model_call(model, e.t[0], false));
        tw_scope_end();
        tw_element_clear(&e);
    }
    double result = tw_metric_result(acc);
    tw_iterator_free(it);
    tw_metric_free(acc);
    tw_dataset_unref(test);
    return result;
}

int main(int argc, char **argv)
{
    tw_distributed_init(&argc, &argv); /* added */
    long steps = argc > 1 ? atol(argv[1]) : 938;
    tw_dataset *train = tw_dataset_fashion_mnist("train");
    if (!train) {
        fprintf(stderr, "custom_loop: %s\n", tw_last_error());
        return 77;
    }
    train = tw_dataset_shuffle(tw_dataset_scale(train, 0, 1.0 / 255), 60000, 1 + tw_distributed_rank(), true);
    train = tw_dataset_batch(train, 64, false);
    train = tw_dataset_prefetch(tw_dataset_repeat(train, -1), 4);

    tw_model *model = mlp();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.001);
    tw_distributed_optimizer(opt, 0); /* added */
    tw_loss loss_fn = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    loss_fn.from_logits = true;
    tw_metric *avg_loss = tw_metric_new("mean");

    tw_iterator *it = tw_dataset_iter(train);
    tw_element e;
    for (long step = 1; step <= steps && tw_iterator_next(it, &e) > 0; step++) {
        tw_scope_begin();
        tw_metric_update_value(avg_loss, train_step(model, opt, &loss_fn, e.t[0], e.t[1]), 1);
        tw_scope_end();
        tw_element_clear(&e);
        if (tw_optimizer_iterations(opt) % LOG_EVERY == 0) {
            printf("rank %d: step %lld: loss %.4f\n", tw_distributed_rank(),
                   (long long)tw_optimizer_iterations(opt), tw_metric_result(avg_loss));
            tw_metric_reset_state(avg_loss);
        }
    }
    printf("rank %d: test accuracy: %.4f\n", tw_distributed_rank(), test_accuracy(model));

    tw_iterator_free(it);
    tw_dataset_unref(train);
    tw_metric_free(avg_loss);
    tw_optimizer_free(opt);
    tw_layer_unref(model);
    tw_distributed_finalize();
    return 0;
}
