/* libFuzzer target for the TFRecord reader (tw/tfevents.h): the bytes as a
 * file, read the way a live file is followed: the first half written, read
 * until the reader waits, the rest appended, read to the end with a cut
 * reported, the file closed and opened again at each wait as a follower
 * does. Every record handed out must lie inside the file, offsets must
 * grow, and every warning must name the file.
 * Built into build-fuzz/tests/fuzz/fuzz_tfrecord (make fuzz) and, renamed,
 * into the fuzz_replay test that runs tests/fuzz/corpus/tfrecord/. */
#include <string.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "tw/tfevents.h"

static char path[64];

static void check_warning(void *user_data, const char *message)
{
    (void)user_data;
    FUZZ_ASSERT(strstr(message, path) == message);
}

static void read_records(tw_tfrecord_reader *r, size_t size, uint64_t *last, bool complete)
{
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    for (;;) {
        tw_tfrecord_status s = tw_tfrecord_next(r, &data, &n, &offset);
        if (s == TW_TFRECORD_AGAIN && complete) {
            tw_tfrecord_report_cut(r);
            continue;
        }
        if (s != TW_TFRECORD_OK)
            return;
        FUZZ_ASSERT(offset + 16 + n <= size);
        FUZZ_ASSERT(*last == UINT64_MAX || offset > *last);
        *last = offset;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = fuzz_as_file(data, size / 2, path, sizeof path);
    if (fd < 0)
        return 0;
    tw_tfrecord_reader *r = tw_tfrecord_open(path, check_warning, NULL);
    FUZZ_ASSERT(r);
    tw_tfrecord_close_when_idle(r); /* as the follower reads: opened again where it stopped */
    uint64_t last = UINT64_MAX;
    read_records(r, size, &last, false);
    FUZZ_ASSERT(write(fd, data + size / 2, size - size / 2) == (ssize_t)(size - size / 2));
    read_records(r, size, &last, true);
    FUZZ_ASSERT(tw_tfrecord_offset(r) == size);
    tw_tfrecord_close(r);
    close(fd);
    return 0;
}
