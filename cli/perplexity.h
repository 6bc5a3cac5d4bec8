/* cli/perplexity.h: the arithmetic of `cachet perplexity` (perplexity.c),
 * llama.cpp's llama-perplexity reproduced: the negative log-likelihood of a
 * token from its logits row (log-softmax with a float max and a double sum of
 * expf, as perplexity.cpp does), its sum and sum of squares, and the final
 * estimate with its error. No model or file here: testable by hand. */
#ifndef CLI_PERPLEXITY_H
#define CLI_PERPLEXITY_H

#include <stdint.h>

/* Running sums over the scored tokens. Zero-initialise. */
typedef struct cli_ppl_acc {
    double nll;  /* sum of -log p(token) */
    double nll2; /* sum of its squares */
    long count;  /* tokens scored */
} cli_ppl_acc;

/* -log softmax(logits)[tok] over n_vocab logits, computed as
 * llama-perplexity's log_softmax: max in float, sum of expf(l - max) in
 * double, then max + log(sum) - logits[tok]. */
double cli_ppl_nll(const float *logits, int32_t n_vocab, int32_t tok);

/* Adds one scored token's nll. */
void cli_ppl_add(cli_ppl_acc *a, double nll);

/* exp(mean nll): the running perplexity after the tokens added so far
 * (llama-perplexity's "[i]x.xxxx" values). 0 when nothing was added. */
double cli_ppl_value(const cli_ppl_acc *a);

/* The final estimate and llama-perplexity's "+/-": the standard error of
 * the mean nll, sqrt((E[nll^2] - E[nll]^2) / (count - 1)), times the PPL
 * (the first-order error of exp). *err is 0 when count < 2 or the variance
 * is not positive. */
double cli_ppl_final(const cli_ppl_acc *a, double *err);

#endif
