/* CSV as the exports write it (a chart's data, the HParams table): a
 * field is quoted when it holds a comma, a quote or a line break, its
 * quotes doubled (RFC 4180). */
#ifndef TW_UI_CSV_FIELD_H
#define TW_UI_CSV_FIELD_H

#include <glib.h>

void tw_csv_append_field(GString *out, const char *text);

#endif
