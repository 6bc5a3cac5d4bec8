/* linter/lint_detect.c: volatile-content detection with PCRE2. Every pattern
 * runs once over the whole file (multiline, JIT when available); matches are
 * filtered by context (code, examples, constant qualifiers) and classed by how
 * often they change. Also finds order-unstable constructs and suppression
 * comments. Does not decide what is an error (lint_rules.c does). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint_detect.h"
#include "lint_registry.h"

/* --- pattern text ------------------------------------------------------------
 * Horizontal whitespace is \h, never \s: patterns run over the whole file and
 * must not run across lines. */

#define MONTH                                                                          \
    "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|" \
    "Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
#define WDAY                                                                    \
    "(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|" \
    "Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
#define ISO_DATE "\\d{4}[-/](?:0[1-9]|1[0-2])[-/](?:0[1-9]|[12]\\d|3[01])"
#define NUM_DATE                                                              \
    "(?<![\\d./-])(?:0?[1-9]|[12]\\d|3[01])([/.-])(?:0?[1-9]|[12]\\d|3[01])\\g{-1}" \
    "(?:\\d{4}|\\d{2})(?![\\d.]\\d)"
#define MNAME_DATE                                                                    \
    "(?:" WDAY "\\.?,?\\h+)?(?:" MONTH "\\.?\\h+\\d{1,2}(?:st|nd|rd|th)?\\b(?:,?\\h+\\d{4})?|" \
    "\\d{1,2}(?:st|nd|rd|th)?\\h+(?:of\\h+)?" MONTH "\\b\\.?(?:,?\\h+\\d{4})?)"
#define MNAME_DATE_Y                                                           \
    "(?:" WDAY "\\.?,?\\h+)?(?:" MONTH "\\.?\\h+\\d{1,2}(?:st|nd|rd|th)?,?\\h+\\d{4}|" \
    "\\d{1,2}(?:st|nd|rd|th)?\\h+(?:of\\h+)?" MONTH "\\.?,?\\h+\\d{4})"
#define ZONE "(?-i:\\h*(?:(?:UTC|GMT|[A-Z]{2,4}T)\\b|Z\\b|[+-]\\d{2}:?\\d{2}))?"
#define TOD                                                                             \
    "(?:(?<![\\d:.])(?:[01]?\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:[.,]\\d{1,9})?)?(?![\\d:])" \
    "(?:\\h*[ap]\\.?m\\.?\\b)?" ZONE "|(?<![\\d:.])(?:1[0-2]|0?[1-9])\\h*[ap]\\.?m\\b\\.?" ZONE ")"
#define ISO_DT                                                                     \
    ISO_DATE "[T\\h](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:[.,]\\d+)?)?" \
             "(?:Z|[+-](?:[01]\\d):?[0-5]\\d)?"
#define RFC2822                                                                     \
    WDAY ",\\h+\\d{1,2}\\h+" MONTH "\\h+\\d{4}\\h+\\d{2}:\\d{2}(?::\\d{2})?" \
         "(?:\\h+(?:[+-]\\d{4}|UT|GMT|[A-Z]{3}))?"
#define UNIX_TS "(?<![\\d.])1[5-9]\\d{8}(?:\\d{3})?(?![\\d.])"

#define LABEL                                                                             \
    "(\\b(?:today(?:'s\\h+date)?|tonight|right\\h+now|now|currently|"                    \
    "current(?:[\\h_-]?(?:date(?:\\h+and\\h+time)?|time(?:\\h+and\\h+date)?|datetime|"   \
    "timestamp|day|local\\h+time))?|as\\h+of(?:\\h+(?:today|now))?|"                      \
    "the\\h+(?:date|time|day|date\\h+and\\h+time|time\\h+and\\h+date)(?:\\h+(?:today|now))?|" \
    "it\\h+is(?:\\h+now)?|it's(?:\\h+now)?|date|time|datetime|date/time|timestamp|"       \
    "local\\h+time|server\\h+time|system\\h+time|utc\\h+time|generated(?:\\h+(?:at|on))?|"  \
    "rendered(?:\\h+(?:at|on))?|last\\h+(?:login|seen|active|activity)|"                   \
    "session\\h+start(?:ed)?(?:\\h+(?:at|on))?|started\\h+at|time\\h+now)\\b)"             \
    "\\h*(?:is\\b|was\\b|:|=|,|-|\\xe2\\x80[\\x93\\x94])?\\h*(?:\\*\\*|__|[\"'])?\\h*"

/* --- the literal pattern table -------------------------------------------- */

enum { PM_ALWAYS = 0, PM_LABELLED, PM_NAME_LINE, PM_NAME, PM_IDS, PM_HASH, PM_HEX, PM_IP,
       PM_COUNTER, PM_RELTIME, PM_UUID, PM_HOME };

typedef struct pat_def {
    const char *re;
    int mode;
    int kind;
    int vclass;
    int subday;
} pat_def;

