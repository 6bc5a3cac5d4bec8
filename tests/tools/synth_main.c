/* tests/tools/synth_main.c: bin/cachet-synth, the command line of the
 * synthetic-model writer (tests/synth.h): a GGUF of a preset or explicit
 * shape with seeded random weights, for GPU machines and benchmarks without
 * real model files. Prints one summary line. Does not run the model. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "../../engine/quant.h"
#include "../synth.h"

static const char usage[] =
    "usage: cachet-synth -o PATH [--preset NAME] [options]\n"
    "\n"
    "Writes a synthetic GGUF model: the given shape, seeded random weights, a small\n"
    "valid vocabulary. The same options always give the same bytes.\n"
    "\n"
    "  -o, --output PATH   the file to write (required; replaced only when complete)\n"
    "  --preset NAME       tiny (default), llama-1b, llama-1b-q4_k_m, llama-1b-q4_0,\n"
    "                      llama-1b-q8_0, mistral-7b-q4_k_m, smollm2-135m, gemma3-270m;\n"
    "                      options given with it override it, wherever they stand\n"
    "  --arch A            llama, gemma3, qwen2, qwen3, phi3 or deepseek2 (DeepSeek-V2's\n"
    "                      latent attention, dense FFNs only; --kv-heads is --heads)\n"
    "  --layers N          blocks\n"
    "  --embd N            residual width\n"
    "  --heads N           query heads\n"
    "  --kv-heads N        key/value heads (divides --heads)\n"
    "  --head-dim N        dims per head (0: embd / heads)\n"
    "  --ff N              feed-forward width\n"
    "  --vocab N           tokens (at least 259 for llama, 263 for gemma3)\n"
    "  --q-lora-rank N     deepseek2: query LoRA rank (default 0: queries straight from\n"
    "                      the residual, as DeepSeek-V2-Lite)\n"
    "  --kv-lora-rank N    deepseek2: the latent's width (default 64; V2-Lite 512)\n"
    "  --qk-nope N, --qk-rope N, --v-head-dim N\n"
    "                      deepseek2: per-head key dims without / with RoPE and value\n"
    "                      dims (default 32, 16, 32; V2-Lite 128, 64, 128)\n"
    "  --rope-freqs        write rope_freqs.weight (Llama 3.1's rope scaling)\n"
    "  --vocab-file PATH   copy the tokenizer of a vocab-only GGUF (sets the tokens)\n"
    "  --ctx N             training context written to the metadata\n"
    "  --rope-base F       rope frequency base\n"
    "  --swa-window N      gemma3 sliding window (every 6th layer is global); phi3\n"
    "                      writes it as its files do (llama.cpp ignores it)\n"
    "  --type T            layer matrices: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0\n"
    "                      q4_k q5_k q6_k\n"
    "  --embd-type T       token_embd\n"
    "  --output-type T     output.weight (implies --untied)\n"
    "  --mix-type T        attn_v and ffn_down of llama.cpp's more-bits layers (the\n"
    "                      first and last eighth, every third between), as its _M mixes\n"
    "  --tied, --untied    share token_embd as the head, or write output.weight\n"
    "  --seed N            weight seed\n"
    "  --threads N         writer threads (default: all cores; same bytes)\n"
    "  --name S            general.name\n"
    "  -h, --help          this text\n"
    "\n"
    "presets:\n"
    "  tiny          llama, 2 layers, embd 64, 4/2 heads, ff 128, vocab 320\n"
    "  llama-1b      llama, 16 layers, embd 2048, 32/8 heads, ff 8192, vocab 32000,\n"
    "                ctx 8192, tied (1.04B parameters)\n"
    "  llama-1b-q4_k_m, llama-1b-q4_0, llama-1b-q8_0\n"
    "                llama-1b in the types llama-quantize gives a tied 1B model:\n"
    "                Q4_K_M: q4_K layers, q6_K attn_v and ffn_down in the more-bits\n"
    "                layers, q6_K embedding (it is the head); Q4_0: q4_0 layers, q6_K\n"
    "                embedding; Q8_0: q8_0 throughout\n"
    "  mistral-7b-q4_k_m\n"
    "                llama, 32 layers, embd 4096, 32/8 heads, ff 14336, vocab 32000,\n"
    "                ctx 32768, rope 1e6, untied; Q4_K_M: q4_K layers and embedding,\n"
    "                q6_K attn_v/ffn_down in the more-bits layers, q6_K output (7.24B\n"
    "                parameters, 4.1 GiB)\n"
    "  smollm2-135m  llama, 30 layers, embd 576, 9/3 heads, ff 1536, vocab 49152,\n"
    "                ctx 8192, rope 100000, tied (134.5M parameters)\n"
    "  gemma3-270m   gemma3, 18 layers, embd 640, 4/1 heads, head dim 256, ff 2048,\n"
    "                vocab 262144, ctx 32768, rope 1e6, window 512, tied, q5_0 layers\n"
    "                (268.1M parameters)\n"
    "All presets use q4_1 layers (gemma3-270m: q5_0, as 640-wide rows cannot take\n"
    "k-quants) and a q8_0 embedding unless --type / --embd-type say otherwise.\n"
    "\n"
    "exit status: 0 written, 1 write failed (no partial file is left), 2 bad options\n";

enum {
    O_OUT = 'o',
    O_HELP = 'h',
    O_PRESET = 256,
    O_ARCH,
    O_LAYERS,
    O_EMBD,
    O_HEADS,
    O_KVH,
    O_HD,
    O_FF,
    O_VOCAB,
    O_CTX,
    O_ROPE,
    O_SWA,
    O_TYPE,
    O_ETYPE,
    O_OTYPE,
    O_TIED,
    O_UNTIED,
    O_SEED,
    O_THREADS,
    O_NAME,
    O_MTYPE,
    O_VOCABF,
    O_ROPEF,
    O_QLORA,
    O_KVLORA,
    O_NOPE,
    O_QROPE,
    O_VHD,
};

/* A message for a bad option; returns the exit status 2. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("cachet-synth: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "cachet-synth: option '%s': '%s' is not an integer in [%ld, %ld]\n", opt, s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_type(const char *opt, const char *s, uint32_t *out) {
    for (uint32_t t = 0; t < ENG_TYPE_COUNT; t++) {
        const eng_type_traits *tr = eng_type_get(t);
        if (tr && tr->name && strcasecmp(tr->name, s) == 0 && synth_type_ok(t)) {
            *out = t;
            return 0;
        }
    }
    fprintf(stderr,
            "cachet-synth: option '%s': '%s' is not one of f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q4_k "
            "q5_k q6_k\n",
            opt, s);
    return -1;
}

static int apply_preset(synth_params *p, const char *name) {
    *p = synth_defaults();
    if (strcmp(name, "tiny") == 0) return 0;
    if (strcmp(name, "llama-1b") == 0) {
        p->n_layer = 16, p->n_embd = 2048, p->n_head = 32, p->n_kv_head = 8, p->n_ff = 8192;
        p->n_vocab = 32000, p->n_ctx = 8192, p->rope_base = 500000.0f;
        return 0;
    }
    if (strncmp(name, "llama-1b-", 9) == 0) {
        const char *mix = name + 9;
        if (apply_preset(p, "llama-1b")) return -1;
        if (strcmp(mix, "q4_k_m") == 0) {
            p->wtype = ENG_TYPE_Q4_K, p->mix_type = ENG_TYPE_Q6_K, p->etype = ENG_TYPE_Q6_K;
        } else if (strcmp(mix, "q4_0") == 0) {
            p->wtype = ENG_TYPE_Q4_0, p->etype = ENG_TYPE_Q6_K;
        } else if (strcmp(mix, "q8_0") == 0) {
            p->wtype = ENG_TYPE_Q8_0, p->etype = ENG_TYPE_Q8_0;
        } else {
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "mistral-7b-q4_k_m") == 0) {
        p->n_layer = 32, p->n_embd = 4096, p->n_head = 32, p->n_kv_head = 8, p->n_ff = 14336;
        p->n_vocab = 32000, p->n_ctx = 32768, p->rope_base = 1e6f, p->tied = 0;
        p->wtype = ENG_TYPE_Q4_K, p->mix_type = ENG_TYPE_Q6_K, p->etype = ENG_TYPE_Q4_K;
        p->otype = ENG_TYPE_Q6_K;
        return 0;
    }
    if (strcmp(name, "smollm2-135m") == 0) {
        p->n_layer = 30, p->n_embd = 576, p->n_head = 9, p->n_kv_head = 3, p->n_ff = 1536;
        p->n_vocab = 49152, p->n_ctx = 8192, p->rope_base = 100000.0f;
        return 0;
    }
    if (strcmp(name, "gemma3-270m") == 0) {
        p->arch = SYNTH_ARCH_GEMMA3;
        p->n_layer = 18, p->n_embd = 640, p->n_head = 4, p->n_kv_head = 1, p->head_dim = 256;
        p->n_ff = 2048, p->n_vocab = 262144, p->n_ctx = 32768, p->rope_base = 1e6f;
        p->swa_window = 512, p->wtype = ENG_TYPE_Q5_0;
        return 0;
    }
    return -1;
}

/* One explicit option onto p; 0, or 2 after a message. */
static int apply_opt(synth_params *p, int c, const char *a) {
    char *end;
    switch (c) {
    case O_ARCH:
        if (strcmp(a, "llama") == 0)
            p->arch = SYNTH_ARCH_LLAMA;
        else if (strcmp(a, "gemma3") == 0)
            p->arch = SYNTH_ARCH_GEMMA3;
        else if (strcmp(a, "qwen2") == 0)
            p->arch = SYNTH_ARCH_QWEN2;
        else if (strcmp(a, "qwen3") == 0)
            p->arch = SYNTH_ARCH_QWEN3;
        else if (strcmp(a, "phi3") == 0)
            p->arch = SYNTH_ARCH_PHI3;
        else if (strcmp(a, "deepseek2") == 0)
            p->arch = SYNTH_ARCH_DEEPSEEK2;
        else
            return bad("option '--arch': '%s' is not llama, gemma3, qwen2, qwen3, phi3 or deepseek2", a);
        return 0;
    case O_LAYERS: return parse_int("--layers", a, 1, 1 << 24, &p->n_layer) ? 2 : 0;
    case O_EMBD: return parse_int("--embd", a, 1, 1 << 24, &p->n_embd) ? 2 : 0;
    case O_HEADS: return parse_int("--heads", a, 1, 1 << 24, &p->n_head) ? 2 : 0;
    case O_KVH: return parse_int("--kv-heads", a, 1, 1 << 24, &p->n_kv_head) ? 2 : 0;
    case O_HD: return parse_int("--head-dim", a, 0, 1 << 24, &p->head_dim) ? 2 : 0;
    case O_FF: return parse_int("--ff", a, 1, 1 << 24, &p->n_ff) ? 2 : 0;
    case O_VOCAB: return parse_int("--vocab", a, 1, 1 << 24, &p->n_vocab) ? 2 : 0;
    case O_CTX: return parse_int("--ctx", a, 1, 1 << 24, &p->n_ctx) ? 2 : 0;
    case O_SWA: return parse_int("--swa-window", a, 1, 1 << 24, &p->swa_window) ? 2 : 0;
    case O_THREADS: return parse_int("--threads", a, 1, 256, &p->n_threads) ? 2 : 0;
    case O_ROPE:
        errno = 0;
        p->rope_base = strtof(a, &end);
        if (errno || end == a || *end || !(p->rope_base > 0))
            return bad("option '--rope-base': '%s' is not a positive number", a);
        return 0;
    case O_SEED:
        errno = 0;
        p->seed = strtoull(a, &end, 10);
        if (errno || end == a || *end || a[0] == '-')
            return bad("option '--seed': '%s' is not an unsigned integer", a);
        return 0;
    case O_TYPE: return parse_type("--type", a, &p->wtype) ? 2 : 0;
    case O_ETYPE: return parse_type("--embd-type", a, &p->etype) ? 2 : 0;
    case O_OTYPE: p->tied = 0; return parse_type("--output-type", a, &p->otype) ? 2 : 0;
    case O_MTYPE: return parse_type("--mix-type", a, &p->mix_type) ? 2 : 0;
    case O_TIED: p->tied = 1; return 0;
    case O_UNTIED: p->tied = 0; return 0;
    case O_NAME: p->name = a; return 0;
    case O_VOCABF: p->vocab = a; return 0;
    case O_ROPEF: p->rope_freqs = 1; return 0;
    case O_QLORA: return parse_int("--q-lora-rank", a, 0, 1 << 24, &p->q_lora_rank) ? 2 : 0;
    case O_KVLORA: return parse_int("--kv-lora-rank", a, 1, 1 << 24, &p->kv_lora_rank) ? 2 : 0;
    case O_NOPE: return parse_int("--qk-nope", a, 1, 1 << 24, &p->qk_nope) ? 2 : 0;
    case O_QROPE: return parse_int("--qk-rope", a, 2, 1 << 24, &p->qk_rope) ? 2 : 0;
    case O_VHD: return parse_int("--v-head-dim", a, 1, 1 << 24, &p->v_head_dim) ? 2 : 0;
    default: return bad("internal: option %d", c);
    }
}

