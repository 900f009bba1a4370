/* HDF5 through libhdf5, in memory (see hdf5_file.h). */
#include "hdf5_file.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw/error.h"

/* What one Keras attribute may hold before Keras splits it into chunks
 * (keras.saving.legacy.hdf5_format's HDF5_OBJECT_HEADER_LIMIT). */
#define KERAS_ATTR_LIMIT 64512

static GRecMutex h5_mutex;

void tw__h5_lock(void)
{
    g_rec_mutex_lock(&h5_mutex);
    /* No printed error stacks: failures come back as our messages. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void tw__h5_unlock(void)
{
    g_rec_mutex_unlock(&h5_mutex);
}

int tw__h5_is_hdf5(const uint8_t *bytes, size_t size)
{
    return size >= 8 && !memcmp(bytes, TW_H5_SIGNATURE, 8);
}

/* The innermost description on HDF5's error stack (where it noticed). */
static herr_t first_message(unsigned n, const H5E_error2_t *err, void *data)
{
    char *out = data;
    if (n == 0 && err->desc)
        snprintf(out, 200, "%s", err->desc);
    return 0;
}

int tw__h5_fail(const char *where, const char *what)
{
    char detail[200] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_message, detail);
    H5Eclear2(H5E_DEFAULT);
    if (detail[0])
        return tw_error_set("%s: %s (HDF5: %s)", where, what, detail);
    return tw_error_set("%s: %s", where, what);
}

static hid_t core_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* Files held in memory still need names unique among the open ones. */
static void image_name(char *buf, size_t size)
{
    static gint counter;
    snprintf(buf, size, "twb-memory-%d.h5", g_atomic_int_add(&counter, 1));
}

hid_t tw__h5_open_image(const uint8_t *bytes, size_t size, const char *name)
{
    const char *why = NULL;
    long long damaged = tw__h5_is_hdf5(bytes, size) ? tw__h5_damaged_global_heap(bytes, size, &why) : -1;
    if (damaged >= 0) {
        tw_error_set("%s: a damaged HDF5 global heap at byte %lld (%s)", name, damaged, why);
        return H5I_INVALID_HID;
    }
    tw__h5_lock();
    hid_t file = H5I_INVALID_HID;
    hid_t fapl = core_fapl();
    char mem_name[64];
    image_name(mem_name, sizeof mem_name);
    if (!tw__h5_is_hdf5(bytes, size))
        tw_error_set("%s: not an HDF5 file (no HDF5 signature at its start)", name);
    else if (fapl < 0 || H5Pset_file_image(fapl, (void *)bytes, size) < 0)
        tw__h5_fail(name, "cannot hand the file to HDF5");
    else if ((file = H5Fopen(mem_name, H5F_ACC_RDONLY, fapl)) < 0)
        tw__h5_fail(name, "not a readable HDF5 file (corrupt or truncated)");
    if (fapl >= 0)
        H5Pclose(fapl);
    tw__h5_unlock();
    return file;
}