static const pat_def k_literals[] = {
    /* timestamps: machine-made, volatile even without a label */
    {"(?i)(?<![\\w])(?:" ISO_DT ")(?![\\w:])|(?<![\\w])" RFC2822, PM_ALWAYS, LINT_K_DATETIME,
     LINT_VC_CALL, 1},
    {"(?i)(?<![\\w])(?:" MNAME_DATE_Y "|" ISO_DATE "|" NUM_DATE
     "),?\\h+(?:at\\h+)?(?:[01]?\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d)?(?:\\h*[ap]\\.?m\\b\\.?)?" ZONE,
     PM_ALWAYS, LINT_K_DATETIME, LINT_VC_CALL, 1},
    /* a date, weekday, time or epoch labelled as the current one */
    {"(?i)" LABEL "\\K(?:" ISO_DT "|" ISO_DATE "(?:,?\\h+(?:at\\h+)?" TOD ")?|(?:" WDAY
     ",?\\h+)?(?:" MNAME_DATE "|" NUM_DATE ")(?:,?\\h+(?:at\\h+)?" TOD ")?|" WDAY
     "\\b(?:,?\\h+(?:at\\h+)?" TOD ")?|" TOD "|" UNIX_TS ")",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0},
    {"(?i)(\\b(?:ts|timestamp|epoch|unix(?:[\\h_]?time)?|created(?:_at)?|updated(?:_at)?)\\b)"
     "\\h*[:=]\\h*[\"']?\\K" UNIX_TS,
     PM_LABELLED, LINT_K_TIMESTAMP, LINT_VC_CALL, 1},
    {"(?i)\\b\\d+\\h+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\\h+ago\\b",
     PM_RELTIME, LINT_K_RELTIME, LINT_VC_CALL, 0},
    {"(?im)^[\\h>*_#-]*\\Kgood\\h+(?:morning|afternoon|evening)\\b", PM_ALWAYS, LINT_K_GREETING,
     LINT_VC_CALL, 1},
    /* ids, nonces, hashes */
    {"(?i)(?<![\\w-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\\w-])",
     PM_UUID, LINT_K_UUID, LINT_VC_CALL, 0},
    {"(?i)\\b(request|req|session|trace|span|correlation|conversation|run|job|message|msg|"
     "thread|chat|invocation|call|interaction|user|visitor|client|device|transaction|tx)"
     "[\\h_-]?id\\b\\h*(?:is\\h+|[:=#]\\h*)?[\"'`]?\\K[A-Za-z0-9][A-Za-z0-9_:.-]{3,}",
     PM_IDS, LINT_K_ID, LINT_VC_CALL, 0},
    {"(?i)\\bnonce\\h*(?:is\\h+|[:=]\\h*)[\"'`]?\\K[A-Za-z0-9+/=_-]{6,}", PM_ALWAYS,
     LINT_K_NONCE, LINT_VC_CALL, 0},
    {"(?i)\\b(?:commit|sha(?:-?1|-?256)?|hash|head|rev(?:ision)?|checksum|digest|etag|"
     "build[\\h_-]?id)\\b\\h*(?:is\\h+|at\\h+|[:=#@]\\h*)?[\"'`]?\\K[0-9a-f]{7,64}(?![\\w])",
     PM_HASH, LINT_K_HASH, LINT_VC_SESSION, 0},
    {"(?i)(?<![\\w])[0-9a-f]{32,128}(?![\\w])", PM_HEX, LINT_K_HASH, LINT_VC_CALL, 0},
    /* people, places, machines */
    {"(?:(?i:\\byou(?:'re|\\h+are)?(?:\\h+now)?\\h+(?:talking|speaking|chatting|working|"
     "conversing)\\h+(?:to|with))|(?i:\\b(?:hello|hi|hey|dear|greetings|welcome(?:\\h+back)?|"
     "good\\h+(?:morning|afternoon|evening)),?)|(?i:\\bthe\\h+user(?:'s\\h+name)?\\h+is"
     "(?:\\h+(?:called|named))?)|(?i:\\byou\\h+are\\h+(?:assisting|helping|serving)))\\h+"
     "\\K[A-Z][a-z]+(?:[\\h-][A-Z][a-z]+){0,2}\\b",
     PM_NAME, LINT_K_NAME, LINT_VC_USER, 0},
    {"(?m)^\\h*(?:[-*]\\h+)?(?:\\*\\*)?(?i:user|username|user\\h+name|customer|human|client|"
     "name)(?:\\*\\*)?\\h*:(?:\\*\\*)?\\h*\\K[A-Z][a-z]+(?:\\h[A-Z][a-z]+){0,2}"
     "(?=\\h*(?:<!--[^\\n]*)?$)",
     PM_NAME_LINE, LINT_K_NAME, LINT_VC_USER, 0},
    {"(?<![\\w/~.])(?:/home|/Users)/(?!(?:user|username|you|me|name|example|someone|shared|"
     "Shared|runner|linuxbrew)\\b)[A-Za-z0-9_][\\w.-]*|(?i)\\b[A-Z]:\\\\Users\\\\"
     "(?!(?:user|username|you|public|default|example)\\b)\\w[\\w.-]*",
     PM_HOME, LINT_K_HOME, LINT_VC_USER, 0},
    {"(?<![\\w.])(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}"
     "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?!\\w)(?!\\.\\d)|(?i)(?<![\\w:])"
     "(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\\w:])",
     PM_IP, LINT_K_IP, LINT_VC_SESSION, 0},
    {"(?i)\\b(?:host\\h?name|machine(?:\\h+name)?|computer(?:\\h+name)?|device\\h+name)"
     "\\h*(?:is\\h+|[:=]\\h*)[\"'`]?\\K[A-Za-z0-9][A-Za-z0-9-]*(?:\\.[A-Za-z0-9-]+)*",
     PM_ALWAYS, LINT_K_HOST, LINT_VC_SESSION, 0},
    /* counters */
    {"(?i)\\b(?:turn|message|msg|round|iteration|attempt|request|exchange|interaction)"
     "\\h*(?:#|no\\.?\\h*|number\\h*)?:?\\h*\\d+\\b(?!\\h*(?:%|ms\\b|s\\b|sec|min|hour|day|"
     "tokens?\\b|words?\\b|char|times\\b|[.,]\\d))|(?i)\\b\\d+(?:st|nd|rd|th)\\h+"
     "(?:turn|message|round|attempt)\\b",
     PM_COUNTER, LINT_K_COUNTER, LINT_VC_TURN, 0},
};
#define N_LITERALS (sizeof k_literals / sizeof k_literals[0])

