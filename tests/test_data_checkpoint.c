/* safetensors files and checkpoints: every dtype through the low-level API,
 * the exact bytes of the header, a file written by hand from the format's
 * description, every kind of corrupt file (each message names the file and
 * what is wrong), truncation at every byte and byte-wise mutations, atomic
 * saving that leaves the old file intact on failure; then models' weights
 * and optimizers' state saved and restored, deferred restores included.
 * Each test works in a fresh temporary directory. */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw/checkpoint.h"
#include "tw/train_settings.h"

/* ---- scratch directories ---------------------------------------------------- */

static char *scratch_dir(void)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp("twb-checkpoint-XXXXXX", &err);
    g_assert_no_error(err);
    return dir;
}

/* Removes the directory and everything in it (one level of subfolders). */
static void scratch_remove(char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    for (const char *name; (name = g_dir_read_name(d));) {
        char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            g_chmod(path, 0755);
            scratch_remove(path);
        } else {
            g_assert_cmpint(g_remove(path), ==, 0);
            g_free(path);
        }
    }
    g_dir_close(d);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
    g_free(dir);
}

static int count_temp_files(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    int n = 0;
    for (const char *name; (name = g_dir_read_name(d));)
        n += strstr(name, ".tmp-") != NULL;
    g_dir_close(d);
    return n;
}

/* A new file each time, with plain stdio: g_file_set_contents would fsync
 * each of the thousands of files the mutation test writes, and ext4 flushes
 * a file truncated and rewritten in place when it is closed. */
static void write_file(const char *path, const void *data, size_t size)
{
    g_remove(path);
    FILE *f = fopen(path, "wb");
    g_assert_nonnull(f);
    g_assert_cmpuint(fwrite(data, 1, size, f), ==, size);
    g_assert_cmpint(fclose(f), ==, 0);
}

static GBytes *read_file(const char *path)
{
    char *data;
    gsize size;
    GError *err = NULL;
    g_file_get_contents(path, &data, &size, &err);
    g_assert_no_error(err);
    return g_bytes_new_take(data, size);
}

/* An 8-byte little-endian length, the header text, then data. */
static GByteArray *st_bytes(const char *json, size_t json_len, const void *data, size_t data_len)
{
    GByteArray *b = g_byte_array_new();
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)((uint64_t)json_len >> (8 * i));
    g_byte_array_append(b, len, 8);
    g_byte_array_append(b, (const uint8_t *)json, (guint)json_len);
    if (data_len)
        g_byte_array_append(b, data, (guint)data_len);
    return b;
}

static void assert_error_names(const char *path, const char *what)
{
    const char *message = tw_last_error();
    if (!strstr(message, path) || !strstr(message, what))
        g_error("expected an error naming %s and saying \"%s\", got \"%s\"", path, what, message);
    tw_error_clear();
}

static void assert_same_values(tw_tensor *a, tw_tensor *b)
{
    g_assert_cmpint(tw_tensor_dtype(a), ==, tw_tensor_dtype(b));
    g_assert_cmpint(tw_tensor_ndim(a), ==, tw_tensor_ndim(b));
    for (int i = 0; i < tw_tensor_ndim(a); i++)
        g_assert_cmpint(tw_tensor_dim(a, i), ==, tw_tensor_dim(b, i));
    size_t bytes = (size_t)tw_tensor_numel(a) * tw_dtype_size(tw_tensor_dtype(a));
    void *x = g_malloc(bytes + 1), *y = g_malloc(bytes + 1);
    g_assert_cmpint(tw_tensor_copy_to(a, x, bytes), ==, 0);
    g_assert_cmpint(tw_tensor_copy_to(b, y, bytes), ==, 0);
    g_assert_cmpmem(x, bytes, y, bytes);
    g_free(x);
    g_free(y);
}

/* ---- the low-level API ------------------------------------------------------ */

static void test_round_trip_dtypes(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "all.safetensors", NULL);
    tw_scope_begin();
    float f32[6] = {1.5f, -2.25f, 3e38f, -0.0f, 1e-40f, 7};
    double f64[3] = {0.1, -1e300, 2.5};
    int32_t i32[4] = {INT32_MIN, -1, 0, INT32_MAX};
    int64_t i64[2] = {INT64_MIN, INT64_MAX};
    uint8_t u8[5] = {0, 1, 127, 128, 255};
    uint8_t b[3] = {1, 0, 1};
    tw_tensor *tensors[] = {
        tw_tensor_from_data(f32, TW_FLOAT32, TW_SHAPE(2, 3)),
        tw_tensor_from_data(f64, TW_FLOAT64, TW_SHAPE(3)),
        tw_tensor_from_data(i32, TW_INT32, TW_SHAPE(2, 1, 2)),
        tw_tensor_from_data(i64, TW_INT64, TW_SHAPE(2)),
        tw_tensor_from_data(u8, TW_UINT8, TW_SHAPE(5)),
        tw_tensor_from_data(b, TW_BOOL, TW_SHAPE(3)),
        tw_scalar_of(42, TW_INT64),                                      /* 0-d */
        tw_zeros(TW_FLOAT32, TW_SHAPE(0, 3)),                            /* empty */
        tw_transpose(tw_tensor_from_data(f32, TW_FLOAT32, TW_SHAPE(2, 3))), /* not contiguous */
    };
    const char *names[] = {"f32", "f64", "i32", "i64", "u8", "bool", "scalar", "empty", "dense_1/kernel"};
    const char *keys[] = {"format", "quoted \"key\"", "unicode"};
    const char *values[] = {"twb", "back\\slash\nnew line\ttab\x01", "π ≈ 3.14159, 🎉"};
    int n = G_N_ELEMENTS(tensors);
    g_assert_cmpint(tw_safetensors_write(path, n, names, tensors, 3, keys, values), ==, 0);

    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_nonnull(st);
    g_assert_cmpint(tw_safetensors_count(st), ==, n);
    for (int i = 0; i < n; i++) {
        /* The file keeps the order of the data, which is the writer's order. */
        g_assert_cmpstr(tw_safetensors_name(st, i), ==, names[i]);
        g_assert_true(tw_safetensors_has(st, names[i]));
        tw_dtype dtype;
        int ndim;
        int64_t shape[TW_MAX_DIMS];
        g_assert_cmpint(tw_safetensors_info(st, names[i], &dtype, &ndim, shape), ==, 0);
        g_assert_cmpint(dtype, ==, tw_tensor_dtype(tensors[i]));
        g_assert_cmpint(ndim, ==, tw_tensor_ndim(tensors[i]));
        assert_same_values(tw_safetensors_get(st, names[i]), tensors[i]);
    }
    for (int i = 0; i < 3; i++)
        g_assert_cmpstr(tw_safetensors_metadata(st, keys[i]), ==, values[i]);
    g_assert_null(tw_safetensors_metadata(st, "absent"));
    g_assert_false(tw_error_pending());
    g_assert_false(tw_safetensors_has(st, "absent"));
    g_assert_null(tw_safetensors_get(st, "absent"));
    assert_error_names(path, "no tensor 'absent'");
    g_assert_null(tw_safetensors_name(st, n));
    assert_error_names(path, "no tensor at index 9");
    tw_safetensors_close(st);
    tw_scope_end();
    g_free(path);
    scratch_remove(dir);
}

