/* cli/cmd_bench.c: `cachet bench` (make bench): engine speed side by side with
 * llama.cpp's llama-bench on the same GGUF, thread count and context depth
 * (--depth, llama-bench -d): prompt processing and generation tokens/s, TTFT,
 * their ratios (withheld on a loaded machine unless --force), streaming-read
 * bandwidth (T threads, from a buffer larger than the LLC and over decode's
 * working set; the GPU's, measured by the backend, on a GPU) and decode's share
 * of that bound, peak RSS against model + KV + scratch, and the file's tensor
 * types. Prints a table or --json. Runs llama-bench as a child (CPU backend
 * only); never builds it. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "../util/buf.h"
#include "../util/time.h"
#include "cli.h"
#include "opts.h"

extern char **environ;

static const char bench_usage[] =
    "usage: cachet bench [--prompt-tokens N] [--gen-tokens N] [--depth N] [--reps N] [--batch N]\n"
    "                    [--llama-cpp DIR | --no-llama] [--force] [--json] [engine options]\n"
    "\n"
    "Prompt processing and generation speed, TTFT, memory bandwidth and peak RSS, beside\n"
    "llama.cpp's llama-bench (from DIR, default $LLAMA_CPP_DIR) on the same model and threads.\n"
    "\n"
    "  --prompt-tokens N     prompt length for prompt processing and TTFT (default 512)\n"
    "  --gen-tokens N        tokens generated, one at a time (default 128)\n"
    "  --depth N             run pp and tg after an N-token context, as llama-bench -d\n"
    "                        (reported as \"tg128 @ d4096\"; default 0: an empty context)\n"
    "  --reps N              runs, interleaved with llama-bench's; medians shown (default 3)\n"
    "  --batch N             tokens per forward call in prefill (default 64, the engine's)\n"
    "  --llama-cpp DIR       llama.cpp build directory holding bin/llama-bench\n"
    "  --no-llama            do not run llama.cpp\n"
    "  --force               print ratios against llama.cpp even on a loaded machine (a\n"
    "                        1-minute load average above 0.5 per online core)\n"
    "  --json                print one JSON object\n"
    "\n"
    "The model file's tensor types (what the kernels ran) head the report.\n"
    "Set CACHET_CPU=scalar|avx2|avx512 to measure one kernel level.\n"
    "\n"
    "engine options:\n";

/* Where bench's use of an engine option differs from the other commands'. */
static const cli_engine_note bench_notes[] = {
    {"threads", "threads for both engines (default 2)"},
    {"ctx-size", "context length (default and at least: depth + prompt + generated tokens + 16)"},
    {"no-cache", "bench always runs without prefix reuse: each run computes the whole prompt"},
    {"no-disk-cache", "bench never uses the disk tier"},
    {"kv-dir", "bench never uses the disk tier"},
    {"kv-disk-budget", "bench never uses the disk tier"},
    {"spec", "not used: bench measures plain decode steps"},
    {"spec-max", "not used"},
    {"spec-ngram", "not used"},
    {"device", "compute on D: auto (a GPU when this build has CUDA and one is present), cpu,\n"
               "cuda, cuda:N (default auto; $CACHET_DEVICE sets it when absent); on a GPU the\n"
               "bandwidth is the GPU memory's, as the backend measures it, and llama.cpp is not run"},
    {0, 0}};

static void usage(FILE *f) {
    fputs(bench_usage, f);
    cli_engine_usage(f, CLI_ENGINE_ALL, bench_notes);
}

typedef struct bench_opts {
    cli_engine e; /* e.mp.n_threads: the threads of both engines */
    const char *llama_dir;
    int n_prompt, n_gen, depth, reps, batch, json, no_llama, force;
} bench_opts;

/* A 1-minute load average above this many runnable tasks per online core
 * means other work competes for the cores (and llama.cpp's spinning OpenMP
 * threads suffer far more than cachet's): the figures are not a result. */
#define BENCH_LOAD_PER_CORE 0.5

typedef struct bench_stat {
    double median, mean, sd;
    int ok;
} bench_stat;

enum { MAX_REPS = 64 };

typedef struct bench_result {
    char model_path[4096];
    char backend[64];
    int threads;
    uint64_t file_bytes, weight_bytes, kv_per_token, kv_bytes, scratch_bytes, peak_rss;
    bench_stat pp, tg, ttft; /* cachet: tok/s, tok/s, ms */
    bench_stat l_pp, l_tg;   /* llama.cpp: tok/s */
    double v_pp[MAX_REPS], v_tg[MAX_REPS], v_ttft[MAX_REPS], v_lpp[MAX_REPS], v_ltg[MAX_REPS];
    double v_bw_ws[MAX_REPS], v_bw_dram[MAX_REPS], v_bw_dev[MAX_REPS];
    int n_llama;               /* llama-bench runs that gave both figures */
    char llama_note[256];      /* why llama.cpp is missing, when it is */
    double load1;              /* 1-minute load average before the run */
    int n_cores;               /* online cores */
    int loaded;                /* load1 > BENCH_LOAD_PER_CORE x n_cores */
    uint64_t llc_bytes;        /* the largest CPU cache (sysfs), 0: unknown */
    uint64_t dram_buf_bytes;   /* the DRAM read's buffer */
    bench_stat bw_ws, bw_dram; /* streaming reads, GB/s: decode's working set, 1 GiB */
    bench_stat bw_dev;         /* the GPU's memory, GB/s, as its backend measures it */
    int gpu;                   /* the backend measures a device bandwidth: a GPU */
    double decode_bytes;       /* bytes one tg step reads (weights + mean KV) */
    double decode_kv_bytes;    /* of which KV (depth + the mean of the tg positions) */
    int n_types;               /* the file's tensor types, most bytes first */
    struct {
        uint32_t type;
        int tensors;
        uint64_t bytes;
    } types[16];
} bench_result;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median (the figure reported: one disturbed run does not move it), mean, sd. */
static bench_stat stat_of(const double *v, int n) {
    bench_stat s = {0, 0, 0, n > 0};
    double sorted[MAX_REPS];
    for (int i = 0; i < n; i++) s.mean += v[i] / n, sorted[i] = v[i];
    for (int i = 0; i < n && n > 1; i++) s.sd += (v[i] - s.mean) * (v[i] - s.mean) / (n - 1);
    s.sd = sqrt(s.sd);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    if (n > 0) s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    return s;
}

