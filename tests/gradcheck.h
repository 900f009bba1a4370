/* Finite-difference gradient checks for the test suites (float64, central
 * differences). The checked function maps inputs to any tensor; the scalar
 * compared is sum(f(inputs) * w) with fixed pseudo-random weights w, so
 * errors cannot cancel by symmetry. */
#ifndef TW_TESTS_GRADCHECK_H
#define TW_TESTS_GRADCHECK_H

#include <tw/engine.h>

typedef tw_tensor *(*gc_fn)(tw_tensor *const *inputs, void *data);

/* First order: the tape's gradient of every input against central
 * differences (step 1e-6). Inputs must be contiguous float64 tensors; they
 * are perturbed in place and restored. Fails the running g_test with the
 * op name, input index, element and both values. */
void gc_check(const char *name, gc_fn f, int ninputs, tw_tensor *const *inputs, void *data);

/* Second order: the gradient (through nested tapes) of h = sum_i <grad_i, v_i>
 * against central differences of h. */
void gc_check_second(const char *name, gc_fn f, int ninputs, tw_tensor *const *inputs, void *data);

/* A float64 tensor of the given shape with values from a fixed seed in
 * [lo, hi] (deterministic, no engine RNG needed). */
tw_tensor *gc_tensor(unsigned seed, double lo, double hi, int ndim, const int64_t *shape);

#endif
