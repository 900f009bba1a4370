/* Printing tensors the way TensorFlow's eager tensors print:
 *
 *     tw.Tensor(
 *     [[1 2]
 *      [3 4]], shape=(2, 2), dtype=int32)
 *
 * The values are laid out as NumPy's str() lays out an array (TensorFlow
 * prints tensor.numpy()): NumPy's default options (precision 8, line width
 * 75, summarised with "..." and 3 items at each edge of every axis when there
 * are more than 1000 elements), its float formatting ("1." for integral
 * floats, the shortest digits that read back as the same value, columns
 * aligned, scientific notation when the magnitudes call for it), " True" and
 * "False" for bools. A 0-d tensor prints as NumPy prints a scalar ("6.0").
 * When the values take more than one line they start on a line of their own.
 *
 * Shortest digits are found by asking printf for 1, 2, ... significant digits
 * until the text reads back (strtof for float32, strtod for float64) as the
 * same value; that agrees with NumPy's Dragon4 except, possibly, in rare ties
 * at powers of two. Checked against NumPy 1.24's str() on a few thousand
 * random arrays of every dtype, rank and magnitude. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PRINT_THRESHOLD 1000 /* summarise above this many elements */
#define PRINT_EDGE_ITEMS 3
#define PRINT_LINE_WIDTH 75
#define PRINT_PRECISION 8

/* ---- a growing string ------------------------------------------------------ */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_reserve(strbuf *s, size_t extra)
{
    if (s->failed || s->len + extra + 1 <= s->cap)
        return;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + extra + 1)
        cap *= 2;
    char *p = realloc(s->data, cap);
    if (!p) {
        s->failed = true;
        return;
    }
    s->data = p;
    s->cap = cap;
}

static void sb_append(strbuf *s, const char *text, size_t n)
{
    sb_reserve(s, n);
    if (s->failed)
        return;
    memcpy(s->data + s->len, text, n);
    s->len += n;
    s->data[s->len] = '\0';
}

static void sb_puts(strbuf *s, const char *text)
{
    sb_append(s, text, strlen(text));
}

static void sb_spaces(strbuf *s, int n)
{
    for (int i = 0; i < n; i++)
        sb_append(s, " ", 1);
}

static void sb_free(strbuf *s)
{
    free(s->data);
    *s = (strbuf){0};
}

/* ---- reading elements of any layout --------------------------------------- */
typedef struct {
    const tw_tensor *t;
    const char *base; /* storage data */
    size_t itemsize;
} reader;

static const void *element(const reader *r, const int64_t *index)
{
    int64_t off = r->t->offset;
    for (int d = 0; d < r->t->ndim; d++)
        off += index[d] * r->t->strides[d];
    return r->base + off * (int64_t)r->itemsize;
}

static double element_double(const reader *r, const int64_t *index)
{
    const void *p = element(r, index);
    return r->t->dtype == TW_FLOAT32 ? (double)*(const float *)p : *(const double *)p;
}

static long long element_integer(const reader *r, const int64_t *index)
{
    const void *p = element(r, index);
    switch (r->t->dtype) {
    case TW_INT32: return *(const int32_t *)p;
    case TW_INT64: return *(const int64_t *)p;
    case TW_UINT8: return *(const uint8_t *)p;
    case TW_BOOL: return *(const uint8_t *)p != 0;
    default: return 0;
    }
}

/* ---- shortest decimal digits ---------------------------------------------- */
/* |v| (finite) as digits d1 d2 ... dn (no trailing zeros; "0" for zero) and
 * the decimal exponent of d1: |v| = d1.d2...dn x 10^exp10. */
typedef struct {
    char digits[40];
    int ndigits;
    int exp10;
} decimal;

static void parse_sci(const char *text, decimal *out)
{
    /* text is "d.ddde[+-]xx" or "de[+-]xx" from %e */
    int n = 0;
    const char *c = text;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && n < (int)sizeof out->digits - 1)
            out->digits[n++] = *c;
    out->exp10 = *c == 'e' ? atoi(c + 1) : 0;
    while (n > 1 && out->digits[n - 1] == '0')
        n--;
    out->digits[n] = '\0';
    out->ndigits = n;
    if (n == 1 && out->digits[0] == '0')
        out->exp10 = 0;
}

