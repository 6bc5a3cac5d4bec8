/* linter/lint_registry.h: the names findings speak of: change classes
 * (how often a value changes) and kinds of volatile values. The rule table's
 * API is public (lint.h); both live in lint_registry.c, the lowest layer of
 * linter/ (see lint.h for the order). Private to linter/. */
#ifndef LINT_REGISTRY_H
#define LINT_REGISTRY_H

#include "lint.h"

/* --- how often a volatile value changes (higher = more often) ------------ */
typedef enum lint_vclass {
    LINT_VC_NONE = 0,
    LINT_VC_USER,    /* per user: names, e-mail, home paths */
    LINT_VC_DAY,     /* per day: dates, weekdays */
    LINT_VC_SESSION, /* per session: session ids, cwd, git branch, hosts */
    LINT_VC_TURN,    /* per turn: retrieved text, history, counters */
    LINT_VC_CALL,    /* per call: times, timestamps, request ids, nonces */
    LINT_VC_COUNT
} lint_vclass;

const char *lint_vclass_name(int vc); /* "per-day", ... */

/* --- kinds of volatile values ----------------------------------------------- */
typedef enum lint_kind {
    LINT_K_PLACEHOLDER = 0,
    LINT_K_DATE,
    LINT_K_DATETIME,
    LINT_K_TIME,
    LINT_K_WEEKDAY,
    LINT_K_TIMESTAMP,
    LINT_K_RELTIME,
    LINT_K_UUID,
    LINT_K_ID,
    LINT_K_NONCE,
    LINT_K_HASH,
    LINT_K_NAME,
    LINT_K_HOME,
    LINT_K_HOST,
    LINT_K_IP,
    LINT_K_COUNTER,
    LINT_K_GREETING,
    LINT_K_CUSTOM,
    LINT_K_ENV,      /* a fact about the user's machine: OS, shell, working directory */
    LINT_K_SHELL,    /* a command's output inserted when the prompt runs: !`git status` */
    LINT_K_LOCATION, /* where the user is: city, country, time zone */
    LINT_K_PROFILE,  /* a chat participant's profile field: pronouns, bio */
    LINT_K_CONTENT,  /* per-request text pasted in a tag: <search_results>, <user_query> */
    LINT_K_COUNT
} lint_kind;

const char *lint_kind_name(int kind); /* "date", "placeholder", ... */

#endif
