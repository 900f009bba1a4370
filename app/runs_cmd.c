/* twb runs: list the runs of the run database, show one with its tags,
 * export a scalar series as TensorBoard's download does (CSV with the
 * header wall_time,step,value, or JSON [[wall_time, step, value], ...]),
 * delete, rename and annotate runs. Reading commands open the file
 * read-only; the default file is tw_run_store_default_path(). */
#include "runs_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include <tw/engine.h>
#include <tw/json_check.h>
#include <tw/run_store.h>
#include <tw/tfevents.h>

#define EXPORT_BATCH 65536

typedef struct {
    const char *logdb, *tag, *format;
    const char *output; /* export --format tfevents: the folder */
    const char *positional[2];
    int npositional;
} runs_args;

typedef int (*runs_fn)(const runs_args *a);

/* ---- output helpers ------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static int usage(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "twb: runs%s%s: ", command ? " " : "", command ? command : "");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'twb runs --help'.\n", stderr);
    return 2;
}

static int failure(const char *command)
{
    fprintf(stderr, "twb: runs %s: %s\n", command, tw_last_error());
    return 1;
}

/* A finite double as Python's repr writes it (TensorBoard's CSV and JSON
 * downloads do): the fewest digits that read back as the same double,
 * positional from 1e-4 up to 1e16 with at least one decimal ("2.0"),
 * scientific otherwise ("1e-05", "1.5e+300"); in the C locale. */
