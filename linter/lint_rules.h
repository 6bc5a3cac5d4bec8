/* linter/lint_rules.h: the rules pass over one file (lint_rules.c). It gets
 * what it needs (patterns, a token counter, the options) from its caller,
 * lint_ctx.c, and calls only modules below it: detect, config, report, text,
 * the registry, and util/skillmd. Private to linter/. */
#ifndef LINT_RULES_H
#define LINT_RULES_H

#include <stddef.h>

#include "lint.h"
#include "lint_config.h"
#include "lint_detect.h"

/* A token counter: count(user, text, len, &estimated) returns the number of
 * tokens of text and sets *estimated to 1 when the number is an estimate. */
typedef struct lint_counter {
    long (*count)(void *user, const char *text, size_t len, int *estimated);
    void *user;
} lint_counter;

/* What the rules need besides the file: the compiled patterns, a token counter
 * and the options (select_override and ignore_extra are read). Borrowed. */
typedef struct lint_rules_env {
    const lint_detect *det;
    lint_counter tokens;
    const lint_options *opt;
} lint_rules_env;

/* One file for the rules pass. */
typedef struct lint_rules_file {
    const lint_config *cfg; /* the config that governs it */
    int role;               /* lint_role */
    const char *display;    /* path printed in findings */
    const char *rel;        /* path relative to the config's directory */
    const char *data;       /* the bytes (may be NULL when len is 0) */
    size_t len;
} lint_rules_file;

/* Runs every enabled rule on one file and appends its findings to rep. */
int lint_rules_run(lint_report *rep, const lint_rules_env *env, const lint_rules_file *file, util_err *err);

#endif
