/* libFuzzer target for the IDX parser: tw_idx_parse on the fuzzer's bytes,
 * and, for bytes that start with gzip's magic, the gunzip loop first, alone
 * and through tw_idx_load.
 * Built into build-fuzz/tests/fuzz/fuzz_idx (make fuzz) and, renamed, into
 * the fuzz_replay test that runs tests/fuzz/corpus/idx/ on every build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "fuzz_check.h"
#include "tw/data.h"

static void parse(const uint8_t *data, size_t size, const char *name)
{
    tw_tensor *t = tw_idx_parse(data, size, name);
    if (!t) {
        fuzz_check_failure(name);
        return;
    }
    /* A success accounts for every byte: header, then exactly the data. */
    int ndim = tw_tensor_ndim(t);
    static const int sizes[16] = {[0x08] = 1, [0x09] = 1, [0x0B] = 2, [0x0C] = 4, [0x0D] = 4, [0x0E] = 8};
    FUZZ_ASSERT(size >= 4 && data[2] < 16 && sizes[data[2]] > 0 && ndim == data[3]);
    FUZZ_ASSERT(size == 4 + 4 * (size_t)ndim + (size_t)tw_tensor_numel(t) * (size_t)sizes[data[2]]);
    tw_tensor_unref(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size, "fuzz.idx");
    if (tw__is_gzip(data, size)) {
        size_t n;
        uint8_t *plain = tw__gunzip(data, size, "fuzz.idx.gz", NULL, &n);
        if (plain)
            parse(plain, n, "fuzz.idx.gz");
        else
            fuzz_check_failure("fuzz.idx.gz");
        free(plain);
        /* The loader: gunzip stopped by the header's size. */
        char path[64];
        int fd = fuzz_as_file(data, size, path, sizeof path);
        if (fd >= 0) {
            tw_tensor *t = tw_idx_load(path);
            if (!t)
                fuzz_check_failure(path);
            tw_tensor_unref(t);
            close(fd);
        }
    }
    return 0;
}
