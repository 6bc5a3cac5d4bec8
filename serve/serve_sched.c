/* serve/serve_sched.c: the scheduler of `cachet serve`: one thread that owns
 * every engine call (the backend runs one forward pass at a time), a pool of
 * sequences, a queue ordered longest-cached-prefix-first with a starvation
 * bound, and rounds of one batched engine step (eng_gen_step_batch) for all
 * running requests: each decodes one token, and a new prompt is prefilled in
 * chunks riding in the same forward pass; stop strings, held-back text and
 * per-request timing (log line, /metrics) are applied here. Knows nothing of
 * HTTP; sampling, detokenizing and the stop checks of the model are the
 * engine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve_impl.h"

enum { N_RECENT = 16 };

typedef struct slot {
    eng_seq *seq;
    serve_job *job; /* NULL: free */
    eng_gen *gen;   /* the job's generation on seq (with job) */
    int est;        /* estimated cached prefix at admission */
} slot;

struct serve_sched {
    eng_model *m;
    serve_sched_params p;
    serve_metrics *metrics;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    int stopping, cancel_all, joined;
    double deadline;
    serve_job *head, *tail;
    int n_queue;
    slot *slots;
    int n_ctx;
    eng_batch *batch; /* the rounds' forward passes */
    slot **run;       /* a round's running slots, */
    eng_gen **gens;   /* their generations */
    eng_gen_token *out;
    unsigned long n_done; /* requests finished (numbers the log lines) */
    /* Token streams of recently finished requests: what the cache most likely
     * holds, used only to order the queue (the engine has no lookup without
     * side effects yet). */
    int32_t *recent[N_RECENT];
    int recent_len[N_RECENT];
    int recent_next;
};

/* --- jobs ------------------------------------------------------------------- */

serve_job *serve_job_new(int32_t *prompt, int n_prompt) {
    serve_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    if (pthread_cond_init(&j->cond, NULL) != 0) {
        free(j);
        return NULL;
    }
    j->prompt = prompt;
    j->n_prompt = n_prompt;
    j->refs = 1;
    util_buf_init(&j->text);
    return j;
}

static void job_free(serve_job *j) {
    free(j->prompt);
    for (int i = 0; i < j->n_stop; i++) free(j->stop[i]);
    util_buf_release(&j->text);
    pthread_cond_destroy(&j->cond);
    free(j);
}

void serve_job_release(serve_sched *s, serve_job *j) {
    if (!j) return;
    pthread_mutex_lock(&s->mu);
    int last = --j->refs == 0;
    pthread_mutex_unlock(&s->mu);
    if (last) job_free(j);
}

pthread_mutex_t *serve_sched_lock(serve_sched *s) { return &s->mu; }
int serve_sched_n_ctx(const serve_sched *s) { return s->n_ctx; }

int serve_sched_submit(serve_sched *s, serve_job *j, serve_error *e) {
    int ml = 0;
    for (int i = 0; i < j->n_stop; i++) {
        int l = (int)strlen(j->stop[i]);
        if (l > ml) ml = l;
    }
    j->max_stop_len = ml;
    j->t_submit = serve_now();
    pthread_mutex_lock(&s->mu);
    if (s->stopping || s->n_queue >= s->p.max_queue) {
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stopping)
            serve_error_set(e, 503, "server_error", "shutting_down", NULL, "the server is shutting down");
        else
            serve_error_set(e, 503, "server_error", "overloaded", NULL,
                            "the server is busy: %d requests are queued", s->p.max_queue);
        return -1;
    }
    j->refs++;
    j->next = NULL;
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    s->n_queue++;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* --- queue order ---------------------------------------------------------------- */

