// A fixed pool of worker threads for the CPU kernels' bands (DepthKit's `parallelBands`).
//
// libdispatch's concurrentPerform allocates on every call (its continuations), which the viewer's
// steady-state check counts on the render thread a few times a frame. This pool is made once (the
// first parallel call): cores − 1 workers wait on a condition variable; a call publishes the job
// under the mutex, runs bands itself too (taking band indices from an atomic counter), and waits
// until every worker has finished its part. Nothing is allocated per call.
//
// One job at a time: a call made while another is running (the source's thread and the render
// thread both running kernels, or a band body that itself runs bands) does not wait for the pool;
// it runs its bands on its own thread, one after another. Same results, never a deadlock.
#include "dl_kernels.h"
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define DL_POOL_MAX 63

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;   // guards the job and counters below
static pthread_cond_t pool_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pool_busy = PTHREAD_MUTEX_INITIALIZER;    // held by the caller whose job runs
static int pool_workers;
static unsigned long pool_generation;
static int pool_active;            // workers still in the current job
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

static void *worker(void *arg) {
    (void)arg;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool_mutex);
        while (pool_generation == seen) pthread_cond_wait(&pool_start, &pool_mutex);
        seen = pool_generation;
        dl_band_fn fn = pool_fn;
        void *ctx = pool_ctx;
        int32_t bands = pool_bands;
        pthread_mutex_unlock(&pool_mutex);

        run_bands(fn, ctx, bands);

        pthread_mutex_lock(&pool_mutex);
        if (--pool_active == 0) pthread_cond_signal(&pool_done);
        pthread_mutex_unlock(&pool_mutex);
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
    pthread_mutex_lock(&pool_mutex);
    pool_fn = fn;
    pool_ctx = ctx;
    pool_bands = bands;
    atomic_store_explicit(&pool_next, 0, memory_order_relaxed);
    pool_active = pool_workers;
    pool_generation++;
    pthread_cond_broadcast(&pool_start);
    pthread_mutex_unlock(&pool_mutex);

    run_bands(fn, ctx, bands);

    pthread_mutex_lock(&pool_mutex);
    while (pool_active > 0) pthread_cond_wait(&pool_done, &pool_mutex);
    pthread_mutex_unlock(&pool_mutex);
    pthread_mutex_unlock(&pool_busy);
}
