/* cli/cmd_generate.c: `cachet generate`: raw access to the embedded engine.
 * Streams text to stdout (or prints one JSON object with --json). No agent
 * logic here; tokenize and detokenize are cmd_tokenize.c. */
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
#include "../util/fs.h"
#include "../util/text.h"
#include "../util/time.h"
#include "cli.h"
#include "opts.h"
#include "status.h"

static const char generate_usage[] =
    "usage: cachet generate (--prompt TEXT | --prompt-file PATH) [--chat]\n"
    "                       [--system TEXT | --system-file PATH] [--max-tokens N] [--temp T] [--top-k K]\n"
    "                       [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--json]\n"
    "                       [engine options]\n"
    "\n"
    "Generates text with the embedded engine and streams it to stdout.\n"
    "\n"
    "  --prompt TEXT         the prompt\n"
    "  --prompt-file PATH    read the prompt from a file ('-' for stdin)\n"
    "  --chat                wrap the prompt as a user turn in the model's chat template\n"
    "  --system TEXT         with --chat: a system message (else the template's default)\n"
    "  --system-file PATH    with --chat: the system message from a file (e.g. prompts/assistant.md)\n"
    "  --max-tokens N        stop after N generated tokens (default 256)\n"
    "  --temp T              temperature; 0 = greedy (default 0.8)\n"
    "  --top-k K             keep the K most likely tokens; 0 = off (default 40)\n"
    "  --top-p P             nucleus sampling; 1 = off (default 0.95)\n"
    "  --min-p P             drop tokens below P x the top probability; 0 = off (default 0.05)\n"
    "  --repeat-penalty R    penalise the last 64 tokens; 1 = off (default 1)\n"
    "  --seed S              random seed (default: time-based)\n"
    "  --json                print one JSON object instead of streaming text\n"
    "\n"
    "engine options:\n";

static void usage(FILE *f, const char *text, cli_engine_set set) {
    fputs(text, f);
    cli_engine_usage(f, set, NULL);
}

typedef struct gen_opts {
    const char *prompt, *prompt_file, *system, *system_file;
    int chat, json;
    cli_engine e;
    int max_tokens;
    eng_sample_params sp;
} gen_opts;

enum {
    OPT_PROMPT = 256,
    OPT_PROMPT_FILE,
    OPT_CHAT,
    OPT_SYSTEM,
    OPT_MAX,
    OPT_TEMP,
    OPT_TOPK,
    OPT_TOPP,
    OPT_MINP,
    OPT_REP,
    OPT_SEED,
    OPT_JSON,
    OPT_HELP,
    OPT_SYSTEM_FILE
};

/* One of generate's own options with its argument; returns 0 or an exit status. */
static int parse_one(gen_opts *o, int c, const char *a) {
    long l;
    double d;
    switch (c) {
    case OPT_PROMPT: o->prompt = a; return 0;
    case OPT_PROMPT_FILE: o->prompt_file = a; return 0;
    case OPT_CHAT: o->chat = 1; return 0;
    case OPT_SYSTEM: o->system = a; return 0;
    case OPT_SYSTEM_FILE: o->system_file = a; return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_MAX:
        return cli_parse_int("--max-tokens", a, 1, INT_MAX, &l) ? CLI_EXIT_USAGE
                                                                : (o->max_tokens = (int)l, 0);
    case OPT_TOPK:
        return cli_parse_int("--top-k", a, 0, INT_MAX, &l) ? CLI_EXIT_USAGE : (o->sp.top_k = (int)l, 0);
    case OPT_SEED:
        return cli_parse_int("--seed", a, 0, LONG_MAX, &l) ? CLI_EXIT_USAGE : (o->sp.seed = (uint64_t)l, 0);
    case OPT_TEMP:
        return cli_parse_float("--temp", a, 0, 100, &d) ? CLI_EXIT_USAGE : (o->sp.temp = (float)d, 0);
    case OPT_TOPP:
        return cli_parse_float("--top-p", a, 0, 1, &d) ? CLI_EXIT_USAGE : (o->sp.top_p = (float)d, 0);
    case OPT_MINP:
        return cli_parse_float("--min-p", a, 0, 1, &d) ? CLI_EXIT_USAGE : (o->sp.min_p = (float)d, 0);
    case OPT_REP:
        return cli_parse_float("--repeat-penalty", a, 0.01, 100, &d) ? CLI_EXIT_USAGE
                                                                     : (o->sp.repeat_penalty = (float)d, 0);
    default: return CLI_EXIT_USAGE;
    }
}