#define NUMBER_SIZE 40
static const char *python_repr(double value, char out[NUMBER_SIZE])
{
    char scientific[NUMBER_SIZE], format[8];
    for (int digits = 1; digits <= 17; digits++) {
        g_snprintf(format, sizeof format, "%%.%de", digits - 1);
        g_ascii_formatd(scientific, sizeof scientific, format, value);
        if (g_ascii_strtod(scientific, NULL) == value)
            break;
    }
    /* "-d.ddde+XX" into its sign, digits and exponent. */
    const char *p = scientific;
    bool negative = *p == '-';
    p += negative;
    char digits[20];
    int n = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    int exponent = atoi(p + 1);
    GString *text = g_string_new(negative ? "-" : "");
    if (exponent < -4 || exponent >= 16) {
        g_string_append_printf(text, "%c%s%s", digits[0], n > 1 ? "." : "", digits + 1);
        g_string_append_printf(text, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
    } else if (exponent < 0) {
        g_string_append(text, "0.");
        for (int i = -1; i > exponent; i--)
            g_string_append_c(text, '0');
        g_string_append(text, digits);
    } else {
        for (int i = 0; i <= exponent; i++)
            g_string_append_c(text, i < n ? digits[i] : '0');
        g_string_append_printf(text, ".%s", n > exponent + 1 ? digits + exponent + 1 : "0");
    }
    g_strlcpy(out, text->str, NUMBER_SIZE);
    g_string_free(text, TRUE);
    return out;
}

/* A value as CSV (nan, inf, -inf) or JSON, which has no NaN or infinities
 * (Python's spellings, as strings), writes it. */
static const char *value_text(double v, bool json, char out[NUMBER_SIZE])
{
    if (isnan(v))
        return json ? "\"NaN\"" : "nan";
    if (isinf(v))
        return v > 0 ? (json ? "\"Infinity\"" : "inf") : (json ? "\"-Infinity\"" : "-inf");
    return python_repr(v, out);
}

/* "2024-05-01 14:03:59" in local time. */
static void format_time(double seconds, char out[32])
{
    time_t t = (time_t)seconds;
    struct tm local;
    if (!isfinite(seconds) || !localtime_r(&t, &local) || !strftime(out, 32, "%Y-%m-%d %H:%M:%S", &local))
        g_strlcpy(out, "-", 32);
}

/* "45s", "12m 03s", "3h 04m", "2d 05h". */
static void format_duration(double seconds, char out[32])
{
    long s = seconds > 0 ? (long)seconds : 0;
    if (s < 60)
        g_snprintf(out, 32, "%lds", s);
    else if (s < 3600)
        g_snprintf(out, 32, "%ldm %02lds", s / 60, s % 60);
    else if (s < 86400)
        g_snprintf(out, 32, "%ldh %02ldm", s / 3600, s % 3600 / 60);
    else
        g_snprintf(out, 32, "%ldd %02ldh", s / 86400, s % 86400 / 3600);
}

static double run_duration(const tw_run_info *run)
{
    double end = isnan(run->end_time) ? g_get_real_time() / 1e6 : run->end_time;
    return end - run->start_time;
}

static const char *kind_name(tw_series_kind kind)
{
    static const char *const names[] = {"scalars", "histograms", "text", "graph"};
    return names[kind];
}

/* ---- list ----------------------------------------------------------------- */

/* Rows of cells printed as columns two spaces apart. */
static void print_table(GPtrArray *rows, int ncells)
{
    int width[8] = {0};
    for (guint r = 0; r < rows->len; r++)
        for (int c = 0; c < ncells; c++)
            width[c] = MAX(width[c], (int)g_utf8_strlen(((char **)rows->pdata[r])[c], -1));
    for (guint r = 0; r < rows->len; r++) {
        char **cells = rows->pdata[r];
        GString *line = g_string_new("");
        for (int c = 0; c < ncells; c++) {
            g_string_append(line, cells[c]);
            if (c + 1 < ncells)
                for (long pad = width[c] - g_utf8_strlen(cells[c], -1) + 2; pad > 0; pad--)
                    g_string_append_c(line, ' ');
        }
        while (line->len && line->str[line->len - 1] == ' ')
            g_string_truncate(line, line->len - 1);
        puts(line->str);
        g_string_free(line, TRUE);
    }
}

static char **run_row(tw_run_store *store, const tw_run_info *run)
{
    tw_tag_info *tags = NULL;
    int ntags = 0;
    bool counted = tw_run_store_list_tags(store, run->id, &tags, &ntags) == 0;
    tw_tag_info_free(tags, ntags);
    char started[32], duration[32];
    format_time(run->start_time, started);
    format_duration(run_duration(run), duration);
    char **row = g_new0(char *, 7);
    row[0] = g_strdup(run->name);
    row[1] = g_strdup(tw_run_status_name(run->status));
    row[2] = g_strdup(started);
    row[3] = g_strdup(duration);
    row[4] = counted ? g_strdup_printf("%d", ntags) : g_strdup("?");
    row[5] = g_strdup(run->host);
    return row;
}

static int command_list(const runs_args *a)
{
    char *path = a->logdb ? g_strdup(a->logdb) : tw_run_store_default_path();
    if (!a->logdb && !g_file_test(path, G_FILE_TEST_EXISTS)) {
        printf("No runs yet: %s does not exist (twb train --logdb FILE --run NAME writes runs).\n", path);
        g_free(path);
        return 0;
    }
    tw_run_store *store = tw_run_store_open(path, TW_STORE_READ_ONLY);
    g_free(path);
    tw_run_info *runs = NULL;
    int n = 0;
    if (!store || tw_run_store_list_runs(store, &runs, &n)) {
        tw_run_store_close(store);
        return failure("list");
    }
    if (n == 0)
        printf("No runs in %s.\n", tw_run_store_path(store));
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    char *header[] = {"NAME", "STATUS", "STARTED", "DURATION", "TAGS", "HOST", NULL};
    g_ptr_array_add(rows, g_strdupv(header));
    for (int i = 0; i < n; i++)
        g_ptr_array_add(rows, run_row(store, &runs[i]));
    if (n > 0)
        print_table(rows, 6);
    g_ptr_array_free(rows, TRUE);
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
    return 0;
}

/* ---- show ----------------------------------------------------------------- */

/* "Sequential 'mlp', 3 layers" from a Keras model file's JSON. */
static char *describe_model(const char *json)
{
    if (tw_json_check_text(json, -1, "the run's model JSON"))
        return g_strdup_printf("not read: %s", tw_last_error());
    JsonParser *parser = json_parser_new();
    char *text = NULL;
    if (json_parser_load_from_data(parser, json, -1, NULL) && JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        JsonObject *model = json_node_get_object(json_parser_get_root(parser));
        const char *class_name = json_object_get_string_member_with_default(model, "class_name", "model");
        JsonObject *config = json_object_get_object_member(model, "config");
        const char *name = config ? json_object_get_string_member_with_default(config, "name", NULL) : NULL;
        JsonArray *layers = config && json_object_has_member(config, "layers") &&
                                    JSON_NODE_HOLDS_ARRAY(json_object_get_member(config, "layers"))
                                ? json_object_get_array_member(config, "layers")
                                : NULL;
        GString *s = g_string_new(class_name);
        if (name)
            g_string_append_printf(s, " '%s'", name);
        if (layers)
            g_string_append_printf(s, ", %u layers", json_array_get_length(layers));
        text = g_string_free(s, FALSE);
    }
    g_object_unref(parser);
    return text ? text : g_strdup_printf("%zu bytes of JSON", strlen(json));
}

/* A scalar tag's last value (by step), as text. */
static char *last_value(tw_run_store *store, const tw_tag_info *tag)
{
    tw_lod_column column;
    char number[NUMBER_SIZE];
    if (tag->kind != TW_SERIES_SCALAR || tag->count == 0 ||
        tw_run_store_read_lod(store, tag->id, TW_AXIS_STEP, (double)tag->first_step, (double)tag->last_step, 1,
                              &column))
        return g_strdup("");
    return g_strdup(value_text(column.last.value, false, number));
}

static void print_tags(tw_run_store *store, const tw_run_info *run)
{
    tw_tag_info *tags = NULL;
    int n = 0;
    if (tw_run_store_list_tags(store, run->id, &tags, &n)) {
        printf("tags:     cannot be listed: %s\n", tw_last_error());
        return;
    }
    if (n == 0) {
        puts("tags:     none");
        return;
    }
    puts("");
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    char *header[] = {"TAG", "KIND", "COUNT", "STEPS", "LAST", NULL};
    g_ptr_array_add(rows, g_strdupv(header));
    for (int i = 0; i < n; i++) {
        char **row = g_new0(char *, 6);
        row[0] = g_strdup(tags[i].name);
        row[1] = g_strdup(kind_name(tags[i].kind));
        row[2] = g_strdup_printf("%lld", (long long)tags[i].count);
        row[3] = tags[i].count ? g_strdup_printf("%lld-%lld", (long long)tags[i].first_step,
                                                 (long long)tags[i].last_step)
                               : g_strdup("-");
        row[4] = last_value(store, &tags[i]);
        g_ptr_array_add(rows, row);
    }
    print_table(rows, 5);
    g_ptr_array_free(rows, TRUE);
    tw_tag_info_free(tags, n);
}

/* "28x28" or, when a tag's images differ, "28x28 .. 64x48" (smallest and
 * largest by pixels). */
static char *size_range(const tw_image_info *smallest, const tw_image_info *largest)
{
    if (smallest->width == largest->width && smallest->height == largest->height)
        return g_strdup_printf("%dx%d", smallest->width, smallest->height);
    return g_strdup_printf("%dx%d .. %dx%d", smallest->width, smallest->height, largest->width, largest->height);
}

/* The run's images, a row per tag: how many, their steps, sizes, formats
 * and encoded bytes. Nothing when the run has none. */
static void print_images(tw_run_store *store, const tw_run_info *run)
{
    tw_image_info *images = NULL;
    int n = 0;
    if (tw_run_store_list_images(store, run->id, NULL, &images, &n)) {
        printf("images:   cannot be listed: %s\n", tw_last_error());
        return;
    }
    if (n == 0)
        return;
    puts("");
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    char *header[] = {"IMAGE TAG", "COUNT", "STEPS", "SIZE", "FORMAT", "BYTES", NULL};
    g_ptr_array_add(rows, g_strdupv(header));
    for (int i = 0; i < n;) { /* listed by tag, then step and sample */
        int end = i;
        const tw_image_info *smallest = &images[i], *largest = &images[i];
        int64_t bytes = 0, first_step = images[i].step, last_step = images[i].step;
        GString *formats = g_string_new(NULL);
        for (; end < n && !strcmp(images[end].tag, images[i].tag); end++) {
            const tw_image_info *im = &images[end];
            int64_t pixels = (int64_t)im->width * im->height;
            if (pixels < (int64_t)smallest->width * smallest->height)
                smallest = im;
            if (pixels > (int64_t)largest->width * largest->height)
                largest = im;
            first_step = MIN(first_step, im->step);
            last_step = MAX(last_step, im->step);
            bytes += im->size;
            char **known = g_strsplit(formats->str, ", ", -1);
            if (!g_strv_contains((const char *const *)known, im->format))
                g_string_append_printf(formats, "%s%s", formats->len ? ", " : "", im->format);
            g_strfreev(known);
        }
        char **row = g_new0(char *, 7);
        row[0] = g_strdup(images[i].tag);
        row[1] = g_strdup_printf("%d", end - i);
        row[2] = g_strdup_printf("%lld-%lld", (long long)first_step, (long long)last_step);
        row[3] = size_range(smallest, largest);
        row[4] = g_string_free(formats, FALSE);
        row[5] = g_strdup_printf("%lld", (long long)bytes);
        g_ptr_array_add(rows, row);
        i = end;
    }
    print_table(rows, 6);
    g_ptr_array_free(rows, TRUE);
    tw_image_info_free(images, n);
}

static void print_run(tw_run_store *store, const tw_run_info *run)
{
    char started[32], ended[32], duration[32];
    format_time(run->start_time, started);
    format_time(run->end_time, ended);
    format_duration(run_duration(run), duration);
    printf("run:      %s\n", run->name);
    printf("status:   %s\n", tw_run_status_name(run->status));
    if (run->failure_reason)
        printf("reason:   %s\n", run->failure_reason);
    if (run->sweep)
        printf("sweep:    %s\n", run->sweep);
    printf("started:  %s\n", started);
    if (!isnan(run->end_time))
        printf("ended:    %s\n", ended);
    printf("duration: %s\n", duration);
    printf("host:     %s (process %lld)\n", run->host, (long long)run->pid);
    if (run->logs_lost_from_step >= 0)
        printf("logs:     lost from step %lld on: %s\n", (long long)run->logs_lost_from_step,
               run->logs_lost_reason ? run->logs_lost_reason : "unknown reason");
    if (run->model_json) {
        char *model = describe_model(run->model_json);
        printf("model:    %s\n", model);
        g_free(model);
    }
    if (run->hparams_json)
        printf("hparams:  %s\n", run->hparams_json);
    if (run->metrics_json)
        printf("metrics:  %s\n", run->metrics_json);
    if (run->notes[0]) {
        char **lines = g_strsplit(run->notes, "\n", -1);
        for (int i = 0; lines[i]; i++)
            printf("%s%s\n", i == 0 ? "notes:    " : "          ", lines[i]);
        g_strfreev(lines);
    }
    print_tags(store, run);
    print_images(store, run);
}

/* Opens the file and reads the run named first on the command line. */
static tw_run_store *open_run(const runs_args *a, unsigned flags, tw_run_info *run)
{
    tw_run_store *store = tw_run_store_open(a->logdb, flags);
    if (store && tw_run_store_get_run(store, a->positional[0], run) == 0)
        return store;
    tw_run_store_close(store);
    return NULL;
}

static int command_show(const runs_args *a)
{
    tw_run_info run;
    tw_run_store *store = open_run(a, TW_STORE_READ_ONLY, &run);
    if (!store)
        return failure("show");
    print_run(store, &run);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    return 0;
}

/* ---- export --------------------------------------------------------------- */

static void print_point(const tw_scalar_point *p, bool json, bool first)
{
    char wall[NUMBER_SIZE], number[NUMBER_SIZE];
    if (json)
        printf("%s[%s, %lld, %s]", first ? "" : ", ", python_repr(p->wall_time, wall), (long long)p->step,
               value_text(p->value, true, number));
    else
        printf("%s,%lld,%s\n", python_repr(p->wall_time, wall), (long long)p->step,
               value_text(p->value, false, number));
}

/* The tag by name, a scalar series; else a message listing the tags. */
static int find_scalar_tag(tw_run_store *store, const tw_run_info *run, const char *name, int64_t *tag_id)
{
    tw_tag_info *tags = NULL;
    int n = 0;
    if (tw_run_store_list_tags(store, run->id, &tags, &n))
        return -1;
    int status = -1;
    GString *names = g_string_new("");
    for (int i = 0; i < n; i++) {
        if (strcmp(tags[i].name, name) == 0 && tags[i].kind == TW_SERIES_SCALAR) {
            *tag_id = tags[i].id;
            status = 0;
        } else if (strcmp(tags[i].name, name) == 0) {
            tw_error_set("tag '%s' of run '%s' holds %s; export writes scalar series", name, run->name,
                         kind_name(tags[i].kind));
            status = -2;
        }
        if (tags[i].kind == TW_SERIES_SCALAR)
            g_string_append_printf(names, "%s%s", names->len ? ", " : "", tags[i].name);
    }
    if (status == -1)
        tw_error_set("run '%s' has no tag '%s' (its scalar tags: %s)", run->name, name,
                     names->len ? names->str : "none");
    g_string_free(names, TRUE);
    tw_tag_info_free(tags, n);
    return status == 0 ? 0 : -1;
}

/* Streamed in batches: memory does not grow with the series. The first
 * batch is read before anything is printed, so a series damaged there
 * prints nothing but the message. */
static int export_series(tw_run_store *store, int64_t tag_id, bool json)
{
    tw_series_cursor cursor = {0};
    bool first = true;
    for (int batch = 0;; batch++) {
        tw_scalar_point *points = NULL;
        int64_t n = 0;
        if (tw_run_store_read_scalars(store, tag_id, &cursor, EXPORT_BATCH, &points, &n))
            return -1;
        if (batch == 0)
            fputs(json ? "[" : "wall_time,step,value\n", stdout);
        for (int64_t i = 0; i < n; i++, first = false)
            print_point(&points[i], json, first);
        free(points);
        if (n < EXPORT_BATCH)
            break;
    }
    if (json)
        puts("]");
    return fflush(stdout) == 0 ? 0 : tw_error_set("cannot write the export: %s", g_strerror(errno));
}

/* The whole run as a TensorBoard event file in a->output. */
static int export_tfevents(const runs_args *a)
{
    if (!a->output)
        return usage("export", "--format tfevents writes a folder: name it with --output DIR");
    if (a->tag)
        return usage("export", "--format tfevents writes the whole run; --tag is for csv and json");
    tw_tb_export_stats stats;
    char *file = NULL;
    if (tw_tb_export_run(a->logdb, a->positional[0], a->output, &file, &stats))
        return failure("export");
    printf("Wrote %s: %lld scalar points, %lld histograms, %lld images, %lld texts, %lld graphs%s%s.\n", file,
           (long long)stats.scalars, (long long)stats.histograms, (long long)stats.images, (long long)stats.texts,
           (long long)stats.graphs, stats.hparams ? ", the hyperparameters" : "", stats.models ? ", the model" : "");
    if (stats.tensors)
        printf("Tensors: %lld (the evaluations' tables).\n", (long long)stats.tensors);
    if (stats.graphs_left_out)
        printf("Left out: %lld graph records that are not twb graphs.\n", (long long)stats.graphs_left_out);
    /* A damaged series is left out, the rest exported (as the dashboard
     * shows the rest); each is named on stderr. */
    for (const char *l = stats.left_out_messages, *end; l && (end = strchr(l, '\n')); l = end + 1)
        fprintf(stderr, "twb: runs export: warning: left out, cannot be read: %.*s\n", (int)(end - l), l);
    g_free(stats.left_out_messages);
    g_free(file);
    return 0;
}

/* The run's model (a Keras model file's JSON: what twb train stored, or
 * the model config a Keras TensorBoard callback wrote) to a->output, else
 * to standard output. */
static int export_model(const runs_args *a)
{
    if (a->tag)
        return usage("export", "--format model writes the run's model; --tag is for csv and json");
    tw_run_info run;
    tw_run_store *store = open_run(a, TW_STORE_READ_ONLY, &run);
    if (!store)
        return failure("export");
    tw_run_store_close(store);
    int status = 0;
    GError *error = NULL;
    if (!run.model_json)
        status = tw_error_set("run '%s' has no model stored", run.name);
    else if (a->output && !g_file_set_contents(a->output, run.model_json, -1, &error))
        status = tw_error_set("%s", error->message);
    else if (!a->output && (fputs(run.model_json, stdout) == EOF || putchar('\n') == EOF || fflush(stdout)))
        status = tw_error_set("cannot write the export: %s", g_strerror(errno));
    else if (a->output)
        printf("Wrote the model of run '%s' to %s.\n", run.name, a->output);
    g_clear_error(&error);
    tw_run_info_clear(&run);
    return status ? failure("export") : 0;
}

static int command_export(const runs_args *a)
{
    if (a->format && strcmp(a->format, "tfevents") == 0)
        return export_tfevents(a);
    if (a->format && strcmp(a->format, "model") == 0)
        return export_model(a);
    if (a->output)
        return usage("export", "--output is for --format tfevents and model");
    if (!a->tag)
        return usage("export", "name the series with --tag TAG");
    if (!a->format)
        return usage("export", "choose --format csv, json, tfevents or model");
    bool json = strcmp(a->format, "json") == 0;
    if (!json && strcmp(a->format, "csv") != 0)
        return usage("export", "unknown format '%s' (there are: csv, json, tfevents, model)", a->format);
    tw_run_info run;
    tw_run_store *store = open_run(a, TW_STORE_READ_ONLY, &run);
    int64_t tag_id = -1;
    int status = store && find_scalar_tag(store, &run, a->tag, &tag_id) == 0 ? export_series(store, tag_id, json) : -1;
    if (store)
        tw_run_info_clear(&run);
    tw_run_store_close(store);
    return status ? failure("export") : 0;
}

/* ---- changes -------------------------------------------------------------- */

/* Opened for writing, which would create a missing file: checked first. */
static int change(const runs_args *a, const char *command)
{
    char *path = a->logdb ? g_strdup(a->logdb) : tw_run_store_default_path();
    tw_run_store *store = NULL;
    if (g_file_test(path, G_FILE_TEST_EXISTS))
        store = tw_run_store_open(path, 0);
    else
        tw_error_set("%s: no such file", path);
    g_free(path);
    const char *name = a->positional[0], *value = a->positional[1];
    int status = -1;
    if (store && strcmp(command, "delete") == 0)
        status = tw_run_store_delete_run(store, name);
    else if (store && strcmp(command, "rename") == 0)
        status = tw_run_store_rename_run(store, name, value);
    else if (store)
        status = tw_run_store_set_notes(store, name, value);
    tw_run_store_close(store);
    if (status)
        return failure(command);
    if (strcmp(command, "delete") == 0)
        printf("Deleted run '%s'.\n", name);
    else if (strcmp(command, "rename") == 0)
        printf("Renamed run '%s' to '%s'.\n", name, value);
    else
        printf("Saved the notes of run '%s'.\n", name);
    return 0;
}

static int command_delete(const runs_args *a)
{
    return change(a, "delete");
}

static int command_rename(const runs_args *a)
{
    return change(a, "rename");
}

static int command_notes(const runs_args *a)
{
    return change(a, "notes");
}

/* ---- command line --------------------------------------------------------- */

static const struct {
    const char *name;
    int npositional;
    bool exports;
    runs_fn run;
    const char *positional_help;
} commands[] = {
    {"list", 0, false, command_list, ""},
    {"show", 1, false, command_show, "RUN"},
    {"export", 1, true, command_export, "RUN"},
    {"delete", 1, false, command_delete, "RUN"},
    {"rename", 2, false, command_rename, "OLD NEW"},
    {"notes", 2, false, command_notes, "RUN TEXT"},
};

static void print_usage(void)
{
    puts("Usage: twb runs COMMAND [--logdb FILE]\n"
         "\n"
         "The run database (default: $XDG_DATA_HOME/twb/runs.db; --logdb names another file).\n"
         "\n"
         "  list                 the runs: name, status, start, duration, tags, host\n"
         "  show RUN             a run's details and tags\n"
         "  export RUN --tag TAG --format csv|json\n"
         "                       a scalar series as TensorBoard's download: CSV with the\n"
         "                       header wall_time,step,value, or JSON [[wall_time, step, value], ...]\n"
         "  export RUN --format tfevents --output DIR\n"
         "                       the whole run (scalars, histograms, images, text, hyperparameters,\n"
         "                       graphs, the model) as a TensorBoard event file in DIR\n"
         "  export RUN --format model [--output FILE]\n"
         "                       the run's model as a Keras model file (JSON), which\n"
         "                       twb and the Designer open\n"
         "  delete RUN           delete a run and all its series\n"
         "  rename OLD NEW       rename a run\n"
         "  notes RUN TEXT       set a run's notes");
}

/* An option's value: "--name VALUE" or "--name=VALUE"; NULL when arg is
 * not that option. */
static const char *option_value(const char *name, int argc, char **argv, int *i, bool *missing)
{
    size_t length = strlen(name);
    if (strncmp(argv[*i], name, length) != 0)
        return NULL;
    if (argv[*i][length] == '=')
        return argv[*i] + length + 1;
    if (argv[*i][length] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int parse(int c, int argc, char **argv, runs_args *a)
{
    const char *command = commands[c].name;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *value = NULL, **target = NULL;
        if (options_done || argv[i][0] != '-' || argv[i][1] == '\0') {
            if (a->npositional == commands[c].npositional)
                return usage(command, "unexpected argument '%s'", argv[i]);
            a->positional[a->npositional++] = argv[i];
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            options_done = true;
            continue;
        }
        const char *arg = argv[i];
        if ((value = option_value("--logdb", argc, argv, &i, &missing)) || missing)
            target = &a->logdb;
        else if (commands[c].exports && ((value = option_value("--tag", argc, argv, &i, &missing)) || missing))
            target = &a->tag;
        else if (commands[c].exports && ((value = option_value("--format", argc, argv, &i, &missing)) || missing))
            target = &a->format;
        else if (commands[c].exports && ((value = option_value("--output", argc, argv, &i, &missing)) || missing))
            target = &a->output;
        else
            return usage(command, "unknown option '%s'", arg);
        if (missing || !value[0])
            return usage(command, "option '%s' needs a value", arg);
        *target = value;
    }
    if (a->npositional < commands[c].npositional)
        return usage(command, "expected %s", commands[c].positional_help);
    return 0;
}

int twb_runs_command(int argc, char **argv)
{
    if (argc == 0)
        return usage(NULL, "name a command: list, show, export, delete, rename or notes");
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            print_usage();
            return 0;
        }
    for (size_t c = 0; c < G_N_ELEMENTS(commands); c++) {
        if (strcmp(argv[0], commands[c].name) != 0)
            continue;
        runs_args a = {0};
        int status = parse((int)c, argc, argv, &a);
        return status ? status : commands[c].run(&a);
    }
    return usage(NULL, "unknown command '%s' (there are: list, show, export, delete, rename, notes)", argv[0]);
}
