/* The HParams table's fast reader of a run's hparams_json or metrics_json
 * (hparams_table.c): an object of numbers, strings, booleans, nulls and
 * nested objects, flattened to "a.b" members, read in one pass without
 * json-glib, whose parser cost a third of opening the tab with 1,000 runs.
 * Anything else (an array anywhere, an integer too long for a double to
 * hold exactly, a name given twice, text that is not such an object) it
 * leaves to json-glib:
 * false, and the caller reads the text so. What it accepts it reads as
 * json-glib does (tests/fuzz/fuzz_hparams_json.c checks one against the
 * other).
 *
 *     GArray *out = g_array_new(FALSE, FALSE, sizeof(tw_hp_json_member));
 *     if (!tw_hp_json_read(json, chunk, out)) ... json-glib ...
 */
#ifndef TW_UI_HPARAMS_JSON_H
#define TW_UI_HPARAMS_JSON_H

#include <stdbool.h>

#include <glib.h>

#include "hparams_table.h"

typedef struct {
    const char *name; /* "a.b", in the chunk */
    tw_hp_kind kind;  /* TW_HP_MISSING for null */
    double number;    /* numbers; booleans 0 or 1 */
    const char *text; /* strings, in the chunk; NULL otherwise */
} tw_hp_json_member;

/* Appends the text's members to out (in the text's order) and returns
 * true, or returns false with out as it was. */
bool tw_hp_json_read(const char *json, GStringChunk *chunk, GArray *out);

#endif
