/* Keras' model.summary() table for Sequential models:
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
 * InputLayer rows are left out, as Keras leaves them out. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

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

static void row(text *t, const int *stops, const char *const *fields)
{
    int col = 0;
    for (int i = 0; i < 3; i++) {
        int len = (int)strlen(fields[i]);
        put(t, "%s", fields[i]);
        col += len;
        int target = i < 2 ? stops[i] : col;
        if (col >= target && i < 2)
            target = col + 1;
        for (; col < target; col++)
            put(t, " ");
    }
    put(t, "\n");
}

char *tw_model_summary(const tw_model *model, int line_length)
{
    if (!tw_layer_is_model(model)) {
        tw_error_set("summary: '%s' is not a model", model ? tw_layer_name(model) : "NULL");
        return NULL;
    }
    const tw_shape *in = model->built ? &model->input_shape : tw_model_input_shape(model);
    if (!in) {
        tw_error_set("summary: model '%s' has no input shape; give the first layer one or add an InputLayer",
                     model->name);
        return NULL;
    }
    int n = model->nchildren;
    tw_layer_info *info = calloc(n ? n : 1, sizeof *info);
    if (tw_model_infer(model, in, info) != n) {
        for (int i = 0; i < n; i++)
            if (info[i].error[0])
                tw_error_set("%s", info[i].error);
        free(info);
        return NULL;
    }
    if (line_length <= 0)
        line_length = 65;
    int stops[2] = {line_length * 45 / 100, line_length * 85 / 100};
    text t = {malloc(1024), 0, 1024}; /* put() must never offset a NULL buffer */
    put(&t, "Model: \"%s\"\n", model->name);
    rule(&t, '_', line_length);
    row(&t, stops, (const char *const[]){"Layer (type)", "Output Shape", "Param #"});
    rule(&t, '=', line_length);
    int64_t trainable = 0, non_trainable = 0;
    bool first = true;
    for (int i = 0; i < n; i++) {
        const tw_layer *l = model->children[i];
        trainable += info[i].trainable_params;
        non_trainable += info[i].non_trainable_params;
        if (!strcmp(l->klass->name, "InputLayer"))
            continue;
        if (!first)
            rule(&t, '_', line_length);
        first = false;
        char name[160], shape[128], params[32];
        snprintf(name, sizeof name, "%s (%s)", l->name, l->klass->name);
        tw_shape_format(&info[i].output, shape, sizeof shape);
        with_commas(info[i].trainable_params + info[i].non_trainable_params, params, sizeof params);
        row(&t, stops, (const char *const[]){name, shape, params});
    }
    rule(&t, '=', line_length);
    char a[32], b[32], c[32];
    put(&t, "Total params: %s\nTrainable params: %s\nNon-trainable params: %s\n",
        with_commas(trainable + non_trainable, a, sizeof a), with_commas(trainable, b, sizeof b),
        with_commas(non_trainable, c, sizeof c));
    rule(&t, '_', line_length);
    free(info);
    return t.buf;
}
