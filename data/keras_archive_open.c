/* The one loader and writer of model files (tw/keras_file.h): the format
 * is told by the bytes, then the JSON reader, the .keras archive, the
 * Keras 2 .h5 file or a checkpoint does the rest. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "file_bytes.h"
#include "hdf5_file.h"
#include "keras_archive.h"
#include "tw/checkpoint.h"
#include "tw/error.h"
#include "tw/model_file.h"

/* config.json is Keras JSON: the JSON reader's own cap on model files. */
#define CONFIG_MAX ((size_t)64 << 20)
/* The zip signatures: a local file header, or the end record of an empty archive. */
#define ZIP_LOCAL "PK\x03\x04"
#define ZIP_EMPTY "PK\x05\x06"

static _Thread_local bool last_had_weights;

bool tw_model_open_had_weights(void)
{
    return last_had_weights;
}

size_t tw__h5_dataset_cap(size_t file_size)
{
    /* What deflate could expand the file to, plus room for small files' fill values. */
    size_t cap = (size_t)1 << 20;
    return file_size > (SIZE_MAX - cap) / TW_DEFLATE_MAX_RATIO ? SIZE_MAX : file_size * TW_DEFLATE_MAX_RATIO + cap;
}

static size_t memory_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
}

tw_model_format tw_model_format_of_bytes(const uint8_t *bytes, size_t size)
{
    if (tw__h5_is_hdf5(bytes, size))
        return TW_MODEL_FORMAT_H5;
    if (size >= 4 && (!memcmp(bytes, ZIP_LOCAL, 4) || !memcmp(bytes, ZIP_EMPTY, 4)))
        return TW_MODEL_FORMAT_KERAS;
    /* safetensors: a little-endian header length, then the JSON header. */
    if (size >= 9 && bytes[8] == '{') {
        uint64_t n = 0;
        for (int i = 7; i >= 0; i--)
            n = n << 8 | bytes[i];
        if (n >= 2 && n <= size - 8)
            return TW_MODEL_FORMAT_SAFETENSORS;
    }
    return TW_MODEL_FORMAT_JSON;
}

tw_model_format tw_model_format_for_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && strchr(dot, '/'))
        dot = NULL;
    if (dot && !g_ascii_strcasecmp(dot, ".json"))
        return TW_MODEL_FORMAT_JSON;
    if (dot && !g_ascii_strcasecmp(dot, ".keras"))
        return TW_MODEL_FORMAT_KERAS;
    if (dot && (!g_ascii_strcasecmp(dot, ".h5") || !g_ascii_strcasecmp(dot, ".hdf5")))
        return TW_MODEL_FORMAT_H5;
    if (dot && !g_ascii_strcasecmp(dot, ".safetensors"))
        return TW_MODEL_FORMAT_SAFETENSORS;
    tw_error_set("%s: name the format by the extension: .json, .keras, .h5 or .safetensors", path);
    return TW_MODEL_FORMAT_AUTO;
}

const char *tw_model_format_name(tw_model_format format)
{
    switch (format) {
    case TW_MODEL_FORMAT_JSON: return "Keras JSON";
    case TW_MODEL_FORMAT_KERAS: return "Keras 3 .keras";
    case TW_MODEL_FORMAT_H5: return "Keras 2 .h5";
    case TW_MODEL_FORMAT_SAFETENSORS: return "safetensors checkpoint";
    default: return "unknown";
    }
}

/* The format of the file at path from its first bytes; a file that is not
 * a regular one reads as JSON, whose reader refuses it with its message. */
