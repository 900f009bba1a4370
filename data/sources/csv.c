/* CSV with a header row: numeric feature columns and a label column.
 *
 * Fields are separated by commas and records by newlines (LF or CRLF);
 * a field that starts with a double quote is quoted as in RFC 4180 (it may
 * hold commas, newlines and doubled quotes). Numbers are read the same in
 * every locale. Messages read "FILE:LINE:COLUMN: ...", with COLUMN the
 * 1-based field number. Empty lines at the end are allowed. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"
#include "file_bytes.h"

typedef struct {
    const char *text;
    size_t size, pos;
    long line; /* the line at pos, 1-based */
    const char *name;
    GString *cell; /* the contents of the field just read */
} reader;

/* A cell quoted for a message: printable ASCII as is, other bytes as \xNN,
 * long cells cut short. */
static char *quote_text(const char *text, size_t len)
{
    GString *q = g_string_new("'");
    size_t limit = 40;
    for (size_t i = 0; i < len && i < limit; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            g_string_append_c(q, (char)ch);
        else
            g_string_append_printf(q, "\\x%02x", ch);
    }
    if (len > limit)
        g_string_append(q, "...");
    g_string_append_c(q, '\'');
    return g_string_free(q, FALSE);
}

static char *quote_cell(const GString *cell)
{
    return quote_text(cell->str, cell->len);
}

static bool at_end(const reader *r)
{
    return r->pos >= r->size;
}

/* Whether the rest of the current line is only spaces (and a CR). */
static bool blank_line_ahead(const reader *r)
{
    for (size_t p = r->pos; p < r->size && r->text[p] != '\n'; p++)
        if (r->text[p] != ' ' && r->text[p] != '\t' && r->text[p] != '\r')
            return false;
    return true;
}

/* Whether everything left is blank lines. */
static bool only_blank_left(const reader *r)
{
    for (size_t p = r->pos; p < r->size; p++)
        if (r->text[p] != ' ' && r->text[p] != '\t' && r->text[p] != '\r' && r->text[p] != '\n')
            return false;
    return true;
}

/* Read one field into r->cell. Returns 1 when another field of the same
 * record follows, 0 when the record ended (its newline consumed), -1 on an
 * error (set). `column` is only for messages. */
static int read_field(reader *r, int column)
{
    g_string_truncate(r->cell, 0);
    if (!at_end(r) && r->text[r->pos] == '"') {
        long start_line = r->line;
        r->pos++;
        for (;;) {
            if (at_end(r))
                return tw_error_set("%s:%ld:%d: the quoted field that starts here is not closed", r->name,
                                    start_line, column);
            char ch = r->text[r->pos++];
            if (ch == '"') {
                if (!at_end(r) && r->text[r->pos] == '"') {
                    g_string_append_c(r->cell, '"');
                    r->pos++;
                    continue;
                }
                break;
            }
            if (ch == '\n')
                r->line++;
            g_string_append_c(r->cell, ch);
        }
        while (!at_end(r) && (r->text[r->pos] == ' ' || r->text[r->pos] == '\t' || r->text[r->pos] == '\r'))
            r->pos++;
        if (!at_end(r) && r->text[r->pos] != ',' && r->text[r->pos] != '\n') {
            char ch = r->text[r->pos];
            if (ch >= 0x20 && ch < 0x7f)
                return tw_error_set("%s:%ld:%d: unexpected '%c' after the closing quote of a field", r->name,
                                    r->line, column, ch);
            return tw_error_set("%s:%ld:%d: unexpected byte 0x%02x after the closing quote of a field", r->name,
                                r->line, column, (unsigned char)ch);
        }
    } else {
        size_t start = r->pos;
        while (!at_end(r) && r->text[r->pos] != ',' && r->text[r->pos] != '\n')
            r->pos++;
        size_t end = r->pos;
        if (end > start && r->text[end - 1] == '\r' && (at_end(r) || r->text[r->pos] == '\n'))
            end--;
        g_string_append_len(r->cell, r->text + start, (gssize)(end - start));
    }
    if (at_end(r))
        return 0;
    if (r->text[r->pos++] == ',')
        return 1;
    r->line++;
    return 0;
}

/* The cell without surrounding spaces, NUL-terminated in place. */
static const char *trimmed(GString *cell, size_t *len)
{
    size_t b = 0, e = cell->len;
    while (b < e && g_ascii_isspace(cell->str[b]))
        b++;
    while (e > b && g_ascii_isspace(cell->str[e - 1]))
        e--;
    cell->str[e] = '\0';
    *len = e - b;
    return cell->str + b;
}

static bool parse_number(GString *cell, double *value)
{
    size_t len;
    const char *s = trimmed(cell, &len);
    if (len == 0 || strlen(s) != len)
        return false;
    char *end;
    *value = g_ascii_strtod(s, &end);
    return end == s + len;
}

