/* tests/test_spec.c: prompt-lookup speculative decoding (--spec ngram): the
 * drafter on hand-made histories, then on the real model greedy output
 * identical to plain decoding on the golden prompts and on a file-editing
 * turn (the model copies a file it read: many drafts accepted), seeded
 * sampling identical too, max_tokens and the context limit ending at the same
 * token, and the sequence left as plain decoding leaves it; the agent's reply
 * with --spec and what `cachet stats` says of it. No timing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/chat.h"
#include "../engine/engine.h"
#include "../engine/spec.h"
#include "check.h"
#include "golden_io.h"
#include "helpers.h"
#include "proc.h"

/* --- the drafter ----------------------------------------------------------------- */

static void test_draft(void) {
    int32_t out[8];
    /* "1 2 3 4 5 1 2" -> the match of "1 2" at 0 continues "3 4 5 1 2" */
    const int32_t a[] = {1, 2, 3, 4, 5, 1, 2};
    CHECK_EQ_INT(eng_spec_ngram_draft(a, 7, 3, 8, out), 5);
    CHECK(out[0] == 3 && out[1] == 4 && out[2] == 5 && out[3] == 1 && out[4] == 2);
    CHECK_EQ_INT(eng_spec_ngram_draft(a, 7, 3, 2, out), 2); /* max_draft caps it */
    CHECK(out[0] == 3 && out[1] == 4);
    /* the longest match wins over a more recent shorter one: "7 8 9" at 0,
     * "8 9" more recently at 5 */
    const int32_t b[] = {7, 8, 9, 10, 11, 8, 9, 12, 7, 8, 9};
    CHECK_EQ_INT(eng_spec_ngram_draft(b, 11, 3, 2, out), 2);
    CHECK(out[0] == 10 && out[1] == 11);
    /* with ngram 2 the most recent "8 9" (at 5) is taken */
    CHECK_EQ_INT(eng_spec_ngram_draft(b, 11, 2, 2, out), 2);
    CHECK(out[0] == 12 && out[1] == 7);
    /* the most recent of two equal matches */
    const int32_t c[] = {1, 2, 3, 1, 2, 4, 1, 2};
    CHECK_EQ_INT(eng_spec_ngram_draft(c, 8, 2, 1, out), 1);
    CHECK_EQ_INT(out[0], 4);
    /* one-token matches only with ngram 1 */
    const int32_t d[] = {5, 6, 7, 5};
    CHECK_EQ_INT(eng_spec_ngram_draft(d, 4, 3, 4, out), 0);
    CHECK_EQ_INT(eng_spec_ngram_draft(d, 4, 1, 4, out), 3);
    CHECK(out[0] == 6 && out[1] == 7 && out[2] == 5);
    /* nothing to match, or nothing asked */
    const int32_t e[] = {1, 2, 3, 4};
    CHECK_EQ_INT(eng_spec_ngram_draft(e, 4, 3, 4, out), 0);
    CHECK_EQ_INT(eng_spec_ngram_draft(a, 7, 3, 0, out), 0);
    CHECK_EQ_INT(eng_spec_ngram_draft(a, 7, 0, 4, out), 0);
    CHECK_EQ_INT(eng_spec_ngram_draft(a, 1, 3, 4, out), 0);
    /* a run: the match may overlap the key, and stops at the end of hist */
    const int32_t f[] = {9, 9, 9, 9};
    CHECK_EQ_INT(eng_spec_ngram_draft(f, 4, 2, 4, out), 1);
    CHECK_EQ_INT(out[0], 9);
    util_err err;
    eng_spec_mode mode = ENG_SPEC_NONE;
    CHECK_EQ_INT(eng_spec_mode_parse(&mode, "ngram", &err), 0);
    CHECK_EQ_INT(mode, ENG_SPEC_NGRAM);
    CHECK_EQ_INT(eng_spec_mode_parse(&mode, "none", &err), 0);
    CHECK_EQ_INT(mode, ENG_SPEC_NONE);
    CHECK_EQ_INT(eng_spec_mode_parse(&mode, "eagle", &err), UTIL_EINVAL);
    CHECK(strstr(err.msg, "'eagle'") != NULL);
}