/* --- placeholders: group 1 is the variable name ------------------------------ */

typedef struct ph_def {
    const char *re;
    int renders_in_code; /* jinja/mustache render inside code fences of templates */
} ph_def;

static const ph_def k_placeholders[] = {
    {"\\{\\{\\{?-?\\h*[#^&]?\\h*([A-Za-z_][\\w.]*)[^}\\n]*\\}\\}\\}?", 1},
    {"\\{%-?\\h*for\\h+[\\w\\h,()]+?\\h+in\\h+([A-Za-z_][\\w.]*)[^%\\n]*%\\}", 1},
    {"\\$\\{([A-Za-z_]\\w*)[^}\\n]*\\}", 0},
    {"(?<![\\w$\\\\])\\$([A-Za-z_]\\w*)\\b", 0},
    {"(?<![{\\w$])\\{([A-Za-z_][\\w.]*)(?:\\[[^\\]\\n]*\\])?(?:![rsa])?(?::[^{}\\n]*)?\\}(?!\\})",
     0},
    {"%\\(([A-Za-z_]\\w*)\\)[sdrfi]", 0},
};
#define N_PLACEHOLDERS (sizeof k_placeholders / sizeof k_placeholders[0])

/* Placeholder names by change frequency, tried in this order. */
static const struct {
    int vclass;
    const char *re;
} k_names[] = {
    {LINT_VC_CALL,
     "(?:now|time|timestamp|ts|datetime|date_?time|current_?(?:time|datetime|timestamp|ts)|"
     "time_?of_?day|clock|(?:unix|epoch)(?:_?(?:time|ts|ms|s))?|request_?id|req_?id|nonce|"
     "random\\w*|rand|uuid|guid|trace_?id|span_?id|call_?id|seed|cache_?buster|"
     "\\w+_(?:timestamp|ts|nonce|uuid|time|datetime|at))"},
    {LINT_VC_TURN,
     "(?:retrieved\\w*|retrieval\\w*|context|contexts|documents?|docs|search_?results?|"
     "results|history|chat_?history|conversation(?:_?history)?|messages?|memory|memories|query|"
     "queries|question|input|user_?(?:input|message|query|question|request|prompt)|prompt|"
     "turn(?:_\\w+)?|snippets?|chunks?|passages?|rag(?:_\\w+)?|tool_?(?:results?|outputs?|"
     "calls?)|observations?|scratchpad|git_?(?:status|diff)|diff|file_?contents?|relevant_\\w+|"
     "knowledge|sources|citations|\\w+_(?:results?|context|history|snippets?|chunks?|"
     "documents?|docs|messages?|query|input))"},
    {LINT_VC_SESSION,
     "(?:session(?:_?\\w+)?|cwd|pwd|workdir|work_?dir|working_?dir(?:ectory)?|"
     "project_?(?:dir|root|path)|git_?\\w+|branch|os|platform|os_?(?:name|version)|hostname|host|"
     "machine|shell|env|environment|model|model_?(?:name|id)|pid|home|home_?dir|"
     "workspace(?:_?(?:dir|path|root))?|\\w+_session(?:_id)?)"},
    {LINT_VC_DAY,
     "(?:date|today|current_?date|todays?_?date|day|weekday|day_?of_?week|date_?str(?:ing)?|"
     "\\w+_date|year|month|current_?(?:year|month|day))"},
    {LINT_VC_USER,
     "(?:user|user_?name|username|name|email|e_?mail|user_?email|user_?id|first_?name|"
     "last_?name|full_?name|display_?name|nick(?:name)?|locale|language|lang|timezone|tz|"
     "user_\\w+|customer(?:_\\w+)?|account(?:_\\w+)?|phone)"},
};
#define N_NAMES (sizeof k_names / sizeof k_names[0])

#define SUBDAY_NAMES                                                              \
    "(?:now|time|timestamp|ts|datetime|date_?time|current_?(?:time|datetime|timestamp|ts)|" \
    "time_?of_?day|clock|(?:unix|epoch)(?:_?(?:time|ts|ms|s))?|\\w+_(?:timestamp|ts|time|"   \
    "datetime|at))"

/* Words that make a literal an example, and qualifiers that make a date a
 * fixed fact rather than the current one. Both look at the text before it. */
#define EXAMPLE_CTX                                                                          \
    "(?i)(?:\\be\\.?g\\.|\\beg\\b|\\bi\\.e\\.|\\bfor\\h+(?:example|instance)|\\bexamples?\\b|" \
    "\\bsamples?\\b|\\bsuch\\h+as\\b|\\blike\\b|\\bformat(?:ted|s)?\\b|\\bpattern\\b|"      \
    "\\bsyntax\\b|\\bstyle\\b|\\bplaceholder\\b|\\bfake\\b|\\bdummy\\b)"
#define CONST_CTX                                                                            \
    "(?i)\\b(?:release[sd]?|due|birth(?:day|date)?|born|expir\\w*|expires?|effective|"      \
    "publication|published|cut-?off|launch(?:ed)?|deadline|found(?:ed|ing)|creation|"       \
    "copyright|modified|revision|version|valid|since|until|from|between|opening|closing|"    \
    "office|business|meeting|appointment|departure|arrival|check-?in|check-?out|starts?|"   \
    "starting|ends?|ending|scheduled|schedule|event|on|before|after|by|response|run|wake|"   \
    "opens?|closes?|last\\h+updated)\\b[^\\w\\n]*(?:\\w+[^\\w\\n]*){0,2}$"

