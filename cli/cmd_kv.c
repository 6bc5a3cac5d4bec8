/* cli/cmd_kv.c: `cachet kv`, the KV-cache memory calculator: bytes per token
 * (layers x kv heads x (K dims x K bytes + V dims x V bytes), each type f32,
 * f16, q8_0 or q4_0 with its block scales) and how many tokens fit in a memory
 * size, for the techniques of issue 17: GQA/MQA against full attention,
 * sliding-window layers (--window with --pattern or --sliding-layers), MLA's
 * latent cache (--mla-rank, --rope-dim), StreamingLLM's sinks + window and a
 * heavy-hitter token budget; shapes from flags, a preset of a published model
 * or a GGUF file's metadata. Arithmetic only: no model is run. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine.h"
#include "../engine/gguf.h"
#include "../util/parse.h"
#include "cli.h"

static const char kv_usage[] =
    "usage: cachet kv (--model PATH | --preset NAME | --layers L --kv-heads H --head-dim D)\n"
    "                 [--heads N] [--head-dim-v D] [--kv-type T | --kv-type-k T --kv-type-v T]\n"
    "                 [--window W (--pattern S:G | --sliding-layers S)] [--mla-rank R --rope-dim D]\n"
    "                 [--sinks N --window W] [--budget-tokens B] [--ctx N] [--memory SIZE] [--json]\n"
    "\n"
    "KV-cache bytes per token and how many tokens fit in a memory size.\n"
    "\n"
    "  --model PATH       read the shape from a GGUF file (window, pattern and MLA too)\n"
    "  --preset NAME      a published model's config.json: gemma2-27b, gemma3-27b, llama3-8b,\n"
    "                     llama3-70b, qwen2.5-7b, mistral-7b (v0.1), deepseek-v2-lite,\n"
    "                     deepseek-v3\n"
    "  --layers L         number of layers\n"
    "  --kv-heads H       key/value heads per layer\n"
    "  --head-dim D       dimensions per key head (and value head, unless --head-dim-v)\n"
    "  --head-dim-v D     dimensions per value head (DeepSeek: 128 against 192 for K)\n"
    "  --heads N          query heads (to show what GQA/MQA/MLA saves; read from --model)\n"
    "  --kv-type T        K and V values: f16 (default), f32, q8_0 (34 bytes per 32 values)\n"
    "                     or q4_0 (18 bytes per 32); --dtype is the same\n"
    "  --kv-type-k T, --kv-type-v T  the two apart (as llama.cpp's --cache-type-k/-v)\n"
    "  --window W         with --pattern or --sliding-layers: the sliding layers' window;\n"
    "                     with --sinks: StreamingLLM's recent window (every layer)\n"
    "  --pattern S:G      of every S + G layers the first S slide (gemma 2: 1:1, gemma 3: 5:1)\n"
    "  --sliding-layers S of the layers, those with the window\n"
    "  --mla-rank R       multi-head latent attention: the cache holds R latent values\n"
    "  --rope-dim D       plus D decoupled RoPE key values per layer and token (no heads)\n"
    "  --sinks N          StreamingLLM: the first N positions are kept with the last --window\n"
    "  --budget-tokens B  heavy-hitter eviction (H2O): at most B positions kept per layer\n"
    "  --ctx N            context for the window-aware, streaming and budget figures (default 8192)\n"
    "  --memory SIZE      e.g. 80GB (10^9 bytes) or 80GiB (2^30 bytes); default 80GB\n"
    "  --json             print {\"bytes_per_token\", \"tokens\", ...}\n";

/* A published model's KV shape, from its config.json (Hugging Face):
 *   gemma2-27b  google/gemma-2-27b: num_hidden_layers 46, num_attention_heads 32,
 *               num_key_value_heads 16, head_dim 128, sliding_window 4096 on the
 *               even layers (transformers' Gemma2: is_sliding = not layer_idx % 2)
 *   gemma3-27b  google/gemma-3-27b-it (text_config): 62 layers, 32 heads, 16 kv
 *               heads, head_dim 128, sliding_window 1024, sliding_window_pattern 6
 *               (5 local : 1 global)
 *   llama3-8b   meta-llama/Meta-Llama-3-8B: 32 layers, 32 heads, 8 kv heads,
 *               hidden_size 4096 (head dim 128)
 *   llama3-70b  meta-llama/Meta-Llama-3-70B: 80 layers, 64 heads, 8 kv heads,
 *               hidden_size 8192 (head dim 128)
 *   qwen2.5-7b  Qwen/Qwen2.5-7B: 28 layers, 28 heads, 4 kv heads, hidden_size
 *               3584 (head dim 128); use_sliding_window false
 *   mistral-7b  mistralai/Mistral-7B-v0.1: 32 layers, 32 heads, 8 kv heads,
 *               hidden_size 4096 (head dim 128), sliding_window 4096 on every layer
 *   deepseek-v3 deepseek-ai/DeepSeek-V3: 61 layers, 128 heads, kv_lora_rank 512,
 *               qk_rope_head_dim 64, qk_nope_head_dim 128 (K head 192), v_head_dim 128
 *   deepseek-v2-lite  deepseek-ai/DeepSeek-V2-Lite: 27 layers, 16 heads, kv_lora_rank 512,
 *               q_lora_rank null, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128 */
