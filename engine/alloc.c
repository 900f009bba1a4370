/* Caching allocator for tensor storage and tensor headers.
 *
 * Small eager ops must not pay for malloc/free each time. Freed storage
 * blocks go back to a free list per size class (powers of two): first a small
 * per-thread cache with no locking, then a bounded global pool under a mutex.
 * Tensor headers get a per-thread free list too. A thread's caches return to
 * the global pool (or to malloc) when it exits; tw__pool_trim empties the
 * global pool and the calling thread's caches. Storage header and data share
 * one block. This is the CPU backend's pool; other devices' memory comes
 * from device_pool.c, behind a host header. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define MIN_CLASS 6            /* 64 bytes */
#define MAX_CLASS 30           /* 1 GiB; bigger blocks are not cached */
#define THREAD_MAX_CLASS 16    /* per-thread caches hold blocks up to 64 KiB */
#define THREAD_BLOCKS_PER_CLASS 32
#define THREAD_HEADERS 256
#define HEADER_BYTES 64
_Static_assert(sizeof(tw_storage) <= HEADER_BYTES, "a CPU storage's header sits in the first HEADER_BYTES");
#define CACHE_LIMIT_BYTES ((size_t)1 << 30)
/* Storage of other devices numbers its size classes from here, so the CPU's
 * release path tells them apart by the class it already reads. */
#define DEVICE_CLASS 64

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *free_lists[MAX_CLASS + 1];
static size_t cached_bytes;

typedef struct {
    free_block *blocks[THREAD_MAX_CLASS + 1];
    int nblocks[THREAD_MAX_CLASS + 1];
    free_block *headers;
    int nheaders;
    bool registered;
} thread_cache;

static TW_HOT_THREAD_LOCAL thread_cache cache;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static int size_class_of(size_t nbytes)
{
    int c = MIN_CLASS;
    while (c <= MAX_CLASS && ((size_t)1 << c) < nbytes)
        c++;
    return c <= MAX_CLASS ? c : -1;
}

/* Hand a block to the global pool, or free it when the pool is full. */
static void pool_put(free_block *b, int cls)
{
    pthread_mutex_lock(&pool_lock);
    if (cached_bytes + ((size_t)1 << cls) <= CACHE_LIMIT_BYTES) {
        b->next = free_lists[cls];
        free_lists[cls] = b;
        cached_bytes += (size_t)1 << cls;
        b = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    free(b);
}

static void *pool_take(int cls)
{
    free_block *b = NULL;
    pthread_mutex_lock(&pool_lock);
    if (free_lists[cls]) {
        b = free_lists[cls];
        free_lists[cls] = b->next;
        cached_bytes -= (size_t)1 << cls;
    }
    pthread_mutex_unlock(&pool_lock);
    return b;
}

static void flush_thread_cache(void)
{
    for (int c = MIN_CLASS; c <= THREAD_MAX_CLASS; c++) {
        while (cache.blocks[c]) {
            free_block *b = cache.blocks[c];
            cache.blocks[c] = b->next;
            pool_put(b, c);
        }
        cache.nblocks[c] = 0;
    }
    while (cache.headers) {
        free_block *h = cache.headers;
        cache.headers = h->next;
        free(h);
    }
    cache.nheaders = 0;
}

static void on_thread_exit(void *unused)
{
    flush_thread_cache();
}

static void create_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

/* The first time a thread caches something, arrange for the flush at exit. */
static void register_thread(void)
{
    if (cache.registered)
        return;
    pthread_once(&exit_key_once, create_exit_key);
    pthread_setspecific(exit_key, &cache);
    cache.registered = true;
}

/* Buffers that had to come from the system (no cached block fitted): a
 * steady-state training step should add none. */
static atomic_ullong system_allocations;

uint64_t tw__system_allocations(void)
{
    return atomic_load(&system_allocations);
}

/* Storage on a device other than the CPU: a host header, device data. */
static tw_storage *device_storage_new(size_t nbytes, tw_device device)
{
    const tw_backend *b = tw__backend(device, "tensor");
    if (!b)
        return NULL;
    tw_storage *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("out of memory allocating a storage header");
        return NULL;
    }
    int cls;
    s->data = tw__device_pool_take(b, device.index, nbytes, &cls);
    if (!s->data) {
        free(s);
        return NULL;
    }
    s->size_class = DEVICE_CLASS + cls;
    s->mirror = NULL;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->device = device;
    s->nbytes = nbytes;
    return s;
}

static void device_storage_free(tw_storage *s)
{
    tw__device_pool_put(tw__backend(s->device, "tensor"), s->device.index, s->data, s->size_class - DEVICE_CLASS);
    free(s->mirror);
    free(s);
}

tw_storage *tw__storage_new(size_t nbytes, tw_device device)
{
    if (__builtin_expect(device.kind != TW_DEVICE_CPU, 0))
        return device_storage_new(nbytes, device);
    int cls = size_class_of(nbytes);
    size_t data_bytes = cls >= 0 ? (size_t)1 << cls : nbytes;
    void *block = NULL;
    if (cls >= 0 && cls <= THREAD_MAX_CLASS && cache.blocks[cls]) {
        block = cache.blocks[cls];
        cache.blocks[cls] = cache.blocks[cls]->next;
        cache.nblocks[cls]--;
    } else if (cls >= 0) {
        block = pool_take(cls);
    }
    if (!block) {
        if (posix_memalign(&block, 64, HEADER_BYTES + data_bytes) != 0) {
            tw_error_set("out of memory allocating %zu bytes", nbytes);
            return NULL;
        }
        atomic_fetch_add(&system_allocations, 1);
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
    free_block *b = (free_block *)s;
    if (cls >= 0 && cls <= THREAD_MAX_CLASS && cache.nblocks[cls] < THREAD_BLOCKS_PER_CLASS) {
        register_thread();
        b->next = cache.blocks[cls];
        cache.blocks[cls] = b;
        cache.nblocks[cls]++;
    } else if (cls >= DEVICE_CLASS) {
        device_storage_free(s);
    } else if (cls >= 0) {
        pool_put(b, cls);
    } else {
        free(b);
    }
}

tw_tensor *tw__header_alloc(void)
{
    if (cache.headers) {
        free_block *h = cache.headers;
        cache.headers = h->next;
        cache.nheaders--;
        return (tw_tensor *)h;
    }
    return malloc(sizeof(tw_tensor));
}

void tw__header_free(tw_tensor *t)
{
    if (cache.nheaders >= THREAD_HEADERS) {
        free(t);
        return;
    }
    register_thread();
    free_block *h = (free_block *)t;
    h->next = cache.headers;
    cache.headers = h;
    cache.nheaders++;
}

void tw__pool_trim(void)
{
    flush_thread_cache();
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
    tw__device_pool_trim();
}

static void __attribute__((destructor)) pool_release_at_exit(void)
{
    tw__pool_trim();
}
