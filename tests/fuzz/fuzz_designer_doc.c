/* libFuzzer target for what the designer's document reads: a model file's
 * JSON with its "twb_designer" positions (tw_model_doc_load_json), and a
 * selection's text pasted (tw_model_doc_paste, the document's own state
 * format). Either is taken or refused with a message; what is taken saves
 * to JSON that loads back to the same document, and a paste undoes to the
 * document as it was. Built into build-fuzz/tests/fuzz/fuzz_designer_doc
 * (make fuzz) and, renamed, into the fuzz_replay test that runs
 * tests/fuzz/corpus/designer_doc/ on every build. */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "model_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return 0; /* text only: a NUL ends what a file reader or clipboard gives */
    char *text = g_strndup((const char *)data, size);
    TwModelDoc *doc = tw_model_doc_new();
    GError *error = NULL;
    if (tw_model_doc_load_json(doc, text, "fuzz.json", &error)) {
        char *json = tw_model_doc_to_json(doc);
        TwModelDoc *again = tw_model_doc_new();
        FUZZ_ASSERT(tw_model_doc_load_json(again, json, "again.json", NULL));
        char *back = tw_model_doc_to_json(again);
        FUZZ_ASSERT(!strcmp(json, back));
        g_free(back);
        g_free(json);
        g_object_unref(again);
    } else {
        FUZZ_ASSERT(error && error->message[0]);
        g_clear_error(&error);
    }
    char *before = tw_model_doc_state(doc);
    int n = tw_model_doc_n_layers(doc);
    int first = tw_model_doc_paste(doc, text, 10, 10, &error);
    if (first < 0) {
        FUZZ_ASSERT(error && error->message[0]);
        g_clear_error(&error);
        FUZZ_ASSERT(tw_model_doc_n_layers(doc) == n);
    } else if (tw_model_doc_n_layers(doc) > n) {
        FUZZ_ASSERT(first == n);
        FUZZ_ASSERT(tw_model_doc_undo(doc));
        char *after = tw_model_doc_state(doc);
        FUZZ_ASSERT(!strcmp(before, after));
        g_free(after);
    }
    g_free(before);
    g_object_unref(doc);
    g_free(text);
    return 0;
}