static void shortest(double v, bool single, decimal *out)
{
    char text[64];
    double a = fabs(v);
    if (a == 0.0) {
        parse_sci("0e+00", out);
        return;
    }
    int max_precision = single ? 8 : 16; /* 9 and 17 significant digits always read back */
    for (int p = 0; p <= max_precision; p++) {
        snprintf(text, sizeof text, "%.*e", p, a);
        bool same = single ? strtof(text, NULL) == (float)a : strtod(text, NULL) == a;
        if (same || p == max_precision)
            break;
    }
    parse_sci(text, out);
}

/* Shortest scientific digits, rounded to at most max_frac digits after d1. */
static void scientific_digits(double v, bool single, int max_frac, decimal *out)
{
    shortest(v, single, out);
    if (max_frac < 0 || out->ndigits - 1 <= max_frac)
        return;
    char text[64];
    snprintf(text, sizeof text, "%.*e", max_frac, fabs(v));
    parse_sci(text, out);
}

/* Positional text of v in two parts, sign and integer digits ("-12") and
 * fraction digits ("5", possibly empty): the shortest digits, or when they
 * need more than max_frac (>= 0) fraction digits, the value rounded there
 * with trailing zeros dropped. */
static void positional_parts(double v, bool single, int max_frac, strbuf *int_part, strbuf *frac_part)
{
    decimal d;
    shortest(v, single, &d);
    if (signbit(v))
        sb_puts(int_part, "-");
    int frac = d.ndigits - 1 - d.exp10;
    if (max_frac >= 0 && frac < 0) {
        /* NumPy's arrays print every integer digit of the exact value
         * (float32 38035272 is "38035272.", not the shortest "38035270.");
         * such a value is an integer, %.0f is exact */
        char text[400];
        snprintf(text, sizeof text, "%.0f", fabs(v));
        sb_puts(int_part, text);
        return;
    }
    if (max_frac >= 0 && frac > max_frac) {
        char text[400];
        snprintf(text, sizeof text, "%.*f", max_frac, fabs(v));
        char *dot = strchr(text, '.');
        size_t n = dot ? strlen(dot + 1) : 0;
        while (n > 0 && dot[n] == '0')
            n--;
        sb_append(int_part, text, dot ? (size_t)(dot - text) : strlen(text));
        if (n)
            sb_append(frac_part, dot + 1, n);
        return;
    }
    if (d.exp10 < 0) {
        sb_puts(int_part, "0");
        for (int i = 0; i < -d.exp10 - 1; i++)
            sb_puts(frac_part, "0");
        sb_append(frac_part, d.digits, (size_t)d.ndigits);
        return;
    }
    int int_digits = d.exp10 + 1;
    for (int i = 0; i < int_digits; i++)
        sb_append(int_part, i < d.ndigits ? &d.digits[i] : "0", 1);
    if (d.ndigits > int_digits)
        sb_append(frac_part, d.digits + int_digits, (size_t)(d.ndigits - int_digits));
}

static void exponent_text(int exp10, int min_digits, strbuf *out)
{
    char text[32];
    snprintf(text, sizeof text, "e%c%0*d", exp10 < 0 ? '-' : '+', min_digits, abs(exp10));
    sb_puts(out, text);
}

/* ---- NumPy's str() of a scalar ------------------------------------------- */
static void format_scalar(const reader *r, strbuf *out)
{
    int64_t index[TW_MAX_DIMS] = {0};
    char text[64];
    switch (r->t->dtype) {
    case TW_FLOAT32:
    case TW_FLOAT64: {
        double v = element_double(r, index);
        if (isnan(v)) {
            sb_puts(out, "nan");
            return;
        }
        if (isinf(v)) {
            sb_puts(out, v < 0 ? "-inf" : "inf");
            return;
        }
        decimal d;
        shortest(v, r->t->dtype == TW_FLOAT32, &d);
        double a = fabs(v);
        if (a == 0.0 || (a >= 1e-4 && a < 1e16)) {
            strbuf ip = {0}, fp = {0};
            positional_parts(v, r->t->dtype == TW_FLOAT32, -1, &ip, &fp);
            if (ip.data)
                sb_puts(out, ip.data);
            sb_puts(out, ".");
            sb_puts(out, fp.len ? fp.data : "0");
            sb_free(&ip);
            sb_free(&fp);
        } else {
            if (signbit(v))
                sb_puts(out, "-");
            sb_append(out, d.digits, 1);
            if (d.ndigits > 1) {
                sb_puts(out, ".");
                sb_append(out, d.digits + 1, (size_t)(d.ndigits - 1));
            }
            exponent_text(d.exp10, 2, out);
        }
        return;
    }
    case TW_BOOL:
        sb_puts(out, element_integer(r, index) ? "True" : "False");
        return;
    default:
        snprintf(text, sizeof text, "%lld", element_integer(r, index));
        sb_puts(out, text);
        return;
    }
}

