/* Every primitive op, by name: graphs and tests look ops up here. The list
 * and the ops' numbers are op_ids.h's; registry[id - 1] is op number id. */
#include <string.h>

#include "internal.h"

#define DECLARE(name, ...) extern const tw_op_def tw_op_##name;
TWK_UNARY_OPS(DECLARE)
TWK_BINARY_OPS(DECLARE)
TW_OPS(DECLARE)
TW_VIEW_OPS(DECLARE)

#define ENTRY(name, ...) &tw_op_##name,
static const tw_op_def *const registry[] = {TWK_BINARY_OPS(ENTRY) TWK_UNARY_OPS(ENTRY) TW_OPS(ENTRY) TW_VIEW_OPS(ENTRY)
                                            NULL};

const tw_op_def *const *tw_op_registry(void)
{
    return registry;
}

const tw_op_def *tw_op_lookup(const char *name)
{
    for (const tw_op_def *const *op = registry; *op; op++)
        if (strcmp((*op)->name, name) == 0)
            return *op;
    return NULL;
}
