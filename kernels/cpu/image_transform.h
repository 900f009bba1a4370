/* CPU kernel of the projective image transform (TensorFlow's
 * ImageProjectiveTransformV3, what Keras' RandomRotation, RandomZoom and
 * RandomTranslation run) over NHWC images, and its adjoint (the gradient
 * with respect to the images). No allocation, no error messages. */
#ifndef TWK_IMAGE_TRANSFORM_H
#define TWK_IMAGE_TRANSFORM_H

#include <stdint.h>

#include "twk_dtype.h"

enum { TWK_INTERP_NEAREST, TWK_INTERP_BILINEAR };
enum { TWK_FILL_REFLECT, TWK_FILL_WRAP, TWK_FILL_CONSTANT, TWK_FILL_NEAREST };

typedef struct {
    int64_t batch, in_h, in_w, channels, out_h, out_w;
    int interpolation, fill_mode;
    double fill_value; /* TWK_FILL_CONSTANT */
} twk_image_transform_shape;

/* out[n, y, x, c] samples images[n] at the point transforms[n] maps (x, y)
 * to: with t = transforms[n * 8 ..], k = t6 x + t7 y + 1, the input point is
 * ((t0 x + t1 y + t2) / k, (t3 x + t4 y + t5) / k). Points outside the image
 * are mapped back by fill_mode; with TWK_FILL_CONSTANT, each sample outside
 * reads fill_value. transforms has the images' dtype. */
void twk_image_transform(twk_dtype dtype, const twk_image_transform_shape *s, const void *images,
                         const void *transforms, void *out);

/* The adjoint in the images: grad_images (zeroed here) receives each
 * grad_out value times the weight its sample gave each input pixel. */
void twk_image_transform_adjoint(twk_dtype dtype, const twk_image_transform_shape *s, const void *grad_out,
                                 const void *transforms, void *grad_images);

#endif
