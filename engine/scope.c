/* Scopes: a per-thread stack of tensors to release together (see the
 * ownership notes in tw/tensor.h). One growing array holds the tensors of
 * every open scope; a second holds where each scope starts. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

typedef struct {
    tw_tensor **items;
    size_t count, capacity;
    size_t *marks;
    size_t depth, marks_capacity;
} scope_stack;

static TW_HOT_THREAD_LOCAL scope_stack scopes;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* The arrays live as long as the thread, so a scope per training step
 * costs no allocation; they are freed when the thread exits. */
static void free_arrays(void *unused)
{
    while (scopes.depth > 0)
        tw_scope_end();
    free(scopes.items);
    free(scopes.marks);
    scopes = (scope_stack){0};
}

static void create_exit_key(void)
{
    pthread_key_create(&exit_key, free_arrays);
}

static bool grow(void **array, size_t *capacity, size_t need, size_t item)
{
    if (need <= *capacity)
        return true;
    size_t cap = *capacity ? *capacity * 2 : 256;
    while (cap < need)
        cap *= 2;
    void *p = realloc(*array, cap * item);
    if (!p)
        return false;
    *array = p;
    *capacity = cap;
    return true;
}

void tw_scope_begin(void)
{
    if (!scopes.marks) {
        pthread_once(&exit_key_once, create_exit_key);
        pthread_setspecific(exit_key, &scopes);
    }
    if (!grow((void **)&scopes.marks, &scopes.marks_capacity, scopes.depth + 1, sizeof(size_t)))
        abort(); /* cannot even record a scope: nothing sensible remains */
    scopes.marks[scopes.depth++] = scopes.count;
}

void tw_scope_end(void)
{
    if (scopes.depth == 0)
        return;
    size_t start = scopes.marks[--scopes.depth];
    /* Release newest first: results die before the inputs they came from. */
    while (scopes.count > start)
        tw_tensor_unref(scopes.items[--scopes.count]);
}

tw_tensor *tw__track(tw_tensor *t)
{
    if (!t || scopes.depth == 0)
        return t;
    if (!grow((void **)&scopes.items, &scopes.capacity, scopes.count + 1, sizeof(tw_tensor *))) {
        tw_tensor_unref(t);
        tw_error_set("out of memory recording a tensor in its scope");
        return NULL;
    }
    scopes.items[scopes.count++] = t;
    return t;
}

tw_tensor *tw__scope_return(tw_tensor *t)
{
    tw_tensor_ref(t);
    tw_scope_end();
    return tw__track(t);
}

static void __attribute__((destructor)) free_main_thread_arrays(void)
{
    free(scopes.items);
    free(scopes.marks);
    scopes = (scope_stack){0};
}
