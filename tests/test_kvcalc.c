/* tests/test_kvcalc.c: `cachet kv` as the KV-memory calculator of issue 17:
 * every figure checked against the arithmetic done by hand in the comments
 * (the seed's worked example, Gemma 2 27B's real shape with its sliding
 * layers, quantized K/V, MLA, StreamingLLM, a heavy-hitter budget, the
 * presets, a GGUF file's metadata) and the usage errors. No model is run. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

/* Runs `cachet kv ARGS` and checks that it exits 0 and prints every string
 * of want (NULL-ended). */
static void kv_has(const char *args, const char *const *want) {
    proc_result r = proc_runf("%s/cachet kv %s", proc_bin_dir(), args);
    CHECK_MSG(r.status == 0, "cachet kv %s: exit %d: %s", args, r.status, r.err);
    for (size_t i = 0; want[i]; i++)
        CHECK_MSG(r.out && strstr(r.out, want[i]), "cachet kv %s: no '%s' in:\n%s", args, want[i], r.out);
    proc_result_free(&r);
}

static void kv_usage_error(const char *args) {
    proc_result r = proc_runf("%s/cachet kv %s", proc_bin_dir(), args);
    CHECK_MSG(r.status == 2 && r.err && strstr(r.err, "cachet"), "cachet kv %s: exit %d: %s", args, r.status,
              r.err);
    proc_result_free(&r);
}