typedef struct kv_preset {
    const char *name;
    int layers, heads, kvh, hd, hd_v, window, pat_s, pat_g, mla_rank, rope_dim;
} kv_preset;
static const kv_preset k_presets[] = {
    {"gemma2-27b", 46, 32, 16, 128, 128, 4096, 1, 1, 0, 0},
    {"gemma3-27b", 62, 32, 16, 128, 128, 1024, 5, 1, 0, 0},
    {"llama3-8b", 32, 32, 8, 128, 128, 0, 0, 0, 0, 0},
    {"llama3-70b", 80, 64, 8, 128, 128, 0, 0, 0, 0, 0},
    {"qwen2.5-7b", 28, 28, 4, 128, 128, 0, 0, 0, 0, 0},
    {"mistral-7b", 32, 32, 8, 128, 128, 4096, 1, 0, 0, 0},
    {"deepseek-v2-lite", 27, 16, 16, 192, 128, 0, 0, 0, 512, 64},
    {"deepseek-v3", 61, 128, 128, 192, 128, 0, 0, 0, 512, 64},
};

/* Bytes per stored value of a KV type (block scales included); 0 if unknown. */
static double type_bytes(const char *t) {
    if (strcmp(t, "f16") == 0) return 2;
    if (strcmp(t, "f32") == 0) return 4;
    if (strcmp(t, "q8_0") == 0) return 34.0 / 32.0;
    if (strcmp(t, "q4_0") == 0) return 18.0 / 32.0;
    return 0;
}

typedef struct kv_calc {
    const char *model, *preset, *mem, *type_k, *type_v;
    long layers, kvh, hd, hd_v, heads, window, nswa, ctx, sinks, budget, mla_rank, rope_dim, pat_s, pat_g;
    int json;
} kv_calc;

