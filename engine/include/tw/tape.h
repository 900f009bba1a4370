/* Tensor Workbench — gradient tapes (TensorFlow 2's tf.GradientTape).
 *
 * A tape records the ops run on its thread between tw_tape_begin and
 * tw_tape_end whose inputs it watches: trainable variables automatically,
 * other tensors after tw_tape_watch, and every result computed from watched
 * tensors. Tapes nest; the ops a gradient computation runs are recorded on
 * the tapes still active, so gradients of gradients work to any order.
 *
 *     tw_tape *tape = tw_tape_begin(false);
 *     tw_tensor *loss = ...;                 // uses variables W and B
 *     tw_tape_end(tape);
 *     tw_tensor *grads[2];
 *     tw_tape_gradient(tape, loss, TW_TENSORS(W, B), grads);
 *     tw_tape_free(tape);
 */
#ifndef TW_TAPE_H
#define TW_TAPE_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_tape tw_tape;

/* Start recording on this thread. A persistent tape allows many gradient
 * calls; a plain one refuses a second. */
tw_tape *tw_tape_begin(bool persistent);
/* Stop recording. Tapes end in the reverse order they began. */
int tw_tape_end(tw_tape *tape);
int tw_tape_watch(tw_tape *tape, tw_tensor *t);
/* One gradient per source into grads (new references, see tensor.h):
 * NULL where the target does not depend on the source (TensorFlow's None).
 * A non-scalar target is summed first. */
int tw_tape_gradient(tw_tape *tape, tw_tensor *target, int nsources, tw_tensor *const *sources, tw_tensor **grads);
/* Like tw_tape_gradient with an explicit upstream gradient (same shape as target). */
int tw_tape_gradient_ex(tw_tape *tape, tw_tensor *target, tw_tensor *output_gradient, int nsources,
                        tw_tensor *const *sources, tw_tensor **grads);
/* Like tw_tape_gradient, handing each source's gradient to ready as soon
 * as the backward walk has finished it (past the first op that read the
 * source; sources no op read come last, with a NULL gradient), while the
 * rest of the backward pass still runs: how a data-parallel optimizer
 * (tw/distributed.h) starts averaging the last layers' gradients early.
 * The gradient is borrowed (grads[index] keeps it). */
typedef void (*tw_gradient_ready_fn)(int index, tw_tensor *source, tw_tensor *gradient, void *user_data);
int tw_tape_gradient_hooked(tw_tape *tape, tw_tensor *target, int nsources, tw_tensor *const *sources,
                            tw_tensor **grads, tw_gradient_ready_fn ready, void *user_data);
/* Ends the tape if still recording, then frees it and what it recorded. */
void tw_tape_free(tw_tape *tape);

/* Run code without recording on any tape of this thread (nests). */
void tw_tape_pause(void);
void tw_tape_resume(void);

/* ---- custom gradients (tf.custom_gradient) -------------------------------
 * forward computes the output from the inputs; nothing it does is recorded.
 * It may keep tensors for the backward pass with tw_custom_save. backward
 * receives the output's gradient and fills one gradient per input (NULL for
 * none), using engine ops so it is itself differentiable. */
typedef struct tw_custom_ctx tw_custom_ctx;
typedef tw_tensor *(*tw_custom_forward_fn)(tw_custom_ctx *ctx, tw_tensor *const *inputs, void *user_data);
typedef int (*tw_custom_backward_fn)(tw_custom_ctx *ctx, tw_tensor *grad_output, tw_tensor **grad_inputs,
                                     void *user_data);
void tw_custom_save(tw_custom_ctx *ctx, tw_tensor *t);
tw_tensor *tw_custom_saved(tw_custom_ctx *ctx, int i);
int tw_custom_ninputs(tw_custom_ctx *ctx);
tw_tensor *tw_custom_input(tw_custom_ctx *ctx, int i);
tw_tensor *tw_custom_gradient(int ninputs, tw_tensor *const *inputs, tw_custom_forward_fn forward,
                              tw_custom_backward_fn backward, void *user_data);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
