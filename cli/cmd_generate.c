/* cli/cmd_generate.c: `cachet generate` and `cachet tokenize`: raw access to
 * the embedded engine. generate streams text to stdout (or prints one JSON
 * object with --json); tokenize prints ids. No agent logic here. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../util/buf.h"
#include "../util/parse.h"
#include "cli.h"

static const char generate_usage[] =
    "usage: cachet generate [--model PATH] (--prompt TEXT | --prompt-file PATH) [--chat]\n"
    "                       [--system TEXT | --system-file PATH] [--max-tokens N] [--temp T] [--top-k K] [--top-p P]\n"
    "                       [--min-p P] [--repeat-penalty R] [--seed S] [--threads N]\n"
    "                       [--ctx-size N] [--kv-budget SIZE] [--no-cache] [--no-disk-cache]\n"
    "                       [--kv-dir DIR] [--kv-disk-budget SIZE] [--exact] [--device D] [--json]\n"
    "\n"
    "Generates text with the embedded engine and streams it to stdout.\n"
    "\n"
    "  --model PATH        GGUF model (default: $CACHET_MODEL, else models/SmolLM2-135M-Instruct.Q4_1.gguf)\n"
    "  --prompt TEXT       the prompt\n"
    "  --prompt-file PATH  read the prompt from a file ('-' for stdin)\n"
    "  --chat              wrap the prompt as a user turn in the model's chat template\n"
    "  --system TEXT       with --chat: a system message (else the template's default)\n"
    "  --system-file PATH  with --chat: the system message from a file (e.g. prompts/assistant.md)\n"
    "  --max-tokens N      stop after N generated tokens (default 256)\n"
    "  --temp T            temperature; 0 = greedy (default 0.8)\n"
    "  --top-k K           keep the K most likely tokens; 0 = off (default 40)\n"
    "  --top-p P           nucleus sampling; 1 = off (default 0.95)\n"
    "  --min-p P           drop tokens below P x the top probability; 0 = off (default 0.05)\n"
    "  --repeat-penalty R  penalise the last 64 tokens; 1 = off (default 1)\n"
    "  --seed S            random seed (default: time-based)\n"
    "  --threads N         worker threads (default: all cores)\n"
    "  --ctx-size N        context length (default: the model's)\n"
    "  --kv-budget SIZE    KV-cache memory (pages of 16 tokens), e.g. 512MiB (default 1GiB)\n"
    "  --no-cache          do not reuse cached prefixes (for comparisons)\n"
    "  --no-disk-cache     keep the prefix cache in memory only\n"
    "  --kv-dir DIR        disk tier directory (default $XDG_CACHE_HOME/cachet/kv)\n"
    "  --kv-disk-budget SIZE  disk tier size limit (default 2GiB)\n"
    "  --exact             f32 activations (no 8-bit quantization): slower, the reference numerics\n"
    "  --device D          compute on D: auto (a GPU when this build has CUDA and one is present),\n"
    "                      cpu, cuda, cuda:N (default auto; $CACHET_DEVICE sets it when absent)\n"
    "  --json              print one JSON object instead of streaming text\n";

static const char tokenize_usage[] =
    "usage: cachet tokenize [--model PATH] [--json] [--no-special] TEXT\n"
    "\n"
    "Prints the token ids of TEXT, one line, space-separated.\n"
    "\n"
    "  --model PATH   GGUF model (default as for generate)\n"
    "  --json         print {\"tokens\": [...]}\n"
    "  --no-special   treat special-token text (<|im_start|>) as plain text\n";

typedef struct gen_opts {
    const char *model, *prompt, *prompt_file, *system, *system_file;
    int chat, json, threads, ctx;
    eng_model_params mp;
    int max_tokens;
    eng_sample_params sp;
} gen_opts;

enum { OPT_MODEL = 256, OPT_PROMPT, OPT_PROMPT_FILE, OPT_CHAT, OPT_SYSTEM, OPT_MAX, OPT_TEMP,
       OPT_TOPK, OPT_TOPP, OPT_MINP, OPT_REP, OPT_SEED, OPT_THREADS, OPT_CTX, OPT_JSON, OPT_HELP,
       OPT_NOSPECIAL, OPT_KV_BUDGET, OPT_NO_CACHE, OPT_NO_DISK, OPT_KV_DIR, OPT_KV_DISK_BUDGET,
       OPT_DEBUG, OPT_SYSTEM_FILE, OPT_EXACT, OPT_DEVICE };

/* Parses the prefix-cache and device options shared by every command that
 * runs the engine; returns 1 if c was one of them, -1 on a bad value, 0
 * otherwise. */
