/* Batch normalization in training mode over (rows, channels) with the
 * channel innermost (NHWC or dense activations flattened), the CPU
 * reference of the fused batch_norm op (engine/ops/batch_norm.c):
 *
 *   mean[c]    = sum_r x[r,c] / rows
 *   var[c]     = sum_r (x[r,c] - mean[c])^2 / rows      (biased, as Keras)
 *   inv_std[c] = 1 / sqrt(var[c] + epsilon)
 *   y[r,c]     = (x[r,c] - mean[c]) * inv_std[c] * gamma[c] + beta[c]
 *
 * and its gradient from the saved mean and inv_std:
 *
 *   dbeta[c]  = sum_r dy[r,c]
 *   dgamma[c] = sum_r dy[r,c] * xhat[r,c]      xhat = (x - mean) * inv_std
 *   dx[r,c]   = gamma[c] * inv_std[c] * (dy[r,c] - dbeta[c] / rows - xhat[r,c] * dgamma[c] / rows)
 *
 * Sums run in double over fixed blocks of rows (combined in order), so the
 * results do not depend on the thread count. Float32 or float64; every
 * buffer is contiguous; the engine hands in a workspace of
 * twk_batch_norm_workspace bytes (either pass). No allocation, no messages. */
#ifndef TWK_BATCH_NORM_KERNELS_H
#define TWK_BATCH_NORM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../twk_dtype.h"

size_t twk_batch_norm_workspace(int64_t rows, int64_t channels);
void twk_batch_norm_forward(twk_dtype dtype, int64_t rows, int64_t channels, const void *x, const void *gamma,
                            const void *beta, double epsilon, void *y, void *mean, void *inv_std, void *workspace);
void twk_batch_norm_backward(twk_dtype dtype, int64_t rows, int64_t channels, const void *x, const void *dy,
                             const void *gamma, const void *mean, const void *inv_std, void *dx, void *dgamma,
                             void *dbeta, void *workspace);

#endif
