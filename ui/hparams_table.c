/* The HParams table (hparams_table.h). */
#include "hparams_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/json_check.h>

#include "csv_field.h"
#include "hparams_json.h"

typedef enum { OP_NAME, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_RANGE } filter_op;

typedef struct {
    filter_op op;
    int column;      /* -1 for OP_NAME */
    double lo, hi;   /* numbers (OP_RANGE: both) */
    char *text;      /* OP_NAME, string and boolean columns */
} filter_term;

typedef struct {
    int64_t id;
    char *name;
    tw_run_status status;
} row_info;

struct tw_hp_table {
    int nrows, ncolumns;
    row_info *rows;
    GPtrArray *columns;  /* tw_hp_column* */
    tw_hp_value *cells;  /* nrows x ncolumns */
    GStringChunk *texts; /* the cells' and categories' strings */
    GArray *filter;      /* filter_term */
    bool *passes;        /* per row */
};

/* ---- reading the runs' JSON ------------------------------------------------- */
/* What the runs' objects hold: their members (hparams_json.h), read by the
 * fast reader, else by json-glib; names and strings in one chunk. */
typedef struct {
    JsonParser *parser; /* made when a text needs it */
    GStringChunk *chunk;
} reader;

static const char *chunk_text(reader *rd, const char *text)
{
    return g_string_chunk_insert_const(rd->chunk, text);
}

/* json-glib's tree flattened as the fast reader flattens ("a.b"). */
static void flatten(reader *rd, JsonNode *node, const char *prefix, GArray *out)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *o = json_node_get_object(node);
        GList *members = json_object_get_members(o);
        for (GList *m = members; m; m = m->next) {
            char *name = *prefix ? g_strconcat(prefix, ".", m->data, NULL) : g_strdup(m->data);
            flatten(rd, json_object_get_member(o, m->data), chunk_text(rd, name), out);
            g_free(name);
        }
        g_list_free(members);
        return;
    }
    if (!*prefix)
        return;
    tw_hp_json_member m = {prefix, TW_HP_MISSING, 0, NULL};
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType type = json_node_get_value_type(node);
        if (type == G_TYPE_BOOLEAN) {
            m.kind = TW_HP_BOOL;
            m.number = json_node_get_boolean(node);
        } else if (type == G_TYPE_INT64 || type == G_TYPE_DOUBLE) {
            m.kind = TW_HP_NUMBER;
            m.number = json_node_get_double(node);
        } else {
            m.kind = TW_HP_STRING;
            m.text = chunk_text(rd, json_node_get_string(node) ? json_node_get_string(node) : "");
        }
    } else if (!JSON_NODE_HOLDS_NULL(node)) { /* an array: its JSON text */
        char *text = json_to_string(node, FALSE);
        m.kind = TW_HP_STRING;
        m.text = chunk_text(rd, text);
        g_free(text);
    }
    g_array_append_val(out, m);
}

/* The run's flattened object; an absent, unreadable or too deep text is an
 * empty one (a run without settings has no values, nothing more). */
static GArray *read_object(reader *rd, const char *json)
{
    GArray *members = g_array_new(FALSE, FALSE, sizeof(tw_hp_json_member));
    if (!json || tw_json_too_deep(json, -1) >= 0 || tw_hp_json_read(json, rd->chunk, members))
        return members;
    if (!rd->parser)
        rd->parser = json_parser_new();
    if (json_parser_load_from_data(rd->parser, json, -1, NULL) && json_parser_get_root(rd->parser) &&
        JSON_NODE_HOLDS_OBJECT(json_parser_get_root(rd->parser)))
        flatten(rd, json_parser_get_root(rd->parser), "", members);
    return members;
}

static const char *intern(tw_hp_table *t, const char *text)
{
    return g_string_chunk_insert_const(t->texts, text);
}

