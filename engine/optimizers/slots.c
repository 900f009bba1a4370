/* Optimizer slots (Adam's m and v, momentum buffers, ...): one set per
 * variable, created on its first update (or by tw_optimizer_build) and found
 * by the variable's id afterwards, so steady-state updates allocate nothing.
 * Slots are non-trainable variables named "<variable>/<slot>", so
 * checkpoints can restore them with tw_assign. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer_internal.h"

int tw__optimizer_check_variable(const tw_optimizer *opt, const tw_tensor *v)
{
    if (!v)
        return tw_error_set("%s: a variable is NULL", opt->name);
    if (!v->variable)
        return tw_error_set("%s: optimizers update variables (tw_variable), got a plain tensor", opt->name);
    if (v->dtype != TW_FLOAT32 && v->dtype != TW_FLOAT64)
        return tw_error_set("%s: variable '%s' is %s; optimizers update float32 and float64 variables", opt->name,
                            v->variable->name, tw_dtype_name(v->dtype));
    return 0;
}

static tw_tensor *new_slot(const tw_optimizer *opt, tw_tensor *variable, int k)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", variable->variable->name, opt->slot_names[k]);
    tw_scope_begin();
    tw_tensor *initial = tw_full(opt->slot_initial_values[k], variable->dtype, variable->ndim, variable->shape);
    tw_device device = variable->storage->device; /* slots live with their variable */
    if (initial && (initial->storage->device.kind != device.kind || initial->storage->device.index != device.index))
        initial = tw_tensor_to(initial, device);
    tw_tensor *slot = tw_tensor_ref(tw_variable(initial, name, false));
    tw_scope_end();
    return slot;
}

static void release_set(tw_slot_set *set)
{
    for (int k = 0; k < TW_OPT_MAX_SLOTS; k++)
        tw_tensor_unref(set->slots[k]);
    tw_tensor_unref(set->variable);
}

static tw_slot_set *create_set(tw_optimizer *opt, tw_tensor *variable)
{
    if (opt->nsets == opt->sets_capacity) {
        int capacity = opt->sets_capacity ? 2 * opt->sets_capacity : 16;
        tw_slot_set *sets = realloc(opt->sets, sizeof *sets * (size_t)capacity);
        if (!sets) {
            tw_error_set("%s: out of memory creating the slots of variable '%s'", opt->name, variable->variable->name);
            return NULL;
        }
        opt->sets = sets;
        opt->sets_capacity = capacity;
    }
    tw_slot_set set = {.variable = tw_tensor_ref(variable)};
    for (int k = 0; k < opt->nslots; k++) {
        if (!(set.slots[k] = new_slot(opt, variable, k))) {
            release_set(&set);
            return NULL;
        }
    }
    if (!tw_id_map_put(&opt->index, variable->id, (void *)(intptr_t)(opt->nsets + 1))) {
        release_set(&set);
        tw_error_set("%s: out of memory creating the slots of variable '%s'", opt->name, variable->variable->name);
        return NULL;
    }
    opt->sets[opt->nsets] = set;
    return &opt->sets[opt->nsets++];
}

tw_slot_set *tw__optimizer_slot_set(tw_optimizer *opt, tw_tensor *variable)
{
    void *found;
    if (tw_id_map_get(&opt->index, variable->id, &found))
        return &opt->sets[(intptr_t)found - 1];
    return create_set(opt, variable);
}

void tw__optimizer_free_slots(tw_optimizer *opt)
{
    for (int i = 0; i < opt->nsets; i++)
        release_set(&opt->sets[i]);
    free(opt->sets);
    tw_id_map_clear(&opt->index);
}

int tw_optimizer_build(tw_optimizer *opt, int n, tw_tensor *const *variables)
{
    if (!opt)
        return tw_error_set("optimizer: build on a NULL optimizer");
    for (int i = 0; i < n; i++)
        if (tw__optimizer_check_variable(opt, variables[i]) < 0 || !tw__optimizer_slot_set(opt, variables[i]))
            return -1;
    return 0;
}

int tw_optimizer_foreach_slot(const tw_optimizer *opt, tw_slot_fn fn, void *user_data)
{
    for (int i = 0; opt && i < opt->nsets; i++) {
        for (int k = 0; k < opt->nslots; k++) {
            int rc = fn(opt->sets[i].variable, opt->slot_names[k], opt->sets[i].slots[k], user_data);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Index of a slot by name; "rms" is the legacy Keras name of RMSprop's "velocity". */
static int slot_index(const tw_optimizer *opt, const char *name)
{
    if (name && opt->config.kind == TW_OPTIMIZER_RMSPROP && strcmp(name, "rms") == 0)
        name = "velocity";
    for (int k = 0; name && k < opt->nslots; k++)
        if (strcmp(name, opt->slot_names[k]) == 0)
            return k;
    return -1;
}

static int unknown_slot(const tw_optimizer *opt, const char *name)
{
    char list[128] = "";
    for (int k = 0; k < opt->nslots; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", opt->slot_names[k]);
    return tw_error_set("%s: no slot named '%s' (%s%s)", opt->name, name ? name : "(null)",
                        opt->nslots ? "its slots: " : "this configuration has no slots", list);
}

tw_tensor *tw_optimizer_slot(tw_optimizer *opt, tw_tensor *variable, const char *slot_name)
{
    if (!opt) {
        tw_error_set("optimizer: slot of a NULL optimizer");
        return NULL;
    }
    int k = slot_index(opt, slot_name);
    if (k < 0) {
        unknown_slot(opt, slot_name);
        return NULL;
    }
    if (tw__optimizer_check_variable(opt, variable) < 0)
        return NULL;
    tw_slot_set *set = tw__optimizer_slot_set(opt, variable);
    return set ? tw__track(tw_tensor_ref(set->slots[k])) : NULL;
}
