/* The backends by device kind: registration, the plugins opened at run
 * time, kernel lookup, and copies between devices (see backend.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

extern const tw_backend tw__backend_cpu; /* backend_cpu.c */

static const tw_backend *_Atomic backends[TW_DEVICE_KIND_COUNT];
static char plugin_message[TW_DEVICE_KIND_COUNT][256];
static pthread_once_t plugins_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

int tw_backend_register(const tw_backend *b)
{
    if (!b || b->abi != TW_BACKEND_ABI)
        return tw_error_set("backend_register: backend speaks ABI %d, the engine %d", b ? b->abi : -1,
                            TW_BACKEND_ABI);
    if ((unsigned)b->kind >= TW_DEVICE_KIND_COUNT || !b->name || !b->device_count || !b->copy_from_host ||
        !b->copy_to_host || !b->copy || !b->fill || !b->read_element || !b->synchronize || !b->kernel ||
        (b->kind != TW_DEVICE_CPU && (!b->alloc || !b->free)))
        return tw_error_set("backend_register: backend \"%s\" lacks a required function", b->name ? b->name : "?");
    pthread_mutex_lock(&register_lock);
    const tw_backend *old = backends[b->kind];
    if (!old)
        backends[b->kind] = b;
    pthread_mutex_unlock(&register_lock);
    if (old && old != b)
        return tw_error_set("backend_register: devices of kind \"%s\" are already served by \"%s\"", b->name,
                            old->name);
    return 0;
}

/* The plugin for a kind: its library's file name. */
static const struct {
    tw_device_kind kind;
    const char *library, *env;
} plugins[] = {
    {TW_DEVICE_CUDA, "libtw-cuda.so", "TW_CUDA_PLUGIN"},
};

/* Open the library beside libtw-engine.so first, then by the loader's path. */
static void *open_plugin(const char *library, const char *env)
{
    const char *named = getenv(env);
    if (named && *named)
        return dlopen(named, RTLD_NOW | RTLD_LOCAL);
    Dl_info info;
    if (dladdr((void *)tw_backend_register, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash) {
            char path[4096];
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, library);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    }
    return dlopen(library, RTLD_NOW | RTLD_LOCAL);
}

static void load_plugins(void)
{
    const char *sim = getenv("TW_SIM_DEVICES");
    if (sim && atoi(sim) > 0)
        tw__sim_devices_enable(atoi(sim));
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        char *msg = plugin_message[plugins[i].kind];
        void *h = open_plugin(plugins[i].library, plugins[i].env);
        if (!h) {
            snprintf(msg, sizeof plugin_message[0], "%s not loaded: %s", plugins[i].library, dlerror());
            continue;
        }
        int (*init)(int) = (int (*)(int))dlsym(h, TW_BACKEND_PLUGIN_ENTRY);
        if (!init) {
            snprintf(msg, sizeof plugin_message[0], "%s has no %s", plugins[i].library, TW_BACKEND_PLUGIN_ENTRY);
            dlclose(h);
            continue;
        }
        unsigned errors = tw__error_count();
        if (init(TW_BACKEND_ABI) < 0 || tw__error_count() != errors) {
            snprintf(msg, sizeof plugin_message[0], "%s: %s", plugins[i].library,
                     tw_error_pending() ? tw_last_error() : "its initialisation failed");
            tw_error_clear();
            /* Left open: a plugin may have registered atexit handlers. */
        }
    }
}

const char *tw__plugin_message(tw_device_kind kind)
{
    pthread_once(&plugins_once, load_plugins);
    return (unsigned)kind < TW_DEVICE_KIND_COUNT ? plugin_message[kind] : "";
}

static const tw_backend *backend_of(tw_device_kind kind)
{
    if (kind == TW_DEVICE_CPU)
        return &tw__backend_cpu;
    if ((unsigned)kind >= TW_DEVICE_KIND_COUNT)
        return NULL;
    const tw_backend *b = backends[kind];
    if (!b) {
        pthread_once(&plugins_once, load_plugins);
        b = backends[kind];
    }
    return b;
}

int tw_device_count(tw_device_kind kind)
{
    const tw_backend *b = backend_of(kind);
    return b ? b->device_count() : 0;
}

