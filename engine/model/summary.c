/* Keras' model.summary() table. Sequential models:
 *
 *     Model: "sequential"
 *     _________________________________________________________________
 *     Layer (type)                 Output Shape              Param #
 *     =================================================================
 *     dense (Dense)                (None, 64)                50,240
 *     ...
 *     Total params: 50,890
 *
 * Columns sit at 45% and 85% of the line, as Keras places them; a field
 * longer than its column pushes the next one right instead of being cut.
 * InputLayer rows are left out, as Keras leaves them out.
 *
 * Functional models get Keras 2's four columns (Layer (type), Output
 * Shape, Param #, Connected to) at 33%, 55% and 67% of 98 characters,
 * every layer once with its calls' inputs as "layer[node][tensor]", one
 * per line; an InputLayer's shape is printed as the list Keras prints,
 * and a layer called on several shapes shows "multiple". A shape not
 * known (after a Lambda whose file gives none) is "?", and so is a count
 * that depends on one; lines under the totals say what "?" means. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functional_internal.h"

typedef struct {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n) * 2;
        t->buf = realloc(t->buf, t->cap);
    }
}

static void rule(text *t, char c, int width)
{
    for (int i = 0; i < width; i++)
        put(t, "%c", c);
    put(t, "\n");
}

static const char *with_commas(int64_t v, char *buf, size_t size)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
    size_t o = 0;
    if (v < 0)
        buf[o++] = '-';
    for (int i = 0; i < n && o + 2 < size; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* nfields fields, each from its stop (the first at 0). */
static void row_n(text *t, const int *stops, const char *const *fields, int nfields)
{
    int col = 0;
    for (int i = 0; i < nfields; i++) {
        int len = (int)strlen(fields[i]);
        put(t, "%s", fields[i]);
        col += len;
        bool last = i == nfields - 1;
        int target = last ? col : stops[i];
        if (col >= target && !last)
            target = col + 1;
        for (; col < target; col++)
            put(t, " ");
    }
    /* No trailing blanks: a row ends with its last field. */
    while (t->len && t->buf[t->len - 1] == ' ')
        t->len--;
    t->buf[t->len] = '\0';
    put(t, "\n");
}

static void row(text *t, const int *stops, const char *const *fields)
{
    row_n(t, stops, fields, 3);
}

/* unknown_params: some layer's count depends on a shape not known, so
 * the totals are the known part; unknown_shapes: some shape is "?". */
static void totals(text *t, int64_t trainable, int64_t non_trainable, bool unknown_params, bool unknown_shapes,
                   int line_length)
{
    char a[32], b[32], c[32];
    const char *pre = unknown_params ? "unknown, at least " : "";
    put(t, "Total params: %s%s\nTrainable params: %s%s\nNon-trainable params: %s%s\n", pre,
        with_commas(trainable + non_trainable, a, sizeof a), pre, with_commas(trainable, b, sizeof b), pre,
        with_commas(non_trainable, c, sizeof c));
    rule(t, '_', line_length);
    if (unknown_shapes)
        put(t, "Output Shape ?: not known here: it comes from Python code (a Lambda or TFOpLambda, or a class "
               "not known here) whose output shape the file does not give.\n");
    if (unknown_params)
        put(t, "Param # ?: the layer's weights take their sizes from an input of unknown shape, or are made by "
               "Python code of a class not known here.\n");
}

/* The Param # column: "?" where the count depends on an unknown shape. */
static void param_text(const tw_layer_info *info, char *buf, size_t size)
{
    if (info->params_unknown)
        snprintf(buf, size, "?");
    else
        with_commas(info->trainable_params + info->non_trainable_params, buf, size);
}

/* The Output Shape column of layer i of a Functional model. */
static void functional_shape(const tw_layer *model, int i, char *buf, size_t size)
{
    tw_shape first[TW_MAX_LAYER_IO], other[TW_MAX_LAYER_IO];
    int n = tw_functional_call_outputs(model, i, 0, first);
    for (int k = 1; k < tw_functional_layer_ncalls(model, i); k++) {
        int m = tw_functional_call_outputs(model, i, k, other);
        bool same = m == n;
        for (int j = 0; same && j < n; j++)
            same = first[j].ndim == other[j].ndim &&
                   (first[j].ndim < 2 ||
                    !memcmp(first[j].dims + 1, other[j].dims + 1, sizeof(int64_t) * (size_t)(first[j].ndim - 1)));
        if (!same) {
            snprintf(buf, size, "multiple");
            return;
        }
    }
    bool list = n > 1 || !strcmp(model->children[i]->klass->name, "InputLayer");
    size_t len = (size_t)snprintf(buf, size, "%s", list ? "[" : "");
    for (int j = 0; j < n && len < size; j++) {
        char one[128];
        len += (size_t)snprintf(buf + len, size - len, "%s%s", j ? ", " : "", tw_shape_format(&first[j], one, sizeof one));
    }
    if (list && len < size)
        snprintf(buf + len, size - len, "]");
}

