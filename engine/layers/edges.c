/* Keras' padding and cropping amounts (see edges.h). */
#include "edges.h"

int tw__edges(const tw_layer *self, int param, int rank, int64_t edges[2][2])
{
    const tw_param_value *v = tw_layer_param(self, param);
    if (v->n != 1 && v->n != rank && v->n != 2 * rank) {
        if (rank == 1)
            return TW_LAYER_ERROR(self, "%s: expected 1 or 2 integers (both ends, or start and end), got %d",
                                  self->klass->params[param].key, v->n);
        return TW_LAYER_ERROR(self, "%s: expected 1, 2 or 4 integers (all sides; height and width; or top, bottom, "
                                    "left, right), got %d",
                              self->klass->params[param].key, v->n);
    }
    for (int i = 0; i < rank; i++)
        for (int end = 0; end < 2; end++)
            edges[i][end] = v->n == 1 ? v->ints[0] : v->n == rank ? v->ints[i] : v->ints[2 * i + end];
    return 0;
}

int tw__edges_check_input(const tw_layer *self, int rank, const tw_shape *input)
{
    static const char *const layouts[] = {"", "(batch, steps, channels)", "(batch, height, width, channels)"};
    char in[128];
    if (input->ndim != rank + 2)
        return TW_LAYER_ERROR(self, "expected input of rank %d %s, got %s", rank + 2, layouts[rank],
                              tw_shape_format(input, in, sizeof in));
    return 0;
}
