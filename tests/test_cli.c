/* tests/test_cli.c: bin/cachet as a user runs it: help and usage errors,
 * missing and corrupt model files (exit 1 with a message, never a signal),
 * generate --chat --json on the real model, tokenize, context limits. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "check.h"
#include "proc.h"

static void test_usage(void) {
    proc_result r = proc_runf("%s/cachet --help", proc_bin_dir());
    CHECK_EQ_INT(r.status, 0);
    CHECK(strstr(r.out, "generate") != NULL);
    proc_result_free(&r);
    r = proc_runf("%s/cachet generate --help", proc_bin_dir());
    CHECK_EQ_INT(r.status, 0);
    CHECK(strstr(r.out, "--max-tokens") != NULL);
    proc_result_free(&r);
    r = proc_runf("%s/cachet generate", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    r = proc_runf("%s/cachet generate --prompt x --temp abc", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    CHECK(strstr(r.err, "--temp") != NULL);
    proc_result_free(&r);
    r = proc_runf("%s/cachet frobnicate", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    r = proc_runf("%s/cachet generate --model /nonexistent/x.gguf --prompt hi", proc_bin_dir());
    CHECK_EQ_INT(r.status, 1);
    CHECK(strstr(r.err, "/nonexistent/x.gguf") != NULL);
    proc_result_free(&r);
    r = proc_runf("cd / && CACHET_MODEL= %s/cachet tokenize --model /tmp/definitely-missing.gguf hi", proc_bin_dir());
    CHECK_EQ_INT(r.status, 1);
    proc_result_free(&r);
}

/* util/path.h's search orders seen from an installed layout: a copy of
 * cachet in DIR/bin finds its data in DIR/share/cachet and the default model
 * in DIR/share/cachet/models from any directory; with no model anywhere the
 * message names every place searched. */
static void test_search_order(const char *model) {
    char dir[] = "/tmp/cachet-inst-XXXXXX";
    if (!mkdtemp(dir)) return;
    proc_result r = proc_runf("mkdir -p %s/bin %s/share/cachet/models %s/xdg && cp %s/cachet %s/bin/ && "
                              "cp -R %s/prompts %s/skills %s/share/cachet/",
                              dir, dir, dir, proc_bin_dir(), dir, check_root(), check_root(), dir);
    CHECK_EQ_INT(r.status, 0);
    proc_result_free(&r);
    const char *env = "CACHET_MODEL= CACHET_DATA= XDG_DATA_HOME=";
    r = proc_runf("cd / && %s%s/xdg %s/bin/cachet tokenize hi", env, dir, dir);
    CHECK_EQ_INT(r.status, 1);
    char want[4][512];
    snprintf(want[0], sizeof want[0], "'%s/xdg/cachet/models/SmolLM2-135M-Instruct.Q4_1.gguf'", dir);
    snprintf(want[1], sizeof want[1], "'%s/share/cachet/models/SmolLM2-135M-Instruct.Q4_1.gguf'", dir);
    snprintf(want[2], sizeof want[2], "'models/SmolLM2-135M-Instruct.Q4_1.gguf'");
    snprintf(want[3], sizeof want[3], "'%s/models/SmolLM2-135M-Instruct.Q4_1.gguf'", dir);
    for (int i = 0; i < 4; i++) CHECK_MSG(strstr(r.err, want[i]) != NULL, "no %s in: %s", want[i], r.err);
    proc_result_free(&r);
    char abs[PATH_MAX], ws[PATH_MAX];
    if (realpath(model, abs) && realpath(check_root(), ws)) {
        r = proc_runf("ln -s '%s' %s/share/cachet/models/SmolLM2-135M-Instruct.Q4_1.gguf && cd / && %s%s/xdg "
                      "%s/bin/cachet prompt --workspace %s/examples/workspace",
                      abs, dir, env, dir, dir, ws);
        CHECK_MSG(r.status == 0 && strstr(r.out, "tier 0"), "installed cachet prompt: %d %s", r.status, r.err);
        proc_result_free(&r);
    }
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}

/* Every command that opens a model takes every engine option (cli/opts.c),
 * lists it in its --help and refuses a bad value with exit 2 and a message
 * naming the option; --help after the options ends the run once they are
 * parsed, so nothing loads a model here. */
