/* libFuzzer target for the NPY parser: tw_npy_parse on the fuzzer's bytes;
 * for bytes that start with gzip's magic, the gunzip loop first; for a zip
 * archive (NPZ), the zip reader and then each member; for both, also
 * tw_npy_load on the bytes as a file.
 * Built into build-fuzz/tests/fuzz/fuzz_npy (make fuzz) and, renamed, into
 * the fuzz_replay test that runs tests/fuzz/corpus/npy/ on every build. */
#include <glib.h>
#include <stdlib.h>

#include "file_bytes.h"
#include "fuzz_check.h"
#include "tw/data.h"

static void parse(const uint8_t *data, size_t size, const char *name)
{
    tw_tensor *t = tw_npy_parse(data, size, name);
    if (!t) {
        fuzz_check_failure(name);
        return;
    }
    /* A success never holds more values than the file has bytes. */
    FUZZ_ASSERT(tw_tensor_ndim(t) <= TW_MAX_DIMS);
    FUZZ_ASSERT((size_t)tw_tensor_numel(t) <= size);
    tw_tensor_unref(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size, "fuzz.npy");
    if (tw__is_gzip(data, size)) {
        size_t n;
        uint8_t *plain = tw__gunzip(data, size, "fuzz.npy.gz", NULL, &n);
        if (plain)
            parse(plain, n, "fuzz.npy.gz");
        else
            fuzz_check_failure("fuzz.npy.gz");
        free(plain);
    }
    if (tw__is_zip(data, size)) {
        char **names = tw__zip_list(data, size, "fuzz.npz");
        if (!names) {
            fuzz_check_failure("fuzz.npz");
            return 0;
        }
        for (int i = 0; names[i] && i < 4; i++) {
            size_t n;
            uint8_t *member = tw__zip_member(data, size, "fuzz.npz", names[i], NULL, &n);
            if (member) {
                /* Nothing inflates past what deflate can make of the input. */
                FUZZ_ASSERT(n <= size * 1032 + 1);
                parse(member, n, "fuzz.npz member");
            } else {
                fuzz_check_failure("fuzz.npz");
            }
            free(member);
        }
        g_strfreev(names);
    }
    if (tw__is_gzip(data, size) || tw__is_zip(data, size)) {
        /* The loader: gunzip stopped by the header's size; NPZ members by
         * name ("archive:member"), found as the loader finds them. */
        char path[64];
        int fd = fuzz_as_file(data, size, path, sizeof path);
        if (fd >= 0) {
            tw_tensor *t = tw_npy_load(path);
            if (!t)
                fuzz_check_failure(path);
            tw_tensor_unref(t);
            char **names = tw__is_zip(data, size) ? tw__zip_list(data, size, path) : NULL;
            if (names && names[0]) {
                char *member = g_strdup_printf("%s:%s", path, names[0]);
                t = tw_npy_load(member);
                if (!t)
                    fuzz_check_failure(path);
                tw_tensor_unref(t);
                g_free(member);
            }
            g_strfreev(names);
            tw_error_clear();
            close(fd);
        }
    }
    return 0;
}