/* The bytes themselves: length, compact JSON in the writer's order, space
 * padding to a multiple of 8, then the data packed in order. */
static void test_header_layout(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "layout.safetensors", NULL);
    tw_scope_begin();
    float a[2] = {1, 2};
    uint8_t b[3] = {7, 8, 9};
    tw_tensor *tensors[] = {tw_tensor_from_data(a, TW_FLOAT32, TW_SHAPE(2)),
                            tw_tensor_from_data(b, TW_UINT8, TW_SHAPE(3, 1))};
    const char *names[] = {"a", "b"};
    const char *keys[] = {"k"}, *values[] = {"v"};
    g_assert_cmpint(tw_safetensors_write(path, 2, names, tensors, 1, keys, values), ==, 0);
    tw_scope_end();

    GBytes *bytes = read_file(path);
    gsize size;
    const uint8_t *p = g_bytes_get_data(bytes, &size);
    const char *json = "{\"__metadata__\":{\"k\":\"v\"},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"U8\",\"shape\":[3,1],\"data_offsets\":[8,11]}}";
    size_t padded = (strlen(json) + 7) / 8 * 8;
    g_assert_cmpuint(size, ==, 8 + padded + 11);
    uint64_t length = 0;
    for (int i = 0; i < 8; i++)
        length |= (uint64_t)p[i] << (8 * i);
    g_assert_cmpuint(length, ==, padded);
    g_assert_cmpuint((8 + length) % 8, ==, 0);
    g_assert_cmpmem(p + 8, strlen(json), json, strlen(json));
    for (size_t i = 8 + strlen(json); i < 8 + padded; i++)
        g_assert_cmpint(p[i], ==, ' ');
    g_assert_cmpmem(p + 8 + padded, 8, a, 8);
    g_assert_cmpmem(p + 8 + padded + 8, 3, b, 3);
    g_bytes_unref(bytes);

    /* No tensors, no metadata: "{}" and six spaces. */
    g_assert_cmpint(tw_safetensors_write(path, 0, NULL, NULL, 0, NULL, NULL), ==, 0);
    bytes = read_file(path);
    g_assert_cmpmem(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes), "\x08\0\0\0\0\0\0\0{}      ", 16);
    g_bytes_unref(bytes);
    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_nonnull(st);
    g_assert_cmpint(tw_safetensors_count(st), ==, 0);
    tw_safetensors_close(st);
    g_free(path);
    scratch_remove(dir);
}

/* A file built here from the format's description alone, the way other
 * writers may lay it out: keys in any order, whitespace, metadata last,
 * escapes in names, data in another order than the keys, no padding. */
static void test_hand_written_file(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "hand.safetensors", NULL);
    const char *json = "{ \"b\" : {\"data_offsets\": [8, 24], \"shape\": [2, 1], \"dtype\": \"I64\"},\n"
                       "  \"caf\\u00e9/\\ud83d\\ude00\": {\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\n"
                       "  \"flag\": {\"dtype\": \"BOOL\", \"shape\": [], \"data_offsets\": [24, 25]},\n"
                       "  \"__metadata__\": {\"framework\": \"by hand\", \"esc\": \"\\\"\\/\\b\\f\\r\"}\t}\r\n";
    uint8_t data[25];
    float f[2] = {0.5f, -4};
    int64_t i[2] = {-3, 1LL << 40};
    memcpy(data, f, 8);
    memcpy(data + 8, i, 16);
    data[24] = 1;
    GByteArray *b = st_bytes(json, strlen(json), data, sizeof data);
    write_file(path, b->data, b->len);
    g_byte_array_free(b, TRUE);

    tw_scope_begin();
    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_nonnull(st);
    g_assert_cmpint(tw_safetensors_count(st), ==, 3);
    g_assert_cmpstr(tw_safetensors_name(st, 0), ==, "café/😀");
    g_assert_cmpstr(tw_safetensors_name(st, 1), ==, "b");
    g_assert_cmpstr(tw_safetensors_name(st, 2), ==, "flag");
    assert_same_values(tw_safetensors_get(st, "café/😀"), tw_tensor_from_data(f, TW_FLOAT32, TW_SHAPE(2)));
    assert_same_values(tw_safetensors_get(st, "b"), tw_tensor_from_data(i, TW_INT64, TW_SHAPE(2, 1)));
    tw_tensor *flag = tw_safetensors_get(st, "flag");
    g_assert_cmpint(tw_tensor_ndim(flag), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(flag), ==, 1);
    g_assert_cmpstr(tw_safetensors_metadata(st, "framework"), ==, "by hand");
    g_assert_cmpstr(tw_safetensors_metadata(st, "esc"), ==, "\"/\b\f\r");
    tw_safetensors_close(st);
    tw_scope_end();
    g_free(path);
    scratch_remove(dir);
}

/* ---- corrupt files ------------------------------------------------------------ */

typedef struct {
    const char *json;
    size_t data_len;  /* zero bytes after the header */
    const char *says; /* part of the message */
    const char *at;   /* where in json the offset points (NULL: not checked) */
    size_t len;       /* of json; 0: strlen */
} bad_header;