static void test_engine_options(void) {
    static const char *const cmds[] = {"generate", "-p hi", "--resume", "prompt", "serve", "bench", "bench cache"};
    static const char *const good[] = {"--model /nonexistent/m.gguf", "--threads 2", "--ctx-size 512",
                                       "--kv-budget 512MiB", "--kv-disk-budget 1GiB", "--kv-dir /tmp",
                                       "--no-cache", "--no-disk-cache", "--exact", "--device cpu", "--debug"};
    static const char *const bad[][3] = {
        {"--threads 0", "--threads", "integer"},       {"--ctx-size abc", "--ctx-size", "integer"},
        {"--kv-budget lots", "--kv-budget", "is not a size"}, {"--kv-disk-budget 0", "--kv-disk-budget", "more than 0"},
        {"--device tpu", "--device", "not a device"}};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        proc_result r = proc_runf("%s/cachet %s --help", proc_bin_dir(), cmds[c]);
        CHECK_MSG(r.status == 0, "cachet %s --help: exit %d", cmds[c], r.status);
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
            char name[32];
            snprintf(name, sizeof name, "%.*s ", (int)strcspn(good[i], " "), good[i]);
            CHECK_MSG(strstr(r.out, name) != NULL, "cachet %s --help does not list %s", cmds[c], name);
        }
        proc_result_free(&r);
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
            r = proc_runf("%s/cachet %s %s --help", proc_bin_dir(), cmds[c], good[i]);
            CHECK_MSG(r.status == 0, "cachet %s %s: exit %d: %s", cmds[c], good[i], r.status, r.err);
            proc_result_free(&r);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            r = proc_runf("%s/cachet %s %s --help", proc_bin_dir(), cmds[c], bad[i][0]);
            CHECK_MSG(r.status == 2 && strstr(r.err, bad[i][1]) && strstr(r.err, bad[i][2]),
                      "cachet %s %s: exit %d: %s", cmds[c], bad[i][0], r.status, r.err);
            proc_result_free(&r);
        }
    }
    /* tokenize reads the tokenizer alone: --model, and no other engine option */
    proc_result r = proc_runf("%s/cachet tokenize --model /nonexistent/m.gguf --help", proc_bin_dir());
    CHECK_MSG(r.status == 0 && strstr(r.out, "--model PATH") && !strstr(r.out, "--kv-budget"), "%d %s", r.status, r.out);
    proc_result_free(&r);
    r = proc_runf("%s/cachet tokenize --threads 2 hi", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
}

/* The runs that used to exit 2 ("unknown or incomplete option"). */
static void test_engine_options_run(const char *model) {
    proc_result r = proc_runf("%s/cachet --kv-disk-budget 1GiB -p hi --model '%s' --workspace %s/examples/workspace "
                              "--max-tokens 2 --threads 2 --no-session --json",
                              proc_bin_dir(), model, check_root());
    CHECK_MSG(r.status == 0 && strstr(r.out, "\"reply\""), "cachet --kv-disk-budget 1GiB -p hi: %d %s", r.status,
              r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet bench cache --kv-disk-budget 1GiB --model '%s' --prefix 16 --suffix 1 --reps 1 "
                  "--threads 2 --json",
                  proc_bin_dir(), model);
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    CHECK_MSG(j && cJSON_IsNumber(cJSON_GetObjectItem(j, "ttft_warm_disk_ms")), "bench cache: %d %s", r.status,
              r.err);
    cJSON_Delete(j);
    proc_result_free(&r);
}

static void test_corrupt_model(const char *model) {
    /* A truncated copy and a copy with garbage in the header. */
    char dir[] = "/tmp/cachet-cli-XXXXXX";
    if (!mkdtemp(dir)) return;
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "head -c 3000000 '%s' > %s/trunc.gguf && head -c 1000 '%s' > %s/tiny.gguf && "
             "cp '%s' %s/flip.gguf && printf '\\377\\377\\377\\377\\377\\377\\377\\177' | "
             "dd of=%s/flip.gguf bs=1 seek=8 conv=notrunc 2>/dev/null",
             model, dir, model, dir, model, dir, dir);
    proc_result r = proc_run(cmd);
    CHECK_EQ_INT(r.status, 0);
    proc_result_free(&r);
    static const char *const files[] = {"trunc.gguf", "tiny.gguf", "flip.gguf"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        r = proc_runf("%s/cachet generate --model %s --prompt hi --max-tokens 2", proc_bin_dir(), path);
        CHECK_MSG(r.status == 1, "corrupt model '%s': exit %d", files[i], r.status);
        CHECK_MSG(strstr(r.err, path) != NULL, "message does not name the file: %s", r.err);
        proc_result_free(&r);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    r = proc_run(cmd);
    proc_result_free(&r);
}