/* The tensor types of the model file, with their tensor counts and bytes, most
 * bytes first: what the kernels ran (the file's types are the computed types).
 * Leaves n_types 0 when the file cannot be read (the bench then fails anyway). */
static void tensor_types(bench_result *r) {
    eng_gguf *g = NULL;
    util_err err;
    if (eng_gguf_open(&g, r->model_path, &err)) return;
    const int cap = (int)(sizeof r->types / sizeof r->types[0]);
    for (int64_t i = 0; i < eng_gguf_tensor_count(g); i++) {
        const eng_gguf_tensor *t = eng_gguf_tensor_at(g, i);
        int k = 0;
        while (k < r->n_types && r->types[k].type != t->type) k++;
        if (k == r->n_types) {
            if (k == cap) continue;
            r->types[r->n_types++].type = t->type;
        }
        r->types[k].tensors++;
        r->types[k].bytes += t->nbytes;
    }
    eng_gguf_free(g);
    for (int i = 1; i < r->n_types; i++) /* insertion sort: a handful of types */
        for (int k = i; k > 0 && r->types[k].bytes > r->types[k - 1].bytes; k--) {
            __typeof__(r->types[0]) tmp = r->types[k];
            r->types[k] = r->types[k - 1];
            r->types[k - 1] = tmp;
        }
}

static const char *type_name(uint32_t type) {
    const eng_type_traits *t = eng_type_get(type);
    return t && t->name ? t->name : "unknown";
}

/* Ordinary vocabulary ids (no special tokens), the same every run. */
static void make_tokens(int32_t *t, int n, int32_t n_vocab) {
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int32_t span = n_vocab > 40200 ? 40000 : n_vocab - 200;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t[i] = 200 + (int32_t)((x >> 33) % (uint64_t)span);
    }
}

/* --- memory bandwidth ----------------------------------------------------- */

typedef uint64_t bench_vec __attribute__((vector_size(32)));

typedef struct bw_arg {
    const bench_vec *p;
    size_t n;
    uint64_t sink;
    pthread_barrier_t *start; /* every reader starts together */
    double t0, t1;            /* this thread's read, timed inside it */
} bw_arg;

static void *bw_read(void *vp) {
    bw_arg *a = vp;
    pthread_barrier_wait(a->start);
    a->t0 = util_now_s();
    bench_vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    for (size_t i = 0; i + 4 <= a->n; i += 4) {
        /* prefetch 4 KiB ahead as the engine's kernels do: the hardware
         * prefetchers stop at page boundaries */
        __builtin_prefetch(&a->p[i] + 4096 / sizeof(bench_vec), 0, 3);
        __builtin_prefetch(&a->p[i] + (4096 + 64) / sizeof(bench_vec), 0, 3);
        s0 ^= a->p[i];
        s1 ^= a->p[i + 1];
        s2 ^= a->p[i + 2];
        s3 ^= a->p[i + 3];
    }
    bench_vec s = s0 ^ s1 ^ s2 ^ s3;
    a->sink = s[0] ^ s[1] ^ s[2] ^ s[3];
    a->t1 = util_now_s();
    return NULL;
}

/* A buffer for streaming reads, allocated and touched once. */
typedef struct bw_buf {
    void *p;
    size_t bytes;
} bw_buf;

static int bw_alloc(bw_buf *b, size_t bytes, int threads) {
    bytes -= bytes % (128 * (size_t)threads);
    b->bytes = 0;
    if (bytes == 0 || posix_memalign(&b->p, 64, bytes)) return UTIL_ENOMEM;
    memset(b->p, 1, bytes);
    b->bytes = bytes;
    return 0;
}

/* Best of `passes` streaming reads of the buffer over `threads` threads, GB/s.
 * Each thread times its own read after a barrier (thread creation is not
 * timed); a pass takes from the first start to the last stop. */
static double measure_bandwidth(const bw_buf *b, int threads, int passes) {
    pthread_t th[256];
    bw_arg args[256];
    if (threads > 256) threads = 256;
    size_t per = b->bytes / sizeof(bench_vec) / (size_t)threads;
    double best = 0;
    for (int rep = 0; b->bytes && rep < passes; rep++) {
        pthread_barrier_t start;
        int started = 1;
        if (pthread_barrier_init(&start, NULL, (unsigned)threads)) return best;
        for (int i = 0; i < threads; i++) {
            args[i] = (bw_arg){(const bench_vec *)b->p + per * (size_t)i, per, 0, &start, 0, 0};
            if (i > 0 && pthread_create(&th[i], NULL, bw_read, &args[i])) break;
            started += i > 0;
        }
        if (started < threads) { /* a reader is missing: the barrier would never open */
            pthread_barrier_destroy(&start);
            return best;
        }
        bw_read(&args[0]);
        for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        double t0 = args[0].t0, t1 = args[0].t1;
        for (int i = 1; i < threads; i++) {
            t0 = args[i].t0 < t0 ? args[i].t0 : t0;
            t1 = args[i].t1 > t1 ? args[i].t1 : t1;
        }
        double gbs = t1 > t0 ? (double)per * sizeof(bench_vec) * threads / (t1 - t0) / 1e9 : 0;
        best = gbs > best ? gbs : best;
    }
    return best;
}