static tw_hp_value value_of(tw_hp_table *t, const tw_hp_json_member *m)
{
    char buffer[G_ASCII_DTOSTR_BUF_SIZE];
    switch (m->kind) {
    case TW_HP_BOOL: return (tw_hp_value){TW_HP_BOOL, m->number, m->number ? "true" : "false", -1};
    case TW_HP_NUMBER:
        g_snprintf(buffer, sizeof buffer, "%.6g", m->number);
        return (tw_hp_value){TW_HP_NUMBER, m->number, intern(t, buffer), -1};
    case TW_HP_STRING: {
        const char *s = m->text;
        /* the importer writes TensorBoard's non-finite numbers so */
        if (!strcmp(s, "nan") || !strcmp(s, "inf") || !strcmp(s, "-inf"))
            return (tw_hp_value){TW_HP_NUMBER, s[0] == 'n' ? NAN : s[0] == '-' ? -INFINITY : INFINITY, intern(t, s),
                                -1};
        return (tw_hp_value){TW_HP_STRING, NAN, intern(t, s), -1};
    }
    default: return (tw_hp_value){TW_HP_MISSING, NAN, "", -1};
    }
}

/* ---- columns ------------------------------------------------------------------ */
static int compare_strings(const void *a, const void *b)
{
    return g_utf8_collate(*(char *const *)a, *(char *const *)b);
}

/* The names of a role's columns over all runs, sorted. */
static char **column_names(GArray **objects, int n)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < n; i++)
        for (guint k = 0; k < objects[i]->len; k++)
            g_hash_table_add(seen, (gpointer)g_array_index(objects[i], tw_hp_json_member, k).name);
    guint count = 0;
    char **names = (char **)g_hash_table_get_keys_as_array(seen, &count);
    qsort(names, count, sizeof *names, compare_strings);
    g_hash_table_unref(seen);
    return names; /* borrowed strings, g_free the array */
}

/* The column's kind, range and categories from its cells. */
static void describe_column(tw_hp_table *t, int c)
{
    tw_hp_column *col = t->columns->pdata[c];
    bool numbers = true, bools = true, any = false;
    col->lo = INFINITY;
    col->hi = -INFINITY;
    for (int r = 0; r < t->nrows; r++) {
        const tw_hp_value *v = &t->cells[(size_t)r * t->ncolumns + c];
        if (v->kind == TW_HP_MISSING)
            continue;
        any = true;
        numbers &= v->kind == TW_HP_NUMBER;
        bools &= v->kind == TW_HP_BOOL;
        if (v->kind == TW_HP_NUMBER && isfinite(v->number)) {
            col->lo = fmin(col->lo, v->number);
            col->hi = fmax(col->hi, v->number);
        }
    }
    col->kind = !any ? TW_HP_MISSING : numbers ? TW_HP_NUMBER : bools ? TW_HP_BOOL : TW_HP_STRING;
    col->log = col->kind == TW_HP_NUMBER && col->lo > 0 && col->hi / col->lo > 100;
    if (col->kind != TW_HP_STRING && col->kind != TW_HP_BOOL)
        return;
    GHashTable *distinct = g_hash_table_new(g_str_hash, g_str_equal);
    for (int r = 0; r < t->nrows; r++) {
        tw_hp_value *v = &t->cells[(size_t)r * t->ncolumns + c];
        if (v->kind != TW_HP_MISSING)
            g_hash_table_add(distinct, (gpointer)v->text);
        if (v->kind == TW_HP_NUMBER) /* a number in a string column is a string there */
            v->kind = TW_HP_STRING;
    }
    guint count = 0;
    col->categories = (char **)g_hash_table_get_keys_as_array(distinct, &count);
    col->ncategories = (int)count;
    qsort(col->categories, count, sizeof *col->categories, compare_strings);
    /* each cell's place among them, once: collating per lookup cost the
     * plots half a second for 1,000 runs */
    GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < count; i++)
        g_hash_table_insert(index, col->categories[i], GINT_TO_POINTER(i + 1));
    for (int r = 0; r < t->nrows; r++) {
        tw_hp_value *v = &t->cells[(size_t)r * t->ncolumns + c];
        if (v->kind != TW_HP_MISSING)
            v->category = GPOINTER_TO_INT(g_hash_table_lookup(index, v->text)) - 1;
    }
    g_hash_table_unref(index);
    g_hash_table_unref(distinct);
}

static void column_free(gpointer data)
{
    tw_hp_column *col = data;
    g_free(col->name);
    g_free(col->categories); /* the strings are the table's */
    g_free(col);
}

/* The role's columns, after those there, each name's index in index. */
static void add_columns(tw_hp_table *t, GArray **objects, int n, tw_hp_role role, GHashTable *index)
{
    char **names = column_names(objects, n);
    for (char **name = names; *name; name++) {
        tw_hp_column *col = g_new0(tw_hp_column, 1);
        col->name = g_strdup(*name);
        col->role = role;
        g_hash_table_insert(index, col->name, GINT_TO_POINTER(t->columns->len));
        g_ptr_array_add(t->columns, col);
    }
    g_free(names);
}