static int common_prefix(const int32_t *a, int na, const int32_t *b, int nb) {
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

/* What the cache holds or is about to hold of j's prompt: the recent
 * requests, and the prompts of running ones (a prefix one is still
 * prefilling is computed once; a request sharing it rides on it). */
static int estimate_cached(const serve_sched *s, const serve_job *j) {
    int best = 0;
    for (int i = 0; i < N_RECENT; i++)
        if (s->recent[i]) {
            int l = common_prefix(s->recent[i], s->recent_len[i], j->prompt, j->n_prompt);
            if (l > best) best = l;
        }
    for (int i = 0; i < s->p.parallel; i++) {
        const serve_job *r = s->slots[i].job;
        if (!r) continue;
        int l = common_prefix(r->prompt, r->n_prompt, j->prompt, j->n_prompt);
        if (l > best) best = l;
    }
    return best;
}

/* Picks the queued job to admit (called with the lock held): one passed over
 * max_passed_over times goes first (oldest such); otherwise the longest
 * estimated cached prefix, the oldest on ties. Unlinks it; *est receives its
 * estimate. Jobs queued before the chosen one count one more pass-over. */
static serve_job *pick(serve_sched *s, int *est) {
    serve_job *best = NULL, *prev_best = NULL, *prev = NULL;
    int best_est = -1;
    for (serve_job *j = s->head; j; prev = j, j = j->next) {
        if (j->passed_over >= s->p.max_passed_over) {
            best = j;
            prev_best = prev;
            best_est = estimate_cached(s, j);
            break;
        }
        int e = estimate_cached(s, j);
        if (e > best_est) {
            best = j;
            prev_best = prev;
            best_est = e;
        }
    }
    if (!best) return NULL;
    for (serve_job *j = s->head; j != best; j = j->next) j->passed_over++;
    if (prev_best)
        prev_best->next = best->next;
    else
        s->head = best->next;
    if (s->tail == best) s->tail = prev_best;
    best->next = NULL;
    s->n_queue--;
    *est = best_est;
    return best;
}

static void remember(serve_sched *s, const int32_t *toks, int n) {
    if (n <= 0) return;
    int32_t *c = malloc((size_t)n * sizeof *c);
    if (!c) return;
    memcpy(c, toks, (size_t)n * sizeof *c);
    int k = s->recent_next;
    free(s->recent[k]);
    s->recent[k] = c;
    s->recent_len[k] = n;
    s->recent_next = (k + 1) % N_RECENT;
}

/* --- one request's steps -------------------------------------------------------- */

/* Appends decoded text to the job (lock held); cuts at a stop string and
 * returns 1 if one appeared. text_ready holds back what might still become a
 * stop string and never ends inside a UTF-8 character. */
static int append_text(serve_job *j, const char *p, size_t len) {
    size_t old = j->text.len;
    if (len && util_buf_append(&j->text, p, len)) return 0;
    size_t cut = (size_t)-1;
    for (int i = 0; i < j->n_stop; i++) {
        size_t sl = strlen(j->stop[i]);
        size_t from = old >= sl - 1 ? old - (sl - 1) : 0;
        if (j->text.len < from + sl) continue;
        char *hit = memmem(j->text.data + from, j->text.len - from, j->stop[i], sl);
        if (hit && (size_t)(hit - j->text.data) < cut) cut = (size_t)(hit - j->text.data);
    }
    if (cut != (size_t)-1) {
        j->text.len = cut;
        j->text.data[cut] = '\0';
        j->text_ready = cut;
        return 1;
    }
    size_t hold = j->max_stop_len > 0 ? (size_t)j->max_stop_len - 1 : 0;
    size_t ready = j->text.len > hold ? j->text.len - hold : 0;
    while (ready > j->text_ready && ready < j->text.len && (j->text.data[ready] & 0xC0) == 0x80) ready--;
    if (ready > j->text_ready) j->text_ready = ready;
    return 0;
}

/* Where a finished request's time went: a line in the server log (stderr)
 * and the phase histograms of /metrics. */
static void report_timing(serve_sched *s, const serve_job *j, const eng_gen_stats *st, serve_finish f) {
    double queue = j->t_admit > 0 ? j->t_admit - j->t_submit : serve_now() - j->t_submit;
    double match = st->match_ms / 1e3, prefill = st->prefill_ms / 1e3, decode = st->decode_ms / 1e3;
    serve_metrics_phases(s->metrics, queue, match, prefill, decode);
    fprintf(stderr,
            "cachet serve: request %lu %s: prompt %d tokens (%d cached), %d generated; queue %.3f s, "
            "prefix match %.3f s, prefill %.3f s, decode %.3f s; %d passes of %.2f requests\n",
            ++s->n_done, serve_finish_name(f), j->n_prompt, st->cached_tokens, st->generated_tokens, queue,
            match, prefill, decode, j->passes, j->passes ? (double)j->pass_seqs / j->passes : 0.0);
}

static void finish(serve_sched *s, slot *sl, serve_finish f, const serve_error *e) {
    serve_job *j = sl->job;
    char tail[16];
    const char *held;
    size_t k = eng_gen_flush(sl->gen, &held);
    if (k > sizeof tail) k = sizeof tail;
    memcpy(tail, held, k);
    eng_gen_stats st;
    eng_gen_end(sl->gen, &st); /* commits: the reply is the next turn's prefix */
    report_timing(s, j, &st, f);
    sl->gen = NULL;
    serve_metrics_spec(s->metrics, &st);
    int n_gen = st.generated_tokens;
    remember(s, eng_seq_tokens(sl->seq), eng_seq_len(sl->seq));
    eng_seq_truncate(sl->seq, 0); /* an idle sequence pins no pages */
    double now = serve_now();
    pthread_mutex_lock(&s->mu);
    if (f == SERVE_FINISH_LENGTH || f == SERVE_FINISH_STOP) {
        if (k && append_text(j, tail, k)) f = SERVE_FINISH_STOP;
        j->text_ready = j->text.len;
    }
    pthread_mutex_unlock(&s->mu);
    /* Counted before the client can see the answer, so a client reading
     * /metrics right after its answer finds it included. Only this thread
     * writes these fields. */
    if (f == SERVE_FINISH_STOP || f == SERVE_FINISH_LENGTH || f == SERVE_FINISH_CANCELED)
        serve_metrics_generation(s->metrics, j->n_prompt, j->cached_tokens, j->cached_disk, n_gen,
                                 j->t_first > 0 ? j->t_first - j->t_submit : -1, now - j->t_submit,
                                 f == SERVE_FINISH_CANCELED);
    pthread_mutex_lock(&s->mu);
    if (f == SERVE_FINISH_ERROR && e) j->err = *e;
    j->completion_tokens = n_gen;
    j->finish = f;
    pthread_cond_broadcast(&j->cond);
    int last = --j->refs == 0;
    pthread_mutex_unlock(&s->mu);
    if (last) job_free(j);
    sl->job = NULL;
}

static void fail(serve_sched *s, slot *sl, int code, const util_err *err) {
    serve_error e;
    if (code == UTIL_ENOMEM)
        serve_error_set(&e, 503, "server_error", "kv_cache_full", NULL, "%s", err->msg);
    else if (code == UTIL_ERANGE)
        serve_error_set(&e, 400, "invalid_request_error", "context_length_exceeded", NULL, "%s", err->msg);
    else
        serve_error_set(&e, 500, "server_error", NULL, NULL, "%s", err->msg);
    finish(s, sl, SERVE_FINISH_ERROR, &e);
}

/* What a round's step gave one request: the cached counts so far, and a
 * token (none while its prompt is still being prefilled) whose text goes
 * through the stop strings. */
static void after_step(serve_sched *s, slot *sl, const eng_gen_token *t) {
    serve_job *j = sl->job;
    eng_gen_stats st = eng_gen_get_stats(sl->gen);
    double now = serve_now();
    int token = t->id >= 0, eog = t->done && t->stop == ENG_STOP_EOG, stopped = eog;
    pthread_mutex_lock(&s->mu);
    j->cached_tokens = st.cached_tokens;
    j->cached_disk = st.cached_tokens_disk;
    if (token && j->t_first == 0) j->t_first = now;
    if (token && !eog) {
        stopped = append_text(j, t->text, t->len);
        pthread_cond_broadcast(&j->cond);
    }
    pthread_mutex_unlock(&s->mu);
    if (stopped)
        finish(s, sl, SERVE_FINISH_STOP, NULL);
    else if (t->done)
        finish(s, sl, SERVE_FINISH_LENGTH, NULL); /* max_tokens or the context is full */
}

/* One round: canceled requests finish; every other running request takes
 * its step (a decode token, or its next prompt chunk) in one forward pass.
 * When that pass fails, each takes its step alone, so only the one that
 * fails (the KV memory is full, say) ends with an error. */
static void run_round(serve_sched *s) {
    int n = 0;
    for (int i = 0; i < s->p.parallel; i++) {
        slot *sl = &s->slots[i];
        if (!sl->job) continue;
        pthread_mutex_lock(&s->mu);
        int cancel = sl->job->cancel || s->cancel_all;
        pthread_mutex_unlock(&s->mu);
        if (cancel) {
            finish(s, sl, SERVE_FINISH_CANCELED, NULL);
            continue;
        }
        s->run[n] = sl;
        s->gens[n++] = sl->gen;
    }
    if (n == 0) return;
    util_err err;
    util_err_clear(&err);
    int rc = eng_gen_step_batch(s->gens, n, s->batch, s->p.prefill_chunk, s->out, &err);
    serve_metrics_pass(s->metrics, n);
    for (int i = 0; i < n; i++) {
        s->run[i]->job->passes++;
        s->run[i]->job->pass_seqs += n;
    }
    for (int i = 0; i < n; i++) {
        if (rc && n > 1) {
            util_err_clear(&err);
            int rc1 = eng_gen_step_batch(&s->gens[i], 1, s->batch, s->p.prefill_chunk, &s->out[i], &err);
            if (rc1) {
                fail(s, s->run[i], rc1, &err);
                continue;
            }
        } else if (rc) {
            fail(s, s->run[i], rc, &err);
            continue;
        }
        after_step(s, s->run[i], &s->out[i]);
    }
}

/* --- the thread ------------------------------------------------------------------ */

/* Fills free slots from the queue (lock held). Returns the running count. */
static int admit(serve_sched *s) {
    int running = 0;
    for (int i = 0; i < s->p.parallel; i++) {
        slot *sl = &s->slots[i];
        if (!sl->job && s->head) {
            int est = 0;
            serve_job *j = pick(s, &est);
            util_err err;
            eng_gen_params gp = {.max_tokens = j->max_tokens, .sample = j->sp, .spec = s->p.spec};
            if (eng_gen_begin(&sl->gen, sl->seq, j->prompt, j->n_prompt, &gp, &err)) {
                serve_error_set(&j->err, 500, "server_error", NULL, NULL, "%s", err.msg);
                j->finish = SERVE_FINISH_ERROR;
                pthread_cond_broadcast(&j->cond);
                if (--j->refs == 0) job_free(j);
                i--; /* try the slot again with the next job */
                continue;
            }
            sl->job = j;
            sl->est = est < j->n_prompt ? est : j->n_prompt - 1;
            j->t_admit = serve_now();
        }
        if (sl->job) running++;
    }
    return running;
}

/* Past the shutdown deadline: queued jobs fail, running ones stop (lock held). */
static void cancel_everything(serve_sched *s) {
    s->cancel_all = 1;
    while (s->head) {
        serve_job *j = s->head;
        s->head = j->next;
        serve_error_set(&j->err, 503, "server_error", "shutting_down", NULL, "the server is shutting down");
        j->finish = SERVE_FINISH_ERROR;
        pthread_cond_broadcast(&j->cond);
        if (--j->refs == 0) job_free(j);
    }
    s->tail = NULL;
    s->n_queue = 0;
}

static void *sched_main(void *arg) {
    serve_sched *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->stopping && !s->cancel_all && serve_now() >= s->deadline) cancel_everything(s);
        int running = admit(s);
        int waiting = s->n_queue;
        if (running == 0) {
            if (s->stopping && !s->head) break;
            if (s->stopping) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 50 * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&s->wake, &s->mu, &ts);
            } else {
                pthread_cond_wait(&s->wake, &s->mu);
            }
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        run_round(s);
        eng_cache_stats cs = eng_model_cache_stats(s->m);
        int still = 0;
        for (int i = 0; i < s->p.parallel; i++) still += s->slots[i].job != NULL;
        serve_metrics_sched(s->metrics, still, waiting, &cs);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    eng_cache_stats cs = eng_model_cache_stats(s->m);
    serve_metrics_sched(s->metrics, 0, 0, &cs);
    return NULL;
}

