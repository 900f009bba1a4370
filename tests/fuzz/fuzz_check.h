/* What every fuzz target checks besides "no crash, no sanitizer report":
 * a failure leaves a message that names the input, and successes keep the
 * invariants each target asserts, and GLib logs no critical or warning.
 * A broken check aborts, which libFuzzer and the replay test report as a
 * crash. */
#ifndef TW_FUZZ_CHECK_H
#define TW_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

#include "tw/error.h"

/* A GLib critical or warning is a parser's misuse of a library (a
 * json-glib getter on a node of the wrong type): fatal, so that libFuzzer
 * and the replay test report it as a crash. */
__attribute__((constructor)) static void fuzz_fatal_glib_warnings(void)
{
    g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

#define FUZZ_ASSERT(cond)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);                          \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/* The call failed: its message must name the input and nothing may be left
 * pending for the next call. */
static inline void fuzz_check_failure(const char *name)
{
    const char *message = tw_last_error();
    if (!strstr(message, name)) {
        fprintf(stderr, "fuzz: the error does not name '%s': \"%s\"\n", name, message);
        abort();
    }
    tw_error_clear();
}

/* The bytes as a file, for the loaders (which gunzip with the format's
 * size check and pick NPZ members): an in-memory file whose path is
 * written into path. Returns its descriptor (close it), or -1. */
static inline int fuzz_as_file(const uint8_t *data, size_t size, char *path, size_t path_size)
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, path_size, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
