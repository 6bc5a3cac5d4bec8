/* util/path.h: where cachet's files are: the running executable, the one
 * search order for the model file and the one for the data directory
 * (prompts/, skills/, linter/rules/), shared by cachet and promptlint. Reads
 * the environment and the file system; creates nothing, never prints. */
#ifndef UTIL_PATH_H
#define UTIL_PATH_H

#include <stddef.h>

#include "err.h"

/* The model used when none is given: a file name searched for (util_model_find). */
#define UTIL_DEFAULT_MODEL "SmolLM2-135M-Instruct.Q4_1.gguf"

/* The running executable's absolute path (/proc/self/exe, symlinks
 * resolved), into out. UTIL_ENOTFOUND when the system does not say. */
int util_exe_path(char *out, size_t cap, util_err *err);
/* The directory holding it (no trailing slash). */
int util_exe_dir(char *out, size_t cap, util_err *err);

/* The model file, first match wins:
 *   1. given (--model), as given
 *   2. $CACHET_MODEL
 *   3. $XDG_DATA_HOME/cachet/models/<default> (unset or empty: ~/.local/share)
 *   4. <exe>/../share/cachet/models/<default>   (an installed cachet)
 *   5. ./models/<default>
 *   6. <source tree>/models/<default>           (<exe>/.., or <exe>/../../.. for
 *      a build tree such as build/san/bin, whichever holds prompts/)
 * A given or $CACHET_MODEL path must exist (it may still fail to open): if
 * it does not, UTIL_ENOTFOUND naming it, with out holding it. Places 3-6 must
 * be readable; when none is, UTIL_ENOTFOUND naming every place searched and
 * out is "". */
int util_model_find(char *out, size_t cap, const char *given, util_err *err);

/* The name cachet shows for the model file at path, everywhere (sessions,
 * tier 2, cachet prompt, serve's /v1/models): its file name without
 * ".gguf" ("SmolLM2-135M-Instruct.Q4_1"). Writes into out; returns out. */
const char *util_model_id(char *out, size_t cap, const char *path);

/* The data directory (holds prompts/; also skills/ and linter/rules/),
 * first match wins:
 *   1. given (--data-dir)
 *   2. $CACHET_DATA
 *   3. <exe>/.. when it holds prompts/ (a source tree; <exe>/../../.. for a
 *      build tree such as build/san/bin)
 *   4. <exe>/../share/cachet                    (an installed cachet)
 *   5. CACHET_DATADIR, compiled in: PREFIX/share/cachet
 * A given or $CACHET_DATA directory without prompts/ is UTIL_ENOTFOUND naming
 * it; when no place holds prompts/, UTIL_ENOTFOUND naming every place
 * searched. Paths found from the executable are canonical (realpath). */
int util_data_dir_find(char *out, size_t cap, const char *given, util_err *err);

#endif
