/* The seeds' custom training loop, in C: a Keras-style MLP on Fashion-MNIST
 * trained with a gradient tape and apply_gradients, the loss averaged by a
 * Mean metric and logged every 100 steps, then the test accuracy. The run
 * goes into the run database (tw/summary.h) as `twb train`'s do: the loss
 * curve, the test accuracy, and sample predictions, a grid of test images
 * (tw_summary_image) with each one's predicted and true class (text).
 *
 *     build/app/custom_loop [STEPS [RUNS.DB]]
 *
 * STEPS defaults to one epoch (938), RUNS.DB to twb's own run database;
 * the run is named custom-loop-DATE-TIME. Exit status 77 (skipped) when
 * Fashion-MNIST is not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tw/data.h>
#include <tw/engine.h>
#include <tw/model.h>
#include <tw/summary.h>

#define LOG_EVERY 100
#define GRID 4  /* sample predictions: GRID x GRID test images */
#define CELL 30 /* a 28 x 28 image in a one-pixel frame */

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

/* The first GRID x GRID test images in one picture, each framed green when
 * the model is right and red when it is wrong, and a text with a line per
 * row of the grid, "predicted (true)" for each image. */
static void log_predictions(tw_model *model, tw_summary_writer *w, int64_t step)
{
    tw_dataset *test = tw_dataset_batch(tw_dataset_scale(tw_dataset_fashion_mnist("test"), 0, 1.0 / 255), GRID * GRID,
                                        false);
    tw_iterator *it = tw_dataset_iter(test);
    tw_element e;
    if (tw_iterator_next(it, &e) > 0) {
        static float images[GRID * GRID][28][28], grid[GRID * CELL][GRID * CELL][3]; /* 220 KB: not on the stack */
        int64_t pred[GRID * GRID], truth[GRID * GRID];
        char text[GRID * GRID * 64] = "";
        tw_scope_begin();
        tw_tensor_copy_to(e.t[0], images, sizeof images);
        tw_tensor_copy_to(tw_argmax(tw_model_call(model, e.t[0], false), 1), pred, sizeof pred);
        tw_tensor_copy_to(tw_cast(e.t[1], TW_INT64), truth, sizeof truth);
        for (int i = 0, len = 0; i < GRID * GRID; i++) {
            float frame[3] = {pred[i] != truth[i], pred[i] == truth[i], 0};
            for (int y = 0; y < CELL; y++)
                for (int x = 0; x < CELL; x++)
                    for (int c = 0; c < 3; c++)
                        grid[i / GRID * CELL + y][i % GRID * CELL + x][c] =
                            y && x && y <= 28 && x <= 28 ? images[i][y - 1][x - 1] : frame[c];
            len += snprintf(text + len, sizeof text - len, "%s (%s)%s", tw_fashion_mnist_classes[pred[i]],
                            tw_fashion_mnist_classes[truth[i]], i % GRID == GRID - 1 ? "\n" : ", ");
        }
        tw_tensor *picture = tw_tensor_from_data(grid, TW_FLOAT32, TW_SHAPE(GRID * CELL, GRID * CELL, 3));
        tw_summary_image(w, "predictions/images", picture, step);
        tw_summary_text(w, "predictions/labels", text, step);
        tw_scope_end();
        tw_element_clear(&e);
    }
    tw_iterator_free(it);
    tw_dataset_unref(test);
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 938;
    tw_dataset *train = tw_dataset_fashion_mnist("train");
    if (!train) {
        fprintf(stderr, "custom_loop: %s\n", tw_last_error());
        return 77;
    }
    char run_name[64];
    strftime(run_name, sizeof run_name, "custom-loop-%Y%m%d-%H%M%S", localtime(&(time_t){time(NULL)}));
    tw_summary_writer *w = tw_summary_writer_open(argc > 2 ? argv[2] : NULL, run_name, NULL);
    if (!w) {
        fprintf(stderr, "custom_loop: %s\n", tw_last_error());
        return 1;
    }
    train = tw_dataset_batch(tw_dataset_shuffle(tw_dataset_scale(train, 0, 1.0 / 255), 60000, 1, true), 64, false);
    train = tw_dataset_prefetch(tw_dataset_repeat(train, -1), 4);

    tw_model *model = mlp();
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.001);
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
            printf("step %lld: loss %.4f\n", (long long)tw_optimizer_iterations(opt), tw_metric_result(avg_loss));
            tw_summary_metric(w, "train/loss", avg_loss, tw_optimizer_iterations(opt)); /* and resets it */
        }
    }
    double accuracy = test_accuracy(model);
    printf("test accuracy: %.4f\n", accuracy);
    tw_summary_scalar(w, "test/accuracy", accuracy, tw_optimizer_iterations(opt));
    log_predictions(model, w, tw_optimizer_iterations(opt));
    int rc = tw_summary_writer_close(w, TW_RUN_FINISHED);
    if (rc)
        fprintf(stderr, "custom_loop: the run database: %s\n", tw_last_error());

    tw_iterator_free(it);
    tw_dataset_unref(train);
    tw_metric_free(avg_loss);
    tw_optimizer_free(opt);
    tw_layer_unref(model);
    return rc ? 1 : 0;
}
