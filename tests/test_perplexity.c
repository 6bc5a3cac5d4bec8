/* tests/test_perplexity.c: `cachet perplexity` against llama.cpp's
 * llama-perplexity (tests/golden/ppl/llama_ppl_*.txt, gen_llama_ppl.sh) on
 * SmolLM2 and Gemma 3 over the first chunks of the perplexity text, and its
 * --exact path against the float64 reference (float_ppl_smollm2.txt,
 * gen_float_ppl.py); the arithmetic on hand-computed values and the errors
 * (unreadable file, invalid UTF-8, a text too short, usage). Cases needing a
 * model or the text (make ppl-text) skip with the reason. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/perplexity.h"
#include "check.h"
#include "golden_io.h"
#include "proc.h"

/* The brief's bounds: the default (8-bit activation) path within 0.5% of
 * llama-perplexity on the same model, text, ctx and chunks; the exact path
 * within 0.05% of the float64 reference. */
#define DEFAULT_REL 5e-3
#define EXACT_REL   5e-4
/* Chunks of 512 the suite runs: about 2 s (SmolLM2) and 3 s (Gemma 3) of CPU
 * per chunk, so the suite stays well under a minute on 2 cores; `make ppl`
 * runs the whole text. */
#define SMOLLM2_CHUNKS 8
#define GEMMA3_CHUNKS  4

/* root/rel when it can be read, else NULL (static buffer: one at a time). */
static const char *root_file(const char *rel) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", check_root(), rel);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

/* The running PPL after chunk `chunk` ("N<TAB>value" lines; '#' comments)
 * of tests/golden/ppl/<name>, or the "final" line's value when chunk is 0;
 * -1 when absent. */
static double golden_ppl(const char *name, int chunk) {
    char rel[128];
    snprintf(rel, sizeof rel, "ppl/%s", name);
    size_t len;
    char *data = golden_read(rel, &len);
    double v = -1;
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char *tab = strchr(line, '\t');
        if (line[0] != '#' && tab) {
            *tab = '\0';
            if ((chunk == 0 && strcmp(line, "final") == 0) || (chunk > 0 && strtol(line, NULL, 10) == chunk))
                v = strtod(tab + 1, NULL);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(data);
    return v;
}

/* --- the arithmetic, by hand -------------------------------------------- */

static void test_arith(void) {
    /* four equal logits: p = 1/4 for each, nll = ln 4 = 1.3862944 */
    const float flat[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    CHECK_NEAR(cli_ppl_nll(flat, 4, 2), log(4.0), 1e-6);
    /* logits {0, ln 3}: softmax {1/4, 3/4}; nll of token 0 = ln 4, of token 1 = ln(4/3) = 0.2876821 */
    const float two[2] = {0.0f, (float)log(3.0)};
    CHECK_NEAR(cli_ppl_nll(two, 2, 0), log(4.0), 1e-6);
    CHECK_NEAR(cli_ppl_nll(two, 2, 1), log(4.0 / 3.0), 1e-6);
    /* large logits: the max is subtracted first (no overflow): {1000, 1000} -> ln 2 */
    const float big[2] = {1000.0f, 1000.0f};
    CHECK_NEAR(cli_ppl_nll(big, 2, 1), log(2.0), 1e-6);
    /* nll 1 and 3: mean 2, PPL e^2 = 7.3890561; E[x^2] = 5, variance 5 - 4 = 1,
     * error sqrt(1 / (2 - 1)) x e^2 = 7.3890561 */
    cli_ppl_acc a = {0};
    CHECK_EQ_INT(cli_ppl_value(&a) == 0.0, 1);
    cli_ppl_add(&a, 1.0);
    CHECK_NEAR(cli_ppl_value(&a), exp(1.0), 1e-12);
    cli_ppl_add(&a, 3.0);
    double err = -1;
    CHECK_NEAR(cli_ppl_final(&a, &err), exp(2.0), 1e-12);
    CHECK_NEAR(err, exp(2.0), 1e-12);
    /* equal values: no spread, error 0 (llama-perplexity prints none then) */
    cli_ppl_acc b = {0};
    cli_ppl_add(&b, log(4.0));
    cli_ppl_add(&b, log(4.0));
    CHECK_NEAR(cli_ppl_final(&b, &err), 4.0, 1e-12);
    CHECK_EQ_INT(err == 0.0, 1);
}

/* --- errors ----------------------------------------------------------------- */

static void test_errors(const char *model) {
    proc_result r = proc_runf("%s/cachet perplexity", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "-f FILE") != NULL, "usage names -f FILE: %s", r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet perplexity -f /nonexistent/ppl.txt", proc_bin_dir());
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "/nonexistent/ppl.txt") != NULL, "names the file: %s", r.err);
    proc_result_free(&r);
    r = proc_runf("%s/cachet perplexity -f x --ctx 4", proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    /* 0xff on line 2, after "ab" (column 3), byte offset 7 */
    char dir[] = "/tmp/cachet-ppl-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp");
        return;
    }
    r = proc_runf("printf 'caf\\303\\251\\nab\\377c\\n' > %s/bad.txt && %s/cachet perplexity -f %s/bad.txt",
                  dir, proc_bin_dir(), dir);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.err, "not valid UTF-8") && strstr(r.err, "offset 8") &&
                  strstr(r.err, "line 2, column 3"),
              "says where: %s", r.err);
    proc_result_free(&r);
    if (model) {
        r = proc_runf("printf 'It is a truth universally acknowledged.\\n' > %s/short.txt && "
                      "%s/cachet perplexity -f %s/short.txt --model '%s' --threads 2",
                      dir, proc_bin_dir(), dir, model);
        CHECK_EQ_INT(r.status, 1);
        CHECK_MSG(strstr(r.err, "needs at least 1024"), "too short: %s", r.err);
        proc_result_free(&r);
    } else {
        CHECK_SKIP("the default model is absent (make model): the too-short case");
    }
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}

