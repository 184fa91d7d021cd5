// A fixed pool of worker threads for the CPU kernels' bands (DepthKit's `parallelBands`).
//
// libdispatch's concurrentPerform allocates on every call (its continuations), which the viewer's
// steady-state check counts on the render thread a few times a frame. This pool is made once (the
// first parallel call): cores − 1 workers wait for a job; a call publishes the job, runs bands
// itself too (taking band indices from an atomic counter), and waits until every worker has
// finished its part. Nothing is allocated per call.
//
// Waking a thread that sleeps on a condition variable takes tens of microseconds (more in a
// virtual machine), a sizeable part of a kernel that takes a few hundred. So a worker that
// finished a job spins for up to DL_SPIN_NS on the job counter before it sleeps, and the caller
// spins for up to DL_SPIN_NS for the workers to finish before it sleeps: the kernels of one frame
// come one after another, and each finds the workers awake. A frame's last kernel leaves them
// spinning for at most DL_SPIN_NS (with `pause`, which yields the core's pipeline to a sibling).
//
// One job at a time: a call made while another is running (the source's thread and the render
// thread both running kernels, or a band body that itself runs bands) does not wait for the pool;
// it runs its bands on its own thread, one after another. Same results, never a deadlock.
#include "dl_kernels.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define DL_POOL_MAX 63
/// How long a worker waits awake for the next job, and the caller for the workers.
#define DL_SPIN_NS 100000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;   // for the sleeps below
static pthread_cond_t pool_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pool_busy = PTHREAD_MUTEX_INITIALIZER;    // held by the caller whose job runs
static int pool_workers;
// The job: written by the caller before it publishes a new generation (release), read by a worker
// after it sees that generation (acquire). The next job cannot be written before every worker
// has finished this one (the caller waits for pool_active to reach 0), so a worker reads it whole.
static atomic_ulong pool_generation;
static atomic_int pool_active;     // workers still in the current job
static dl_band_fn pool_fn;
static void *pool_ctx;
static int32_t pool_bands;
static atomic_int pool_next;

static void run_bands(dl_band_fn fn, void *ctx, int32_t bands) {
    for (;;) {
        int i = atomic_fetch_add_explicit(&pool_next, 1, memory_order_relaxed);
        if (i >= bands) break;
        fn(ctx, i);
    }
}

/// Waits for a job generation other than `seen`: spinning for up to DL_SPIN_NS, then asleep.
static unsigned long wait_for_generation(unsigned long seen) {
    uint64_t start = 0;
    for (unsigned spins = 0;; spins++) {
        unsigned long g = atomic_load_explicit(&pool_generation, memory_order_acquire);
        if (g != seen) return g;
        cpu_relax();
        if ((spins & 63) == 63) {
            uint64_t t = now_ns();
            if (start == 0) start = t;
            else if (t - start > DL_SPIN_NS) break;
        }
    }
    pthread_mutex_lock(&pool_mutex);
    unsigned long g;
    while ((g = atomic_load_explicit(&pool_generation, memory_order_acquire)) == seen)
        pthread_cond_wait(&pool_start, &pool_mutex);
    pthread_mutex_unlock(&pool_mutex);
    return g;
}

static void *worker(void *arg) {
    (void)arg;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_for_generation(seen);
        run_bands(pool_fn, pool_ctx, pool_bands);
        if (atomic_fetch_sub_explicit(&pool_active, 1, memory_order_acq_rel) == 1) {
            // The last worker out: wake the caller if it went to sleep (it checks pool_active
            // under the mutex before sleeping, so this signal cannot fall between the two).
            pthread_mutex_lock(&pool_mutex);
            pthread_cond_signal(&pool_done);
            pthread_mutex_unlock(&pool_mutex);
        }
    }
    return NULL;
}

static void start_pool(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cores > 1 ? (int)(cores - 1) : 0;
    if (want > DL_POOL_MAX) want = DL_POOL_MAX;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < want; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, NULL) != 0) break;
        pool_workers++;
    }
    pthread_attr_destroy(&attr);
}

int dl_parallel_workers(void) {
    pthread_once(&pool_once, start_pool);
    return pool_workers;
}

void dl_parallel_run(int32_t bands, dl_band_fn fn, void *ctx) {
    if (bands <= 0) return;
    pthread_once(&pool_once, start_pool);
    if (bands == 1 || pool_workers == 0 || pthread_mutex_trylock(&pool_busy) != 0) {
        for (int32_t i = 0; i < bands; i++) fn(ctx, i);
        return;
    }
    pool_fn = fn;
    pool_ctx = ctx;
    pool_bands = bands;
    atomic_store_explicit(&pool_next, 0, memory_order_relaxed);
    atomic_store_explicit(&pool_active, pool_workers, memory_order_relaxed);
    pthread_mutex_lock(&pool_mutex);
    atomic_fetch_add_explicit(&pool_generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool_start);
    pthread_mutex_unlock(&pool_mutex);

    run_bands(fn, ctx, bands);

    uint64_t start = now_ns();
    while (atomic_load_explicit(&pool_active, memory_order_acquire) > 0 && now_ns() - start < DL_SPIN_NS) cpu_relax();
    pthread_mutex_lock(&pool_mutex);
    while (atomic_load_explicit(&pool_active, memory_order_acquire) > 0) pthread_cond_wait(&pool_done, &pool_mutex);
    pthread_mutex_unlock(&pool_mutex);
    pthread_mutex_unlock(&pool_busy);
}
