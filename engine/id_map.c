#include <stdlib.h>
#include <string.h>

#include "id_map.h"

static size_t slot_of(uint64_t id, size_t capacity)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdULL; /* a 64-bit mixer; ids are sequential */
    id ^= id >> 33;
    return (size_t)id & (capacity - 1);
}

static bool rehash(tw_id_map *m, size_t capacity)
{
    uint64_t *keys = calloc(capacity, sizeof *keys);
    void **values = calloc(capacity, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (size_t i = 0; i < m->capacity; i++) {
        if (!m->keys[i])
            continue;
        size_t s = slot_of(m->keys[i], capacity);
        while (keys[s])
            s = (s + 1) & (capacity - 1);
        keys[s] = m->keys[i];
        values[s] = m->values[i];
    }
    if (m->keys != m->inline_keys) {
        free(m->keys);
        free(m->values);
    }
    m->keys = keys;
    m->values = values;
    m->capacity = capacity;
    return true;
}

bool tw_id_map_put(tw_id_map *m, uint64_t id, void *value)
{
    if (!m->capacity) {
        m->keys = m->inline_keys;
        m->values = m->inline_values;
        m->capacity = TW_ID_MAP_INLINE;
    }
    if ((m->count + 1) * 2 > m->capacity && !rehash(m, m->capacity * 2))
        return false;
    size_t s = slot_of(id, m->capacity);
    while (m->keys[s] && m->keys[s] != id)
        s = (s + 1) & (m->capacity - 1);
    if (!m->keys[s]) {
        m->keys[s] = id;
        m->count++;
    }
    m->values[s] = value;
    return true;
}

bool tw_id_map_get(const tw_id_map *m, uint64_t id, void **value)
{
    if (!m->capacity)
        return false;
    size_t s = slot_of(id, m->capacity);
    while (m->keys[s]) {
        if (m->keys[s] == id) {
            if (value)
                *value = m->values[s];
            return true;
        }
        s = (s + 1) & (m->capacity - 1);
    }
    return false;
}

void tw_id_map_clear(tw_id_map *m)
{
    if (m->keys != m->inline_keys) {
        free(m->keys);
        free(m->values);
    }
    m->keys = NULL;
    m->values = NULL;
    m->capacity = m->count = 0;
    memset(m->inline_keys, 0, sizeof m->inline_keys);
}