/* The largest CPU cache in bytes, from sysfs (cpu0's cache/index*), 0 when
 * unknown. */
static uint64_t llc_bytes(void) {
    uint64_t best = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], text[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(text, sizeof text, f)) {
            char *end;
            unsigned long long v = strtoull(text, &end, 10);
            if (*end == 'K')
                v <<= 10;
            else if (*end == 'M')
                v <<= 20;
            best = v > best ? v : best;
        }
        fclose(f);
    }
    return best;
}

/* DRAM: 4x the last-level cache (at least 256 MiB; 1 GiB when the cache size
 * is unknown; at most an eighth of the memory), so the read cannot be served
 * from a cache; working set: what one generation step reads, which a large
 * last-level cache may hold. On a GPU: the backend's streaming read of the
 * device memory instead. */
static void bandwidth_sample(bench_result *r, const eng_model *m, bw_buf *dram, bw_buf *ws, int i) {
    if (r->gpu) { /* the host's memory does not bound a GPU's decode */
        r->v_bw_dev[i] = eng_model_backend_bandwidth(m) / 1e9;
        return;
    }
    if (!ws->p) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        size_t big = (size_t)1 << 30;
        r->llc_bytes = llc_bytes();
        if (r->llc_bytes) big = 4 * r->llc_bytes > ((size_t)256 << 20) ? 4 * r->llc_bytes : (size_t)256 << 20;
        if (pages > 0 && psz > 0 && (size_t)pages * (size_t)psz / 8 < big)
            big = (size_t)pages * (size_t)psz / 8;
        bw_alloc(ws, (size_t)r->decode_bytes, r->threads);
        bw_alloc(dram, big, r->threads);
        r->dram_buf_bytes = dram->bytes;
    }
    r->v_bw_ws[i] = measure_bandwidth(ws, r->threads, 4);
    r->v_bw_dram[i] = measure_bandwidth(dram, r->threads, 2);
}

/* --- cachet ------------------------------------------------------------- */

/* One sample of each cachet figure, as llama-bench's tests (-d: after a
 * context of o->depth tokens, computed first and not timed). Prompt
 * processing: the prompt after the context. Generation: single-token steps
 * after the context with logits each step. TTFT: eng_generate's (prefill +
 * first greedy sample) from an empty sequence. toks: depth, prompt, then
 * generated tokens. */
static int cachet_rep(const bench_opts *o, eng_seq *s, const int32_t *toks, float *logits, bench_result *r,
                      int i, util_err *err) {
    eng_seq_truncate(s, 0);
    int rc = o->depth > 0 ? eng_seq_eval(s, toks, o->depth, NULL, err) : UTIL_OK;
    if (rc) return rc;
    const int32_t *prompt = toks + o->depth;
    double t0 = util_now_s();
    if ((rc = eng_seq_eval(s, prompt, o->n_prompt, NULL, err))) return rc;
    r->v_pp[i] = o->n_prompt / (util_now_s() - t0);
    eng_seq_truncate(s, o->depth); /* the context stays */
    t0 = util_now_s();
    for (int k = 0; k < o->n_gen; k++)
        if ((rc = eng_seq_eval(s, &prompt[o->n_prompt + k], 1, logits, err))) return rc;
    r->v_tg[i] = o->n_gen / (util_now_s() - t0);
    eng_seq_truncate(s, 0);
    eng_gen_params gp = {.max_tokens = 1, .sample = eng_sample_defaults()};
    gp.sample.temp = 0;
    eng_gen_stats st;
    if ((rc = eng_generate(s, prompt, o->n_prompt, &gp, NULL, NULL, &st, err))) return rc;
    r->v_ttft[i] = st.ttft_ms;
    return UTIL_OK;
}

/* Mean KV bytes one tg step reads after a depth-token context, over the
 * n_gen steps (contexts depth+1 .. depth+n_gen): every position on global
 * layers, at most the window on sliding-window layers (Gemma 3: 5 of 6
 * layers see 512 positions however long the context). */
static double decode_kv_read(const eng_model *m, int depth, int n_gen) {
    eng_model_shape sh = eng_model_get_shape(m);
    double per_layer = sh.n_layer > 0 ? (double)eng_model_kv_bytes_per_token(m) / sh.n_layer : 0;
    int n_swa = sh.n_swa > 0 ? sh.n_layer_swa : 0;
    double sum = 0;
    for (int t = 1; t <= n_gen; t++) {
        double c = (double)depth + t, cw = n_swa && c > sh.n_swa ? sh.n_swa : c;
        sum += per_layer * ((sh.n_layer - n_swa) * c + n_swa * cw);
    }
    return n_gen > 0 ? sum / n_gen : 0;
}

/* Activations of a forward call of `batch` tokens, the logits buffers, the CPU
 * backend's prepared activations, attention rows and attention partials:
 * what a generation needs besides weights, KV pages and the process itself
 * (measured before the model opens). Stated, then checked against peak RSS. */