/* n with thousands separators. */
static void group(char *buf, size_t cap, unsigned long long n) {
    char raw[32];
    snprintf(raw, sizeof raw, "%llu", n);
    size_t len = strlen(raw), k = 0;
    for (size_t i = 0; i < len && k + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = '\0';
}

int main(int argc, char **argv) {
    static const struct option opts[] = {{"output", required_argument, 0, O_OUT},
                                         {"preset", required_argument, 0, O_PRESET},
                                         {"arch", required_argument, 0, O_ARCH},
                                         {"layers", required_argument, 0, O_LAYERS},
                                         {"embd", required_argument, 0, O_EMBD},
                                         {"heads", required_argument, 0, O_HEADS},
                                         {"kv-heads", required_argument, 0, O_KVH},
                                         {"head-dim", required_argument, 0, O_HD},
                                         {"ff", required_argument, 0, O_FF},
                                         {"vocab", required_argument, 0, O_VOCAB},
                                         {"ctx", required_argument, 0, O_CTX},
                                         {"rope-base", required_argument, 0, O_ROPE},
                                         {"swa-window", required_argument, 0, O_SWA},
                                         {"type", required_argument, 0, O_TYPE},
                                         {"embd-type", required_argument, 0, O_ETYPE},
                                         {"output-type", required_argument, 0, O_OTYPE},
                                         {"tied", no_argument, 0, O_TIED},
                                         {"untied", no_argument, 0, O_UNTIED},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"threads", required_argument, 0, O_THREADS},
                                         {"name", required_argument, 0, O_NAME},
                                         {"help", no_argument, 0, O_HELP},
                                         {"mix-type", required_argument, 0, O_MTYPE},
                                         {"vocab-file", required_argument, 0, O_VOCABF},
                                         {"rope-freqs", no_argument, 0, O_ROPEF},
                                         {"q-lora-rank", required_argument, 0, O_QLORA},
                                         {"kv-lora-rank", required_argument, 0, O_KVLORA},
                                         {"qk-nope", required_argument, 0, O_NOPE},
                                         {"qk-rope", required_argument, 0, O_QROPE},
                                         {"v-head-dim", required_argument, 0, O_VHD},
                                         {0, 0, 0, 0}};
    /* Options are kept in order and applied after the preset, so they
     * override it wherever they stand on the line. */
    int *codes = calloc((size_t)argc + 1, sizeof *codes);
    const char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!codes || !args) {
        fprintf(stderr, "cachet-synth: out of memory\n");
        return 1;
    }
    const char *out = NULL, *preset = "tiny";
    int n = 0, c, rc = 0;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (c == O_HELP) {
            fputs(usage, stdout);
            goto done;
        } else if (c == O_OUT) {
            out = optarg;
        } else if (c == O_PRESET) {
            preset = optarg;
        } else if (c == '?' || c == ':') {
            fprintf(stderr, "cachet-synth: unknown or incomplete option '%s'\n%s", argv[optind - 1], usage);
            rc = 2;
        } else {
            codes[n] = c;
            args[n++] = optarg;
        }
    }
    if (rc) goto done;
    if (optind < argc) {
        rc = bad("unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (!out) {
        fprintf(stderr, "cachet-synth: -o PATH is required\n%s", usage);
        rc = 2;
        goto done;
    }
    synth_params p;
    if (apply_preset(&p, preset)) {
        rc = bad(
            "unknown preset '%s' (tiny, llama-1b, llama-1b-q4_k_m, llama-1b-q4_0, llama-1b-q8_0, smollm2-135m, gemma3-270m)",
            preset);
        goto done;
    }
    for (int i = 0; i < n && rc == 0; i++) rc = apply_opt(&p, codes[i], args[i]);
    if (rc) goto done;
    if (p.arch == SYNTH_ARCH_DEEPSEEK2) { /* the latent shape's defaults; kv heads are the heads */
        if (!p.kv_lora_rank) p.kv_lora_rank = 64;
        if (!p.qk_nope) p.qk_nope = 32;
        if (!p.qk_rope) p.qk_rope = 16;
        if (!p.v_head_dim) p.v_head_dim = 32;
        p.n_kv_head = p.n_head;
    }
    util_err err;
    util_err_clear(&err);
    if (synth_check(&p, &err)) {
        fprintf(stderr, "cachet-synth: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (synth_write(out, &p, &err)) {
        fprintf(stderr, "cachet-synth: %s\n", err.msg);
        rc = err.code == UTIL_EINVAL || err.code == UTIL_EUNSUPPORTED ? 2 : 1;
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct stat st;
    unsigned long long size = stat(out, &st) == 0 ? (unsigned long long)st.st_size : 0;
    long long params = (long long)synth_param_count(&p);
    char ps[32], ss[32];
    group(ps, sizeof ps, (unsigned long long)params);
    group(ss, sizeof ss, size);
    printf("%s: %s, %s parameters (%.1fM), %s bytes (%.1f MiB), %.2f s\n", out,
           p.arch == SYNTH_ARCH_GEMMA3      ? "gemma3"
           : p.arch == SYNTH_ARCH_QWEN2     ? "qwen2"
           : p.arch == SYNTH_ARCH_QWEN3     ? "qwen3"
           : p.arch == SYNTH_ARCH_PHI3      ? "phi3"
           : p.arch == SYNTH_ARCH_DEEPSEEK2 ? "deepseek2"
                                            : "llama",
           ps, (double)params / 1e6, ss, (double)size / (1024.0 * 1024.0),
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
done:
    free(codes);
    free(args);
    return rc;
}
