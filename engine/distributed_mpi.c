/* tw/distributed.h over Open MPI: the one file of the engine that includes
 * mpi.h (built when meson finds MPI; distributed_none.c otherwise).
 *
 * Every wait polls (MPI_Testall) instead of blocking in MPI_Wait, so a
 * rank whose peer died notices mpirun's SIGTERM and returns an error that
 * names the dead rank, instead of sitting in a wait that never ends until
 * SIGKILL. */
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "distributed_internal.h"
#include "distributed_nccl.h"
#include "internal.h"
#include "optimizers/optimizer_internal.h"
#include "tw/distributed.h"

#define HOST_MAX 64
/* Small buckets on one machine: over shared memory an allreduce of 100 KB
 * took 0.08 ms here but one of 400 KB 10 ms (a protocol with many round
 * trips, each a wait for the other rank's next poll on busy cores). */
#define DEFAULT_BUCKET_BYTES (64u << 10)

typedef struct {
    int pid;
    char host[HOST_MAX];
} rank_info;

static struct {
    bool initialized, mpi, failed;
    int rank, size;
    MPI_Comm comm;
    MPI_Comm stats_comm; /* BatchNormalization's batch statistics, apart from the gradients' buckets */
    rank_info *ranks; /* every rank's process, to name the one that died */
} world = {.size = 1};

/* NCCL, for gradients on CUDA devices (below). */
static struct {
    bool opened, ready;
    const tw_nccl_plugin *plugin;
    char why[256]; /* why it did not open */
} nccl;

static volatile sig_atomic_t terminated; /* mpirun's SIGTERM */

static void on_sigterm(int sig)
{
    (void)sig;
    terminated = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* Whether a process of this machine still runs (a zombie does not). */
static bool process_alive(int pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    int n = fscanf(f, "%*d (%*[^)]) %c", &state);
    fclose(f);
    return n == 1 && state != 'Z' && state != 'X';
}

/* The error of a failed wait: the ranks of this machine that are gone, or
 * mpirun's stop, or MPI's own message. Sets world.failed. */
static int fail(const char *what, int mpi_rc)
{
    world.failed = true;
    char dead[256] = "";
    size_t len = 0;
    for (int r = 0; world.ranks && r < world.size; r++) {
        if (r == world.rank || strcmp(world.ranks[r].host, world.ranks[world.rank].host) ||
            process_alive(world.ranks[r].pid))
            continue;
        len += (size_t)snprintf(dead + len, len < sizeof dead ? sizeof dead - len : 0, "%srank %d (pid %d)",
                                len ? ", " : "", r, world.ranks[r].pid);
        if (len >= sizeof dead)
            break;
    }
    if (*dead)
        return tw_error_set("%s: %s died; rank %d stops too", what, dead, world.rank);
    if (terminated)
        return tw_error_set("%s: mpirun stopped rank %d (another rank failed, on another machine, or the job was "
                            "interrupted)",
                            what, world.rank);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int n = 0;
    MPI_Error_string(mpi_rc, msg, &n);
    return tw_error_set("%s: MPI failed on rank %d: %s", what, world.rank, msg);
}

/* Poll until the requests complete, mpirun stops us, or MPI fails. A
 * non-blocking collective moves only while its ranks call MPI, one round
 * per poll, so the first SPIN_MS poll back to back, yielding the core
 * (sleeping there made every round wait for a wake-up: 25 ms steps on a
 * loaded machine); past that a rank is waiting for one that is not
 * running, and sleeps between polls. */
#define SPIN_MS 100.0
#define POLL_SLEEP_NS 100000
static int wait_all(int n, MPI_Request *requests, const char *what)
{
    double t0 = now_ms();
    for (;;) {
        int done = 0;
        int rc = MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || terminated)
            return fail(what, rc);
        if (done)
            return 0;
        if (now_ms() - t0 < SPIN_MS) {
            sched_yield();
            continue;
        }
        nanosleep(&(struct timespec){.tv_nsec = POLL_SLEEP_NS}, NULL);
    }
}

