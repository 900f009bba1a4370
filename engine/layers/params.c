/* Layer parameters: parsing their text form, checking values against their
 * definitions, and formatting them back. One text form serves the command
 * line, the model files (the JSON reader turns values into text) and the
 * designer's property editor, so all three report bad values the same way. */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "layer_internal.h"

static bool is_none(const char *text)
{
    return !text[0] || !strcasecmp(text, "none") || !strcmp(text, "null");
}

/* Numbers are read in the C locale whatever the program's locale is: model
 * files and the command line write "0.5", never "0,5". */
static locale_t c_numeric;
static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;

static void make_c_numeric(void)
{
    c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
    pthread_once(&c_numeric_once, make_c_numeric);
    return c_numeric;
}

static bool parse_number(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod_l(text, &end, c_locale());
    while (isspace((unsigned char)*end))
        end++;
    if (end == text || *end || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* What the parameter takes. A maximum of 1e9 or more stands for "no real
 * limit" and is left out, unless the value is over it (above): then the
 * whole range is the answer. */
static void describe_range(const tw_param_def *def, bool integer, bool above, char *buf, size_t size)
{
    const char *what = integer ? "integer" : "number";
    if (above || def->max < 1e9) {
        if (integer) /* whole numbers in full: 1000000000, not 1e+09 */
            snprintf(buf, size, "an integer from %.0f to %.0f", def->min, def->max);
        else
            snprintf(buf, size, "a number from %g to %g", def->min, def->max);
    } else if (integer && def->min == 1)
        snprintf(buf, size, "a positive integer");
    else if (def->min == 0)
        snprintf(buf, size, "a non-negative %s", what);
    else
        snprintf(buf, size, "a%s %s of at least %g", integer ? "n" : "", what, def->min);
}

static int range_error(const tw_param_def *def, bool integer, bool above, const char *got, char *err,
                       size_t errsize)
{
    char want[96];
    describe_range(def, integer, above, want, sizeof want);
    snprintf(err, errsize, "expected %s, got %s", want, got);
    return -1;
}

static int check_number(const tw_param_def *def, double v, bool integer, char *err, size_t errsize)
{
    char got[48];
    snprintf(got, sizeof got, "%.17g", v);
    if (!isfinite(v) || v < def->min || v > def->max || (integer && v != floor(v)))
        return range_error(def, integer, v > def->max, got, err, errsize);
    return 0;
}

static int parse_ints(const tw_param_def *def, const char *text, tw_param_value *out, char *err, size_t errsize)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '(' || *p == '[' || *p == ',' || *p == ')' || *p == ']')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        /* None in a tuple whose values may be -1 (Dropout's noise_shape:
         * "the input's size there") is -1. */
        if (end == p && def->min <= -1 && !strncasecmp(p, "none", 4) && n < TW_MAX_DIMS) {
            v = -1;
            end = (char *)p + 4;
        }
        if (end == p || errno || n == TW_MAX_DIMS)
            goto bad;
        out->ints[n++] = v;
        p = end;
    }
    /* Keras takes a single integer where it wants a square tuple. */
    if (n == 1 && def->length > 1)
        for (; n < def->length; n++)
            out->ints[n] = out->ints[0];
    out->n = n;
    if (n == 0 || (def->length && n != def->length))
        goto bad;
    return 0;
bad:
    if (def->length)
        snprintf(err, errsize, "expected %d integer%s such as \"%s\", got \"%s\"", def->length,
                 def->length == 1 ? "" : "s", def->default_value[0] ? def->default_value : "1", text);
    else
        snprintf(err, errsize, "expected a list of integers such as \"7,7,64\", got \"%s\"", text);
    return -1;
}

/* "0.485,0.456,0.406", "[-0.06, 0.06]" or one number: the list is malloc'd
 * into out->floats. */
static int parse_floats(const tw_param_def *def, const char *text, tw_param_value *out, char *err, size_t errsize)
{
    size_t cap = strlen(text) / 2 + 1; /* each number and its separator take two characters at least */
    out->floats = malloc(sizeof(double) * cap);
    if (!out->floats) {
        snprintf(err, errsize, "out of memory reading %zu numbers", cap);
        return -1;
    }
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '(' || *p == '[' || *p == ',' || *p == ')' || *p == ']')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        double v = strtod_l(p, &end, c_locale());
        if (end == p || errno == ERANGE || (size_t)n == cap)
            goto bad;
        out->floats[n++] = v;
        p = end;
    }
    out->n = n;
    if (n == 0 || (def->length && n != def->length))
        goto bad;
    return tw__param_check(def, out, err, errsize);
