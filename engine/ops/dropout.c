/* Inverted dropout (tw_dropout), a composite of engine ops: the mask is drawn
 * from the generator and the result is x * keep / (1 - rate), so the tape
 * differentiates it through tw_mul and tw_div_scalar with no rule of its own
 * (the gradient is keep / (1 - rate), the same mask scaling). */
#include <math.h>

#include "internal.h"

tw_tensor *tw_dropout(tw_tensor *x, double rate, tw_rng *rng)
{
    static const char op[] = "dropout";
    if (tw__check_inputs(op, 1, &x) < 0)
        return NULL;
    if (!(rate >= 0.0 && rate < 1.0)) {
        tw_error_set("%s: rate %g is outside [0, 1)", op, rate);
        return NULL;
    }
    if (!rng) {
        tw_error_set("%s: rng is NULL", op);
        return NULL;
    }
    if (!tw_dtype_is_float(x->dtype)) {
        tw_error_set("%s: dtype %s is not a float type", op, tw_dtype_name(x->dtype));
        return NULL;
    }
    if (rate == 0.0)
        return tw__track(tw_tensor_ref(x));

    tw_scope_begin();
    /* keep each element where a uniform draw in [0, 1) is at least rate:
     * probability 1 - rate */
    tw_tensor *mask = tw_random_uniform(rng, x->dtype, x->ndim, x->shape, 0.0, 1.0);
    tw_tensor *keep = tw_greater_equal(mask, tw_scalar(rate));
    tw_tensor *y = tw_div_scalar(tw_mul(x, tw_cast(keep, x->dtype)), 1.0 - rate);
    return tw__scope_return(y);
}