hid_t tw__h5_create_image(const char *name)
{
    tw__h5_lock();
    hid_t fapl = core_fapl();
    char mem_name[64];
    image_name(mem_name, sizeof mem_name);
    hid_t file = fapl >= 0 ? H5Fcreate(mem_name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5I_INVALID_HID;
    if (file < 0)
        tw__h5_fail(name, "cannot create an HDF5 file in memory");
    if (fapl >= 0)
        H5Pclose(fapl);
    tw__h5_unlock();
    return file;
}

uint8_t *tw__h5_image_bytes(hid_t file, const char *name, size_t *size)
{
    tw__h5_lock();
    uint8_t *bytes = NULL;
    ssize_t n = H5Fflush(file, H5F_SCOPE_GLOBAL) < 0 ? -1 : H5Fget_file_image(file, NULL, 0);
    if (n > 0 && (bytes = malloc((size_t)n)) && H5Fget_file_image(file, bytes, (size_t)n) == n) {
        *size = (size_t)n;
    } else {
        free(bytes);
        bytes = NULL;
        tw__h5_fail(name, "cannot take the HDF5 file's bytes");
    }
    tw__h5_unlock();
    return bytes;
}

int tw__h5_has_attr(hid_t obj, const char *attr)
{
    tw__h5_lock();
    htri_t r = H5Aexists(obj, attr);
    H5Eclear2(H5E_DEFAULT);
    tw__h5_unlock();
    return r > 0;
}

int tw__h5_has_link(hid_t loc, const char *path)
{
    /* H5Lexists wants every component but the last to exist: walk them. */
    tw__h5_lock();
    char *copy = g_strdup(path);
    int found = 1;
    for (char *slash = copy; found && slash;) {
        slash = strchr(slash + (slash == copy ? 0 : 1), '/');
        if (slash)
            *slash = '\0';
        found = H5Lexists(loc, copy, H5P_DEFAULT) > 0;
        if (slash)
            *slash = '/';
    }
    H5Eclear2(H5E_DEFAULT);
    g_free(copy);
    tw__h5_unlock();
    return found;
}

/* Reads the strings of an open attribute of string type into a vector
 * (appended to `out`). */
static int read_strings(hid_t attr, hid_t type, hssize_t count, GPtrArray *out, const char *where, const char *name)
{
    if (H5Tis_variable_str(type) > 0) {
        char **values = g_new0(char *, count ? count : 1);
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5Tget_cset(type));
        herr_t rc = H5Aread(attr, mem, values);
        if (rc >= 0) {
            for (hssize_t i = 0; i < count; i++)
                g_ptr_array_add(out, g_strdup(values[i] ? values[i] : ""));
            hid_t space = H5Aget_space(attr);
            H5Dvlen_reclaim(mem, space, H5P_DEFAULT, values);
            H5Sclose(space);
        }
        H5Tclose(mem);
        g_free(values);
        if (rc < 0) {
            char what[160];
            snprintf(what, sizeof what, "cannot read attribute '%s'", name);
            return tw__h5_fail(where, what);
        }
        return 0;
    }
    size_t width = H5Tget_size(type);
    if (width == 0 || width > (1u << 24) || (size_t)count > ((size_t)1 << 30) / width)
        return tw_error_set("%s: attribute '%s' holds strings of an implausible size", where, name);
    char *buf = g_malloc0(width * (size_t)count + 1);
    hid_t mem = H5Tcopy(type);
    herr_t rc = H5Aread(attr, mem, buf);
    H5Tclose(mem);
    if (rc < 0) {
        g_free(buf);
        char what[160];
        snprintf(what, sizeof what, "cannot read attribute '%s'", name);
        return tw__h5_fail(where, what);
    }
    for (hssize_t i = 0; i < count; i++)
        g_ptr_array_add(out, g_strndup(buf + (size_t)i * width, width)); /* null-padded */
    g_free(buf);
    return 0;
}

/* Appends the attribute's strings to out; 1 when absent. */
static int append_attr_strings(hid_t obj, const char *name, GPtrArray *out, bool scalar, const char *where)
{
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 1;
    }
    hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
    if (attr < 0) {
        char what[160];
        snprintf(what, sizeof what, "cannot open attribute '%s'", name);
        return tw__h5_fail(where, what);
    }
    hid_t type = H5Aget_type(attr), space = H5Aget_space(attr);
    hssize_t count = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    int rc;
    if (type < 0 || count < 0)
        rc = tw__h5_fail(where, "cannot read an attribute's type");
    else if (H5Tget_class(type) != H5T_STRING)
        /* An empty list is what NumPy makes of [] (float64, no elements). */
        rc = !scalar && count == 0 ? 0 : tw_error_set("%s: attribute '%s' is not a string", where, name);
    else if (scalar && count != 1)
        rc = tw_error_set("%s: attribute '%s' holds %lld strings, expected one", where, name, (long long)count);
    else
        rc = read_strings(attr, type, count, out, where, name);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    H5Aclose(attr);
    return rc;
}

char *tw__h5_attr_string(hid_t obj, const char *attr, const char *where)
{
    tw__h5_lock();
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    int rc = append_attr_strings(obj, attr, out, true, where);
    if (rc == 1)
        tw_error_set("%s: no attribute '%s'", where, attr);
    char *value = rc == 0 ? strdup(out->pdata[0]) : NULL;
    g_ptr_array_free(out, true);
    tw__h5_unlock();
    return value;
}

char **tw__h5_attr_strings(hid_t obj, const char *attr, const char *where)
{
    tw__h5_lock();
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    int rc = append_attr_strings(obj, attr, out, false, where);
    if (rc == 1) { /* Keras' chunks: attr0, attr1, ... */
        char chunk[256];
        int i = 0;
        do
            snprintf(chunk, sizeof chunk, "%s%d", attr, i++);
        while ((rc = append_attr_strings(obj, chunk, out, false, where)) == 0);
        if (rc == 1 && i == 1)
            tw_error_set("%s: no attribute '%s'", where, attr);
        else if (rc == 1)
            rc = 0;
    }
    char **values = NULL;
    if (rc == 0) {
        g_ptr_array_set_free_func(out, NULL);
        g_ptr_array_add(out, NULL);
        values = (char **)g_ptr_array_free(out, false);
    } else {
        g_ptr_array_free(out, true);
    }
    tw__h5_unlock();
    return values;
}