/* v with thousands separators; fractions are dropped (token counts round down). */
static void group(char *buf, size_t cap, double v) {
    char raw[64];
    snprintf(raw, sizeof raw, "%.0f", floor(v));
    size_t n = strlen(raw), k = 0;
    for (size_t i = 0; i < n && k + 2 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = '\0';
}

/* --- reading the shape --------------------------------------------------------- */

static int parse_pattern(kv_calc *c, const char *s) {
    char *end;
    long a = strtol(s, &end, 10), b = -1;
    if (end != s && *end == ':') b = strtol(end + 1, &end, 10);
    if (*end || a < 1 || b < 0 || a > 1 << 20 || b > 1 << 20) {
        fprintf(stderr,
                "cachet kv: --pattern takes S:G (S sliding layers then G global ones, e.g. 5:1), not '%s'\n",
                s);
        return CLI_EXIT_USAGE;
    }
    c->pat_s = a;
    c->pat_g = b;
    return 0;
}

static int apply_preset(kv_calc *c) {
    for (size_t i = 0; i < sizeof k_presets / sizeof k_presets[0]; i++) {
        const kv_preset *p = &k_presets[i];
        if (strcmp(p->name, c->preset) != 0) continue;
        c->layers = p->layers;
        c->heads = p->heads;
        c->kvh = p->kvh;
        c->hd = p->hd;
        c->hd_v = p->hd_v;
        c->mla_rank = p->mla_rank;
        c->rope_dim = p->rope_dim;
        if (p->window && c->sinks < 0) { /* StreamingLLM replaces the model's window */
            c->window = p->window;
            c->pat_s = p->pat_s;
            c->pat_g = p->pat_g;
        }
        return 0;
    }
    fprintf(stderr,
            "cachet kv: unknown preset '%s' (gemma2-27b, gemma3-27b, llama3-8b, llama3-70b, qwen2.5-7b, "
            "mistral-7b, deepseek-v2-lite, deepseek-v3)\n",
            c->preset);
    return CLI_EXIT_USAGE;
}

/* The shape, window and MLA keys of a GGUF file. */
static int read_model(kv_calc *c) {
    util_err err;
    eng_model_shape sh;
    if (eng_model_shape_read(c->model, &sh, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    c->layers = sh.n_layer;
    c->kvh = sh.n_kv_head;
    c->hd = sh.head_dim;
    c->heads = sh.n_head;
    if (c->sinks < 0) {
        c->window = sh.n_swa;
        c->nswa = sh.n_layer_swa;
    }
    eng_gguf *g = NULL;
    if (eng_gguf_open(&g, c->model, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    const char *arch;
    size_t len;
    if (eng_gguf_get_str(g, "general.architecture", &arch, &len, NULL) == UTIL_OK) {
        char key[128];
        uint32_t v;
        snprintf(key, sizeof key, "%.*s.attention.value_length", (int)len, arch);
        if (eng_gguf_get_u32(g, key, &v, NULL) == UTIL_OK) c->hd_v = v;
        snprintf(key, sizeof key, "%.*s.attention.kv_lora_rank", (int)len, arch);
        if (eng_gguf_get_u32(g, key, &v, NULL) == UTIL_OK && v > 0) {
            c->mla_rank = v;
            snprintf(key, sizeof key, "%.*s.rope.dimension_count", (int)len, arch);
            if (eng_gguf_get_u32(g, key, &v, NULL) == UTIL_OK) c->rope_dim = v;
        }
    }
    eng_gguf_free(g);
    return 0;
}

/* After the options: the preset's or the file's shape under what the command
 * line gave, the sliding layers of a pattern, and the checks that need all of
 * it. Returns CLI_GO_ON or an exit status after printing why. */
static int settle(kv_calc *c, const char *pattern) {
    /* what the command line gave wins over a preset's or a file's */
    long win = c->window, nswa = c->nswa, mla = c->mla_rank, rope = c->rope_dim, hdv = c->hd_v;
    long layers = c->layers, kvh = c->kvh, hd = c->hd, heads = c->heads, ps = c->pat_s, pg = c->pat_g;
    if (c->model && c->preset) {
        fprintf(stderr, "cachet kv: give --model or --preset, not both\n");
        return CLI_EXIT_USAGE;
    }
    if (c->preset && apply_preset(c)) return CLI_EXIT_USAGE;
    if (c->model) {
        int rc = read_model(c);
        if (rc) return rc;
    }
    if (c->model || c->preset) {
        if (layers) c->layers = layers;
        if (kvh) c->kvh = kvh;
        if (hd) c->hd = hd;
        if (hdv) c->hd_v = hdv;
        if (heads) c->heads = heads;
        if (win) c->window = win;
        if (nswa > 0 || pattern) c->nswa = nswa > 0 ? nswa : 0;
        if (pattern) c->pat_s = ps, c->pat_g = pg;
        if (mla) c->mla_rank = mla;
        if (rope > 0) c->rope_dim = rope;
    } else if (!c->layers || !(c->kvh || c->mla_rank) || !(c->hd || c->mla_rank)) {
        fprintf(stderr,
                "cachet kv: give --model, --preset, or all of --layers, --kv-heads and --head-dim\n%s",
                kv_usage);
        return CLI_EXIT_USAGE;
    }
    if (c->hd_v == 0) c->hd_v = c->hd;
    if (c->pat_s > 0 && c->sinks < 0) { /* layer il slides iff il % (S + G) < S */
        c->nswa = 0;
        for (long il = 0; il < c->layers; il++) c->nswa += il % (c->pat_s + c->pat_g) < c->pat_s;
    }
    if (c->sinks >= 0) {
        if (c->window <= 0 || pattern || nswa > 0 || c->budget) {
            fprintf(stderr, "cachet kv: --sinks goes with --window (the recent positions every layer keeps), "
                            "without --pattern, --sliding-layers or --budget-tokens\n");
            return CLI_EXIT_USAGE;
        }
        c->nswa = 0;
    } else if (c->nswa > c->layers || (c->nswa > 0) != (c->window > 0)) {
        fprintf(stderr,
                "cachet kv: --window goes with --pattern or --sliding-layers (at most --layers sliding), "
                "or with --sinks\n");
        return CLI_EXIT_USAGE;
    }
    return CLI_GO_ON;
}

static int parse_kv(kv_calc *c, int argc, char **argv) {
    enum {
        O_MODEL = 1,
        O_LAYERS,
        O_KVH,
        O_HD,
        O_HDV,
        O_HEADS,
        O_DTYPE,
        O_TK,
        O_TV,
        O_MEM,
        O_JSON,
        O_HELP,
        O_WIN,
        O_SWA,
        O_PAT,
        O_CTX,
        O_PRESET,
        O_MLA,
        O_ROPE,
        O_SINKS,
        O_BUDGET
    };
    static const struct option opts[] = {{"model", required_argument, 0, O_MODEL},
                                         {"layers", required_argument, 0, O_LAYERS},
                                         {"kv-heads", required_argument, 0, O_KVH},
                                         {"head-dim", required_argument, 0, O_HD},
                                         {"head-dim-v", required_argument, 0, O_HDV},
                                         {"heads", required_argument, 0, O_HEADS},
                                         {"dtype", required_argument, 0, O_DTYPE},
                                         {"kv-type", required_argument, 0, O_DTYPE},
                                         {"kv-type-k", required_argument, 0, O_TK},
                                         {"kv-type-v", required_argument, 0, O_TV},
                                         {"memory", required_argument, 0, O_MEM},
                                         {"json", no_argument, 0, O_JSON},
                                         {"help", no_argument, 0, O_HELP},
                                         {"window", required_argument, 0, O_WIN},
                                         {"sliding-layers", required_argument, 0, O_SWA},
                                         {"pattern", required_argument, 0, O_PAT},
                                         {"ctx", required_argument, 0, O_CTX},
                                         {"preset", required_argument, 0, O_PRESET},
                                         {"mla-rank", required_argument, 0, O_MLA},
                                         {"rope-dim", required_argument, 0, O_ROPE},
                                         {"sinks", required_argument, 0, O_SINKS},
                                         {"budget-tokens", required_argument, 0, O_BUDGET},
                                         {0, 0, 0, 0}};
    struct {
        int code;
        const char *name;
        long lo, hi;
        long *dst;
    } ints[] = {{O_LAYERS, "--layers", 1, 1 << 20, &c->layers},
                {O_KVH, "--kv-heads", 1, 1 << 20, &c->kvh},
                {O_HD, "--head-dim", 1, 1 << 20, &c->hd},
                {O_HDV, "--head-dim-v", 1, 1 << 20, &c->hd_v},
                {O_HEADS, "--heads", 1, 1 << 20, &c->heads},
                {O_WIN, "--window", 1, 1 << 30, &c->window},
                {O_SWA, "--sliding-layers", 0, 1 << 20, &c->nswa},
                {O_CTX, "--ctx", 1, 1L << 40, &c->ctx},
                {O_MLA, "--mla-rank", 1, 1 << 20, &c->mla_rank},
                {O_ROPE, "--rope-dim", 0, 1 << 20, &c->rope_dim},
                {O_SINKS, "--sinks", 0, 1 << 30, &c->sinks},
                {O_BUDGET, "--budget-tokens", 1, 1L << 40, &c->budget}};
    const char *pattern = NULL;
    int c_, sinks_given = 0;
    optind = 1;
    opterr = 0;
    while ((c_ = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int done = 0;
        for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !done; i++) {
            if (ints[i].code != c_) continue;
            if (cli_parse_int(ints[i].name, optarg, ints[i].lo, ints[i].hi, ints[i].dst))
                return CLI_EXIT_USAGE;
            done = 1;
        }
        if (done) {
            if (c_ == O_SINKS) sinks_given = 1;
            continue;
        }
        switch (c_) {
        case O_MODEL: c->model = optarg; break;
        case O_PRESET: c->preset = optarg; break;
        case O_DTYPE: c->type_k = c->type_v = optarg; break;
        case O_TK: c->type_k = optarg; break;
        case O_TV: c->type_v = optarg; break;
        case O_PAT: pattern = optarg; break;
        case O_MEM: c->mem = optarg; break;
        case O_JSON: c->json = 1; break;
        case O_HELP: fputs(kv_usage, stdout); return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet kv: unknown or incomplete option '%s'\n%s", argv[optind - 1], kv_usage);
            return CLI_EXIT_USAGE;
        }
    }
    if (type_bytes(c->type_k) == 0 || type_bytes(c->type_v) == 0) {
        fprintf(stderr, "cachet kv: a KV type is f16, f32, q8_0 or q4_0, not '%s'\n",
                type_bytes(c->type_k) == 0 ? c->type_k : c->type_v);
        return CLI_EXIT_USAGE;
    }
    if (pattern && parse_pattern(c, pattern)) return CLI_EXIT_USAGE;
    if (!sinks_given) c->sinks = -1;
    return settle(c, pattern);
}

/* --- the figures ---------------------------------------------------------------- */

typedef struct kv_fig {
    double bk, bv, bpt, mha, tokens;
    uint64_t mem;
    int binary;
    double glob, slid, aware, all, fit_aware; /* sliding layers at ctx */
    double kept, ctx_bytes;                   /* StreamingLLM or budget at ctx */
    int unbounded;                            /* the capped cache fits: any length */
} kv_fig;

static void compute(const kv_calc *c, kv_fig *f) {
    f->bk = type_bytes(c->type_k);
    f->bv = type_bytes(c->type_v);
    /* eng_kv_bytes_per_token's one formula, K and V folded into its element size */
    eng_model_shape ks = {.n_layer = (int)c->layers,
                          .n_kv_head = (int)c->kvh,
                          .head_dim = (int)c->hd,
                          .n_swa = (int)c->window,
                          .n_layer_swa = (int)c->nswa};
    double elem = ((double)c->hd * f->bk + (double)c->hd_v * f->bv) / (2.0 * (double)c->hd);
    if (c->mla_rank > 0) { /* one latent + rope key per layer, no heads: stored as K */
        ks.n_kv_head = 1;
        ks.head_dim = (int)(c->mla_rank + c->rope_dim);
        elem = f->bk / 2.0;
    }
    f->bpt = eng_kv_bytes_per_token(&ks, elem);
    f->tokens = (double)f->mem / f->bpt;
    f->all = f->bpt * (double)c->ctx;
    f->aware = eng_kv_bytes_ctx(&ks, elem, (uint64_t)c->ctx, &f->glob, &f->slid);
    f->fit_aware = f->tokens;
    if (c->nswa > 0) { /* the sliding layers stop growing at their window */
        eng_model_shape gs = ks;
        gs.n_layer = (int)(c->layers - c->nswa);
        double g1 = 0, s1 = 0;
        eng_kv_bytes_ctx(&ks, elem, (uint64_t)1e15, &g1, &s1); /* s1: the sliding layers' cap */
        double gbpt = eng_kv_bytes_per_token(&gs, elem);
        if (s1 < (double)f->mem && (gbpt <= 0 || ((double)f->mem - s1) / gbpt > f->fit_aware))
            f->fit_aware = gbpt > 0 ? ((double)f->mem - s1) / gbpt : 1e18;
    }
    long cap = c->sinks >= 0 ? c->sinks + c->window : c->budget;
    if (cap > 0) {
        f->kept = (double)(c->ctx < cap ? c->ctx : cap);
        f->ctx_bytes = f->bpt * f->kept;
        f->unbounded = f->bpt * (double)cap <= (double)f->mem;
    }
    /* full multi-head attention: a K and V head per query head */
    f->mha = c->heads > 0
                 ? (double)c->layers * (double)c->heads * ((double)c->hd * f->bk + (double)c->hd_v * f->bv)
                 : 0;
}

static void print_json(const kv_calc *c, const kv_fig *f) {
    cJSON *o = cJSON_CreateObject();
    char dtype[32];
    snprintf(dtype, sizeof dtype, "%s%s%s", c->type_k, strcmp(c->type_k, c->type_v) ? "/" : "",
             strcmp(c->type_k, c->type_v) ? c->type_v : "");
    cJSON_AddNumberToObject(o, "bytes_per_token", f->bpt);
    cJSON_AddNumberToObject(o, "tokens", floor(f->tokens));
    cJSON_AddNumberToObject(o, "memory_bytes", (double)f->mem);
    cJSON_AddStringToObject(o, "memory_unit", f->binary ? "binary" : "decimal");
    cJSON_AddStringToObject(o, "dtype", dtype);
    if (c->preset) cJSON_AddStringToObject(o, "preset", c->preset);
    if (strcmp(c->type_k, c->type_v)) {
        cJSON_AddStringToObject(o, "kv_type_k", c->type_k);
        cJSON_AddStringToObject(o, "kv_type_v", c->type_v);
    }
    cJSON_AddNumberToObject(o, "layers", (double)c->layers);
    if (c->mla_rank > 0) {
        cJSON_AddNumberToObject(o, "mla_rank", (double)c->mla_rank);
        cJSON_AddNumberToObject(o, "rope_dim", (double)c->rope_dim);
    } else {
        cJSON_AddNumberToObject(o, "kv_heads", (double)c->kvh);
        cJSON_AddNumberToObject(o, "head_dim", (double)c->hd);
        if (c->hd_v != c->hd) cJSON_AddNumberToObject(o, "head_dim_v", (double)c->hd_v);
    }
    if (c->nswa > 0) {
        cJSON_AddNumberToObject(o, "window", (double)c->window);
        cJSON_AddNumberToObject(o, "sliding_layers", (double)c->nswa);
        cJSON_AddNumberToObject(o, "ctx", (double)c->ctx);
        cJSON_AddNumberToObject(o, "ctx_bytes_global", f->glob);
        cJSON_AddNumberToObject(o, "ctx_bytes_sliding", f->slid);
        cJSON_AddNumberToObject(o, "ctx_bytes_window_aware", f->aware);
        cJSON_AddNumberToObject(o, "ctx_bytes_keep_all", f->all);
        if (f->fit_aware < 1e17)
            cJSON_AddNumberToObject(o, "tokens_window_aware", floor(f->fit_aware));
        else
            cJSON_AddBoolToObject(o, "any_length_fits", 1);
    }
    if (f->kept > 0) {
        if (c->sinks >= 0) {
            cJSON_AddNumberToObject(o, "sinks", (double)c->sinks);
            cJSON_AddNumberToObject(o, "window", (double)c->window);
        } else {
            cJSON_AddNumberToObject(o, "budget_tokens", (double)c->budget);
        }
        cJSON_AddNumberToObject(o, "ctx", (double)c->ctx);
        cJSON_AddNumberToObject(o, "ctx_positions_kept", f->kept);
        cJSON_AddNumberToObject(o, "ctx_bytes", f->ctx_bytes);
        cJSON_AddNumberToObject(o, "ctx_bytes_keep_all", f->all);
        cJSON_AddBoolToObject(o, "any_length_fits", f->unbounded);
    }
    if (c->heads > 0) {
        cJSON_AddNumberToObject(o, "heads", (double)c->heads);
        cJSON_AddNumberToObject(o, "mha_bytes_per_token", f->mha);
    }
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    free(s);
    cJSON_Delete(o);
}

static void print_text(const kv_calc *c, const kv_fig *f) {
    char a[64], b[64], t[64];
    group(a, sizeof a, f->bpt);
    group(b, sizeof b, (double)f->mem);
    group(t, sizeof t, f->tokens);
    if (c->preset) printf("preset %s (its config.json)\n", c->preset);
    if (c->mla_rank > 0)
        printf("KV cache (MLA): %ld layers x (%ld latent + %ld rope) values x %g bytes (%s), no heads\n",
               c->layers, c->mla_rank, c->rope_dim, f->bk, c->type_k);
    else if (strcmp(c->type_k, c->type_v) || c->hd != c->hd_v)
        printf(
            "KV cache: %ld layers x %ld kv heads x (%ld K dims x %g bytes (%s) + %ld V dims x %g bytes (%s))\n",
            c->layers, c->kvh, c->hd, f->bk, c->type_k, c->hd_v, f->bv, c->type_v);
    else
        printf("KV cache: %ld layers x %ld kv heads x %ld dims x 2 (K and V) x %g bytes (%s)\n", c->layers,
               c->kvh, c->hd, f->bk, c->type_k);
    printf("bytes per token: %s\n", a);
    printf("tokens in %s (%s bytes; %s): %s (about %.0fk)\n", c->mem, b,
           f->binary ? "binary units, 1 GiB = 2^30 bytes" : "decimal units, 1 GB = 10^9 bytes", t,
           floor(f->tokens) / 1000.0);
    if (c->nswa > 0) {
        char g[64], w[64], tot[64], all[64], fa[64];
        group(g, sizeof g, f->glob);
        group(w, sizeof w, f->slid);
        group(tot, sizeof tot, f->aware);
        group(all, sizeof all, f->all);
        group(fa, sizeof fa, f->fit_aware);
        printf(
            "sliding window: %ld of %ld layers see the last %ld positions (they keep the window + 1 page)\n",
            c->nswa, c->layers, c->window);
        printf("at %ld tokens: global layers %s + sliding layers %s = %s bytes window-aware; "
               "keeping every position: %s (%.1fx)\n",
               c->ctx, g, w, tot, all, f->all / f->aware);
        if (f->fit_aware < 1e17)
            printf("tokens in %s window-aware: %s\n", c->mem, fa);
        else
            printf("tokens in %s window-aware: any number (every layer slides: the cache stops growing)\n",
                   c->mem);
    }
    if (f->kept > 0) {
        char kb[64], all[64];
        group(kb, sizeof kb, f->ctx_bytes);
        group(all, sizeof all, f->all);
        if (c->sinks >= 0)
            printf("StreamingLLM: every layer keeps the first %ld positions (sinks) and the last %ld\n",
                   c->sinks, c->window);
        else
            printf("heavy-hitter budget (H2O): every layer keeps at most %ld positions\n", c->budget);
        printf("at %ld tokens: %.0f positions kept, %s bytes; keeping every position: %s (%.1fx)\n", c->ctx,
               f->kept, kb, all, f->all / f->ctx_bytes);
        if (f->unbounded) printf("tokens in %s: any number (the cache stops growing)\n", c->mem);
    }
    if (c->heads > 0 && (c->mla_rank > 0 || c->heads != c->kvh)) {
        char m[64];
        group(m, sizeof m, f->mha);
        printf("with full multi-head attention (%ld kv heads) it would be %s bytes per token: "
               "%s saves %.1fx\n",
               c->heads, m,
               c->mla_rank > 0 ? "MLA"
               : c->kvh == 1   ? "MQA"
                               : "GQA",
               f->mha / f->bpt);
    }
}

int cli_cmd_kv(int argc, char **argv) {
    kv_calc c = {.mem = "80GB", .type_k = "f16", .type_v = "f16", .ctx = 8192};
    int st = parse_kv(&c, argc, argv);
    if (st != CLI_GO_ON) return st;
    kv_fig f = {0};
    util_err err;
    if (util_parse_size(c.mem, &f.mem, &f.binary, &err)) {
        fprintf(stderr, "cachet kv: --memory: %s\n", err.msg);
        return CLI_EXIT_USAGE;
    }
    compute(&c, &f);
    if (c.json)
        print_json(&c, &f);
    else
        print_text(&c, &f);
    return CLI_EXIT_OK;
}
