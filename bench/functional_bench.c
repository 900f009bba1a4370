/* functional_1000: a NASNet-size Functional model (1,002 layers) built with
 * the C API, summarized, written as Keras JSON and read back; the CPU time
 * of each, the median of REPS repetitions, against issue 14's targets
 * (building <= 1 s, summary <= 0.2 s). Our side only: Keras' own times are
 * Python's. The model is the graph view's nasnet-size case
 * (tests/test_ui_graph.c): a stem and 125 cells of 8 layers, each reading
 * the two cells before it through two branches that meet in Adds and a
 * Concatenate, on 8x8x4 tensors so that the work is the graph's.
 *
 *     build/bench/twb-functional-bench
 *     functional_1000: layers=1002 build=S s (target 1) weights=S s
 *       summary=S s (target 0.2) to_json=S s from_json=S s
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tw/engine.h>
#include <tw/model.h>
#include <tw/model_file.h>

#define CELLS 125
#define REPS 5

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "functional_1000: %s: %s\n", what, tw_last_error());
    exit(1);
}

/* A layer of the class with up to three "key", "value" settings, NULL-ended. */
static tw_layer *layer(const char *class_name, ...)
{
    tw_layer *l = tw_layer_new(class_name, NULL);
    if (!l)
        die(class_name);
    va_list ap;
    va_start(ap, class_name);
    for (const char *key; (key = va_arg(ap, const char *));)
        if (tw_layer_set(l, key, va_arg(ap, const char *)))
            die(key);
    va_end(ap);
    return l;
}

static tw_node *merge(const char *class_name, tw_node *a, tw_node *b)
{
    return tw_apply_n(layer(class_name, NULL), 2, (tw_node *[]){a, b});
}

static tw_model *nasnet_size(void)
{
    tw_node *in = tw_input("image", TW_SHAPE(8, 8, 4));
    tw_node *prev2 = in, *prev = tw_apply(layer("Conv2D", "filters", "4", "kernel_size", "1", NULL), in);
    for (int c = 0; c < CELLS; c++) {
        tw_node *sep = tw_apply(layer("Conv2D", "filters", "4", "kernel_size", "3", "padding", "same", NULL), prev);
        tw_node *skip = tw_apply(layer("Conv2D", "filters", "4", "kernel_size", "1", NULL), prev2);
        tw_node *pool = tw_apply(layer("MaxPooling2D", "pool_size", "3", "strides", "1", "padding", "same", NULL), prev);
        tw_node *relu = tw_apply(layer("Activation", "activation", "relu", NULL), prev2);
        tw_node *cat = merge("Concatenate", merge("Add", sep, skip), merge("Add", pool, relu));
        prev2 = prev;
        prev = tw_apply(layer("Conv2D", "filters", "4", "kernel_size", "1", NULL), cat);
    }
    tw_model *model = tw_functional_new("nasnet_size", 1, &in, 1, &prev);
    tw_nodes_clear();
    if (!model)
        die("tw_functional_new");
    return model;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v)
{
    qsort(v, REPS, sizeof *v, by_value);
    return v[REPS / 2];
}

int main(void)
{
    enum { BUILD, WEIGHTS, SUMMARY, TO_JSON, FROM_JSON, NTIMES };
    double times[NTIMES][REPS];
    int nlayers = 0;
    for (int r = 0; r < REPS; r++) {
        double t = cpu_seconds();
        tw_model *model = nasnet_size();
        times[BUILD][r] = cpu_seconds() - t;
        nlayers = tw_model_nlayers(model);

        t = cpu_seconds();
        if (tw_model_build(model, NULL, 0))
            die("tw_model_build");
        times[WEIGHTS][r] = cpu_seconds() - t;

        t = cpu_seconds();
        char *summary = tw_model_summary(model, 0);
        times[SUMMARY][r] = cpu_seconds() - t;
        if (!summary)
            die("tw_model_summary");

        t = cpu_seconds();
        char *json = tw_model_to_json(model);
        times[TO_JSON][r] = cpu_seconds() - t;
        if (!json)
            die("tw_model_to_json");

        t = cpu_seconds();
        tw_model *again = tw_model_from_json(json, strlen(json), "nasnet_size.json");
        times[FROM_JSON][r] = cpu_seconds() - t;
        if (!again || tw_model_nlayers(again) != nlayers)
            die("tw_model_from_json");
        free(summary);
        free(json);
        tw_layer_unref(again);
        tw_layer_unref(model);
    }
    printf("functional_1000: layers=%d build=%.3f s (target 1) weights=%.3f s summary=%.3f s (target 0.2) "
           "to_json=%.3f s from_json=%.3f s\n",
           nlayers, median(times[BUILD]), median(times[WEIGHTS]), median(times[SUMMARY]), median(times[TO_JSON]),
           median(times[FROM_JSON]));
    return 0;
}
