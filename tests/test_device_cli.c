/* tests/test_device_cli.c: --device and CACHET_DEVICE as a user meets them in
 * bin/cachet: bad values are usage errors (exit 2) in every command that opens
 * a model, --device cpu gives the default run's greedy tokens, and in a build
 * without CUDA --device cuda fails cleanly; and the engine's own reading of the
 * names (eng_device_parse, eng_backend_open). Needs no GPU; on a CUDA build the
 * CPU-only checks are skipped. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/backend.h"
#include "../engine/engine.h"
#include "check.h"
#include "proc.h"

/* The commands that open a model, each with what it needs to get that far. */
static const char *const k_cmds[] = {"generate --prompt hi", "-p hi --no-session", "serve --port 0",
                                     "bench --no-llama", "bench cache"};

/* Syntax errors exit 2 before any model opens, naming the option or variable. */
static void test_bad_values(void) {
    static const char *const bad[] = {"bogus", "cuda:x", "cuda:65", "cuda:-1", "CPU", ""};
    for (size_t c = 0; c < sizeof k_cmds / sizeof k_cmds[0]; c++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            proc_result r = proc_runf("cd /tmp && %s/cachet %s --device '%s'", proc_bin_dir(), k_cmds[c],
                                      bad[b]);
            CHECK_MSG(r.status == 2, "cachet %s --device '%s': exit %d", k_cmds[c], bad[b], r.status);
            CHECK_MSG(strstr(r.err, "--device") && strstr(r.err, "cuda:N"), "cachet %s --device '%s': %s",
                      k_cmds[c], bad[b], r.err);
            proc_result_free(&r);
        }
    for (size_t c = 0; c < sizeof k_cmds / sizeof k_cmds[0]; c++) {
        proc_result r = proc_runf("cd /tmp && CACHET_DEVICE=gpu %s/cachet %s", proc_bin_dir(), k_cmds[c]);
        CHECK_MSG(r.status == 2, "CACHET_DEVICE=gpu cachet %s: exit %d", k_cmds[c], r.status);
        CHECK_MSG(strstr(r.err, "CACHET_DEVICE") && strstr(r.err, "'gpu'"), "CACHET_DEVICE=gpu cachet %s: %s",
                  k_cmds[c], r.err);
        proc_result_free(&r);
    }
    /* the option wins over the variable */
    proc_result r = proc_runf("CACHET_DEVICE=bogus %s/cachet generate --device bogus2 --prompt hi",
                              proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    CHECK(strstr(r.err, "'bogus2'") != NULL && strstr(r.err, "CACHET_DEVICE") == NULL);
    proc_result_free(&r);
}

static void test_usage_texts(void) {
    static const char *const helps[] = {"generate --help", "--help-agent", "serve --help", "bench --help",
                                        "bench cache --help"};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        proc_result r = proc_runf("%s/cachet %s", proc_bin_dir(), helps[i]);
        CHECK_EQ_INT(r.status, 0);
        CHECK_MSG(strstr(r.out, "--device D") && strstr(r.out, "cuda:N") && strstr(r.out, "CACHET_DEVICE"),
                  "cachet %s does not document --device and CACHET_DEVICE", helps[i]);
        proc_result_free(&r);
    }
}

/* The tokens of `cachet generate --json` (greedy), as a string, or NULL. */
static char *greedy_tokens(const char *model, const char *env, const char *args) {
    proc_result r = proc_runf(
        "env -u CACHET_DEVICE %s %s/cachet generate --model %s --prompt 'The capital of France is' "
        "--temp 0 --max-tokens 8 --threads 2 --no-cache --json %s",
        env, proc_bin_dir(), model, args);
    CHECK_MSG(r.status == 0, "generate %s %s: exit %d: %s", env, args, r.status, r.err);
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    char *s = j ? cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "tokens")) : NULL;
    cJSON_Delete(j);
    proc_result_free(&r);
    return s;
}