static void free_slots(serve_sched *s) {
    for (int i = 0; s->slots && i < s->p.parallel; i++) {
        eng_gen_end(s->slots[i].gen, NULL);
        eng_seq_free(s->slots[i].seq);
    }
    free(s->slots);
    free(s->run);
    free(s->gens);
    free(s->out);
    eng_batch_free(s->batch);
    for (int i = 0; i < N_RECENT; i++) free(s->recent[i]);
}

int serve_sched_new(serve_sched **out, eng_model *m, const serve_sched_params *p, serve_metrics *metrics,
                    util_err *err) {
    *out = NULL;
    serve_sched *s = calloc(1, sizeof *s);
    if (!s) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    s->m = m;
    s->p = *p;
    s->metrics = metrics;
    s->slots = calloc((size_t)p->parallel, sizeof *s->slots);
    s->run = calloc((size_t)p->parallel, sizeof *s->run);
    s->gens = calloc((size_t)p->parallel, sizeof *s->gens);
    s->out = calloc((size_t)p->parallel, sizeof *s->out);
    if (!s->slots || !s->run || !s->gens || !s->out) {
        free(s->slots);
        free(s->run);
        free(s->gens);
        free(s->out);
        free(s);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    int rc = eng_batch_new(&s->batch, m, err);
    for (int i = 0; i < p->parallel && rc == UTIL_OK; i++)
        rc = eng_seq_new(&s->slots[i].seq, m, p->n_ctx, err);
    if (rc == UTIL_OK) s->n_ctx = eng_seq_n_ctx(s->slots[0].seq);
    if (rc == UTIL_OK && (pthread_mutex_init(&s->mu, NULL) || pthread_cond_init(&s->wake, NULL)))
        rc = util_err_set(err, UTIL_EINTERNAL, "cannot create the scheduler's lock");
    if (rc == UTIL_OK && pthread_create(&s->thread, NULL, sched_main, s) != 0)
        rc = util_err_set(err, UTIL_EINTERNAL, "cannot start the scheduler thread");
    if (rc) {
        free_slots(s);
        free(s);
        return rc;
    }
    *out = s;
    return UTIL_OK;
}

void serve_sched_stop(serve_sched *s, int grace_ms) {
    pthread_mutex_lock(&s->mu);
    int joined = s->joined;
    s->stopping = 1;
    s->deadline = serve_now() + grace_ms / 1e3;
    s->joined = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);
    if (!joined) pthread_join(s->thread, NULL);
}

void serve_sched_free(serve_sched *s) {
    if (!s) return;
    serve_sched_stop(s, 0);
    free_slots(s);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
