/* libFuzzer target for the Event decoder (tw/tfevents.h): the bytes as one
 * record's data, decoded twice with one decoder (the second time with the
 * tags' plugins remembered from the first). Items must point inside what
 * they describe and every warning must name the file.
 * Built into build-fuzz/tests/fuzz/fuzz_tb_event (make fuzz) and, renamed,
 * into the fuzz_replay test that runs tests/fuzz/corpus/tb_event/. */
#include <math.h>
#include <string.h>

#include "fuzz_check.h"
#include "tw/tfevents.h"

static void check_warning(void *user_data, const char *message)
{
    (void)user_data;
    FUZZ_ASSERT(strstr(message, "fuzz.tfevents: offset 7: ") == message);
}

static void check_item(void *user_data, const tw_tb_item *it)
{
    size_t size = *(size_t *)user_data;
    FUZZ_ASSERT(it->tag && it->plugin && it->offset == 7);
    if (it->text)
        FUZZ_ASSERT(strlen(it->text) <= it->text_len || it->text_len == 0);
    switch (it->kind) {
    case TW_TB_HISTOGRAM:
        FUZZ_ASSERT(it->histogram.nbuckets >= 0 && (size_t)it->histogram.nbuckets <= size);
        for (int i = 0; i < it->histogram.nbuckets; i++)
            (void)(it->histogram.left[i] + it->histogram.right[i] + it->histogram.count[i]);
        break;
    case TW_TB_IMAGE:
        FUZZ_ASSERT(it->image.size <= size && it->image.width > 0 && it->image.height > 0);
        FUZZ_ASSERT(!strcmp(it->image.format, "png") || !strcmp(it->image.format, "jpeg") ||
                    !strcmp(it->image.format, "gif"));
        break;
    case TW_TB_GRAPH_DEF:
    case TW_TB_META_GRAPH_DEF: FUZZ_ASSERT(it->nbytes <= size); break;
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_tb_decoder *d = tw_tb_decoder_new("fuzz.tfevents", check_warning, NULL);
    for (int i = 0; i < 2; i++)
        tw_tb_decode_event(d, data, size, 7, check_item, &size);
    tw_tb_decoder_free(d);
    return 0;
}