static uint64_t scratch_estimate(const eng_model *m, int batch, int n_ctx) {
    eng_model_shape sh = eng_model_get_shape(m);
    uint64_t E = (uint64_t)sh.n_embd, Q = (uint64_t)sh.n_head * (uint64_t)sh.head_dim;
    uint64_t KV = (uint64_t)sh.n_kv_head * (uint64_t)sh.head_dim, F = (uint64_t)sh.n_ff;
    uint64_t act = (uint64_t)batch * (E + (E > Q ? E : Q) + 2 * Q + 2 * KV + 2 * F) * 4;
    uint64_t logits = 3 * (uint64_t)eng_model_n_vocab(m) * 4;
    uint64_t prepared = (uint64_t)batch * (F / 32) * 96 * 2;
    uint64_t scores = (uint64_t)eng_model_n_threads(m) * (uint64_t)(n_ctx + 32) * 4;
    /* attention's partials: per query token, head and 256-position piece, a
     * head_dim-wide value sum and (max, sum) in f32 (the CPU backend's plan) */
    uint64_t pieces = (uint64_t)n_ctx / 256 + 2;
    uint64_t partials = (uint64_t)batch * pieces * (uint64_t)sh.n_head * ((uint64_t)sh.head_dim + 2) * 4;
    return act + logits + prepared + scores + partials;
}

static void run_llama_rep(const bench_opts *o, bench_result *r, const char *exe);

/* The cachet reps interleaved with llama-bench runs (exe, or NULL), so both see
 * the same machine when other work comes and goes; then the figures that need
 * the model (bytes per token, KV) and the peak RSS. */
static int run_all(const bench_opts *o, bench_result *r, const char *exe, util_err *err) {
    eng_model *m = NULL;
    eng_model_params mp = o->e.mp;
    mp.no_cache = mp.no_disk_cache = 1; /* speed of computing, never of reusing */
    long rss0_pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        long size;
        if (fscanf(f, "%ld %ld", &size, &rss0_pages) != 2) rss0_pages = 0;
        fclose(f);
    }
    int rc = eng_model_open(&m, r->model_path, &mp, err);
    if (rc) return rc;
    bw_buf dram = {NULL, 0}, ws = {NULL, 0};
    int n_toks = o->depth + o->n_prompt + o->n_gen;
    int n_ctx = n_toks + 16, nv = eng_model_n_vocab(m);
    if (o->e.n_ctx > n_ctx) n_ctx = o->e.n_ctx;
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)n_toks);
    float *logits = malloc(sizeof(float) * (size_t)nv);
    eng_seq *s = NULL;
    if (!toks || !logits) rc = util_err_set(err, UTIL_ENOMEM, "bench: out of memory");
    if (!rc) rc = eng_seq_new(&s, m, n_ctx, err);
    if (!rc) {
        eng_seq_set_batch(s, o->batch);
        make_tokens(toks, n_toks, nv);
        /* warm-up: maps every weight page and sizes every buffer */
        rc = eng_seq_eval(s, toks, o->n_prompt < 64 ? o->n_prompt : 64, logits, err);
    }
    r->threads = eng_model_n_threads(m);
    r->gpu = eng_model_backend_bandwidth(m) > 0;
    if (r->gpu && exe) { /* there is no CUDA llama.cpp to compare with */
        exe = NULL;
        snprintf(r->llama_note, sizeof r->llama_note, "not run (GPU backend)");
    }
    r->weight_bytes = eng_model_weight_bytes(m);
    r->kv_per_token = eng_model_kv_bytes_per_token(m);
    r->decode_kv_bytes = decode_kv_read(m, o->depth, o->n_gen);
    r->decode_bytes = (double)r->weight_bytes + r->decode_kv_bytes;
    int tty = isatty(STDERR_FILENO);
    for (int i = 0; !rc && i < o->reps; i++) {
        /* a redrawn line on a terminal; elsewhere a plain line per run (no \r or escape in a file) */
        if (!o->json && tty)
            fprintf(stderr, "\rcachet bench: run %d/%d\033[K", i + 1, o->reps);
        else if (!o->json)
            fprintf(stderr, "cachet bench: run %d/%d\n", i + 1, o->reps);
        rc = cachet_rep(o, s, toks, logits, r, i, err);
        if (rc) break;
        if (i == 0) { /* the generation's peak, before the bandwidth test's buffer */
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            r->peak_rss = (uint64_t)ru.ru_maxrss * 1024;
        }
        bandwidth_sample(r, m, &dram, &ws, i); /* between the runs, like the rest */
        if (exe) run_llama_rep(o, r, exe);
    }
    free(dram.p);
    free(ws.p);
    if (!o->json && tty) fputs("\r\033[K", stderr);
    if (!rc) {
        snprintf(r->backend, sizeof r->backend, "%s", eng_model_backend(m));
        double g, w; /* window-aware: sliding layers keep their window */
        eng_model_shape sh = eng_model_get_shape(m);
        double per = eng_kv_bytes_per_token(&sh, 1.0);
        r->kv_bytes = per > 0 ? (uint64_t)eng_kv_bytes_ctx(&sh, (double)r->kv_per_token / per,
                                                           (uint64_t)n_ctx, &g, &w)
                              : 0;
        r->scratch_bytes = scratch_estimate(m, o->batch, n_ctx) +
                           (uint64_t)rss0_pages * (uint64_t)sysconf(_SC_PAGESIZE);
        r->pp = stat_of(r->v_pp, o->reps);
        r->bw_ws = stat_of(r->v_bw_ws, o->reps);
        r->bw_dram = stat_of(r->v_bw_dram, o->reps);
        if (r->gpu) {
            r->bw_dev = stat_of(r->v_bw_dev, o->reps);
            r->bw_ws.ok = r->bw_dram.ok = 0; /* not measured */
        }
        r->tg = stat_of(r->v_tg, o->reps);
        r->ttft = stat_of(r->v_ttft, o->reps);
        r->l_pp = stat_of(r->v_lpp, r->n_llama);
        r->l_tg = stat_of(r->v_ltg, r->n_llama);
    }
    eng_seq_free(s);
    free(toks);
    free(logits);
    eng_model_free(m);
    return rc;
}