static tw_model_format format_of_file(const char *path)
{
    uint8_t head[16];
    ssize_t n = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        n = read(fd, head, sizeof head);
        /* safetensors needs the header length checked against the size. */
        if (n >= 9 && tw_model_format_of_bytes(head, (size_t)n) == TW_MODEL_FORMAT_JSON && head[8] == '{') {
            uint64_t len = 0;
            for (int i = 7; i >= 0; i--)
                len = len << 8 | head[i];
            if (len >= 2 && len <= (uint64_t)st.st_size - 8) {
                close(fd);
                return TW_MODEL_FORMAT_SAFETENSORS;
            }
        }
    }
    if (fd >= 0)
        close(fd);
    return n > 0 ? tw_model_format_of_bytes(head, (size_t)n) : TW_MODEL_FORMAT_JSON;
}

int tw_model_build_declared(tw_model *model, const char *name)
{
    if (tw_layer_built(model))
        return 0;
    if (!tw_model_input_shape(model))
        return tw_error_set("%s: the model declares no input shape (an InputLayer or batch_input_shape on its first "
                            "layer), so its weights cannot be placed",
                            name);
    if (tw_model_build(model, NULL, 0))
        return tw_error_set("%s: %s", name, tw_last_error());
    return 0;
}

static tw_model *config_model(const char *json, size_t length, const char *name, const char *member)
{
    char *source = g_strdup_printf("%s:%s", name, member);
    tw_model *model = tw_model_from_json(json, length, source);
    g_free(source);
    return model;
}

/* Keras 2 weights at model_weights/ (full model) or the root (save_weights),
 * or Keras 3's per-object layout. */
static int apply_h5_weights(tw_model *model, hid_t file, size_t file_size, const char *name)
{
    size_t cap = tw__h5_dataset_cap(file_size);
    if (tw__h5_has_attr(file, "layer_names") || tw__h5_has_attr(file, "layer_names0"))
        return tw__keras2_apply_weights(model, file, cap, name);
    if (tw__h5_has_link(file, "model_weights")) {
        tw__h5_lock();
        hid_t g = H5Gopen2(file, "model_weights", H5P_DEFAULT);
        tw__h5_unlock();
        if (g < 0)
            return tw__h5_fail(name, "model_weights is not a group");
        int rc = tw__keras2_apply_weights(model, g, cap, name);
        tw__h5_lock();
        H5Gclose(g);
        tw__h5_unlock();
        return rc;
    }
    if (tw__h5_has_link(file, "layers") || tw__h5_has_link(file, "vars"))
        return tw__keras3_apply_weights(model, file, cap, name);
    return tw_error_set("%s: an HDF5 file without Keras weights (no layer_names, model_weights/ or layers/)", name);
}

static void close_file(hid_t file)
{
    tw__h5_lock();
    H5Fclose(file);
    tw__h5_unlock();
}

static int apply_image(tw_model *model, const uint8_t *bytes, size_t size, const char *name)
{
    hid_t file = tw__h5_open_image(bytes, size, name);
    if (file < 0)
        return -1;
    int rc = tw_model_build_declared(model, name) || apply_h5_weights(model, file, size, name) ? -1 : 0;
    close_file(file);
    return rc;
}

static tw_model *open_keras(const uint8_t *bytes, size_t size, const char *name, bool *had_weights)
{
    size_t config_size, weights_size;
    uint8_t *config = tw__keras_member(bytes, size, name, "config.json", CONFIG_MAX, &config_size);
    if (!config)
        return NULL;
    tw_model *model = config_model((const char *)config, config_size, name, "config.json");
    free(config);
    if (!model)
        return NULL;
    char *weights_name = g_strdup_printf("%s:model.weights.h5", name);
    uint8_t *weights = tw__keras_member(bytes, size, name, "model.weights.h5", memory_cap(), &weights_size);
    if (!weights || apply_image(model, weights, weights_size, weights_name)) {
        tw_layer_unref(model);
        model = NULL;
    }
    *had_weights = model != NULL;
    free(weights);
    g_free(weights_name);
    return model;
}

