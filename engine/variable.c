/* Variables: tensors with a name, a trainable flag and their own storage,
 * updated in place. Every in-place write bumps the storage version, so a
 * tape that saw the old value refuses to compute a stale gradient. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "backend_cpu/cpu_ops.h"

tw_tensor *tw_variable(tw_tensor *initial_value, const char *name, bool trainable)
{
    if (tw__check_inputs("variable", 1, &initial_value) < 0)
        return NULL;
    tw_tensor *v = tw__tensor_new(initial_value->dtype, initial_value->ndim, initial_value->shape,
                                  initial_value->storage->device);
    if (!v)
        return NULL;
    tw__copy_into(v, initial_value);
    v->variable = calloc(1, sizeof *v->variable);
    if (v->variable)
        v->variable->name = strdup(name ? name : "Variable");
    if (!v->variable || !v->variable->name) {
        tw_tensor_unref(v);
        tw_error_set("variable: out of memory");
        return NULL;
    }
    v->variable->trainable = trainable;
    return tw__track(v);
}

bool tw_tensor_is_variable(const tw_tensor *t)
{
    return t && t->variable;
}

const char *tw_variable_name(const tw_tensor *v)
{
    return v && v->variable ? v->variable->name : NULL;
}

bool tw_variable_trainable(const tw_tensor *v)
{
    return v && v->variable && v->variable->trainable;
}

int tw_variable_set_trainable(tw_tensor *v, bool trainable)
{
    if (!tw_tensor_is_variable(v))
        return tw_error_set("set_trainable: the tensor is not a variable");
    v->variable->trainable = trainable;
    return 0;
}

/* Check that value can be written into v (dtype, broadcastable shape). */
static int check_update(const char *op, tw_tensor *v, tw_tensor *value)
{
    if (tw__check_inputs(op, 2, (tw_tensor *const[]){v, value}) < 0)
        return -1;
    if (!v->variable)
        return tw_error_set("%s: the target is not a variable (create it with tw_variable)", op);
    if (value->dtype != v->dtype && !value->weak)
        return tw_error_set("%s: variable '%s' is %s but the value is %s", op, v->variable->name,
                            tw_dtype_name(v->dtype), tw_dtype_name(value->dtype));
    int nd;
    int64_t shape[TW_MAX_DIMS];
    if (tw__broadcast_shapes(op, v->ndim, v->shape, value->ndim, value->shape, &nd, shape) < 0)
        return -1;
    if (nd != v->ndim || memcmp(shape, v->shape, sizeof(int64_t) * (size_t)nd) != 0) {
        char a[160], b[160];
        return tw_error_set("%s: value of shape %s does not fit variable '%s' of shape %s", op,
                            tw_shape_str(value->ndim, value->shape, a, sizeof a), v->variable->name,
                            tw_shape_str(v->ndim, v->shape, b, sizeof b));
    }
    return 0;
}

/* The assignments are ops (stateful, no outputs, never on tapes), so a
 * traced function records them as graph nodes that run with the graph. */
static int assign_infer(const tw_op_call *call, tw_desc *outs)
{
    return check_update(call->op->name, call->inputs[0], call->inputs[1]);
}

static int update(const tw_op_call *call, int kind)
{
    tw_tensor *v = call->inputs[0], *value = call->inputs[1];
    tw_tensor *converted = NULL;
    if (value->dtype != v->dtype) { /* a weak scalar */
        converted = tw__tensor_new(v->dtype, 0, NULL, v->storage->device);
        if (!converted)
            return -1;
        twk_store(v->dtype, tw__data(converted), twk_load(value->dtype, tw__data(value)));
        value = converted;
    }
    int64_t strides[TW_MAX_DIMS];
    tw__broadcast_strides(value, v->ndim, v->shape, strides);
    if (kind == 0)
        twk_copy(tw_dtype_size(v->dtype), v->ndim, v->shape, tw__data(v), v->strides, tw__data(value), strides);
    else
        twk_binary(kind > 0 ? TWK_BINARY_add : TWK_BINARY_sub, v->dtype, v->ndim, v->shape, tw__data(v), v->strides, tw__data(v),
                   v->strides, tw__data(value), strides);
    atomic_fetch_add(&v->storage->version, 1);
    tw_tensor_unref(converted);
    return 0;
}

/* The CPU backend's kernels of the assignments (backend_cpu/cpu_ops.h):
 * kept beside the variables they write. */
int tw__cpu_assign(const tw_op_call *call, tw_tensor *const *outs) { return update(call, 0); }
int tw__cpu_assign_add(const tw_op_call *call, tw_tensor *const *outs) { return update(call, 1); }
int tw__cpu_assign_sub(const tw_op_call *call, tw_tensor *const *outs) { return update(call, -1); }

/* A value from another device is copied to the variable's first (loading a
 * checkpoint read on the CPU into variables on a device); not while
 * tracing, where dispatch refuses the mix as for any op. */
static int assign_on_device(const tw_op_def *op, tw_tensor *v, tw_tensor *value)
{
    tw_tensor *moved = NULL, *none[1];
    if (v && value && !tw__tracer && (v->storage->device.kind != value->storage->device.kind ||
                                      v->storage->device.index != value->storage->device.index)) {
        moved = tw__tensor_new(value->dtype, value->ndim, value->shape, v->storage->device);
        if (!moved || tw__copy_between(moved, value) < 0) {
            tw_tensor_unref(moved);
            return -1;
        }
        moved->weak = value->weak;
        value = moved;
    }
    int rc = tw_dispatch(op, 2, (tw_tensor *const[]){v, value}, NULL, NULL, none);
    tw_tensor_unref(moved);
    return rc;
}

#define ASSIGN_OP(NAME)                                                                                   \
    const tw_op_def tw_op_##NAME = {                                                                     \
        .name = #NAME, .id = TW_OP_ID_##NAME, .noutputs = 0, .ninputs = 2,                              \
        .flags = TW_OP_NOT_DIFFERENTIABLE | TW_OP_STATEFUL, .infer = assign_infer,                       \
    };                                                                                                   \
    int tw_##NAME(tw_tensor *v, tw_tensor *value) { return assign_on_device(&tw_op_##NAME, v, value); }

ASSIGN_OP(assign)
ASSIGN_OP(assign_add)
ASSIGN_OP(assign_sub)
