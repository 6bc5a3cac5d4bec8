/* tests/tools/gpu_main.c: cachet-gpu, the GPU machine's tool (scripts/gpu-check.sh).
 * It links the engine alone (no agent libraries), so it builds on a GPU machine
 * that has nvcc and a C compiler but none of the agent's Debian packages:
 *   cachet-gpu test    runs the CUDA suite (tests/test_cuda.c) like cachet-tests
 *   cachet-gpu bench   prefill and decode tok/s, warm vs cold TTFT for a long
 *                      prefix, and decode's share of the measured memory
 *                      bandwidth bound, on one model and device; one JSON object.
 * Token ids are drawn at random (synthetic models have no meaningful text). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../engine/engine.h"
#include "../check.h"
#include "../helpers.h"

/* the suite list the Makefile generates; this tool runs the cuda suite alone */
#define TEST_SUITE(name, ...) \
    void test_##name(void);   \
    __attribute__((unused)) static const char *const cases_##name[] = {__VA_ARGS__ NULL};
#include "tests_list.h"
#undef TEST_SUITE

const char *check_root(void) {
    const char *r = getenv("CACHET_ROOT");
    return r && *r ? r : ".";
}

const char *check_model_path(void) { return NULL; }

static const char usage[] =
    "usage: cachet-gpu test [-v] [cuda/CASE]... | --list\n"
    "       cachet-gpu bench --model PATH [--device D] [--prompt-tokens N] [--gen-tokens N]\n"
    "                        [--prefix N] [--suffix N] [--reps N]\n"
    "\n"
    "test   the CUDA suite (GPU vs CPU per op and quant type, synthetic models end to end),\n"
    "       or the cases named; the last line is \"N passed, N failed, N skipped\"\n"
    "bench  prefill tok/s (--prompt-tokens, default 512), decode tok/s (--gen-tokens, default\n"
    "       128, one token at a time after the prompt), TTFT cold vs warm for a --prefix-token\n"
    "       prefix (default 4000) plus a --suffix (default 32), decode bytes per token over the\n"
    "       backend's measured bandwidth; medians of --reps runs (default 3); prints JSON.\n";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int32_t rand_tok(uint64_t *rng, int32_t n_vocab) {
    return (int32_t)(th_rng_next(rng) % (uint64_t)n_vocab);
}

typedef struct bench_opts {
    const char *model, *device;
    int n_prompt, n_gen, prefix, suffix, reps;
} bench_opts;

static int fail(const char *what, const util_err *err) {
    fprintf(stderr, "cachet-gpu: %s: %s\n", what, err->msg);
    return 1;
}

/* Prefill of n_prompt tokens, then n_gen decode steps (each synchronised by
 * reading its logits back); returns 0 and the two rates. */
static int run_speed(eng_model *m, const bench_opts *o, uint64_t *rng, float *logits, double *pp,
                     double *tg) {
    util_err err;
    eng_seq *s = NULL;
    int n = o->n_prompt + o->n_gen + 1;
    int32_t *toks = malloc((size_t)n * sizeof *toks);
    if (!toks || eng_seq_new(&s, m, n, &err)) {
        free(toks);
        return fail("sequence", &err);
    }
    for (int i = 0; i < n; i++) toks[i] = rand_tok(rng, eng_model_n_vocab(m));
    double t0 = now_ms();
    if (eng_seq_eval(s, toks, o->n_prompt, logits, &err)) return fail("prefill", &err);
    double t1 = now_ms();
    for (int i = 0; i < o->n_gen; i++)
        if (eng_seq_eval(s, &toks[o->n_prompt + i], 1, logits, &err)) return fail("decode", &err);
    double t2 = now_ms();
    *pp = o->n_prompt / ((t1 - t0) / 1e3);
    *tg = o->n_gen / ((t2 - t1) / 1e3);
    eng_seq_free(s);
    free(toks);
    return 0;
}

/* TTFT (prompt in -> logits out) for prefix + suffix on a cache that has never
 * seen the prefix, then for the same prefix with another suffix. */