static const bad_header bad_headers[] = {
    {"hello, world", 0, "expected '{' to open the header (a JSON object), found 'h'", "hello"},
    {"[1, 2]", 0, "expected '{' to open the header", "["},
    {"", 0, "found the end of the header", NULL},
    {"   ", 0, "found the end of the header", NULL},
    {"{\"x\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "tensor 'x': unsupported dtype \"F16\"",
     "\"F16"},
    {"{\"x\":{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unsupported dtype \"f32\"", "\"f32"},
    {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,0]}}", 0,
     "tensor 'x': the shape's size overflows 64 bits", "{\"dtype"},
    {"{\"x\":{\"dtype\":\"F64\",\"shape\":[9223372036854775808],\"data_offsets\":[0,0]}}", 0,
     "dimension 0 is too large", "[9"},
    {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
     "data_offsets [0, 8] span 8 bytes, but F32 of that shape take 12", "{\"dtype"},
    {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
     "data_offsets [0, 8] run past the 4-byte data buffer", "{\"dtype"},
    {"{\"x\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[18446744073709551615,18446744073709551615]}}", 0,
     "run past the 0-byte data buffer", NULL},
    {"{\"x\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "end before they begin", NULL},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
     12, "tensors 'a' and 'b' overlap: both hold data bytes [4, 8)", NULL},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
     12, "data bytes [4, 8) belong to no tensor: a gap before 'b'", NULL},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "belong to no tensor", NULL},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 9,
     "5 bytes of trailing data after the last tensor", NULL},
    {"{}", 3, "3 bytes of trailing data after the last tensor", NULL},
    {"{} x", 0, "unexpected bytes after the header's JSON object", "x"},
    {"{}\0", 0, "unexpected bytes after the header's JSON object", NULL, 3},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
     2, "tensor 'a' appears twice", "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1"},
    {"{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "metadata key \"k\" appears twice", "\"k\":\"2"},
    {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ appears twice", "\"__metadata__\":{}}"},
    {"{\"__metadata__\":{\"k\":1}}", 0, "expected a metadata value (a string), found '1'", "1"},
    {"{\"__metadata__\":[]}", 0, "expected '{' to open __metadata__", "[]"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 0, "tensor 'a' has no \"data_offsets\"", "{\"dtype"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":1}}", 1,
     "tensor 'a': unknown key \"extra\"", "\"extra"},
    {"{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     "tensor 'a': repeated key \"dtype\"", "\"dtype\":\"U8\",\"shape"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", 1,
     "expected a shape (a non-negative integer), found '-'", "-"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,1]}}", 1, "a shape must be an integer", "1.0"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1e0],\"data_offsets\":[0,1]}}", 1, "a shape must be an integer", "1e0"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[01],\"data_offsets\":[0,1]}}", 1, "leading zero", "01"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[99999999999999999999],\"data_offsets\":[0,1]}}", 1,
     "does not fit in 64 bits", "999"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1,
     "a shape has more than 8 values", NULL},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1, "data_offsets has more than 2 values",
     "2]"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1]}}", 1, "data_offsets needs two values", "[1]}}"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1 1],\"data_offsets\":[0,1]}}", 1, "expected ',' or ']' in an array",
     "1],"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}", 1, "expected ',' or '}'", NULL},
    {"{\"a\" {}}", 0, "expected ':' after a tensor name, found '{'", "{}}"},
    {"{\"a\":{\"dtype\":\"U8\" \"shape\":[1]}}", 0, "expected ',' or '}' after an object member", "\"shape"},
    {"{\"abc", 0, "unterminated string", "\"abc"},
    {"{\"a\\q\":{}}", 0, "unknown escape '\\q'", "\\q"},
    {"{\"a\\u12\":{}}", 0, "\\u escape needs four hex digits", "\":{"},
    {"{\"a\\u12", 0, "\\u escape cut short", NULL},
    {"{\"\\udc00\":{}}", 0, "lone low surrogate \\uDC00", "\\udc00"},
    {"{\"\\ud800x\":{}}", 0, "high surrogate \\uD800 not followed by a low one", "\\ud800"},
    {"{\"\\ud800\\u0041\":{}}", 0, "followed by \\u0041, not a low surrogate", "\\ud800"},
    {"{\"\\u0000\":{}}", 0, "cannot hold NUL", "\\u0000"},
    {"{\"a\xff\":{}}", 0, "invalid UTF-8 in a string", "\xff"},
    {"{\"a\xc3\":{}}", 0, "invalid UTF-8 in a string", "\xc3"},
    {"{\"\xed\xa0\x80\":{}}", 0, "invalid UTF-8 in a string", "\xed"},
    {"{\"\xc0\xaf\":{}}", 0, "invalid UTF-8 in a string", "\xc0"},
    {"{\"a\nb\":{}}", 0, "control byte 0x0a in a string", "\nb"},
    {"{1:{}}", 0, "expected a tensor name (a string), found '1'", "1:"},
    {"{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "expected a dtype (a string), found '5'",
     "5,"},
};

static void test_corrupt_headers(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "bad.safetensors", NULL);
    uint8_t zeros[16] = {0};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_headers); i++) {
        const bad_header *c = &bad_headers[i];
        size_t len = c->len ? c->len : strlen(c->json);
        GByteArray *b = st_bytes(c->json, len, zeros, c->data_len);
        write_file(path, b->data, b->len);
        g_byte_array_free(b, TRUE);
        g_assert_null(tw_safetensors_open(path));
        if (c->at) {
            /* The offset in the file of the spot in the header. */
            char *offset = g_strdup_printf("at byte offset %zu: ", 8 + (size_t)(strstr(c->json, c->at) - c->json));
            if (!strstr(tw_last_error(), offset))
                g_error("case %zu: expected \"%s\" in \"%s\"", i, offset, tw_last_error());
            g_free(offset);
        }
        assert_error_names(path, c->says);
    }
    g_free(path);
    scratch_remove(dir);
}

/* Header fine, data not: a bool byte that is neither 0 nor 1. */
static void test_bad_bool(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "bool.safetensors", NULL);
    const char *json = "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}}   ";
    GByteArray *b = st_bytes(json, strlen(json), "\x01\x00\x02", 3);
    write_file(path, b->data, b->len);
    g_byte_array_free(b, TRUE);
    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_nonnull(st);
    g_assert_null(tw_safetensors_get(st, "b"));
    char *says = g_strdup_printf("tensor 'b': BOOL value 2 at byte offset %zu", 8 + strlen(json) + 2);
    assert_error_names(path, says);
    g_free(says);
    tw_safetensors_close(st);
    g_free(path);
    scratch_remove(dir);
}

/* A small valid file with metadata and three tensors, as bytes. */
static GBytes *small_valid_file(const char *path)
{
    tw_scope_begin();
    float w[3] = {1, 2, 3};
    tw_tensor *tensors[] = {tw_tensor_from_data(w, TW_FLOAT32, TW_SHAPE(3)), tw_scalar_of(7, TW_INT64),
                            tw_ones(TW_BOOL, TW_SHAPE(2))};
    const char *names[] = {"dense/kernel", "optimizer/iterations", "mask"};
    const char *keys[] = {"format"}, *values[] = {"twb-checkpoint"};
    g_assert_cmpint(tw_safetensors_write(path, 3, names, tensors, 1, keys, values), ==, 0);
    tw_scope_end();
    return read_file(path);
}

/* Open the file and read every tensor: each step either works or fails
 * with a message naming the file. Returns whether all of it worked. */
static bool read_everything(const char *path)
{
    tw_safetensors *st = tw_safetensors_open(path);
    if (!st) {
        assert_error_names(path, "");
        return false;
    }
    bool ok = true;
    for (int i = 0; i < tw_safetensors_count(st); i++) {
        tw_tensor *t = tw_safetensors_get(st, tw_safetensors_name(st, i));
        if (!t) {
            assert_error_names(path, "");
            ok = false;
        }
        tw_tensor_unref(t);
    }
    tw_safetensors_metadata(st, "format");
    tw_safetensors_close(st);
    return ok;
}

