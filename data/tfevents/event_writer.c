/* Writing TensorBoard event files (tw/tfevents.h): Event messages packed
 * by protobuf-c from the same .proto files the reader uses, framed as
 * TFRecords with masked CRC-32C. What each kind is written as:
 * docs/tensorboard.md ("Writing"). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.pb-c.h"
#include "hparams.pb-c.h"
#include "summary.pb-c.h"
#include "tensor.pb-c.h"
#include "tfevents_internal.h"
#include "tw/error.h"
#include "tw/json_check.h"

struct tw_tb_writer {
    int fd;
    char *path;
    GHashTable *tags_with_metadata; /* the plugin is sent with a tag's first value, as TensorFlow does */
    GByteArray *buffer;             /* framed records not yet written */
    bool failed;
};

/* ---- framing --------------------------------------------------------------- */
static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void frame(tw_tb_writer *w, const uint8_t *data, size_t n)
{
    uint8_t header[12], footer[4];
    put_le(header, n, 8);
    put_le(header + 8, tw_tfrecord_masked_crc(header, 8), 4);
    put_le(footer, tw_tfrecord_masked_crc(data, n), 4);
    g_byte_array_append(w->buffer, header, sizeof header);
    g_byte_array_append(w->buffer, data, (guint)n);
    g_byte_array_append(w->buffer, footer, sizeof footer);
}

static int write_event(tw_tb_writer *w, Tensorflow__Event *e)
{
    if (w->failed)
        return tw_error_set("%s: an earlier write failed", w->path);
    size_t n = tensorflow__event__get_packed_size(e);
    uint8_t *data = g_malloc(n ? n : 1);
    tensorflow__event__pack(e, data);
    frame(w, data, n);
    g_free(data);
    /* Whole records reach the file in batches: a reader never waits long
     * for a record cut at a buffer's edge. */
    return w->buffer->len >= (1u << 16) ? tw_tb_writer_flush(w) : 0;
}

static void set_time(Tensorflow__Event *e, int64_t step, double wall_time)
{
    e->has_wall_time = true;
    e->wall_time = wall_time;
    e->has_step = true;
    e->step = step;
}

/* One value in a Summary event. */
static int write_value(tw_tb_writer *w, int64_t step, double wall_time, Tensorflow__Summary__Value *v)
{
    Tensorflow__Summary summary = TENSORFLOW__SUMMARY__INIT;
    Tensorflow__Summary__Value *values[1] = {v};
    summary.n_value = 1;
    summary.value = values;
    Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
    set_time(&e, step, wall_time);
    e.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
    e.summary = &summary;
    return write_event(w, &e);
}

/* A value's plugin metadata, on the tag's first value only. */
static Tensorflow__SummaryMetadata *metadata_for(tw_tb_writer *w, const char *tag, Tensorflow__SummaryMetadata *m,
                                                 Tensorflow__SummaryMetadata__PluginData *p, const char *plugin)
{
    if (g_hash_table_contains(w->tags_with_metadata, tag))
        return NULL;
    g_hash_table_add(w->tags_with_metadata, g_strdup(tag));
    p->plugin_name = (char *)plugin;
    m->plugin_data = p;
    return m;
}

/* ---- the file ------------------------------------------------------------------ */
tw_tb_writer *tw_tb_writer_open(const char *dir)
{
    if (g_mkdir_with_parents(dir, 0755)) {
        tw_error_set("%s: cannot create the folder: %s", dir, g_strerror(errno));
        return NULL;
    }
    /* TensorFlow's name: events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2;
     * n makes two writers of one process in one second differ. */
    static int counter;
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    for (int attempt = 0; attempt < 1000; attempt++) {
        char *name = g_strdup_printf("events.out.tfevents.%lld.%s.%d.%d.v2", (long long)(g_get_real_time() / 1000000),
                                     host, (int)getpid(), g_atomic_int_add(&counter, 1));
        char *path = g_build_filename(dir, name, NULL);
        g_free(name);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) {
            g_free(path);
            continue;
        }
        if (fd < 0) {
            tw_error_set("%s: cannot create: %s", path, g_strerror(errno));
            g_free(path);
            return NULL;
        }
        tw_tb_writer *w = g_new0(tw_tb_writer, 1);
        w->fd = fd;
        w->path = path;
        w->tags_with_metadata = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        w->buffer = g_byte_array_new();
        Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
        set_time(&e, 0, (double)g_get_real_time() / 1e6);
        e.has_step = false;
        e.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
        e.file_version = "brain.Event:2";
        if (write_event(w, &e) || tw_tb_writer_flush(w)) {
            tw_tb_writer_close(w);
            return NULL;
        }
        return w;
    }
    tw_error_set("%s: cannot find a free event file name", dir);
    return NULL;
}

