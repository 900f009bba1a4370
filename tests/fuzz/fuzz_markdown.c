/* libFuzzer target for the Text tab's markdown parser (ui/markdown.h): any
 * bytes give blocks, and every block's markup is well-formed (checked with
 * GLib's markup parser, as Pango's is built on it), tables have all their
 * cells. The parser is GLib-only, and its .c is compiled in here because
 * the fuzz builds link no GTK (libtw-ui does).
 * Built into build-fuzz/tests/fuzz/fuzz_markdown (make fuzz) and, renamed,
 * into the fuzz_replay test that runs tests/fuzz/corpus/markdown/. */
#include "../../ui/markdown.c"

#include "fuzz_check.h"

static void check_markup(const char *markup)
{
    static const GMarkupParser parser = {0};
    char *doc = g_strconcat("<markup>", markup, "</markup>", NULL);
    GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, NULL, NULL);
    gboolean ok = g_markup_parse_context_parse(ctx, doc, -1, NULL) && g_markup_parse_context_end_parse(ctx, NULL);
    if (!ok)
        fprintf(stderr, "fuzz_markdown: not well-formed: %s\n", markup);
    FUZZ_ASSERT(ok);
    g_markup_parse_context_free(ctx);
    g_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GPtrArray *blocks = tw_markdown_parse((const char *)data, size);
    for (guint i = 0; i < blocks->len; i++) {
        const TwMdBlock *b = blocks->pdata[i];
        if (b->kind == TW_MD_TABLE) {
            FUZZ_ASSERT(b->nrows >= 1 && b->ncols >= 1 && b->cells);
            for (int c = 0; c < b->nrows * b->ncols; c++)
                check_markup(b->cells[c]);
        } else if (b->kind == TW_MD_CODE) {
            FUZZ_ASSERT(b->text && g_utf8_validate(b->text, -1, NULL));
        } else if (b->kind != TW_MD_RULE) {
            FUZZ_ASSERT(b->text);
            check_markup(b->text);
        }
        if (b->kind == TW_MD_HEADING)
            FUZZ_ASSERT(b->level >= 1 && b->level <= 6);
    }
    g_ptr_array_free(blocks, TRUE);
    return 0;
}