static bool launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

bool tw_distributed_available(void)
{
    return true;
}

int tw_distributed_init(int *argc, char ***argv)
{
    if (world.initialized)
        return 0;
    world.initialized = true;
    if (!launched_by_mpirun())
        return 0;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return tw_error_set("distributed: MPI_Init failed");
    world.mpi = true;
    MPI_Comm_dup(MPI_COMM_WORLD, &world.comm);
    MPI_Comm_set_errhandler(world.comm, MPI_ERRORS_RETURN);
    MPI_Comm_dup(world.comm, &world.stats_comm);
    MPI_Comm_rank(world.comm, &world.rank);
    MPI_Comm_size(world.comm, &world.size);
    world.ranks = calloc((size_t)world.size, sizeof *world.ranks);
    rank_info me = {.pid = (int)getpid()};
    gethostname(me.host, sizeof me.host - 1);
    if (!world.ranks ||
        MPI_Allgather(&me, sizeof me, MPI_BYTE, world.ranks, sizeof me, MPI_BYTE, world.comm) != MPI_SUCCESS)
        return fail("distributed: init", MPI_ERR_OTHER);
    struct sigaction sa = {.sa_handler = on_sigterm};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    return 0;
}

void tw_distributed_finalize(void)
{
    if (nccl.ready && !world.failed)
        nccl.plugin->finalize();
    nccl.ready = false;
    if (world.mpi && !world.failed) {
        MPI_Comm_free(&world.stats_comm);
        MPI_Comm_free(&world.comm);
        MPI_Finalize();
    }
    world.mpi = false;
    free(world.ranks);
    world.ranks = NULL;
}

int tw_distributed_rank(void)
{
    return world.rank;
}

int tw_distributed_size(void)
{
    return world.size;
}

int tw_distributed_local_rank(void)
{
    int local = 0;
    for (int r = 0; world.ranks && r < world.rank; r++)
        local += !strcmp(world.ranks[r].host, world.ranks[world.rank].host);
    return local;
}

bool tw_distributed_failed(void)
{
    return world.failed;
}

bool tw_distributed_replaces_rank0(void)
{
    if (!world.failed || world.rank == 0 || !world.ranks)
        return false;
    const char *host = world.ranks[0].host;
    if (strcmp(host, world.ranks[world.rank].host) || process_alive(world.ranks[0].pid))
        return false;
    for (int r = 1; r < world.rank; r++)
        if (!strcmp(world.ranks[r].host, host) && process_alive(world.ranks[r].pid))
            return false;
    return true;
}

static MPI_Datatype mpi_type(tw_dtype dtype)
{
    return dtype == TW_FLOAT64 ? MPI_DOUBLE : MPI_FLOAT;
}

/* In place: the sum over the ranks of count elements. */
static int allreduce_sum_on(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, const char *what)
{
    if (world.size == 1)
        return 0;
    if (count > INT32_MAX)
        return tw_error_set("%s: %lld elements are more than one MPI call takes", what, (long long)count);
    MPI_Request request;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, type, MPI_SUM, comm, &request);
    return rc != MPI_SUCCESS ? fail(what, rc) : wait_all(1, &request, what);
}

static int allreduce_sum(void *buf, int64_t count, MPI_Datatype type, const char *what)
{
    return allreduce_sum_on(world.comm, buf, count, type, what);
}

tw_tensor *tw_allreduce_mean(tw_tensor *t)
{
    if (!t)
        return tw_error_set("allreduce_mean: NULL tensor"), NULL;
    tw_dtype dtype = tw_tensor_dtype(t);
    if (dtype != TW_FLOAT32 && dtype != TW_FLOAT64)
        return tw_error_set("allreduce_mean: takes float32 or float64, got %s", tw_dtype_name(dtype)), NULL;
    tw_tensor *out = tw_copy(t);
    if (!out)
        return NULL;
    int64_t n = tw_tensor_numel(out);
    if (allreduce_sum(tw__data(out), n, mpi_type(dtype), "allreduce_mean"))
        return NULL;
    double scale = 1.0 / world.size;
    if (dtype == TW_FLOAT64)
        for (double *p = tw__data(out), *e = p + n; p < e; p++)
            *p *= scale;
    else
        for (float *p = tw__data(out), *e = p + n; p < e; p++)
            *p *= (float)scale;
    return out;
}

