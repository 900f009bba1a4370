/* The kernels' element types. Numbered as the engine's tw_dtype, so the
 * engine passes its dtypes as they are (engine/internal.h checks that the
 * numbers agree); kernels include nothing of the engine. */
#ifndef TWK_DTYPE_H
#define TWK_DTYPE_H

#include <stddef.h>

/* An int, not an enum: the engine's tw_dtype converts to it without a cast. */
typedef int twk_dtype;
enum { TWK_FLOAT32, TWK_FLOAT64, TWK_INT32, TWK_INT64, TWK_UINT8, TWK_BOOL, TWK_DTYPE_COUNT };

/* The most dimensions a kernel walks (as the engine's TW_MAX_DIMS). */
#define TWK_MAX_DIMS 8

static inline size_t twk_dtype_size(twk_dtype dtype)
{
    static const unsigned char size[TWK_DTYPE_COUNT] = {4, 8, 4, 8, 1, 1};
    return (unsigned)dtype < TWK_DTYPE_COUNT ? size[dtype] : 0;
}

#endif
