/* Removing a test's scratch folder and everything in it. */
#ifndef TW_TESTS_SCRATCH_TREE_H
#define TW_TESTS_SCRATCH_TREE_H

void scratch_remove_tree(const char *path);

#endif