int tw_allreduce_mean_values(double *values, int n)
{
    if (allreduce_sum(values, n, MPI_DOUBLE, "allreduce_mean_values"))
        return -1;
    for (int i = 0; i < n; i++)
        values[i] /= world.size;
    return 0;
}

int tw_allgather_values(const double *mine, int n, double *all)
{
    if (world.size == 1) {
        memcpy(all, mine, sizeof *all * (size_t)n);
        return 0;
    }
    MPI_Request request;
    int rc = MPI_Iallgather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, world.comm, &request);
    return rc != MPI_SUCCESS ? fail("allgather_values", rc) : wait_all(1, &request, "allgather_values");
}

int tw_broadcast_variables(int n, tw_tensor *const *variables)
{
    if (world.size == 1)
        return 0;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        tw_tensor *v = variables[i];
        size_t bytes = (size_t)tw_tensor_numel(v) * tw_dtype_size(tw_tensor_dtype(v));
        if (bytes > INT32_MAX)
            return tw_error_set("broadcast_variables: variable %d has more bytes than one MPI call takes", i);
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            return tw_error_set("broadcast_variables: out of memory");
        rc = tw_tensor_copy_to(v, buf, bytes);
        MPI_Request request;
        int mrc = rc ? MPI_SUCCESS : MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, world.comm, &request);
        if (!rc)
            rc = mrc != MPI_SUCCESS ? fail("broadcast_variables", mrc)
                                    : wait_all(1, &request, "broadcast_variables");
        if (!rc && world.rank != 0) {
            tw_scope_begin();
            rc = tw_assign(v, tw_tensor_to(tw_tensor_from_data(buf, tw_tensor_dtype(v), tw_tensor_ndim(v),
                                                               tw_tensor_shape(v)),
                                           tw_tensor_device(v)));
            tw_scope_end();
        }
        free(buf);
    }
    return rc;
}

/* ---- synchronised batch statistics ------------------------------------------ */

/* inputs: t and its rank's count (a 0-d float64). The sum over the ranks
 * of count x t divided by the sum of the counts, reduced in float64. */
