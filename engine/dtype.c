/* Data types and devices: sizes and names. */
#include "backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[TW_DTYPE_COUNT] = {
    [TW_FLOAT32] = "float32", [TW_FLOAT64] = "float64", [TW_INT32] = "int32",
    [TW_INT64] = "int64",     [TW_UINT8] = "uint8",     [TW_BOOL] = "bool",
};

/* The sizes are the kernels' (kernels/twk_dtype.h, numbered alike). */
size_t tw_dtype_size(tw_dtype dtype)
{
    return twk_dtype_size(dtype);
}

const char *tw_dtype_name(tw_dtype dtype)
{
    return (unsigned)dtype < TW_DTYPE_COUNT ? dtype_names[dtype] : "invalid";
}

bool tw_dtype_is_float(tw_dtype dtype)
{
    return dtype == TW_FLOAT32 || dtype == TW_FLOAT64;
}

static const char *const device_kinds[TW_DEVICE_KIND_COUNT] = {
    [TW_DEVICE_CPU] = "cpu", [TW_DEVICE_CUDA] = "cuda", [TW_DEVICE_SIM] = "sim"};

const char *tw_device_name(tw_device device, char *buf, size_t size)
{
    if ((unsigned)device.kind < TW_DEVICE_KIND_COUNT)
        snprintf(buf, size, "%s:%d", device_kinds[device.kind], device.index);
    else
        snprintf(buf, size, "device-kind-%d:%d", (int)device.kind, device.index);
    return buf;
}

int tw_device_parse(const char *text, tw_device *out)
{
    for (int k = 0; text && k < TW_DEVICE_KIND_COUNT; k++) {
        size_t n = strlen(device_kinds[k]);
        if (strncmp(text, device_kinds[k], n) || (text[n] && text[n] != ':'))
            continue;
        long index = 0;
        if (text[n] == ':') {
            if (text[n + 1] < '0' || text[n + 1] > '9')
                break;
            char *end = NULL;
            errno = 0;
            index = strtol(text + n + 1, &end, 10);
            if (end == text + n + 1 || *end || errno || index < 0 || index > 1023)
                break;
        }
        *out = (tw_device){(tw_device_kind)k, (int)index};
        return 0;
    }
    return tw_error_set("device: '%s' is not a device name (cpu, cuda, cuda:N)", text ? text : "(null)");
}

static TW_HOT_THREAD_LOCAL tw_device default_device = {TW_DEVICE_CPU, 0};

tw_device tw_default_device(void)
{
    return default_device;
}

int tw_set_default_device(tw_device device)
{
    if (!tw__backend(device, "set_default_device"))
        return -1;
    default_device = device;
    return 0;
}
