/* tests/test_prefix.c: the prefix cache on the real model: hits from memory
 * and from disk give bit-identical logits to a cold run; prefixes ending on a
 * page boundary and inside a page; requests sharing part of a prefix; a
 * conversation extended turn by turn; eviction under a small budget; corrupt
 * disk entries; and two processes sharing a --kv-dir. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"

static int32_t *tokens_of(eng_model *m, const char *text, int *n) { /* an int count, as eng_seq takes */
    size_t k = 0;
    int32_t *ids = th_tokenize(eng_model_tokenizer(m), text, 0, 1, &k);
    *n = (int)k;
    return ids;
}

/* Logits of the last token of toks[0..n) in a fresh sequence; reports reuse. */
static float *run(eng_model *m, const int32_t *toks, int n, int *mem, int *disk) {
    eng_seq *s = NULL;
    util_err err;
    float *lg = malloc((size_t)eng_model_n_vocab(m) * sizeof *lg);
    int rc = eng_seq_new(&s, m, 4096, &err);
    if (!rc) rc = eng_seq_set_tokens(s, toks, n, lg, mem, disk, &err);
    CHECK_MSG(rc == 0, "set_tokens: %s", rc ? err.msg : "");
    eng_seq_free(s);
    return lg;
}

static int same(const eng_model *m, const float *a, const float *b) {
    return a && b && memcmp(a, b, (size_t)eng_model_n_vocab(m) * sizeof *a) == 0;
}

static const char *text_a =
    "<|im_start|>system\nYou are a careful assistant. Answer briefly and cite the file you used. "
    "Never invent paths. Prefer short sentences.<|im_end|>\n<|im_start|>user\nWhat does the "
    "function parse_header in src/http.c return when the input is empty?<|im_end|>\n"
    "<|im_start|>assistant\n";

static void test_memory_hits(eng_model *cold, eng_model *m) {
    int n, mem, disk;
    int32_t *t = tokens_of(m, text_a, &n);
    float *ref = run(cold, t, n, &mem, &disk);
    CHECK_EQ_INT(mem + disk, 0);
    /* Cuts: page boundaries (16, 32), inside a page (21, 37), and n - 1. */
    int cuts[] = {16, 32, 21, 37, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        eng_model_params mp = {.n_threads = 2, .no_disk_cache = 1};
        eng_model *fresh = th_open_model_with(NULL, &mp);
        if (!fresh) break;
        float *a = run(fresh, t, cuts[i], &mem, &disk); /* warms the cache with a prefix */
        free(a);
        float *b = run(fresh, t, n, &mem, &disk);
        CHECK_MSG(mem == cuts[i] && disk == 0, "cut %d: reused %d from memory, %d from disk", cuts[i], mem,
                  disk);
        CHECK_MSG(same(fresh, b, ref), "cut %d: logits differ from the cold run", cuts[i]);
        free(b);
        eng_model_free(fresh);
    }
    /* --no-cache: not even a sequence's own KV is reused. */
    eng_seq *cs = NULL;
    util_err err;
    if (eng_seq_new(&cs, cold, 512, &err) == 0) {
        float *lg = malloc((size_t)eng_model_n_vocab(cold) * sizeof *lg);
        CHECK(eng_seq_set_tokens(cs, t, n, lg, &mem, &disk, &err) == 0);
        CHECK(eng_seq_set_tokens(cs, t, n, lg, &mem, &disk, &err) == 0 && mem == 0 && disk == 0);
        CHECK(same(cold, lg, ref));
        free(lg);
        eng_seq_free(cs);
    }
    /* The same prompt again: everything but the last token comes from memory. */
    float *a = run(m, t, n, &mem, &disk);
    float *b = run(m, t, n, &mem, &disk);
    CHECK_EQ_INT(mem, n - 1);
    CHECK(same(m, a, ref) && same(m, b, ref));
    free(a);
    free(b);

    /* Two requests sharing a prefix that ends inside a page. */
    int32_t *u = malloc((size_t)n * sizeof *u);
    memcpy(u, t, (size_t)n * sizeof *u);
    int div = 43; /* diverge mid-page */
    u[div] = t[div] == 220 ? 198 : 220;
    float *c1 = run(cold, u, n, &mem, &disk);
    float *c2 = run(m, u, n, &mem, &disk);
    CHECK_MSG(mem == div, "shared prefix: reused %d, expected %d", mem, div);
    CHECK(same(m, c1, c2));
    free(c1);
    free(c2);
    free(u);
    free(ref);
    free(t);
}