static bool parse_integer(GString *cell, int64_t *value)
{
    size_t len;
    const char *s = trimmed(cell, &len);
    if (len == 0 || strlen(s) != len)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s + len && errno == 0) {
        *value = v;
        return true;
    }
    /* "3.0" is the integer 3. */
    double d = g_ascii_strtod(s, &end);
    if (end != s + len || !(d >= -9.2e18 && d <= 9.2e18) || d != (double)(int64_t)d)
        return false;
    *value = (int64_t)d;
    return true;
}

typedef struct {
    float *data;
    size_t len, cap;
} float_buf;

typedef struct {
    int64_t *data;
    size_t len, cap;
} int_buf;

static bool grow(void **data, size_t *cap, size_t need, size_t item)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 1024;
    while (c < need) {
        if (c > SIZE_MAX / 2 / item)
            return false;
        c *= 2;
    }
    void *p = realloc(*data, c * item);
    if (!p)
        return false;
    *data = p;
    *cap = c;
    return true;
}

/* A reference of ours turned into the caller's: tracked by the caller's
 * open scope when there is one (tw_contiguous of a contiguous tensor is a
 * new reference to the tensor itself). */
static tw_tensor *hand_over(tw_tensor *mine)
{
    tw_tensor *t = tw_contiguous(mine);
    tw_tensor_unref(mine);
    return t;
}

