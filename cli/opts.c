/* cli/opts.c: the engine options' table, parser and help (see opts.h). The
 * one place an engine option's name, argument, range, default and help text
 * are written. */
#include "opts.h"

#include <string.h>

#include "cli.h"

enum {
    E_MODEL = CLI_OPT_ENGINE,
    E_THREADS,
    E_CTX,
    E_KV_BUDGET,
    E_KV_DISK_BUDGET,
    E_KV_DIR,
    E_NO_CACHE,
    E_NO_DISK,
    E_EXACT,
    E_DEVICE,
    E_DEBUG,
    E_CHAT_TEMPLATE,
    E_KV_TYPE,
    E_KV_TYPE_K,
    E_KV_TYPE_V,
    E_SPEC,
    E_SPEC_MAX,
    E_SPEC_NGRAM,
    E_MLA,
    E_KV_SINKS,
    E_KV_WINDOW,
    E_KV_EVICT,
    E_KV_BUDGET_TOKENS,
    E_KV_RECENT
};

static const struct {
    const char *name;
    const char *arg; /* NULL: takes none */
    int code;
    const char *help; /* '\n' starts a continuation line */
} k_engine[] = {
    {"model", "PATH", E_MODEL,
     "GGUF model (default: $CACHET_MODEL, else SmolLM2-135M-Instruct.Q4_1.gguf from\n"
     "$XDG_DATA_HOME/cachet/models, <prefix>/share/cachet/models or ./models)"},
    {"threads", "N", E_THREADS, "worker threads (default: all cores)"},
    {"ctx-size", "N", E_CTX, "context length, at least 16 (default: the model's)"},
    {"kv-budget", "SIZE", E_KV_BUDGET, "KV-cache memory (pages of 16 tokens), e.g. 512MiB (default 1GiB)"},
    {"kv-disk-budget", "SIZE", E_KV_DISK_BUDGET, "disk tier size limit (default 2GiB)"},
    {"kv-dir", "DIR", E_KV_DIR, "disk tier directory (default $XDG_CACHE_HOME/cachet/kv)"},
    {"kv-type", "T", E_KV_TYPE,
     "KV-cache element type of keys and values: f16 (default), q8_0 (34 bytes\n"
     "per 32 values) or q4_0 (18 bytes per 32), as llama.cpp's --cache-type-k/-v"},
    {"kv-type-k", "T", E_KV_TYPE_K, "the keys' type alone (after --kv-type: overrides it)"},
    {"kv-type-v", "T", E_KV_TYPE_V, "the values' type alone"},
    {"mla", "MODE", E_MLA,
     "deepseek2's latent attention: absorbed (default: the cache holds the latent\n"
     "and the RoPE key per token and layer) or naive (up-projected per-head K/V)"},
    {"kv-sinks", "N", E_KV_SINKS,
     "StreamingLLM: keep the first N positions (attention sinks) with --kv-window"},
    {"kv-window", "W", E_KV_WINDOW,
     "StreamingLLM: keep the last W positions besides the sinks, evicting older ones so a\n"
     "stream runs past the context in bounded memory (CPU only; no prefix cache)"},
    {"kv-evict", "POLICY", E_KV_EVICT,
     "h2o: keep --kv-budget-tokens positions per sequence, evicting per layer and KV head\n"
     "the key of least accumulated attention outside the --kv-recent last (CPU only)"},
    {"kv-budget-tokens", "B", E_KV_BUDGET_TOKENS, "positions a sequence keeps with --kv-evict h2o"},
    {"kv-recent", "R", E_KV_RECENT, "recent positions --kv-evict h2o always keeps (default B/2)"},
    {"no-cache", NULL, E_NO_CACHE, "do not reuse cached prefixes (for comparisons)"},
    {"no-disk-cache", NULL, E_NO_DISK, "keep the prefix cache in memory only"},
    {"exact", NULL, E_EXACT,
     "f32 activations (no 8-bit quantization): the reference numerics, about\n"
     "20x slower on the CPU, as the default's 8-bit integer dot products are gone\n"
     "(SmolLM2-135M, one core: prefill 6 vs 131 tok/s, decode 2 vs 42)"},
    {"device", "D", E_DEVICE,
     "compute on D: auto (a GPU when this build has CUDA and one is present),\n"
     "cpu, cuda, cuda:N (default auto; $CACHET_DEVICE sets it when absent)"},
    {"debug", NULL, E_DEBUG, "report corrupt disk-tier entries"},
    {"chat-template", "NAME", E_CHAT_TEMPLATE,
     "chat format, instead of the one recognised from the model's template:\n"
     "chatml, gemma, llama3, llama3.1, mistral-v0, mistral-v1, mistral-v3,\n"
     "mistral-v3-tekken, phi3, phi3-mini, phi3-small, phi3-vision, deepseek-r1\n"
     "(default: recognised; unrecognised: chatml, with a warning)"},
    {"spec", "MODE", E_SPEC,
     "speculative decoding: ngram (draft from the sequence's own earlier tokens,\n"
     "verify in one forward pass; output identical to plain decoding) or none\n"
     "(default none)"},
    {"spec-max", "N", E_SPEC_MAX, "tokens drafted per forward with --spec ngram, 1..64 (default 8)"},
    {"spec-ngram", "N", E_SPEC_NGRAM, "longest match length tried with --spec ngram, 1..16 (default 3)"},
};