/* Every proper prefix of a valid file is refused when opened. */
static void test_truncation_at_every_byte(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "whole.safetensors", NULL);
    char *cut = g_build_filename(dir, "cut.safetensors", NULL);
    GBytes *whole = small_valid_file(path);
    gsize size;
    const uint8_t *p = g_bytes_get_data(whole, &size);
    g_assert_true(read_everything(path));
    for (gsize n = 0; n < size; n++) {
        write_file(cut, p, n);
        g_assert_null(tw_safetensors_open(cut));
        assert_error_names(cut, n < 8 ? "shorter than the 8-byte header length" : "");
    }
    g_bytes_unref(whole);
    g_free(path);
    g_free(cut);
    scratch_remove(dir);
}

/* Each byte of a valid file replaced by a few telling values: never a
 * crash or an out-of-bounds read (the sanitizer and valgrind runs watch),
 * always either the values or a message naming the file. */
static void test_mutations(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "whole.safetensors", NULL);
    char *bad = g_build_filename(dir, "mutant.safetensors", NULL);
    GBytes *whole = small_valid_file(path);
    gsize size = g_bytes_get_size(whole);
    uint8_t *p = g_memdup2(g_bytes_get_data(whole, NULL), size);
    static const uint8_t replacements[] = {0x00, 0xff, '"', '{', '}', '[', ',', '9', ' ', '\\', 0x80};
    int failed = 0, passed = 0;
    for (gsize i = 0; i < size; i++) {
        uint8_t keep = p[i];
        for (size_t r = 0; r < G_N_ELEMENTS(replacements); r++) {
            if (replacements[r] == keep)
                continue;
            p[i] = replacements[r];
            write_file(bad, p, size);
            if (read_everything(bad))
                passed++;
            else
                failed++;
        }
        p[i] = keep;
    }
    /* Data bytes and spaces can change harmlessly; the rest must not. */
    g_assert_cmpint(passed, >, 0);
    g_assert_cmpint(failed, >, passed);
    g_free(p);
    g_bytes_unref(whole);
    g_free(path);
    g_free(bad);
    scratch_remove(dir);
}

/* ---- writing: bad arguments and atomic replacement ---------------------------- */

static void test_write_errors(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "w.safetensors", NULL);
    tw_scope_begin();
    tw_tensor *t = tw_zeros(TW_FLOAT32, TW_SHAPE(2));
    tw_tensor *two[] = {t, t};
    const char *same[] = {"x", "x"};
    g_assert_cmpint(tw_safetensors_write(path, 2, same, two, 0, NULL, NULL), ==, -1);
    assert_error_names(path, "tensor name \"x\" given twice");
    const char *reserved[] = {"__metadata__"};
    g_assert_cmpint(tw_safetensors_write(path, 1, reserved, two, 0, NULL, NULL), ==, -1);
    assert_error_names(path, "\"__metadata__\" is reserved");
    const char *latin1[] = {"caf\xe9"};
    g_assert_cmpint(tw_safetensors_write(path, 1, latin1, two, 0, NULL, NULL), ==, -1);
    assert_error_names(path, "is not valid UTF-8");
    const char *null_name[] = {NULL};
    g_assert_cmpint(tw_safetensors_write(path, 1, null_name, two, 0, NULL, NULL), ==, -1);
    assert_error_names(path, "tensor 0 has no name");
    const char *keys[] = {"k", "k"}, *values[] = {"1", "2"};
    g_assert_cmpint(tw_safetensors_write(path, 0, NULL, NULL, 2, keys, values), ==, -1);
    assert_error_names(path, "metadata key \"k\" given twice");
    g_assert_cmpint(tw_safetensors_write(path, -1, NULL, NULL, 0, NULL, NULL), ==, -1);
    assert_error_names(path, "bad arguments");
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));

    char *nowhere = g_build_filename(dir, "missing", "w.safetensors", NULL);
    const char *names[] = {"x"};
    g_assert_cmpint(tw_safetensors_write(nowhere, 1, names, two, 0, NULL, NULL), ==, -1);
    assert_error_names(nowhere, "cannot create a file in directory");
    g_assert_null(tw_safetensors_open(nowhere));
    assert_error_names(nowhere, "cannot open: No such file or directory");
    g_assert_null(tw_safetensors_open(dir));
    assert_error_names(dir, "not a regular file");
    g_assert_cmpint(count_temp_files(dir), ==, 0);
    tw_scope_end();
    g_free(nowhere);
    g_free(path);
    scratch_remove(dir);
}

/* Write a checkpoint-sized file over `path`, expecting failure. */
static void write_big_expecting_failure(const char *path, const char *says)
{
    tw_scope_begin();
    tw_tensor *big = tw_ones(TW_FLOAT32, TW_SHAPE(64, 1024));
    const char *names[] = {"big"};
    g_assert_cmpint(tw_safetensors_write(path, 1, names, &big, 0, NULL, NULL), ==, -1);
    assert_error_names(path, says);
    tw_scope_end();
}

static void assert_unchanged(const char *path, GBytes *old)
{
    GBytes *now = read_file(path);
    g_assert_true(g_bytes_equal(now, old));
    g_bytes_unref(now);
    g_assert_true(read_everything(path));
}

/* A save that fails at any step leaves the old file as it was and no
 * temporary file behind. */
static void test_atomic_save(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    mode_t old_mask = umask(022);
    GBytes *old = small_valid_file(path);
    umask(old_mask);
    struct stat info;
    g_assert_cmpint(g_stat(path, &info), ==, 0);
    g_assert_cmpint(info.st_mode & 0777, ==, 0644); /* not mkstemp's 0600 */

    /* The write itself fails part way: the file-size limit stands in for a
     * full disk (EFBIG where a disk would give ENOSPC; the same path). */
    struct rlimit saved, small = {64 * 1024, 0};
    g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    small.rlim_max = saved.rlim_max;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
    write_big_expecting_failure(path, "cannot save the safetensors file: writing failed: File too large");
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    signal(SIGXFSZ, old_handler);
    assert_unchanged(path, old);
    g_assert_cmpint(count_temp_files(dir), ==, 0);

    /* The rename fails: a directory stands where the file should go. */
    char *taken = g_build_filename(dir, "taken", NULL);
    char *inside = g_build_filename(taken, "keep", NULL);
    g_assert_cmpint(g_mkdir(taken, 0755), ==, 0);
    write_file(inside, "x", 1);
    write_big_expecting_failure(taken, "renaming the temporary file over it failed: Is a directory");
    g_assert_true(g_file_test(inside, G_FILE_TEST_IS_REGULAR));
    g_assert_cmpint(count_temp_files(dir), ==, 0);

    /* The directory is not writable (root writes anyway: skipped then). */
    if (geteuid() != 0) {
        g_assert_cmpint(g_chmod(dir, 0555), ==, 0);
        write_big_expecting_failure(path, "cannot create a file in directory");
        g_assert_cmpint(g_chmod(dir, 0755), ==, 0);
        assert_unchanged(path, old);
        g_assert_cmpint(count_temp_files(dir), ==, 0);
    }

    /* And a save that works replaces the file whole. */
    tw_scope_begin();
    tw_tensor *t = tw_full(5, TW_INT32, TW_SHAPE(4));
    const char *names[] = {"five"};
    g_assert_cmpint(tw_safetensors_write(path, 1, names, &t, 0, NULL, NULL), ==, 0);
    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_cmpint(tw_safetensors_count(st), ==, 1);
    assert_same_values(tw_safetensors_get(st, "five"), t);
    tw_safetensors_close(st);
    tw_scope_end();
    g_assert_cmpint(count_temp_files(dir), ==, 0);
    if (geteuid() == 0)
        g_test_message("running as root: the unwritable-directory case was not run");
    g_bytes_unref(old);
    g_free(inside);
    g_free(taken);
    g_free(path);
    scratch_remove(dir);
}

