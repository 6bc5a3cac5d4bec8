/* engine/pretok.h: the pre-tokenizers of byte-level BPE vocabularies, chosen by
 * the GGUF's tokenizer.ggml.pre as llama.cpp chooses them: the split rules (PCRE2
 * regexes on llama.cpp's category-collapsed text, or hand-coded passes where
 * they are exact) and the flags that come with each type (clean_spaces,
 * ignore_merges, add_bos). Splits code points into pieces; does not merge,
 * look up tokens or handle special tokens (tokenizer.c). */
#ifndef ENG_PRETOK_H
#define ENG_PRETOK_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

typedef struct eng_pretok eng_pretok;

/* What a pre-tokenizer type sets besides its split rules (llama.cpp's
 * llama_vocab::load): add_bos is -1 where the type leaves the model default. */
typedef struct eng_pretok_flags {
    int clean_spaces, ignore_merges, add_bos;
} eng_pretok_flags;

/* Builds the pre-tokenizer named name[0..n) (a tokenizer.ggml.pre value, or
 * "gemma4": newline runs only). An unknown name is UTIL_EUNSUPPORTED with a
 * message naming it; a regex PCRE2 rejects is UTIL_EINTERNAL. Caller frees
 * with eng_pretok_free. Read-only afterwards: safe to share between threads. */
int eng_pretok_new(eng_pretok **out, const char *name, size_t n, util_err *err);
void eng_pretok_free(eng_pretok *p);
const eng_pretok_flags *eng_pretok_flags_of(const eng_pretok *p);
/* The canonical name of the type p was built for (e.g. "llama3" for "llama-bpe"). */
const char *eng_pretok_name(const eng_pretok *p);

/* Per-call working memory the caller holds (one per thread); zero it to start,
 * eng_pretok_work_release frees it. */
typedef struct eng_pretok_work {
    uint32_t *seg[2]; /* piece lengths in code points, ping-ponged between passes */
    size_t nseg[2], cap_seg[2];
    unsigned char *subj; /* a regex subject */
    size_t cap_subj;
    uint32_t *cp_at; /* wide regexes: byte offset -> code point index */
    size_t cap_cp_at;
    uint32_t *boff; /* wide regexes: code point index -> byte offset */
    size_t cap_boff;
    void *md; /* pcre2_match_data */
} eng_pretok_work;

void eng_pretok_work_release(eng_pretok_work *w);

/* Splits the n code points cp (fl: their eng_unicode_flags) into pieces: on
 * success *pieces points at *npieces lengths in code points (summing to n),
 * owned by w until its next use. UTIL_ENOMEM, or UTIL_EINTERNAL if PCRE2
 * fails to match (its message in err). */
int eng_pretok_split(const eng_pretok *p, eng_pretok_work *w, const uint32_t *cp, const uint16_t *fl,
                     size_t n, const uint32_t **pieces, size_t *npieces, util_err *err);

#endif