static tw_tensor *weighted_mean_forward(tw_custom_ctx *ctx, tw_tensor *const *inputs, void *user_data)
{
    (void)ctx;
    (void)user_data;
    tw_tensor *t = inputs[0];
    double count = tw_tensor_item(inputs[1]);
    int64_t n = tw_tensor_numel(t);
    double *buf = malloc(sizeof *buf * (size_t)(n + 1));
    if (!buf)
        return tw_error_set("sync_batch_statistics: out of memory"), NULL;
    tw_tensor *wide = tw_cast(t, TW_FLOAT64);
    if (!wide || tw_tensor_copy_to(wide, buf, sizeof *buf * (size_t)n)) {
        free(buf);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        buf[i] *= count;
    buf[n] = count;
    tw_tensor *out = NULL;
    if (!allreduce_sum_on(world.stats_comm, buf, n + 1, MPI_DOUBLE, "sync_batch_statistics")) {
        for (int64_t i = 0; i < n; i++)
            buf[i] /= buf[n];
        out = tw_tensor_to(tw_cast(tw_tensor_from_data(buf, TW_FLOAT64, tw_tensor_ndim(t), tw_tensor_shape(t)),
                                   tw_tensor_dtype(t)),
                           tw_tensor_device(t));
    }
    free(buf);
    return out;
}

/* The op is its own adjoint: with every rank's gradient weighed by its
 * share of the global batch (the reducer's weight), rank r's share of the
 * gradient of the global loss through its t is the same weighted mean of
 * the ranks' upstream gradients. */
static int weighted_mean_backward(tw_custom_ctx *ctx, tw_tensor *grad_output, tw_tensor **grad_inputs,
                                  void *user_data)
{
    (void)user_data;
    grad_inputs[0] = tw__allreduce_weighted_mean(grad_output, tw_tensor_item(tw_custom_input(ctx, 1)));
    grad_inputs[1] = NULL;
    return grad_inputs[0] ? 0 : -1;
}

tw_tensor *tw__allreduce_weighted_mean(tw_tensor *t, double count)
{
    if (world.size == 1)
        return t;
    tw_tensor *inputs[2] = {t, t ? tw_tensor_to(tw_scalar(count), tw_tensor_device(t)) : NULL};
    return tw_custom_gradient(2, inputs, weighted_mean_forward, weighted_mean_backward, NULL);
}

/* ---- the data-parallel optimizer ------------------------------------------- */

/* A run of gradient elements of one dtype, averaged by one allreduce. Its
 * buffer holds bucket_bytes and is not reallocated once the bucket has
 * started; a gradient larger than what is left continues in the next
 * bucket. */
typedef struct {
    tw_dtype dtype;
    int64_t elements;
    char *buf; /* bucket_bytes, kept from step to step */
    MPI_Request request;
    bool started;
} bucket;

typedef struct {
    int bucket;     /* where the gradient's first element went; -1: nowhere */
    int64_t offset; /* elements into that bucket */
    bool handed;    /* with a NULL gradient: nothing to average */
    tw_tensor *on_device; /* a gradient on a CUDA device: its copy, averaged in place by NCCL (a reference) */
} slot;

typedef struct {
    size_t bucket_bytes;
    bool broadcast; /* rank 0's variables sent, before the first update */
    slot *slots;
    int nslots;
    bucket *buckets; /* this step's; the last may be open */
    int nbuckets, capacity;
    double wait_ms;
    double weight; /* this step's gradients' weight (1 but for an uneven batch) */
} reducer;

/* ---- gradients on CUDA devices: NCCL ------------------------------------------ */

/* libtw-nccl.so beside libtw-engine.so, else by the loader's path; once. */
static const tw_nccl_plugin *nccl_plugin(void)
{
    if (nccl.opened)
        return nccl.plugin;
    nccl.opened = true;
    void *h = NULL;
    Dl_info info;
    if (dladdr((void *)tw_distributed_init, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(info.dli_fname, '/') - info.dli_fname), info.dli_fname,
                 TW_NCCL_PLUGIN_LIBRARY);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h)
        h = dlopen(TW_NCCL_PLUGIN_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    const tw_nccl_plugin *(*get)(void) = h ? (const tw_nccl_plugin *(*)(void))dlsym(h, "tw_nccl_plugin_get") : NULL;
    const tw_nccl_plugin *p = get ? get() : NULL;
    if (!h)
        snprintf(nccl.why, sizeof nccl.why, "%s not loaded (this build has no NCCL, or it is not beside "
                 "libtw-engine.so): %s", TW_NCCL_PLUGIN_LIBRARY, dlerror());
    else if (!p || p->abi != TW_NCCL_PLUGIN_ABI)
        snprintf(nccl.why, sizeof nccl.why, "%s is not this engine's NCCL plugin", TW_NCCL_PLUGIN_LIBRARY);
    else
        nccl.plugin = p;
    return nccl.plugin;
}

/* Every rank, at its first gradient on a CUDA device (the same gradient on
 * every rank): rank 0's NCCL id broadcast over MPI, then the communicator
 * on that device. */
static int nccl_start(tw_device device)
{
    if (nccl.ready)
        return 0;
    char name[32];
    tw_device_name(device, name, sizeof name);
    const tw_nccl_plugin *p = nccl_plugin();
    if (!p)
        return tw_error_set("distributed optimizer: a gradient on %s is averaged with NCCL: %s", name, nccl.why);
    unsigned char id[TW_NCCL_ID_BYTES] = {0};
    if (world.rank == 0 && p->unique_id(id))
        return tw_error_set("distributed optimizer: %s", p->error());
    MPI_Request request;
    int rc = MPI_Ibcast(id, sizeof id, MPI_BYTE, 0, world.comm, &request);
    if (rc != MPI_SUCCESS)
        return fail("distributed optimizer: NCCL id", rc);
    if (wait_all(1, &request, "distributed optimizer: NCCL id"))
        return -1;
    if (p->init(id, world.size, world.rank, device.index))
        return tw_error_set("distributed optimizer: rank %d on %s: %s", world.rank, name, p->error());
    nccl.ready = true;
    return 0;
}

/* A gradient on a CUDA device: a copy (weighed for an uneven batch),
 * complete on the device's compute stream, averaged in place on NCCL's. */
static int hand_device(slot *s, tw_tensor *gradient, double weight)
{
    tw_device device = tw_tensor_device(gradient);
    if (nccl_start(device))
        return -1;
    tw_scope_begin();
    tw_tensor *copy = weight != 1 ? tw_mul_scalar(gradient, weight) : tw_copy(gradient);
    const tw_backend *backend = copy ? tw__backend(device, "distributed optimizer") : NULL;
    int rc = backend ? backend->synchronize(device.index) : -1;
    if (!rc && nccl.plugin->allreduce_mean(tw__data(copy), tw_tensor_numel(copy), tw_tensor_dtype(copy)))
        rc = tw_error_set("distributed optimizer: %s", nccl.plugin->error());
    if (!rc)
        s->on_device = tw_tensor_ref(copy);
    tw_scope_end();
    return rc;
}

static int grow_slots(reducer *r, int n)
{
    if (n <= r->nslots)
        return 0;
    slot *s = realloc(r->slots, sizeof *s * (size_t)n);
    if (!s)
        return tw_error_set("distributed optimizer: out of memory");
    for (int i = r->nslots; i < n; i++)
        s[i] = (slot){.bucket = -1};
    r->slots = s;
    r->nslots = n;
    return 0;
}

static int start_bucket(bucket *b)
{
    if (b->started || !b->elements)
        return 0;
    b->started = true;
    if (world.size == 1)
        return 0;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, b->buf, (int)b->elements, mpi_type(b->dtype), MPI_SUM, world.comm,
                            &b->request);
    return rc != MPI_SUCCESS ? fail("distributed optimizer: allreduce", rc) : 0;
}