/* --- llama.cpp ------------------------------------------------------------- */

/* Runs `llama-bench ... -o json` and returns its stdout (caller frees), or NULL
 * with r->llama_note saying why. */
static char *llama_bench_output(const bench_opts *o, bench_result *r, const char *exe) {
    char t[16], p[16], n[16], reps[16], d[16];
    snprintf(t, sizeof t, "%d", r->threads);
    snprintf(p, sizeof p, "%d", o->n_prompt);
    snprintf(n, sizeof n, "%d", o->n_gen);
    snprintf(reps, sizeof reps, "%d", 1);
    snprintf(d, sizeof d, "%d", o->depth);
    /* -d only when asked: older llama-bench builds do not know it */
    char *argv[] = {(char *)exe, "-m",   r->model_path,          "-t", t,   "-p", p, "-n", n, "-r", reps,
                    "-o",        "json", o->depth ? "-d" : NULL, d,    NULL};
    int fds[2];
    if (pipe(fds)) {
        snprintf(r->llama_note, sizeof r->llama_note, "pipe: %s", strerror(errno));
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc) {
        close(fds[0]);
        snprintf(r->llama_note, sizeof r->llama_note, "cannot run '%s': %s", exe, strerror(rc));
        return NULL;
    }
    util_buf out;
    util_buf_init(&out);
    char chunk[4096];
    ssize_t k;
    while ((k = read(fds[0], chunk, sizeof chunk)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0 && util_buf_append(&out, chunk, (size_t)k)) break;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(r->llama_note, sizeof r->llama_note, "'%s' failed (status %d)", exe, status);
        util_buf_release(&out);
        return NULL;
    }
    return util_buf_detach(&out, NULL);
}

/* The llama-bench to run, or 0 with r->llama_note saying why there is none. */
static int llama_exe(const bench_opts *o, bench_result *r, char *exe, size_t cap) {
    const char *dir = o->llama_dir ? o->llama_dir : getenv("LLAMA_CPP_DIR");
    if (o->no_llama || !dir || !*dir) {
        snprintf(r->llama_note, sizeof r->llama_note, "not available (set LLAMA_CPP_DIR)");
        return 0;
    }
    snprintf(exe, cap, "%s/bin/llama-bench", dir);
    if (access(exe, X_OK) != 0) snprintf(exe, cap, "%s/llama-bench", dir);
    if (access(exe, X_OK) != 0) {
        snprintf(r->llama_note, sizeof r->llama_note, "not available (no llama-bench in '%s')", dir);
        return 0;
    }
    return 1;
}

/* One llama-bench run (-r 1): a sample of its pp and tg figures (avg_ts of the
 * n_prompt-only and n_gen-only tests of its JSON output). */
static void run_llama_rep(const bench_opts *o, bench_result *r, const char *exe) {
    char *text = llama_bench_output(o, r, exe);
    if (!text) return;
    cJSON *arr = cJSON_Parse(text);
    free(text);
    double pp = 0, tg = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        cJSON *np = cJSON_GetObjectItem(it, "n_prompt"), *ng = cJSON_GetObjectItem(it, "n_gen");
        cJSON *avg = cJSON_GetObjectItem(it, "avg_ts");
        if (!cJSON_IsNumber(np) || !cJSON_IsNumber(ng) || !cJSON_IsNumber(avg)) continue;
        if (np->valueint > 0 && ng->valueint == 0) pp = avg->valuedouble;
        if (ng->valueint > 0 && np->valueint == 0) tg = avg->valuedouble;
    }
    cJSON_Delete(arr);
    if (pp > 0 && tg > 0) {
        r->v_lpp[r->n_llama] = pp;
        r->v_ltg[r->n_llama++] = tg;
    } else {
        snprintf(r->llama_note, sizeof r->llama_note, "llama-bench output not understood");
    }
}

/* --- report ----------------------------------------------------------------- */

static double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }

/* Ratios against llama.cpp are printed only on a quiet machine, or --force. */
static int show_ratios(const bench_opts *o, const bench_result *r) { return !r->loaded || o->force; }

/* "tg128" or "tg128 @ d4096" (llama-bench's names). */
static void test_name(char *out, size_t cap, const char *kind, int n, int depth) {
    if (depth > 0)
        snprintf(out, cap, "%s%d @ d%d", kind, n, depth);
    else
        snprintf(out, cap, "%s%d", kind, n);
}

/* The host's streaming reads and decode's share of their bounds (CPU backend).
 * A share over 100% means the bound was not the bound (the reads came from a
 * cache, or the read was disturbed): said, not hidden. */
