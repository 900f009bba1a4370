/* Tensor Workbench — checks of a JSON text before a parser reads it.
 *
 * The JSON readers the workbench uses (json-glib's parser, the engine's own
 * reader for graphs) recurse once per nested array or object, so a file of
 * a few hundred kilobytes of '[' exhausts the stack; and json-glib reads
 * escapes JSON does not have (\777 as the byte 0xff, \x41 as "x41", a lone
 * surrogate as bytes that are not UTF-8) without a word. Every place that
 * hands a text from a file or a run database to json-glib first runs
 * tw_json_check_text, which reads the bytes without recursing.
 */
#ifndef TW_JSON_CHECK_H
#define TW_JSON_CHECK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The deepest nesting of arrays and objects accepted anywhere; Keras model
 * files nest about three levels per nested model, graph JSON about six. */
#define TW_JSON_MAX_DEPTH 512

/* The byte offset of the first '[' or '{' of text that opens a level deeper
 * than TW_JSON_MAX_DEPTH, or -1 when there is none. length < 0: up to the
 * text's NUL. Brackets inside strings (double-quoted with backslash escapes,
 * and the single-quoted ones json-glib accepts) and inside C comments do
 * not count. */
ptrdiff_t tw_json_too_deep(const char *text, ptrdiff_t length);

/* The byte offset of the first escape in a double-quoted string of text
 * that JSON does not have, or -1 when there is none; *escape_length is then
 * how many bytes show it (the backslash and its letter, \u's hex digits
 * too). JSON's escapes: \" \\ \/ \b \f \n \r \t, and \u with four hex
 * digits, a high surrogate only with a low one after it. Strings, quotes
 * and comments as tw_json_too_deep reads them. length < 0: up to the NUL. */
ptrdiff_t tw_json_bad_escape(const char *text, ptrdiff_t length, size_t *escape_length);

/* The line and column (from 1; columns count characters, not UTF-8
 * bytes) of byte offset in text: how every JSON reader places an error. */
void tw_json_line_column(const char *text, ptrdiff_t offset, int *line, int *column);

/* What tw_json_bad_escape's error says after the escape itself. */
extern const char tw_json_not_an_escape[];

/* 0 when text nests at most TW_JSON_MAX_DEPTH levels and has only JSON's
 * escapes, else -1 with the error "NAME: JSON nested deeper than 512 levels
 * (at byte N)" or "NAME: line L, column C: \q is not an escape JSON has
 * (...)". */
int tw_json_check_text(const char *text, ptrdiff_t length, const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
