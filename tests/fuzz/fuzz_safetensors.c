/* libFuzzer target for the safetensors reader: the header parser on the
 * fuzzer's bytes (when their length prefix fits), and tw_safetensors_open
 * with every tensor and a metadata lookup on the bytes as a file. A header
 * that parses must describe a buffer its tensors tile exactly, and must
 * survive being written back and parsed again unchanged.
 * Built into build-fuzz/tests/fuzz/fuzz_safetensors (make fuzz) and,
 * renamed, into the fuzz_replay test that runs
 * tests/fuzz/corpus/safetensors/ on every build. */
#include <glib.h>

#include "checkpoint/safetensors_internal.h"
#include "fuzz_check.h"

static bool same_header(const tw_st_header *a, const tw_st_header *b)
{
    if (a->n != b->n || a->nmeta != b->nmeta)
        return false;
    for (int i = 0; i < a->n; i++) {
        const tw_st_entry *x = &a->entries[i], *y = &b->entries[i];
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim || x->begin != y->begin ||
            x->end != y->end || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim))
            return false;
    }
    for (int i = 0; i < a->nmeta; i++)
        if (strcmp(a->meta_keys[i], b->meta_keys[i]) || strcmp(a->meta_values[i], b->meta_values[i]))
            return false;
    return true;
}

static void check_header(const uint8_t *data, size_t size)
{
    uint64_t length = 0;
    for (int i = 0; i < 8; i++)
        length |= (uint64_t)data[i] << (8 * i);
    if (length > size - 8)
        return;
    uint64_t buffer = size - 8 - length;
    tw_st_header h;
    if (tw__st_header_parse(data + 8, length, buffer, "fuzz.safetensors", &h)) {
        fuzz_check_failure("fuzz.safetensors");
        return;
    }
    /* Sorted, each the size of its dtype and shape, tiling the buffer. */
    uint64_t covered = 0;
    for (int i = 0; i < h.n; i++) {
        const tw_st_entry *e = &h.entries[i];
        FUZZ_ASSERT(e->begin == covered && e->end >= e->begin && e->ndim <= TW_MAX_DIMS);
        uint64_t bytes = tw_dtype_size(e->dtype);
        for (int d = 0; d < e->ndim; d++)
            bytes *= (uint64_t)e->shape[d];
        FUZZ_ASSERT(bytes == e->end - e->begin);
        covered = e->end;
    }
    FUZZ_ASSERT(covered == buffer);
    size_t json_size;
    char *json = tw__st_header_format(&h, "fuzz.safetensors", &json_size);
    FUZZ_ASSERT(json && json_size % 8 == 0);
    tw_st_header again;
    FUZZ_ASSERT(tw__st_header_parse((const uint8_t *)json, json_size, buffer, "fuzz.safetensors", &again) == 0);
    FUZZ_ASSERT(same_header(&h, &again));
    tw__st_header_clear(&again);
    g_free(json);
    tw__st_header_clear(&h);
}

static void check_file(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return;
    tw_safetensors *st = tw_safetensors_open(path);
    if (!st) {
        fuzz_check_failure(path);
        close(fd);
        return;
    }
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        tw_tensor *t = tw_safetensors_get(st, tw_safetensors_name(st, i));
        if (t)
            FUZZ_ASSERT((size_t)(tw_tensor_numel(t) * (int64_t)tw_dtype_size(tw_tensor_dtype(t))) <= size);
        else
            fuzz_check_failure(path);
        tw_tensor_unref(t);
    }
    const char *format = tw_safetensors_metadata(st, "format");
    FUZZ_ASSERT(!format || strlen(format) < size);
    tw_safetensors_close(st);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 8)
        check_header(data, size);
    check_file(data, size);
    return 0;
}