const char *tw_tb_writer_path(const tw_tb_writer *w)
{
    return w->path;
}

int tw_tb_writer_flush(tw_tb_writer *w)
{
    size_t done = 0;
    while (!w->failed && done < w->buffer->len) {
        ssize_t n = write(w->fd, w->buffer->data + done, w->buffer->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->failed = true;
            g_byte_array_set_size(w->buffer, 0);
            return tw_error_set("%s: cannot write: %s", w->path, n < 0 ? g_strerror(errno) : "no progress");
        }
        done += (size_t)n;
    }
    g_byte_array_set_size(w->buffer, 0);
    return w->failed ? tw_error_set("%s: an earlier write failed", w->path) : 0;
}

int tw_tb_writer_close(tw_tb_writer *w)
{
    if (!w)
        return 0;
    int rc = tw_tb_writer_flush(w);
    if (close(w->fd) && !rc)
        rc = tw_error_set("%s: cannot close: %s", w->path, g_strerror(errno));
    g_hash_table_unref(w->tags_with_metadata);
    g_byte_array_unref(w->buffer);
    g_free(w->path);
    g_free(w);
    return rc;
}

/* ---- values ------------------------------------------------------------------- */
/* A rank-0 tensor of a plugin, as TF2 writes scalars and text: t holds
 * the dtype and the value; the shape and the plugin's metadata are added. */
static int write_tensor(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, Tensorflow__TensorProto *t,
                        const char *plugin)
{
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    t->has_dtype = true;
    t->tensor_shape = &shape;
    Tensorflow__SummaryMetadata m = TENSORFLOW__SUMMARY_METADATA__INIT;
    Tensorflow__SummaryMetadata__PluginData p = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.metadata = metadata_for(w, tag, &m, &p, plugin);
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = t;
    return write_value(w, step, wall_time, &v);
}

/* A scalar: plugin "scalars", in float64 so every stored value comes back
 * exactly. */
int tw_tb_write_scalar(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, double value)
{
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    t.dtype = TW_TB_DT_DOUBLE;
    t.n_double_val = 1;
    t.double_val = &value;
    return write_tensor(w, tag, step, wall_time, &t, "scalars");
}

/* The store's equal-width buckets as a classic HistogramProto: bucket k
 * ends at min + (k + 1) * width (the last exactly at max), the reader's
 * own rebinning edges. */
int tw_tb_write_histogram(tw_tb_writer *w, const char *tag, const tw_histogram *h)
{
    Tensorflow__HistogramProto hp = TENSORFLOW__HISTOGRAM_PROTO__INIT;
    double *limits = g_new(double, MAX(h->nbuckets, 1));
    double width = (h->max - h->min) / MAX(h->nbuckets, 1);
    for (int k = 0; k < h->nbuckets; k++)
        limits[k] = k == h->nbuckets - 1 ? h->max : h->min + (k + 1) * width;
    hp.has_min = hp.has_max = hp.has_num = true;
    hp.min = isnan(h->min) ? 0 : h->min;
    hp.max = isnan(h->max) ? 0 : h->max;
    hp.num = h->count;
    hp.has_sum = !isnan(h->sum);
    hp.sum = h->sum;
    hp.has_sum_squares = !isnan(h->sum_squares);
    hp.sum_squares = h->sum_squares;
    hp.n_bucket_limit = hp.n_bucket = isnan(h->min) ? 0 : (size_t)h->nbuckets;
    hp.bucket_limit = limits;
    hp.bucket = h->buckets;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO;
    v.histo = &hp;
    int rc = write_value(w, h->step, h->wall_time, &v);
    g_free(limits);
    return rc;
}

