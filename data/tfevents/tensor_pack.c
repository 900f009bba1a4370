/* A tensor's values, read as doubles (our reader's and the run store's
 * form), packed back into their dtype for the store or an event file. */
#include <string.h>

#include "tfevents_internal.h"

size_t tw__tb_dtype_width(const char *dtype)
{
    return !strcmp(dtype, "float64") || !strcmp(dtype, "int64") ? 8 : 4;
}

void tw__tb_pack_numbers(const char *dtype, const double *values, int64_t n, void *out)
{
    for (int64_t i = 0; i < n; i++) {
        if (!strcmp(dtype, "float32"))
            ((float *)out)[i] = (float)values[i];
        else if (!strcmp(dtype, "int32"))
            ((int32_t *)out)[i] = (int32_t)values[i];
        else if (!strcmp(dtype, "int64"))
            ((int64_t *)out)[i] = (int64_t)values[i];
        else
            ((double *)out)[i] = values[i];
    }
}