static int64_t bucket_room(const reducer *r, const bucket *b)
{
    return (int64_t)(r->bucket_bytes / tw_dtype_size(b->dtype)) - b->elements;
}

/* The open bucket for dtype with room, or a new one (the full or other
 * dtype's one started). */
static bucket *open_bucket(reducer *r, tw_dtype dtype)
{
    bucket *last = r->nbuckets ? &r->buckets[r->nbuckets - 1] : NULL;
    if (last && !last->started && last->dtype == dtype && bucket_room(r, last) > 0)
        return last;
    if (last && start_bucket(last))
        return NULL;
    if (r->nbuckets == r->capacity) {
        int capacity = r->capacity ? 2 * r->capacity : 8;
        bucket *b = realloc(r->buckets, sizeof *b * (size_t)capacity);
        if (!b)
            return tw_error_set("distributed optimizer: out of memory"), NULL;
        memset(b + r->capacity, 0, sizeof *b * (size_t)(capacity - r->capacity));
        r->buckets = b;
        r->capacity = capacity;
    }
    bucket *b = &r->buckets[r->nbuckets];
    if (!b->buf && !(b->buf = malloc(r->bucket_bytes)))
        return tw_error_set("distributed optimizer: out of memory"), NULL;
    r->nbuckets++;
    b->dtype = dtype;
    b->elements = 0;
    b->started = false;
    b->request = MPI_REQUEST_NULL;
    return b;
}

