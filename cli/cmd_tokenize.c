/* cli/cmd_tokenize.c: `cachet tokenize` (text, a file or stdin to token ids)
 * and `cachet detokenize` (ids to the bytes they print as). Both read only
 * the model's tokenizer, take input of any size (as much as memory holds)
 * and any bytes, NUL included. No generation here (cmd_generate.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine.h"
#include "../util/buf.h"
#include "../util/text.h"
#include "../util/vec.h"
#include "cli.h"
#include "opts.h"

static const char tokenize_usage[] =
    "usage: cachet tokenize [--json] [--no-special] [--model PATH] (TEXT | --file PATH | -)\n"
    "\n"
    "Prints the token ids of TEXT, of a file's bytes (--file PATH) or of stdin ('-' or\n"
    "--file -), one line, space-separated. Any bytes and any size: NUL bytes are text too.\n"
    "\n"
    "  --file PATH           tokenize the bytes of PATH ('-': stdin)\n"
    "  --json                print {\"tokens\": [...]}\n"
    "  --no-special          treat special-token text (<|im_start|>) as plain text\n";

static const char detokenize_usage[] =
    "usage: cachet detokenize [--json] [--no-special] [--model PATH] (ID... | --file PATH | -)\n"
    "\n"
    "Writes the bytes the token ids print as to stdout, exactly (NUL bytes and cut UTF-8\n"
    "characters included), without a newline added. The ids are arguments, or read from a\n"
    "file or stdin: numbers separated by spaces, commas or newlines, or the JSON that\n"
    "'cachet tokenize --json' prints. 'cachet tokenize - | cachet detokenize -' gives the\n"
    "input back (for valid UTF-8 input).\n"
    "\n"
    "  --file PATH           read the ids from PATH ('-': stdin)\n"
    "  --json                print {\"text\": ..., \"bytes\": N} instead; text that is not UTF-8\n"
    "                        has U+FFFD in place of each bad byte (one for a cut final character)\n"
    "  --no-special          special tokens (<|im_start|>, a BOS) print as nothing\n";

enum { OPT_JSON = 256, OPT_NOSPECIAL, OPT_FILE, OPT_HELP };

typedef struct tok_opts {
    cli_engine e;
    int json, special;
    const char *file; /* --file, or "-" */
} tok_opts;

/* Parses tokenize's or detokenize's options; positional arguments stay in
 * argv[optind..]. Returns CLI_GO_ON or an exit status. */
static int parse(tok_opts *o, const char *cmd, const char *use, int argc, char **argv) {
    static const struct option own[] = {{"json", no_argument, 0, OPT_JSON},
                                        {"no-special", no_argument, 0, OPT_NOSPECIAL},
                                        {"file", required_argument, 0, OPT_FILE},
                                        {"help", no_argument, 0, OPT_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[16];
    if (cli_engine_longopts(opts, 16, own, CLI_ENGINE_MODEL_ONLY)) return CLI_EXIT_FAIL;
    o->special = 1;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        switch (c) {
        case OPT_JSON: o->json = 1; break;
        case OPT_NOSPECIAL: o->special = 0; break;
        case OPT_FILE: o->file = optarg; break;
        case OPT_HELP:
            fputs(use, stdout);
            cli_engine_usage(stdout, CLI_ENGINE_MODEL_ONLY, NULL);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet %s: unknown or incomplete option '%s'\n", cmd, argv[optind - 1]);
            fputs(use, stderr);
            return CLI_EXIT_USAGE;
        }
    }
    /* a lone '-' argument is stdin */
    if (!o->file && optind == argc - 1 && strcmp(argv[optind], "-") == 0) {
        o->file = "-";
        optind++;
    }
    return CLI_GO_ON;
}

/* Reads all of path ('-': stdin) into b, any size and any bytes. Returns 0,
 * or prints why and returns CLI_EXIT_FAIL. */
static int read_all(util_buf *b, const char *path) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cachet: cannot open '%s': %s\n", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    char chunk[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (util_buf_append(b, chunk, n)) {
            fprintf(stderr, "cachet: out of memory reading '%s'\n", path);
            rc = CLI_EXIT_FAIL;
            break;
        }
    if (!rc && ferror(f)) {
        fprintf(stderr, "cachet: cannot read '%s': %s\n", path, strerror(errno));
        rc = CLI_EXIT_FAIL;
    }
    if (f != stdin) fclose(f);
    if (!rc) util_buf_append(b, "", 0); /* data is never NULL, even for an empty file */
    return rc;
}