/* The role's cells from each run's members (a name given twice: the last). */
static void fill_cells(tw_hp_table *t, GArray **objects, GHashTable *index)
{
    for (int r = 0; r < t->nrows; r++)
        for (guint k = 0; k < objects[r]->len; k++) {
            const tw_hp_json_member *m = &g_array_index(objects[r], tw_hp_json_member, k);
            int c = GPOINTER_TO_INT(g_hash_table_lookup(index, m->name));
            t->cells[(size_t)r * t->ncolumns + c] = value_of(t, m);
        }
}

tw_hp_table *tw_hp_table_new(const tw_run_info *runs, int n)
{
    tw_hp_table *t = g_new0(tw_hp_table, 1);
    t->nrows = n;
    t->rows = g_new0(row_info, MAX(n, 1));
    t->columns = g_ptr_array_new_with_free_func(column_free);
    t->texts = g_string_chunk_new(4096);
    t->filter = g_array_new(FALSE, FALSE, sizeof(filter_term));
    reader rd = {NULL, g_string_chunk_new(4096)};
    GArray **hparams = g_new(GArray *, MAX(n, 1)), **metrics = g_new(GArray *, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        t->rows[i] = (row_info){runs[i].id, g_strdup(runs[i].name), runs[i].status};
        hparams[i] = read_object(&rd, runs[i].hparams_json);
        metrics[i] = read_object(&rd, runs[i].metrics_json);
    }
    /* a name's column within its role (a metric may share a setting's name) */
    GHashTable *hparam_index = g_hash_table_new(g_str_hash, g_str_equal);
    GHashTable *metric_index = g_hash_table_new(g_str_hash, g_str_equal);
    add_columns(t, hparams, n, TW_HP_HPARAM, hparam_index);
    add_columns(t, metrics, n, TW_HP_METRIC, metric_index);
    t->ncolumns = (int)t->columns->len;
    size_t ncells = (size_t)MAX(n, 1) * MAX(t->ncolumns, 1);
    t->cells = g_new(tw_hp_value, ncells);
    for (size_t i = 0; i < ncells; i++)
        t->cells[i] = (tw_hp_value){TW_HP_MISSING, NAN, "", -1};
    fill_cells(t, hparams, hparam_index);
    fill_cells(t, metrics, metric_index);
    for (int c = 0; c < t->ncolumns; c++)
        describe_column(t, c);
    for (int i = 0; i < n; i++) {
        g_array_unref(hparams[i]);
        g_array_unref(metrics[i]);
    }
    g_free(hparams);
    g_free(metrics);
    g_hash_table_unref(hparam_index);
    g_hash_table_unref(metric_index);
    g_string_chunk_free(rd.chunk);
    g_clear_object(&rd.parser);
    t->passes = g_new(bool, MAX(n, 1));
    for (int r = 0; r < n; r++)
        t->passes[r] = true;
    return t;
}

static void clear_filter(GArray *filter)
{
    for (guint i = 0; i < filter->len; i++)
        g_free(g_array_index(filter, filter_term, i).text);
    g_array_set_size(filter, 0);
}

void tw_hp_table_free(tw_hp_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nrows; i++)
        g_free(t->rows[i].name);
    g_free(t->rows);
    g_ptr_array_unref(t->columns);
    g_free(t->cells);
    g_string_chunk_free(t->texts);
    clear_filter(t->filter);
    g_array_unref(t->filter);
    g_free(t->passes);
    g_free(t);
}

/* ---- reading ------------------------------------------------------------------ */
int tw_hp_table_n_rows(const tw_hp_table *t)
{
    return t->nrows;
}

int tw_hp_table_n_columns(const tw_hp_table *t)
{
    return t->ncolumns;
}

const tw_hp_column *tw_hp_table_column(const tw_hp_table *t, int column)
{
    return t->columns->pdata[column];
}

int tw_hp_table_find_column(const tw_hp_table *t, tw_hp_role role, const char *name)
{
    for (int c = 0; c < t->ncolumns; c++) {
        const tw_hp_column *col = t->columns->pdata[c];
        if (col->role == role && !strcmp(col->name, name))
            return c;
    }
    return -1;
}

