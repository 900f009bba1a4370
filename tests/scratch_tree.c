/* Removing a test's scratch folder and everything in it. */
#include "scratch_tree.h"

#include <glib.h>
#include <glib/gstdio.h>

void scratch_remove_tree(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        char *child = g_build_filename(path, name, NULL);
        if (g_file_test(child, G_FILE_TEST_IS_DIR) && !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
            scratch_remove_tree(child);
        else
            g_remove(child);
        g_free(child);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(path);
}
