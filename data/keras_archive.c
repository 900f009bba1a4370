/* .keras archives through libzip, in memory: members read up to a cap
 * (a zip bomb's declared or real size stops there), and Keras' layout
 * written: metadata.json, config.json, model.weights.h5, stored. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "file_bytes.h"
#include "keras_archive.h"
#include "tw/error.h"

static zip_t *open_zip(const uint8_t *bytes, size_t size, const char *name)
{
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t *src = zip_source_buffer_create(bytes, size, 0, &error);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error) : NULL;
    if (!za) {
        tw_error_set("%s: not a readable zip archive (%s)", name, zip_error_strerror(&error));
        if (src)
            zip_source_free(src);
    }
    zip_error_fini(&error);
    return za;
}

uint8_t *tw__keras_member(const uint8_t *zip, size_t size, const char *name, const char *member, size_t cap,
                          size_t *out_size)
{
    zip_t *za = open_zip(zip, size, name);
    if (!za)
        return NULL;
    uint8_t *buf = NULL;
    zip_stat_t st;
    zip_file_t *zf = NULL;
    zip_stat_init(&st);
    if (zip_stat(za, member, 0, &st) < 0) {
        tw_error_set("%s: the archive has no %s (a .keras file holds metadata.json, config.json and "
                     "model.weights.h5)",
                     name, member);
    } else if (!(st.valid & ZIP_STAT_SIZE) || st.size > cap) {
        tw_error_set("%s: %s declares %llu bytes, more than the %zu read from a .keras member", name, member,
                     (unsigned long long)st.size, cap);
    } else if (!(st.valid & ZIP_STAT_COMP_SIZE) || st.size > st.comp_size * TW_DEFLATE_MAX_RATIO + 64) {
        /* Checked before anything is allocated for it. */
        tw_error_set("%s: %s declares %llu bytes, more than its %llu compressed bytes can hold", name, member,
                     (unsigned long long)st.size, (unsigned long long)st.comp_size);
    } else if (!(zf = zip_fopen(za, member, 0))) {
        tw_error_set("%s: cannot read %s (%s)", name, member, zip_strerror(za));
    } else {
        /* One byte past the declared size shows data that runs longer. */
        size_t want = (size_t)st.size;
        buf = malloc(want + 1);
        zip_int64_t got = 0, n = 0;
        while (buf && (size_t)got <= want && (n = zip_fread(zf, buf + got, want + 1 - (size_t)got)) > 0)
            got += n;
        if (n < 0) /* a read error, a bad CRC or inflate failing */
            got = -1;
        if (!buf) {
            tw_error_set("%s: out of memory for %s (%zu bytes)", name, member, want);
        } else if (got < 0) {
            tw_error_set("%s: %s is corrupt (%s)", name, member, zip_file_strerror(zf));
            free(buf);
            buf = NULL;
        } else if ((size_t)got != want) {
            tw_error_set("%s: %s holds %lld bytes, the archive declares %zu", name, member, (long long)got, want);
            free(buf);
            buf = NULL;
        } else {
            *out_size = want;
        }
    }
    if (zf && zip_fclose(zf) != 0 && buf) {
        tw_error_set("%s: %s is corrupt (checksum)", name, member);
        free(buf);
        buf = NULL;
    }
    zip_discard(za);
    return buf;
}

static int add_member(zip_t *za, const char *member, const void *data, size_t size, const char *name)
{
    zip_source_t *src = zip_source_buffer(za, data, size, 0);
    zip_int64_t index = src ? zip_file_add(za, member, src, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
        if (src)
            zip_source_free(src);
        return tw_error_set("%s: cannot add %s to the archive (%s)", name, member, zip_strerror(za));
    }
    /* Keras' zipfile.ZipFile(..., "w") stores its members uncompressed. */
    if (zip_set_file_compression(za, (zip_uint64_t)index, ZIP_CM_STORE, 0) < 0)
        return tw_error_set("%s: %s: %s", name, member, zip_strerror(za));
    return 0;
}

uint8_t *tw__keras_archive_bytes(const char *metadata, const char *config, const uint8_t *weights,
                                 size_t weights_size, const char *name, size_t *size)
{
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t *out = zip_source_buffer_create(NULL, 0, 0, &error);
    zip_t *za = out ? zip_open_from_source(out, ZIP_TRUNCATE, &error) : NULL;
    uint8_t *bytes = NULL;
    if (!za) {
        tw_error_set("%s: cannot create a zip archive (%s)", name, zip_error_strerror(&error));
        if (out)
            zip_source_free(out);
        zip_error_fini(&error);
        return NULL;
    }
    zip_source_keep(out); /* zip_close would free it; its bytes are the result */
    int rc = add_member(za, "metadata.json", metadata, strlen(metadata), name) ||
             add_member(za, "config.json", config, strlen(config), name) ||
             add_member(za, "model.weights.h5", weights, weights_size, name);
    if (rc) {
        zip_discard(za);
    } else if (zip_close(za) < 0) {
        tw_error_set("%s: cannot write the zip archive (%s)", name, zip_strerror(za));
        zip_discard(za);
    } else {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_source_stat(out, &st) == 0 && zip_source_open(out) == 0) {
            bytes = malloc(st.size ? st.size : 1);
            if (bytes && zip_source_read(out, bytes, st.size) == (zip_int64_t)st.size) {
                *size = (size_t)st.size;
            } else {
                free(bytes);
                bytes = NULL;
            }
            zip_source_close(out);
        }
        if (!bytes)
            tw_error_set("%s: cannot take the zip archive's bytes", name);
    }
    zip_source_free(out);
    zip_error_fini(&error);
    return bytes;
}