/* "device cuda:0 is not available (the plugin's reason)" into buf. */
static const char *unavailable(tw_device device, char *buf, size_t size)
{
    char name[32];
    const char *why = (unsigned)device.kind < TW_DEVICE_KIND_COUNT ? plugin_message[device.kind] : "";
    snprintf(buf, size, "device %s is not available%s%s%s", tw_device_name(device, name, sizeof name),
             *why ? " (" : "", why, *why ? ")" : "");
    return buf;
}

const char *tw_device_describe(tw_device device, char *buf, size_t size)
{
    const tw_backend *b = backend_of(device.kind);
    if (!b || device.index < 0 || device.index >= b->device_count())
        unavailable(device, buf, size);
    else if (b->describe)
        b->describe(device.index, buf, size);
    else
        tw_device_name(device, buf, size);
    return buf;
}

const tw_backend *tw__backend(tw_device device, const char *what)
{
    const tw_backend *b = backend_of(device.kind);
    if (b && device.index >= 0 && device.index < b->device_count())
        return b;
    char why[1024];
    tw_error_set("%s: %s", what, unavailable(device, why, sizeof why));
    return NULL;
}

_Atomic(tw_kernel_fn) tw__kernels[TW_DEVICE_KIND_COUNT][TW_OP_COUNT];

tw_kernel_fn tw__kernel_lookup(const tw_op_def *op, tw_device device)
{
    const tw_backend *b = tw__backend(device, op->name);
    tw_kernel_fn k = b && op->id > TW_OP_ID_NONE && op->id < TW_OP_COUNT ? b->kernel(op) : NULL;
    k = tw__op_profile_wrap(op, device, k);
    if (k)
        atomic_store_explicit(&tw__kernels[device.kind][op->id], k, memory_order_relaxed);
    if (b && !k) {
        char name[32];
        tw_error_set("%s: no kernel for device %s", op->name, tw_device_name(device, name, sizeof name));
    }
    return k;
}

int tw__copy_between(tw_tensor *dst, const tw_tensor *src)
{
    tw_device dd = dst->storage->device, sd = src->storage->device;
    size_t item = tw_dtype_size(src->dtype);
    if (src->numel == 0)
        return 0;
    const tw_backend *db = tw__backend(dd, "copy"), *sb = tw__backend(sd, "copy");
    if (!db || !sb)
        return -1;
    if (dd.kind == sd.kind && dd.index == sd.index)
        return db->copy(dd.index, item, src->ndim, src->shape, tw__data(dst), dst->strides, tw__data(src),
                        src->strides);
    if (sd.kind == TW_DEVICE_CPU)
        return db->copy_from_host(dd.index, item, src->ndim, src->shape, tw__data(dst), dst->strides, tw__data(src),
                                  src->strides);
    if (dd.kind == TW_DEVICE_CPU)
        return sb->copy_to_host(sd.index, item, src->ndim, src->shape, tw__data(dst), dst->strides, tw__data(src),
                                src->strides);
    /* Between two devices: through a contiguous host buffer. */
    tw_tensor *host = tw__tensor_new(src->dtype, src->ndim, src->shape, TW_CPU);
    int rc = host ? tw__copy_between(host, src) : -1;
    if (rc == 0)
        rc = tw__copy_between(dst, host);
    tw_tensor_unref(host);
    return rc;
}

tw_tensor *tw__host_to(tw_tensor *host, tw_device device)
{
    if (!host || device.kind == TW_DEVICE_CPU)
        return host;
    tw_tensor *t = tw__tensor_new(host->dtype, host->ndim, host->shape, device);
    if (t && tw__copy_between(t, host) < 0) {
        tw_tensor_unref(t);
        t = NULL;
    }
    if (t)
        t->weak = host->weak;
    tw_tensor_unref(host);
    return t;
}

tw_tensor *tw__to_host(const tw_tensor *t)
{
    if (t->storage->device.kind == TW_DEVICE_CPU && tw_tensor_is_contiguous(t))
        return tw_tensor_ref((tw_tensor *)t);
    tw_tensor *h = tw__tensor_new(t->dtype, t->ndim, t->shape, TW_CPU);
    if (h && tw__copy_between(h, t) < 0) {
        tw_tensor_unref(h);
        return NULL;
    }
    if (h)
        h->weak = t->weak;
    return h;
}