/* A conversation: each turn's request is the previous request + reply + new
 * user turn; reuse covers everything up to the new user text. */
static void test_conversation(eng_model *cold, eng_model *m) {
    eng_seq *s = NULL;
    util_err err;
    CHECK(eng_seq_new(&s, m, 4096, &err) == 0);
    if (!s) return;
    const char *users[] = {"Name a colour.", "Why that one?", "Say it in French."};
    char convo[8192] = "<|im_start|>system\nYou are terse.<|im_end|>\n";
    int prev_len = 0;
    for (int turn = 0; turn < 3; turn++) {
        size_t l = strlen(convo);
        snprintf(convo + l, sizeof convo - l, "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n",
                 users[turn]);
        int n;
        int32_t *t = tokens_of(m, convo, &n);
        eng_gen_params gp = {.max_tokens = 12, .sample = eng_sample_defaults()};
        gp.sample.temp = 0;
        eng_gen_stats st;
        int32_t *out = NULL;
        int no = 0;
        CHECK(eng_generate(s, t, n, &gp, &out, &no, &st, &err) == 0);
        if (turn > 0)
            CHECK_MSG(st.cached_tokens >= prev_len, "turn %d: cached %d of %d, previous request+reply %d",
                      turn, st.cached_tokens, n, prev_len);
        /* The reply as text, closed like the template does. */
        char *reply = NULL;
        size_t rl;
        eng_detokenize(eng_model_tokenizer(m), out, (size_t)no, 0, &reply, &rl, &err);
        l = strlen(convo);
        snprintf(convo + l, sizeof convo - l, "%s<|im_end|>\n", reply ? reply : "");
        prev_len = n;
        /* Cold check of this turn's logits against the warm sequence. */
        int mem, disk;
        float *warm = run(m, t, n, &mem, &disk), *c = run(cold, t, n, &mem, &disk);
        CHECK(same(m, warm, c));
        free(warm);
        free(c);
        free(reply);
        free(out);
        free(t);
    }
    eng_seq_free(s);
}

