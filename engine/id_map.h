/* Open-addressing map from tensor id to a pointer (NULL value = a set).
 * Ids are never 0, so 0 marks an empty slot. Used by tapes. */
#ifndef TW_ID_MAP_H
#define TW_ID_MAP_H

#include <stdbool.h>
#include <stdint.h>

#define TW_ID_MAP_INLINE 32

/* Small maps live in the inline arrays; do not move a map after its first
 * put (the pointers would dangle). Zero-initialise before use. */
typedef struct {
    uint64_t *keys;
    void **values;
    size_t capacity, count; /* capacity is a power of two */
    uint64_t inline_keys[TW_ID_MAP_INLINE];
    void *inline_values[TW_ID_MAP_INLINE];
} tw_id_map;

bool tw_id_map_put(tw_id_map *m, uint64_t id, void *value);
/* Whether id is present; *value (may be NULL) receives its value. */
bool tw_id_map_get(const tw_id_map *m, uint64_t id, void **value);
void tw_id_map_clear(tw_id_map *m);

#endif