/* 1 when this binary says it was built without CUDA (then "auto" is the CPU). */
static int test_cuda_in_cpu_build(const char *model) {
    proc_result r = proc_runf("%s/cachet generate --model %s --prompt hi --max-tokens 1 --device cuda",
                              proc_bin_dir(), model);
    int cpu_only = strstr(r.err, "built without CUDA") != NULL;
    CHECK_MSG(r.status < 128, "--device cuda: killed by a signal (%d)", r.status);
    if (cpu_only) {
        CHECK_EQ_INT(r.status, 1);
        CHECK(strstr(r.err, "make cuda") != NULL);
    }
    proc_result_free(&r);
    if (!cpu_only) return 0;
    /* every command reports it like a model-open error: exit 1 */
    for (size_t c = 0; c < sizeof k_cmds / sizeof k_cmds[0]; c++) {
        r = proc_runf("cd /tmp && %s/cachet %s --model %s --device cuda:0", proc_bin_dir(), k_cmds[c], model);
        CHECK_MSG(r.status == 1 && strstr(r.err, "built without CUDA"),
                  "cachet %s --device cuda:0: exit %d: %s", k_cmds[c], r.status, r.err);
        proc_result_free(&r);
    }
    r = proc_runf("CACHET_DEVICE=cuda %s/cachet generate --model %s --prompt hi --max-tokens 1",
                  proc_bin_dir(), model);
    CHECK_MSG(r.status == 1 && strstr(r.err, "built without CUDA"), "CACHET_DEVICE=cuda: exit %d: %s",
              r.status, r.err);
    proc_result_free(&r);
    return 1;
}

static void test_cpu_same_tokens(const char *model, int cpu_only) {
    char *cpu = greedy_tokens(model, "", "--device cpu");
    char *env = greedy_tokens(model, "CACHET_DEVICE=cpu", "");
    CHECK(cpu && env && strcmp(cpu, env) == 0);
    if (cpu_only) { /* "auto" is the CPU here */
        char *dflt = greedy_tokens(model, "", "");
        char *autod = greedy_tokens(model, "CACHET_DEVICE=cuda", "--device auto");
        CHECK_MSG(cpu && dflt && strcmp(cpu, dflt) == 0, "--device cpu %s, default %s", cpu ? cpu : "-",
                  dflt ? dflt : "-");
        CHECK(cpu && autod && strcmp(cpu, autod) == 0);
        free(dflt);
        free(autod);
    } else {
        CHECK_SKIP(
            "a CUDA build: the default device may be the GPU, so default == --device cpu is not checked");
    }
    free(cpu);
    free(env);
}

/* bench cache runs its disk phase as a child process: the child must get the
 * parent's device, not the environment's (bogus here, so a child that read it
 * would fail and the disk figure would be missing). */
static void test_bench_cache_passes_device(const char *model) {
    proc_result r = proc_runf(
        "CACHET_DEVICE=bogus %s/cachet bench cache --model %s --device cpu --threads 2 --prefix 16 "
        "--suffix 1 --reps 1 --json",
        proc_bin_dir(), model);
    CHECK_MSG(r.status == 0, "bench cache: exit %d: %s", r.status, r.err);
    cJSON *j = cJSON_Parse(r.out);
    CHECK_MSG(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "ttft_warm_disk_ms")) > 0, "no disk phase: %s%s",
              r.out, r.err);
    CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "cached_tokens_disk")), 16);
    const char *be = cJSON_GetStringValue(cJSON_GetObjectItem(j, "backend"));
    CHECK_MSG(be && strncmp(be, "cpu", 3) == 0, "backend %s", be ? be : "(none)");
    cJSON_Delete(j);
    proc_result_free(&r);
    /* the lengths a GPU run uses parse (a missing model stops them right after) */
    r = proc_runf("%s/cachet bench cache --model /nonexistent/m.gguf --prefix 4000 --device cpu",
                  proc_bin_dir());
    CHECK_MSG(r.status == 1 && strstr(r.err, "/nonexistent/m.gguf"), "bench cache --prefix 4000: %d %s",
              r.status, r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet bench --model /nonexistent/m.gguf --prompt-tokens 4000 --no-llama --device cpu",
                  proc_bin_dir());
    CHECK_MSG(r.status == 1 && strstr(r.err, "/nonexistent/m.gguf"), "bench --prompt-tokens 4000: %d %s",
              r.status, r.err);
    proc_result_free(&r);
}

