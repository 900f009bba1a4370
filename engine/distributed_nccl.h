/* The NCCL plugin (libtw-nccl.so, engine/distributed_nccl.c): gradient
 * averaging for tensors on CUDA devices, as llm.c does it: rank 0 makes the
 * NCCL id, MPI broadcasts it (engine/distributed_mpi.c, which opens this
 * plugin the first time a data-parallel optimizer is handed a gradient on
 * a CUDA device), every rank joins the communicator on its device, and each
 * gradient is averaged with ncclAllReduce(..., ncclAvg, ...) on a stream of
 * the plugin's own. Built when meson finds NCCL, MPI and the CUDA runtime;
 * a separate library so that the engine runs without the driver. No MPI
 * and no engine symbols in here. Not installed. */
#ifndef TW_DISTRIBUTED_NCCL_H
#define TW_DISTRIBUTED_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include "tw/tensor.h"

#define TW_NCCL_PLUGIN_ABI 1
#define TW_NCCL_PLUGIN_LIBRARY "libtw-nccl.so"
#define TW_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

/* Each function returns 0, or -1 with the message in error(). */
typedef struct {
    int abi;
    /* Rank 0: a new communicator's id, TW_NCCL_ID_BYTES. */
    int (*unique_id)(void *id);
    /* Every rank, collectively: join the communicator on CUDA device
     * ordinal device. */
    int (*init)(const void *id, int nranks, int rank, int device);
    /* In place, on device memory: buf becomes the mean over the ranks of
     * count elements (float32 or float64), queued on the plugin's stream. */
    int (*allreduce_mean)(void *buf, int64_t count, tw_dtype dtype);
    /* Returns when every queued allreduce has finished. */
    int (*wait)(void);
    void (*finalize)(void);
    const char *(*error)(void);
} tw_nccl_plugin;

/* The plugin's one exported symbol. */
const tw_nccl_plugin *tw_nccl_plugin_get(void);

#endif