/* --- plain vs speculative on the model -------------------------------------------- */

typedef struct run {
    int32_t *ids;
    int n;
    eng_gen_stats st;
    int32_t *seq; /* what the sequence holds after the generation */
    int seq_len;
} run;

static void run_free(run *r) {
    free(r->ids);
    free(r->seq);
    memset(r, 0, sizeof *r);
}

/* One generation on a fresh sequence of n_ctx positions. */
static int gen(eng_model *m, const int32_t *prompt, int n, int max_tokens, const eng_sample_params *sp,
               eng_spec_mode mode, int n_ctx, run *r) {
    memset(r, 0, sizeof *r);
    eng_seq *s = NULL;
    util_err err;
    if (eng_seq_new(&s, m, n_ctx, &err)) return -1;
    eng_gen_params p = {.max_tokens = max_tokens, .sample = *sp, .spec = {.mode = mode}};
    int rc = eng_generate(s, prompt, n, &p, &r->ids, &r->n, &r->st, &err);
    CHECK_MSG(rc == 0, "generate: %s", err.msg);
    r->seq_len = eng_seq_len(s);
    r->seq = malloc(sizeof(int32_t) * (size_t)(r->seq_len + 1));
    if (r->seq) memcpy(r->seq, eng_seq_tokens(s), sizeof(int32_t) * (size_t)r->seq_len);
    eng_seq_free(s);
    return rc;
}

/* Plain and speculative runs agree token for token, end for the same reason,
 * and leave the same tokens in the sequence. Returns the speculative run's
 * accepted drafts. */
static int same_as_plain(eng_model *m, const char *name, const int32_t *prompt, int n, int max_tokens,
                         const eng_sample_params *sp, int n_ctx) {
    run a, b;
    gen(m, prompt, n, max_tokens, sp, ENG_SPEC_NONE, n_ctx, &a);
    gen(m, prompt, n, max_tokens, sp, ENG_SPEC_NGRAM, n_ctx, &b);
    char x[256], y[256];
    th_ids_str(x, sizeof x, a.ids, (size_t)a.n);
    th_ids_str(y, sizeof y, b.ids, (size_t)b.n);
    CHECK_MSG(th_ids_equal(a.ids, (size_t)a.n, b.ids, (size_t)b.n), "%s: plain %s\nspec  %s", name, x, y);
    CHECK_MSG(a.st.stop_reason == b.st.stop_reason, "%s: stop %s vs %s", name,
              eng_stop_reason_name(a.st.stop_reason), eng_stop_reason_name(b.st.stop_reason));
    CHECK_EQ_INT(a.st.generated_tokens, b.st.generated_tokens);
    CHECK_MSG(th_ids_equal(a.seq, (size_t)a.seq_len, b.seq, (size_t)b.seq_len),
              "%s: sequences %d vs %d tokens", name, a.seq_len, b.seq_len);
    /* plain: one forward per token after the first, no drafts */
    CHECK_EQ_INT(a.st.spec_drafted, 0);
    CHECK(a.st.decode_forwards == 0 || a.st.tokens_per_forward == 1.0);
    CHECK(b.st.spec_accepted <= b.st.spec_drafted && b.st.decode_forwards <= a.st.decode_forwards);
    CHECK_EQ_INT(b.st.decode_forwards + b.st.spec_accepted, a.st.decode_forwards);
    int acc = b.st.spec_accepted;
    if (check_get()->verbose)
        printf("  %s: %d tokens, %d forwards plain, %d spec (%d drafted, %d accepted)\n", name, a.n,
               a.st.decode_forwards, b.st.decode_forwards, b.st.spec_drafted, acc);
    run_free(&a);
    run_free(&b);
    return acc;
}

