/* A small JSON reader for the engine, which has no GLib: a whole text into
 * a tree, for reading graphs back (graph_import.c). Not installed. */
#ifndef TW_JSON_VALUE_H
#define TW_JSON_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { TW_JSON_NULL, TW_JSON_BOOL, TW_JSON_NUMBER, TW_JSON_STRING, TW_JSON_ARRAY, TW_JSON_OBJECT } tw_json_kind;

typedef struct tw_json tw_json;
struct tw_json {
    tw_json_kind kind;
    bool boolean;
    /* Numbers: the value, and whether it was written as a whole number that
     * fits int64 (then integer holds it exactly). */
    double number;
    bool integral;
    int64_t integer;
    char *string;  /* strings */
    int count;     /* arrays and objects */
    tw_json *items;
    char **keys;   /* objects: the key of each item */
};

/* The tree of text, or NULL with "byte N: what was expected" in error. */
tw_json *tw__json_parse(const char *text, char *error, size_t error_size);
void tw__json_free(tw_json *v);
/* The member of an object; NULL when v is not an object or lacks key. */
const tw_json *tw__json_get(const tw_json *v, const char *key);

#endif
