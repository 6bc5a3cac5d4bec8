/* engine/threadpool.h: a fixed pool of worker threads that run one task at a
 * time on all threads (the caller is thread 0) and wait for all to finish.
 * Workers spin briefly after a task (decode issues hundreds of small tasks per
 * token), then sleep on a condition variable: an idle pool uses no CPU.
 * Does not queue tasks or balance work: the task splits itself by (ith, nth). */
#ifndef ENG_THREADPOOL_H
#define ENG_THREADPOOL_H

typedef struct eng_pool eng_pool;

typedef void (*eng_task_fn)(void *arg, int ith, int nth);

/* n_threads >= 1 (1 = no workers, tasks run on the caller). NULL on failure. */
eng_pool *eng_pool_new(int n_threads);
void eng_pool_free(eng_pool *p);
int eng_pool_size(const eng_pool *p);
/* Runs fn(arg, ith, nth) for ith in 0..nth-1 and returns when all are done.
 * Not reentrant: one caller at a time. */
void eng_pool_run(eng_pool *p, eng_task_fn fn, void *arg);

#endif
