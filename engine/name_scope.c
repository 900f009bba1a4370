/* Name scopes (tw/function.h): a per-thread path of names, "model/layer",
 * that traced graph nodes carry. Layers push their name around every call,
 * so a push is kept cheap: the path is one buffer, a push appends to it and
 * remembers where to cut it back on pop. Past the buffer or depth limits the
 * names are dropped (the pairs still match up). */
#include <string.h>

#include "internal.h"
#include "tw/function.h"

#define PATH_MAX_BYTES 1024
#define MAX_DEPTH 128

typedef struct {
    char path[PATH_MAX_BYTES];
    size_t length;
    size_t cut[MAX_DEPTH]; /* length of the path before each push */
    int depth;
} scope_path;

static _Thread_local scope_path scopes;

void tw_name_scope_push(const char *name)
{
    int d = scopes.depth++;
    if (d >= MAX_DEPTH)
        return;
    scopes.cut[d] = scopes.length;
    size_t room = PATH_MAX_BYTES - 1 - scopes.length;
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n + 1 > room)
        return;
    char *end = scopes.path + scopes.length;
    if (scopes.length > 0)
        *end++ = '/';
    memcpy(end, name, n);
    end[n] = '\0';
    scopes.length = (size_t)(end + n - scopes.path);
}

void tw_name_scope_pop(void)
{
    if (scopes.depth == 0)
        return;
    int d = --scopes.depth;
    if (d >= MAX_DEPTH)
        return;
    scopes.length = scopes.cut[d];
    scopes.path[scopes.length] = '\0';
}

const char *tw_name_scope_current(void)
{
    return scopes.path;
}