static void print_host_bandwidth(const bench_opts *o, const bench_result *r) {
    const double MB = 1e6;
    double b_dram = r->bw_dram.median * 1e9 / r->decode_bytes, b_ws = r->bw_ws.median * 1e9 / r->decode_bytes;
    char llc[48] = "LLC size unknown";
    if (r->llc_bytes) snprintf(llc, sizeof llc, "LLC %.1f MB", r->llc_bytes / MB);
    char tg[32];
    test_name(tg, sizeof tg, "tg", o->n_gen, o->depth);
    printf("streaming read, %d threads (each timed inside its thread; medians between the runs):\n"
           "  %.1f GB/s from DRAM (a %.0f MB buffer, larger than the %s)\n"
           "  %.1f GB/s over decode's working set (%.0f MB; may sit in cache)\n",
           r->threads, r->bw_dram.median, r->dram_buf_bytes / MB, llc, r->bw_ws.median, r->decode_bytes / MB);
    printf("decode (%s): %.1f MB per token (weights %.1f + KV %.1f) -> bound %.0f tok/s (DRAM),\n"
           "%.0f tok/s (working set); it reaches %.0f%% and %.0f%% of them (%.1f GB/s)\n",
           tg, r->decode_bytes / MB, r->weight_bytes / MB, r->decode_kv_bytes / MB, b_dram, b_ws,
           100.0 * r->tg.median / b_dram, 100.0 * r->tg.median / b_ws, r->tg.median * r->decode_bytes / 1e9);
    if (r->tg.median > b_dram || r->tg.median > b_ws)
        printf("warning: decode exceeds 100%% of a streaming-read bound: that read was slower than decode's\n"
               "(disturbed by other work, or decode's bytes came from a cache); the share is not a result\n");
}

/* The GPU memory's streaming read (the backend's measurement) and decode's
 * share of that bound, from the same bytes per token as on the CPU. */
static void print_device_bandwidth(const bench_result *r) {
    const double MB = 1e6;
    double bound = r->bw_dev.median * 1e9 / r->decode_bytes;
    printf("HBM bandwidth (measured: the backend's streaming read, medians between the runs): %.1f GB/s\n",
           r->bw_dev.median);
    printf("decode: %.1f MB per token (weights %.1f + KV %.1f) -> bound %.0f tok/s (HBM);\n"
           "tg reaches %.0f%% of it (%.1f GB/s)\n",
           r->decode_bytes / MB, r->weight_bytes / MB, (r->decode_bytes - r->weight_bytes) / MB, bound,
           100.0 * r->tg.median / bound, r->tg.median * r->decode_bytes / 1e9);
}

static void print_table(const bench_opts *o, const bench_result *r) {
    const double MB = 1e6;
    int have = r->l_pp.ok && r->l_tg.ok, ratios = have && show_ratios(o, r);
    double l_ttft = have ? o->n_prompt / r->l_pp.median * 1e3 : 0;
    if (r->gpu)
        printf("cachet bench: %s (%.1f MB), backend %s, load average %.2f before\n\n", r->model_path,
               r->file_bytes / MB, r->backend, r->load1);
    else
        printf("cachet bench: %s (%.1f MB), %d threads, kernels %s, load average %.2f before (%d cores)\n\n",
               r->model_path, r->file_bytes / MB, r->threads, r->backend, r->load1, r->n_cores);
    if (r->n_types) {
        printf("tensor types:");
        for (int i = 0; i < r->n_types; i++)
            printf("%s %s x%d (%.1f MB)", i ? "," : "", type_name(r->types[i].type), r->types[i].tensors,
                   r->types[i].bytes / MB);
        printf("\n\n");
    }
    printf("%-22s %16s %16s %10s\n", "", "cachet", "llama.cpp", "ratio");
    char l[3][32];
    if (have) {
        snprintf(l[0], sizeof l[0], "%.1f +- %.1f", r->l_pp.median, r->l_pp.sd);
        snprintf(l[1], sizeof l[1], "%.1f +- %.1f", r->l_tg.median, r->l_tg.sd);
        snprintf(l[2], sizeof l[2], "%.1f*", l_ttft);
    } else {
        for (int i = 0; i < 3; i++) snprintf(l[i], sizeof l[i], "n/a");
    }
    char c[3][32], label[3][32];
    snprintf(c[0], sizeof c[0], "%.1f +- %.1f", r->pp.median, r->pp.sd);
    snprintf(c[1], sizeof c[1], "%.1f +- %.1f", r->tg.median, r->tg.sd);
    snprintf(c[2], sizeof c[2], "%.1f", r->ttft.median);
    char name[2][24];
    test_name(name[0], sizeof name[0], "pp", o->n_prompt, o->depth);
    test_name(name[1], sizeof name[1], "tg", o->n_gen, o->depth);
    snprintf(label[0], sizeof label[0], "%s (tok/s)", name[0]);
    snprintf(label[1], sizeof label[1], "%s (tok/s)", name[1]);
    snprintf(label[2], sizeof label[2], "TTFT %d (ms)", o->n_prompt);
    double rat[3] = {ratio(r->pp.median, r->l_pp.median), ratio(r->tg.median, r->l_tg.median),
                     ratio(l_ttft, r->ttft.median)};
    for (int i = 0; i < 3; i++) {
        char rs[16] = "";
        if (ratios) snprintf(rs, sizeof rs, "%.2fx", rat[i]);
        printf("%-22s %16s %16s %10s\n", label[i], c[i], l[i], rs);
    }
    printf("\nmedians of %d interleaved runs, +- standard deviation; ratio = speedup of cachet\n", o->reps);
    if (have) printf("* llama.cpp TTFT = prompt tokens / its pp rate\n");
    if (have && !ratios)
        printf(
            "ratios withheld: load average %.2f is above %.2f (%.1f per core x %d cores); --force prints them\n",
            r->load1, BENCH_LOAD_PER_CORE * r->n_cores, BENCH_LOAD_PER_CORE, r->n_cores);
    if (!have) printf("\nllama.cpp: %s\n", r->llama_note);
    if (r->gpu)
        print_device_bandwidth(r);
    else
        print_host_bandwidth(o, r);
    double lim = (double)(r->file_bytes + r->kv_bytes + r->scratch_bytes);
    printf("peak RSS: %.1f MB; model file %.1f + KV %.1f + scratch %.1f = %.1f MB (%s 10%%)\n",
           r->peak_rss / MB, r->file_bytes / MB, r->kv_bytes / MB, r->scratch_bytes / MB, lim / MB,
           r->peak_rss <= 1.1 * lim ? "within" : "OVER");
}