/* Each layer's output shape and parameter count for the table, from the
 * model's input shape in (NULL: a Functional model's own inputs); free it.
 * NULL, with the failing layer's message as the error, when a layer's input
 * cannot work. */
static tw_layer_info *layer_infos(const tw_model *model, const tw_shape *in)
{
    int n = model->nchildren;
    tw_layer_info *info = calloc(n ? n : 1, sizeof *info);
    if (tw_model_infer(model, in, info) == n)
        return info;
    for (int i = 0; i < n; i++)
        if (info[i].error[0])
            tw_error_set("%s", info[i].error);
    free(info);
    return NULL;
}

static char *functional_summary(const tw_model *model, int line_length)
{
    int n = model->nchildren;
    tw_layer_info *info = layer_infos(model, NULL);
    int64_t trainable = 0, non_trainable = 0;
    int unknown = -1;
    if (info && tw__functional_count(model, &trainable, &non_trainable, &unknown)) {
        free(info);
        return NULL;
    }
    if (!info)
        return NULL;
    if (line_length <= 0)
        line_length = 98;
    int stops[3] = {line_length * 33 / 100, line_length * 55 / 100, line_length * 67 / 100};
    text t = {malloc(4096), 0, 4096};
    put(&t, "Model: \"%s\"\n", model->name);
    rule(&t, '_', line_length);
    row_n(&t, stops, (const char *const[]){"Layer (type)", "Output Shape", "Param #", "Connected to"}, 4);
    rule(&t, '=', line_length);
    bool unknown_shapes = false;
    for (int i = 0; i < n; i++) {
        const tw_layer *l = model->children[i];
        if (i)
            rule(&t, '_', line_length);
        char name[160], shape[256], params[32], from[160];
        snprintf(name, sizeof name, "%s (%s)", l->name, tw_layer_class_shown(l));
        functional_shape(model, i, shape, sizeof shape);
        unknown_shapes |= strchr(shape, '?') != NULL;
        param_text(&info[i], params, sizeof params);
        bool first = true;
        for (int k = 0; k < tw_functional_layer_ncalls(model, i); k++) {
            tw_keras_history in[TW_MAX_LAYER_IO];
            int m = tw_functional_call_inputs(model, i, k, in);
            for (int j = 0; j < m; j++) {
                snprintf(from, sizeof from, "%s[%d][%d]", model->children[in[j].layer]->name, in[j].node_index,
                         in[j].tensor_index);
                if (first)
                    row_n(&t, stops, (const char *const[]){name, shape, params, from}, 4);
                else
                    row_n(&t, stops, (const char *const[]){"", "", "", from}, 4);
                first = false;
            }
        }
        if (first)
            row_n(&t, stops, (const char *const[]){name, shape, params, ""}, 4);
    }
    rule(&t, '=', line_length);
    totals(&t, trainable, non_trainable, unknown >= 0, unknown_shapes, line_length);
    free(info);
    return t.buf;
}

char *tw_model_summary(const tw_model *model, int line_length)
{
    if (!tw_layer_is_model(model)) {
        tw_error_set("summary: '%s' is not a model", model ? tw_layer_name(model) : "NULL");
        return NULL;
    }
    if (tw_layer_is_functional(model))
        return functional_summary(model, line_length);
    const tw_shape *in = model->built ? &model->input_shape : tw_model_input_shape(model);
    if (!in) {
        tw_error_set("summary: model '%s' has no input shape; give the first layer one or add an InputLayer",
                     model->name);
        return NULL;
    }
    int n = model->nchildren;
    tw_layer_info *info = layer_infos(model, in);
    if (!info)
        return NULL;
    if (line_length <= 0)
        line_length = 65;
    int stops[2] = {line_length * 45 / 100, line_length * 85 / 100};
    text t = {malloc(1024), 0, 1024}; /* put() must never offset a NULL buffer */
    put(&t, "Model: \"%s\"\n", model->name);
    rule(&t, '_', line_length);
    row(&t, stops, (const char *const[]){"Layer (type)", "Output Shape", "Param #"});
    rule(&t, '=', line_length);
    int64_t trainable = 0, non_trainable = 0;
    bool first = true, unknown_params = false, unknown_shapes = false;
    for (int i = 0; i < n; i++) {
        const tw_layer *l = model->children[i];
        trainable += info[i].trainable_params;
        non_trainable += info[i].non_trainable_params;
        unknown_params |= info[i].params_unknown;
        unknown_shapes |= !tw_shape_known(&info[i].output);
        if (!strcmp(l->klass->name, "InputLayer"))
            continue;
        if (!first)
            rule(&t, '_', line_length);
        first = false;
        char name[160], shape[128], params[32];
        snprintf(name, sizeof name, "%s (%s)", l->name, tw_layer_class_shown(l));
        tw_shape_format(&info[i].output, shape, sizeof shape);
        param_text(&info[i], params, sizeof params);
        row(&t, stops, (const char *const[]){name, shape, params});
    }
    rule(&t, '=', line_length);
    totals(&t, trainable, non_trainable, unknown_params, unknown_shapes, line_length);
    free(info);
    return t.buf;
}