/* The engine's reading of the names (engine/backend.c), the same set the
 * command line accepts above, and the backend it opens for them. */
static void test_device_parse(void) {
    static const struct {
        const char *name;
        int rc;
        eng_device_kind kind;
        int index;
    } cases[] = {
        {"auto", 0, ENG_DEVICE_AUTO, 0},
        {"cpu", 0, ENG_DEVICE_CPU, 0},
        {"cuda", 0, ENG_DEVICE_CUDA, 0},
        {"cuda:0", 0, ENG_DEVICE_CUDA, 0},
        {"cuda:64", 0, ENG_DEVICE_CUDA, 64},
        {"cuda:7", 0, ENG_DEVICE_CUDA, 7},
        {"bogus", UTIL_EINVAL, 0, 0},
        {"cuda:x", UTIL_EINVAL, 0, 0},
        {"cuda:65", UTIL_EINVAL, 0, 0},
        {"cuda:-1", UTIL_EINVAL, 0, 0},
        {"cuda:+1", UTIL_EINVAL, 0, 0},
        {"cuda: 1", UTIL_EINVAL, 0, 0},
        {"cuda:", UTIL_EINVAL, 0, 0},
        {"CPU", UTIL_EINVAL, 0, 0},
        {"", UTIL_EINVAL, 0, 0},
        {"cudax", UTIL_EINVAL, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eng_device d;
        util_err err;
        util_err_clear(&err);
        int rc = eng_device_parse(&d, cases[i].name, &err);
        CHECK_MSG(rc == cases[i].rc, "eng_device_parse('%s') = %d", cases[i].name, rc);
        if (rc == 0)
            CHECK_MSG(d.kind == cases[i].kind && d.index == cases[i].index, "'%s': kind %d index %d",
                      cases[i].name, (int)d.kind, d.index);
        else
            CHECK_MSG(strstr(err.msg, "--device") && strstr(err.msg, cases[i].name), "'%s': %s",
                      cases[i].name, err.msg);
    }
    eng_backend *be = NULL;
    util_err err;
    eng_backend_params p = {.device = "cpu", .n_threads = 1};
    CHECK(eng_backend_open(&be, &p, &err) == 0 && be && strncmp(be->ops->name, "cpu-", 4) == 0);
    eng_backend_free(be);
    p.exact = 1;
    CHECK(eng_backend_open(&be, &p, &err) == 0 && be && strstr(be->ops->name, "-exact"));
    eng_backend_free(be);
    p.device = "cuda:1"; /* refused before any GPU is looked for */
    CHECK(eng_backend_open(&be, &p, &err) == UTIL_EINVAL && be == NULL && strstr(err.msg, "--exact"));
    p.device = "gpu";
    p.exact = 0;
    CHECK(eng_backend_open(&be, &p, &err) == UTIL_EINVAL && be == NULL && strstr(err.msg, "'gpu'"));
    /* no name: $CACHET_DEVICE (the runner sets cpu unless the caller chose) */
    const char *env = getenv("CACHET_DEVICE");
    if (env && strcmp(env, "cpu") == 0) {
        p.device = NULL;
        CHECK(eng_backend_open(&be, &p, &err) == 0 && be && strncmp(be->ops->name, "cpu-", 4) == 0);
        eng_backend_free(be);
    }
    eng_backend_free(NULL);
}

void test_device_cli(void) {
    CHECK_CASE(device_parse) test_device_parse();
    CHECK_CASE(bad_values) test_bad_values();
    CHECK_CASE(usage_texts) test_usage_texts();
    const char *model = check_model_path();
    CHECK_MSG(model != NULL, "the default model is missing: run make model");
    if (!model) return;
    CHECK_CASE(cpu_same_tokens) { /* what the cpu build says decides what is compared */
        int cpu_only = test_cuda_in_cpu_build(model);
        test_cpu_same_tokens(model, cpu_only);
    }
    CHECK_CASE(bench_cache_passes_device) test_bench_cache_passes_device(model);
}
