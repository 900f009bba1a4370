/* twb example linear-regression: the linear model of TensorFlow 2's eager
 * tutorial, fitted by gradient descent on a tape. */
#ifndef TWB_EXAMPLE_LINEAR_H
#define TWB_EXAMPLE_LINEAR_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    int steps;            /* gradient-descent steps (200) */
    double learning_rate; /* 0.01 */
    uint64_t seed;        /* for the data */
    int report_every;     /* print a progress line every this many steps; 0: never */
} twb_linear_options;

#define TWB_LINEAR_DEFAULTS ((twb_linear_options){.steps = 200, .learning_rate = 0.01, .seed = 42, .report_every = 20})

typedef struct {
    double loss, w, b; /* after the last step */
} twb_linear_result;

/* Runs the example, printing progress and a final line to out. Returns 0, or
 * -1 after printing the engine's error message to stderr. result may be NULL. */
int twb_example_linear_run(const twb_linear_options *options, FILE *out, twb_linear_result *result);

#endif