static tw_model *open_h5(const uint8_t *bytes, size_t size, const char *name, bool *had_weights)
{
    hid_t file = tw__h5_open_image(bytes, size, name);
    if (file < 0)
        return NULL;
    char *json = tw__h5_model_config(file, name);
    tw_model *model = json ? config_model(json, strlen(json), name, "model_config") : NULL;
    free(json);
    if (model && tw__h5_has_link(file, "model_weights")) {
        *had_weights = true;
        if (tw_model_build_declared(model, name) || apply_h5_weights(model, file, size, name)) {
            tw_layer_unref(model);
            model = NULL;
        }
    }
    close_file(file);
    return model;
}

tw_model *tw__model_open_bytes(const uint8_t *bytes, size_t size, const char *name, bool *had_weights)
{
    *had_weights = false;
    switch (tw_model_format_of_bytes(bytes, size)) {
    case TW_MODEL_FORMAT_KERAS: return open_keras(bytes, size, name, had_weights);
    case TW_MODEL_FORMAT_H5: return open_h5(bytes, size, name, had_weights);
    default: tw_error_set("%s: neither a .keras archive nor an HDF5 file", name); return NULL;
    }
}

static tw_model *open_checkpoint(const char *path)
{
    char *json = tw_checkpoint_read_metadata(path, "model_json");
    tw_model *model = json ? config_model(json, strlen(json), path, "model_json") : NULL;
    free(json);
    if (model && (tw_model_build_declared(model, path) || tw_checkpoint_restore(path, model, NULL))) {
        tw_layer_unref(model);
        return NULL;
    }
    return model;
}

/* A file named .keras or .h5 whose bytes are neither a zip archive nor
 * HDF5 (an empty file, a damaged start, a download that kept an error
 * page): refused as what its name promises, not read as JSON, whose reader
 * would report a JSON syntax error. 0 when the name promises neither. */
static int refuse_misnamed(const char *path, tw_model_format format)
{
    if (format != TW_MODEL_FORMAT_JSON)
        return 0;
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return 0;
    bool keras = !g_ascii_strcasecmp(dot, ".keras");
    if (!keras && g_ascii_strcasecmp(dot, ".h5") && g_ascii_strcasecmp(dot, ".hdf5"))
        return 0;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* the file reader says what is wrong with the path */
    if (st.st_size == 0)
        return tw_error_set("%s: the file is empty (0 bytes); a %s file is %s", path, keras ? ".keras" : ".h5",
                            keras ? "a zip archive" : "HDF5");
    return tw_error_set(keras ? "%s: not a .keras file: no zip signature at its start (a .keras file is a zip "
                                "archive of metadata.json, config.json and model.weights.h5)"
                              : "%s: not a Keras .h5 file: no HDF5 signature at its start (corrupt, or not HDF5)",
                        path);
}

tw_model *tw_model_open(const char *path)
{
    last_had_weights = false;
    tw_model_format format = format_of_file(path);
    if (refuse_misnamed(path, format))
        return NULL;
    if (format == TW_MODEL_FORMAT_JSON)
        return tw_model_load(path);
    if (format == TW_MODEL_FORMAT_SAFETENSORS) {
        tw_model *model = open_checkpoint(path);
        last_had_weights = model != NULL;
        return model;
    }
    size_t size;
    uint8_t *bytes = tw__file_bytes(path, NULL, &size);
    if (!bytes)
        return NULL;
    bool had = false;
    tw_model *model = tw__model_open_bytes(bytes, size, path, &had);
    last_had_weights = model && had;
    free(bytes);
    return model;
}

