/* Batch normalization's per-channel formulas between the passes over the
 * rows, shared by the CPU kernel (kernels/cpu/batch_norm.c) and the CUDA
 * one (kernels/cuda/batch_norm.cu), in double:
 *
 *   forward, from the mean and the sum of squared deviations of a channel:
 *     inv_std = 1 / sqrt(sum_sq_dev / rows + epsilon)      (biased, as Keras)
 *     y = scale * x + shift,  scale = inv_std * gamma,  shift = beta - mean * scale
 *
 *   backward, from sum dy and sum dy * (x - mean) of a channel:
 *     dgamma = sum_dy_dev * inv_std
 *     dx = a * dy + b * x + k   (dy - dbeta / rows - xhat * dgamma / rows,
 *                                times gamma * inv_std, with the deviation
 *                                term b * (x - mean) folded into k) */
#ifndef TWK_BATCH_NORM_FORMULA_H
#define TWK_BATCH_NORM_FORMULA_H

#include "elementwise.h"

TWK_INLINE void twk_bn_forward_channel(double mean, double sum_sq_dev, double rows, double epsilon, double gamma,
                                       double beta, double *inv_std, double *scale, double *shift)
{
    *inv_std = 1 / sqrt(sum_sq_dev / rows + epsilon);
    *scale = *inv_std * gamma;
    *shift = beta - mean * *scale;
}

TWK_INLINE void twk_bn_backward_channel(double mean, double inv_std, double gamma, double sum_dy,
                                        double sum_dy_dev, double rows, double *dgamma, double *a, double *b,
                                        double *k)
{
    double g = gamma * inv_std;
    *dgamma = sum_dy_dev * inv_std;
    *a = g;
    *b = -g * inv_std * inv_std * sum_dy_dev / rows;
    *k = -g * sum_dy / rows - *b * mean;
}

#endif