/* to = scale x from, n elements, in one pass: a weighed gradient into its
 * bucket, a bucket's sum out as the mean. */
static void copy_scaled(void *to, const void *from, int64_t n, tw_dtype dtype, double scale)
{
    if (dtype == TW_FLOAT64)
        for (int64_t i = 0; i < n; i++)
            ((double *)to)[i] = ((const double *)from)[i] * scale;
    else
        for (int64_t i = 0; i < n; i++)
            ((float *)to)[i] = ((const float *)from)[i] * (float)scale;
}

/* Let MPI move the buckets already on their way. */
static void progress(reducer *r)
{
    for (int i = 0; i < r->nbuckets && world.size > 1; i++)
        if (r->buckets[i].started && r->buckets[i].request != MPI_REQUEST_NULL) {
            int done;
            MPI_Test(&r->buckets[i].request, &done, MPI_STATUS_IGNORE);
        }
}

/* Pack one gradient into the buckets; each full bucket starts its
 * allreduce. Every rank hands the same gradients in the same order, so the
 * buckets match across ranks. */
static int hand(reducer *r, int index, tw_tensor *gradient)
{
    if (grow_slots(r, index + 1))
        return -1;
    slot *s = &r->slots[index];
    if (s->handed)
        return 0;
    s->handed = true;
    if (!gradient)
        return 0;
    tw_dtype dtype = tw_tensor_dtype(gradient);
    if (dtype != TW_FLOAT32 && dtype != TW_FLOAT64)
        return tw_error_set("distributed optimizer: gradient %d is %s; only float32 and float64 are averaged", index,
                            tw_dtype_name(dtype));
    /* Under mpirun even with one rank, so one GPU runs the NCCL path. */
    if (world.mpi && tw_tensor_device(gradient).kind == TW_DEVICE_CUDA)
        return hand_device(s, gradient, r->weight);
    tw_scope_begin();
    tw_tensor *packed = tw_tensor_is_contiguous(gradient) ? gradient : tw_copy(gradient);
    const char *data = packed ? tw_tensor_data(packed) : NULL;
    int64_t left = packed ? tw_tensor_numel(packed) : 0;
    size_t item = tw_dtype_size(dtype);
    int rc = packed ? 0 : -1;
    while (!rc && left > 0) {
        bucket *b = open_bucket(r, dtype);
        if (!b) {
            rc = -1;
            break;
        }
        if (s->bucket < 0) {
            s->bucket = r->nbuckets - 1;
            s->offset = b->elements;
        }
        int64_t n = left < bucket_room(r, b) ? left : bucket_room(r, b);
        if (r->weight != 1)
            copy_scaled(b->buf + (size_t)b->elements * item, data, n, dtype, r->weight);
        else
            memcpy(b->buf + (size_t)b->elements * item, data, (size_t)n * item);
        b->elements += n;
        data += (size_t)n * item;
        left -= n;
        if (bucket_room(r, b) == 0)
            rc = start_bucket(b);
    }
    tw_scope_end();
    progress(r);
    return rc;
}

static void reducer_ready(void *data, int index, tw_tensor *variable, tw_tensor *gradient)
{
    (void)variable;
    /* On an error the slot stays unhanded: the reduce hands it again and
     * reports the error. */
    reducer *r = data;
    if (hand(r, index, gradient) && index < r->nslots)
        r->slots[index].handed = false;
}

/* The averaged gradient of slot s, shaped as like: its elements from the
 * buckets it spans, divided by the number of ranks. */
