/* tests/test_bench.c: `cachet bench` as a user runs it: option errors, and the
 * --json fields of a tiny run after a context (--depth) beside a fake
 * llama-bench (a shell script that records its arguments): test names, bytes
 * per token with the context's KV, the bandwidth labels and buffer sizes, the
 * load check and the ratios it withholds; the window-aware KV read on Gemma 3;
 * a tiny `cachet bench serve` and its first-failure report. No
 * timing is asserted. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"

static void test_options(const char *model) {
    const char *bad[] = {"--depth -1", "--depth x", "--depth 999999", "--depth", "--frobnicate"};
    for (int i = 0; i < 5; i++) {
        proc_result r = proc_runf("%s/cachet bench --model '%s' --no-llama %s", proc_bin_dir(), model,
                                  bad[i]);
        CHECK_MSG(r.status == 2, "bench %s: exit %d", bad[i], r.status);
        proc_result_free(&r);
    }
    proc_result r = proc_runf("%s/cachet bench --help", proc_bin_dir());
    CHECK(r.status == 0 && strstr(r.out, "--depth N") && strstr(r.out, "--force"));
    proc_result_free(&r);
}

static double num(const cJSON *j, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *j, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A llama-bench that prints fixed figures and writes its argv to DIR/args. */
static int fake_llama(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/llama-bench", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f,
            "#!/bin/sh\necho \"$@\" > '%s/args'\n"
            "echo '[{\"n_prompt\":8,\"n_gen\":0,\"avg_ts\":100.0},{\"n_prompt\":0,\"n_gen\":2,\"avg_ts\":"
            "10.0}]'\n",
            dir);
    fclose(f);
    return chmod(path, 0755);
}

/* One run per --force setting: the ratios are there exactly when the machine
 * was quiet by the bench's own threshold, or forced. */
static void test_json(const char *model) {
    char dir[] = "/tmp/cachet-bench-XXXXXX";
    if (!mkdtemp(dir)) return;
    CHECK_EQ_INT(fake_llama(dir), 0);
    for (int force = 0; force < 2; force++) {
        proc_result r = proc_runf("%s/cachet bench --model '%s' --prompt-tokens 8 --gen-tokens 2 --depth 16 "
                                  "--reps 1 --threads 1 --llama-cpp %s --json%s",
                                  proc_bin_dir(), model, dir, force ? " --force" : "");
        cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
        CHECK_MSG(j != NULL, "bench --json: %d %s", r.status, r.err);
        if (j) {
            CHECK_EQ_INT((long)num(j, "depth"), 16);
            CHECK_EQ_STR(str(j, "pp_test"), "pp8 @ d16");
            CHECK_EQ_STR(str(j, "tg_test"), "tg2 @ d16");
            CHECK_EQ_STR(str(j, "bandwidth_method"), "streaming read, 1 threads");
            /* KV per token: the 16-token context plus the mean of the 2 tg positions */
            double kv = num(j, "decode_kv_bytes_per_token"), w = num(j, "decode_weight_bytes_per_token");
            CHECK_MSG(kv > 0 && w > 0 && num(j, "decode_bytes_per_token") == kv + w, "kv %.0f w %.0f", kv, w);
            eng_model_shape sh;
            util_err err;
            CHECK_EQ_INT(eng_model_shape_read(model, &sh, &err), 0);
            CHECK_MSG(kv == 17.5 * eng_kv_bytes_per_token(&sh, 2), "kv %.0f", kv);
            double llc = num(j, "llc_bytes"), buf = num(j, "dram_buffer_bytes");
            CHECK_MSG(buf > 0 && (llc <= 0 || buf > llc), "dram buffer %.0f, llc %.0f", buf, llc);
            int cores = (int)num(j, "cores");
            CHECK(cores >= 1 && num(j, "load_threshold") == 0.5 * cores);
            int loaded = cJSON_IsTrue(cJSON_GetObjectItem(j, "loaded"));
            CHECK_EQ_INT(loaded, num(j, "load_average") > num(j, "load_threshold"));
            int withheld = cJSON_IsTrue(cJSON_GetObjectItem(j, "ratios_withheld"));
            CHECK_EQ_INT(withheld, loaded && !force);
            CHECK_EQ_INT(cJSON_IsObject(cJSON_GetObjectItem(j, "ratio")), !withheld);
            CHECK(cJSON_IsArray(cJSON_GetObjectItem(j, "warnings")));
            if (loaded) CHECK(strstr(r.err, "load average") != NULL);
            cJSON *l = cJSON_GetObjectItem(j, "llama_cpp");
            CHECK(cJSON_IsObject(cJSON_GetObjectItem(l, "tg_tps")));
        }
        cJSON_Delete(j);
        proc_result_free(&r);
    }
    /* llama-bench ran at the same depth */
    proc_result a = proc_runf("cat %s/args", dir);
    CHECK_MSG(strstr(a.out, "-d 16") && strstr(a.out, "-p 8") && strstr(a.out, "-n 2"), "args: %s", a.out);
    proc_result_free(&a);
    proc_result rm = proc_runf("rm -rf %s", dir);
    proc_result_free(&rm);
}