int tw__h5_set_attr_string(hid_t obj, const char *attr, const char *value, const char *where)
{
    tw__h5_lock();
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, attr, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, type, &value) >= 0 ? 0 : tw__h5_fail(where, "cannot write an attribute");
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
    tw__h5_unlock();
    return rc;
}

/* One attribute of n fixed-length, null-padded strings (NumPy's "S" dtype;
 * an empty list is NumPy's empty float64 array). */
static int write_fixed_strings(hid_t obj, const char *attr, int n, const char *const *values, const char *where)
{
    size_t width = 1;
    for (int i = 0; i < n; i++)
        width = MAX(width, strlen(values[i]));
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t type = n ? H5Tcopy(H5T_C_S1) : H5Tcopy(H5T_IEEE_F64LE);
    if (n) {
        H5Tset_size(type, width);
        H5Tset_strpad(type, H5T_STR_NULLPAD);
    }
    char *buf = g_malloc0(width * (size_t)n + 1);
    for (int i = 0; i < n; i++)
        memcpy(buf + (size_t)i * width, values[i], strlen(values[i]));
    hid_t a = H5Acreate2(obj, attr, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, type, buf) >= 0 ? 0 : tw__h5_fail(where, "cannot write an attribute");
    if (a >= 0)
        H5Aclose(a);
    g_free(buf);
    H5Tclose(type);
    H5Sclose(space);
    return rc;
}

int tw__h5_set_attr_strings(hid_t obj, const char *attr, int n, const char *const *values, const char *where)
{
    tw__h5_lock();
    size_t width = 1;
    for (int i = 0; i < n; i++)
        width = MAX(width, strlen(values[i]));
    /* NumPy's array_split into the fewest chunks that each fit, as Keras
     * does (the first n % chunks chunks take one more). */
    int chunks = 1;
    while (chunks < n && ((size_t)(n + chunks - 1) / (size_t)chunks) * width > KERAS_ATTR_LIMIT)
        chunks++;
    int rc = 0;
    if (chunks == 1) {
        rc = write_fixed_strings(obj, attr, n, values, where);
    } else {
        int at = 0;
        for (int c = 0; c < chunks && !rc; c++) {
            int count = n / chunks + (c < n % chunks);
            char name[256];
            snprintf(name, sizeof name, "%s%d", attr, c);
            rc = write_fixed_strings(obj, name, count, values + at, where);
            at += count;
        }
    }
    tw__h5_unlock();
    return rc;
}

/* ---- datasets ------------------------------------------------------------- */

static hid_t native_type(tw_dtype dtype)
{
    switch (dtype) {
    case TW_FLOAT32: return H5T_NATIVE_FLOAT;
    case TW_FLOAT64: return H5T_NATIVE_DOUBLE;
    case TW_INT32: return H5T_NATIVE_INT32;
    case TW_INT64: return H5T_NATIVE_INT64;
    case TW_UINT8: return H5T_NATIVE_UINT8;
    default: return H5I_INVALID_HID;
    }
}

/* The engine dtype a stored type reads into (float16 widens to float32). */
static int dtype_of(hid_t type, tw_dtype *dtype)
{
    size_t size = H5Tget_size(type);
    switch (H5Tget_class(type)) {
    case H5T_FLOAT:
        *dtype = size <= 4 ? TW_FLOAT32 : TW_FLOAT64;
        return size <= 8 ? 0 : -1;
    case H5T_INTEGER:
        if (size == 1 && H5Tget_sign(type) == H5T_SGN_NONE)
            *dtype = TW_UINT8;
        else
            *dtype = size <= 4 ? TW_INT32 : TW_INT64;
        return size <= 8 ? 0 : -1;
    default:
        return -1;
    }
}