void tw_hp_table_set_hidden(tw_hp_table *t, int column, bool hidden)
{
    ((tw_hp_column *)t->columns->pdata[column])->hidden = hidden;
}

int64_t tw_hp_table_run_id(const tw_hp_table *t, int row)
{
    return t->rows[row].id;
}

const char *tw_hp_table_run_name(const tw_hp_table *t, int row)
{
    return t->rows[row].name;
}

tw_run_status tw_hp_table_run_status(const tw_hp_table *t, int row)
{
    return t->rows[row].status;
}

const tw_hp_value *tw_hp_table_cell(const tw_hp_table *t, int row, int column)
{
    return &t->cells[(size_t)row * t->ncolumns + column];
}

double tw_hp_table_position(const tw_hp_table *t, int row, int column)
{
    const tw_hp_column *col = t->columns->pdata[column];
    const tw_hp_value *v = tw_hp_table_cell(t, row, column);
    if (v->kind == TW_HP_MISSING)
        return NAN;
    if (col->kind == TW_HP_STRING || col->kind == TW_HP_BOOL) {
        int i = v->category;
        return i < 0 ? NAN : col->ncategories == 1 ? 0.5 : (double)i / (col->ncategories - 1);
    }
    if (!isfinite(v->number))
        return NAN;
    if (col->hi == col->lo)
        return 0.5;
    if (col->log)
        return (log(v->number) - log(col->lo)) / (log(col->hi) - log(col->lo));
    return (v->number - col->lo) / (col->hi - col->lo);
}

