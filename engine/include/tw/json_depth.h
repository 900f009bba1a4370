/* Tensor Workbench — how deep a JSON text may nest.
 *
 * The JSON readers the workbench uses (json-glib's parser, the engine's own
 * reader for graphs) recurse once per nested array or object, so a file of
 * a few hundred kilobytes of '[' exhausts the stack. Every place that hands
 * a text from a file or a run database to one of them first asks this scan,
 * which reads the bytes once without recursing. Not installed: the
 * workbench's own libraries and programs use it.
 */
#ifndef TW_JSON_DEPTH_H
#define TW_JSON_DEPTH_H

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

/* 0 when text nests at most TW_JSON_MAX_DEPTH levels, else -1 with the
 * error "NAME: JSON nested deeper than 512 levels (at byte N)". */
int tw_json_check_depth(const char *text, ptrdiff_t length, const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