/* ---- checkpoints ------------------------------------------------------------- */

/* Input (None, 4), Dense(hidden, relu), Dense(3): weights dense/kernel,
 * dense/bias, dense_1/kernel, dense_1/bias. Built from seed unless 0. */
static tw_model *small_model(int64_t hidden, uint64_t seed)
{
    tw_model *m = tw_sequential_new("net");
    tw_shape input = {2, {-1, 4}};
    g_assert_cmpint(tw_model_add(m, tw_input_layer(&input)), ==, 0);
    g_assert_cmpint(tw_model_add(m, tw_dense(hidden, "relu")), ==, 0);
    g_assert_cmpint(tw_model_add(m, tw_dense(3, NULL)), ==, 0);
    if (seed)
        g_assert_cmpint(tw_model_build(m, NULL, seed), ==, 0);
    return m;
}

typedef struct {
    GPtrArray *paths;
    GPtrArray *weights;
} weights_seen;

static int see_weight(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    (void)trainable;
    weights_seen *w = user_data;
    g_ptr_array_add(w->paths, g_strdup(path));
    g_ptr_array_add(w->weights, weight);
    return 0;
}

static weights_seen weights_of(tw_model *m)
{
    weights_seen w = {g_ptr_array_new_with_free_func(g_free), g_ptr_array_new()};
    tw_layer_foreach_weight(m, see_weight, &w);
    return w;
}

static void weights_seen_free(weights_seen *w)
{
    g_ptr_array_free(w->paths, TRUE);
    g_ptr_array_free(w->weights, TRUE);
}

static bool same_values(tw_tensor *a, tw_tensor *b)
{
    size_t bytes = (size_t)tw_tensor_numel(a) * tw_dtype_size(tw_tensor_dtype(a));
    if (tw_tensor_numel(b) != tw_tensor_numel(a) || tw_tensor_dtype(a) != tw_tensor_dtype(b))
        return false;
    void *x = g_malloc(bytes + 1), *y = g_malloc(bytes + 1);
    tw_tensor_copy_to(a, x, bytes);
    tw_tensor_copy_to(b, y, bytes);
    bool same = memcmp(x, y, bytes) == 0;
    g_free(x);
    g_free(y);
    return same;
}

/* How many weights of a and b (same architecture) hold equal values. */
static int equal_weights(tw_model *a, tw_model *b)
{
    weights_seen wa = weights_of(a), wb = weights_of(b);
    g_assert_cmpuint(wa.paths->len, ==, wb.paths->len);
    int equal = 0;
    for (guint i = 0; i < wa.paths->len; i++) {
        g_assert_cmpstr(wa.paths->pdata[i], ==, wb.paths->pdata[i]);
        equal += same_values(wa.weights->pdata[i], wb.weights->pdata[i]);
    }
    weights_seen_free(&wa);
    weights_seen_free(&wb);
    return equal;
}

static void test_model_round_trip(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "model.safetensors", NULL);
    tw_model *a = small_model(8, 1), *b = small_model(8, 2);
    g_assert_cmpint(equal_weights(a, b), ==, 2); /* the zero biases */
    const char *model_json = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"net\"}}";
    const char *training = "{\"loss\": \"mse\", \"epochs\": 3}";
    g_assert_cmpint(tw_checkpoint_save(path, a, NULL, model_json, training), ==, 0);

    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_nonnull(st);
    const char *names[] = {"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"};
    g_assert_cmpint(tw_safetensors_count(st), ==, 4);
    for (int i = 0; i < 4; i++)
        g_assert_cmpstr(tw_safetensors_name(st, i), ==, names[i]);
    g_assert_cmpstr(tw_safetensors_metadata(st, "format"), ==, "twb-checkpoint");
    g_assert_cmpstr(tw_safetensors_metadata(st, "version"), ==, "1");
    tw_safetensors_close(st);

    g_assert_cmpint(tw_checkpoint_restore(path, b, NULL), ==, 0);
    g_assert_cmpint(equal_weights(a, b), ==, 4);

    char *json = tw_checkpoint_read_metadata(path, "model_json");
    g_assert_cmpstr(json, ==, model_json);
    free(json);
    json = tw_checkpoint_read_metadata(path, "training_config");
    g_assert_cmpstr(json, ==, training);
    free(json);
    g_assert_null(tw_checkpoint_read_metadata(path, "absent"));
    assert_error_names(path, "the checkpoint has no metadata \"absent\"");

    /* Without the optional metadata, only format and version. */
    g_assert_cmpint(tw_checkpoint_save(path, a, NULL, NULL, NULL), ==, 0);
    g_assert_null(tw_checkpoint_read_metadata(path, "model_json"));
    assert_error_names(path, "no metadata \"model_json\"");
    tw_layer_unref(a);
    tw_layer_unref(b);
    g_free(path);
    scratch_remove(dir);
}

/* Restored into a model not built yet: the values wait in their layers and
 * are assigned when it is built, whatever the seed. */
static void test_deferred_restore(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "deferred.safetensors", NULL);
    tw_model *a = small_model(8, 1), *later = small_model(8, 0);
    g_assert_cmpint(tw_checkpoint_save(path, a, NULL, NULL, NULL), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(path, later, NULL), ==, 0);
    g_assert_cmpint(tw_layer_pending_restores(later), ==, 4);
    g_assert_cmpint(tw_model_build(later, NULL, 99), ==, 0);
    g_assert_cmpint(tw_layer_pending_restores(later), ==, 0);
    g_assert_cmpint(equal_weights(a, later), ==, 4);

    /* A path through a layer the model lacks fails before anything waits. */
    tw_model *other = tw_sequential_new("other");
    tw_shape input = {2, {-1, 4}};
    tw_model_add(other, tw_input_layer(&input));
    tw_model_add(other, tw_dense(8, "relu"));
    tw_model_add(other, tw_layer_new("Dense", "head"));
    g_assert_cmpint(tw_checkpoint_restore(path, other, NULL), ==, -1);
    assert_error_names(path, "the checkpoint has weight 'dense_1/kernel', but model 'other' has no layer \"dense_1\"");
    g_assert_cmpint(tw_layer_pending_restores(other), ==, 0);

    /* The optimizer's part needs the variables: refused, nothing changed. */
    tw_model *unbuilt = small_model(8, 0);
    tw_optimizer *adam = tw_optimizer_new_named("adam", 0.01);
    g_assert_cmpint(tw_checkpoint_restore(path, unbuilt, adam), ==, -1);
    assert_error_names(path, "restoring an optimizer needs a built model: build model 'net' first");
    g_assert_cmpint(tw_layer_pending_restores(unbuilt), ==, 0);
    tw_optimizer_free(adam);
    tw_layer_unref(unbuilt);
    tw_layer_unref(other);
    tw_layer_unref(a);
    tw_layer_unref(later);
    g_free(path);
    scratch_remove(dir);
}

