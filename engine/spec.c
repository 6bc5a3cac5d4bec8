/* engine/spec.c: the prompt-lookup (n-gram) drafter (spec.h): the longest
 * recent match of the sequence's last tokens earlier in the sequence, and
 * what followed it. A linear scan from the end (a few thousand tokens per
 * step: far below one forward pass); no index is kept between calls. Does
 * not evaluate or accept anything. */
#include "spec.h"

#include <string.h>

/* The start of the most recent occurrence of hist[n-m..n) that ends before
 * n - 1 and is followed by at least one token, or -1. */
static int last_match(const int32_t *hist, int n, int m) {
    const int32_t *key = hist + n - m;
    for (int i = n - m - 1; i >= 0; i--)
        if (hist[i] == key[0] && memcmp(hist + i, key, (size_t)m * sizeof *key) == 0) return i;
    return -1;
}

int eng_spec_ngram_draft(const int32_t *hist, int n, int ngram, int max_draft, int32_t *out) {
    if (ngram < 1 || max_draft < 1) return 0;
    /* a one-token match is a weak guess (" the" recurs everywhere): tried only
     * when ngram is 1; a rejected draft costs a wider forward pass */
    int m_min = ngram >= 2 ? 2 : 1;
    for (int m = ngram < n - 1 ? ngram : n - 1; m >= m_min; m--) {
        int i = last_match(hist, n, m);
        if (i < 0) continue;
        int from = i + m, k = n - from < max_draft ? n - from : max_draft;
        memcpy(out, hist + from, (size_t)k * sizeof *out);
        return k;
    }
    return 0;
}