static void test_disk(eng_model *cold) {
    char dir[] = "/tmp/cachet-kv-XXXXXX";
    if (!mkdtemp(dir)) return;
    eng_model_params mp = {.n_threads = 2, .kv_dir = dir};
    int n, mem, disk;
    eng_model *a = th_open_model_with(NULL, &mp);
    if (!a) return;
    int32_t *t = tokens_of(a, text_a, &n);
    float *ref = run(cold, t, n, &mem, &disk);
    free(run(a, t, n, &mem, &disk));
    eng_model_free(a); /* flushes the disk tier */

    eng_model *b = th_open_model_with(NULL, &mp); /* cold memory, warm disk */
    float *lg = run(b, t, n, &mem, &disk);
    CHECK_MSG(disk == n - 1 && mem == 0, "disk hit: %d from disk, %d from memory (n=%d)", disk, mem, n);
    CHECK(same(b, lg, ref));
    eng_cache_stats cs = eng_model_cache_stats(b);
    CHECK(cs.disk_reads > 0 && cs.hits_disk == (uint64_t)(n - 1));
    free(lg);
    eng_model_free(b);

    /* Corrupt every entry: no crash, no reuse, the same logits. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "find %s -name '*.kvp' | while read f; do printf 'garbage' | dd of=\"$f\" bs=1 seek=200 "
             "conv=notrunc 2>/dev/null; done",
             dir);
    proc_result r = proc_run(cmd);
    proc_result_free(&r);
    eng_model *c = th_open_model_with(NULL, &mp);
    lg = run(c, t, n, &mem, &disk);
    CHECK_MSG(disk == 0, "corrupt entries were used: %d tokens", disk);
    CHECK(same(c, lg, ref));
    cs = eng_model_cache_stats(c);
    CHECK(cs.disk_corrupt > 0);
    free(lg);
    eng_model_free(c);

    /* An unusable directory: memory only, generation still works. */
    eng_model_params bad = {.n_threads = 2, .kv_dir = "/proc/version/kv"};
    eng_model *d = th_open_model_with(NULL, &bad);
    if (d) {
        lg = run(d, t, n, &mem, &disk);
        CHECK(same(d, lg, ref));
        free(lg);
        eng_model_free(d);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    r = proc_run(cmd);
    proc_result_free(&r);
    free(ref);
    free(t);
}

static void test_eviction(eng_model *cold) {
    /* 8 pages: two 60-token prompts cannot both stay. */
    eng_model_params mp = {.n_threads = 2, .no_disk_cache = 1, .kv_budget = 0};
    eng_model *m = th_open_model_with(NULL, &mp);
    if (!m) return;
    size_t page = eng_model_kv_page_bytes(m);
    eng_model_free(m);
    mp.kv_budget = 8 * page;
    m = th_open_model_with(NULL, &mp);
    if (!m) return;
    int n1, n2, mem, disk;
    int32_t *t1 = tokens_of(m, text_a, &n1);
    int32_t *t2 = tokens_of(m,
                            "A completely different prompt about gardening: tomatoes, soil, "
                            "watering schedules and the best time of the year to plant seeds. Which "
                            "varieties resist blight, how deep should the roots go, how much sun do "
                            "they need in a northern garden, and what should be planted beside them "
                            "to keep insects away without chemicals? Answer as a short list.",
                            &n2);
    CHECK_MSG((n1 + 15) / 16 + (n2 + 15) / 16 > 8, "prompts too short to force eviction");
    for (int round = 0; round < 3; round++) {
        float *a = run(m, t1, n1, &mem, &disk), *ra = run(cold, t1, n1, &mem, &disk);
        float *b = run(m, t2, n2, &mem, &disk), *rb = run(cold, t2, n2, &mem, &disk);
        CHECK(same(m, a, ra) && same(m, b, rb));
        free(a);
        free(ra);
        free(b);
        free(rb);
    }
    eng_cache_stats cs = eng_model_cache_stats(m);
    CHECK_MSG(cs.evictions > 0, "no evictions under an 8-page budget");
    CHECK(cs.bytes_in_use <= 8 * page);
    free(t1);
    free(t2);
    eng_model_free(m);
}

/* Two processes, one --kv-dir: the second run reuses >= 90% and produces
 * the same tokens. */
static void test_two_processes(void) {
    const char *model = check_model_path();
    if (!model) return;
    char dir[] = "/tmp/cachet-kv2-XXXXXX";
    if (!mkdtemp(dir)) return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s/cachet generate --model '%s' --kv-dir %s --temp 0 --max-tokens 16 --json --prompt-file "
             "'%s/tests/data/long_prompt.txt'",
             proc_bin_dir(), model, dir, check_root());
    proc_result r1 = proc_run(cmd), r2 = proc_run(cmd);
    CHECK_EQ_INT(r1.status, 0);
    CHECK_EQ_INT(r2.status, 0);
    cJSON *j1 = cJSON_Parse(r1.out), *j2 = cJSON_Parse(r2.out);
    if (j1 && j2) {
        int pt = cJSON_GetObjectItem(j2, "prompt_tokens")->valueint;
        int ct = cJSON_GetObjectItem(j2, "cached_tokens")->valueint;
        int cd = cJSON_GetObjectItem(j2, "cached_tokens_disk")->valueint;
        CHECK_MSG(ct >= pt * 9 / 10 && cd == ct, "second process reused %d of %d (%d from disk)", ct, pt, cd);
        CHECK_EQ_INT(cJSON_GetObjectItem(j1, "cached_tokens")->valueint, 0);
        char *a = cJSON_PrintUnformatted(cJSON_GetObjectItem(j1, "tokens"));
        char *b = cJSON_PrintUnformatted(cJSON_GetObjectItem(j2, "tokens"));
        CHECK_MSG(a && b && strcmp(a, b) == 0, "tokens differ: %s vs %s", a, b);
        fprintf(stderr, "  two processes: %d prompt tokens, second reused %d from disk\n", pt, cd);
        free(a);
        free(b);
    } else {
        CHECK_MSG(0, "generate --json output: %s / %s", r1.err, r2.err);
    }
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    proc_result_free(&r1);
    proc_result_free(&r2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    r1 = proc_run(cmd);
    proc_result_free(&r1);
}

void test_prefix(void) {
    eng_model_params cold_p = {.n_threads = 2, .no_cache = 1};
    eng_model_params warm_p = {.n_threads = 2, .no_disk_cache = 1};
    eng_model *cold = th_open_model_with(NULL, &cold_p), *m = th_open_model_with(NULL, &warm_p);
    if (cold && m) {
        CHECK_CASE(memory_hits) test_memory_hits(cold, m);
        CHECK_CASE(conversation) test_conversation(cold, m);
        CHECK_CASE(disk) test_disk(cold);
        CHECK_CASE(eviction) test_eviction(cold);
    }
    eng_model_free(m);
    eng_model_free(cold);
    CHECK_CASE(two_processes) test_two_processes();
}
