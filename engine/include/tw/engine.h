/* Tensor Workbench — the eager engine. Link with `pkg-config --libs tw-engine`. */
#ifndef TW_ENGINE_H
#define TW_ENGINE_H

#include "error.h"
#include "tensor.h"
#include "ops.h"
#include "random.h"
#include "tape.h"
#include "function.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Threads for the ops this thread runs (kernels and BLAS); n <= 0: one
 * per core. Per thread: a training worker can use fewer than the UI. */
void tw_set_num_threads(int n);
int tw_num_threads(void);

/* "0.1.0" */
const char *tw_version(void);
/* The BLAS in use and the core type it runs on, e.g. "OpenBLAS 0.3.21 SkylakeX". */
const char *tw_blas_info(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
