/* Fashion-MNIST by name, from $TWB_DATA_DIR or Debian's
 * dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist). */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"

#define SYSTEM_DIR "/usr/share/datasets/fashion-mnist"

const char *const tw_fashion_mnist_classes[10] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
};

/* The file `base` (raw or with ".gz") in dir, or NULL. */
static char *find_file(const char *dir, const char *base)
{
    char *path = g_build_filename(dir, base, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return path;
    char *gz = g_strconcat(path, ".gz", NULL);
    g_free(path);
    if (g_file_test(gz, G_FILE_TEST_IS_REGULAR))
        return gz;
    g_free(gz);
    return NULL;
}

/* Checks the shapes the name promises: (N, 28, 28) uint8 and (N,) uint8. */
static int check_shapes(const char *images_path, tw_tensor *images, const char *labels_path, tw_tensor *labels)
{
    char s[160];
    if (tw_tensor_dtype(images) != TW_UINT8 || tw_tensor_ndim(images) != 3 || tw_tensor_dim(images, 1) != 28 ||
        tw_tensor_dim(images, 2) != 28)
        return tw_error_set("fashion_mnist: %s holds %s %s; expected (N, 28, 28) uint8 images", images_path,
                            tw_shape_str(tw_tensor_ndim(images), tw_tensor_shape(images), s, sizeof s),
                            tw_dtype_name(tw_tensor_dtype(images)));
    if (tw_tensor_dtype(labels) != TW_UINT8 || tw_tensor_ndim(labels) != 1)
        return tw_error_set("fashion_mnist: %s holds %s %s; expected (N,) uint8 labels", labels_path,
                            tw_shape_str(tw_tensor_ndim(labels), tw_tensor_shape(labels), s, sizeof s),
                            tw_dtype_name(tw_tensor_dtype(labels)));
    if (tw_tensor_dim(images, 0) != tw_tensor_dim(labels, 0))
        return tw_error_set("fashion_mnist: %s has %lld images but %s has %lld labels; the counts must agree",
                            images_path, (long long)tw_tensor_dim(images, 0), labels_path,
                            (long long)tw_tensor_dim(labels, 0));
    const uint8_t *l = tw_tensor_data(labels);
    for (int64_t i = 0; i < tw_tensor_dim(labels, 0); i++)
        if (l[i] > 9)
            return tw_error_set("fashion_mnist: %s: label %d at index %lld (byte offset %lld) is not a class 0 to 9",
                                labels_path, l[i], (long long)i, (long long)(8 + i));
    return 0;
}

/* The split from the first of `dirs` (NULL-terminated; NULL entries are
 * skipped up to `count`) that holds both of its files. system_dir is named
 * in the message when none does. Exposed (not in a header) for the tests. */
tw_dataset *tw__fashion_mnist_from(const char *split, const char *const *dirs, int count, const char *system_dir);

tw_dataset *tw__fashion_mnist_from(const char *split, const char *const *dirs, int count, const char *system_dir)
{
    const char *prefix;
    if (split && strcmp(split, "train") == 0) {
        prefix = "train";
    } else if (split && strcmp(split, "test") == 0) {
        prefix = "t10k";
    } else {
        tw_error_set("fashion_mnist: unknown split %s%s%s; the splits are \"train\" and \"test\"", split ? "\"" : "",
                     split ? split : "(NULL)", split ? "\"" : "");
        return NULL;
    }
    char *images_name = g_strdup_printf("%s-images-idx3-ubyte", prefix);
    char *labels_name = g_strdup_printf("%s-labels-idx1-ubyte", prefix);
    char *images_path = NULL, *labels_path = NULL;
    for (int i = 0; i < count && !images_path; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        images_path = find_file(dirs[i], images_name);
        labels_path = images_path ? find_file(dirs[i], labels_name) : NULL;
        if (!labels_path) {
            g_free(images_path);
            images_path = NULL;
        }
    }
    tw_dataset *ds = NULL;
    if (!images_path) {
        const char *env = g_getenv("TWB_DATA_DIR");
        tw_error_set("fashion_mnist: not found in %s (or $TWB_DATA_DIR); install it with: apt-get install "
                     "dataset-fashion-mnist%s%s%s",
                     system_dir, env ? " ($TWB_DATA_DIR is \"" : "", env ? env : "", env ? "\")" : "");
        goto done;
    }
    tw_scope_begin();
    tw_tensor *images = tw_idx_load(images_path);
    tw_tensor *labels = images ? tw_idx_load(labels_path) : NULL;
    if (images && labels && check_shapes(images_path, images, labels_path, labels) == 0)
        ds = tw_dataset_from_tensors(TW_TENSORS(images, labels));
    tw_scope_end();
    if (ds) {
        g_free(ds->name);
        ds->name = g_strdup_printf("fashion_mnist(%s)", split);
    }
done:
    g_free(images_name);
    g_free(labels_name);
    g_free(images_path);
    g_free(labels_path);
    return ds;
}

tw_dataset *tw_dataset_fashion_mnist(const char *split)
{
    /* $TWB_DATA_DIR itself, a fashion-mnist folder in it, then the package's. */
    const char *env = g_getenv("TWB_DATA_DIR");
    char *sub = env && env[0] ? g_build_filename(env, "fashion-mnist", NULL) : NULL;
    const char *dirs[] = {env, sub, SYSTEM_DIR};
    tw_dataset *ds = tw__fashion_mnist_from(split, dirs, 3, SYSTEM_DIR);
    g_free(sub);
    return ds;
}
