/* cli/perplexity.c: the arithmetic of `cachet perplexity` (perplexity.h):
 * llama-perplexity's log-softmax of one logits row, the running sums and the
 * final estimate with its error. Shared by the chunked (cmd_perplexity.c) and
 * stream (cmd_perplexity_stream.c) modes; no model or file here. */
#include "perplexity.h"

#include <math.h>

double cli_ppl_nll(const float *logits, int32_t n_vocab, int32_t tok) {
    float max = logits[0];
    for (int32_t i = 1; i < n_vocab; i++)
        if (logits[i] > max) max = logits[i];
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) sum += expf(logits[i] - max);
    return -((double)(logits[tok] - max) - log(sum));
}

void cli_ppl_add(cli_ppl_acc *a, double nll) {
    a->nll += nll;
    a->nll2 += nll * nll;
    a->count++;
}

double cli_ppl_value(const cli_ppl_acc *a) { return a->count > 0 ? exp(a->nll / (double)a->count) : 0.0; }

double cli_ppl_final(const cli_ppl_acc *a, double *err) {
    *err = 0.0;
    if (a->count == 0) return 0.0;
    double mean = a->nll / (double)a->count;
    double var = a->nll2 / (double)a->count - mean * mean;
    double ppl = exp(mean);
    if (a->count > 1 && var > 0) *err = sqrt(var / (double)(a->count - 1)) * ppl;
    return ppl;
}