/* ---- the array formatter (NumPy's IntegerFormat, FloatingFormat,
 * BoolFormat), fitted to the elements that will be shown ----------------- */
typedef struct {
    reader r;
    bool summarise;
    bool is_float, single;
    int int_width; /* integers: widest value */
    /* floats */
    bool exp_format;
    int pad_left, pad_right; /* positional: integer and fraction widths */
    int precision, exp_size; /* scientific: fraction digits, exponent digits */
    /* first pass */
    bool any_finite, any_nonfinite, neg_inf;
    double min_abs, max_abs; /* over finite non-zero values */
    bool any_nonzero;
} printer;

typedef void (*visit_fn)(printer *p, const int64_t *index);

/* Visit the shown elements in order: all of them, or the edges of every axis
 * longer than twice the edge items when summarising. */
static void visit(printer *p, int axis, int64_t *index, visit_fn fn)
{
    const tw_tensor *t = p->r.t;
    if (axis == t->ndim) {
        fn(p, index);
        return;
    }
    int64_t n = t->shape[axis];
    bool cut = p->summarise && n > 2 * PRINT_EDGE_ITEMS;
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == PRINT_EDGE_ITEMS)
            i = n - PRINT_EDGE_ITEMS;
        index[axis] = i;
        visit(p, axis + 1, index, fn);
    }
}

static void scan_integer(printer *p, const int64_t *index)
{
    char text[32];
    int w = snprintf(text, sizeof text, "%lld", element_integer(&p->r, index));
    if (w > p->int_width)
        p->int_width = w;
}

static void scan_magnitude(printer *p, const int64_t *index)
{
    double v = element_double(&p->r, index);
    if (!isfinite(v)) {
        p->any_nonfinite = true;
        if (isinf(v) && v < 0)
            p->neg_inf = true;
        return;
    }
    p->any_finite = true;
    double a = fabs(v);
    if (a == 0.0)
        return;
    if (!p->any_nonzero || a < p->min_abs)
        p->min_abs = a;
    if (!p->any_nonzero || a > p->max_abs)
        p->max_abs = a;
    p->any_nonzero = true;
}

static void scan_widths(printer *p, const int64_t *index)
{
    double v = element_double(&p->r, index);
    if (!isfinite(v))
        return;
    decimal d;
    if (p->exp_format) {
        scientific_digits(v, p->single, PRINT_PRECISION, &d);
        int int_len = signbit(v) ? 2 : 1;
        int frac_len = d.ndigits - 1;
        char text[16];
        int exp_len = snprintf(text, sizeof text, "%02d", abs(d.exp10));
        if (int_len > p->pad_left)
            p->pad_left = int_len;
        if (frac_len > p->precision)
            p->precision = frac_len;
        if (exp_len > p->exp_size)
            p->exp_size = exp_len;
    } else {
        strbuf ip = {0}, fp = {0};
        positional_parts(v, p->single, PRINT_PRECISION, &ip, &fp);
        if ((int)ip.len > p->pad_left)
            p->pad_left = (int)ip.len;
        if ((int)fp.len > p->pad_right)
            p->pad_right = (int)fp.len;
        sb_free(&ip);
        sb_free(&fp);
    }
}

static void fit_formatter(printer *p)
{
    int64_t index[TW_MAX_DIMS] = {0};
    if (!p->is_float) {
        if (p->r.t->dtype != TW_BOOL)
            visit(p, 0, index, scan_integer);
        return;
    }
    visit(p, 0, index, scan_magnitude);
    if (p->any_nonzero &&
        (p->max_abs >= 1e8 || p->min_abs < 0.0001 || p->max_abs / p->min_abs > 1000.0))
        p->exp_format = true;
    if (p->any_finite) {
        visit(p, 0, index, scan_widths);
        if (p->exp_format)
            p->pad_right = p->exp_size + 2 + p->precision;
    }
    if (p->any_nonfinite) {
        int offset = p->pad_right + 1;
        int nan_len = 3, inf_len = 3 + (p->neg_inf ? 1 : 0);
        if (nan_len - offset > p->pad_left)
            p->pad_left = nan_len - offset;
        if (inf_len - offset > p->pad_left)
            p->pad_left = inf_len - offset;
    }
}

