/* engine/tokenizer.h: the model's tokenizer, built from GGUF metadata.
 * Byte-level BPE (tokenizer.ggml.model "gpt2", the pre-tokenizer named by
 * tokenizer.ggml.pre: pretok.h), Gemma 4's BPE ("gemma4") and SentencePiece-
 * style BPE with byte fallback ("llama"). Special tokens are split out first.
 * Exact to llama.cpp (tests/golden). Does not render chat templates (chat.h). */
#ifndef ENG_TOKENIZER_H
#define ENG_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "gguf.h"

typedef struct eng_tokenizer eng_tokenizer;

typedef enum eng_token_attr {
    ENG_TOK_UNDEFINED = 0,
    ENG_TOK_NORMAL = 1,
    ENG_TOK_UNKNOWN = 2,
    ENG_TOK_CONTROL = 3,
    ENG_TOK_USER_DEFINED = 4,
    ENG_TOK_UNUSED = 5,
    ENG_TOK_BYTE = 6
} eng_token_attr;

/* Builds the tokenizer from g's metadata (copies what it needs; g may be freed
 * afterwards). A model type or pre-tokenizer cachet does not know is
 * UTIL_EUNSUPPORTED with a message naming it. Caller frees with eng_tokenizer_free. */
int eng_tokenizer_new(eng_tokenizer **out, const eng_gguf *g, util_err *err);
void eng_tokenizer_free(eng_tokenizer *t);

int32_t eng_tokenizer_n_vocab(const eng_tokenizer *t);
int32_t eng_tokenizer_bos(const eng_tokenizer *t); /* -1 if none */
int32_t eng_tokenizer_eos(const eng_tokenizer *t);
int eng_tokenizer_add_bos(const eng_tokenizer *t);
/* End-of-generation: eos, eot, <|im_end|>, <|endoftext|>, <end_of_turn> ... */
int eng_tokenizer_is_eog(const eng_tokenizer *t, int32_t id);
eng_token_attr eng_tokenizer_attr(const eng_tokenizer *t, int32_t id);
/* Exact vocab lookup of a token's stored text; -1 if absent. */
int32_t eng_tokenizer_find(const eng_tokenizer *t, const char *text, size_t len);
/* A note about a fallback taken while building (no pre-tokenizer type in the
 * model: llama.cpp's 'default' splitting is used, as llama.cpp does), or NULL.
 * Owned by the tokenizer; callers may print it as a warning. */
const char *eng_tokenizer_warning(const eng_tokenizer *t);

/* Encodes len bytes of text (any bytes; invalid UTF-8 is handled as the
 * reference does). add_special: add BOS/EOS as the model's metadata says.
 * parse_special: cut control/unknown token texts out of the input (user-defined
 * tokens are always cut out). *out is malloc'd (caller frees), *n its length. */
int eng_tokenize(const eng_tokenizer *t, const char *text, size_t len, int add_special, int parse_special,
                 int32_t **out, size_t *n, util_err *err);

/* A byte range [start, start + len) of a text. */
typedef struct eng_tok_span {
    size_t start, len;
} eng_tok_span;

/* eng_tokenize with parse_special on everywhere except inside the plain spans
 * (any order, may overlap; parts past len are ignored): a control or unknown
 * token is cut out only where none of its bytes is plain, so text in a span
 * can neither form one nor complete one begun outside it. Inside the spans
 * special-token text is plain text, as with parse_special off (user-defined
 * tokens are cut out everywhere, as always). Fragments between the tokens cut
 * out are encoded as eng_tokenize encodes them: when the spans hold no
 * special-token text the ids equal eng_tokenize(..., parse_special = 1).
 * For a chat template's markers around message contents (chat.h). */
int eng_tokenize_spans(const eng_tokenizer *t, const char *text, size_t len, int add_special,
                       const eng_tok_span *plain, size_t nplain, int32_t **out, size_t *n, util_err *err);

/* The bytes one token prints as (may be part of a UTF-8 character). Control
 * and unknown tokens print as "" unless render_special. The pointer is owned by
 * the tokenizer. Returns UTIL_ERANGE for an id outside the vocab. */
int eng_token_piece(const eng_tokenizer *t, int32_t id, int render_special, const char **out, size_t *len);

/* Appends the decoded bytes of ids to a malloc'd NUL-terminated string. */
int eng_detokenize(const eng_tokenizer *t, const int32_t *ids, size_t n, int render_special, char **out,
                   size_t *len, util_err *err);

/* Streaming decoder: feed token pieces, get back only complete UTF-8
 * characters; an incomplete tail waits for the next piece, and an invalid
 * sequence is passed through byte for byte once it cannot become valid. */
typedef struct eng_detok_stream {
    unsigned char pend[8];
    int npend;
} eng_detok_stream;

void eng_detok_stream_init(eng_detok_stream *s);
/* Writes up to len+8 bytes to out; returns the number written. */
size_t eng_detok_stream_feed(eng_detok_stream *s, const char *piece, size_t len, char *out);
/* Flushes whatever is pending (at end of generation). */
size_t eng_detok_stream_flush(eng_detok_stream *s, char *out);

#endif
