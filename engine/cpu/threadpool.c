/* engine/cpu/threadpool.c: spin-then-sleep worker pool (see threadpool.h).
 * Synchronisation: a generation counter published with release semantics;
 * workers acquire it, run their slice, and count down `pending`. Spinning is
 * bounded by time (POOL_SPIN_MS, on util_now_ms) and uses the cpu's pause hint. */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "../../util/time.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define POOL_PAUSE() _mm_pause()
#else
#define POOL_PAUSE() ((void)0)
#endif

/* Waiting: pure spinning for POOL_SPIN_MS (the gaps between the ops of one
 * forward pass are a few microseconds), then sched_yield until POOL_YIELD_MS,
 * so that on an oversubscribed machine the thread we wait for gets the core,
 * then sleep: a pool idle between turns sleeps within a fraction of a ms. */
#define POOL_SPIN_MS  0.02
#define POOL_YIELD_MS 0.2
enum { POOL_CHECK_EVERY = 32 };

/* One step of waiting: pause, and every POOL_CHECK_EVERY calls look at the
 * clock (t0 holds the start, 0 before the first look); returns 1 once it is
 * time to sleep. */
static int pool_wait_step(unsigned i, double *t0);

struct eng_pool;

typedef struct pool_worker {
    struct eng_pool *pool;
    int ith;
    pthread_t thread;
} pool_worker;

struct eng_pool {
    int n;
    pool_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_cond_t done;
    atomic_uint gen;    /* bumped once per task */
    atomic_int pending; /* workers still running the current task */
    atomic_int stop;
    atomic_int sleepers; /* workers blocked on `wake` */
    atomic_int waiting;  /* 1 while the caller sleeps on `done` */
    eng_task_fn fn;
    void *arg;
};

static int pool_wait_step(unsigned i, double *t0) {
    POOL_PAUSE();
    if (i % POOL_CHECK_EVERY) return 0;
    double t = util_now_ms();
    if (*t0 == 0) {
        *t0 = t;
        return 0;
    }
    if (t - *t0 < POOL_SPIN_MS) return 0;
    if (t - *t0 < POOL_YIELD_MS) {
        sched_yield();
        return 0;
    }
    return 1;
}

/* Waits until gen differs from seen or it is time to sleep; returns the last value read. */
static unsigned spin_gen(struct eng_pool *p, unsigned seen) {
    double t0 = 0;
    for (unsigned i = 1;; i++) {
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (g != seen || atomic_load_explicit(&p->stop, memory_order_relaxed)) return g;
        if (pool_wait_step(i, &t0)) return g;
    }
}

static void *pool_main(void *vp) {
    pool_worker *w = vp;
    struct eng_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned g = spin_gen(p, seen);
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) return NULL;
        seen = g;
        p->fn(p->arg, w->ith, p->n);
        /* seq_cst on both sides: either the caller sees pending reach 0, or we see
         * it waiting and signal under the mutex it holds until it sleeps */
        if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->waiting)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

eng_pool *eng_pool_new(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    struct eng_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (n_threads > 1) {
        p->workers = calloc((size_t)n_threads, sizeof *p->workers);
        if (!p->workers) {
            p->n = 1;
            eng_pool_free(p);
            return NULL;
        }
        for (int i = 1; i < n_threads; i++) {
            p->workers[i].pool = p;
            p->workers[i].ith = i;
            if (pthread_create(&p->workers[i].thread, NULL, pool_main, &p->workers[i]) != 0) {
                p->n = i; /* run with the threads we got */
                break;
            }
        }
    }
    return p;
}

void eng_pool_free(eng_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n && p->workers; i++) pthread_join(p->workers[i].thread, NULL);
    free(p->workers);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p);
}

int eng_pool_size(const eng_pool *p) { return p ? p->n : 1; }

void eng_pool_run(eng_pool *p, eng_task_fn fn, void *arg) {
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->pending, p->n - 1);
    atomic_fetch_add(&p->gen, 1); /* seq_cst: pairs with the sleepers check */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    fn(arg, 0, p->n);
    double t0 = 0;
    for (unsigned i = 1; atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++) {
        if (!pool_wait_step(i, &t0)) continue;
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->waiting, 1);
        while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done, &p->mu);
        atomic_store(&p->waiting, 0);
        pthread_mutex_unlock(&p->mu);
        break;
    }
}