static int run_ttft(eng_model *m, const bench_opts *o, uint64_t *rng, float *logits, double *cold,
                    double *warm, int *cached) {
    util_err err;
    int n = o->prefix + o->suffix;
    int32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        fprintf(stderr, "cachet-gpu: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        a[i] = b[i] = rand_tok(rng, eng_model_n_vocab(m)); /* a fresh prefix each rep */
    for (int i = o->prefix; i < n; i++) b[i] = rand_tok(rng, eng_model_n_vocab(m));
    eng_seq *s1 = NULL, *s2 = NULL;
    int mem = 0, disk = 0, rc = 1;
    if (eng_seq_new(&s1, m, n + 1, &err) || eng_seq_new(&s2, m, n + 1, &err)) {
        fail("sequence", &err);
        goto done;
    }
    double t0 = now_ms();
    if (eng_seq_set_tokens(s1, a, n, logits, NULL, NULL, &err)) {
        fail("cold prompt", &err);
        goto done;
    }
    double t1 = now_ms();
    if (eng_seq_set_tokens(s2, b, n, logits, &mem, &disk, &err)) {
        fail("warm prompt", &err);
        goto done;
    }
    double t2 = now_ms();
    *cold = t1 - t0;
    *warm = t2 - t1;
    *cached = mem + disk;
    rc = 0;
done:
    eng_seq_free(s1);
    eng_seq_free(s2);
    free(a);
    free(b);
    return rc;
}

static int cmd_bench(int argc, char **argv) {
    bench_opts o = {.device = "cuda", .n_prompt = 512, .n_gen = 128, .prefix = 4000, .suffix = 32, .reps = 3};
    enum { O_MODEL = 1, O_DEVICE, O_PROMPT, O_GEN, O_PREFIX, O_SUFFIX, O_REPS, O_HELP };
    static const struct option opts[] = {{"model", required_argument, 0, O_MODEL},
                                         {"device", required_argument, 0, O_DEVICE},
                                         {"prompt-tokens", required_argument, 0, O_PROMPT},
                                         {"gen-tokens", required_argument, 0, O_GEN},
                                         {"prefix", required_argument, 0, O_PREFIX},
                                         {"suffix", required_argument, 0, O_SUFFIX},
                                         {"reps", required_argument, 0, O_REPS},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        long v = 0;
        char *end = NULL;
        if (c != O_MODEL && c != O_DEVICE && c != O_HELP && c != '?') {
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 1000000) {
                fprintf(stderr, "cachet-gpu bench: option '%s' needs a positive number\n%s", argv[optind - 1],
                        usage);
                return 2;
            }
        }
        switch (c) {
        case O_MODEL: o.model = optarg; break;
        case O_DEVICE: o.device = optarg; break;
        case O_PROMPT: o.n_prompt = (int)v; break;
        case O_GEN: o.n_gen = (int)v; break;
        case O_PREFIX: o.prefix = (int)v; break;
        case O_SUFFIX: o.suffix = (int)v; break;
        case O_REPS: o.reps = v > 64 ? 64 : (int)v; break;
        case O_HELP: fputs(usage, stdout); return 0;
        default:
            fprintf(stderr, "cachet-gpu bench: unknown option '%s'\n%s", argv[optind - 1], usage);
            return 2;
        }
    }
    if (!o.model || optind < argc) {
        fprintf(stderr, "cachet-gpu bench: give --model PATH and no other arguments\n%s", usage);
        return 2;
    }
    util_err err;
    eng_model *speed = NULL, *cache = NULL;
    eng_model_params ps = {.device = o.device, .no_cache = 1, .no_disk_cache = 1};
    eng_model_params pc = {.device = o.device, .no_disk_cache = 1, .kv_budget = 8ull << 30};
    if (eng_model_open(&speed, o.model, &ps, &err)) return fail("open", &err);
    if (eng_model_n_ctx_train(speed) < o.prefix + o.suffix + 1 ||
        eng_model_n_ctx_train(speed) < o.n_prompt + o.n_gen + 1) {
        fprintf(stderr, "cachet-gpu bench: the model's context (%d) is shorter than the benchmark's\n",
                eng_model_n_ctx_train(speed));
        eng_model_free(speed);
        return 2;
    }
    float *logits = malloc((size_t)eng_model_n_vocab(speed) * sizeof(float));
    double pp[64], tg[64], cold[64], warm[64], bw = eng_model_backend_bandwidth(speed);
    int cached = 0, rc = 1;
    uint64_t rng = 88172645463325252ull; /* the prompts' token ids */
    bench_opts warmup = o;
    warmup.n_prompt = 64;
    warmup.n_gen = 4;
    double d0, d1;
    if (!logits || run_speed(speed, &warmup, &rng, logits, &d0, &d1)) goto out; /* loads kernels, cuBLAS */
    for (int r = 0; r < o.reps; r++)
        if (run_speed(speed, &o, &rng, logits, &pp[r], &tg[r])) goto out;
    if (eng_model_open(&cache, o.model, &pc, &err)) {
        fail("open", &err);
        goto out;
    }
    { /* warm-up of this model's backend (cuBLAS, kernels, the page pool) off the clock */
        bench_opts w = o;
        double c0, w0;
        int k0;
        w.prefix = 64;
        w.suffix = 8;
        if (run_ttft(cache, &w, &rng, logits, &c0, &w0, &k0)) goto out;
    }
    for (int r = 0; r < o.reps; r++)
        if (run_ttft(cache, &o, &rng, logits, &cold[r], &warm[r], &cached)) goto out;
    {
        eng_model_shape sh = eng_model_get_shape(speed);
        double wbytes = (double)eng_model_weight_bytes(speed);
        double kv_read = (double)eng_model_kv_bytes_per_token(speed) * (o.n_prompt + o.n_gen / 2.0);
        double per_tok = wbytes + kv_read;
        double tgm = median(tg, o.reps), ppm = median(pp, o.reps);
        double cm = median(cold, o.reps), wm = median(warm, o.reps);
        double share = bw > 0 ? per_tok * tgm / bw : 0;
        printf("{\"model\": \"%s\", \"backend\": \"%s\", \"n_layer\": %d, \"n_embd\": %d, \"n_head\": %d, "
               "\"n_kv_head\": %d, \"n_ff\": %d, \"n_vocab\": %d, \"weight_bytes\": %.0f, "
               "\"prefill_tokens\": %d, \"prefill_tps\": %.1f, \"decode_tokens\": %d, \"decode_tps\": %.1f, "
               "\"decode_bytes_per_token\": %.0f, \"bandwidth_gbs\": %.1f, \"decode_bandwidth_share\": %.3f, "
               "\"ttft_prefix\": %d, \"ttft_suffix\": %d, \"ttft_cold_ms\": %.2f, \"ttft_warm_ms\": %.2f, "
               "\"warm_over_cold\": %.4f, \"warm_cached_tokens\": %d, \"reps\": %d}\n",
               o.model, eng_model_backend(speed), sh.n_layer, sh.n_embd, sh.n_head, sh.n_kv_head, sh.n_ff,
               eng_model_n_vocab(speed), wbytes, o.n_prompt, ppm, o.n_gen, tgm, per_tok, bw / 1e9, share,
               o.prefix, o.suffix, cm, wm, cm > 0 ? wm / cm : 0, cached, o.reps);
        rc = 0;
    }
out:
    free(logits);
    eng_model_free(cache);
    eng_model_free(speed);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "test") == 0) {
        /* the suite's command-line checks use the cachet beside this binary */
        char self[4096];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        if (k > 0 && !getenv("CACHET_BIN")) {
            self[k] = '\0';
            char *slash = strrchr(self, '/');
            if (slash) *slash = '\0';
            setenv("CACHET_BIN", self, 1);
        }
        char dir[] = "/tmp/cachet-gpu-XXXXXX";
        if (mkdtemp(dir)) setenv("XDG_CACHE_HOME", dir, 1); /* keep any disk tier out of the user's cache */
        static const check_suite cuda = {"cuda", test_cuda, cases_cuda};
        argv[1] = argv[0]; /* the runner's messages name this program */
        return check_main(&cuda, 1, argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    fputs(usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
    return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
