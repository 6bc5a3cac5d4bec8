/* engine/spec.h: the prompt-lookup (n-gram) drafter of speculative decoding:
 * guesses the next tokens of a sequence from its own earlier tokens (agents
 * copy file contents and code back constantly). Pure functions over token
 * ids: it neither runs the model nor verifies a draft (engine/generate.c
 * does, keeping the output exact). */
#ifndef ENG_SPEC_H
#define ENG_SPEC_H

#include <stdint.h>

/* Proposes up to max_draft tokens to follow hist[0..n): for the longest match
 * length m from ngram down to 2 (to 1 when ngram is 1), the most recent
 * earlier occurrence of the last m tokens of hist; the tokens that followed
 * it (at most max_draft, and none past the end of hist) go to out (room for
 * max_draft). Returns how many
 * (0: no earlier occurrence, or ngram/max_draft < 1). Deterministic: the same
 * history gives the same draft, which is what makes the exact acceptance rule
 * in generate.c (accept a drafted token iff sampling picked it) exact. */
int eng_spec_ngram_draft(const int32_t *hist, int n, int ngram, int max_draft, int32_t *out);

#endif