static void test_generate(const char *model) {
    /* --exact: the numerics that agree with the float64 reference (the 8-bit
     * default is chaotic on this model, see test_engine.c), so the answer is
     * a property of the model, not of a kernel's summation order. */
    proc_result r = proc_runf("%s/cachet generate --model '%s' --chat --system-file '%s/prompts/assistant.md' "
                        "--prompt 'What is the capital of France?' --temp 0 --max-tokens 40 --threads 2 --json "
                        "--exact", proc_bin_dir(), model, check_root());
    CHECK_EQ_INT(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    CHECK_MSG(j != NULL, "generate --json output is not JSON: %s", r.out);
    if (j) {
        cJSON *text = cJSON_GetObjectItem(j, "text"), *toks = cJSON_GetObjectItem(j, "tokens");
        CHECK(cJSON_IsString(text) && strstr(text->valuestring, "Paris") != NULL);
        CHECK(cJSON_IsArray(toks) && cJSON_GetArraySize(toks) > 0);
        CHECK(cJSON_GetObjectItem(j, "prompt_tokens")->valueint > 20);
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "cached_tokens")));
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "ttft_ms")));
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "prefill_tps")));
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "decode_tps")));
        fprintf(stderr, "  capital of France: %s\n", cJSON_IsString(text) ? text->valuestring : "?");
        cJSON_Delete(j);
    }
    proc_result_free(&r);

    /* Streaming text equals the JSON text for the same greedy run. */
    r = proc_runf("%s/cachet generate --model '%s' --prompt 'Once upon a time' --temp 0 --max-tokens 12", proc_bin_dir(), model);
    proc_result rj = proc_runf("%s/cachet generate --model '%s' --prompt 'Once upon a time' --temp 0 "
                         "--max-tokens 12 --json", proc_bin_dir(), model);
    cJSON *j2 = cJSON_Parse(rj.out);
    cJSON *t2 = j2 ? cJSON_GetObjectItem(j2, "text") : NULL;
    CHECK_EQ_INT(r.status, 0);
    if (cJSON_IsString(t2)) {
        size_t n = strlen(t2->valuestring);
        CHECK_MSG(strncmp(r.out, t2->valuestring, n) == 0 && strcmp(r.out + n, "\n") == 0,
                  "streamed '%s' vs json '%s'", r.out, t2->valuestring);
    } else {
        CHECK_MSG(0, "no json text");
    }
    cJSON_Delete(j2);
    proc_result_free(&r);
    proc_result_free(&rj);

    /* A prompt longer than the context is an error that gives both numbers. */
    r = proc_runf("%s/cachet generate --model '%s' --ctx-size 16 --prompt 'one two three four five six seven "
            "eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen'", proc_bin_dir(), model);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "16") != NULL && strstr(r.err, "tokens") != NULL, "%s", r.err);
    proc_result_free(&r);
}

static void test_tokenize(const char *model) {
    proc_result r = proc_runf("%s/cachet tokenize --model '%s' --json 'Hello world'", proc_bin_dir(), model);
    CHECK_EQ_INT(r.status, 0);
    CHECK_EQ_STR(r.out, "{\"tokens\":[19556,905]}\n");
    proc_result_free(&r);
    r = proc_runf("%s/cachet tokenize --model '%s' '<|im_start|>user'", proc_bin_dir(), model);
    CHECK_EQ_INT(r.status, 0);
    CHECK(strncmp(r.out, "1 ", 2) == 0);
    proc_result_free(&r);
}

/* The worked example: 46 layers x 32 kv heads x 128 dims x 2 x 2 bytes. */
static void test_kv(const char *model) {
    proc_result r = proc_runf("%s/cachet kv --layers 46 --kv-heads 32 --head-dim 128 --memory 80GB", proc_bin_dir());
    CHECK_EQ_INT(r.status, 0);
    CHECK_MSG(strstr(r.out, "753,664") && strstr(r.out, "106,148") && strstr(r.out, "10^9"), "%s", r.out);
    proc_result_free(&r);
    r = proc_runf("%s/cachet kv --layers 46 --kv-heads 32 --head-dim 128 --memory 80GiB --json", proc_bin_dir());
    CHECK_EQ_STR(r.out, "{\"bytes_per_token\":753664,\"tokens\":113975,\"memory_bytes\":85899345920,"
                        "\"memory_unit\":\"binary\",\"dtype\":\"f16\",\"layers\":46,\"kv_heads\":32,"
                        "\"head_dim\":128}\n");
    proc_result_free(&r);
    r = proc_runf("%s/cachet kv --model '%s' --memory 1GiB", proc_bin_dir(), model);
    CHECK_EQ_INT(r.status, 0);
    CHECK_MSG(strstr(r.out, "23,040") && strstr(r.out, "GQA saves 3.0x"), "%s", r.out);
    proc_result_free(&r);
    r = proc_runf("%s/cachet kv --layers 46 --kv-heads 32", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    r = proc_runf("%s/cachet kv --layers 4 --kv-heads 2 --head-dim 8 --memory 12parsecs", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
}

void test_cli(void) {
    CHECK_CASE(usage) test_usage();
    CHECK_CASE(engine_options) test_engine_options();
    const char *model = check_model_path();
    if (!model) {
        CHECK_MSG(0, "default model missing: run 'make model'");
        return;
    }
    CHECK_CASE(kv) test_kv(model);
    CHECK_CASE(search_order) test_search_order(model);
    CHECK_CASE(engine_options_run) test_engine_options_run(model);
    CHECK_CASE(corrupt_model) test_corrupt_model(model);
    CHECK_CASE(tokenize) test_tokenize(model);
    CHECK_CASE(generate) test_generate(model);
}
