/* dlc's thread pool: the runtime of parallel loops lowered with
 * `convert-loop-to-llvm{parallel_runtime=dlc}` (see rewrites/llvm_lowering/openmp.py).
 *
 *     void dlc_parallel_for(void (*task)(void *data, int64_t first, int64_t last),
 *                           void *data, int64_t trip, int32_t threads);
 *
 * runs task(data, first, last) over chunks that cover [0, trip) exactly once, on the calling
 * thread and up to `threads - 1` pool threads (threads <= 0: DLC_NUM_THREADS, else
 * OMP_NUM_THREADS, else the cores this process may run on), and returns when every chunk is
 * done.
 *
 * Unlike an OpenMP team, the caller never waits for a thread that has not started: the
 * iterations are cut into a few chunks per thread, and the caller waits only for chunks
 * already claimed. Each participant (the caller is participant 0, pool thread k is k) has a
 * home shard, the k-th contiguous run of chunks, which it claims from the front; once its own
 * shard is empty it takes the unclaimed chunks of the others' shards (work stealing). So on
 * an idle machine participant k runs the same part of the iteration space in every region,
 * and a kernel that reads what the previous one wrote over the same axis finds it in its own
 * core's cache (ONNX Runtime's loop counter keeps such home shards too); and when the cores
 * are shared with other processes and a pool thread is descheduled, the caller runs its share
 * instead of spinning at a barrier until the OS runs that thread again. A pool thread that
 * finished a region spins for a while (yielding the core to anyone else who wants it) for the
 * next one, then sleeps on a futex.
 *
 * One region runs at a time: a call made while another is running (from another thread of
 * the process, or from inside a task) runs serially on its caller. A forked child starts
 * with no pool threads and makes its own. When the library is unloaded (or the process
 * exits), its pool threads are stopped and joined.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef DLC_EXPORT /* a model's library compiles the pool in with the symbol hidden */
#define DLC_EXPORT __attribute__((visibility("default")))
#endif
#define MAX_THREADS 512
#define CHUNKS_PER_THREAD 4 /* MAX_THREADS * CHUNKS_PER_THREAD < 1 << 16 */
/* How long an idle pool thread polls for the next region before it sleeps. */
#define SPIN_NANOSECONDS 2000000
/* Polls between two reads of the clock (and two sched_yield calls) while spinning. */
#define POLLS_PER_CHECK 64

typedef void (*dlc_task)(void *data, int64_t first, int64_t last);

/* The region being run: its fields, written by the caller before the shards' tickets name
 * the region, and per participant one ticket, a word that names the region and what is left
 * of that participant's home shard:
 *     (region number << 32) | (end of the shard << 16) | index of its next unclaimed chunk
 * A thread claims a chunk by a compare-and-swap of a ticket from the value it read before the
 * fields: the swap succeeds only if the ticket did not move meanwhile, so the region still
 * had that chunk unclaimed (it could not have ended) and the fields read were its own. Each
 * ticket has a cache line of its own: participants claiming from their own shards do not
 * contend. */
static _Atomic(dlc_task) region_task;
static _Atomic(void *) region_data;
static _Atomic int64_t region_trip;
static _Atomic int64_t region_chunks;
static _Atomic int32_t region_threads;
static struct {
    _Alignas(64) _Atomic uint64_t ticket;
} shards[MAX_THREADS];
/* chunks of the current region that have finished */
static _Atomic int64_t finished;
/* the futex word pool threads sleep on: the region number */
static _Atomic uint32_t region_number;
static _Atomic int32_t sleepers;

static pthread_mutex_t submit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;
static int started; /* pool threads started (under grow_lock) */
static pthread_t pool_threads[MAX_THREADS];
static _Atomic int stopping; /* set when the library unloads: pool threads return */
static _Thread_local int inside_task;
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void run_chunk(dlc_task task, void *data, int64_t trip, int64_t chunks, int64_t chunk) {
    int64_t first = (int64_t)((__int128)trip * chunk / chunks);
    int64_t last = (int64_t)((__int128)trip * (chunk + 1) / chunks);
    if (first < last) task(data, first, last);
}

/* Claim and run chunks of region `number` until none is left (or the region is another):
 * first those of participant `self`'s own shard, then the others', in turn after it. A ticket
 * of another region means this one has ended (a region ends only once every chunk of every
 * shard has run), or, read with a later region's thread count, that `number` is over. */
static void take_chunks(uint32_t number, int32_t self) {
    int32_t threads = atomic_load_explicit(&region_threads, memory_order_relaxed);
    if (self >= threads) return;
    for (int32_t i = 0; i < threads; i++) {
        _Atomic uint64_t *ticket = &shards[(self + i) % threads].ticket;
        uint64_t current = atomic_load_explicit(ticket, memory_order_acquire);
        for (;;) {
            if ((uint32_t)(current >> 32) != number) return;
            int64_t end = (int64_t)((current >> 16) & 0xffff);
            int64_t chunk = (int64_t)(current & 0xffff);
            if (chunk >= end) break; /* this shard is done: the next one */
            dlc_task task = atomic_load_explicit(&region_task, memory_order_relaxed);
            void *data = atomic_load_explicit(&region_data, memory_order_relaxed);
            int64_t trip = atomic_load_explicit(&region_trip, memory_order_relaxed);
            int64_t chunks = atomic_load_explicit(&region_chunks, memory_order_relaxed);
            if (atomic_compare_exchange_weak_explicit(ticket, &current, current + 1,
                                                      memory_order_acq_rel,
                                                      memory_order_acquire)) {
                run_chunk(task, data, trip, chunks, chunk);
                atomic_fetch_add_explicit(&finished, 1, memory_order_release);
                current = atomic_load_explicit(ticket, memory_order_acquire);
            }
        }
    }
}

