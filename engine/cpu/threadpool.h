/* engine/cpu/threadpool.h: a fixed pool of threads running one task at a time on all of
 * them (the caller is thread 0). Waiting spins briefly (decode issues hundreds of
 * small tasks per token), then yields, then sleeps on a condition variable: an idle
 * pool uses no CPU. Does not queue tasks; a task splits its own work by (ith, nth)
 * or through a counter it owns (eng_pool_next). */
#ifndef ENG_THREADPOOL_H
#define ENG_THREADPOOL_H

#include <stdatomic.h>

typedef struct eng_pool eng_pool;

typedef void (*eng_task_fn)(void *arg, int ith, int nth);

/* n_threads >= 1 (1 = no workers, tasks run on the caller). NULL on failure. */
eng_pool *eng_pool_new(int n_threads);
void eng_pool_free(eng_pool *p);
int eng_pool_size(const eng_pool *p);
/* Runs fn(arg, ith, nth) for ith in 0..nth-1 and returns when all are done.
 * Not reentrant: one caller at a time. */
void eng_pool_run(eng_pool *p, eng_task_fn fn, void *arg);

/* Dynamic work splitting inside a task: claims the next of n items from a counter
 * the task's argument holds (zeroed before eng_pool_run); -1 when none are left.
 * Which thread runs an item never changes what the item computes. */
static inline int eng_pool_next(atomic_int *counter, int n) {
    int i = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    return i < n ? i : -1;
}

#endif