void test_kvcalc(void) {
    /* The seed's worked example: 46 layers x 32 kv heads x 128 dims x 2 (K, V) x 2 bytes = 753,664 B/token;
     * 80 GiB = 85,899,345,920 B / 753,664 = 113,975.65 -> 113,975 tokens (~114k). */
    CHECK_CASE(seed) {
        kv_has("--layers 46 --kv-heads 32 --head-dim 128 --memory 80GiB",
               (const char *const[]){"753,664", "113,975", "about 114k", NULL});
        kv_has("--layers 46 --kv-heads 32 --head-dim 128 --memory 80GiB --json",
               (const char *const[]){"\"bytes_per_token\":753664,\"tokens\":113975", NULL});
    }
    /* Gemma 2 27B as published: 16 kv heads, so 46 x 16 x 128 x 2 x 2 = 376,832 B/token (half the seed's),
     * 80 GiB / 376,832 = 227,951.3 -> 227,951 tokens; with 32 kv heads (MHA) it would be the seed's 753,664.
     * Sliding layers: the even ones, 23 of 46, window 4096. At 8192 tokens the 23 global layers hold
     * 23 x 16 x 128 x 4 = 188,416 B x 8192 = 1,543,503,872 B; the sliding ones hold the window rounded up to
     * 16-token pages plus the page being written, 4096 + 16 = 4112 positions: 188,416 x 4112 = 774,766,592;
     * total 2,318,270,464 against 376,832 x 8192 = 3,087,007,744 keeping every position. In 80 GiB
     * window-aware: (85,899,345,920 - 774,766,592) / 188,416 = 451,790.2 -> 451,790 tokens. */
    CHECK_CASE(gemma2_27b) {
        kv_has("--preset gemma2-27b --memory 80GiB",
               (const char *const[]){
                   "bytes per token: 376,832", "227,951", "23 of 46 layers see the last 4096",
                   "1,543,503,872 + sliding layers 774,766,592 = 2,318,270,464", "3,087,007,744",
                   "window-aware: 451,790", "it would be 753,664", "GQA saves 2.0x", NULL});
        /* the same from flags, the pattern 1:1 giving the 23 sliding layers */
        kv_has("--layers 46 --kv-heads 16 --head-dim 128 --heads 32 --window 4096 --pattern 1:1 --json",
               (const char *const[]){"\"bytes_per_token\":376832", "\"sliding_layers\":23",
                                     "\"ctx_bytes_window_aware\":2318270464",
                                     "\"mha_bytes_per_token\":753664", NULL});
    }
    /* Gemma 3 27B: 62 x 16 x 128 x 4 = 507,904 B/token; pattern 5:1 over 62 layers: 10 groups of 6 give 50
     * sliding, layers 60 and 61 (60 % 6 = 0, 61 % 6 = 1) two more: 52 sliding, 10 global. At 131,072:
     * global 10 x 8,192 B x 131,072 = 10,737,418,240; sliding 52 x 8,192 x (1024 + 16) = 443,023,360. */
    CHECK_CASE(gemma3_27b) {
        kv_has("--preset gemma3-27b --ctx 131072",
               (const char *const[]){"507,904", "52 of 62 layers see the last 1024",
                                     "10,737,418,240 + sliding layers 443,023,360", NULL});
    }
    /* Quantized KV on Llama 3 8B (32 x 8 x 128 = 32,768 values per token for K, as many for V):
     * f16 2 x 32,768 x 2 = 131,072; q8_0 (34 B per 32) 65,536 x 34/32 = 69,632; q4_0 (18 B per 32)
     * 65,536 x 18/32 = 36,864; K q8_0 + V q4_0: 32,768 x (34 + 18)/32 = 53,248. */
    CHECK_CASE(kv_types) {
        kv_has("--preset llama3-8b",
               (const char *const[]){"bytes per token: 131,072", "GQA saves 4.0x", NULL});
        kv_has("--preset llama3-8b --kv-type q8_0", (const char *const[]){"bytes per token: 69,632", NULL});
        kv_has("--preset llama3-8b --kv-type q4_0", (const char *const[]){"bytes per token: 36,864", NULL});
        kv_has("--preset llama3-8b --kv-type-k q8_0 --kv-type-v q4_0 --json",
               (const char *const[]){"\"bytes_per_token\":53248", "\"dtype\":\"q8_0/q4_0\"",
                                     "\"kv_type_k\":\"q8_0\",\"kv_type_v\":\"q4_0\"", NULL});
        /* --dtype stays the same option */
        kv_has("--layers 4 --kv-heads 2 --head-dim 32 --dtype q8_0 --json",
               (const char *const[]){"\"bytes_per_token\":544", NULL}); /* 4 x 2 x 32 x 2 x 34/32 */
    }
    /* DeepSeek-V3's MLA: 61 layers x (512 latent + 64 rope) x 2 bytes = 70,272 B/token; full MHA with its 128
     * heads of 192 K dims and 128 V dims: 61 x 128 x (192 + 128) x 2 = 4,997,120 (71.1x). In 80 GiB:
     * 85,899,345,920 / 70,272 = 1,222,383.6 -> 1,222,383. */
    CHECK_CASE(mla) {
        kv_has("--preset deepseek-v3 --memory 80GiB",
               (const char *const[]){"(512 latent + 64 rope)", "bytes per token: 70,272", "1,222,383",
                                     "4,997,120", "MLA saves 71.1x", NULL});
        /* from flags: 2 layers x (16 + 4) x 2 = 80 */
        kv_has("--layers 2 --mla-rank 16 --rope-dim 4 --json",
               (const char *const[]){"\"bytes_per_token\":80", "\"mla_rank\":16,\"rope_dim\":4", NULL});
    }
    /* StreamingLLM on Llama 3 70B (80 x 8 x 128 x 4 = 327,680 B/token): 4 sinks + 4092 recent = 4096
     * positions, 327,680 x 4096 = 1,342,177,280 B at any length; 131,072 positions would take
     * 42,949,672,960 (32.0x). A heavy-hitter budget of 2048 on Qwen2.5 7B (28 x 4 x 128 x 4 = 57,344 B):
     * 117,440,512 B at 32,768 tokens against 1,879,048,192 (16.0x). */
    CHECK_CASE(streaming_budget) {
        kv_has("--preset llama3-70b --sinks 4 --window 4092 --ctx 131072",
               (const char *const[]){"327,680", "first 4 positions (sinks) and the last 4092",
                                     "4096 positions kept, 1,342,177,280 bytes", "42,949,672,960 (32.0x)",
                                     "any number", NULL});
        kv_has("--preset qwen2.5-7b --budget-tokens 2048 --ctx 32768 --json",
               (const char *const[]){"\"bytes_per_token\":57344", "\"budget_tokens\":2048",
                                     "\"ctx_bytes\":117440512", "\"ctx_bytes_keep_all\":1879048192", NULL});
        /* a budget larger than the context keeps everything: 8 positions x 57,344 */
        kv_has("--preset qwen2.5-7b --budget-tokens 2048 --ctx 8 --json",
               (const char *const[]){"\"ctx_positions_kept\":8,\"ctx_bytes\":458752", NULL});
        /* Mistral 7B v0.1 slides on every layer: the cache stops growing */
        kv_has("--preset mistral-7b",
               (const char *const[]){"131,072", "32 of 32 layers", "any number", NULL});
    }
    /* A GGUF file: SmolLM2-135M, 30 layers x 3 kv heads x 64 dims: f16 30 x 3 x 64 x 4 = 23,040 B/token,
     * q8_0 11,520 x 34/32 = 12,240. */
    CHECK_CASE(model) {
        const char *m = check_model_path();
        if (!m || access(m, R_OK) != 0) {
            CHECK_SKIP("the default model is absent (make model)");
        } else {
            char args[4200];
            snprintf(args, sizeof args, "--model '%s' --kv-type q8_0 --json", m);
            kv_has(args, (const char *const[]){"\"bytes_per_token\":12240", "\"kv_heads\":3", NULL});
        }
    }
    CHECK_CASE(errors) {
        kv_usage_error("--preset gemma9-1t");
        kv_usage_error("--preset llama3-8b --kv-type q5_1");
        kv_usage_error("--preset llama3-8b --sinks 4"); /* no window */
        kv_usage_error("--preset llama3-8b --sinks 4 --window 8 --pattern 1:1");
        kv_usage_error("--layers 4 --kv-heads 2 --head-dim 8 --window 8 --pattern x");
        kv_usage_error("--layers 4 --kv-heads 2 --head-dim 8 --window 8"); /* no sliding layers */
        kv_usage_error("--preset llama3-8b --model x.gguf");
    }
}
