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

/* The parameter rows the geometric ones (RandomRotation, RandomZoom,
 * RandomTranslation) share; `what` names what the seed would decide. */
#define TW__FILL_MODE_PARAM                                                                                        \
    {"fill_mode", TW_PARAM_CHOICE, "reflect", .choices = tw__fill_modes,                                          \
     .help = "What points from outside the image read"}
#define TW__INTERPOLATION_PARAM                                                                                    \
    {"interpolation", TW_PARAM_CHOICE, "bilinear", .choices = tw__interpolations, .help = "How pixels are sampled"}
#define TW__SEED_PARAM(what)                                                                                       \
    {"seed", TW_PARAM_INT, "", 0, 1e18, .nullable = true,                                                         \
     .help = "Accepted from Keras files and ignored: the model's seed decides the " what}
#define TW__FILL_VALUE_PARAM                                                                                       \
    {"fill_value", TW_PARAM_FLOAT, "0", -1e9, 1e9, .help = "The value outside with fill_mode constant"}
#define TW__DATA_FORMAT_PARAM                                                                                      \
    {"data_format", TW_PARAM_CHOICE, "channels_last", .choices = tw__channels_last,                               \
     .help = "Where the images keep their channels"}

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

/* RandomTranslation and RandomZoom: per image, a draw for the height and
 * one for the width (or the height's again), each from its range, make the
 * image's transform. Both layers' parameters, in this order: */
enum {
    TW_HW_HEIGHT_FACTOR,
    TW_HW_WIDTH_FACTOR,
    TW_HW_FILL_MODE,
    TW_HW_INTERPOLATION,
    TW_HW_SEED,
    TW_HW_FILL_VALUE,
    TW_HW_DATA_FORMAT
};
/* Their state (the layer's state_size). */
typedef struct {
    tw_rng *rng;
    double h_lower, h_upper, w_lower, w_upper;
} tw_hw_augment_state;
/* The transform (8 numbers into m) of an image of h x w pixels for the
 * draws dh (height) and dw (width). */
typedef void (*tw_hw_transform)(double dh, double dw, double h, double w, double *m);
/* The call: identity in inference; in training each image's dh drawn from
 * [offset + h_lower, offset + h_upper), dw from the width's range (or dh
 * when same_draw), sampled through `transform` with the layer's fill and
 * interpolation. */
tw_tensor *tw__hw_augment_call(tw_layer *self, tw_tensor *x, const tw_call_context *ctx, double offset,
                               bool same_draw, tw_hw_transform transform);
void tw__hw_augment_finalize(tw_layer *self);

/* The index of choice in list (a parameter's value, from that list). */
int tw__choice_index(const char *const *list, const char *choice);

#endif
