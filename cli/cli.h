/* cli/cli.h: shared pieces of the cachet command line: subcommand entry
 * points, option parsing helpers and default paths. Only main() exits. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* Exit statuses, and what an option parser returns to say "go on". */
enum {
    CLI_GO_ON = -1, /* options parsed: run the command */
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,  /* the command failed (a message says why) */
    CLI_EXIT_USAGE = 2, /* a bad command line (a message says what) */
};

/* Each subcommand returns the process exit status (CLI_EXIT_*). */
int cli_cmd_generate(int argc, char **argv); /* cmd_generate.c */
int cli_cmd_tokenize(int argc, char **argv); /* cmd_tokenize.c: tokenize, detokenize */
int cli_cmd_detokenize(int argc, char **argv);
int cli_cmd_kv(int argc, char **argv);          /* cmd_kv.c */
int cli_cmd_perplexity(int argc, char **argv);  /* cmd_perplexity.c */
int cli_cmd_info(int argc, char **argv);        /* cmd_info.c */
int cli_cmd_serve(int argc, char **argv);       /* cmd_serve.c */
int cli_cmd_bench(int argc, char **argv);       /* cmd_bench.c */
int cli_cmd_bench_cache(int argc, char **argv); /* bench_cache.c */
int cli_cmd_bench_serve(int argc, char **argv); /* bench_serve.c */
/* The agent (cmd_agent.c): no command, -p, --resume; prompt. */
int cli_cmd_agent(int argc, char **argv);
int cli_cmd_prompt(int argc, char **argv);
/* Saved sessions (cmd_stats.c). */
int cli_cmd_sessions(int argc, char **argv);
int cli_cmd_stats(int argc, char **argv);

/* Prints o as one line of JSON and a newline on stdout. The text is valid
 * UTF-8 whatever the strings held: bytes that are not UTF-8 become U+FFFD
 * (cJSON copies them as they are). Returns 0, or CLI_EXIT_FAIL when out of
 * memory (nothing printed). */
struct cJSON;
int cli_json_puts(const struct cJSON *o);

/* The model file (util_model_find's search order) into out. Returns 0, or
 * prints "cachet: ..." naming the places searched and returns
 * CLI_EXIT_FAIL. */
int cli_model_path(char *out, size_t cap, const char *given);
/* The data directory (util_data_dir_find's search order) into out. Returns
 * 0, or prints "cachet: ..." and returns CLI_EXIT_FAIL. */
int cli_data_dir(char *out, size_t cap, const char *given);

/* Strict number parsing for options: the whole string must parse and lie in
 * [lo, hi]. Return 0 on success, else print "cachet: option '...': ..." and
 * return CLI_EXIT_USAGE. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out);
/* A memory size ("512MiB", "1GB", util_parse_size's units), more than 0. */
int cli_parse_size(const char *opt, const char *s, uint64_t *out);

/* The compute device: `given` (the --device value, or NULL when the option is
 * absent, then $CACHET_DEVICE, else "auto"). Checks the syntax only (auto,
 * cpu, cuda, cuda:N with N in 0..64); whether the device exists is the
 * engine's to say. Stores a static or borrowed string in *out (never freed).
 * Returns 0, or prints "cachet: ..." naming the option or variable and
 * returns CLI_EXIT_USAGE. */
int cli_parse_device(const char **out, const char *given);

#endif