bad:
    if (def->length)
        snprintf(err, errsize, "expected %d numbers such as \"%s\", got \"%s\"", def->length,
                 def->default_value[0] ? def->default_value : "0.5", text);
    else
        snprintf(err, errsize, "expected a number or a list of numbers such as \"0.5,0.25\", got \"%s\"", text);
    return -1;
}

static int parse_choice(const tw_param_def *def, const char *text, tw_param_value *out, char *err, size_t errsize)
{
    for (int i = 0; def->choices[i]; i++)
        if (!strcasecmp(def->choices[i], text)) {
            out->choice = def->choices[i];
            return 0;
        }
    int len = snprintf(err, errsize, "expected one of");
    for (int i = 0; def->choices[i] && len < (int)errsize; i++)
        len += snprintf(err + len, errsize - len, "%s %s", i ? "," : "", def->choices[i]);
    if (len < (int)errsize)
        snprintf(err + len, errsize - len, "; got \"%s\"", text);
    return -1;
}

/* "l2=0.01", "l1=0.001,l2=0.01", or a bare number meaning l2. */
static int parse_regularizer(const char *text, tw_param_value *out, char *err, size_t errsize)
{
    out->number = out->number2 = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        double v;
        char *eq = strchr(tok, '=');
        const char *num = eq ? eq + 1 : tok;
        if (!parse_number(num, &v) || v < 0 || !isfinite(v))
            goto bad;
        if (!eq || !strncasecmp(tok, "l2=", 3))
            out->number2 = v;
        else if (!strncasecmp(tok, "l1=", 3))
            out->number = v;
        else
            goto bad;
    }
    return 0;
bad:
    snprintf(err, errsize, "expected a penalty such as \"l2=0.01\" or \"l1=0.001,l2=0.01\", got \"%s\"", text);
    return -1;
}

int tw__param_parse(const tw_param_def *def, const char *text, tw_param_value *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    while (isspace((unsigned char)*text))
        text++;
    if (is_none(text)) {
        if (def->nullable || def->type == TW_PARAM_REGULARIZER) {
            out->is_null = true;
            return 0;
        }
        snprintf(err, errsize, "a value is required here, got \"%s\"", text);
        return -1;
    }
    char quoted[160];
    snprintf(quoted, sizeof quoted, "\"%s\"", text);
    switch (def->type) {
    case TW_PARAM_INT:
    case TW_PARAM_FLOAT:
        if (!parse_number(text, &out->number))
            return range_error(def, def->type == TW_PARAM_INT, false, quoted, err, errsize);
        return check_number(def, out->number, def->type == TW_PARAM_INT, err, errsize);
    case TW_PARAM_BOOL:
        if (!strcasecmp(text, "true") || !strcmp(text, "1"))
            out->number = 1;
        else if (!strcasecmp(text, "false") || !strcmp(text, "0"))
            out->number = 0;
        else {
            snprintf(err, errsize, "expected true or false, got %s", quoted);
            return -1;
        }
        return 0;
    case TW_PARAM_CHOICE:
        return parse_choice(def, text, out, err, errsize);
    case TW_PARAM_INTS:
        if (parse_ints(def, text, out, err, errsize))
            return -1;
        return tw__param_check(def, out, err, errsize);
    case TW_PARAM_REGULARIZER:
        return parse_regularizer(text, out, err, errsize);
    case TW_PARAM_FLOATS:
        if (parse_floats(def, text, out, err, errsize)) {
            tw__param_value_clear(out);
            return -1;
        }
        return 0;
    }
    return -1;
}

void tw__param_value_clear(tw_param_value *value)
{
    free(value->floats);
    value->floats = NULL;
}

int tw__param_value_copy(tw_param_value *dst, const tw_param_value *src)
{
    *dst = *src;
    dst->floats = NULL;
    if (!src->floats)
        return 0;
    dst->floats = malloc(sizeof(double) * (src->n ? src->n : 1));
    if (!dst->floats)
        return tw_error_set("out of memory copying %d numbers", src->n);
    memcpy(dst->floats, src->floats, sizeof(double) * src->n);
    return 0;
}

