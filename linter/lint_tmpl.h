/* linter/lint_tmpl.h: template semantics (lint_tmpl.c). Decides whether a
 * file's tags render inside code, treats YAML frontmatter as metadata, and
 * reads Jinja, Handlebars/Mustache and Go template tags as what they are:
 * output expressions, assignments, loops, conditions, macros, comments.
 * Fills the text's quiet and tag ranges (what renders nothing where it
 * stands) and returns the placeholders with their change class. Calls
 * detect (name classes, the words around a value), config and text below
 * it; does not decide findings (lint_rules.c). Private to linter/. */
#ifndef LINT_TMPL_H
#define LINT_TMPL_H

#include <stddef.h>

#include "lint_config.h"
#include "lint_detect.h"
#include "lint_text.h"

/* Analyses t (a file named rel, relative to its config): sets t->is_template,
 * frontmatter and no-output line flags and the quiet/tag ranges (finished),
 * appends volatile placeholders to spans (kind LINT_K_PLACEHOLDER) and output
 * placeholders that no name, binding or surrounding words class to unknown
 * (vclass LINT_VC_NONE; rule PL008). Returns UTIL_OK or UTIL_ENOMEM. */
int lint_tmpl_scan(const lint_detect *d, const lint_config *cfg, lint_text *t, const char *rel,
                   lint_spanv *spans, lint_spanv *unknown, util_err *err);

#endif