/* The same gradients (ones, scaled by step) to every trainable variable. */
static void train_steps(tw_model *m, tw_optimizer *opt, int steps)
{
    tw_variables vars = tw_model_trainable_variables(m);
    for (int s = 1; s <= steps; s++) {
        tw_scope_begin();
        tw_tensor *grads[8];
        g_assert_cmpint(vars.n, <=, 8);
        for (int i = 0; i < vars.n; i++)
            grads[i] = tw_mul(tw_ones_like(vars.items[i]), tw_scalar(0.1 * s));
        g_assert_cmpint(tw_optimizer_apply_gradients(opt, vars.n, vars.items, grads), ==, 0);
        tw_scope_end();
    }
}

typedef struct {
    tw_model *model;
    tw_optimizer *other;
    int compared, equal;
} slot_check;

/* Slot by slot: the other optimizer's slot of the same weight (by path) holds the same values. */
static int compare_slot(tw_tensor *variable, const char *slot_name, tw_tensor *slot, void *user_data)
{
    slot_check *c = user_data;
    tw_variables vars = tw_model_trainable_variables(c->model);
    const char *name = tw_variable_name(variable);
    for (int i = 0; i < vars.n; i++)
        if (!strcmp(tw_variable_name(vars.items[i]), name)) {
            tw_scope_begin();
            c->equal += same_values(slot, tw_optimizer_slot(c->other, vars.items[i], slot_name));
            tw_scope_end();
            c->compared++;
        }
    return 0;
}

static void test_optimizer_round_trip(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "opt.safetensors", NULL);
    tw_model *a = small_model(8, 1), *b = small_model(8, 2);
    tw_optimizer *adam_a = tw_optimizer_new_named("adam", 0.01), *adam_b = tw_optimizer_new_named("adam", 0.01);
    train_steps(a, adam_a, 3);
    g_assert_cmpint(tw_checkpoint_save(path, a, adam_a, NULL, NULL), ==, 0);

    tw_safetensors *st = tw_safetensors_open(path);
    g_assert_true(tw_safetensors_has(st, "optimizer/dense/kernel/m"));
    g_assert_true(tw_safetensors_has(st, "optimizer/dense_1/bias/v"));
    g_assert_cmpint(tw_safetensors_count(st), ==, 4 + 4 * 2 + 1);
    tw_scope_begin();
    tw_tensor *iterations = tw_safetensors_get(st, "optimizer/iterations");
    g_assert_cmpint(tw_tensor_dtype(iterations), ==, TW_INT64);
    g_assert_cmpint(tw_tensor_ndim(iterations), ==, 0);
    g_assert_cmpfloat(tw_tensor_item(iterations), ==, 3);
    tw_scope_end();
    tw_safetensors_close(st);

    g_assert_cmpint(tw_checkpoint_restore(path, b, adam_b), ==, 0);
    g_assert_cmpint(equal_weights(a, b), ==, 4);
    g_assert_cmpint(tw_optimizer_iterations(adam_b), ==, 3);
    slot_check check = {b, adam_b, 0, 0};
    tw_optimizer_foreach_slot(adam_a, compare_slot, &check);
    g_assert_cmpint(check.compared, ==, 8);
    g_assert_cmpint(check.equal, ==, 8);
    /* The next step agrees too: the whole state came back. */
    train_steps(a, adam_a, 1);
    train_steps(b, adam_b, 1);
    g_assert_cmpint(equal_weights(a, b), ==, 4);

    /* Slots of another optimizer's kind, and no optimizer state at all. */
    tw_optimizer *sgd = tw_optimizer_new_named("sgd", 0.01);
    tw_model *d = small_model(8, 7), *d_copy = small_model(8, 7);
    g_assert_cmpint(tw_checkpoint_restore(path, d, sgd), ==, -1);
    assert_error_names(path, "optimizer entry 'optimizer/dense/kernel/m': ");
    g_assert_cmpint(equal_weights(d, d_copy), ==, 4); /* checked before any weight was assigned */
    g_assert_cmpint(tw_optimizer_iterations(sgd), ==, 0);
    /* With the training settings `twb train` writes, the message names
     * both optimizers and what to do. */
    char *named = g_build_filename(dir, "named.safetensors", NULL);
    g_assert_cmpint(tw_checkpoint_save(named, a, adam_a, NULL, "{\"settings\": {\"optimizer\": \"adam\"}}"), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(named, d, sgd), ==, -1);
    assert_error_names(named, "the checkpoint was saved by optimizer adam, this one is sgd: its state "
                              "('optimizer/dense/kernel/m') has no place here; resume with optimizer adam");
    g_free(named);
    tw_layer_unref(d);
    tw_layer_unref(d_copy);
    char *plain = g_build_filename(dir, "plain.safetensors", NULL);
    g_assert_cmpint(tw_checkpoint_save(plain, a, NULL, NULL, NULL), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(plain, b, adam_b), ==, -1);
    assert_error_names(plain, "the checkpoint holds no optimizer state");
    /* Without an optimizer, a file's optimizer state is left alone. */
    g_assert_cmpint(tw_checkpoint_restore(path, b, NULL), ==, 0);

    /* An optimizer holding slots of variables outside the model. */
    tw_model *c = small_model(8, 3);
    g_assert_cmpint(tw_checkpoint_save(path, c, adam_a, NULL, NULL), ==, -1);
    assert_error_names(path, "the optimizer holds slot 'm' of variable 'dense/kernel', which is not a weight");
    tw_optimizer_free(sgd);
    tw_optimizer_free(adam_a);
    tw_optimizer_free(adam_b);
    tw_layer_unref(a);
    tw_layer_unref(b);
    tw_layer_unref(c);
    g_free(plain);
    g_free(path);
    scratch_remove(dir);
}

/* Another model's checkpoint, or another file: refused with the tensor
 * path and the file named, and the model left as it was. */
