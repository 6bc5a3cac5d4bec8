/* engine/threadpool.c: spin-then-sleep worker pool (see threadpool.h).
 * Synchronisation: a generation counter published with release semantics;
 * workers acquire it, run their slice, and count down `pending`. */
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { POOL_SPIN_ITERS = 20000 };

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
    atomic_uint gen;      /* bumped once per task */
    atomic_int pending;   /* workers still running the current task */
    atomic_int stop;
    atomic_int sleepers;  /* workers blocked on `wake` */
    eng_task_fn fn;
    void *arg;
};

static void *pool_main(void *vp) {
    pool_worker *w = vp;
    struct eng_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        for (int i = 0; g == seen && i < POOL_SPIN_ITERS; i++) {
            if (atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
            g = atomic_load_explicit(&p->gen, memory_order_acquire);
        }
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
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
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
    for (int i = 0; atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++) {
        if (i < POOL_SPIN_ITERS) continue;
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
        break;
    }
}