int tw_model_load_weights(tw_model *model, const char *path)
{
    /* A missing file or a pipe is not "not a weight file": say what it is. */
    struct stat st;
    if (tw__stat_regular_file(path, &st))
        return -1;
    tw_model_format format = format_of_file(path);
    if (refuse_misnamed(path, format))
        return -1;
    if (format == TW_MODEL_FORMAT_SAFETENSORS)
        return tw_model_build_declared(model, path) || tw_checkpoint_restore(path, model, NULL) ? -1 : 0;
    if (format == TW_MODEL_FORMAT_JSON)
        return tw_error_set("%s: not a weight file (a .h5, .weights.h5, .keras or .safetensors file)", path);
    size_t size;
    uint8_t *bytes = tw__file_bytes(path, NULL, &size);
    if (!bytes)
        return -1;
    int rc;
    if (format == TW_MODEL_FORMAT_KERAS) {
        size_t weights_size;
        char *weights_name = g_strdup_printf("%s:model.weights.h5", path);
        uint8_t *weights = tw__keras_member(bytes, size, path, "model.weights.h5", memory_cap(), &weights_size);
        rc = weights ? apply_image(model, weights, weights_size, weights_name) : -1;
        free(weights);
        g_free(weights_name);
    } else {
        rc = apply_image(model, bytes, size, path);
    }
    free(bytes);
    return rc;
}

/* ---- writing -------------------------------------------------------------- */

static int write_file(const char *path, const uint8_t *bytes, size_t size)
{
    tw_atomic_file f;
    if (tw__atomic_open(&f, path, "model file") || tw__atomic_write(&f, bytes, size))
        return -1;
    return tw__atomic_commit(&f);
}

static char *keras_metadata(void)
{
    GDateTime *now = g_date_time_new_now_utc();
    char *date = g_date_time_format(now, "%Y-%m-%d@%H:%M:%S");
    /* The layout is Keras 3.0's; the writer says who it is. */
    char *metadata = g_strdup_printf("{\"keras_version\": \"3.0.0\", \"date_saved\": \"%s\", "
                                     "\"written_by\": \"Tensor Workbench\"}",
                                     date);
    g_free(date);
    g_date_time_unref(now);
    return metadata;
}

int tw_model_write(tw_model *model, const char *path, tw_model_format format)
{
    if (format == TW_MODEL_FORMAT_AUTO && (format = tw_model_format_for_path(path)) == TW_MODEL_FORMAT_AUTO)
        return -1;
    if (format == TW_MODEL_FORMAT_JSON)
        return tw_model_save(model, path);
    if (tw_model_build_declared(model, path))
        return -1;
    char *json = tw_model_to_json(model);
    if (!json)
        return tw_error_set("%s: %s", path, tw_last_error());
    int rc = -1;
    size_t size = 0, weights_size = 0;
    uint8_t *bytes = NULL;
    if (format == TW_MODEL_FORMAT_SAFETENSORS) {
        rc = tw_checkpoint_save(path, model, NULL, json, NULL);
    } else if (format == TW_MODEL_FORMAT_H5) {
        bytes = tw__keras2_h5_bytes(model, json, path, &size);
    } else {
        uint8_t *weights = tw__keras3_weights_bytes(model, path, &weights_size);
        char *metadata = keras_metadata();
        bytes = weights ? tw__keras_archive_bytes(metadata, json, weights, weights_size, path, &size) : NULL;
        g_free(metadata);
        free(weights);
    }
    if (bytes)
        rc = write_file(path, bytes, size);
    free(bytes);
    free(json);
    return rc;
}

/* ---- what a file holds ---------------------------------------------------- */

char *tw__model_config_bytes(const uint8_t *bytes, size_t size, const char *name, size_t *length)
{
    tw_model_format format = tw_model_format_of_bytes(bytes, size);
    if (format == TW_MODEL_FORMAT_KERAS) {
        uint8_t *config = tw__keras_member(bytes, size, name, "config.json", CONFIG_MAX, length);
        char *text = config ? malloc(*length + 1) : NULL;
        if (text) {
            memcpy(text, config, *length);
            text[*length] = '\0';
        }
        free(config);
        return text;
    }
    if (format != TW_MODEL_FORMAT_H5) {
        tw_error_set("%s: neither a .keras archive nor an HDF5 file", name);
        return NULL;
    }
    hid_t file = tw__h5_open_image(bytes, size, name);
    if (file < 0)
        return NULL;
    char *json = tw__h5_model_config(file, name);
    close_file(file);
    if (json)
        *length = strlen(json);
    return json;
}

