/* cli/opts.h: the engine options, one table for every command that opens a
 * model (generate, tokenize, the agent and prompt, serve, bench, bench
 * cache): --model, --threads, --ctx-size, the prefix cache's --kv-budget,
 * --kv-disk-budget, --kv-dir, --no-cache, --no-disk-cache, and --exact,
 * --device, --debug, --spec (speculative decoding; bench ignores it), KV
 * eviction (--kv-sinks/--kv-window, --kv-evict h2o/--kv-budget-tokens/--kv-recent). Parsed by one function and printed in each --help from
 * the same table, so a command cannot drift from the others. Options of a
 * single command stay in its cmd_*.c. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "../engine/engine.h"
#include "cli.h"

/* Which engine options a command takes: all, or --model alone (tokenize
 * reads the tokenizer and nothing else). */
typedef enum cli_engine_set { CLI_ENGINE_ALL = 0, CLI_ENGINE_MODEL_ONLY = 1 } cli_engine_set;

/* getopt_long codes of the engine options start here; a command's own codes
 * stay below it. */
enum { CLI_OPT_ENGINE = 0x1000 };

typedef struct cli_engine {
    const char *model;    /* --model as given; NULL: the search order (util/path.h) */
    eng_model_params mp;  /* --threads, --kv-*, --no-cache, --no-disk-cache, --exact, --device, --debug */
    int n_ctx;            /* --ctx-size; 0: the model's */
    eng_spec_params spec; /* --spec, --spec-max, --spec-ngram (generation commands) */
    char path[PATH_MAX];  /* the model file, found by cli_engine_finish */
} cli_engine;

/* A different help line for one engine option in one command's --help (its
 * default differs, or the command sets it itself). */
typedef struct cli_engine_note {
    const char *name; /* "threads" */
    const char *help;
} cli_engine_note;

/* Writes `own` (a command's options, ended by a zero entry) followed by the
 * engine options of `set` and a zero entry into out, which has room for cap
 * entries. Returns 0, or CLI_EXIT_FAIL when out is too small (a bug). */
int cli_engine_longopts(struct option *out, size_t cap, const struct option *own, cli_engine_set set);

/* Applies engine option c (getopt_long's return) with its argument.
 * Returns 1 if c was an engine option, 0 if not, or CLI_EXIT_USAGE (2)
 * after printing "cachet: option '--x': ..." for a bad value. */
int cli_engine_parse(cli_engine *e, int c, const char *arg);

/* After the options: --device's default ($CACHET_DEVICE, else auto) and,
 * when find_model is set, the model file into e->path. Returns CLI_GO_ON,
 * or an exit status after printing why. */
int cli_engine_finish(cli_engine *e, int find_model);

/* Prints the engine options of `set` as --help lines ("  --kv-budget SIZE
 * ..."); notes (NULL or ended by a zero entry) replace some help texts. */
void cli_engine_usage(FILE *f, cli_engine_set set, const cli_engine_note *notes);

#endif