#define ORDER_MAP                                                                            \
    "\\{%-?\\h*for\\h+\\w+\\h*,\\h*\\w+\\h+in\\h+(?![^%\\n]*sort)[^%\\n]*%\\}|"              \
    "\\{%-?\\h*for\\h+[^%\\n]*?\\bin\\h+(?![^%\\n]*sort)[^%\\n]*\\.(?:items|keys|values|"      \
    "iteritems)\\h*\\(\\h*\\)[^%\\n]*%\\}|\\{\\{#each\\h+[^}\\n]*\\}\\}[^\\n]*\\{\\{@key"
#define ORDER_GLOB                                                                           \
    "\\{%-?\\h*(?:include|import|from)\\h+[\"'][^\"'\\n]*[*?][^\"'\\n]*[\"'][^%\\n]*%\\}|"   \
    "\\{\\{>\\h*[^}\\n]*\\*[^}\\n]*\\}\\}|(?m)^\\h*[@!]include\\h+\\S*[*?]\\S*|"            \
    "\\bglob(?:\\.glob)?\\h*\\([^)\\n]*\\)"
#define ORDER_TOOLS                                                                          \
    "\\{%-?\\h*for\\h+\\w+\\h+in\\h+((?:tools|functions|skills|tool_list|available_tools|"  \
    "commands|plugins)\\b)(?![^%\\n]*sort)[^%\\n]*%\\}"
#define TOOL_HEADING "(?i)^\\h{0,3}#{1,6}\\h.*\\b(?:tools?|functions?|commands)\\b"
#define TOOL_ITEM                                                                            \
    "^(\\h*)[-*+]\\h+(?:\\*\\*|`)?([A-Za-z_][\\w.-]*)(?:\\*\\*|`)?\\h*(?::|\\xe2\\x80[\\x93\\x94]|" \
    "-\\h|\\(|$)"

#define DIRECTIVE_HTML                                                                       \
    "<!--\\h*promptlint-(disable-next-line|disable-line|disable-file|disable|enable)\\b"      \
    "([^>\\n]*?)\\h*-->"
#define DIRECTIVE_JINJA                                                                      \
    "\\{#-?\\h*promptlint\\h*:\\h*(disable-next-line|disable-line|disable-file|disable|"     \
    "enable)\\b\\h*=?\\h*([^#\\n]*?)\\h*-?#\\}"

enum { RX_EXAMPLE = 0, RX_CONST, RX_SUBDAY, RX_ORDER_MAP, RX_ORDER_GLOB, RX_ORDER_TOOLS,
       RX_TOOL_HEADING, RX_TOOL_ITEM, RX_DIR_HTML, RX_DIR_JINJA, RX_MISC_COUNT };

static const char *const k_misc[RX_MISC_COUNT] = {
    EXAMPLE_CTX, CONST_CTX, "^" SUBDAY_NAMES "$", ORDER_MAP, ORDER_GLOB, ORDER_TOOLS,
    TOOL_HEADING, TOOL_ITEM, DIRECTIVE_HTML, DIRECTIVE_JINJA,
};

struct lint_detect {
    pcre2_code *lit[N_LITERALS];
    pcre2_code *ph[N_PLACEHOLDERS];
    pcre2_code *names[N_NAMES];
    pcre2_code *misc[RX_MISC_COUNT];
    pcre2_match_context *mctx;
};

/* --- compile --------------------------------------------------------------- */

static int compile_one(pcre2_code **out, const char *re, uint32_t flags, util_err *err) {
    int ec;
    PCRE2_SIZE off;
    *out = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, flags, &ec, &off, NULL);
    if (!*out) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return util_err_set(err, UTIL_EINTERNAL, "pattern '%.60s': %s at offset %zu", re,
                            (const char *)msg, (size_t)off);
    }
    pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    return UTIL_OK;
}

int lint_detect_new(lint_detect **out, util_err *err) {
    *out = NULL;
    lint_detect *d = calloc(1, sizeof *d);
    if (!d) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    int rc = UTIL_OK;
    for (size_t i = 0; i < N_LITERALS && !rc; i++)
        rc = compile_one(&d->lit[i], k_literals[i].re, PCRE2_MULTILINE, err);
    for (size_t i = 0; i < N_PLACEHOLDERS && !rc; i++)
        rc = compile_one(&d->ph[i], k_placeholders[i].re, PCRE2_MULTILINE, err);
    for (size_t i = 0; i < N_NAMES && !rc; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "^%s$", k_names[i].re);
        rc = compile_one(&d->names[i], buf, PCRE2_CASELESS, err);
    }
    for (size_t i = 0; i < RX_MISC_COUNT && !rc; i++)
        rc = compile_one(&d->misc[i], k_misc[i],
                         (i == RX_TOOL_HEADING || i == RX_TOOL_ITEM) ? PCRE2_MULTILINE
                         : i == RX_SUBDAY                            ? PCRE2_CASELESS
                                                                     : 0,
                         err);
    if (!rc) {
        d->mctx = pcre2_match_context_create(NULL);
        if (!d->mctx) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        else pcre2_set_match_limit(d->mctx, 2000000);
    }
    if (rc) {
        lint_detect_free(d);
        return rc;
    }
    *out = d;
    return UTIL_OK;
}

void lint_detect_free(lint_detect *d) {
    if (!d) return;
    for (size_t i = 0; i < N_LITERALS; i++) pcre2_code_free(d->lit[i]);
    for (size_t i = 0; i < N_PLACEHOLDERS; i++) pcre2_code_free(d->ph[i]);
    for (size_t i = 0; i < N_NAMES; i++) pcre2_code_free(d->names[i]);
    for (size_t i = 0; i < RX_MISC_COUNT; i++) pcre2_code_free(d->misc[i]);
    pcre2_match_context_free(d->mctx);
    free(d);
}