static void test_golden_prompts(eng_model *m) {
    golden_row rows[16];
    int n = golden_rows_load("logits_index.tsv", rows, 16), accepted = 0;
    eng_sample_params greedy = eng_sample_defaults();
    greedy.temp = 0;
    for (int i = 0; i < n; i++)
        accepted += same_as_plain(m, rows[i].name, rows[i].prompt, (int)rows[i].n_prompt, 48, &greedy, 2048);
    CHECK_MSG(n >= 5, "only %d golden prompts", n);
    CHECK_MSG(accepted > 0, "no draft accepted on %d golden prompts", n);
    golden_rows_free(rows, n);
}

/* Seeded sampling: the same tokens (the same logits, the same RNG draws). */
static void test_sampled(eng_model *m) {
    const eng_tokenizer *t = eng_model_tokenizer(m);
    size_t n = 0;
    int32_t *p = th_tokenize(t, "one two three four five six seven eight nine ten one two three four", 0, 0,
                             &n);
    for (int seed = 1; p && seed <= 3; seed++) {
        eng_sample_params sp = eng_sample_defaults();
        sp.seed = (uint64_t)seed;
        sp.repeat_penalty = seed == 3 ? 1.1f : 1.0f; /* the penalty history is kept in order too */
        char name[32];
        snprintf(name, sizeof name, "seed %d", seed);
        same_as_plain(m, name, p, (int)n, 40, &sp, 2048);
    }
    free(p);
}

/* max_tokens and a full context end at the same token as plain decoding. */
static void test_limits(eng_model *m) {
    const eng_tokenizer *t = eng_model_tokenizer(m);
    size_t n = 0;
    int32_t *p = th_tokenize(t, "a b c d e f g a b c d e f g a b c d e f g a b c d e f g a b c", 0, 0, &n);
    eng_sample_params greedy = eng_sample_defaults();
    greedy.temp = 0;
    for (int max = 1; p && max <= 5; max++) same_as_plain(m, "max_tokens", p, (int)n, max, &greedy, 2048);
    for (int extra = 1; p && extra <= 12; extra += 5) /* the context fills after `extra` positions */
        same_as_plain(m, "context", p, (int)n, 0, &greedy, (int)n + extra);
    free(p);
}

/* Non-blank lines of text, and how many of them are lines of file (the same
 * bytes without leading or trailing blanks). */
static int lines_from(const char *text, const char *file, int *lines) {
    int copied = 0;
    *lines = 0;
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *x = l;
        while (n > 0 && (*x == ' ' || *x == '\t')) x++, n--;
        while (n > 0 && (x[n - 1] == ' ' || x[n - 1] == '\t' || x[n - 1] == '\r')) n--;
        if (n > 0) {
            (*lines)++;
            for (const char *f = file; *f;) {
                const char *fe = strchr(f, '\n');
                size_t fn = fe ? (size_t)(fe - f) : strlen(f);
                const char *y = f;
                while (fn > 0 && (*y == ' ' || *y == '\t')) y++, fn--;
                if (fn == n && memcmp(x, y, n) == 0) {
                    copied++;
                    break;
                }
                f = fe ? fe + 1 : f + strlen(f);
            }
        }
        l = e ? e + 1 : NULL;
    }
    return copied;
}

/* An agent's edit turn: the file read into the context is to come back with a
 * small change: identical output, and drafted tokens accepted. */