static void format_element(const printer *p, const int64_t *index, strbuf *out)
{
    char text[64];
    if (!p->is_float) {
        if (p->r.t->dtype == TW_BOOL) {
            sb_puts(out, element_integer(&p->r, index) ? " True" : "False");
            return;
        }
        snprintf(text, sizeof text, "%*lld", p->int_width, element_integer(&p->r, index));
        sb_puts(out, text);
        return;
    }
    double v = element_double(&p->r, index);
    if (!isfinite(v)) {
        const char *word = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
        sb_spaces(out, p->pad_left + p->pad_right + 1 - (int)strlen(word));
        sb_puts(out, word);
        return;
    }
    decimal d;
    if (p->exp_format) {
        /* NumPy's min_digits: values whose shortest form is shorter than
         * the widest get more of their own digits (not zeros), rounded */
        scientific_digits(v, p->single, PRINT_PRECISION, &d);
        if (d.ndigits - 1 < p->precision) {
            snprintf(text, sizeof text, "%.*e", p->precision, fabs(v));
            parse_sci(text, &d);
        }
        int int_len = signbit(v) ? 2 : 1;
        sb_spaces(out, p->pad_left - int_len);
        if (signbit(v))
            sb_puts(out, "-");
        sb_append(out, d.digits, 1);
        sb_puts(out, ".");
        sb_append(out, d.digits + 1, (size_t)(d.ndigits - 1));
        for (int i = d.ndigits - 1; i < p->precision; i++)
            sb_puts(out, "0");
        exponent_text(d.exp10, p->exp_size, out);
        return;
    }
    strbuf ip = {0}, fp = {0};
    positional_parts(v, p->single, PRINT_PRECISION, &ip, &fp);
    sb_spaces(out, p->pad_left - (int)ip.len);
    if (ip.len)
        sb_puts(out, ip.data);
    sb_puts(out, ".");
    if (fp.len)
        sb_puts(out, fp.data);
    sb_spaces(out, p->pad_right - (int)fp.len);
    sb_free(&ip);
    sb_free(&fp);
}

/* ---- NumPy's _formatArray ------------------------------------------------- */
/* Append word to line, first moving line to s when it would grow past width
 * (unless wrapping would not help: the line holds only the indent). */
static void extend_line(strbuf *s, strbuf *line, const strbuf *word, int width, int indent)
{
    bool wrap = (int)(line->len + word->len) > width && (int)line->len > indent;
    if (wrap) {
        size_t n = line->len;
        while (n > 0 && line->data[n - 1] == ' ')
            n--;
        sb_append(s, line->data, n);
        sb_puts(s, "\n");
        line->len = 0;
        if (line->data)
            line->data[0] = '\0';
        sb_spaces(line, indent);
    }
    if (word->len)
        sb_append(line, word->data, word->len);
}

static void format_array(const printer *p, int axis, int64_t *index, int indent, int width, strbuf *out)
{
    const tw_tensor *t = p->r.t;
    if (axis == t->ndim) {
        format_element(p, index, out);
        return;
    }
    int axes_left = t->ndim - axis;
    int64_t n = t->shape[axis];
    bool cut = p->summarise && n > 2 * PRINT_EDGE_ITEMS;
    int64_t leading = cut ? PRINT_EDGE_ITEMS : 0;
    int64_t trailing = cut ? PRINT_EDGE_ITEMS : n;
    strbuf s = {0};
    strbuf word = {0};
    const strbuf ellipsis = {(char *)"...", 3, 4, false};

    if (axes_left == 1) {
        int elem_width = width - 1; /* room for "]" */
        strbuf line = {0};
        sb_spaces(&line, indent);
        for (int64_t i = 0; i < leading; i++) {
            index[axis] = i;
            word.len = 0;
            format_array(p, axis + 1, index, indent + 1, width - 1, &word);
            extend_line(&s, &line, &word, elem_width, indent);
            sb_puts(&line, " ");
        }
        if (cut) {
            extend_line(&s, &line, &ellipsis, elem_width, indent);
            sb_puts(&line, " ");
        }
        for (int64_t i = trailing; i >= 1; i--) {
            index[axis] = n - i;
            word.len = 0;
            format_array(p, axis + 1, index, indent + 1, width - 1, &word);
            extend_line(&s, &line, &word, elem_width, indent);
            if (i > 1)
                sb_puts(&line, " ");
        }
        if (line.len)
            sb_append(&s, line.data, line.len);
        sb_free(&line);
    } else {
        /* rows separated by axes_left - 1 newlines, "..." in place of the
         * middle rows when summarising */
        int newlines = axes_left - 1;
        for (int64_t i = 0; i < n; i++) {
            if (cut && i == leading) {
                sb_spaces(&s, indent);
                sb_puts(&s, "...");
                for (int j = 0; j < newlines; j++)
                    sb_puts(&s, "\n");
                i = n - trailing;
            }
            index[axis] = i;
            word.len = 0;
            format_array(p, axis + 1, index, indent + 1, width - 1, &word);
            sb_spaces(&s, indent);
            if (word.len)
                sb_append(&s, word.data, word.len);
            if (i + 1 < n)
                for (int j = 0; j < newlines; j++)
                    sb_puts(&s, "\n");
        }
    }
    sb_puts(out, "[");
    if (s.len > (size_t)indent)
        sb_append(out, s.data + indent, s.len - (size_t)indent);
    sb_puts(out, "]");
    if (s.failed || word.failed)
        out->failed = true;
    sb_free(&s);
    sb_free(&word);
}

