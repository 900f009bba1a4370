/* NumPy broadcasting: result shapes, read strides, and undoing a broadcast
 * in the backward pass. */
#include <string.h>

#include "internal.h"

int tw__broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int d = 0; d < n; d++) {
        int ia = d - (n - na), ib = d - (n - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[160], sb[160];
            return tw_error_set("%s: shapes %s and %s cannot be broadcast together", op,
                                tw_shape_str(na, a, sa, sizeof sa), tw_shape_str(nb, b, sb, sizeof sb));
        }
        out[d] = da == 1 ? db : da;
    }
    *nout = n;
    return 0;
}

void tw__broadcast_strides(const tw_tensor *t, int ndim, const int64_t *shape, int64_t *strides)
{
    for (int d = 0; d < ndim; d++) {
        int it = d - (ndim - t->ndim);
        strides[d] = (it < 0 || t->shape[it] == 1) && shape[d] != 1 ? 0 : (it < 0 ? 0 : t->strides[it]);
    }
}

tw_tensor *tw__sum_to_shape(tw_tensor *g, int ndim, const int64_t *shape)
{
    if (!g)
        return NULL;
    if (g->ndim == ndim && memcmp(g->shape, shape, sizeof(int64_t) * (size_t)ndim) == 0)
        return g;
    int axes[TW_MAX_DIMS], naxes = 0;
    int lead = g->ndim - ndim;
    for (int d = 0; d < g->ndim; d++)
        if (d < lead || (shape[d - lead] == 1 && g->shape[d] != 1))
            axes[naxes++] = d;
    tw_scope_begin();
    tw_tensor *s = naxes ? tw_sum(g, naxes, axes, true) : g;
    return tw__scope_return(tw_reshape(s, ndim, shape));
}