/* An encoded image as a Summary.Image; channels 0 when not known. */
int tw_tb_write_image(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, int width, int height,
                      int channels, const uint8_t *data, size_t size)
{
    Tensorflow__Summary__Image im = TENSORFLOW__SUMMARY__IMAGE__INIT;
    im.has_width = im.has_height = im.has_encoded_image_string = true;
    im.width = width;
    im.height = height;
    im.has_colorspace = channels > 0;
    im.colorspace = channels;
    im.encoded_image_string = (ProtobufCBinaryData){.len = size, .data = (uint8_t *)data};
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_IMAGE;
    v.image = &im;
    return write_value(w, step, wall_time, &v);
}

/* Text: a string of plugin "text". */
int tw_tb_write_text(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, const char *text)
{
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    ProtobufCBinaryData s = {.len = strlen(text), .data = (uint8_t *)text};
    t.dtype = TW_TB_DT_STRING;
    t.n_string_val = 1;
    t.string_val = &s;
    return write_tensor(w, tag, step, wall_time, &t, "text");
}

/* The Keras model config as the Keras TensorBoard callback writes it
 * (tf.summary's keras_model): a rank-0 string tensor under the tag
 * "keras", of plugin "graph_keras_model" whose content is the plugin's
 * version, "1". */
int tw_tb_write_keras_model(tw_tb_writer *w, int64_t step, double wall_time, const char *model_json)
{
    static const char tag[] = "keras";
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    ProtobufCBinaryData s = {.len = strlen(model_json), .data = (uint8_t *)model_json};
    t.has_dtype = true;
    t.dtype = TW_TB_DT_STRING;
    t.tensor_shape = &shape;
    t.n_string_val = 1;
    t.string_val = &s;
    Tensorflow__SummaryMetadata m = TENSORFLOW__SUMMARY_METADATA__INIT;
    Tensorflow__SummaryMetadata__PluginData p = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.metadata = metadata_for(w, tag, &m, &p, "graph_keras_model");
    if (v.metadata) {
        p.has_content = true;
        p.content = (ProtobufCBinaryData){.len = 1, .data = (uint8_t *)"1"};
    }
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = &t;
    return write_value(w, step, wall_time, &v);
}

/* A tensor of numbers (an evaluation's confusion matrix, a per-class
 * table), as TF2's tf.summary.write writes one without a plugin: a
 * TensorProto of its dtype and shape, the values little-endian in
 * tensor_content, and no plugin data (TensorBoard's generic tensor). */
int tw_tb_write_tensor(tw_tb_writer *w, const char *tag, int64_t step, double wall_time, const char *dtype, int ndim,
                       const int64_t *dims, const void *data, size_t size)
{
    static const struct {
        const char *name;
        int dtype;
    } dtypes[] = {{"float32", TW_TB_DT_FLOAT}, {"float64", TW_TB_DT_DOUBLE}, {"int32", TW_TB_DT_INT32},
                  {"int64", TW_TB_DT_INT64}};
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
        if (!strcmp(dtype, dtypes[i].name))
            t.dtype = dtypes[i].dtype;
    if (!t.dtype)
        return tw_error_set("%s: tensor '%s': a %s tensor cannot be written", w->path, tag, dtype);
    Tensorflow__TensorShapeProto__Dim dim[TW_TB_TENSOR_MAX_DIMS], *dim_at[TW_TB_TENSOR_MAX_DIMS];
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    if (ndim > TW_TB_TENSOR_MAX_DIMS)
        return tw_error_set("%s: tensor '%s': rank %d, more than %d", w->path, tag, ndim, TW_TB_TENSOR_MAX_DIMS);
    for (int i = 0; i < ndim; i++) {
        dim[i] = (Tensorflow__TensorShapeProto__Dim)TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
        dim[i].has_size = true;
        dim[i].size = dims[i];
        dim_at[i] = &dim[i];
    }
    shape.n_dim = (size_t)ndim;
    shape.dim = dim_at;
    t.has_dtype = true;
    t.tensor_shape = &shape;
    t.has_tensor_content = true;
    t.tensor_content = (ProtobufCBinaryData){.len = size, .data = (uint8_t *)data};
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = &t;
    return write_value(w, step, wall_time, &v);
}