static void add_stat(cJSON *o, const char *name, bench_stat s) {
    if (!s.ok) {
        cJSON_AddNullToObject(o, name);
        return;
    }
    cJSON *v = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(v, "median", s.median);
    cJSON_AddNumberToObject(v, "mean", s.mean);
    cJSON_AddNumberToObject(v, "stddev", s.sd);
}

static void print_json(const bench_opts *o, const bench_result *r) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", r->model_path);
    cJSON_AddNumberToObject(j, "model_file_bytes", (double)r->file_bytes);
    cJSON *ty = cJSON_AddArrayToObject(j, "tensor_types");
    for (int i = 0; ty && i < r->n_types; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "type", type_name(r->types[i].type));
        cJSON_AddNumberToObject(e, "tensors", r->types[i].tensors);
        cJSON_AddNumberToObject(e, "bytes", (double)r->types[i].bytes);
        cJSON_AddItemToArray(ty, e);
    }
    cJSON_AddNumberToObject(j, "threads", r->threads);
    cJSON_AddStringToObject(j, "backend", r->backend);
    cJSON_AddStringToObject(j, "device", o->e.mp.device); /* as asked: auto, cpu, cuda, cuda:N */
    cJSON_AddNumberToObject(j, "load_average", r->load1);
    cJSON_AddNumberToObject(j, "cores", r->n_cores);
    cJSON_AddNumberToObject(j, "load_threshold", BENCH_LOAD_PER_CORE * r->n_cores);
    cJSON_AddBoolToObject(j, "loaded", r->loaded);
    cJSON_AddNumberToObject(j, "prompt_tokens", o->n_prompt);
    cJSON_AddNumberToObject(j, "gen_tokens", o->n_gen);
    cJSON_AddNumberToObject(j, "depth", o->depth);
    char name[2][24];
    test_name(name[0], sizeof name[0], "pp", o->n_prompt, o->depth);
    test_name(name[1], sizeof name[1], "tg", o->n_gen, o->depth);
    cJSON_AddStringToObject(j, "pp_test", name[0]);
    cJSON_AddStringToObject(j, "tg_test", name[1]);
    cJSON_AddNumberToObject(j, "reps", o->reps);
    cJSON_AddNumberToObject(j, "batch", o->batch);
    cJSON *c = cJSON_AddObjectToObject(j, "cachet");
    add_stat(c, "pp_tps", r->pp);
    add_stat(c, "tg_tps", r->tg);
    add_stat(c, "ttft_ms", r->ttft);
    cJSON *l = cJSON_AddObjectToObject(j, "llama_cpp");
    add_stat(l, "pp_tps", r->l_pp);
    add_stat(l, "tg_tps", r->l_tg);
    if (r->llama_note[0]) cJSON_AddStringToObject(l, "note", r->llama_note);
    /* withheld on a loaded machine (null, ratios_withheld true) unless --force */
    int withheld = r->l_pp.ok && r->l_tg.ok && !show_ratios(o, r);
    cJSON_AddBoolToObject(j, "ratios_withheld", withheld);
    if (r->l_pp.ok && r->l_tg.ok && !withheld) {
        cJSON *q = cJSON_AddObjectToObject(j, "ratio");
        cJSON_AddNumberToObject(q, "pp", ratio(r->pp.median, r->l_pp.median));
        cJSON_AddNumberToObject(q, "tg", ratio(r->tg.median, r->l_tg.median));
        cJSON_AddNumberToObject(q, "ttft", ratio(o->n_prompt / r->l_pp.median * 1e3, r->ttft.median));
    }
    /* "host": streaming reads of this machine's memory; "device": the GPU's,
     * measured by its backend. The other source's figures are null. */
    cJSON_AddStringToObject(j, "bandwidth_source", r->gpu ? "device" : "host");
    char label[64];
    snprintf(label, sizeof label, "streaming read, %d threads", r->threads);
    cJSON_AddStringToObject(j, "bandwidth_method", r->gpu ? "backend streaming read" : label);
    cJSON_AddNumberToObject(j, "llc_bytes", (double)r->llc_bytes);
    cJSON_AddNumberToObject(j, "dram_buffer_bytes", (double)r->dram_buf_bytes);
    add_stat(j, "bandwidth_dram_gbs", r->bw_dram);
    add_stat(j, "bandwidth_working_set_gbs", r->bw_ws);
    add_stat(j, "bandwidth_device_gbs", r->bw_dev);
    cJSON_AddNumberToObject(j, "decode_bytes_per_token", r->decode_bytes);
    cJSON_AddNumberToObject(j, "decode_weight_bytes_per_token", (double)r->weight_bytes);
    cJSON_AddNumberToObject(j, "decode_kv_bytes_per_token", r->decode_kv_bytes);
    int over = 0;
    double gbs = r->tg.median * r->decode_bytes / 1e9;
    const char *share[] = {"decode_bandwidth_share_dram", "decode_bandwidth_share_working_set",
                           "decode_bandwidth_share_device"};
    bench_stat bws[] = {r->bw_dram, r->bw_ws, r->bw_dev};
    for (int i = 0; i < 3; i++) {
        if (bws[i].ok && bws[i].median > 0) {
            cJSON_AddNumberToObject(j, share[i], gbs / bws[i].median);
            over |= gbs > bws[i].median;
        } else
            cJSON_AddNullToObject(j, share[i]);
    }
    cJSON *warn = cJSON_AddArrayToObject(j, "warnings");
    if (over) cJSON_AddItemToArray(warn, cJSON_CreateString("decode exceeds 100% of a streaming-read bound"));
    if (r->loaded) cJSON_AddItemToArray(warn, cJSON_CreateString("load average above the threshold"));
    cJSON *m = cJSON_AddObjectToObject(j, "rss");
    cJSON_AddNumberToObject(m, "peak_bytes", (double)r->peak_rss);
    cJSON_AddNumberToObject(m, "model_file_bytes", (double)r->file_bytes);
    cJSON_AddNumberToObject(m, "kv_bytes", (double)r->kv_bytes);
    cJSON_AddNumberToObject(m, "scratch_bytes", (double)r->scratch_bytes);
    double lim = (double)(r->file_bytes + r->kv_bytes + r->scratch_bytes);
    cJSON_AddBoolToObject(m, "within_10_percent", r->peak_rss <= 1.1 * lim);
    char *s = cJSON_Print(j);
    if (s) puts(s);
    free(s);
    cJSON_Delete(j);
}

