/* util/version.h: the one version string of cachet and promptlint (their
 * --version, promptlint's JSON and SARIF output) and the commit one was
 * built from.
 * Raised here and nowhere else; a release tags the commit that raises it. */
#ifndef UTIL_VERSION_H
#define UTIL_VERSION_H

#define UTIL_VERSION "0.1.0"

/* The commit a binary was built from ("38ef1d3-dirty"), set by the Makefile
 * on the two main.c files only; "" when not built in a git checkout. */
#ifndef CACHET_GIT_DESCRIBE
#define CACHET_GIT_DESCRIBE ""
#endif

/* Prints "NAME 0.1.0 (git 38ef1d3)\n" (no parenthesis without git) on f. */
#define UTIL_PRINT_VERSION(f, name)                                                             \
    fprintf((f), "%s %s%s%s%s\n", (name), UTIL_VERSION, CACHET_GIT_DESCRIBE[0] ? " (git " : "", \
            CACHET_GIT_DESCRIBE, CACHET_GIT_DESCRIBE[0] ? ")" : "")

#endif
