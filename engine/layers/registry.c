/* The table of layer classes: the built-in ones (TW_BUILTIN_LAYER_CLASSES in
 * layer_internal.h, one tw_layer_class_<Name> per file) and those programs
 * register. Lookups are by Keras' class_name. */
#include <pthread.h>
#include <string.h>

#include "layer_internal.h"

#define DECLARE(name) extern const tw_layer_class tw_layer_class_##name;
TW_BUILTIN_LAYER_CLASSES(DECLARE)
#undef DECLARE

#define MAX_CLASSES 128
static const tw_layer_class *classes[MAX_CLASSES];
static int nclasses;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void register_builtins(void)
{
#define ADD(name) classes[nclasses++] = &tw_layer_class_##name;
    TW_BUILTIN_LAYER_CLASSES(ADD)
#undef ADD
}

int tw_layer_class_register(const tw_layer_class *klass)
{
    pthread_once(&once, register_builtins);
    if (!klass || !klass->name || !(klass->infer || klass->infer_n) || !(klass->call || klass->call_n))
        return tw_error_set("layer class: a class needs a name, infer (or infer_n) and call (or call_n)");
    pthread_mutex_lock(&lock);
    int rc = 0;
    for (int i = 0; i < nclasses; i++)
        if (!strcmp(classes[i]->name, klass->name))
            rc = tw_error_set("layer class: \"%s\" is already registered", klass->name);
    if (!rc && nclasses == MAX_CLASSES)
        rc = tw_error_set("layer class: the table is full (%d classes)", MAX_CLASSES);
    if (!rc)
        classes[nclasses++] = klass;
    pthread_mutex_unlock(&lock);
    return rc;
}

const tw_layer_class *tw_layer_class_find(const char *name)
{
    pthread_once(&once, register_builtins);
    for (int i = 0; i < nclasses; i++)
        if (!strcmp(classes[i]->name, name))
            return classes[i];
    tw_error_set("unknown layer class \"%s\"", name);
    return NULL;
}

int tw_layer_class_count(void)
{
    pthread_once(&once, register_builtins);
    return nclasses;
}

const tw_layer_class *tw_layer_class_at(int index)
{
    pthread_once(&once, register_builtins);
    return index >= 0 && index < nclasses ? classes[index] : NULL;
}
