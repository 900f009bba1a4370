/* What the engine's layers use of tw/distributed.h's machinery (not
 * installed): engine/distributed_mpi.c and distributed_none.c define it. */
#ifndef TW_DISTRIBUTED_INTERNAL_H
#define TW_DISTRIBUTED_INTERNAL_H

#include "tw/tensor.h"

/* The mean of t over the ranks, each rank's t weighing count (its examples
 * behind t), as an op on the tapes: its gradient is the same mean of the
 * ranks' gradients (so every rank must take part in the backward pass
 * too). With one rank, t itself. BatchNormalization's synchronised batch
 * statistics (tw_call_context.sync_batch_stats). */
tw_tensor *tw__allreduce_weighted_mean(tw_tensor *t, double count);

#endif
