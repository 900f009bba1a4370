/* Tensor Workbench — data-parallel training over MPI (Horovod's model).
 *
 * Every process (a "rank", launched by `mpirun -np N`) holds the whole
 * model and trains on its own share of each batch; the gradients are
 * averaged across ranks before every update, so all ranks apply the same
 * update and their weights stay equal.
 *
 *     tw_distributed_init(&argc, &argv);
 *     opt = tw_distributed_optimizer(opt, 0);   // averages before each update
 *     ... train as usual, each rank on its own shard of the data ...
 *     tw_distributed_finalize();
 *
 * The distributed optimizer gathers gradients into fused buckets (several
 * gradients in one buffer, Horovod's tensor fusion) and starts a
 * non-blocking allreduce as soon as a bucket is full. Handed the gradients
 * as the backward pass finishes them (tw_tape_gradient_hooked with
 * tw_distributed_gradient_ready), the last layers' buckets travel while
 * the first layers' gradients are still being computed; handed them all at
 * apply_gradients, the buckets go out in reverse order there. Before its
 * first update it broadcasts rank 0's variables, so every rank starts from
 * the same weights. Traced updates (tw/function.h) are refused.
 *
 * Without mpirun (no MPI launcher in the environment), or in a build
 * without MPI, there is one rank: size 1, rank 0, and the calls below
 * return their input's values. tw_distributed_available says which.
 *
 * A rank that dies makes mpirun stop the others (SIGTERM, then SIGKILL
 * after odls_base_sigkill_timeout seconds); a rank waiting for the dead one
 * returns -1 from the call it is in, with a message naming the rank that is
 * gone when it ran on the same machine. Nothing waits for ever. */
#ifndef TW_DISTRIBUTED_H
#define TW_DISTRIBUTED_H

#include <stdbool.h>
#include <stddef.h>

#include "optimizers.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Whether this build has MPI. */
bool tw_distributed_available(void);
/* MPI_Init when launched by mpirun (else one rank). 0, or -1 with a message.
 * Calling it again does nothing. */
int tw_distributed_init(int *argc, char ***argv);
/* MPI_Finalize (skipped after a failure, where it could wait for a dead rank). */
void tw_distributed_finalize(void);
int tw_distributed_rank(void);
int tw_distributed_size(void);
/* This rank's index among the ranks of its machine: the GPU it takes when
 * each rank has one (cuda:LOCAL_RANK). 0 with one rank. */
int tw_distributed_local_rank(void);
/* Whether an MPI call failed (a rank died, mpirun stopped this one): the
 * process should record the failure and exit without further MPI calls. */
bool tw_distributed_failed(void);
/* After a failure: whether rank 0 is gone and this rank, the lowest one
 * still alive on rank 0's machine, should record the failure in its place
 * (rank 0 alone writes the run). False on rank 0, and where rank 0 ran on
 * another machine: its death cannot be seen from here. */
bool tw_distributed_replaces_rank0(void);

/* The average of t over the ranks (float32 or float64; any shape, every
 * rank the same): a new tensor, or NULL with a message. */
tw_tensor *tw_allreduce_mean(tw_tensor *t);
/* values[0..n) replaced by their average over the ranks, in place. */
int tw_allreduce_mean_values(double *values, int n);
/* Every rank's n values into all (size * n, rank-major). */
int tw_allgather_values(const double *mine, int n, double *all);
/* Rank 0's values into every rank's variables (assigned in place). */
int tw_broadcast_variables(int n, tw_tensor *const *variables);

/* Make opt data-parallel (returns opt): its eager apply_gradients averages
 * the gradients across ranks first, in buckets of bucket_bytes (0: 64 KiB,
 * right for ranks on one machine; across a network, megabytes); a
 * gradient larger than a bucket fills several. Freed with the optimizer. */
tw_optimizer *tw_distributed_optimizer(tw_optimizer *opt, size_t bucket_bytes);
/* A tw_gradient_ready_fn (tw/tape.h) for tw_tape_gradient_hooked with the
 * optimizer as user_data: starts the gradient's bucket early. Does nothing
 * for an optimizer that is not data-parallel. */
void tw_distributed_gradient_ready(int index, tw_tensor *variable, tw_tensor *gradient, void *optimizer);
/* The last update's milliseconds spent waiting for the allreduce after
 * the backward pass (the communication that did not overlap it); 0 for an
 * optimizer that is not data-parallel. */
double tw_distributed_optimizer_wait_ms(const tw_optimizer *opt);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