/* --- span vector ------------------------------------------------------------ */

int lint_spanv_push(lint_spanv *sv, const lint_span *s) {
    if (sv->n == sv->cap) {
        size_t nc = sv->cap ? sv->cap * 2 : 32;
        lint_span *p = realloc(sv->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        sv->v = p;
        sv->cap = nc;
    }
    sv->v[sv->n++] = *s;
    return UTIL_OK;
}

void lint_spanv_release(lint_spanv *sv) {
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}

/* --- matching helpers ------------------------------------------------------------ */

/* Whether re matches anywhere in [a, b). */
static int match_in(const lint_detect *d, pcre2_code *re, const char *s, size_t a, size_t b) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return 0;
    int rc = pcre2_match(re, (PCRE2_SPTR)(s + a), b - a, 0, 0, md, d->mctx);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Start of the text before off on its line, at most 80 bytes back. */
static size_t prefix_start(const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    return off - ls > 80 ? off - 80 : ls;
}

static int example_context(const lint_detect *d, const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    return match_in(d, d->misc[RX_EXAMPLE], t->data, ls, off);
}

static int const_context(const lint_detect *d, const lint_text *t, size_t off) {
    return match_in(d, d->misc[RX_CONST], t->data, prefix_start(t, off), off);
}

int lint_detect_name_class(const lint_detect *d, const lint_config *cfg, const char *name,
                           size_t len, int *subday) {
    char norm[128];
    size_t n = 0;
    *subday = 0;
    for (size_t i = 0; i < len && n + 1 < sizeof norm; i++) {
        char c = name[i];
        norm[n++] = c == '.' || c == '-' ? '_' : (char)tolower((unsigned char)c);
    }
    norm[n] = '\0';
    static const char *const k_suffixes[] = {"_iso", "_str", "_string", "_fmt", "_formatted",
                                             "_utc", "_local", "_text"};
    for (size_t i = 0; i < sizeof k_suffixes / sizeof k_suffixes[0]; i++) {
        size_t sl = strlen(k_suffixes[i]);
        if (n > sl + 1 && memcmp(norm + n - sl, k_suffixes[i], sl) == 0) {
            n -= sl;
            norm[n] = '\0';
            break;
        }
    }
    if (n > 4 && memcmp(norm, "the_", 4) == 0) memmove(norm, norm + 4, (n -= 4) + 1);
    if (cfg)
        for (size_t i = 0; i < cfg->n_names; i++)
            if (strcmp(cfg->names[i].name, norm) == 0) return cfg->names[i].vclass;
    for (size_t i = 0; i < N_NAMES; i++) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(d->names[i], NULL);
        if (!md) return LINT_VC_NONE;
        int rc = pcre2_match(d->names[i], (PCRE2_SPTR)norm, n, 0, 0, md, d->mctx);
        pcre2_match_data_free(md);
        if (rc >= 0) {
            if (k_names[i].vclass == LINT_VC_CALL)
                *subday = match_in(d, d->misc[RX_SUBDAY], norm, 0, n);
            return k_names[i].vclass;
        }
    }
    return LINT_VC_NONE;
}

/* Calls fn for each match of re in t (ov: the ovector). Stops on error. */
typedef int (*match_fn)(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov,
                        int ngroups, void *arg);

static int scan(const lint_detect *d, pcre2_code *re, const lint_text *t, match_fn fn,
                void *arg) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return UTIL_ENOMEM;
    size_t pos = 0;
    int rc = UTIL_OK;
    while (pos <= t->len) {
        int m = pcre2_match(re, (PCRE2_SPTR)t->data, t->len, pos, 0, md, d->mctx);
        if (m == PCRE2_ERROR_NOMATCH) break;
        if (m < 0) { /* match limit on a pathological line: skip that line */
            size_t line = lint_text_line_of(t, pos);
            size_t next = line + 1 < t->n_lines ? t->line_start[line + 1] : t->len + 1;
            pos = next > pos ? next : pos + 1;
            continue;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[0] <= ov[1]) {
            rc = fn(d, t, ov, m, arg);
            if (rc) break;
        }
        size_t next = ov[1] > pos ? ov[1] : pos + 1;
        if (ov[0] > ov[1]) next = pos + 1; /* \K past the end: never loop */
        pos = next;
    }
    pcre2_match_data_free(md);
    return rc;
}

/* --- literal filters --------------------------------------------------------------- */

static int has_digit(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isdigit((unsigned char)s[i])) return 1;
    return 0;
}

static int has_hex_letter(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strchr("abcdefABCDEF", s[i])) return 1;
    return 0;
}

static int word_in(const char *w, size_t n, const char *const *list) {
    for (; *list; list++)
        if (strlen(*list) == n && strncmp(*list, w, n) == 0) return 1;
    return 0;
}

static const char *const k_not_names[] = {
    "World", "There", "All", "Everyone", "Everybody", "User", "Users", "Customer", "Assistant",
    "Friend", "Friends", "Team", "Folks", "Human", "Sir", "Madam", "You", "Me", "The", "A", "An",
    "Please", "Thanks", "Thank", "What", "How", "Why", "When", "Where", "Who", "Which", "Can",
    "Could", "Would", "Should", "Is", "Are", "Do", "Does", "Did", "Tell", "Give", "Write", "Help",
    "Hello", "Hi", "Hey", "My", "Your", "This", "That", "It", "I", "Explain", "Summarize",
    "Translate", "List", "Show", "Find", "Make", "Create", "Yes", "No", "Ok", "Okay", "None",
    "Unknown", "Anonymous", "Guest", "Admin", "Name", "Example", "Again", "Back", "Agent", "Bot",
    "Model", "Claude", "Name", "Today", "Morning", "Afternoon", "Evening", "Good", "Welcome",
    NULL};

