/* Caching allocator for tensor storage. Small eager ops must not pay for
 * malloc/free each time, so freed blocks go back to a per-size-class free
 * list (powers of two) and are reused. The cache is bounded; tw__pool_trim
 * empties it. Storage header and data share one block. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MIN_CLASS 6  /* 64 bytes */
#define MAX_CLASS 30 /* 1 GiB; bigger blocks are not cached */
#define HEADER_BYTES 64
#define CACHE_LIMIT_BYTES ((size_t)1 << 30)

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *free_lists[MAX_CLASS + 1];
static size_t cached_bytes;

static int size_class_of(size_t nbytes)
{
    int c = MIN_CLASS;
    while (c <= MAX_CLASS && ((size_t)1 << c) < nbytes)
        c++;
    return c <= MAX_CLASS ? c : -1;
}

static void *block_take(int cls)
{
    void *block = NULL;
    pthread_mutex_lock(&pool_lock);
    if (free_lists[cls]) {
        block = free_lists[cls];
        free_lists[cls] = free_lists[cls]->next;
        cached_bytes -= (size_t)1 << cls;
    }
    pthread_mutex_unlock(&pool_lock);
    return block;
}

tw_storage *tw__storage_new(size_t nbytes, tw_device device)
{
    int cls = size_class_of(nbytes);
    size_t data_bytes = cls >= 0 ? (size_t)1 << cls : nbytes;
    void *block = cls >= 0 ? block_take(cls) : NULL;
    if (!block && posix_memalign(&block, 64, HEADER_BYTES + data_bytes) != 0) {
        tw_error_set("out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    tw_storage *s = block;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->device = device;
    s->nbytes = nbytes;
    s->size_class = cls;
    s->data = (char *)block + HEADER_BYTES;
    return s;
}

void tw__storage_unref(tw_storage *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
        return;
    int cls = s->size_class;
    if (cls >= 0) {
        pthread_mutex_lock(&pool_lock);
        if (cached_bytes + ((size_t)1 << cls) <= CACHE_LIMIT_BYTES) {
            free_block *b = (free_block *)s;
            b->next = free_lists[cls];
            free_lists[cls] = b;
            cached_bytes += (size_t)1 << cls;
            s = NULL;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    free(s);
}

void tw__pool_trim(void)
{
    pthread_mutex_lock(&pool_lock);
    for (int c = 0; c <= MAX_CLASS; c++) {
        while (free_lists[c]) {
            free_block *b = free_lists[c];
            free_lists[c] = b->next;
            free(b);
        }
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&pool_lock);
}

static void __attribute__((destructor)) pool_release_at_exit(void)
{
    tw__pool_trim();
}
