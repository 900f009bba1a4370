/* A check libhdf5 needs before it is handed a file (see hdf5_file.h).
 *
 * libhdf5 1.10 loops forever reading a global heap collection ("GCOL",
 * where variable-length strings such as model_config live) in which an
 * object of index 0 (free space) has size 0: its decoder never advances
 * (H5HG__cache_heap_deserialize; h5py hangs on such a file too); and an
 * object whose size runs past its collection is later copied whole
 * (H5HG_read: a segmentation fault). In a sound file the entries tile
 * their collection exactly. This walks every collection as the decoder
 * does, finding collections by their eight header bytes (a weight's
 * values would have to spell them too to be taken for one). */
#include <string.h>

#include "hdf5_file.h"

static uint64_t read_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#define H5_ALIGN8(x) (((x) + 7) / 8 * 8)

long long tw__h5_damaged_global_heap(const uint8_t *bytes, size_t size, const char **why)
{
    /* The size of lengths, from the superblock (versions 0-1: byte 14; 2-3: byte 10). */
    int version = size > 8 ? bytes[8] : -1;
    size_t at = version == 0 || version == 1 ? 14 : version == 2 || version == 3 ? 10 : 0;
    int lengths = at && at < size ? bytes[at] : 8;
    if (lengths != 4 && lengths != 8)
        lengths = 8;
    size_t header = H5_ALIGN8(8 + (size_t)lengths), object = 8 + (size_t)lengths;
    for (const uint8_t *g = bytes; (g = memmem(g, size - (size_t)(g - bytes), "GCOL", 4)); g++) {
        size_t offset = (size_t)(g - bytes);
        if (offset + header > size)
            break;
        /* Version 1 and three reserved zero bytes: libhdf5 rejects any
         * other version itself, and eight fixed bytes keep float data that
         * happens to spell "GCOL" from being taken for a collection. */
        if (memcmp(g + 4, "\1\0\0\0", 4))
            continue;
        uint64_t collection = read_le(g + 8, lengths);
        uint64_t end = collection < size - offset ? offset + collection : size;
        /* A tail too short for an object header is free space of its own
         * size, so only an entry can stall: index 0 with length 0. */
        for (uint64_t p = offset + header; p + object <= end;) {
            unsigned index = (unsigned)read_le(bytes + p, 2);
            uint64_t length = read_le(bytes + p + 8, lengths);
            uint64_t need = index > 0 ? object + H5_ALIGN8(length) : length;
            if (need == 0) {
                *why = "an empty free-space entry libhdf5 would read forever";
                return (long long)offset;
            }
            if (need > end - p) {
                *why = "an entry larger than its collection, which libhdf5 would copy past its end";
                return (long long)offset;
            }
            p += need;
        }
    }
    return -1;
}
