/* Markdown as TensorBoard's text plugin renders it, turned into blocks of
 * Pango markup for GTK labels: paragraphs, headings, fenced and indented
 * code, list items, block quotes, rules and GitHub tables; inline
 * **bold**, *emphasis* / _emphasis_, `code`, [links](url) and backslash
 * escapes. Everything else is text: HTML is shown, escaped, as TensorBoard
 * shows sanitized HTML's text. GLib only (no GTK), so the fuzz target
 * (tests/fuzz/fuzz_markdown.c) builds it alone. */
#ifndef TW_UI_MARKDOWN_H
#define TW_UI_MARKDOWN_H

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    TW_MD_PARAGRAPH,
    TW_MD_HEADING,   /* level 1-6 */
    TW_MD_CODE,      /* text: the code as it is (not markup) */
    TW_MD_LIST_ITEM, /* level: nesting depth from 0; marker: "•" or "3." */
    TW_MD_QUOTE,
    TW_MD_RULE,
    TW_MD_TABLE, /* nrows x ncols cells of markup, row 0 the header */
} TwMdKind;

typedef struct {
    TwMdKind kind;
    int level;
    char *marker;
    char *text; /* markup (TW_MD_CODE: plain text); NULL for rules and tables */
    int nrows, ncols;
    char **cells;
} TwMdBlock;

/* Blocks of text (len bytes, need not be NUL-terminated; invalid UTF-8 is
 * replaced), a GPtrArray of TwMdBlock that frees them. Any input gives
 * blocks: there is no syntax error in markdown. */
GPtrArray *tw_markdown_parse(const char *text, gsize len);

G_END_DECLS

#endif