/* --- against the references ---------------------------------------------------- */

/* Runs `cachet perplexity --json ARGS` on the text and returns the "ppl"
 * figure (-1 on failure, after a failed check); chunks_out gets "chunks". */
static double run_ppl(const char *model, const char *text, const char *args, int *chunks_out) {
    proc_result r = proc_runf("%s/cachet perplexity -f '%s' --model '%s' --threads 2 --json %s",
                              proc_bin_dir(), text, model, args);
    double v = -1;
    CHECK_MSG(r.status == 0, "cachet perplexity %s: exit %d: %s", args, r.status, r.err);
    cJSON *j = r.status == 0 ? cJSON_Parse(r.out) : NULL;
    const cJSON *p = cJSON_GetObjectItem(j, "ppl"), *c = cJSON_GetObjectItem(j, "chunks");
    if (cJSON_IsNumber(p) && cJSON_IsNumber(c)) {
        v = p->valuedouble;
        *chunks_out = c->valueint;
    } else if (r.status == 0) {
        CHECK_MSG(0, "no ppl in: %s", r.out);
    }
    if (check_get()->verbose) fprintf(stderr, "  cachet perplexity %s: %s", args, r.out);
    cJSON_Delete(j);
    proc_result_free(&r);
    return v;
}

static void test_llama(const char *model, const char *text, const char *golden, int chunks) {
    double want = golden_ppl(golden, chunks);
    if (want <= 0) {
        CHECK_MSG(0, "tests/golden/ppl/%s has no chunk %d", golden, chunks);
        return;
    }
    char args[64];
    snprintf(args, sizeof args, "--ctx 512 --chunks %d", chunks);
    int n = 0;
    double got = run_ppl(model, text, args, &n);
    CHECK_EQ_INT(n, chunks);
    CHECK_MSG(fabs(got - want) <= DEFAULT_REL * want,
              "PPL %.4f vs llama-perplexity %.4f (%+.3f%%, bound 0.5%%)", got, want,
              100.0 * (got - want) / want);
    if (check_get()->verbose)
        fprintf(stderr, "  %s: cachet %.4f, llama-perplexity %.4f (%+.3f%%)\n", golden, got, want,
                100.0 * (got - want) / want);
}

static void test_exact(const char *model, const char *text) {
    double want = golden_ppl("float_ppl_smollm2.txt", 0);
    if (want <= 0) {
        CHECK_MSG(0, "tests/golden/ppl/float_ppl_smollm2.txt has no final line");
        return;
    }
    int n = 0;
    double got = run_ppl(model, text, "--ctx 64 --chunks 2 --exact", &n);
    CHECK_EQ_INT(n, 2);
    CHECK_MSG(fabs(got - want) <= EXACT_REL * want,
              "--exact PPL %.6f vs float64 %.6f (%+.4f%%, bound 0.05%%)", got, want,
              100.0 * (got - want) / want);
    if (check_get()->verbose)
        fprintf(stderr, "  exact: cachet %.6f, float64 %.6f (%+.4f%%)\n", got, want,
                100.0 * (got - want) / want);
}

void test_perplexity(void) {
    CHECK_CASE(arith) test_arith();
    const char *m = check_model_path();
    if (m && access(m, R_OK) != 0) m = NULL;
    CHECK_CASE(errors) test_errors(m);
    char text[4096], gemma[4096];
    const char *t = root_file("models/pride-and-prejudice.txt");
    snprintf(text, sizeof text, "%s", t ? t : "");
    const char *g = root_file("models/gemma-3-270m-q4_k_m.gguf");
    snprintf(gemma, sizeof gemma, "%s", g ? g : "");
    CHECK_CASE(smollm2) {
        if (!m || !t)
            CHECK_SKIP("%s is absent (%s)", m ? "models/pride-and-prejudice.txt" : "the default model",
                       m ? "make ppl-text" : "make model");
        else
            test_llama(m, text, "llama_ppl_smollm2.txt", SMOLLM2_CHUNKS);
    }
    CHECK_CASE(exact) {
        if (!m || !t)
            CHECK_SKIP("%s is absent (%s)", m ? "models/pride-and-prejudice.txt" : "the default model",
                       m ? "make ppl-text" : "make model");
        else
            test_exact(m, text);
    }
    CHECK_CASE(gemma3) {
        if (!g || !t)
            CHECK_SKIP("%s is absent (%s)",
                       g ? "models/pride-and-prejudice.txt" : "models/gemma-3-270m-q4_k_m.gguf",
                       g ? "make ppl-text" : "make model-gemma3");
        else
            test_llama(gemma, text, "llama_ppl_gemma3.txt", GEMMA3_CHUNKS);
    }
}
