/* The parts StringLookup and IntegerLookup share (lookup.h). */
#include <errno.h> /* qsort_r: _GNU_SOURCE is set for the project */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lookup.h"

extern const tw_layer_class tw_layer_class_StringLookup, tw_layer_class_IntegerLookup;

static const char *const output_modes[] = {"int", "one_hot", "multi_hot", "count", "tf_idf", NULL};

const tw_param_def lookup_params[LOOKUP_NPARAMS] = {
    [LOOKUP_MAX_TOKENS] = {"max_tokens", TW_PARAM_INT, "", 1, 1e12, .nullable = true,
                           .help = "The largest vocabulary, mask and OOV indices included; None for no limit"},
    [LOOKUP_NUM_OOV] = {"num_oov_indices", TW_PARAM_INT, "1", 0, 1e6,
                        .help = "Indices for tokens outside the vocabulary (after the mask's 0)"},
    [LOOKUP_OUTPUT_MODE] = {"output_mode", TW_PARAM_CHOICE, "int", .choices = output_modes,
                            .help = "What comes out: \"int\", each token's index (the only mode supported)"},
    [LOOKUP_INVERT] = {"invert", TW_PARAM_BOOL, "false", .help = "Map indices back to tokens; not supported"},
    [LOOKUP_SPARSE] = {"sparse", TW_PARAM_BOOL, "false", .help = "Sparse output (non-int modes only)"},
    [LOOKUP_PAD] = {"pad_to_max_tokens", TW_PARAM_BOOL, "false", .help = "Pad to max_tokens (non-int modes only)"},
};

static bool is_lookup(const tw_layer *layer)
{
    return layer && (layer->klass == &tw_layer_class_StringLookup || layer->klass == &tw_layer_class_IntegerLookup);
}

int64_t lookup_first_index(const tw_layer *self)
{
    const lookup_state *st = self->state;
    return (st->mask_token ? 1 : 0) + tw__param_int(self, LOOKUP_NUM_OOV);
}

static int check_size(const tw_layer *self)
{
    const lookup_state *st = self->state;
    const tw_param_value *max = tw_layer_param(self, LOOKUP_MAX_TOKENS);
    int64_t size = lookup_first_index(self) + st->n;
    if (!max->is_null && size > max->number)
        return TW_LAYER_ERROR(self, "the vocabulary takes %lld indices (mask and OOV included), more than max_tokens=%lld",
                              (long long)size, (long long)max->number);
    return 0;
}

int lookup_configure(tw_layer *self, bool integer, const char *default_oov)
{
    lookup_state *st = self->state;
    if (!st->ready) {
        st->ready = true;
        st->integer = integer;
        st->oov_token = strdup(default_oov);
    }
    const char *mode = tw__param_choice(self, LOOKUP_OUTPUT_MODE);
    if (strcmp(mode, "int"))
        return TW_LAYER_ERROR(self, "output_mode \"%s\" is not supported; only \"int\" (each token's index) is", mode);
    if (tw__param_bool(self, LOOKUP_INVERT))
        return TW_LAYER_ERROR(self, "invert=true (indices back to tokens) is not supported");
    return check_size(self);
}

static void free_tokens(lookup_state *st)
{
    for (int i = 0; i < st->n; i++)
        free(st->tokens[i]);
    free(st->tokens);
    free(st->values);
    free(st->order);
    st->tokens = NULL;
    st->values = NULL;
    st->order = NULL;
    st->n = 0;
}

void lookup_finalize(tw_layer *self)
{
    lookup_state *st = self->state;
    free_tokens(st);
    free(st->mask_token);
    free(st->oov_token);
}

static int by_text(const void *a, const void *b, void *tokens)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(((char **)tokens)[x], ((char **)tokens)[y]);
    return c ? c : (x > y) - (x < y); /* a repeat sorts after the first */
}

static int by_value(const void *a, const void *b, void *values)
{
    int i = *(const int *)a, j = *(const int *)b;
    int64_t x = ((const int64_t *)values)[i], y = ((const int64_t *)values)[j];
    return x != y ? (x > y) - (x < y) : (i > j) - (i < j); /* a repeat sorts after the first */
}

