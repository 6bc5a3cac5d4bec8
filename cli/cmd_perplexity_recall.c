/* cli/cmd_perplexity_recall.c: `cachet perplexity --recall FACTS`, a recall
 * probe for KV eviction: facts stated at the start ("The code for the blue
 * door is 4812."), filler prose from the -f text, then one fact's cloze at the
 * end ("The code for the blue door is"); a trial counts when the correct
 * answer's first token outscores every other fact's answer (rank 1 of K:
 * chance 1/K). Each trial is a fresh sequence under the engine options, so
 * --kv-sinks/--kv-window or --kv-evict h2o apply. Does not generate text. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fs.h"
#include "../util/time.h"
#include "cli.h"
#include "perplexity_stream.h"

enum { MAX_FACTS = 32 };

typedef struct recall_facts {
    char *buf;
    int n;
    const char *cloze[MAX_FACTS], *answer[MAX_FACTS];
    int32_t cand[MAX_FACTS]; /* first token of each answer after its cloze */
} recall_facts;

/* Lines "CLOZE<TAB>ANSWER" ('#' lines and blank ones skipped). */
static int read_facts(recall_facts *f, const char *path, util_err *err) {
    size_t len = 0;
    int rc = util_read_file(&f->buf, &len, path, err);
    if (rc) return rc;
    for (char *line = f->buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char *tab = strchr(line, '\t');
        if (*line && *line != '#') {
            if (!tab || f->n == MAX_FACTS)
                return util_err_set(err, UTIL_EINVAL, "'%s': fact %d: want CLOZE<TAB>ANSWER (at most %d)",
                                    path, f->n + 1, MAX_FACTS);
            *tab = '\0';
            f->cloze[f->n] = line;
            f->answer[f->n++] = tab + 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (f->n < 2) return util_err_set(err, UTIL_EINVAL, "'%s': fewer than 2 facts", path);
    return UTIL_OK;
}

/* Tokens of "\n" + s + " " (+ answer), without BOS: the space is a token of
 * its own before digits (SmolLM2, Gemma 3), so the cloze ends with it. */
static int tok_str(const eng_tokenizer *t, const char *s, const char *answer, int32_t **out, size_t *n,
                   util_err *err) {
    char buf[512];
    snprintf(buf, sizeof buf, "\n%s %s", s, answer ? answer : "");
    return eng_tokenize(t, buf, strlen(buf), 0, 0, out, n, err);
}

/* The answer tokens: each answer's first token after its own cloze's tokens;
 * they must differ (else the rank says nothing). */
static int answer_tokens(recall_facts *f, const eng_tokenizer *t, util_err *err) {
    for (int i = 0; i < f->n; i++) {
        int32_t *q = NULL, *qa = NULL;
        size_t nq = 0, nqa = 0;
        int rc = tok_str(t, f->cloze[i], NULL, &q, &nq, err);
        if (!rc) rc = tok_str(t, f->cloze[i], f->answer[i], &qa, &nqa, err);
        if (!rc && (nqa <= nq || memcmp(q, qa, nq * sizeof *q)))
            rc = util_err_set(err, UTIL_EINVAL,
                              "fact '%s': the cloze's tokens are not a prefix of the fact's", f->cloze[i]);
        if (!rc) f->cand[i] = qa[nq];
        for (int k = 0; !rc && k < i; k++)
            if (f->cand[k] == f->cand[i])
                rc = util_err_set(err, UTIL_EINVAL, "answers '%s' and '%s' start with the same token",
                                  f->answer[k], f->answer[i]);
        free(q);
        free(qa);
        if (rc) return rc;
    }
    return UTIL_OK;
}

/* One trial's prompt: BOS?, every fact, filler from text[off..], the cloze of
 * fact `ask`; ctx tokens in all. */
static int build(const recall_facts *f, const eng_tokenizer *t, const int32_t *text, size_t n_text,
                 size_t off, int ask, int ctx, int32_t *out, util_err *err) {
    char facts[MAX_FACTS * 96] = "";
    size_t used = 0;
    for (int i = 0; i < f->n; i++)
        used += (size_t)snprintf(facts + used, sizeof facts - used, "%s%s %s.", i ? " " : "", f->cloze[i],
                                 f->answer[i]);
    int32_t *a = NULL, *q = NULL;
    size_t na = 0, nq = 0;
    int rc = eng_tokenize(t, facts, strlen(facts), 1, 0, &a, &na, err);
    if (!rc) rc = tok_str(t, f->cloze[ask], NULL, &q, &nq, err);
    long fill = (long)ctx - (long)na - (long)nq;
    if (!rc && (fill < 1 || off + (size_t)fill > n_text))
        rc = util_err_set(err, UTIL_EINVAL, "--recall-ctx %d: the facts (%zu tokens) and cloze do not fit",
                          ctx, na);
    if (!rc) {
        memcpy(out, a, na * sizeof *a);
        memcpy(out + na, text + off, (size_t)fill * sizeof *out);
        memcpy(out + na + fill, q, nq * sizeof *q);
    }
    free(a);
    free(q);
    return rc;
}

int cli_ppl_recall_run(eng_model *m, const int32_t *text, size_t n_text, const char *facts_path, int ctx,
                       int trials, int json, util_err *err) {
    recall_facts f = {0};
    const eng_tokenizer *t = eng_model_tokenizer(m);
    int rc = read_facts(&f, facts_path, err);
    if (!rc) rc = answer_tokens(&f, t, err);
    int32_t *p = malloc((size_t)ctx * sizeof *p);
    float *logits = malloc((size_t)eng_model_n_vocab(m) * sizeof *logits);
    if (!rc && (!p || !logits)) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
    int correct = 0, done = 0;
    double rank_sum = 0, t0 = util_now_ms();
    for (int i = 0; !rc && i < trials; i++) {
        eng_seq *s = NULL;
        size_t off = 1 + (size_t)i * 997 % (n_text > (size_t)ctx * 2 ? n_text - (size_t)ctx * 2 : 1);
        rc = build(&f, t, text, n_text, off, i % f.n, ctx, p, err);
        if (!rc) rc = eng_seq_new(&s, m, ctx, err);
        if (!rc) rc = eng_seq_eval(s, p, ctx, logits, err);
        eng_seq_free(s);
        if (rc) break;
        int rank = 1, ask = i % f.n;
        for (int k = 0; k < f.n; k++)
            if (k != ask && logits[f.cand[k]] >= logits[f.cand[ask]]) rank++;
        correct += rank == 1;
        rank_sum += rank;
        done++;
        fprintf(stderr, "recall: trial %d/%d: '%s' rank %d of %d\n", i + 1, trials, f.answer[ask], rank, f.n);
    }
    double secs = (util_now_ms() - t0) / 1000.0;
    if (!rc && json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", eng_model_name(m));
        cJSON_AddStringToObject(j, "facts", facts_path);
        cJSON_AddNumberToObject(j, "n_facts", f.n);
        cJSON_AddNumberToObject(j, "ctx", ctx);
        cJSON_AddNumberToObject(j, "trials", done);
        cJSON_AddNumberToObject(j, "correct", correct);
        cJSON_AddNumberToObject(j, "accuracy", done ? (double)correct / done : 0);
        cJSON_AddNumberToObject(j, "mean_rank", done ? rank_sum / done : 0);
        cJSON_AddNumberToObject(j, "seconds", secs);
        cli_json_puts(j);
        cJSON_Delete(j);
    } else if (!rc) {
        printf("recall: %d/%d correct (%.1f%%; chance %.1f%%), mean rank %.2f of %d, context %d\n", correct,
               done, 100.0 * correct / done, 100.0 / f.n, rank_sum / done, f.n, ctx);
    }
    free(p);
    free(logits);
    free(f.buf);
    return rc;
}