/* IPs that are the same everywhere: loopback, unspecified, broadcast, docs. */
static int fixed_ip(const char *s, size_t n) {
    static const char *const k_fixed[] = {"127.", "0.0.0.0", "255.", "192.0.2.", "198.51.100.",
                                          "203.0.113.", "169.254.169.254", "1.1.1.1", "8.8.8.8",
                                          "8.8.4.4", NULL};
    if (memchr(s, ':', n)) return 0;
    for (const char *const *p = k_fixed; *p; p++)
        if (n >= strlen(*p) && strncmp(s, *p, strlen(*p)) == 0) return 1;
    return 0;
}

static int version_before(const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    if (off > ls && (t->data[off - 1] == 'v' || t->data[off - 1] == 'V')) return 1;
    size_t a = off - ls > 12 ? off - 12 : ls;
    for (size_t i = a; i + 7 <= off; i++)
        if (strncasecmp(t->data + i, "version", 7) == 0) return 1;
    return 0;
}

/* Kind and change class of a labelled value from its text. */
static void classify_value(const char *s, size_t n, lint_span *sp) {
    int digits = 1, colon_time = 0, ampm = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) digits = 0;
        if (s[i] == ':' && i > 0 && i + 1 < n && isdigit((unsigned char)s[i - 1]) &&
            isdigit((unsigned char)s[i + 1]))
            colon_time = 1;
        if ((s[i] == 'a' || s[i] == 'p' || s[i] == 'A' || s[i] == 'P') && i + 1 < n &&
            (s[i + 1] == 'm' || s[i + 1] == 'M' || s[i + 1] == '.') && i > 0 &&
            (isdigit((unsigned char)s[i - 1]) || s[i - 1] == ' '))
            ampm = 1;
    }
    if (digits) {
        sp->kind = LINT_K_TIMESTAMP, sp->vclass = LINT_VC_CALL, sp->subday = 1;
        return;
    }
    int has_date = 0, alpha = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (isalpha((unsigned char)s[i])) alpha = 1;
        if (isdigit((unsigned char)s[i]) && (s[i + 1] == '-' || s[i + 1] == '/')) has_date = 1;
    }
    if (colon_time || ampm) {
        int datey = has_date || (alpha && has_digit(s, n) && n > 12);
        sp->kind = datey ? LINT_K_DATETIME : LINT_K_TIME;
        sp->vclass = LINT_VC_CALL;
        sp->subday = 1;
        return;
    }
    sp->kind = has_digit(s, n) ? LINT_K_DATE : LINT_K_WEEKDAY;
    sp->vclass = LINT_VC_DAY;
    sp->subday = 0;
}

typedef struct lit_arg {
    const pat_def *def;
    const lint_config *cfg;
    lint_spanv *out;
    const char *label;
} lit_arg;

static int on_literal(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov,
                      int ngroups, void *argp) {
    lit_arg *a = argp;
    const pat_def *p = a->def;
    size_t s = ov[0], e = ov[1];
    if (e <= s) return UTIL_OK;
    const char *v = t->data + s;
    size_t n = e - s;
    if (lint_text_in_code(t, s)) return UTIL_OK;
    lint_span sp = {s, e, p ? p->kind : LINT_K_CUSTOM, p ? p->vclass : LINT_VC_TURN,
                    p ? p->subday : 0, a->label};
    if (!p) return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
    if (example_context(d, t, s)) return UTIL_OK;
    size_t ctx_at = s; /* where the constant-qualifier check looks back from */
    switch (p->mode) {
    case PM_LABELLED:
        if (ngroups > 1 && ov[2] != PCRE2_UNSET) ctx_at = ov[2];
        if (p->kind == LINT_K_DATE) classify_value(v, n, &sp);
        /* "9:00-17:00" and "Mon-Fri" are ranges: hours, not the current time */
        {
            size_t k = e;
            while (k < t->len && (t->data[k] == ' ' || t->data[k] == '\t')) k++;
            if (k < t->len && (t->data[k] == '-' || t->data[k] == '/') && k + 1 < t->len &&
                !isalpha((unsigned char)t->data[k + 1]) && sp.kind != LINT_K_DATE)
                return UTIL_OK;
            if (k + 2 < t->len && (unsigned char)t->data[k] == 0xE2 &&
                (unsigned char)t->data[k + 1] == 0x80)
                return UTIL_OK;
            if (k + 1 < t->len && strncasecmp(t->data + k, "to ", 3) == 0) return UTIL_OK;
        }
        if (const_context(d, t, ctx_at)) return UTIL_OK;
        break;
    case PM_ALWAYS:
        if (p->kind == LINT_K_DATETIME && const_context(d, t, s)) return UTIL_OK;
        break;
    case PM_NAME:
    case PM_NAME_LINE: {
        size_t w = 0;
        while (w < n && isalpha((unsigned char)v[w])) w++;
        if (word_in(v, w, k_not_names)) return UTIL_OK;
        break;
    }
    case PM_IDS: {
        if (!has_digit(v, n)) return UTIL_OK;
        const char *g = t->data + ov[2];
        size_t gl = ov[3] - ov[2];
        if (gl >= 4 && (!strncasecmp(g, "sess", 4) || !strncasecmp(g, "conv", 4) ||
                        !strncasecmp(g, "thre", 4) || !strncasecmp(g, "chat", 4)))
            sp.vclass = LINT_VC_SESSION;
        else if (gl >= 4 && (!strncasecmp(g, "user", 4) || !strncasecmp(g, "visi", 4) ||
                             !strncasecmp(g, "clie", 4) || !strncasecmp(g, "devi", 4)))
            sp.vclass = LINT_VC_USER;
        break;
    }
    case PM_HASH:
        if (!has_digit(v, n) || !has_hex_letter(v, n)) return UTIL_OK;
        break;
    case PM_HEX:
        if (!has_digit(v, n) || !has_hex_letter(v, n)) return UTIL_OK;
        break;
    case PM_UUID:
        if (!strncmp(v, "00000000-0000", 13) || !strncasecmp(v, "123e4567-e89b", 13) ||
            !strncasecmp(v, "ffffffff-ffff", 13))
            return UTIL_OK;
        break;
    case PM_IP:
        if (fixed_ip(v, n) || version_before(t, s)) return UTIL_OK;
        break;
    case PM_RELTIME: {
        const char *u = v;
        while (u < v + n && (isdigit((unsigned char)*u) || *u == ' ' || *u == '\t')) u++;
        sp.subday = (*u == 's' || *u == 'm' || *u == 'h' || *u == 'S' || *u == 'M' ||
                     *u == 'H');
        break;
    }
    default:
        break;
    }
    return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
}