static void test_edit_turn(eng_model *m) {
    static const char file[] = "#include <stdio.h>\n\n"
                               "/* Prints a greeting for each name given on the command line. */\n"
                               "static void greet(const char *name) {\n"
                               "    printf(\"Hello, %s!\\n\", name);\n"
                               "}\n\n"
                               "int main(int argc, char **argv) {\n"
                               "    for (int i = 1; i < argc; i++) greet(argv[i]);\n"
                               "    return 0;\n"
                               "}\n";
    eng_chat_msg msgs[] = {
        {"system", "You are a coding assistant. When asked to change a file, reply with the whole new file."},
        {"user", "Here is hello.c:\n\n```c\n"},
        {"user", "Change the greeting from \"Hello\" to \"Hi\" and reply with the whole file."}};
    char *u = malloc(strlen(msgs[1].content) + sizeof file + 8);
    if (!u) return;
    snprintf(u, strlen(msgs[1].content) + sizeof file + 8, "%s%s```", msgs[1].content, file);
    eng_chat_msg turn[] = {msgs[0], {"user", u}, {"assistant", "I have read hello.c."}, msgs[2]};
    int32_t *ids = NULL;
    size_t n = 0;
    util_err err;
    int rc = eng_chat_tokenize(eng_model_chat(m), eng_model_tokenizer(m), turn, 4, 1, NULL, &ids, &n, &err);
    CHECK_MSG(rc == 0, "chat: %s", err.msg);
    eng_sample_params greedy = eng_sample_defaults();
    greedy.temp = 0;
    if (rc == 0) {
        run b;
        gen(m, ids, (int)n, 120, &greedy, ENG_SPEC_NGRAM, 2048, &b);
        int acc = b.st.spec_accepted, fw = b.st.decode_forwards;
        char *txt = NULL;
        size_t tl = 0;
        util_err e2;
        int copied = 0, lines = 0;
        if (eng_detokenize(eng_model_tokenizer(m), b.ids, (size_t)b.n, 0, &txt, &tl, &e2) == 0)
            copied = lines_from(txt, file, &lines);
        run_free(&b);
        same_as_plain(m, "edit turn", ids, (int)n, 120, &greedy, 2048);
        /* The 135M model's greedy reply depends on the kernels' rounding: a
         * copy of the file (most of its lines are the file's), or a line
         * repeated. Drafts are accepted either way; a copy is at least half
         * accepted drafts. */
        CHECK_MSG(acc > 0, "edit turn: no draft accepted over %d forwards", fw);
        if (lines > 0 && copied * 2 >= lines)
            CHECK_MSG(acc * 2 >= acc + fw, "edit turn (a copy: %d of %d lines): %d accepted over %d forwards",
                      copied, lines, acc, fw);
        if (check_get()->verbose)
            fprintf(stderr, "  edit turn: %d of %d reply lines from the file, %d accepted over %d forwards\n",
                    copied, lines, acc, fw);
        free(txt);
    }
    free(ids);
    free(u);
}

/* Gemma 3 (sliding-window layers of 512 positions that drop their old pages):
 * a repetitive prompt past the window, so drafts are accepted and rejected
 * while the window moves; speculative == plain, greedy. */
static void test_gemma3_window(void) {
    const char *gp = th_gemma3_path();
    if (!gp) {
        CHECK_SKIP("models/gemma-3-270m-q4_k_m.gguf is absent (make model-gemma3)");
        return;
    }
    eng_model *g = th_open_model(gp, 2, 0);
    if (!g) return;
    char text[16384];
    size_t len = 0;
    for (int i = 1; i <= 60 && len + 256 < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "Item %d: the inventory lists %d crates of apples, shipped on pallet %c.\n",
                                i, i * 7 % 23, 'A' + i % 5);
    size_t n = 0;
    int32_t *ids = th_tokenize(eng_model_tokenizer(g), text, 1, 0, &n);
    CHECK_MSG(n > 600, "only %zu prompt tokens: the window (512) is not passed", n);
    eng_sample_params greedy = eng_sample_defaults();
    greedy.temp = 0;
    if (ids) same_as_plain(g, "gemma3 past the window", ids, (int)n, 96, &greedy, 2048);
    free(ids);
    eng_model_free(g);
}

/* The agent with --spec ngram on an edit turn (the file pasted in the task):
 * the same reply as without, and `cachet stats` reports the drafts. Both runs
 * share a temporary state and cache directory (the second reuses the first's
 * prompt from the disk tier). */