enum { N_ENGINE = sizeof k_engine / sizeof k_engine[0] };

static int in_set(size_t i, cli_engine_set set) {
    return set == CLI_ENGINE_ALL || k_engine[i].code == E_MODEL;
}

int cli_engine_longopts(struct option *out, size_t cap, const struct option *own, cli_engine_set set) {
    size_t n = 0;
    for (; own && own[n].name; n++) {
        if (n + 1 >= cap) return CLI_EXIT_FAIL;
        out[n] = own[n];
    }
    for (size_t i = 0; i < N_ENGINE; i++) {
        if (!in_set(i, set)) continue;
        if (n + 1 >= cap) return CLI_EXIT_FAIL;
        out[n++] = (struct option){k_engine[i].name, k_engine[i].arg ? required_argument : no_argument, NULL,
                                   k_engine[i].code};
    }
    out[n] = (struct option){0, 0, 0, 0};
    return CLI_EXIT_OK;
}

int cli_engine_parse(cli_engine *e, int c, const char *arg) {
    long l;
    switch (c) {
    case E_MODEL: e->model = arg; return 1;
    case E_THREADS:
        if (cli_parse_int("--threads", arg, 1, 256, &l)) return CLI_EXIT_USAGE;
        e->mp.n_threads = (int)l;
        return 1;
    case E_CTX:
        if (cli_parse_int("--ctx-size", arg, 16, 1 << 24, &l)) return CLI_EXIT_USAGE;
        e->n_ctx = (int)l;
        return 1;
    case E_KV_BUDGET: return cli_parse_size("--kv-budget", arg, &e->mp.kv_budget) ? CLI_EXIT_USAGE : 1;
    case E_KV_DISK_BUDGET:
        return cli_parse_size("--kv-disk-budget", arg, &e->mp.kv_disk_budget) ? CLI_EXIT_USAGE : 1;
    case E_KV_DIR: e->mp.kv_dir = arg; return 1;
    case E_NO_CACHE: e->mp.no_cache = 1; return 1;
    case E_NO_DISK: e->mp.no_disk_cache = 1; return 1;
    case E_EXACT: e->mp.exact = 1; return 1;
    case E_DEBUG: e->mp.debug = 1; return 1;
    case E_CHAT_TEMPLATE: {
        eng_chat_format f;
        util_err err;
        if (eng_chat_format_parse(arg, &f, &err)) {
            fprintf(stderr, "cachet: option '--chat-template': %s\n", err.msg);
            return CLI_EXIT_USAGE;
        }
        e->mp.chat_template = arg;
        return 1;
    }
    case E_DEVICE: return cli_parse_device(&e->mp.device, arg) ? CLI_EXIT_USAGE : 1;
    case E_KV_TYPE:
    case E_KV_TYPE_K:
    case E_KV_TYPE_V: {
        uint32_t t;
        util_err err;
        if (eng_kv_type_parse(&t, arg, &err)) {
            fprintf(stderr, "cachet: option '--%s': %s\n",
                    c == E_KV_TYPE     ? "kv-type"
                    : c == E_KV_TYPE_K ? "kv-type-k"
                                       : "kv-type-v",
                    err.msg);
            return CLI_EXIT_USAGE;
        }
        if (c != E_KV_TYPE_V) e->mp.kv_type_k = t;
        if (c != E_KV_TYPE_K) e->mp.kv_type_v = t;
        return 1;
    }
    case E_SPEC: {
        util_err err;
        if (eng_spec_mode_parse(&e->spec.mode, arg, &err)) {
            fprintf(stderr, "cachet: option '--spec': %s\n", err.msg);
            return CLI_EXIT_USAGE;
        }
        return 1;
    }
    case E_SPEC_MAX:
        if (cli_parse_int("--spec-max", arg, 1, ENG_SPEC_MAX_DRAFT, &l)) return CLI_EXIT_USAGE;
        e->spec.max_draft = (int)l;
        return 1;
    case E_SPEC_NGRAM:
        if (cli_parse_int("--spec-ngram", arg, 1, 16, &l)) return CLI_EXIT_USAGE;
        e->spec.ngram = (int)l;
        return 1;
    case E_MLA:
        if (strcmp(arg, "naive") != 0 && strcmp(arg, "absorbed") != 0) {
            fprintf(stderr, "cachet: option '--mla': '%s' is not naive or absorbed\n", arg);
            return CLI_EXIT_USAGE;
        }
        e->mp.mla_naive = strcmp(arg, "naive") == 0;
        return 1;
    case E_KV_SINKS:
        if (cli_parse_int("--kv-sinks", arg, 0, 1 << 20, &l)) return CLI_EXIT_USAGE;
        e->mp.kv_sinks = (int)l;
        return 1;
    case E_KV_WINDOW:
        if (cli_parse_int("--kv-window", arg, 1, 1 << 20, &l)) return CLI_EXIT_USAGE;
        e->mp.kv_window = (int)l;
        return 1;
    case E_KV_EVICT:
        if (strcmp(arg, "h2o") == 0) {
            e->mp.kv_evict = ENG_KV_EVICT_H2O;
        } else if (strcmp(arg, "none") == 0) {
            e->mp.kv_evict = ENG_KV_EVICT_NONE;
        } else {
            fprintf(stderr,
                    "cachet: option '--kv-evict': '%s' is not a policy (h2o or none; StreamingLLM is "
                    "--kv-sinks/--kv-window)\n",
                    arg);
            return CLI_EXIT_USAGE;
        }
        return 1;
    case E_KV_BUDGET_TOKENS:
        if (cli_parse_int("--kv-budget-tokens", arg, 2, 1 << 20, &l)) return CLI_EXIT_USAGE;
        e->mp.kv_budget_tokens = (int)l;
        return 1;
    case E_KV_RECENT:
        if (cli_parse_int("--kv-recent", arg, 1, 1 << 20, &l)) return CLI_EXIT_USAGE;
        e->mp.kv_recent = (int)l;
        return 1;
    default: return 0;
    }
}

