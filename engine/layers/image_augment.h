/* What Keras' image augmentation layers share (RandomFlip, RandomRotation,
 * RandomZoom, RandomTranslation, RandomContrast): they act only in
 * training, on NHWC batches, drawing one set of values per image from the
 * call's generator; the geometric ones sample through tw_image_transform
 * with Keras' fill_mode and interpolation. Not installed. */
#ifndef TW_IMAGE_AUGMENT_H
#define TW_IMAGE_AUGMENT_H

#include "layer_common.h"

extern const char *const tw__fill_modes[];     /* reflect, wrap, constant, nearest: tw_fill_mode's order */
extern const char *const tw__interpolations[]; /* nearest, bilinear: tw_image_interpolation's order */
extern const char *const tw__channels_last[];  /* the one data_format supported */

/* A Keras factor: one number f for (-f, f), or a (lower, upper) pair; each
 * within [min, max] and lower <= upper. -1 with "KEY: ..." otherwise. */
int tw__factor_range(const tw_param_value *v, const char *key, double min, double max, double *lower,
                     double *upper);

/* infer of the augmentation layers: rank-4 images in, the same shape out. */
int tw__image_augment_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                            int *nw);

/* tw_random_uniform that also takes low == high (every value low). */
tw_tensor *tw__uniform(tw_rng *rng, tw_dtype dtype, int ndim, const int64_t *shape, double low, double high);

/* n uniform draws in [low, high) from rng, in out (doubles). 0 or -1. */
int tw__draw_uniform(tw_rng *rng, int64_t n, double low, double high, double *out);

/* Sample each image of x through its transform (batch rows of 8 numbers)
 * with the layer's choices of interpolation and fill. */
tw_tensor *tw__apply_transforms(tw_tensor *x, const double *transforms, const char *interpolation,
                                const char *fill_mode, double fill_value);

/* The index of choice in list (a parameter's value, from that list). */
int tw__choice_index(const char *const *list, const char *choice);

#endif