static void test_agent_turn(const char *model) {
    char dir[] = "/tmp/cachet-spec-XXXXXX";
    if (!mkdtemp(dir)) return;
    static const char task[] = "Here is hello.c:\n\n```c\n#include <stdio.h>\n\nint main(void) {\n"
                               "    printf(\"Hello, world!\\n\");\n    return 0;\n}\n```\n\n"
                               "Write the whole file again with the greeting changed from Hello to Hi.";
    char path[256];
    snprintf(path, sizeof path, "%s/task.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(task, f);
        fclose(f);
    }
    /* the turn context names the time of day (HH:MM): the two replies are
     * compared when both runs fell in one minute (tried up to 4 times; the
     * prompt's stable part comes from the cache after the first) */
    char *reply[2] = {NULL, NULL};
    int compared = 0;
    for (int attempt = 0; attempt < 4 && !compared; attempt++) {
        free(reply[0]);
        free(reply[1]);
        reply[0] = reply[1] = NULL;
        time_t m0 = time(NULL) / 60;
        for (int i = 0; i < 2; i++) {
            proc_result r = proc_runf(
                "cd %s && XDG_STATE_HOME=%s/state XDG_CACHE_HOME=%s/cache %s/cachet -p \"$(cat "
                "task.txt)\" --model '%s' --workspace %s --json --temp 0 --threads 2 "
                "--max-tokens 48 --spec %s",
                dir, dir, dir, proc_bin_dir(), model, dir, i ? "ngram" : "none");
            cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
            const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "reply"));
            CHECK_MSG(t != NULL, "cachet -p --spec: %d %s", r.status, r.err);
            reply[i] = t ? strdup(t) : NULL;
            cJSON_Delete(j);
            proc_result_free(&r);
        }
        compared = time(NULL) / 60 == m0;
    }
    CHECK_MSG(compared, "no two runs within one minute in 4 tries");
    CHECK_MSG(reply[0] && reply[1] && strcmp(reply[0], reply[1]) == 0, "replies differ:\n%s\n---\n%s",
              reply[0] ? reply[0] : "", reply[1] ? reply[1] : "");
    proc_result r = proc_runf("XDG_STATE_HOME=%s/state %s/cachet stats --all --json", dir, proc_bin_dir());
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    const cJSON *ss = cJSON_GetObjectItem(j, "sessions"), *e;
    int with = 0, without = 0;
    cJSON_ArrayForEach(e, ss) {
        double d = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "spec_drafted"));
        double a = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "spec_accepted"));
        double tpf = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tokens_per_forward"));
        if (d > 0 && a >= 0 && a <= d && tpf >= 1) with++;
        if (d == 0) without++;
    }
    CHECK_MSG(with >= 1 && without >= 1 && with == without, "stats: %d sessions with drafts, %d without: %s",
              with, without, r.out);
    cJSON_Delete(j);
    proc_result_free(&r);
    r = proc_runf("XDG_STATE_HOME=%s/state %s/cachet stats", dir, proc_bin_dir()); /* the latest: --spec */
    CHECK_MSG(strstr(r.out, "speculative decoding:") && strstr(r.out, "tokens per forward"), "%s", r.out);
    proc_result_free(&r);
    free(reply[0]);
    free(reply[1]);
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}

void test_spec(void) {
    CHECK_CASE(draft) test_draft();
    eng_model *m = th_open_model(NULL, 2, 0);
    if (!m) return;
    CHECK_CASE(golden_prompts) test_golden_prompts(m);
    CHECK_CASE(sampled) test_sampled(m);
    CHECK_CASE(limits) test_limits(m);
    CHECK_CASE(edit_turn) test_edit_turn(m);
    eng_model_free(m);
    CHECK_CASE(agent_turn) test_agent_turn(check_model_path());
    CHECK_CASE(gemma3_window) test_gemma3_window();
}
