/* cli/cmd_kv.c: `cachet kv`, the KV-cache memory calculator: bytes per token
 * (layers x kv heads x head dim x 2 for K and V x bytes per value) and how many
 * tokens fit in a memory size, for each KV type (--kv-type, K and V apart:
 * whole 32-value blocks for q8_0/q4_0); for a model file also what its GQA/MQA saves
 * against full multi-head attention and, with sliding-window layers, the
 * window-aware figure (global vs sliding layers) against keeping every
 * position. Reads only GGUF metadata. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine.h"
#include "../util/parse.h"
#include "cli.h"

static const char kv_usage[] =
    "usage: cachet kv (--model PATH | --layers L --kv-heads H --head-dim D)\n"
    "                 [--heads N] [--window W --sliding-layers S] [--ctx N]\n"
    "                 [--kv-type T] [--kv-type-k T] [--kv-type-v T] [--memory SIZE] [--json]\n"
    "\n"
    "KV-cache bytes per token and how many tokens fit in a memory size.\n"
    "\n"
    "  --model PATH     read the shape from a GGUF file\n"
    "  --layers L       number of layers\n"
    "  --kv-heads H     key/value heads per layer\n"
    "  --head-dim D     dimensions per head\n"
    "  --heads N        query heads (to show what GQA/MQA saves; read from --model)\n"
    "  --window W       sliding window in positions (read from --model)\n"
    "  --sliding-layers S  of the layers, those with the window (read from --model)\n"
    "  --ctx N          context for the window-aware split (default: 8192)\n"
    "  --kv-type T      keys and values as f16 (default), q8_0 (34 bytes per 32\n"
    "                   values) or q4_0 (18 bytes per 32), as `cachet --kv-type`\n"
    "  --kv-type-k T    the keys' type alone; --kv-type-v T: the values'\n"
    "  --dtype T        f32, or any --kv-type type, for keys and values\n"
    "  --memory SIZE    e.g. 80GB (10^9 bytes) or 80GiB (2^30 bytes); default 80GB\n"
    "  --json           print {\"bytes_per_token\", \"tokens\", ...}\n";

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

int cli_cmd_kv(int argc, char **argv) {
    enum {
        O_MODEL = 1,
        O_LAYERS,
        O_KVH,
        O_HD,
        O_HEADS,
        O_DTYPE,
        O_MEM,
        O_JSON,
        O_HELP,
        O_WIN,
        O_SWA,
        O_CTX,
        O_KVT,
        O_KVTK,
        O_KVTV
    };
    static const struct option opts[] = {{"model", required_argument, 0, O_MODEL},
                                         {"layers", required_argument, 0, O_LAYERS},
                                         {"kv-heads", required_argument, 0, O_KVH},
                                         {"head-dim", required_argument, 0, O_HD},
                                         {"heads", required_argument, 0, O_HEADS},
                                         {"dtype", required_argument, 0, O_DTYPE},
                                         {"memory", required_argument, 0, O_MEM},
                                         {"json", no_argument, 0, O_JSON},
                                         {"help", no_argument, 0, O_HELP},
                                         {"window", required_argument, 0, O_WIN},
                                         {"sliding-layers", required_argument, 0, O_SWA},
                                         {"ctx", required_argument, 0, O_CTX},
                                         {"kv-type", required_argument, 0, O_KVT},
                                         {"kv-type-k", required_argument, 0, O_KVTK},
                                         {"kv-type-v", required_argument, 0, O_KVTV},
                                         {0, 0, 0, 0}};
    const char *model = NULL, *tk = "f16", *tv = "f16", *mem = "80GB";
    long layers = 0, kvh = 0, hd = 0, heads = 0, window = 0, nswa = 0, ctx = 8192;
    int json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_MODEL: model = optarg; break;
        case O_LAYERS:
            if (cli_parse_int("--layers", optarg, 1, 1 << 20, &layers)) return CLI_EXIT_USAGE;
            break;
        case O_KVH:
            if (cli_parse_int("--kv-heads", optarg, 1, 1 << 20, &kvh)) return CLI_EXIT_USAGE;
            break;
        case O_HD:
            if (cli_parse_int("--head-dim", optarg, 1, 1 << 20, &hd)) return CLI_EXIT_USAGE;
            break;
        case O_HEADS:
            if (cli_parse_int("--heads", optarg, 1, 1 << 20, &heads)) return CLI_EXIT_USAGE;
            break;
        case O_WIN:
            if (cli_parse_int("--window", optarg, 1, 1 << 30, &window)) return CLI_EXIT_USAGE;
            break;
        case O_SWA:
            if (cli_parse_int("--sliding-layers", optarg, 0, 1 << 20, &nswa)) return CLI_EXIT_USAGE;
            break;
        case O_CTX:
            if (cli_parse_int("--ctx", optarg, 1, 1L << 40, &ctx)) return CLI_EXIT_USAGE;
            break;
        case O_DTYPE: tk = tv = optarg; break;
        case O_KVT: tk = tv = optarg; break;
        case O_KVTK: tk = optarg; break;
        case O_KVTV: tv = optarg; break;
        case O_MEM: mem = optarg; break;
        case O_JSON: json = 1; break;
        case O_HELP: fputs(kv_usage, stdout); return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet kv: unknown or incomplete option '%s'\n%s", argv[optind - 1], kv_usage);
            return CLI_EXIT_USAGE;
        }
    }
    /* bytes per value: K's and V's mean (f32 is --dtype's alone: no cache type) */
    double bk = strcmp(tk, "f32") == 0 ? 4 : 0, bv = strcmp(tv, "f32") == 0 ? 4 : 0;
    uint32_t id;
    if (!bk && eng_kv_type_parse(&id, tk, NULL) == 0) bk = eng_kv_type_bytes(id);
    if (!bv && eng_kv_type_parse(&id, tv, NULL) == 0) bv = eng_kv_type_bytes(id);
    if (!bk || !bv) {
        fprintf(stderr, "cachet kv: a KV type must be f16, q8_0, q4_0 (or f32), not '%s'\n", !bk ? tk : tv);
        return CLI_EXIT_USAGE;
    }
    const double bytes_per_value = (bk + bv) / 2;
    char types[48];
    if (strcmp(tk, tv) == 0)
        snprintf(types, sizeof types, "%s", tk);
    else
        snprintf(types, sizeof types, "K %s, V %s", tk, tv);
    util_err err;
    util_err_clear(&err);
    uint64_t mem_bytes;
    int binary;
    if (util_parse_size(mem, &mem_bytes, &binary, &err)) {
        fprintf(stderr, "cachet kv: --memory: %s\n", err.msg);
        return CLI_EXIT_USAGE;
    }
    if (model) {
        eng_model_shape sh;
        if (eng_model_shape_read(model, &sh, &err)) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            return CLI_EXIT_FAIL;
        }
        layers = sh.n_layer;
        kvh = sh.n_kv_head;
        hd = sh.head_dim;
        heads = sh.n_head;
        window = sh.n_swa;
        nswa = sh.n_layer_swa;
    } else if (!layers || !kvh || !hd) {
        fprintf(stderr, "cachet kv: give --model, or all of --layers, --kv-heads and --head-dim\n%s",
                kv_usage);
        return CLI_EXIT_USAGE;
    }
    if (nswa > layers || (nswa > 0) != (window > 0)) {
        fprintf(stderr,
                "cachet kv: --window and --sliding-layers go together, with at most --layers sliding\n");
        return CLI_EXIT_USAGE;
    }
    eng_model_shape ks = {.n_layer = (int)layers,
                          .n_kv_head = (int)kvh,
                          .head_dim = (int)hd,
                          .n_swa = (int)window,
                          .n_layer_swa = (int)nswa};
    double bpt = eng_kv_bytes_per_token(&ks, bytes_per_value);
    double kv_global = 0, kv_sliding = 0, kv_all = bpt * (double)ctx;
    double kv_aware = eng_kv_bytes_ctx(&ks, bytes_per_value, (uint64_t)ctx, &kv_global, &kv_sliding);
    /* tokens that fit window-aware: the sliding layers stop growing at their window */
    double fit_aware = (double)mem_bytes / bpt;
    if (nswa > 0) {
        eng_model_shape gs = ks;
        gs.n_layer = (int)(layers - nswa);
        double g1 = 0, s1 = 0, big = 1e15;
        eng_kv_bytes_ctx(&ks, bytes_per_value, (uint64_t)big, &g1, &s1); /* s1: the sliding layers' cap */
        double gbpt = eng_kv_bytes_per_token(&gs, bytes_per_value);
        if (s1 < (double)mem_bytes && (gbpt <= 0 || ((double)mem_bytes - s1) / gbpt > fit_aware))
            fit_aware = gbpt > 0 ? ((double)mem_bytes - s1) / gbpt : 1e18;
    }
    double tokens = (double)mem_bytes / bpt;
    ks.n_kv_head = (int)heads; /* full multi-head attention: a kv head per query head */
    double mha = heads > 0 ? eng_kv_bytes_per_token(&ks, bytes_per_value) : 0;
    uint64_t ntok = (uint64_t)tokens;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "bytes_per_token", bpt);
        cJSON_AddNumberToObject(o, "tokens", (double)ntok);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)mem_bytes);
        cJSON_AddStringToObject(o, "memory_unit", binary ? "binary" : "decimal");
        cJSON_AddStringToObject(o, "dtype", strcmp(tk, tv) == 0 ? tk : "mixed");
        cJSON_AddNumberToObject(o, "layers", (double)layers);
        cJSON_AddNumberToObject(o, "kv_heads", (double)kvh);
        cJSON_AddNumberToObject(o, "head_dim", (double)hd);
        if (nswa > 0) {
            cJSON_AddNumberToObject(o, "window", (double)window);
            cJSON_AddNumberToObject(o, "sliding_layers", (double)nswa);
            cJSON_AddNumberToObject(o, "ctx", (double)ctx);
            cJSON_AddNumberToObject(o, "ctx_bytes_global", kv_global);
            cJSON_AddNumberToObject(o, "ctx_bytes_sliding", kv_sliding);
            cJSON_AddNumberToObject(o, "ctx_bytes_window_aware", kv_aware);
            cJSON_AddNumberToObject(o, "ctx_bytes_keep_all", kv_all);
            cJSON_AddNumberToObject(o, "tokens_window_aware", floor(fit_aware));
        }
        if (heads > 0) {
            cJSON_AddNumberToObject(o, "heads", (double)heads);
            cJSON_AddNumberToObject(o, "mha_bytes_per_token", mha);
        }
        cJSON_AddStringToObject(o, "kv_type_k", tk);
        cJSON_AddStringToObject(o, "kv_type_v", tv);
        char *s = cJSON_PrintUnformatted(o);
        if (s) puts(s);
        free(s);
        cJSON_Delete(o);
        return CLI_EXIT_OK;
    }
    char a[64], b[64], t[64];
    group(a, sizeof a, bpt);
    group(b, sizeof b, (double)mem_bytes);
    group(t, sizeof t, (double)ntok);
    printf("KV cache: %ld layers x %ld kv heads x %ld dims x 2 (K and V) x %g bytes (%s)\n", layers, kvh, hd,
           bytes_per_value, types);
    printf("bytes per token: %s\n", a);
    printf("tokens in %s (%s bytes; %s): %s (about %.0fk)\n", mem, b,
           binary ? "binary units, 1 GiB = 2^30 bytes" : "decimal units, 1 GB = 10^9 bytes", t,
           floor(tokens) / 1000.0);
    if (nswa > 0) {
        char g[64], w[64], tot[64], all[64], f[64];
        group(g, sizeof g, kv_global);
        group(w, sizeof w, kv_sliding);
        group(tot, sizeof tot, kv_aware);
        group(all, sizeof all, kv_all);
        group(f, sizeof f, fit_aware);
        printf(
            "sliding window: %ld of %ld layers see the last %ld positions (they keep the window + 1 page)\n",
            nswa, layers, window);
        printf("at %ld tokens: global layers %s + sliding layers %s = %s bytes window-aware; "
               "keeping every position: %s (%.1fx)\n",
               ctx, g, w, tot, all, kv_all / kv_aware);
        printf("tokens in %s window-aware: %s\n", mem, f);
    }
    if (heads > 0 && heads != kvh) {
        char m[64];
        group(m, sizeof m, mha);
        printf("with full multi-head attention (%ld kv heads) it would be %s bytes per token: "
               "%s saves %.1fx\n",
               heads, m, kvh == 1 ? "MQA" : "GQA", (double)heads / (double)kvh);
    }
    return CLI_EXIT_OK;
}