/* A traced graph (twb's graph JSON) as the event's graph_def. */
int tw_tb_write_graph(tw_tb_writer *w, int64_t step, double wall_time, const char *graph_json)
{
    char why[256];
    size_t n;
    uint8_t *bytes = tw__tb_graph_def_from_json(graph_json, &n, why, sizeof why);
    if (!bytes) {
        tw_error_set("%s: a graph left out: %s", w->path, why);
        return 1;
    }
    Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
    set_time(&e, step, wall_time);
    e.what_case = TENSORFLOW__EVENT__WHAT_GRAPH_DEF;
    e.graph_def = (ProtobufCBinaryData){.len = n, .data = bytes};
    int rc = write_event(w, &e);
    g_free(bytes);
    return rc;
}

/* ---- hyperparameters ------------------------------------------------------------- */
/* A JSON node as an hparams Value (google.protobuf.Value's layout), in
 * memory owned by the string chunk and the pointer array. */
static Tensorboard__Hparams__Value *hparams_value(JsonNode *node, GStringChunk *strings, GPtrArray *owned, int depth)
{
    Tensorboard__Hparams__Value *v = g_new(Tensorboard__Hparams__Value, 1);
    *v = (Tensorboard__Hparams__Value)TENSORBOARD__HPARAMS__VALUE__INIT;
    g_ptr_array_add(owned, v);
    if (depth > 64 || JSON_NODE_HOLDS_NULL(node)) {
        v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_NULL_VALUE;
    } else if (JSON_NODE_HOLDS_VALUE(node)) {
        GType type = json_node_get_value_type(node);
        if (type == G_TYPE_STRING) {
            v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_STRING_VALUE;
            v->string_value = g_string_chunk_insert(strings, json_node_get_string(node));
        } else if (type == G_TYPE_BOOLEAN) {
            v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_BOOL_VALUE;
            v->bool_value = json_node_get_boolean(node);
        } else {
            v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_NUMBER_VALUE;
            v->number_value = json_node_get_double(node);
        }
    } else if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        Tensorboard__Hparams__ListValue *l = g_new(Tensorboard__Hparams__ListValue, 1);
        *l = (Tensorboard__Hparams__ListValue)TENSORBOARD__HPARAMS__LIST_VALUE__INIT;
        g_ptr_array_add(owned, l);
        l->n_values = json_array_get_length(a);
        l->values = g_new(Tensorboard__Hparams__Value *, MAX(l->n_values, 1));
        g_ptr_array_add(owned, l->values);
        for (guint i = 0; i < l->n_values; i++)
            l->values[i] = hparams_value(json_array_get_element(a, i), strings, owned, depth + 1);
        v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_LIST_VALUE;
        v->list_value = l;
    } else {
        JsonObject *o = json_node_get_object(node);
        GList *names = json_object_get_members(o);
        Tensorboard__Hparams__Struct *s = g_new(Tensorboard__Hparams__Struct, 1);
        *s = (Tensorboard__Hparams__Struct)TENSORBOARD__HPARAMS__STRUCT__INIT;
        g_ptr_array_add(owned, s);
        s->n_fields = g_list_length(names);
        s->fields = g_new(Tensorboard__Hparams__Struct__FieldsEntry *, MAX(s->n_fields, 1));
        g_ptr_array_add(owned, s->fields);
        size_t i = 0;
        for (GList *l = names; l; l = l->next, i++) {
            Tensorboard__Hparams__Struct__FieldsEntry *f = g_new(Tensorboard__Hparams__Struct__FieldsEntry, 1);
            *f = (Tensorboard__Hparams__Struct__FieldsEntry)TENSORBOARD__HPARAMS__STRUCT__FIELDS_ENTRY__INIT;
            g_ptr_array_add(owned, f);
            f->key = g_string_chunk_insert(strings, l->data);
            f->value = hparams_value(json_object_get_member(o, l->data), strings, owned, depth + 1);
            s->fields[i] = f;
        }
        g_list_free(names);
        v->kind_case = TENSORBOARD__HPARAMS__VALUE__KIND_STRUCT_VALUE;
        v->struct_value = s;
    }
    return v;
}