typedef struct ph_arg {
    const ph_def *def;
    const lint_config *cfg;
    lint_spanv *out;
} ph_arg;

static int on_placeholder(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov,
                          int ngroups, void *argp) {
    ph_arg *a = argp;
    if (ngroups < 2 || ov[2] == PCRE2_UNSET) return UTIL_OK;
    if (lint_text_in_code(t, ov[0]) && !(a->def->renders_in_code && t->is_template))
        return UTIL_OK;
    /* a closing mustache section {{/x}} renders nothing */
    const char *m = t->data + ov[0];
    if (ov[1] - ov[0] > 2 && m[0] == '{' && m[1] == '{') {
        const char *q = m + 2;
        while (*q == '{' || *q == '-' || *q == ' ') q++;
        if (*q == '/' || *q == '!' || *q == '>') return UTIL_OK;
    }
    int subday = 0;
    int vc = lint_detect_name_class(d, a->cfg, t->data + ov[2], ov[3] - ov[2], &subday);
    if (vc == LINT_VC_NONE) return UTIL_OK;
    lint_span sp = {ov[0], ov[1], LINT_K_PLACEHOLDER, vc, subday, NULL};
    return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
}

static int span_cmp(const void *x, const void *y) {
    const lint_span *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->end < b->end ? 1 : a->end > b->end ? -1 : 0;
}

int lint_detect_spans(const lint_detect *d, const lint_config *cfg, const lint_text *t,
                      lint_spanv *out, util_err *err) {
    int rc = UTIL_OK;
    for (size_t i = 0; i < N_PLACEHOLDERS && !rc; i++) {
        ph_arg a = {&k_placeholders[i], cfg, out};
        rc = scan(d, d->ph[i], t, on_placeholder, &a);
    }
    for (size_t i = 0; i < N_LITERALS && !rc; i++) {
        lit_arg a = {&k_literals[i], cfg, out, NULL};
        rc = scan(d, d->lit[i], t, on_literal, &a);
    }
    for (size_t i = 0; cfg && i < cfg->n_patterns && !rc; i++) {
        lit_arg a = {NULL, cfg, out, cfg->patterns[i].name};
        size_t before = out->n;
        rc = scan(d, cfg->patterns[i].re, t, on_literal, &a);
        for (size_t k = before; k < out->n; k++) {
            out->v[k].vclass = cfg->patterns[i].vclass;
            out->v[k].subday = cfg->patterns[i].subday;
        }
    }
    if (rc) return util_err_set(err, rc, "out of memory");
    /* sort, then merge overlaps keeping the most volatile class */
    if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, span_cmp);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (w > 0 && out->v[i].start < out->v[w - 1].end) {
            lint_span *p = &out->v[w - 1];
            if (out->v[i].end > p->end) p->end = out->v[i].end;
            if (out->v[i].vclass > p->vclass) {
                p->vclass = out->v[i].vclass;
                p->kind = out->v[i].kind;
                p->label = out->v[i].label;
            }
            p->subday |= out->v[i].subday;
            continue;
        }
        out->v[w++] = out->v[i];
    }
    out->n = w;
    return UTIL_OK;
}

/* --- order-unstable constructs -------------------------------------------------- */

typedef struct order_arg {
    lint_order_hit **v;
    size_t *n, cap;
    int why;
} order_arg;