int tw_hp_table_compare(const tw_hp_table *t, int column, int a, int b)
{
    if (column < 0)
        return g_utf8_collate(t->rows[a].name, t->rows[b].name);
    const tw_hp_value *x = tw_hp_table_cell(t, a, column), *y = tw_hp_table_cell(t, b, column);
    if ((x->kind == TW_HP_MISSING) != (y->kind == TW_HP_MISSING))
        return x->kind == TW_HP_MISSING ? 1 : -1;
    if (x->kind == TW_HP_MISSING)
        return 0;
    if (x->category >= 0 && y->category >= 0) /* the categories are in collation order */
        return x->category - y->category;
    if (isnan(x->number) != isnan(y->number)) /* NaN after the numbers */
        return isnan(x->number) ? 1 : -1;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* ---- the filter ------------------------------------------------------------------ */
static const struct {
    const char *text;
    filter_op op;
} operators[] = {{"!=", OP_NE}, {">=", OP_GE}, {"<=", OP_LE}, {"=", OP_EQ}, {"<", OP_LT}, {">", OP_GT}};

static bool parse_double(const char *text, double *out)
{
    char *end;
    *out = g_ascii_strtod(text, &end);
    return end != text && !*end;
}

/* A column by name, hyperparameters before metrics; -1 when none. */
static int column_named(const tw_hp_table *t, const char *name)
{
    int c = tw_hp_table_find_column(t, TW_HP_HPARAM, name);
    return c >= 0 ? c : tw_hp_table_find_column(t, TW_HP_METRIC, name);
}

static int parse_term(const tw_hp_table *t, const char *term, filter_term *out, char **error)
{
    const char *at = NULL;
    size_t i = 0;
    for (const char *p = term; *p && !at; p++)
        for (i = 0; i < G_N_ELEMENTS(operators); i++)
            if (g_str_has_prefix(p, operators[i].text)) {
                at = p;
                break;
            }
    if (!at) {
        *out = (filter_term){OP_NAME, -1, 0, 0, g_utf8_casefold(term, -1)};
        return 0;
    }
    char *name = g_strndup(term, (gsize)(at - term));
    const char *value = at + strlen(operators[i].text);
    *out = (filter_term){operators[i].op, column_named(t, name), NAN, NAN, NULL};
    int rc = 0;
    const tw_hp_column *col = out->column >= 0 ? t->columns->pdata[out->column] : NULL;
    const char *dots = strstr(value, "..");
    if (!col)
        rc = -1, *error = g_strdup_printf("no column named “%s”", name);
    else if (col->kind != TW_HP_NUMBER && (out->op == OP_EQ || out->op == OP_NE))
        out->text = g_strdup(value);
    else if (col->kind != TW_HP_NUMBER)
        rc = -1, *error = g_strdup_printf("“%s” holds text: compare it with = or !=", name);
    else if (out->op == OP_EQ && dots) {
        char *lo = g_strndup(value, (gsize)(dots - value));
        out->op = OP_RANGE;
        if (!parse_double(lo, &out->lo) || !parse_double(dots + 2, &out->hi))
            rc = -1, *error = g_strdup_printf("“%s”: a range is two numbers, as 1e-3..1e-2", value);
        else if (out->lo > out->hi)
            rc = -1, *error = g_strdup_printf("the range “%s” has its minimum above its maximum", value);
        g_free(lo);
    } else if (!parse_double(value, &out->lo))
        rc = -1, *error = g_strdup_printf("“%s” is not a number (column “%s”)", value, name);
    g_free(name);
    if (rc)
        g_free(out->text);
    return rc;
}

static bool term_passes(const tw_hp_table *t, const filter_term *f, int row)
{
    if (f->op == OP_NAME) {
        char *name = g_utf8_casefold(t->rows[row].name, -1);
        bool found = strstr(name, f->text) != NULL;
        g_free(name);
        return found;
    }
    const tw_hp_value *v = tw_hp_table_cell(t, row, f->column);
    if (v->kind == TW_HP_MISSING)
        return false;
    if (f->text)
        return (strcmp(v->text, f->text) == 0) == (f->op == OP_EQ);
    double x = v->number;
    switch (f->op) {
    case OP_EQ: return x == f->lo;
    case OP_NE: return x != f->lo;
    case OP_LT: return x < f->lo;
    case OP_LE: return x <= f->lo;
    case OP_GT: return x > f->lo;
    case OP_GE: return x >= f->lo;
    case OP_RANGE: return x >= f->lo && x <= f->hi;
    default: return true;
    }
}

int tw_hp_table_set_filter(tw_hp_table *t, const char *query, char **error)
{
    *error = NULL;
    char **terms = g_strsplit_set(query ? query : "", " \t", -1);
    GArray *filter = g_array_new(FALSE, FALSE, sizeof(filter_term));
    int rc = 0;
    for (char **term = terms; *term && !rc; term++) {
        filter_term f;
        if (!**term)
            continue;
        rc = parse_term(t, *term, &f, error);
        if (!rc)
            g_array_append_val(filter, f);
    }
    g_strfreev(terms);
    if (rc) {
        clear_filter(filter);
        g_array_unref(filter);
        return -1;
    }
    clear_filter(t->filter);
    g_array_unref(t->filter);
    t->filter = filter;
    for (int r = 0; r < t->nrows; r++) {
        t->passes[r] = true;
        for (guint i = 0; i < filter->len && t->passes[r]; i++)
            t->passes[r] = term_passes(t, &g_array_index(filter, filter_term, i), r);
    }
    return 0;
}

bool tw_hp_table_row_passes(const tw_hp_table *t, int row)
{
    return t->passes[row];
}

/* ---- CSV ------------------------------------------------------------------------ */
char *tw_hp_table_csv(const tw_hp_table *t, const int *rows, int nrows)
{
    GString *out = g_string_new("run,status");
    for (int c = 0; c < t->ncolumns; c++) {
        const tw_hp_column *col = t->columns->pdata[c];
        if (col->hidden)
            continue;
        g_string_append_c(out, ',');
        tw_csv_append_field(out, col->name);
    }
    g_string_append(out, "\r\n");
    int n = rows ? nrows : t->nrows;
    for (int i = 0; i < n; i++) {
        int r = rows ? rows[i] : i;
        tw_csv_append_field(out, t->rows[r].name);
        g_string_append_printf(out, ",%s", tw_run_status_name(t->rows[r].status));
        for (int c = 0; c < t->ncolumns; c++) {
            if (((tw_hp_column *)t->columns->pdata[c])->hidden)
                continue;
            const tw_hp_value *v = tw_hp_table_cell(t, r, c);
            g_string_append_c(out, ',');
            if (v->kind == TW_HP_NUMBER) { /* every digit, not the table's short form */
                char buffer[G_ASCII_DTOSTR_BUF_SIZE];
                g_string_append(out, isfinite(v->number) ? g_ascii_dtostr(buffer, sizeof buffer, v->number)
                                                         : v->text);
            } else
                tw_csv_append_field(out, v->text);
        }
        g_string_append(out, "\r\n");
    }
    return g_string_free(out, FALSE);
}
