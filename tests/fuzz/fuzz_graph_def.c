/* libFuzzer target for turning twb's graph JSON into a TensorFlow GraphDef
 * (data/tfevents/graph_def.c: what `twb runs export --format tfevents` and
 * `twb train --tfevents` do with a stored graph record, which any run
 * database may hold): any bytes give either the encoded GraphDef or a
 * reason, never a crash, and a reason is a sentence.
 * Built into build-fuzz/tests/fuzz/fuzz_graph_def (make fuzz) and, renamed,
 * into the fuzz_replay test that runs tests/fuzz/corpus/graph_def/. */
#include <glib.h>

#include "fuzz_check.h"
#include "tfevents/tfevents_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *json = g_strndup((const char *)data, size); /* a record's text ends at its NUL */
    char why[256] = "";
    size_t n = 0;
    uint8_t *bytes = tw__tb_graph_def_from_json(json, &n, why, sizeof why);
    if (bytes)
        FUZZ_ASSERT(why[0] == '\0');
    else
        FUZZ_ASSERT(why[0] != '\0' && n == 0);
    g_free(bytes);
    g_free(json);
    return 0;
}
