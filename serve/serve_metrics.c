/* serve/serve_metrics.c: the counters behind `cachet serve`'s GET /metrics,
 * rendered as Prometheus text: requests by status, tokens, the prefix-cache
 * hit counters, latency histograms (whole requests and their phases: queue,
 * prefix match, prefill, decode) and KV memory. Thread-safe (one mutex);
 * does not call the engine (the scheduler publishes its stats here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_impl.h"

/* From 1 ms: the phases of a request (a prefix match, a short prefill) take milliseconds. */
static const double bucket_bounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                       1,     2.5,   5,    10,    30,   60,  120};
enum { N_BUCKETS = sizeof bucket_bounds / sizeof bucket_bounds[0] };

typedef struct histogram {
    uint64_t le[N_BUCKETS]; /* cumulative at render time; stored per bucket */
    uint64_t count;
    double sum;
} histogram;

static const int known_status[] = {200, 400, 401, 404, 405, 413, 500, 503};
enum { N_STATUS = sizeof known_status / sizeof known_status[0] };

struct serve_metrics {
    pthread_mutex_t mu;
    uint64_t by_status[N_STATUS + 1]; /* last: any other status */
    uint64_t prompt_tokens, cached_tokens, cached_disk, completion_tokens;
    uint64_t generations, canceled;
    histogram ttft, latency;
    uint64_t forwards, drafted, accepted;    /* decoding (--spec: drafts) */
    uint64_t passes, pass_seqs;              /* the scheduler's batched passes, sequences in them */
    histogram queue, match, prefill, decode; /* per-request phases */
    int running, waiting;
    eng_cache_stats cs;
};