static bool parse_int64(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!text[0] || *end || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* An integer token as written back: "7" for "+7" or " 07". */
static char *canonical(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return strdup(buf);
}

static bool same_token(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

/* Keras' set_vocabulary: the special tokens may lead the list (as
 * get_vocabulary returns it: mask, then OOV) and are dropped there; anywhere
 * else they, and repeated tokens, are refused. */
int tw_lookup_set_vocabulary(tw_layer *layer, int n, const char *const *tokens)
{
    if (!is_lookup(layer))
        return tw_error_set("lookup vocabulary: %s", layer ? "the layer is not a StringLookup or IntegerLookup"
                                                            : "the layer is NULL");
    if (layer->built)
        return TW_LAYER_ERROR(layer, "cannot change the vocabulary after the layer is built");
    if (n < 0 || (n && !tokens))
        return TW_LAYER_ERROR(layer, "the vocabulary is NULL");
    lookup_state *st = layer->state, fresh = {.integer = st->integer};
    int skip = 0;
    if (st->mask_token && skip < n && same_token(tokens[skip], st->mask_token))
        skip++;
    if (st->oov_token && skip < n && same_token(tokens[skip], st->oov_token))
        skip++;
    fresh.n = n - skip;
    fresh.tokens = calloc(fresh.n ? fresh.n : 1, sizeof *fresh.tokens);
    fresh.values = st->integer ? calloc(fresh.n ? fresh.n : 1, sizeof *fresh.values) : NULL;
    fresh.order = calloc(fresh.n ? fresh.n : 1, sizeof *fresh.order);
    int rc = 0;
    for (int i = 0; i < fresh.n && !rc; i++) {
        const char *token = tokens[skip + i];
        if (!token)
            rc = TW_LAYER_ERROR(layer, "vocabulary[%d] is NULL", skip + i);
        else if (same_token(token, st->mask_token) || same_token(token, st->oov_token))
            rc = TW_LAYER_ERROR(layer, "vocabulary[%d] is the %s token \"%s\"; reserved tokens may only lead the list",
                                skip + i, same_token(token, st->mask_token) ? "mask" : "OOV", token);
        else if (st->integer && !parse_int64(token, &fresh.values[i]))
            rc = TW_LAYER_ERROR(layer, "vocabulary[%d]: expected an integer, got \"%s\"", skip + i, token);
        if (!rc)
            fresh.tokens[i] = st->integer ? canonical(fresh.values[i]) : strdup(token);
        fresh.order[i] = i;
    }
    /* Repeats: by value for integers ("07" is 7), by text for strings. */
    if (!rc && st->integer) {
        qsort_r(fresh.order, fresh.n, sizeof *fresh.order, by_value, fresh.values);
        for (int i = 1; i < fresh.n && !rc; i++)
            if (fresh.values[fresh.order[i]] == fresh.values[fresh.order[i - 1]])
                rc = TW_LAYER_ERROR(layer, "vocabulary[%d] repeats %lld", skip + fresh.order[i],
                                    (long long)fresh.values[fresh.order[i]]);
    }
    if (!rc && !st->integer) { /* sorted, so a vocabulary of 10^6 words is checked at once */
        qsort_r(fresh.order, fresh.n, sizeof *fresh.order, by_text, fresh.tokens);
        for (int i = 1; i < fresh.n && !rc; i++) {
            int a = fresh.order[i - 1], b = fresh.order[i];
            if (!strcmp(fresh.tokens[a], fresh.tokens[b]))
                rc = TW_LAYER_ERROR(layer, "vocabulary[%d] repeats \"%s\"", skip + b, fresh.tokens[b]);
        }
    }
    lookup_state old = *st;
    if (!rc) {
        st->n = fresh.n;
        st->tokens = fresh.tokens;
        st->values = fresh.values;
        st->order = fresh.order;
        rc = check_size(layer);
        if (rc) {
            fresh = *st;
            *st = old;
        } else {
            free_tokens(&old);
        }
    }
    if (rc)
        free_tokens(&fresh);
    return rc;
}

int tw_lookup_vocabulary_size(const tw_layer *layer)
{
    return is_lookup(layer) ? ((const lookup_state *)layer->state)->n : -1;
}

const char *tw_lookup_token(const tw_layer *layer, int index)
{
    if (!is_lookup(layer))
        return NULL;
    const lookup_state *st = layer->state;
    return index >= 0 && index < st->n ? st->tokens[index] : NULL;
}

static char **special_slot(const tw_layer *layer, const char *key)
{
    lookup_state *st = layer->state;
    if (!strcmp(key, "mask_token"))
        return &st->mask_token;
    return !strcmp(key, "oov_token") ? &st->oov_token : NULL;
}

int tw_lookup_set_special_token(tw_layer *layer, const char *key, const char *token)
{
    if (!is_lookup(layer))
        return tw_error_set("lookup token: %s", layer ? "the layer is not a StringLookup or IntegerLookup"
                                                       : "the layer is NULL");
    char **slot = key ? special_slot(layer, key) : NULL;
    if (!slot)
        return TW_LAYER_ERROR(layer, "no token \"%s\" (there are mask_token and oov_token)", key ? key : "(null)");
    if (layer->built)
        return TW_LAYER_ERROR(layer, "cannot change %s after the layer is built", key);
    lookup_state *st = layer->state;
    int64_t v = 0;
    if (token && st->integer && !parse_int64(token, &v))
        return TW_LAYER_ERROR(layer, "%s: expected an integer or None, got \"%s\"", key, token);
    for (int i = 0; token && i < st->n; i++)
        if (!strcmp(st->tokens[i], token))
            return TW_LAYER_ERROR(layer, "%s \"%s\" is vocabulary[%d]; it must be outside the vocabulary", key, token,
                                  i);
    char *old = *slot;
    *slot = !token ? NULL : st->integer ? canonical(v) : strdup(token);
    if (check_size(layer)) {
        free(*slot);
        *slot = old;
        return -1;
    }
    free(old);
    return 0;
}

const char *tw_lookup_special_token(const tw_layer *layer, const char *key)
{
    char **slot = is_lookup(layer) && key ? special_slot(layer, key) : NULL;
    return slot ? *slot : NULL;
}

int lookup_clone_extra(tw_layer *copy, const tw_layer *layer)
{
    const lookup_state *st = layer->state;
    if (tw_lookup_set_special_token(copy, "mask_token", st->mask_token) ||
        tw_lookup_set_special_token(copy, "oov_token", st->oov_token))
        return -1;
    return tw_lookup_set_vocabulary(copy, st->n, (const char *const *)st->tokens);
}

int lookup_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw)
{
    char buf[96];
    (void)w;
    if (input->ndim < 1)
        return TW_LAYER_ERROR(self, "expected input (batch, ...) of tokens, got %s",
                              tw_shape_format(input, buf, sizeof buf));
    *output = *input;
    *nw = 0;
    return 0;
}