static void *pool_thread(void *arg) {
    int32_t self = (int32_t)(intptr_t)arg; /* 1, 2, ...: the caller is 0 */
    inside_task = 1;
    uint32_t seen = atomic_load_explicit(&region_number, memory_order_acquire);
    for (;;) {
        uint32_t number;
        int64_t deadline = 0;
        unsigned polls = 0;
        while ((number = atomic_load_explicit(&region_number, memory_order_acquire)) == seen) {
            /* A thread that starts after the library began to unload saw its last region
             * number as `seen`: it must not wait for another. */
            if (atomic_load(&stopping)) return NULL;
            if (++polls % POLLS_PER_CHECK != 0) {
                cpu_relax();
                continue;
            }
            int64_t now = now_ns();
            if (deadline == 0) deadline = now + SPIN_NANOSECONDS;
            if (now < deadline) {
                sched_yield(); /* spin, but let a process that wants this core have it */
                continue;
            }
            atomic_fetch_add(&sleepers, 1);
            futex_wait(&region_number, seen);
            atomic_fetch_sub(&sleepers, 1);
            deadline = 0;
        }
        if (atomic_load(&stopping)) return NULL;
        seen = number;
        take_chunks(number, self);
    }
}

static void after_fork_in_child(void) {
    /* The pool threads did not survive the fork; a region in flight in the parent is not
     * this process's. */
    started = 0;
    pthread_mutex_init(&submit_lock, NULL);
    pthread_mutex_init(&grow_lock, NULL);
    atomic_store(&sleepers, 0);
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }

/* Start pool threads up to `wanted` (best effort: a thread that cannot be created leaves the
 * pool smaller). Returns the number running. */
static int grow_pool(int wanted) {
    pthread_once(&fork_handler_once, install_fork_handler);
    pthread_mutex_lock(&grow_lock);
    while (started < wanted) {
        if (pthread_create(&pool_threads[started], NULL, pool_thread,
                           (void *)(intptr_t)(started + 1)) != 0)
            break;
        started++;
    }
    int running = started;
    pthread_mutex_unlock(&grow_lock);
    return running;
}

/* When the library unloads (dlclose, or the process exits), its pool threads must not be left
 * running its code: wake them, and wait until they have returned. */
__attribute__((destructor)) static void stop_pool(void) {
    pthread_mutex_lock(&grow_lock);
    atomic_store(&stopping, 1);
    atomic_fetch_add(&region_number, 1);
    futex_wake_all(&region_number);
    for (int i = 0; i < started; i++) pthread_join(pool_threads[i], NULL);
    started = 0;
    pthread_mutex_unlock(&grow_lock);
}

static int default_threads(void) {
    static _Atomic int cached;
    int known = atomic_load(&cached);
    if (known > 0) return known;
    int count = 0;
    const char *names[] = {"DLC_NUM_THREADS", "OMP_NUM_THREADS"};
    for (int i = 0; i < 2 && count <= 0; i++) {
        const char *value = getenv(names[i]);
        if (value != NULL) count = atoi(value);
    }
    if (count <= 0) {
        cpu_set_t set;
        count = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    }
    if (count <= 0) count = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (count <= 0) count = 1;
    atomic_store(&cached, count);
    return count;
}

DLC_EXPORT void dlc_parallel_for(dlc_task task, void *data, int64_t trip, int32_t threads) {
    if (trip <= 0) return;
    if (threads <= 0) threads = default_threads();
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (threads > trip) threads = (int32_t)trip;
    if (threads <= 1 || inside_task || pthread_mutex_trylock(&submit_lock) != 0) {
        task(data, 0, trip); /* nested, concurrent, or one thread: here, serially */
        return;
    }
    int running = grow_pool(threads - 1);
    if (running + 1 < threads) threads = running + 1;
    int64_t chunks = trip < (int64_t)threads * CHUNKS_PER_THREAD
                         ? trip : (int64_t)threads * CHUNKS_PER_THREAD;
    /* Every chunk of the previous region has finished (its caller waited for them): a pool
     * thread still reading fields for it cannot claim anything with them. */
    uint32_t number = atomic_load_explicit(&region_number, memory_order_relaxed) + 1;
    atomic_store_explicit(&region_task, task, memory_order_relaxed);
    atomic_store_explicit(&region_data, data, memory_order_relaxed);
    atomic_store_explicit(&region_trip, trip, memory_order_relaxed);
    atomic_store_explicit(&region_threads, threads, memory_order_relaxed);
    atomic_store_explicit(&region_chunks, chunks, memory_order_relaxed);
    atomic_store_explicit(&finished, 0, memory_order_relaxed);
    for (int32_t p = 0; p < threads; p++) { /* participant p's home: its p-th run of chunks */
        uint64_t first = (uint64_t)(chunks * p / threads);
        uint64_t end = (uint64_t)(chunks * (p + 1) / threads);
        atomic_store_explicit(&shards[p].ticket, (uint64_t)number << 32 | end << 16 | first,
                              memory_order_release);
    }
    atomic_store(&region_number, number); /* sequentially consistent with `sleepers` */
    if (atomic_load(&sleepers) > 0) futex_wake_all(&region_number);
    inside_task = 1;
    take_chunks(number, 0);
    inside_task = 0;
    /* Wait only for the chunks that pool threads claimed and are running. */
    unsigned polls = 0;
    while (atomic_load_explicit(&finished, memory_order_acquire) < chunks) {
        if (++polls % POLLS_PER_CHECK == 0) sched_yield();
        else cpu_relax();
    }
    pthread_mutex_unlock(&submit_lock);
}