/* Opens the tokenizer of the model found from o->e. */
static int open_tokenizer(tok_opts *o, eng_gguf **g, eng_tokenizer **t) {
    int st = cli_engine_finish(&o->e, 1);
    if (st != CLI_GO_ON) return st;
    util_err err;
    util_err_clear(&err);
    if (eng_gguf_open(g, o->e.path, &err) || eng_tokenizer_new(t, *g, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        eng_gguf_free(*g);
        *g = NULL;
        return CLI_EXIT_FAIL;
    }
    return CLI_GO_ON;
}

static void print_ids(const int32_t *ids, size_t n, int json) {
    if (json) fputs("{\"tokens\":[", stdout);
    for (size_t i = 0; i < n; i++) printf(i ? (json ? ",%d" : " %d") : "%d", ids[i]);
    fputs(json ? "]}\n" : "\n", stdout);
}

int cli_cmd_tokenize(int argc, char **argv) {
    tok_opts o = {.file = NULL};
    int st = parse(&o, "tokenize", tokenize_usage, argc, argv);
    if (st != CLI_GO_ON) return st;
    if (o.file ? optind != argc : optind != argc - 1) {
        fprintf(stderr, "cachet tokenize: give one TEXT argument, or --file PATH, or '-' for stdin\n");
        fputs(tokenize_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    util_buf in;
    util_buf_init(&in);
    if (o.file && read_all(&in, o.file)) return CLI_EXIT_FAIL;
    const char *text = o.file ? in.data : argv[optind];
    size_t len = o.file ? in.len : strlen(text);
    eng_gguf *g = NULL;
    eng_tokenizer *t = NULL;
    if ((st = open_tokenizer(&o, &g, &t)) != CLI_GO_ON) {
        util_buf_release(&in);
        return st;
    }
    util_err err;
    util_err_clear(&err);
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = CLI_EXIT_OK;
    if (eng_tokenize(t, text, len, 1, o.special, &ids, &n, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        rc = CLI_EXIT_FAIL;
    } else {
        print_ids(ids, n, o.json);
    }
    free(ids);
    util_buf_release(&in);
    eng_tokenizer_free(t);
    eng_gguf_free(g);
    return rc;
}

/* --- detokenize ------------------------------------------------------------------ */

typedef struct id_list {
    int32_t *v;
    size_t n, cap;
} id_list;

static int ids_push(id_list *l, long v) {
    if (util_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
    l->v[l->n++] = (int32_t)v;
    return 0;
}

/* Numbers in s[0..n): separated by blanks, commas, newlines and the JSON
 * around them ({"tokens":[...]} or [...]). Anything else is an error naming
 * where it is. Returns 0 or CLI_EXIT_FAIL after printing why. */
static int parse_ids(id_list *l, const char *s, size_t n, const char *src) {
    size_t i = 0;
    const char *key = "\"tokens\"";
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '[' || c == ']' || c == '{' ||
            c == '}' || c == ':') {
            i++;
            continue;
        }
        if (c == '"' && n - i >= strlen(key) && memcmp(s + i, key, strlen(key)) == 0) {
            i += strlen(key);
            continue;
        }
        if ((c >= '0' && c <= '9') || c == '-') {
            size_t j = i + (c == '-');
            long v = 0;
            while (j < n && s[j] >= '0' && s[j] <= '9' && v <= 0x7fffffff) v = v * 10 + (s[j++] - '0');
            if (j == i + (c == '-') || v > 0x7fffffff ||
                (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == '.'))) {
                fprintf(stderr, "cachet detokenize: %s: byte %zu: not a token id\n", src, i);
                return CLI_EXIT_FAIL;
            }
            if (ids_push(l, c == '-' ? -v : v)) {
                fprintf(stderr, "cachet detokenize: out of memory\n");
                return CLI_EXIT_FAIL;
            }
            i = j;
            continue;
        }
        fprintf(stderr, "cachet detokenize: %s: byte %zu: unexpected '%c' (expected token ids)\n", src, i,
                c >= 0x20 && c < 0x7f ? c : '?');
        return CLI_EXIT_FAIL;
    }
    return 0;
}

static void print_text_json(const char *text, size_t len) {
    util_buf v;
    util_buf_init(&v);
    util_utf8_append_valid(&v, text, len);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", v.data ? v.data : "");
    cJSON_AddNumberToObject(o, "bytes", (double)len);
    cli_json_puts(o);
    cJSON_Delete(o);
    util_buf_release(&v);
}

int cli_cmd_detokenize(int argc, char **argv) {
    tok_opts o = {.file = NULL};
    int st = parse(&o, "detokenize", detokenize_usage, argc, argv);
    if (st != CLI_GO_ON) return st;
    if (o.file && optind != argc) {
        fprintf(stderr, "cachet detokenize: give ids as arguments or --file PATH (or '-'), not both\n");
        return CLI_EXIT_USAGE;
    }
    if (!o.file && optind == argc) {
        fprintf(stderr, "cachet detokenize: give token ids, --file PATH or '-' for stdin\n");
        fputs(detokenize_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    id_list l = {NULL, 0, 0};
    int rc = CLI_EXIT_OK;
    if (o.file) {
        util_buf in;
        util_buf_init(&in);
        rc = read_all(&in, o.file);
        if (!rc) rc = parse_ids(&l, in.data, in.len, strcmp(o.file, "-") ? o.file : "stdin");
        util_buf_release(&in);
    } else {
        for (int i = optind; i < argc && !rc; i++) {
            char src[32];
            snprintf(src, sizeof src, "argument %d", i - optind + 1);
            rc = parse_ids(&l, argv[i], strlen(argv[i]), src);
        }
    }
    eng_gguf *g = NULL;
    eng_tokenizer *t = NULL;
    if (!rc && (st = open_tokenizer(&o, &g, &t)) != CLI_GO_ON) rc = st;
    if (!rc) {
        util_err err;
        util_err_clear(&err);
        char *text = NULL;
        size_t len = 0;
        /* a BOS the tokenizer added prints as nothing, so tokenize | detokenize is the input */
        size_t skip = l.n && eng_tokenizer_add_bos(t) && l.v[0] == eng_tokenizer_bos(t);
        if (eng_detokenize(t, l.v + skip, l.n - skip, o.special, &text, &len, &err)) {
            fprintf(stderr, "cachet detokenize: %s\n", err.msg);
            rc = CLI_EXIT_FAIL;
        } else if (o.json) {
            print_text_json(text, len);
        } else if (len && fwrite(text, 1, len, stdout) != len) {
            rc = CLI_EXIT_FAIL;
        }
        free(text);
    }
    free(l.v);
    eng_tokenizer_free(t);
    eng_gguf_free(g);
    return rc;
}
