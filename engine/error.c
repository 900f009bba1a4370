/* The thread's last failure message (see tw/error.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char error_message[1024];
static TW_HOT_THREAD_LOCAL int error_is_pending;
static TW_HOT_THREAD_LOCAL unsigned error_count;

const char *tw_last_error(void)
{
    return error_message;
}

void tw_error_clear(void)
{
    error_message[0] = '\0';
    error_is_pending = 0;
}

int tw_error_pending(void)
{
    return error_is_pending;
}

int tw_error_set(const char *fmt, ...)
{
    /* Format into a copy first: callers often wrap the current message
     * ("fit: epoch 2: %s", tw_last_error()), which is this very buffer. */
    char formatted[sizeof error_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(formatted, sizeof formatted, fmt, ap);
    va_end(ap);
    memcpy(error_message, formatted, sizeof error_message);
    error_is_pending = 1;
    error_count++;
    return -1;
}

int tw__check_inputs(const char *op, int n, tw_tensor *const *inputs)
{
    for (int i = 0; i < n; i++) {
        if (inputs[i])
            continue;
        /* Keep the message of the op that produced the NULL. */
        if (!error_is_pending)
            tw_error_set("%s: input %d is NULL", op, i);
        return -1;
    }
    return 0;
}

int tw__normalize_axis(const char *op, int axis, int ndim, int *out)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim)
        return tw_error_set("%s: axis %d is out of range for a tensor of rank %d", op, axis, ndim);
    *out = a;
    return 0;
}

int tw__shape_error(const char *op, const char *what, const tw_tensor *t)
{
    char buf[160];
    return tw_error_set("%s: %s %s", op, what, tw_shape_str(t->ndim, t->shape, buf, sizeof buf));
}

unsigned tw__error_count(void)
{
    return error_count;
}