static int parse_generate(gen_opts *o, int argc, char **argv) {
    static const struct option own[] = {{"prompt", required_argument, 0, OPT_PROMPT},
                                        {"prompt-file", required_argument, 0, OPT_PROMPT_FILE},
                                        {"chat", no_argument, 0, OPT_CHAT},
                                        {"system", required_argument, 0, OPT_SYSTEM},
                                        {"system-file", required_argument, 0, OPT_SYSTEM_FILE},
                                        {"max-tokens", required_argument, 0, OPT_MAX},
                                        {"temp", required_argument, 0, OPT_TEMP},
                                        {"top-k", required_argument, 0, OPT_TOPK},
                                        {"top-p", required_argument, 0, OPT_TOPP},
                                        {"min-p", required_argument, 0, OPT_MINP},
                                        {"repeat-penalty", required_argument, 0, OPT_REP},
                                        {"seed", required_argument, 0, OPT_SEED},
                                        {"json", no_argument, 0, OPT_JSON},
                                        {"help", no_argument, 0, OPT_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        if (c == OPT_HELP) {
            usage(stdout, generate_usage, CLI_ENGINE_ALL);
            return CLI_EXIT_OK;
        }
        if (c == '?' || c == ':') {
            fprintf(stderr, "cachet generate: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr, generate_usage, CLI_ENGINE_ALL);
            return CLI_EXIT_USAGE;
        }
        if ((k = parse_one(o, c, optarg))) return k;
    }
    if (optind < argc) {
        fprintf(stderr, "cachet generate: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (o->system && o->system_file) {
        fprintf(stderr, "cachet generate: give at most one of --system and --system-file\n");
        return CLI_EXIT_USAGE;
    }
    if (!o->prompt == !o->prompt_file) {
        fprintf(stderr, "cachet generate: give exactly one of --prompt or --prompt-file\n");
        usage(stderr, generate_usage, CLI_ENGINE_ALL);
        return CLI_EXIT_USAGE;
    }
    return cli_engine_finish(&o->e, 1);
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
    double t0_ms;
    cli_progress line;
} progress_ctx;

static void on_progress(void *user, int done, int total) {
    progress_ctx *p = user;
    cli_progress_update(&p->line, done, total, util_now_ms() - p->t0_ms);
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

/* Tokenizes the prompt: raw text with specials parsed, or a chat rendered
 * with only the template's markers special. */
static int build_prompt(const eng_model *m, const gen_opts *o, const char *text, int32_t **ids, size_t *n,
                        util_err *err) {
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
    /* The template's markers are control tokens; special-token text inside a
     * message stays plain text (eng_chat_tokenize), as in the agent and serve. */
    int rc = eng_chat_tokenize(eng_model_chat(m), eng_model_tokenizer(m), msgs, nm, 1, NULL, ids, n, err);
    free(sys_text);
    return rc;
}

static void print_json(const stream_ctx *sc, const int32_t *ids, int n, const eng_gen_stats *st,
                       const eng_model *m) {
    cJSON *o = cJSON_CreateObject();
    /* valid UTF-8: a character cut by --max-tokens is one U+FFFD (the ids are in "tokens") */
    util_buf valid;
    util_buf_init(&valid);
    util_utf8_append_valid(&valid, sc->text.data ? sc->text.data : "", sc->text.len);
    cJSON_AddStringToObject(o, "text", valid.data ? valid.data : "");
    util_buf_release(&valid);
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
    cJSON_AddNumberToObject(o, "decode_forwards", st->decode_forwards);
    cJSON_AddNumberToObject(o, "spec_drafted", st->spec_drafted);
    cJSON_AddNumberToObject(o, "spec_accepted", st->spec_accepted);
    cJSON_AddNumberToObject(o, "spec_accept_rate", st->spec_accept_rate);
    cJSON_AddNumberToObject(o, "tokens_per_forward", st->tokens_per_forward);
    eng_cache_stats cs = eng_model_cache_stats(m);
    cJSON *c = cJSON_AddObjectToObject(o, "cache");
    cJSON_AddNumberToObject(c, "prefix_cache_queries", (double)cs.queries);
    cJSON_AddNumberToObject(c, "prefix_cache_hits", (double)cs.hits);
    cJSON_AddNumberToObject(c, "prefix_cache_hits_disk", (double)cs.hits_disk);
    cJSON_AddNumberToObject(c, "evictions", (double)cs.evictions);
    cJSON_AddNumberToObject(c, "disk_reads", (double)cs.disk_reads);
    cJSON_AddNumberToObject(c, "disk_writes", (double)cs.disk_writes);
    cJSON_AddNumberToObject(c, "kv_bytes_in_use", (double)cs.bytes_in_use);
    cli_json_puts(o);
    cJSON_Delete(o);
}

int cli_cmd_generate(int argc, char **argv) {
    gen_opts o = {.max_tokens = 256, .sp = eng_sample_defaults()};
    o.sp.seed = (uint64_t)time(NULL);
    int st = parse_generate(&o, argc, argv);
    if (st != CLI_GO_ON) return st;

    util_err err;
    util_err_clear(&err);
    char *text = NULL;
    if (load_prompt(&o, &text, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    eng_model *m = NULL;
    if (eng_model_open(&m, o.e.path, &o.e.mp, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        free(text);
        return CLI_EXIT_FAIL;
    }
    if (o.chat && eng_chat_warning(eng_model_chat(m)))
        fprintf(stderr, "cachet: warning: %s\n", eng_chat_warning(eng_model_chat(m)));
    int32_t *prompt = NULL, *out_ids = NULL;
    size_t n_prompt = 0;
    int n_out = 0, rc = CLI_EXIT_FAIL;
    eng_seq *seq = NULL;
    stream_ctx sc = {.json = o.json};
    util_buf_init(&sc.text);
    progress_ctx pc;
    cli_progress_init(&pc.line, 1);
    if (build_prompt(m, &o, text, &prompt, &n_prompt, &err) || eng_seq_new(&seq, m, o.e.n_ctx, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        goto done;
    }
    if (n_prompt == 0) {
        fprintf(stderr, "cachet: the prompt is empty\n");
        goto done;
    }
    if ((int)n_prompt >= eng_seq_n_ctx(seq)) {
        fprintf(stderr, "cachet: the prompt is %zu tokens long; the context limit is %d tokens\n", n_prompt,
                eng_seq_n_ctx(seq));
        goto done;
    }
    eng_seq_set_progress(seq, on_progress, &pc); /* a line on a terminal only (status.h) */
    pc.t0_ms = util_now_ms();
    eng_gen_params gp = {
        .max_tokens = o.max_tokens, .sample = o.sp, .spec = o.e.spec, .on_token = on_token, .user = &sc};
    eng_gen_stats stats;
    int grc = eng_generate(seq, prompt, (int)n_prompt, &gp, &out_ids, &n_out, &stats, &err);
    cli_progress_clear(&pc.line);
    if (grc) {
        fprintf(stderr, "\ncachet: %s\n", err.msg);
        goto done;
    }
    if (o.json) {
        eng_model_flush_cache(m); /* so the disk counters are final */
        print_json(&sc, out_ids, n_out, &stats, m);
    } else {
        fputc('\n', stdout);
        fflush(stdout);
    }
    rc = CLI_EXIT_OK;
done:
    util_buf_release(&sc.text);
    free(out_ids);
    free(prompt);
    eng_seq_free(seq);
    eng_model_free(m);
    free(text);
    return rc;
}