/* cachet bench serve, tiny: every request answered, the shared system prompt
 * served from cache after the first requests, the figures present; no
 * llama-server (its absence is said). Also --spec ngram is taken. */
static void test_serve(const char *model) {
    proc_result r = proc_runf("%s/cachet bench serve --model '%s' --clients 2 --requests 2 --max-tokens 4 "
                              "--system 64 --parallel 2 --threads 2 --no-llama --json --spec ngram",
                              proc_bin_dir(), model);
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    CHECK_MSG(j != NULL, "bench serve: %d %s", r.status, r.err);
    cJSON *c = cJSON_GetObjectItem(j, "cachet");
    if (j) {
        CHECK_EQ_INT((long)num(c, "requests"), 4);
        CHECK_EQ_INT((long)num(c, "failed"), 0);
        CHECK_EQ_INT((long)num(c, "completion_tokens"), 16);
        CHECK(num(c, "prompt_tokens") > 64 * 4 && num(c, "cached_tokens") > 0);
        CHECK(num(c, "cached_share") > 0 && num(c, "cached_share") < 1);
        CHECK(num(c, "wall_s") > 0 && num(c, "generated_tps") > 0);
        CHECK(num(c, "latency_p50_s") > 0 && num(c, "latency_p95_s") >= num(c, "latency_p50_s"));
        /* two streamed requests alone after the load: 3 tokens after the first each */
        CHECK_EQ_INT((long)num(c, "single_stream_tokens"), 6);
        CHECK(num(c, "single_stream_tps") > 0);
        CHECK(fabs(num(c, "aggregate_over_single") - num(c, "generated_tps") / num(c, "single_stream_tps")) <
              1e-6);
        CHECK_EQ_STR(str(j, "spec"), "ngram");
        CHECK(strstr(str(cJSON_GetObjectItem(j, "llama_server"), "note"), "not run") != NULL);
    }
    cJSON_Delete(j);
    proc_result_free(&r);
    r = proc_runf("%s/cachet bench serve --clients 0", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    /* a system prompt over the context: every request fails, and the first
     * failure's status and body are printed (text and JSON) */
    r = proc_runf("%s/cachet bench serve --model '%s' --clients 1 --requests 2 --max-tokens 4 --system 600 "
                  "--ctx-size 128 --parallel 1 --threads 2 --no-llama",
                  proc_bin_dir(), model);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.out, "cachet serve: first failure: HTTP 400: ") &&
                  strstr(r.out, "context_length_exceeded"),
              "no first failure in: %s", r.out);
    proc_result_free(&r);
    r = proc_runf("%s/cachet bench serve --model '%s' --clients 1 --requests 1 --max-tokens 4 --system 600 "
                  "--ctx-size 128 --parallel 1 --threads 2 --no-llama --json",
                  proc_bin_dir(), model);
    j = cJSON_Parse(r.out);
    c = cJSON_GetObjectItem(j, "cachet");
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(c && (long)num(c, "failed") == 1 && strstr(str(c, "first_failure"), "HTTP 400"), "json: %s",
              r.out);
    cJSON_Delete(j);
    proc_result_free(&r);
}

/* Gemma 3 after a context longer than its window: decode's KV read counts
 * every position on the global layers and the window on the sliding ones. */
static void test_window(void) {
    const char *gp = th_gemma3_path();
    if (!gp) {
        CHECK_SKIP("models/gemma-3-270m-q4_k_m.gguf is absent (make model-gemma3)");
        return;
    }
    eng_model_shape sh;
    util_err err;
    CHECK_EQ_INT(eng_model_shape_read(gp, &sh, &err), 0);
    CHECK_MSG(sh.n_swa == 512 && sh.n_layer_swa > 0 && sh.n_layer_swa < sh.n_layer, "swa %d, %d of %d layers",
              sh.n_swa, sh.n_layer_swa, sh.n_layer);
    proc_result r = proc_runf(
        "env -u LLAMA_CPP_DIR %s/cachet bench --model '%s' --prompt-tokens 8 --gen-tokens 2 "
        "--depth 600 --reps 1 --threads 2 --json",
        proc_bin_dir(), gp);
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    CHECK_MSG(j != NULL, "bench --json: %d %s", r.status, r.err);
    double layer = eng_kv_bytes_per_token(&sh, 2) / sh.n_layer, kv = num(j, "decode_kv_bytes_per_token");
    /* contexts 601 and 602: their mean on global layers, 512 on sliding ones */
    double want = layer * ((sh.n_layer - sh.n_layer_swa) * 601.5 + sh.n_layer_swa * 512.0);
    CHECK_MSG(j && kv > want - 1 && kv < want + 1, "kv %.0f, want %.0f", kv, want);
    cJSON_Delete(j);
    proc_result_free(&r);
}

void test_bench(void) {
    const char *model = check_model_path();
    if (!model) {
        CHECK_MSG(0, "bench tests need the model (make model)");
        return;
    }
    CHECK_CASE(options) test_options(model);
    CHECK_CASE(json) test_json(model);
    CHECK_CASE(serve) test_serve(model);
    CHECK_CASE(window) test_window();
}