static void test_restore_mismatches(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "a.safetensors", NULL);
    tw_model *a = small_model(8, 1);
    g_assert_cmpint(tw_checkpoint_save(path, a, NULL, NULL, NULL), ==, 0);

    tw_model *wider = small_model(5, 2), *copy = small_model(5, 2);
    g_assert_cmpint(tw_checkpoint_restore(path, wider, NULL), ==, -1);
    assert_error_names(path, "'dense/kernel' has shape (4, 8) in the checkpoint but (4, 5) in the model");
    g_assert_cmpint(equal_weights(wider, copy), ==, 4);

    tw_model *deeper = small_model(8, 0);
    tw_model_add(deeper, tw_dense(2, NULL));
    g_assert_cmpint(tw_model_build(deeper, NULL, 2), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(path, deeper, NULL), ==, -1);
    assert_error_names(path, "weight 'dense_2/kernel' of model 'net' is missing from the checkpoint");

    tw_model *shallow = tw_sequential_new("net");
    tw_shape input = {2, {-1, 4}};
    tw_model_add(shallow, tw_input_layer(&input));
    tw_model_add(shallow, tw_dense(8, "relu"));
    g_assert_cmpint(tw_model_build(shallow, NULL, 2), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(path, shallow, NULL), ==, -1);
    assert_error_names(path, "the checkpoint has weight 'dense_1/kernel', which model 'net' does not have");

    tw_model *f64 = small_model(8, 0);
    tw_layer_set_dtype(f64, TW_FLOAT64);
    g_assert_cmpint(tw_model_build(f64, NULL, 2), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(path, f64, NULL), ==, -1);
    assert_error_names(path, "'dense/kernel' is float32 in the checkpoint but float64 in the model");

    /* Not a checkpoint, a later version, a model not built yet. */
    char *other = g_build_filename(dir, "other.safetensors", NULL);
    tw_scope_begin();
    tw_tensor *t = tw_zeros(TW_FLOAT32, TW_SHAPE(2));
    const char *names[] = {"dense/bias"};
    const char *keys[] = {"format", "version"}, *v2[] = {"twb-checkpoint", "2"};
    g_assert_cmpint(tw_safetensors_write(other, 1, names, &t, 0, NULL, NULL), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(other, a, NULL), ==, -1);
    assert_error_names(other, "not a Tensor Workbench checkpoint (its metadata \"format\" is missing");
    g_assert_cmpint(tw_safetensors_write(other, 1, names, &t, 2, keys, v2), ==, 0);
    g_assert_cmpint(tw_checkpoint_restore(other, a, NULL), ==, -1);
    assert_error_names(other, "checkpoint version \"2\"; this build reads version 1");
    g_assert_null(tw_checkpoint_read_metadata(other, "format"));
    assert_error_names(other, "checkpoint version \"2\"");
    tw_scope_end();
    tw_model *unbuilt = small_model(8, 0);
    g_assert_cmpint(tw_checkpoint_save(path, unbuilt, NULL, NULL, NULL), ==, -1);
    assert_error_names(path, "model 'net' is not built");

    /* A layer called "optimizer" would be mistaken for optimizer state. */
    tw_model *odd = tw_sequential_new("odd");
    tw_model_add(odd, tw_input_layer(&input));
    tw_model_add(odd, tw_layer_new("Dense", "optimizer"));
    g_assert_cmpint(tw_model_build(odd, NULL, 1), ==, 0);
    g_assert_cmpint(tw_checkpoint_save(path, odd, NULL, NULL, NULL), ==, -1);
    assert_error_names(path, "weight 'optimizer/kernel' of model 'odd' clashes with the checkpoint's optimizer");

    /* The failed saves left the first file as it was. */
    tw_model *fresh = small_model(8, 5);
    g_assert_cmpint(tw_checkpoint_restore(path, fresh, NULL), ==, 0);
    g_assert_cmpint(equal_weights(a, fresh), ==, 4);
    tw_layer_unref(fresh);
    tw_layer_unref(odd);
    tw_layer_unref(unbuilt);
    tw_layer_unref(f64);
    tw_layer_unref(shallow);
    tw_layer_unref(deeper);
    tw_layer_unref(wider);
    tw_layer_unref(copy);
    tw_layer_unref(a);
    g_free(other);
    g_free(path);
    scratch_remove(dir);
}

/* Keras' ModelCheckpoint: every epoch without a monitor; with one, only when
 * it improves; the resume position reads back. */
static void test_model_checkpoint_callback(void)
{
    char *dir = scratch_dir();
    char *every = g_build_filename(dir, "every.safetensors", NULL), *best = g_build_filename(dir, "best.safetensors", NULL);
    tw_model *m = small_model(8, 1);
    tw_loss loss = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR);
    /* A zero learning rate: val_loss is the same every epoch, so "best" saves once. */
    g_assert_cmpint(tw_model_compile(m, tw_optimizer_new_named("sgd", 0.0), &loss, 0, NULL), ==, 0);
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(3);
    tw_tensor *x = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(40, 4), 0, 1);
    tw_tensor *y = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(40, 3), 0, 1);
    tw_model_checkpoint *a = tw_model_checkpoint_new(every, NULL, NULL, "{\"note\": \"test\"}");
    tw_model_checkpoint *b = tw_model_checkpoint_new(best, "val_loss", NULL, NULL);
    tw_callback callbacks[2] = {tw_model_checkpoint_callback(a), tw_model_checkpoint_callback(b)};
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 3;
    opt.validation_split = 0.25;
    opt.callbacks = callbacks;
    opt.ncallbacks = 2;
    tw_history *h = tw_model_fit(m, x, y, &opt);
    g_assert_nonnull(h);
    g_assert_cmpint(tw_model_checkpoint_saves(a), ==, 3);
    g_assert_cmpint(tw_model_checkpoint_saves(b), ==, 1);
    int epoch;
    int64_t step;
    g_assert_cmpint(tw_checkpoint_resume_position(every, &epoch, &step), ==, 0);
    g_assert_cmpint(epoch, ==, 3);
    g_assert_cmpint(step, ==, 0);
    char *config = tw_checkpoint_read_metadata(every, "training_config");
    g_assert_nonnull(strstr(config, "\"settings\": {\"note\": \"test\"}"));
    free(config);
    g_assert_cmpint(tw_model_checkpoint_save_now(a, m, 1, 7), ==, 0);
    g_assert_cmpint(tw_checkpoint_resume_position(every, &epoch, &step), ==, 0);
    g_assert_cmpint(epoch, ==, 1);
    g_assert_cmpint(step, ==, 7);

    /* A monitor the logs lack fails the fit, naming it. */
    tw_model_checkpoint *c = tw_model_checkpoint_new(best, "val_accuracy", NULL, NULL);
    callbacks[0] = tw_model_checkpoint_callback(c);
    opt.ncallbacks = 1;
    g_assert_null(tw_model_fit(m, x, y, &opt));
    g_assert_nonnull(strstr(tw_last_error(), "val_accuracy"));

    tw_history_free(h);
    tw_model_checkpoint_free(a);
    tw_model_checkpoint_free(b);
    tw_model_checkpoint_free(c);
    tw_rng_free(rng);
    tw_scope_end();
    tw_layer_unref(m);
    g_free(every);
    g_free(best);
    scratch_remove(dir);
}