static tw_tensor *read_tensor(hid_t loc, const char *path, size_t max_bytes, const char *where)
{
    char what[600];
    hid_t set = H5Dopen2(loc, path, H5P_DEFAULT);
    if (set < 0) {
        snprintf(what, sizeof what, "cannot open dataset '%s'", path);
        tw__h5_fail(where, what);
        return NULL;
    }
    tw_tensor *t = NULL;
    hid_t type = H5Dget_type(set), space = H5Dget_space(set);
    int ndim = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    tw_dtype dtype = TW_FLOAT32;
    hsize_t dims[H5S_MAX_RANK];
    int64_t shape[TW_MAX_DIMS];
    size_t bytes = 0;
    if (type < 0 || ndim < 0) {
        snprintf(what, sizeof what, "dataset '%s': cannot read its type or shape", path);
        tw__h5_fail(where, what);
    } else if (dtype_of(type, &dtype) < 0) {
        tw_error_set("%s: dataset '%s' holds neither floats nor integers", where, path);
    } else if (ndim > TW_MAX_DIMS) {
        tw_error_set("%s: dataset '%s' has %d dimensions; at most %d are supported", where, path, ndim, TW_MAX_DIMS);
    } else if (H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        snprintf(what, sizeof what, "dataset '%s': cannot read its shape", path);
        tw__h5_fail(where, what);
    } else {
        bytes = tw_dtype_size(dtype);
        for (int i = 0; i < ndim; i++) {
            shape[i] = (int64_t)dims[i];
            if (dims[i] > INT64_MAX || (dims[i] && bytes > max_bytes / dims[i]))
                bytes = SIZE_MAX;
            else
                bytes *= dims[i];
        }
        if (bytes > max_bytes) {
            tw_error_set("%s: dataset '%s' is larger than the file could hold (%zu bytes at most)", where, path,
                         max_bytes);
        } else {
            t = tw_tensor_empty_on(TW_CPU, dtype, ndim, shape);
            if (t && bytes && H5Dread(set, native_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, tw_tensor_data(t)) < 0) {
                tw_tensor_unref(t);
                t = NULL;
                snprintf(what, sizeof what, "cannot read dataset '%s' (corrupt or truncated)", path);
                tw__h5_fail(where, what);
            }
        }
    }
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    H5Dclose(set);
    return t;
}

tw_tensor *tw__h5_read_tensor(hid_t loc, const char *path, size_t max_bytes, const char *where)
{
    tw__h5_lock();
    tw_tensor *t = read_tensor(loc, path, max_bytes, where);
    tw__h5_unlock();
    return t;
}

static hid_t intermediate_lcpl(void)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    return lcpl;
}

hid_t tw__h5_group(hid_t loc, const char *path, const char *where)
{
    tw__h5_lock();
    hid_t g;
    if (tw__h5_has_link(loc, path)) {
        g = H5Gopen2(loc, path, H5P_DEFAULT);
    } else {
        hid_t lcpl = intermediate_lcpl();
        g = H5Gcreate2(loc, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        H5Pclose(lcpl);
    }
    if (g < 0) {
        char what[600];
        snprintf(what, sizeof what, "cannot create group '%s'", path);
        tw__h5_fail(where, what);
    }
    tw__h5_unlock();
    return g;
}

static hid_t file_type(tw_dtype dtype)
{
    switch (dtype) {
    case TW_FLOAT32: return H5T_IEEE_F32LE;
    case TW_FLOAT64: return H5T_IEEE_F64LE;
    case TW_INT32: return H5T_STD_I32LE;
    case TW_INT64: return H5T_STD_I64LE;
    case TW_UINT8: return H5T_STD_U8LE;
    default: return H5I_INVALID_HID;
    }
}

int tw__h5_write_tensor(hid_t loc, const char *path, const tw_tensor *t, const char *where)
{
    tw_dtype dtype = tw_tensor_dtype(t);
    if (file_type(dtype) < 0)
        return tw_error_set("%s: '%s': dtype %s cannot be written to HDF5", where, path, tw_dtype_name(dtype));
    int ndim = tw_tensor_ndim(t);
    hsize_t dims[TW_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        dims[i] = (hsize_t)tw_tensor_shape(t)[i];
    size_t bytes = (size_t)tw_tensor_numel(t) * tw_dtype_size(dtype);
    void *buf = malloc(bytes ? bytes : 1);
    if (!buf || tw_tensor_copy_to(t, buf, bytes) < 0) {
        free(buf);
        return tw_error_set("%s: '%s': cannot copy the tensor's values", where, path);
    }
    tw__h5_lock();
    hid_t space = ndim ? H5Screate_simple(ndim, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t lcpl = intermediate_lcpl();
    hid_t set = H5Dcreate2(loc, path, file_type(dtype), space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    int rc = 0;
    if (set < 0 || H5Dwrite(set, native_type(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char what[600];
        snprintf(what, sizeof what, "cannot write dataset '%s'", path);
        rc = tw__h5_fail(where, what);
    }
    if (set >= 0)
        H5Dclose(set);
    H5Pclose(lcpl);
    H5Sclose(space);
    tw__h5_unlock();
    free(buf);
    return rc;
}