int agent_parse_cache_opt(eng_model_params *mp, int c, const char *arg) {
    util_err err;
    switch (c) {
    case OPT_KV_BUDGET:
    case OPT_KV_DISK_BUDGET: {
        uint64_t v;
        if (util_parse_size(arg, &v, NULL, &err) || v == 0) {
            fprintf(stderr, "cachet: option '%s': %s\n", c == OPT_KV_BUDGET ? "--kv-budget" : "--kv-disk-budget",
                    v == 0 ? "size must be positive" : err.msg);
            return -1;
        }
        if (c == OPT_KV_BUDGET) mp->kv_budget = v;
        else mp->kv_disk_budget = v;
        return 1;
    }
    case OPT_NO_CACHE: mp->no_cache = 1; return 1;
    case OPT_NO_DISK: mp->no_disk_cache = 1; return 1;
    case OPT_KV_DIR: mp->kv_dir = arg; return 1;
    case OPT_DEBUG: mp->debug = 1; return 1;
    case OPT_EXACT: mp->exact = 1; return 1;
    case OPT_DEVICE: return agent_parse_device(&mp->device, arg) ? -1 : 1;
    default: return 0;
    }
}

static int parse_generate(gen_opts *o, int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, OPT_MODEL},       {"prompt", required_argument, 0, OPT_PROMPT},
        {"prompt-file", required_argument, 0, OPT_PROMPT_FILE}, {"chat", no_argument, 0, OPT_CHAT},
        {"system", required_argument, 0, OPT_SYSTEM},     {"system-file", required_argument, 0, OPT_SYSTEM_FILE},     {"max-tokens", required_argument, 0, OPT_MAX},
        {"temp", required_argument, 0, OPT_TEMP},         {"top-k", required_argument, 0, OPT_TOPK},
        {"top-p", required_argument, 0, OPT_TOPP},        {"min-p", required_argument, 0, OPT_MINP},
        {"repeat-penalty", required_argument, 0, OPT_REP}, {"seed", required_argument, 0, OPT_SEED},
        {"threads", required_argument, 0, OPT_THREADS},   {"ctx-size", required_argument, 0, OPT_CTX},
        {"json", no_argument, 0, OPT_JSON},               {"help", no_argument, 0, OPT_HELP},
        {"kv-budget", required_argument, 0, OPT_KV_BUDGET}, {"no-cache", no_argument, 0, OPT_NO_CACHE},
        {"no-disk-cache", no_argument, 0, OPT_NO_DISK},   {"kv-dir", required_argument, 0, OPT_KV_DIR},
        {"kv-disk-budget", required_argument, 0, OPT_KV_DISK_BUDGET}, {"debug", no_argument, 0, OPT_DEBUG},
        {"exact", no_argument, 0, OPT_EXACT},             {"device", required_argument, 0, OPT_DEVICE},
        {0, 0, 0, 0}};
    int c;
    long l;
    double d;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = agent_parse_cache_opt(&o->mp, c, optarg);
        if (k < 0) return 2;
        if (k > 0) continue;
        switch (c) {
        case OPT_MODEL: o->model = optarg; break;
        case OPT_PROMPT: o->prompt = optarg; break;
        case OPT_PROMPT_FILE: o->prompt_file = optarg; break;
        case OPT_CHAT: o->chat = 1; break;
        case OPT_SYSTEM: o->system = optarg; break;
        case OPT_SYSTEM_FILE: o->system_file = optarg; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_HELP: fputs(generate_usage, stdout); return 0;
        case OPT_MAX: if (agent_parse_int("--max-tokens", optarg, 1, INT_MAX, &l)) return 2; o->max_tokens = (int)l; break;
        case OPT_THREADS: if (agent_parse_int("--threads", optarg, 1, 256, &l)) return 2; o->threads = (int)l; break;
        case OPT_CTX: if (agent_parse_int("--ctx-size", optarg, 1, 1 << 24, &l)) return 2; o->ctx = (int)l; break;
        case OPT_TOPK: if (agent_parse_int("--top-k", optarg, 0, INT_MAX, &l)) return 2; o->sp.top_k = (int)l; break;
        case OPT_SEED: if (agent_parse_int("--seed", optarg, 0, LONG_MAX, &l)) return 2; o->sp.seed = (uint64_t)l; break;
        case OPT_TEMP: if (agent_parse_float("--temp", optarg, 0, 100, &d)) return 2; o->sp.temp = (float)d; break;
        case OPT_TOPP: if (agent_parse_float("--top-p", optarg, 0, 1, &d)) return 2; o->sp.top_p = (float)d; break;
        case OPT_MINP: if (agent_parse_float("--min-p", optarg, 0, 1, &d)) return 2; o->sp.min_p = (float)d; break;
        case OPT_REP: if (agent_parse_float("--repeat-penalty", optarg, 0.01, 100, &d)) return 2; o->sp.repeat_penalty = (float)d; break;
        default:
            fprintf(stderr, "cachet generate: unknown or incomplete option '%s'\n%s", argv[optind - 1],
                    generate_usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet generate: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!o->mp.device && agent_parse_device(&o->mp.device, NULL)) return 2;
    if (o->system && o->system_file) {
        fprintf(stderr, "cachet generate: give at most one of --system and --system-file\n");
        return 2;
    }
    if (!o->prompt == !o->prompt_file) {
        fprintf(stderr, "cachet generate: give exactly one of --prompt or --prompt-file\n%s", generate_usage);
        return 2;
    }
    return -1;
}