char *tw_model_file_config(const char *path, size_t *length)
{
    tw_model_format format = format_of_file(path);
    if (format == TW_MODEL_FORMAT_SAFETENSORS) {
        char *json = tw_checkpoint_read_metadata(path, "model_json");
        if (json)
            *length = strlen(json);
        return json;
    }
    size_t size;
    uint8_t *bytes = format == TW_MODEL_FORMAT_JSON ? tw__file_bytes_at_most(path, NULL, CONFIG_MAX, &size)
                                                    : tw__file_bytes(path, NULL, &size);
    if (!bytes)
        return NULL;
    char *text;
    if (format == TW_MODEL_FORMAT_JSON) {
        text = malloc(size + 1);
        memcpy(text, bytes, size);
        text[size] = '\0';
        *length = size;
    } else {
        text = tw__model_config_bytes(bytes, size, path, length);
    }
    free(bytes);
    return text;
}

typedef struct {
    GPtrArray *names;
} visit_ctx;

static herr_t visit_dataset(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    (void)obj;
    visit_ctx *v = data;
    if (info->type == H5O_TYPE_DATASET)
        g_ptr_array_add(v->names, g_strdup(name));
    return 0;
}

static int list_datasets(const uint8_t *bytes, size_t size, const char *name, tw_weight_list *out)
{
    hid_t file = tw__h5_open_image(bytes, size, name);
    if (file < 0)
        return -1;
    visit_ctx v = {g_ptr_array_new_with_free_func(g_free)};
    tw__h5_lock();
    herr_t visited = H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, visit_dataset, &v, H5O_INFO_BASIC);
    int rc = visited < 0 ? tw__h5_fail(name, "cannot walk the file's groups (corrupt)") : 0;
    tw__h5_unlock();
    out->n = 0;
    out->names = g_new0(char *, v.names->len + 1);
    out->tensors = g_new0(tw_tensor *, v.names->len + 1);
    for (guint i = 0; i < v.names->len && !rc; i++) {
        tw_tensor *t = tw__h5_read_tensor(file, v.names->pdata[i], tw__h5_dataset_cap(size), name);
        if (!t) {
            rc = -1;
            break;
        }
        out->names[out->n] = g_strdup(v.names->pdata[i]);
        out->tensors[out->n++] = t;
    }
    close_file(file);
    g_ptr_array_unref(v.names);
    if (rc)
        tw_weight_list_clear(out);
    return rc;
}

int tw__model_weights_bytes(const uint8_t *bytes, size_t size, const char *name, tw_weight_list *out)
{
    memset(out, 0, sizeof *out);
    if (tw_model_format_of_bytes(bytes, size) != TW_MODEL_FORMAT_KERAS)
        return list_datasets(bytes, size, name, out);
    size_t weights_size;
    uint8_t *weights = tw__keras_member(bytes, size, name, "model.weights.h5", memory_cap(), &weights_size);
    char *weights_name = g_strdup_printf("%s:model.weights.h5", name);
    int rc = weights ? list_datasets(weights, weights_size, weights_name, out) : -1;
    g_free(weights_name);
    free(weights);
    return rc;
}

int tw_model_file_weights(const char *path, tw_weight_list *out)
{
    memset(out, 0, sizeof *out);
    size_t size;
    uint8_t *bytes = tw__file_bytes(path, NULL, &size);
    if (!bytes)
        return -1;
    int rc = tw__model_weights_bytes(bytes, size, path, out);
    free(bytes);
    return rc;
}

void tw_weight_list_clear(tw_weight_list *list)
{
    for (int i = 0; i < list->n; i++) {
        g_free(list->names[i]);
        tw_tensor_unref(list->tensors[i]);
    }
    g_free(list->names);
    g_free(list->tensors);
    memset(list, 0, sizeof *list);
}
