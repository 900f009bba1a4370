/* The HParams view's table, as data: one row per run, a column for every
 * hyperparameter (the run's hparams_json: our training settings, or an
 * imported TensorBoard run's hparams) and every final metric (metrics_json),
 * with sorting, a filter query and hidden columns. Plain GLib, no widgets:
 * the view (hparams_view.c), the plots (hparams_render.c), the CSV export
 * and the tests and bench all use it.
 *
 * Values are numbers, strings, booleans or missing. A column whose present
 * values are all numbers is numeric (the importer's "nan", "inf" and "-inf"
 * strings count as numbers), all booleans boolean, anything else a string
 * column (numbers shown as text). Nested objects become "a.b" columns;
 * arrays are kept as their JSON text.
 *
 * The filter query is terms separated by spaces, all of which a row must
 * pass: `learning_rate>=1e-3`, `batch_size=32..64` (a range, both ends
 * included), `optimizer=adam`, `optimizer!=sgd`, `<`, `<=`, `>`; a term
 * without an operator matches run names containing it. A row missing the
 * column's value fails its terms. */
#ifndef TW_UI_HPARAMS_TABLE_H
#define TW_UI_HPARAMS_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <tw/run_store.h>

typedef enum { TW_HP_MISSING, TW_HP_NUMBER, TW_HP_STRING, TW_HP_BOOL } tw_hp_kind;

typedef struct {
    tw_hp_kind kind;
    double number;    /* numbers; booleans 0 or 1 */
    const char *text; /* how it reads: "0.001", "adam", "true" ("" when missing); the table's */
    int category;     /* string and boolean columns: its index in the column's categories; else -1 */
} tw_hp_value;

typedef enum { TW_HP_HPARAM, TW_HP_METRIC } tw_hp_role;

typedef struct {
    char *name;
    tw_hp_role role;
    tw_hp_kind kind;   /* TW_HP_MISSING: no run has a value */
    double lo, hi;     /* the finite numbers' range (numeric columns) */
    bool log;          /* positive numbers spanning more than two decades: plotted on a log scale */
    int ncategories;   /* string and boolean columns: the distinct values, sorted */
    char **categories;
    bool hidden;
} tw_hp_column;

typedef struct tw_hp_table tw_hp_table;

/* The runs' table; hyperparameter columns first, each part by name. */
tw_hp_table *tw_hp_table_new(const tw_run_info *runs, int n);
void tw_hp_table_free(tw_hp_table *t);

int tw_hp_table_n_rows(const tw_hp_table *t);
int tw_hp_table_n_columns(const tw_hp_table *t);
const tw_hp_column *tw_hp_table_column(const tw_hp_table *t, int column);
/* -1 when absent. */
int tw_hp_table_find_column(const tw_hp_table *t, tw_hp_role role, const char *name);
void tw_hp_table_set_hidden(tw_hp_table *t, int column, bool hidden);
int64_t tw_hp_table_run_id(const tw_hp_table *t, int row);
const char *tw_hp_table_run_name(const tw_hp_table *t, int row);
tw_run_status tw_hp_table_run_status(const tw_hp_table *t, int row);
const tw_hp_value *tw_hp_table_cell(const tw_hp_table *t, int row, int column);
/* A value's place on its column's axis in [0, 1] (numbers on the column's
 * linear or log scale, categories evenly spaced); NAN when missing or not
 * finite. */
double tw_hp_table_position(const tw_hp_table *t, int row, int column);

/* Rows a and b by a column (-1: the run's name): missing values last
 * whatever the direction. <0, 0, >0. */
int tw_hp_table_compare(const tw_hp_table *t, int column, int a, int b);

/* The filter: 0, or -1 with *error (g_free) saying which term is wrong
 * (the previous filter stays). NULL or "" shows every row. */
int tw_hp_table_set_filter(tw_hp_table *t, const char *query, char **error);
bool tw_hp_table_row_passes(const tw_hp_table *t, int row);

/* The rows as CSV (g_free): a header "run,status,<columns>", then the
 * given rows (NULL: all, in table order) with the columns not hidden;
 * fields quoted as RFC 4180 does where needed, missing values empty. */
char *tw_hp_table_csv(const tw_hp_table *t, const int *rows, int nrows);

#endif