/* ---- public ------------------------------------------------------------------ */
static void format_values(const tw_tensor *t, strbuf *out)
{
    printer p = {0};
    p.r.t = t;
    p.r.base = t->storage->data;
    p.r.itemsize = tw_dtype_size(t->dtype);
    if (t->ndim == 0) {
        format_scalar(&p.r, out);
        return;
    }
    if (t->numel == 0) {
        sb_puts(out, "[]");
        return;
    }
    p.summarise = t->numel > PRINT_THRESHOLD;
    p.is_float = tw_dtype_is_float(t->dtype);
    p.single = t->dtype == TW_FLOAT32;
    fit_formatter(&p);
    int64_t index[TW_MAX_DIMS] = {0};
    format_array(&p, 0, index, 1, PRINT_LINE_WIDTH, out);
}

char *tw_tensor_to_string(const tw_tensor *t)
{
    if (!t) {
        tw__check_inputs("tensor_to_string", 1, (tw_tensor *const[]){NULL});
        return NULL;
    }
    if ((unsigned)t->dtype >= TW_DTYPE_COUNT) {
        tw_error_set("tensor_to_string: tensor has an invalid dtype %d", (int)t->dtype);
        return NULL;
    }
    /* A shape-only trace (trace.c) left t's values uncomputed: say so. */
    bool computed = tw__trace_computed(t);
    /* Values are read on the CPU: copy from another device first. */
    const tw_tensor *host = t;
    tw_tensor *copy = NULL;
    if (computed && t->storage->device.kind != TW_DEVICE_CPU) {
        tw_scope_begin();
        copy = tw_tensor_ref(tw_tensor_to((tw_tensor *)t, TW_CPU));
        tw_scope_end();
        if (!copy)
            return NULL;
        host = copy;
    }
    strbuf values = {0};
    if (computed)
        format_values(host, &values);
    else
        sb_puts(&values, "<not computed by a shape-only trace>");

    strbuf out = {0};
    char shape[TW_MAX_DIMS * 24 + 8];
    sb_puts(&out, "tw.Tensor(");
    if (values.data && strchr(values.data, '\n'))
        sb_puts(&out, "\n");
    if (values.len)
        sb_append(&out, values.data, values.len);
    sb_puts(&out, ", shape=");
    sb_puts(&out, tw_shape_str(t->ndim, t->shape, shape, sizeof shape));
    sb_puts(&out, ", dtype=");
    sb_puts(&out, tw_dtype_name(t->dtype));
    sb_puts(&out, ")");
    bool failed = values.failed || out.failed;
    sb_free(&values);
    tw_tensor_unref(copy);
    if (failed) {
        sb_free(&out);
        tw_error_set("tensor_to_string: out of memory");
        return NULL;
    }
    return out.data;
}

int tw_tensor_print(const tw_tensor *t, FILE *out)
{
    if (!out)
        return tw_error_set("tensor_print: stream is NULL");
    char *text = tw_tensor_to_string(t);
    if (!text)
        return -1;
    int rc = fprintf(out, "%s\n", text) < 0 ? tw_error_set("tensor_print: cannot write the stream") : 0;
    free(text);
    return rc;
}
