/* The caching pool of device memory (every kind but the CPU, whose pool is
 * alloc.c's): freed blocks are kept per device and power-of-two size class
 * and handed out again, so a steady-state step asks the backend for none.
 * One lock: device allocations are per op, not per element, and the
 * backends' own calls (cudaMalloc) cost far more. */
#include <pthread.h>
#include <stdlib.h>

#include "backend.h"

#define MIN_CLASS 8  /* 256 bytes: CUDA's alignment */
#define MAX_CLASS 40 /* 1 TiB: every size a device can hold */
#define MAX_DEVICES 16

typedef struct block {
    struct block *next;
    void *ptr;
} block;

typedef struct {
    const tw_backend *backend;
    int index;
    block *free_lists[MAX_CLASS + 1];
} device_cache;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_cache caches[TW_DEVICE_KIND_COUNT][MAX_DEVICES];
static block *spare_nodes; /* list nodes not in use */

static int size_class_of(size_t nbytes)
{
    int c = MIN_CLASS;
    while (c < MAX_CLASS && ((size_t)1 << c) < nbytes)
        c++;
    return c;
}

void *tw__device_pool_take(const tw_backend *backend, int index, size_t nbytes, int *size_class)
{
    int cls = size_class_of(nbytes);
    *size_class = cls;
    void *ptr = NULL;
    if (index < MAX_DEVICES) {
        pthread_mutex_lock(&lock);
        device_cache *c = &caches[backend->kind][index];
        block *b = c->free_lists[cls];
        if (b) {
            c->free_lists[cls] = b->next;
            ptr = b->ptr;
            b->next = spare_nodes;
            spare_nodes = b;
        }
        pthread_mutex_unlock(&lock);
    }
    return ptr ? ptr : backend->alloc(index, (size_t)1 << cls);
}

void tw__device_pool_put(const tw_backend *backend, int index, void *ptr, int size_class)
{
    if (index >= MAX_DEVICES) {
        backend->free(index, ptr);
        return;
    }
    pthread_mutex_lock(&lock);
    block *b = spare_nodes;
    if (b)
        spare_nodes = b->next;
    else
        b = malloc(sizeof *b);
    if (b) {
        device_cache *c = &caches[backend->kind][index];
        c->backend = backend;
        c->index = index;
        b->ptr = ptr;
        b->next = c->free_lists[size_class];
        c->free_lists[size_class] = b;
    }
    pthread_mutex_unlock(&lock);
    if (!b)
        backend->free(index, ptr);
}

void tw__device_pool_trim(void)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < TW_DEVICE_KIND_COUNT; k++)
        for (int d = 0; d < MAX_DEVICES; d++) {
            device_cache *c = &caches[k][d];
            for (int cls = 0; cls <= MAX_CLASS; cls++)
                while (c->free_lists[cls]) {
                    block *b = c->free_lists[cls];
                    c->free_lists[cls] = b->next;
                    c->backend->free(c->index, b->ptr);
                    free(b);
                }
        }
    while (spare_nodes) {
        block *b = spare_nodes;
        spare_nodes = b->next;
        free(b);
    }
    pthread_mutex_unlock(&lock);
}