static tw_tensor *unpack(const reducer *r, const slot *s, const tw_tensor *like)
{
    tw_dtype dtype = tw_tensor_dtype(like);
    tw_tensor *out = tw_tensor_ref(tw_tensor_empty(dtype, tw_tensor_ndim(like), tw_tensor_shape(like)));
    if (!out)
        return NULL;
    size_t item = tw_dtype_size(dtype);
    char *to = tw_tensor_data(out);
    int64_t left = tw_tensor_numel(out), offset = s->offset;
    for (int k = s->bucket; left > 0 && k < r->nbuckets; k++, offset = 0) {
        const bucket *b = &r->buckets[k];
        int64_t n = left < b->elements - offset ? left : b->elements - offset;
        copy_scaled(to, b->buf + (size_t)offset * item, n, dtype, 1.0 / world.size);
        to += (size_t)n * item;
        left -= n;
    }
    return out;
}

static int reducer_reduce(void *data, int n, tw_tensor *const *variables, tw_tensor *const *gradients,
                          tw_tensor **averaged)
{
    reducer *r = data;
    int rc = 0;
    if (!r->broadcast) {
        rc = tw_broadcast_variables(n, variables);
        r->broadcast = true;
    }
    /* Gradients not handed during the backward pass, last layer first. */
    if (!rc)
        rc = grow_slots(r, n);
    for (int i = n - 1; i >= 0 && !rc; i--)
        rc = hand(r, i, gradients[i]);
    if (!rc && r->nbuckets)
        rc = start_bucket(&r->buckets[r->nbuckets - 1]);
    double t0 = now_ms();
    MPI_Request *requests = malloc(sizeof *requests * (size_t)(r->nbuckets ? r->nbuckets : 1));
    if (!rc && !requests)
        rc = tw_error_set("distributed optimizer: out of memory");
    for (int i = 0; !rc && i < r->nbuckets; i++)
        requests[i] = r->buckets[i].request;
    if (!rc && world.size > 1)
        rc = wait_all(r->nbuckets, requests, "distributed optimizer: allreduce");
    free(requests);
    if (!rc && nccl.ready && nccl.plugin->wait())
        rc = tw_error_set("distributed optimizer: %s", nccl.plugin->error());
    r->wait_ms = now_ms() - t0;
    for (int i = 0; !rc && i < n; i++) {
        slot *s = &r->slots[i];
        if (gradients[i] && s->on_device) {
            averaged[i] = s->on_device;
            s->on_device = NULL;
        } else if (gradients[i] && s->bucket >= 0 && !(averaged[i] = unpack(r, s, gradients[i])))
            rc = -1;
    }
    for (int i = 0; i < r->nslots; i++) {
        tw_tensor_unref(r->slots[i].on_device);
        r->slots[i] = (slot){.bucket = -1};
    }
    r->nbuckets = 0;
    r->weight = 1;
    return rc;
}

static void reducer_set_weight(void *data, double weight)
{
    ((reducer *)data)->weight = weight;
}

static double reducer_wait_ms(const void *data)
{
    return ((const reducer *)data)->wait_ms;
}

static void reducer_free(void *data)
{
    reducer *r = data;
    for (int i = 0; i < r->nslots; i++)
        tw_tensor_unref(r->slots[i].on_device);
    for (int i = 0; i < r->capacity; i++)
        free(r->buckets[i].buf);
    free(r->buckets);
    free(r->slots);
    free(r);
}

static const tw_gradient_reducer mpi_reducer = {
    .ready = reducer_ready, .reduce = reducer_reduce, .wait_ms = reducer_wait_ms, .set_weight = reducer_set_weight,
    .free = reducer_free};

tw_optimizer *tw_distributed_optimizer(tw_optimizer *opt, size_t bucket_bytes)
{
    if (!opt)
        return tw_error_set("distributed_optimizer: NULL optimizer"), NULL;
    if (opt->reducer)
        return opt;
    reducer *r = calloc(1, sizeof *r);
    if (!r)
        return tw_error_set("distributed_optimizer: out of memory"), NULL;
    r->bucket_bytes = bucket_bytes ? bucket_bytes : DEFAULT_BUCKET_BYTES;
    r->weight = 1;
    opt->reducer = &mpi_reducer;
    opt->reducer_data = r;
    return opt;
}
