/* twb data inspect: what a person needs to know about a data file before
 * training on it (format, examples, shapes and dtypes, value range, label
 * counts). */
#ifndef TWB_DATA_INSPECT_H
#define TWB_DATA_INSPECT_H

#include <stdio.h>

typedef struct {
    /* A file (IDX raw or .gz, NPY, CSV), or "fashion-mnist[:train|:test]". */
    const char *path;
    const char *labels_path;  /* --labels FILE (IDX and NPY), or NULL */
    const char *label_column; /* --label-column NAME (CSV), or NULL */
} twb_inspect_options;

enum {
    TWB_INSPECT_OK = 0,
    TWB_INSPECT_FAILED = -1, /* a bad or missing file: tw_last_error() says why */
    TWB_INSPECT_USAGE = -2,  /* options that do not fit the file: *usage_message says why */
};

/* Inspect and print the report to `out` (nothing is printed on failure).
 * On TWB_INSPECT_USAGE, *usage_message is a g_malloc'd message for the
 * caller to print and g_free. */
int twb_data_inspect(const twb_inspect_options *options, FILE *out, char **usage_message);

#endif