int cli_engine_finish(cli_engine *e, int find_model) {
    if (!e->mp.device && cli_parse_device(&e->mp.device, NULL)) return CLI_EXIT_USAGE;
    if (e->mp.kv_sinks > 0 && e->mp.kv_window == 0) {
        fprintf(stderr, "cachet: option '--kv-sinks' needs '--kv-window' (the recent positions kept)\n");
        return CLI_EXIT_USAGE;
    }
    if (e->mp.kv_evict == ENG_KV_EVICT_H2O && !e->mp.kv_budget_tokens) {
        fprintf(stderr, "cachet: option '--kv-evict h2o' needs '--kv-budget-tokens B'\n");
        return CLI_EXIT_USAGE;
    }
    if (e->mp.kv_evict != ENG_KV_EVICT_H2O && (e->mp.kv_budget_tokens || e->mp.kv_recent)) {
        fprintf(stderr, "cachet: options '--kv-budget-tokens' and '--kv-recent' need '--kv-evict h2o'\n");
        return CLI_EXIT_USAGE;
    }
    if (e->mp.kv_evict == ENG_KV_EVICT_H2O && e->mp.kv_window) {
        fprintf(stderr, "cachet: '--kv-evict h2o' and '--kv-window' are two eviction policies: give one\n");
        return CLI_EXIT_USAGE;
    }
    if ((e->mp.kv_window > 0 || e->mp.kv_evict) && e->spec.mode != ENG_SPEC_NONE) {
        fprintf(stderr,
                "cachet: option '--spec' does not combine with '--kv-window' or '--kv-evict' (they evict "
                "what drafts would be verified against)\n");
        return CLI_EXIT_USAGE;
    }
    if (find_model && cli_model_path(e->path, sizeof e->path, e->model)) return CLI_EXIT_FAIL;
    return CLI_GO_ON;
}

void cli_engine_usage(FILE *f, cli_engine_set set, const cli_engine_note *notes) {
    for (size_t i = 0; i < N_ENGINE; i++) {
        if (!in_set(i, set)) continue;
        const char *help = k_engine[i].help;
        for (size_t k = 0; notes && notes[k].name; k++)
            if (strcmp(notes[k].name, k_engine[i].name) == 0) help = notes[k].help;
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", k_engine[i].name, k_engine[i].arg ? " " : "",
                 k_engine[i].arg ? k_engine[i].arg : "");
        fprintf(f, "  %-21s ", left);
        if (strlen(left) > 21) fprintf(f, "\n  %-21s ", "");
        for (const char *s = help; *s;) {
            size_t l = strcspn(s, "\n");
            fprintf(f, "%.*s\n", (int)l, s);
            s += l;
            if (*s == '\n' && *++s) fprintf(f, "  %-21s ", "");
        }
    }
}