int tw_csv_parse(const char *text, size_t size, const char *name, const tw_csv_options *options,
                 tw_tensor **features, tw_tensor **labels)
{
    if (!name)
        name = "csv";
    if (labels)
        *labels = NULL;
    if (!features)
        return tw_error_set("%s: the features output is NULL", name);
    *features = NULL;
    if (!text && size > 0)
        return tw_error_set("%s: the text pointer is NULL", name);
    const char *label_name = options ? options->label_column : NULL;
    int classes = options ? options->one_hot_classes : 0;
    if (classes < 0)
        return tw_error_set("%s: one_hot_classes is %d; it must be 0 (integer labels) or a number of classes", name,
                            classes);
    if (classes > 0 && !label_name)
        return tw_error_set("%s: one_hot_classes is %d but no label column is named", name, classes);

    reader r = {text, size, 0, 1, name, g_string_new(NULL)};
    GPtrArray *columns = g_ptr_array_new_with_free_func(g_free);
    float_buf feats = {0};
    int_buf labs = {0};
    int rc = -1;
    char *quoted = NULL;

    if (size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        r.pos = 3; /* a UTF-8 byte order mark */
    if (only_blank_left(&r)) {
        tw_error_set("%s:1: the file is empty; a CSV file starts with a header row of column names", name);
        goto done;
    }
    /* The header row. */
    for (;;) {
        int more = read_field(&r, (int)columns->len + 1);
        if (more < 0)
            goto done;
        size_t len;
        const char *s = trimmed(r.cell, &len);
        g_ptr_array_add(columns, g_strndup(s, len));
        if (!more)
            break;
        if (columns->len >= INT32_MAX / 2) {
            tw_error_set("%s:1: too many columns", name);
            goto done;
        }
    }
    int ncols = (int)columns->len;
    int label_col = -1;
    if (label_name) {
        for (int c = 0; c < ncols && label_col < 0; c++)
            if (strcmp(columns->pdata[c], label_name) == 0)
                label_col = c;
        if (label_col < 0) {
            GString *list = g_string_new(NULL);
            for (int c = 0; c < ncols; c++) {
                char *q = quote_text(columns->pdata[c], strlen(columns->pdata[c]));
                g_string_append_printf(list, "%s%s", c ? ", " : "", q);
                g_free(q);
            }
            tw_error_set("%s:1: no label column '%s' in the header; the columns are: %s", name, label_name,
                         list->str);
            g_string_free(list, TRUE);
            goto done;
        }
    }
    int nfeat = ncols - (label_col >= 0);
    if (nfeat == 0) {
        tw_error_set("%s:1: the only column is the label column '%s'; there are no feature columns", name,
                     label_name);
        goto done;
    }

    /* The data rows. */
    int64_t rows = 0;
    while (!at_end(&r)) {
        if (blank_line_ahead(&r)) {
            if (only_blank_left(&r))
                break;
            tw_error_set("%s:%ld: empty line in the middle of the data (each row needs %d fields)", name, r.line,
                         ncols);
            goto done;
        }
        long line = r.line;
        if (!grow((void **)&feats.data, &feats.cap, feats.len + (size_t)nfeat, sizeof(float)) ||
            (label_col >= 0 && !grow((void **)&labs.data, &labs.cap, labs.len + 1, sizeof(int64_t)))) {
            tw_error_set("%s:%ld: out of memory after %lld rows", name, line, (long long)rows);
            goto done;
        }
        int col = 0, more;
        do {
            if (col == INT_MAX - 1) {
                tw_error_set("%s:%ld: the row has more than %d fields", name, line, INT_MAX - 2);
                goto done;
            }
            more = read_field(&r, col + 1);
            if (more < 0)
                goto done;
            if (col < ncols) {
                if (col == label_col) {
                    int64_t v;
                    if (!parse_integer(r.cell, &v)) {
                        quoted = quote_cell(r.cell);
                        tw_error_set("%s:%ld:%d: label %s is not an integer (column '%s')", name, line, col + 1,
                                     quoted, label_name);
                        goto done;
                    }
                    if (classes > 0 && (v < 0 || v >= classes)) {
                        tw_error_set("%s:%ld:%d: label %lld is out of range for %d classes (0 to %d)", name, line,
                                     col + 1, (long long)v, classes, classes - 1);
                        goto done;
                    }
                    labs.data[labs.len] = v;
                } else {
                    double v;
                    if (!parse_number(r.cell, &v)) {
                        quoted = quote_cell(r.cell);
                        char *colname = quote_text(columns->pdata[col], strlen(columns->pdata[col]));
                        tw_error_set("%s:%ld:%d: %s is not a number (column %s)", name, line, col + 1, quoted,
                                     colname);
                        g_free(colname);
                        goto done;
                    }
                    feats.data[feats.len + (size_t)(col - (label_col >= 0 && col > label_col))] = (float)v;
                }
            }
            col++;
        } while (more);
        if (col != ncols) {
            tw_error_set("%s:%ld: the row has %d field%s but the header has %d column%s", name, line, col,
                         col == 1 ? "" : "s", ncols, ncols == 1 ? "" : "s");
            goto done;
        }
        feats.len += (size_t)nfeat;
        if (label_col >= 0)
            labs.len++;
        rows++;
    }

    /* The tensors. */
    if (classes > 0 && labels && rows > 0 && (uint64_t)classes > (uint64_t)INT64_MAX / 8 / (uint64_t)rows) {
        tw_error_set("%s: %lld rows of %d one-hot classes are more than can be addressed", name, (long long)rows,
                     classes);
        goto done;
    }
    tw_scope_begin();
    tw_tensor *f = tw_tensor_empty_on(TW_CPU, TW_FLOAT32, TW_SHAPE(rows, nfeat));
    if (f && feats.len)
        memcpy(tw_tensor_data(f), feats.data, feats.len * sizeof(float));
    tw_tensor *l = NULL;
    if (f && label_col >= 0 && labels) {
        if (classes > 0) {
            l = tw_tensor_empty_on(TW_CPU, TW_FLOAT32, TW_SHAPE(rows, classes));
            if (l) {
                float *onehot = tw_tensor_data(l);
                memset(onehot, 0, sizeof(float) * (size_t)(rows * classes));
                for (int64_t i = 0; i < rows; i++)
                    onehot[i * classes + labs.data[i]] = 1.0f;
            }
        } else {
            l = tw_tensor_empty_on(TW_CPU, TW_INT64, TW_SHAPE(rows));
            if (l && labs.len)
                memcpy(tw_tensor_data(l), labs.data, labs.len * sizeof(int64_t));
        }
    }
    bool ok = f && (l || label_col < 0 || !labels);
    tw_tensor_ref(f);
    tw_tensor_ref(l);
    tw_scope_end();
    if (!ok) {
        tw_tensor_unref(f);
        tw_tensor_unref(l);
        goto done;
    }
    *features = hand_over(f);
    if (!*features) {
        tw_tensor_unref(l);
        goto done;
    }
    if (l) {
        *labels = hand_over(l);
        if (!*labels) {
            *features = NULL; /* it belongs to the caller's scope, which releases it */
            goto done;
        }
    }
    rc = 0;

done:
    g_free(quoted);
    free(feats.data);
    free(labs.data);
    g_ptr_array_free(columns, TRUE);
    g_string_free(r.cell, TRUE);
    return rc;
}

tw_dataset *tw_dataset_csv(const char *path, const tw_csv_options *options)
{
    size_t size;
    uint8_t *bytes = tw__file_bytes(path, NULL, &size);
    if (!bytes)
        return NULL;
    tw_dataset *ds = NULL;
    tw_scope_begin();
    tw_tensor *features, *labels;
    if (tw_csv_parse((const char *)bytes, size, path, options, &features, &labels) == 0) {
        ds = labels ? tw_dataset_from_tensors(TW_TENSORS(features, labels))
                    : tw_dataset_from_tensors(TW_TENSORS(features));
    }
    if (ds) {
        g_free(ds->name);
        ds->name = g_strdup("csv");
    }
    tw_scope_end();
    free(bytes);
    return ds;
}
