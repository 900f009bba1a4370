/* A bump allocator for protobuf-c (tfevents_internal.h): one record's
 * messages are many small allocations freed together, so they come from
 * one block that is rewound after each record. A record that needs more
 * chains further blocks; the reset keeps only the largest. */
#include <glib.h>
#include <stdlib.h>

#include "tfevents_internal.h"

struct tw_pb_arena_block {
    tw_pb_arena_block *next;
    size_t size, used;
    max_align_t data[]; /* size bytes */
};

#define MIN_BLOCK ((size_t)4 << 10)

static void *arena_alloc(void *user, size_t n)
{
    tw_pb_arena *a = user;
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    tw_pb_arena_block *b = a->blocks;
    if (!b || b->size - b->used < n) {
        size_t size = MAX(MIN_BLOCK, b ? 2 * b->size : 0);
        size = MAX(size, n);
        tw_pb_arena_block *nb = malloc(sizeof *nb + size);
        if (!nb)
            return NULL;
        nb->next = b;
        nb->size = size;
        nb->used = 0;
        a->blocks = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(void *user, void *p)
{
    (void)user;
    (void)p; /* freed with the arena's reset */
}

void tw__pb_arena_init(tw_pb_arena *a)
{
    a->allocator = (ProtobufCAllocator){arena_alloc, arena_free, a};
    a->blocks = NULL;
}

void tw__pb_arena_reset(tw_pb_arena *a)
{
    /* The newest block is the largest (each doubles the one before). */
    tw_pb_arena_block *keep = a->blocks;
    if (!keep)
        return;
    for (tw_pb_arena_block *b = keep->next, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    keep->next = NULL;
    keep->used = 0;
}

void tw__pb_arena_free(tw_pb_arena *a)
{
    for (tw_pb_arena_block *b = a->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->blocks = NULL;
}