int tw__param_check(const tw_param_def *def, const tw_param_value *value, char *err, size_t errsize)
{
    if (value->is_null) {
        if (def->nullable || def->type == TW_PARAM_REGULARIZER)
            return 0;
        snprintf(err, errsize, "a value is required here, got None");
        return -1;
    }
    switch (def->type) {
    case TW_PARAM_INT:
        return check_number(def, value->number, true, err, errsize);
    case TW_PARAM_FLOAT:
        return check_number(def, value->number, false, err, errsize);
    case TW_PARAM_BOOL:
        return 0;
    case TW_PARAM_CHOICE:
        for (int i = 0; def->choices[i]; i++)
            if (value->choice && !strcmp(def->choices[i], value->choice))
                return 0;
        return parse_choice(def, value->choice ? value->choice : "", (tw_param_value[1]){{0}}, err, errsize);
    case TW_PARAM_INTS:
        if (value->n < 1 || value->n > TW_MAX_DIMS || (def->length && value->n != def->length)) {
            snprintf(err, errsize, "expected %d integers, got %d", def->length, value->n);
            return -1;
        }
        for (int i = 0; i < value->n; i++)
            if (check_number(def, (double)value->ints[i], true, err, errsize))
                return -1;
        return 0;
    case TW_PARAM_FLOATS:
        if (value->n < 1 || !value->floats || (def->length && value->n != def->length)) {
            if (def->length)
                snprintf(err, errsize, "expected %d numbers, got %d", def->length, value->n);
            else
                snprintf(err, errsize, "expected 1 or more numbers, got %d", value->n);
            return -1;
        }
        for (int i = 0; i < value->n; i++)
            if (check_number(def, value->floats[i], false, err, errsize))
                return -1;
        return 0;
    case TW_PARAM_REGULARIZER:
        if (!(value->number >= 0 && value->number2 >= 0 && isfinite(value->number) && isfinite(value->number2))) {
            snprintf(err, errsize, "expected non-negative l1 and l2 penalties, got l1=%g, l2=%g", value->number,
                     value->number2);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* "0.485,0.456,0.406": as long as the list needs. */
static char *format_floats(const tw_param_value *value)
{
    size_t size = (size_t)value->n * 26 + 1, len = 0;
    char *out = malloc(size);
    if (!out)
        return NULL;
    out[0] = '\0';
    locale_t previous = uselocale(c_locale());
    for (int i = 0; i < value->n; i++) {
        /* the shortest of 15 or 17 digits that reads back the same: 0.06, not 0.059999999999999998 */
        char num[32];
        snprintf(num, sizeof num, "%.15g", value->floats[i]);
        if (strtod_l(num, NULL, c_locale()) != value->floats[i])
            snprintf(num, sizeof num, "%.17g", value->floats[i]);
        len += (size_t)snprintf(out + len, size - len, "%s%s", i ? "," : "", num);
    }
    uselocale(previous);
    return out;
}

char *tw__param_format(const tw_param_def *def, const tw_param_value *value)
{
    char buf[256];
    if (value->is_null)
        return strdup("none");
    switch (def->type) {
    case TW_PARAM_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)value->number);
        break;
    case TW_PARAM_FLOAT: {
        locale_t previous = uselocale(c_locale()); /* "0.5" in every locale, as parse reads it */
        snprintf(buf, sizeof buf, "%.9g", value->number);
        uselocale(previous);
        break;
    }
    case TW_PARAM_BOOL:
        snprintf(buf, sizeof buf, "%s", value->number ? "true" : "false");
        break;
    case TW_PARAM_CHOICE:
        snprintf(buf, sizeof buf, "%s", value->choice);
        break;
    case TW_PARAM_INTS: {
        int len = 0;
        buf[0] = '\0';
        for (int i = 0; i < value->n; i++)
            len += snprintf(buf + len, sizeof buf - len, "%s%lld", i ? "," : "", (long long)value->ints[i]);
        break;
    }
    case TW_PARAM_REGULARIZER: {
        locale_t previous = uselocale(c_locale());
        snprintf(buf, sizeof buf, "l1=%.9g,l2=%.9g", value->number, value->number2);
        uselocale(previous);
        break;
    }
    case TW_PARAM_FLOATS:
        return format_floats(value);
    }
    return strdup(buf);
}