/* A writer killed mid-write leaves "<path>.tmp-XXXXXX" behind: the next
 * save of that path removes it. A live writer's (it holds its flock), an
 * empty one just created (a writer between mkstemp and flock) and another
 * target's stay. */
static void test_stale_temporary_files(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    char *dead = g_strconcat(path, ".tmp-AbC123", NULL), *live = g_strconcat(path, ".tmp-LiVe99", NULL);
    char *fresh = g_strconcat(path, ".tmp-EmPty0", NULL);
    char *other = g_build_filename(dir, "other.safetensors.tmp-XyZ789", NULL);
    char junk[4096];
    memset(junk, 7, sizeof junk);
    g_assert_true(g_file_set_contents(dead, junk, sizeof junk, NULL));
    g_assert_true(g_file_set_contents(live, junk, sizeof junk, NULL));
    g_assert_true(g_file_set_contents(fresh, "", 0, NULL));
    g_assert_true(g_file_set_contents(other, junk, sizeof junk, NULL));
    int ready[2];
    g_assert_cmpint(pipe(ready), ==, 0);
    fflush(NULL);
    pid_t child = fork();
    g_assert_cmpint(child, >=, 0);
    if (child == 0) { /* a writer still writing: holds the lock */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with a failed test */
        int fd = open(live, O_RDWR);
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(ready[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char byte;
    g_assert_cmpint(read(ready[0], &byte, 1), ==, 1);

    GBytes *saved = small_valid_file(path);
    g_assert_false(g_file_test(dead, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(live, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(fresh, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(other, G_FILE_TEST_EXISTS));

    /* Killed: its file is stale now. */
    g_assert_cmpint(kill(child, SIGKILL), ==, 0);
    g_assert_cmpint(waitpid(child, NULL, 0), ==, child);
    g_bytes_unref(small_valid_file(path));
    g_assert_false(g_file_test(live, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(other, G_FILE_TEST_EXISTS));
    close(ready[0]);
    close(ready[1]);
    g_bytes_unref(saved);
    g_free(dead);
    g_free(live);
    g_free(fresh);
    g_free(other);
    g_free(path);
    scratch_remove(dir);
}

/* A resume position that is no position (an epoch past int, a negative
 * step) is refused, naming the checkpoint. */
static void test_resume_position_refused(void)
{
    char *dir = scratch_dir();
    char *path = g_build_filename(dir, "ckpt.safetensors", NULL);
    tw_model *m = small_model(4, 1);
    tw_scope_begin();
    tw_shape in = {.ndim = 2, .dims = {-1, 4}};
    g_assert_cmpint(tw_model_build(m, &in, 1), ==, 0);
    g_assert_cmpint(tw_checkpoint_save(path, m, NULL, NULL, "{\"epoch\": 9999999999, \"step\": 0}"), ==, 0);
    int epoch = -1;
    int64_t step = -1;
    g_assert_cmpint(tw_checkpoint_resume_position(path, &epoch, &step), ==, -1);
    char *message = g_strdup_printf("%s: the training config says epoch 9999999999, step 0: not a position to resume at",
                                    path);
    g_assert_cmpstr(tw_last_error(), ==, message);
    g_free(message);
    g_assert_cmpint(epoch, ==, 0);
    g_assert_cmpint(step, ==, 0);
    tw_scope_end();
    tw_layer_unref(m);
    g_free(path);
    scratch_remove(dir);
}

/* The settings' record in checkpoints and runs: every field, the learning
 * rate as a number or, when not known, null; copies own their strings. */
static void test_train_settings_record(void)
{
    tw_train_settings s = tw_train_settings_defaults();
    g_assert_cmpstr(s.optimizer, ==, "adam");
    g_assert_true(isnan(s.learning_rate));
    char data[] = "spirals";
    s.data = data;
    s.epochs = 2;
    s.batch_size = 16;
    s.seed = 5;
    s.validation_split = 0.25;
    char *json = tw_train_settings_json(&s, 0.5);
    g_assert_cmpstr(json, ==,
                    "{\"data\":\"spirals\",\"epochs\":2,\"batch_size\":16,\"seed\":5,\"optimizer\":\"adam\","
                    "\"learning_rate\":0.5,\"validation_split\":0.25}");
    free(json);
    json = tw_train_settings_json(&s, NAN);
    g_assert_nonnull(strstr(json, "\"learning_rate\":null"));
    free(json);

    tw_train_settings *copy = tw_train_settings_copy(&s);
    g_assert_true(copy->data != s.data);
    data[0] = 'S';
    g_assert_cmpstr(copy->data, ==, "spirals");
    g_assert_cmpstr(copy->optimizer, ==, "adam");
    g_assert_null(copy->labels);
    g_assert_cmpint(copy->batch_size, ==, 16);
    g_assert_null(copy->more_data);
    tw_train_settings_free(copy);
    tw_train_settings_free(NULL);

    /* a model of two inputs: a file each, the second as "data_1" */
    char a[] = "a.npy", b[] = "b.npy";
    char *more[] = {b, NULL};
    s.data = a;
    s.more_data = more;
    json = tw_train_settings_json(&s, 0.5);
    g_assert_nonnull(strstr(json, "{\"data\":\"a.npy\",\"data_1\":\"b.npy\",\"epochs\":2,"));
    free(json);
    copy = tw_train_settings_copy(&s);
    b[0] = 'B';
    g_assert_cmpstr(copy->more_data[0], ==, "b.npy");
    g_assert_null(copy->more_data[1]);
    tw_train_settings_free(copy);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/safetensors/round-trip-dtypes", test_round_trip_dtypes);
    g_test_add_func("/data/safetensors/header-layout", test_header_layout);
    g_test_add_func("/data/safetensors/hand-written-file", test_hand_written_file);
    g_test_add_func("/data/safetensors/corrupt-headers", test_corrupt_headers);
    g_test_add_func("/data/safetensors/bad-bool", test_bad_bool);
    g_test_add_func("/data/safetensors/truncation-at-every-byte", test_truncation_at_every_byte);
    g_test_add_func("/data/safetensors/mutations", test_mutations);
    g_test_add_func("/data/safetensors/write-errors", test_write_errors);
    g_test_add_func("/data/safetensors/atomic-save", test_atomic_save);
    g_test_add_func("/data/checkpoint/model-round-trip", test_model_round_trip);
    g_test_add_func("/data/checkpoint/deferred-restore", test_deferred_restore);
    g_test_add_func("/data/checkpoint/optimizer-round-trip", test_optimizer_round_trip);
    g_test_add_func("/data/checkpoint/restore-mismatches", test_restore_mismatches);
    g_test_add_func("/data/checkpoint/model-checkpoint-callback", test_model_checkpoint_callback);
    g_test_add_func("/data/safetensors/stale-temporary-files", test_stale_temporary_files);
    g_test_add_func("/data/checkpoint/resume-position-refused", test_resume_position_refused);
    g_test_add_func("/data/checkpoint/train-settings-record", test_train_settings_record);
    return g_test_run();
}