/* --- entry -------------------------------------------------------------------- */

static int parse_bench(bench_opts *o, int argc, char **argv) {
    enum { O_PROMPT = 1, O_GEN, O_REPS, O_BATCH, O_LLAMA, O_NOLLAMA, O_JSON, O_HELP, O_DEPTH, O_FORCE };
    static const struct option own[] = {{"prompt-tokens", required_argument, 0, O_PROMPT},
                                        {"gen-tokens", required_argument, 0, O_GEN},
                                        {"reps", required_argument, 0, O_REPS},
                                        {"depth", required_argument, 0, O_DEPTH},
                                        {"force", no_argument, 0, O_FORCE},
                                        {"batch", required_argument, 0, O_BATCH},
                                        {"llama-cpp", required_argument, 0, O_LLAMA},
                                        {"no-llama", no_argument, 0, O_NOLLAMA},
                                        {"json", no_argument, 0, O_JSON},
                                        {"help", no_argument, 0, O_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        switch (c) {
        case O_PROMPT:
            if (cli_parse_int("--prompt-tokens", optarg, 1, 8192, &v)) return CLI_EXIT_USAGE;
            o->n_prompt = (int)v;
            break;
        case O_GEN:
            if (cli_parse_int("--gen-tokens", optarg, 1, 8192, &v)) return CLI_EXIT_USAGE;
            o->n_gen = (int)v;
            break;
        case O_DEPTH:
            if (cli_parse_int("--depth", optarg, 0, 131072, &v)) return CLI_EXIT_USAGE;
            o->depth = (int)v;
            break;
        case O_FORCE: o->force = 1; break;
        case O_REPS:
            if (cli_parse_int("--reps", optarg, 1, 64, &v)) return CLI_EXIT_USAGE;
            o->reps = (int)v;
            break;
        case O_BATCH:
            if (cli_parse_int("--batch", optarg, 1, 4096, &v)) return CLI_EXIT_USAGE;
            o->batch = (int)v;
            break;
        case O_LLAMA: o->llama_dir = optarg; break;
        case O_NOLLAMA: o->no_llama = 1; break;
        case O_JSON: o->json = 1; break;
        case O_HELP: usage(stdout); return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet bench: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet bench: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return cli_engine_finish(&o->e, 1);
}

int cli_cmd_bench(int argc, char **argv) {
    bench_opts o = {.e.mp.n_threads = 2, .n_prompt = 512, .n_gen = 128, .reps = 3, .batch = 64};
    int rc = parse_bench(&o, argc, argv);
    if (rc != CLI_GO_ON) return rc;
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.model_path, sizeof r.model_path, "%s", o.e.path);
    struct stat st;
    if (stat(r.model_path, &st) == 0) r.file_bytes = (uint64_t)st.st_size;
    tensor_types(&r);
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf", &r.load1) != 1) r.load1 = 0;
        fclose(lf);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    r.n_cores = cores > 0 ? (int)cores : 1;
    r.loaded = r.load1 > BENCH_LOAD_PER_CORE * r.n_cores;
    if (r.loaded)
        fprintf(
            stderr,
            "cachet bench: warning: load average %.2f is above %.2f (%.1f per core x %d cores): other work\n"
            "competes for the cores, so these figures are not a result%s\n",
            r.load1, BENCH_LOAD_PER_CORE * r.n_cores, BENCH_LOAD_PER_CORE, r.n_cores,
            o.force ? "" : "; ratios against llama.cpp are withheld (--force prints them)");
    util_err err;
    char exe[4096];
    int have_llama = llama_exe(&o, &r, exe, sizeof exe);
    if (run_all(&o, &r, have_llama ? exe : NULL, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    if (o.json)
        print_json(&o, &r);
    else
        print_table(&o, &r);
    return CLI_EXIT_OK;
}