serve_metrics *serve_metrics_new(void) {
    serve_metrics *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void serve_metrics_free(serve_metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void serve_metrics_request(serve_metrics *m, int status) {
    int k = N_STATUS;
    for (int i = 0; i < N_STATUS; i++)
        if (known_status[i] == status) k = i;
    pthread_mutex_lock(&m->mu);
    m->by_status[k]++;
    pthread_mutex_unlock(&m->mu);
}

static void observe(histogram *h, double v) {
    for (int i = 0; i < N_BUCKETS; i++)
        if (v <= bucket_bounds[i]) {
            h->le[i]++;
            break;
        }
    h->count++;
    h->sum += v;
}

void serve_metrics_generation(serve_metrics *m, int prompt_tokens, int cached_tokens, int cached_disk,
                              int completion_tokens, double ttft_s, double total_s, int canceled) {
    pthread_mutex_lock(&m->mu);
    if (canceled) {
        /* never reported to a client: kept out of the token and cache sums */
        m->canceled++;
        pthread_mutex_unlock(&m->mu);
        return;
    }
    m->prompt_tokens += (uint64_t)prompt_tokens;
    m->cached_tokens += (uint64_t)cached_tokens;
    m->cached_disk += (uint64_t)cached_disk;
    m->completion_tokens += (uint64_t)completion_tokens;
    m->generations++;
    if (ttft_s >= 0) observe(&m->ttft, ttft_s);
    observe(&m->latency, total_s);
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_spec(serve_metrics *m, const eng_gen_stats *st) {
    pthread_mutex_lock(&m->mu);
    m->forwards += (uint64_t)st->decode_forwards;
    m->drafted += (uint64_t)st->spec_drafted;
    m->accepted += (uint64_t)st->spec_accepted;
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_phases(serve_metrics *m, double queue_s, double match_s, double prefill_s,
                          double decode_s) {
    pthread_mutex_lock(&m->mu);
    observe(&m->queue, queue_s);
    observe(&m->match, match_s);
    observe(&m->prefill, prefill_s);
    observe(&m->decode, decode_s);
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_pass(serve_metrics *m, int n_seqs) {
    pthread_mutex_lock(&m->mu);
    m->passes++;
    m->pass_seqs += (uint64_t)n_seqs;
    pthread_mutex_unlock(&m->mu);
}

void serve_metrics_sched(serve_metrics *m, int running, int waiting, const eng_cache_stats *cs) {
    pthread_mutex_lock(&m->mu);
    m->running = running;
    m->waiting = waiting;
    if (cs) m->cs = *cs;
    pthread_mutex_unlock(&m->mu);
}

/* --- Prometheus text ---------------------------------------------------------- */

static void metric(util_buf *b, const char *name, const char *type, const char *help, double v) {
    util_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

static void render_hist(util_buf *b, const char *name, const char *help, const histogram *h) {
    util_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int i = 0; i < N_BUCKETS; i++) {
        cum += h->le[i];
        util_buf_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name, bucket_bounds[i], (unsigned long long)cum);
    }
    util_buf_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.17g\n%s_count %llu\n", name,
                    (unsigned long long)h->count, name, h->sum, name, (unsigned long long)h->count);
}

int serve_metrics_render(serve_metrics *m, util_buf *b) {
    pthread_mutex_lock(&m->mu);
    serve_metrics s = *m; /* a consistent snapshot; the mutex copy is not used */
    pthread_mutex_unlock(&m->mu);
    util_buf_puts(b, "# HELP cachet_requests_total HTTP requests answered, by status code\n"
                     "# TYPE cachet_requests_total counter\n");
    for (int i = 0; i <= N_STATUS; i++) {
        if (i < N_STATUS)
            util_buf_printf(b, "cachet_requests_total{code=\"%d\"} %llu\n", known_status[i],
                            (unsigned long long)s.by_status[i]);
        else
            util_buf_printf(b, "cachet_requests_total{code=\"other\"} %llu\n",
                            (unsigned long long)s.by_status[i]);
    }
    metric(b, "cachet_prefix_cache_queries_total", "counter",
           "prompt tokens of finished requests (the sum of usage.prompt_tokens)", (double)s.prompt_tokens);
    metric(b, "cachet_prefix_cache_hits_total", "counter",
           "of which reused from the prefix cache (the sum of usage.prompt_tokens_details.cached_tokens)",
           (double)s.cached_tokens);
    metric(b, "cachet_prefix_cache_hits_disk_total", "counter", "of which loaded from the disk tier",
           (double)s.cached_disk);
    metric(b, "cachet_prompt_tokens_total", "counter", "prompt tokens of finished requests",
           (double)s.prompt_tokens);
    metric(b, "cachet_generation_tokens_total", "counter", "tokens generated", (double)s.completion_tokens);
    metric(b, "cachet_generations_total", "counter", "generations finished and answered",
           (double)s.generations);
    metric(b, "cachet_generations_canceled_total", "counter", "generations stopped because the client left",
           (double)s.canceled);
    metric(b, "cachet_decode_forwards_total", "counter",
           "decode forward passes (with --spec, each verifies a draft)", (double)s.forwards);
    metric(b, "cachet_spec_draft_tokens_total", "counter", "tokens drafted (--spec)", (double)s.drafted);
    metric(b, "cachet_spec_accepted_tokens_total", "counter",
           "of which accepted (tokens per forward: "
           "(forwards + accepted) / forwards)",
           (double)s.accepted);
    metric(b, "cachet_batch_passes_total", "counter",
           "the scheduler's rounds: one batched forward pass each for every running request",
           (double)s.passes);
    metric(b, "cachet_batch_sequences_total", "counter",
           "requests stepped in those passes (sequences per pass: this / cachet_batch_passes_total)",
           (double)s.pass_seqs);
    metric(b, "cachet_requests_running", "gauge", "requests holding a sequence", s.running);
    metric(b, "cachet_requests_waiting", "gauge", "requests queued for a sequence", s.waiting);
    render_hist(b, "cachet_time_to_first_token_seconds", "submit to first generated token", &s.ttft);
    render_hist(b, "cachet_request_duration_seconds", "submit to last generated token", &s.latency);
    render_hist(b, "cachet_request_queue_seconds", "submit to getting a sequence (time queued)", &s.queue);
    render_hist(b, "cachet_request_prefix_match_seconds", "matching the prompt against the prefix cache",
                &s.match);
    render_hist(b, "cachet_request_prefill_seconds", "first prefill chunk to the end of the last one",
                &s.prefill);
    render_hist(b, "cachet_request_decode_seconds", "first generated token to the last", &s.decode);
    metric(b, "cachet_engine_prefix_cache_queries_total", "counter",
           "prompt tokens looked up in the engine's radix tree (once per prefill chunk)",
           (double)s.cs.queries);
    metric(b, "cachet_engine_prefix_cache_hits_total", "counter", "of which found", (double)s.cs.hits);
    metric(b, "cachet_prefix_cache_evictions_total", "counter", "KV pages evicted from memory",
           (double)s.cs.evictions);
    metric(b, "cachet_kv_disk_reads_total", "counter", "KV pages read from the disk tier",
           (double)s.cs.disk_reads);
    metric(b, "cachet_kv_disk_writes_total", "counter", "KV pages written to the disk tier",
           (double)s.cs.disk_writes);
    metric(b, "cachet_kv_pages_in_use", "gauge", "KV pages allocated", (double)s.cs.pages_in_use);
    metric(b, "cachet_kv_pages_cached", "gauge", "KV pages indexed by the prefix cache",
           (double)s.cs.pages_cached);
    metric(b, "cachet_kv_bytes_in_use", "gauge", "KV memory allocated, bytes", (double)s.cs.bytes_in_use);
    metric(b, "cachet_kv_budget_bytes", "gauge", "KV memory budget, bytes", (double)s.cs.budget_bytes);
    return b->data ? UTIL_OK : UTIL_ENOMEM;
}
