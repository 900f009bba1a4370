/* Tensor Workbench — the error model.
 *
 * Nothing a user can cause aborts the process. A call that fails:
 *   - returns NULL (functions returning a tensor or an object) or -1
 *     (functions returning int; 0 means success);
 *   - leaves a message on the calling thread that names the operation and the
 *     offending shapes, dtypes or values, for example
 *       "matmul: inner dimensions differ: (2, 3) x (4, 5)".
 *
 * Failures chain: an op given a NULL input (because an earlier op failed)
 * returns NULL and keeps the earlier message, so a whole expression can be
 * checked once at the end:
 *
 *     tw_tensor *y = tw_add(tw_matmul(a, b), c);
 *     if (!y) fprintf(stderr, "%s\n", tw_last_error());
 *
 * The message stays until the next failure or tw_error_clear(). Internal
 * invariants (bugs in the engine itself) are checked with assert().
 */
#ifndef TW_ERROR_H
#define TW_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The last failure's message on this thread, or "" when there is none. */
const char *tw_last_error(void);

/* Forget the last failure on this thread. */
void tw_error_clear(void);

/* Whether a failure message is pending on this thread. */
int tw_error_pending(void);

/* Set the thread's failure message (printf-style). Layers built on the engine
 * use it so their failures read the same way. Always returns -1. */
int tw_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