/* The run's hyperparameters (a JSON object) as the hparams plugin's
 * session_start_info, under the plugin's tag "_hparams_/session_start_info". */
int tw_tb_write_hparams(tw_tb_writer *w, const char *hparams_json, double wall_time)
{
    if (tw_json_check_text(hparams_json, strlen(hparams_json), "the run's hyperparameters"))
        return tw_error_set("%s: %s", w->path, tw_last_error());
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, hparams_json, -1, &error) ||
        !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        int rc = tw_error_set("%s: the run's hyperparameters are not a JSON object%s%s", w->path, error ? ": " : "",
                              error ? error->message : "");
        g_clear_error(&error);
        g_object_unref(parser);
        return rc;
    }
    GStringChunk *strings = g_string_chunk_new(256);
    GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
    JsonObject *o = json_node_get_object(json_parser_get_root(parser));
    GList *names = json_object_get_members(o);
    Tensorboard__Hparams__SessionStartInfo start = TENSORBOARD__HPARAMS__SESSION_START_INFO__INIT;
    start.n_hparams = g_list_length(names);
    start.hparams = g_new(Tensorboard__Hparams__SessionStartInfo__HparamsEntry *, MAX(start.n_hparams, 1));
    g_ptr_array_add(owned, start.hparams);
    size_t i = 0;
    for (GList *l = names; l; l = l->next, i++) {
        Tensorboard__Hparams__SessionStartInfo__HparamsEntry *e = g_new(Tensorboard__Hparams__SessionStartInfo__HparamsEntry, 1);
        *e = (Tensorboard__Hparams__SessionStartInfo__HparamsEntry)TENSORBOARD__HPARAMS__SESSION_START_INFO__HPARAMS_ENTRY__INIT;
        g_ptr_array_add(owned, e);
        e->key = g_string_chunk_insert(strings, l->data);
        e->value = hparams_value(json_object_get_member(o, l->data), strings, owned, 0);
        start.hparams[i] = e;
    }
    g_list_free(names);
    start.has_start_time_secs = true;
    start.start_time_secs = wall_time;
    Tensorboard__Hparams__HParamsPluginData data = TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__INIT;
    data.data_case = TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_START_INFO;
    data.session_start_info = &start;
    size_t n = tensorboard__hparams__hparams_plugin_data__get_packed_size(&data);
    uint8_t *content = g_malloc(n ? n : 1);
    tensorboard__hparams__hparams_plugin_data__pack(&data, content);
    /* The plugin's summaries carry an empty string tensor; the data is in the metadata. */
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    t.has_dtype = true;
    t.dtype = TW_TB_DT_STRING;
    t.tensor_shape = &shape;
    Tensorflow__SummaryMetadata m = TENSORFLOW__SUMMARY_METADATA__INIT;
    Tensorflow__SummaryMetadata__PluginData p = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    p.plugin_name = "hparams";
    p.has_content = true;
    p.content = (ProtobufCBinaryData){.len = n, .data = content};
    m.plugin_data = &p;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = "_hparams_/session_start_info";
    v.metadata = &m;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = &t;
    int rc = write_value(w, 0, wall_time, &v);
    g_free(content);
    g_ptr_array_unref(owned);
    g_string_chunk_free(strings);
    g_object_unref(parser);
    return rc;
}