/* --- streaming output and progress ------------------------------------- */

typedef struct stream_ctx {
    int json;
    util_buf text;
} stream_ctx;

static int on_token(void *user, int32_t id, const char *text, size_t len) {
    stream_ctx *sc = user;
    if (sc->json) return util_buf_append(&sc->text, text, len) ? 1 : 0;
    if (len) {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
    }
    return 0;
}

typedef struct progress_ctx {
    struct timespec t0;
    int shown;
} progress_ctx;

static void on_progress(void *user, int done, int total) {
    progress_ctx *p = user;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double el = (double)(now.tv_sec - p->t0.tv_sec) + (double)(now.tv_nsec - p->t0.tv_nsec) / 1e9;
    if (el < 1.0 && !p->shown) return;
    p->shown = 1;
    fprintf(stderr, "\rprefill %d/%d tokens", done, total);
    if (done == total) fputs("\r\033[K", stderr);
    fflush(stderr);
}

static int load_prompt(const gen_opts *o, char **out, util_err *err) {
    if (o->prompt) {
        *out = strdup(o->prompt);
        return *out ? UTIL_OK : util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    if (strcmp(o->prompt_file, "-") == 0) {
        util_buf b;
        util_buf_init(&b);
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
            if (util_buf_append(&b, chunk, n)) return util_err_set(err, UTIL_ENOMEM, "out of memory");
        *out = util_buf_detach(&b, NULL);
        return *out ? UTIL_OK : util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    return util_read_file(out, NULL, o->prompt_file, err);
}

/* Renders the prompt (chat or raw) and tokenizes it with specials parsed. */
static int build_prompt(const eng_model *m, const gen_opts *o, const char *text, int32_t **ids,
                        size_t *n, util_err *err) {
    if (!o->chat) return eng_tokenize(eng_model_tokenizer(m), text, strlen(text), 1, 1, ids, n, err);
    eng_chat_msg msgs[2];
    size_t nm = 0;
    char *sys_text = NULL;
    if (o->system_file) {
        int rc = util_read_file(&sys_text, NULL, o->system_file, err);
        if (rc) return rc;
        /* A file's final newline ends the file, not the message. */
        size_t l = strlen(sys_text);
        while (l > 0 && (sys_text[l - 1] == '\n' || sys_text[l - 1] == '\r')) sys_text[--l] = '\0';
        msgs[nm++] = (eng_chat_msg){"system", sys_text};
    }
    if (o->system) msgs[nm++] = (eng_chat_msg){"system", o->system};
    msgs[nm++] = (eng_chat_msg){"user", text};
    util_buf b;
    util_buf_init(&b);
    int rc = eng_chat_render(eng_model_chat(m), msgs, nm, 1, &b, err);
    if (rc == UTIL_OK)
        rc = eng_tokenize(eng_model_tokenizer(m), b.data ? b.data : "", b.len, 0, 1, ids, n, err);
    util_buf_release(&b);
    free(sys_text);
    return rc;
}

static void print_json(const stream_ctx *sc, const int32_t *ids, int n, const eng_gen_stats *st,
                       const eng_model *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", sc->text.data ? sc->text.data : "");
    cJSON *arr = cJSON_AddArrayToObject(o, "tokens");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
    cJSON_AddNumberToObject(o, "prompt_tokens", st->prompt_tokens);
    cJSON_AddNumberToObject(o, "cached_tokens", st->cached_tokens);
    cJSON_AddNumberToObject(o, "cached_tokens_memory", st->cached_tokens_memory);
    cJSON_AddNumberToObject(o, "cached_tokens_disk", st->cached_tokens_disk);
    cJSON_AddNumberToObject(o, "computed_tokens", st->computed_tokens);
    cJSON_AddNumberToObject(o, "generated_tokens", st->generated_tokens);
    cJSON_AddNumberToObject(o, "ttft_ms", st->ttft_ms);
    cJSON_AddNumberToObject(o, "prefill_tps", st->prefill_tps);
    cJSON_AddNumberToObject(o, "decode_tps", st->decode_tps);
    cJSON_AddStringToObject(o, "stop_reason", eng_stop_reason_name(st->stop_reason));
    eng_cache_stats cs = eng_model_cache_stats(m);
    cJSON *c = cJSON_AddObjectToObject(o, "cache");
    cJSON_AddNumberToObject(c, "prefix_cache_queries", (double)cs.queries);
    cJSON_AddNumberToObject(c, "prefix_cache_hits", (double)cs.hits);
    cJSON_AddNumberToObject(c, "prefix_cache_hits_disk", (double)cs.hits_disk);
    cJSON_AddNumberToObject(c, "evictions", (double)cs.evictions);
    cJSON_AddNumberToObject(c, "disk_reads", (double)cs.disk_reads);
    cJSON_AddNumberToObject(c, "disk_writes", (double)cs.disk_writes);
    cJSON_AddNumberToObject(c, "kv_bytes_in_use", (double)cs.bytes_in_use);
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    free(s);
    cJSON_Delete(o);
}

int agent_cmd_generate(int argc, char **argv) {
    gen_opts o = {.max_tokens = 256, .sp = eng_sample_defaults()};
    o.sp.seed = (uint64_t)time(NULL);
    int st = parse_generate(&o, argc, argv);
    if (st >= 0) return st;

    util_err err;
    util_err_clear(&err);
    char path[PATH_MAX];
    agent_model_path(o.model, path, sizeof path);
    char *text = NULL;
    if (load_prompt(&o, &text, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return 1;
    }
    eng_model *m = NULL;
    o.mp.n_threads = o.threads;
    if (eng_model_open(&m, path, &o.mp, &err)) {
        agent_report_model_error(path, &err);
        free(text);
        return 1;
    }
    int32_t *prompt = NULL, *out_ids = NULL;
    size_t n_prompt = 0;
    int n_out = 0, rc = 1;
    eng_seq *seq = NULL;
    stream_ctx sc = {.json = o.json};
    util_buf_init(&sc.text);
    progress_ctx pc = {.shown = 0};
    clock_gettime(CLOCK_MONOTONIC, &pc.t0);
    if (build_prompt(m, &o, text, &prompt, &n_prompt, &err) || eng_seq_new(&seq, m, o.ctx, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        goto done;
    }
    if (n_prompt == 0) {
        fprintf(stderr, "cachet: the prompt is empty\n");
        goto done;
    }
    if ((int)n_prompt >= eng_seq_n_ctx(seq)) {
        fprintf(stderr, "cachet: the prompt is %zu tokens long; the context limit is %d tokens\n",
                n_prompt, eng_seq_n_ctx(seq));
        goto done;
    }
    if (isatty(STDERR_FILENO)) eng_seq_set_progress(seq, on_progress, &pc);
    eng_gen_params gp = {.max_tokens = o.max_tokens, .sample = o.sp, .on_token = on_token, .user = &sc};
    eng_gen_stats stats;
    if (eng_generate(seq, prompt, (int)n_prompt, &gp, &out_ids, &n_out, &stats, &err)) {
        fprintf(stderr, "\ncachet: %s\n", err.msg);
        goto done;
    }
    if (o.json) {
        eng_model_flush_cache(m); /* so the disk counters are final */
        print_json(&sc, out_ids, n_out, &stats, m);
    }
    else {
        fputc('\n', stdout);
        fflush(stdout);
    }
    rc = 0;
done:
    util_buf_release(&sc.text);
    free(out_ids);
    free(prompt);
    eng_seq_free(seq);
    eng_model_free(m);
    free(text);
    return rc;
}

int agent_cmd_tokenize(int argc, char **argv) {
    static const struct option opts[] = {{"model", required_argument, 0, OPT_MODEL},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"no-special", no_argument, 0, OPT_NOSPECIAL},
                                         {"help", no_argument, 0, OPT_HELP},
                                         {0, 0, 0, 0}};
    const char *model = NULL;
    int json = 0, special = 1, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case OPT_MODEL: model = optarg; break;
        case OPT_JSON: json = 1; break;
        case OPT_NOSPECIAL: special = 0; break;
        case OPT_HELP: fputs(tokenize_usage, stdout); return 0;
        default:
            fprintf(stderr, "cachet tokenize: unknown or incomplete option '%s'\n%s", argv[optind - 1],
                    tokenize_usage);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "cachet tokenize: give exactly one TEXT argument\n%s", tokenize_usage);
        return 2;
    }
    const char *text = argv[optind];
    util_err err;
    util_err_clear(&err);
    char path[PATH_MAX];
    agent_model_path(model, path, sizeof path);
    eng_gguf *g = NULL;
    eng_tokenizer *t = NULL;
    if (eng_gguf_open(&g, path, &err) || eng_tokenizer_new(&t, g, &err)) {
        agent_report_model_error(path, &err);
        eng_gguf_free(g);
        return 1;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = 0;
    if (eng_tokenize(t, text, strlen(text), 1, special, &ids, &n, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        rc = 1;
    } else if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON *arr = cJSON_AddArrayToObject(o, "tokens");
        for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
        char *s = cJSON_PrintUnformatted(o);
        if (s) puts(s);
        free(s);
        cJSON_Delete(o);
    } else {
        for (size_t i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
        putchar('\n');
    }
    free(ids);
    eng_tokenizer_free(t);
    eng_gguf_free(g);
    return rc;
}