static int push_order(order_arg *a, size_t s, size_t e, const char *detail, size_t dl) {
    if (*a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 8;
        lint_order_hit *p = realloc(*a->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        *a->v = p;
        a->cap = nc;
    }
    lint_order_hit *h = &(*a->v)[(*a->n)++];
    h->start = s;
    h->end = e;
    h->why = a->why;
    snprintf(h->detail, sizeof h->detail, "%.*s", (int)(dl < 90 ? dl : 90), detail);
    return UTIL_OK;
}

static int on_order(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups,
                    void *argp) {
    order_arg *a = argp;
    (void)d;
    if (lint_text_in_code(t, ov[0]) && !t->is_template) return UTIL_OK;
    if (a->why == LINT_ORDER_TOOLS_LOOP && ngroups > 1)
        return push_order(a, ov[0], ov[1], t->data + ov[2], ov[3] - ov[2]);
    return push_order(a, ov[0], ov[1], t->data + ov[0], ov[1] - ov[0]);
}

/* Bullet lists under a "Tools" heading must be sorted by name. */
static int tool_lists(const lint_detect *d, const lint_text *t, order_arg *a) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(d->misc[RX_TOOL_ITEM], NULL);
    if (!md) return UTIL_ENOMEM;
    int in_tools = 0, reported = 0;
    char prev[64] = "";
    size_t indent = (size_t)-1;
    int rc = UTIL_OK;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t s = t->line_start[i], e = lint_text_line_end(t, i);
        if (t->flags[i] & LINT_LF_FENCE) continue;
        if (s < e && t->data[s] == '#') {
            in_tools = match_in(d, d->misc[RX_TOOL_HEADING], t->data, s, e);
            reported = 0;
            prev[0] = '\0';
            indent = (size_t)-1;
            continue;
        }
        if (!in_tools || reported) continue;
        int m = pcre2_match(d->misc[RX_TOOL_ITEM], (PCRE2_SPTR)(t->data + s), e - s, 0, 0, md,
                            d->mctx);
        if (m < 3) continue;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ind = ov[3] - ov[2];
        if (indent == (size_t)-1) indent = ind;
        if (ind != indent) continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(ov[5] - ov[4]), t->data + s + ov[4]);
        if (prev[0] && strcasecmp(name, prev) < 0) {
            char det[96];
            snprintf(det, sizeof det, "'%s' comes after '%s'", name, prev);
            a->why = LINT_ORDER_TOOL_LIST;
            rc = push_order(a, s + ov[4], s + ov[5], det, strlen(det));
            reported = 1;
        }
        snprintf(prev, sizeof prev, "%s", name);
    }
    pcre2_match_data_free(md);
    return rc;
}

int lint_detect_order(const lint_detect *d, const lint_text *t, lint_order_hit **out, size_t *n,
                      util_err *err) {
    *out = NULL;
    *n = 0;
    order_arg a = {out, n, 0, 0};
    static const int k_which[][2] = {{RX_ORDER_MAP, LINT_ORDER_MAP_LOOP},
                                     {RX_ORDER_GLOB, LINT_ORDER_GLOB},
                                     {RX_ORDER_TOOLS, LINT_ORDER_TOOLS_LOOP}};
    int rc = UTIL_OK;
    for (size_t i = 0; i < 3 && !rc; i++) {
        a.why = k_which[i][1];
        rc = scan(d, d->misc[k_which[i][0]], t, on_order, &a);
    }
    if (!rc) rc = tool_lists(d, t, &a);
    if (rc) return util_err_set(err, rc, "out of memory");
    return UTIL_OK;
}

/* --- suppression comments ---------------------------------------------------------- */

typedef struct dir_arg {
    lint_directive **v;
    size_t *n, cap;
} dir_arg;

static int on_directive(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov,
                        int ngroups, void *argp) {
    dir_arg *a = argp;
    (void)d;
    if (ngroups < 2 || (lint_text_in_code(t, ov[0]) && !t->is_template)) return UTIL_OK;
    if (*a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 8;
        lint_directive *p = realloc(*a->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        *a->v = p;
        a->cap = nc;
    }
    lint_directive *dv = &(*a->v)[(*a->n)++];
    memset(dv, 0, sizeof *dv);
    dv->line = lint_text_line_of(t, ov[0]);
    const char *k = t->data + ov[2];
    size_t kl = ov[3] - ov[2];
    dv->kind = kl == 17   ? LINT_DIR_NEXT_LINE
               : kl == 12 ? (k[8] == 'f' ? LINT_DIR_FILE : LINT_DIR_LINE)
               : kl == 7  ? LINT_DIR_DISABLE
                          : LINT_DIR_ENABLE;
    dv->codes = 0;
    const char *c = ngroups > 2 && ov[4] != PCRE2_UNSET ? t->data + ov[4] : "";
    size_t cl = ngroups > 2 && ov[4] != PCRE2_UNSET ? ov[5] - ov[4] : 0;
    size_t i = 0;
    while (i < cl) {
        while (i < cl && (c[i] == ',' || c[i] == ' ' || c[i] == '\t' || c[i] == '=')) i++;
        size_t s = i;
        while (i < cl && c[i] != ',' && c[i] != ' ' && c[i] != '\t') i++;
        if (i == s) break;
        int id = lint_rule_find(c + s, i - s);
        if (id < 0) {
            if (!dv->bad[0]) snprintf(dv->bad, sizeof dv->bad, "%.*s", (int)(i - s), c + s);
        } else {
            dv->codes |= 1u << id;
        }
    }
    if (!dv->codes && !dv->bad[0]) dv->codes = ~0u;
    size_t ls = t->line_start[dv->line], le = lint_text_line_end(t, dv->line);
    const char *p = t->data + ls, *e = t->data + le;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    dv->alone = (size_t)(p - t->data) == ov[0] && (size_t)(e - t->data) == ov[1];
    return UTIL_OK;
}

int lint_detect_directives(const lint_detect *d, const lint_text *t, lint_directive **out,
                           size_t *n, util_err *err) {
    *out = NULL;
    *n = 0;
    dir_arg a = {out, n, 0};
    int rc = scan(d, d->misc[RX_DIR_HTML], t, on_directive, &a);
    if (!rc) rc = scan(d, d->misc[RX_DIR_JINJA], t, on_directive, &a);
    if (rc) return util_err_set(err, rc, "out of memory");
    /* both scans append in order; merge them by line */
    for (size_t i = 1; i < *n; i++) {
        lint_directive x = (*out)[i];
        size_t j = i;
        while (j > 0 && (*out)[j - 1].line > x.line) {
            (*out)[j] = (*out)[j - 1];
            j--;
        }
        (*out)[j] = x;
    }
    return UTIL_OK;
}
