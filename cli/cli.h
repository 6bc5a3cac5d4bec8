/* cli/cli.h: shared pieces of the cachet command line: subcommand entry
 * points, option parsing helpers and default paths. Only main() exits. */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stddef.h>

#include "../util/err.h"

/* Each subcommand returns the process exit status (0 ok, 1 failure, 2 usage). */
int cli_cmd_generate(int argc, char **argv); /* cmd_generate.c: generate, tokenize */
int cli_cmd_tokenize(int argc, char **argv);
int cli_cmd_kv(int argc, char **argv);       /* cmd_kv.c */
int cli_cmd_serve(int argc, char **argv);    /* cmd_serve.c */
int cli_cmd_bench(int argc, char **argv);    /* cmd_bench.c */
int cli_cmd_bench_cache(int argc, char **argv); /* bench_cache.c */
/* The agent (cmd_agent.c): no command, -p, --resume; prompt. */
int cli_cmd_agent(int argc, char **argv);
int cli_cmd_prompt(int argc, char **argv);
/* Saved sessions (cmd_stats.c). */
int cli_cmd_sessions(int argc, char **argv);
int cli_cmd_stats(int argc, char **argv);

/* The model file (util_model_find's search order) into out. Returns 0, or
 * prints "cachet: ..." naming the places searched and returns 1 (the exit
 * status). */
int cli_model_path(char *out, size_t cap, const char *given);
/* The data directory (util_data_dir_find's search order) into out. Returns
 * 0, or prints "cachet: ..." and returns 1. */
int cli_data_dir(char *out, size_t cap, const char *given);

/* Strict number parsing for options: the whole string must parse and lie in
 * [lo, hi]. Return 0 on success, print "cachet: ..." and return -1 otherwise. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out);

/* The compute device: `given` (the --device value, or NULL when the option is
 * absent, then $CACHET_DEVICE, else "auto"). Checks the syntax only (auto,
 * cpu, cuda, cuda:N with N in 0..64); whether the device exists is the
 * engine's to say. Stores a static or borrowed string in *out (never freed).
 * Returns 0, or prints "cachet: ..." naming the option or variable and
 * returns -1 (a usage error). */
int cli_parse_device(const char **out, const char *given);

#endif
