/* Tensor Workbench — seeded random numbers.
 *
 * A generator is a seed and a counter (Philox4x32-10, counter based): the
 * value at position i of a draw depends only on the seed and i, never on the
 * number of threads that computed it. Each draw advances the counter, so a
 * sequence of draws from one seed is reproducible. */
#ifndef TW_RANDOM_H
#define TW_RANDOM_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_rng tw_rng;

tw_rng *tw_rng_new(uint64_t seed);
void tw_rng_free(tw_rng *rng);
uint64_t tw_rng_seed(const tw_rng *rng);
/* The generator's whole state is its seed and counter: save both to resume
 * a sequence of draws exactly (checkpoints, a training step keyed by its
 * iteration). */
uint64_t tw_rng_counter(const tw_rng *rng);
void tw_rng_set_state(tw_rng *rng, uint64_t seed, uint64_t counter);

/* Float dtypes only. */
tw_tensor *tw_random_normal(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double mean, double stddev);
tw_tensor *tw_random_uniform(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double low, double high);
/* Normal, redrawn where more than two standard deviations from the mean. */
tw_tensor *tw_random_truncated_normal(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double mean,
                                      double stddev);
/* A random permutation of 0..n-1 as int64. */
tw_tensor *tw_random_permutation(tw_rng *rng, int64_t n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
