/* linter/lint_detect_pat.c: the text of every PCRE2 pattern lint_detect.c
 * compiles: the literal table (dates, times, names, ids, paths, each with its
 * kind, change class and scan mode), the placeholder syntaxes, placeholder
 * names by change frequency, and the context patterns (example words,
 * constant qualifiers, per-call/day/turn/session/user captions). Data only:
 * compiling is lint_rx.c's and matching lint_detect.c's; the array sizes are checked
 * against lint_detect_impl.h at compile time. */
#include "lint_detect_impl.h"
#include "lint_registry.h"

/* --- pattern text ------------------------------------------------------------
 * Horizontal whitespace is \h, never \s: patterns run over the whole file and
 * must not run across lines. */

#define MONTH                                                                          \
    "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|" \
    "Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
#define WDAY                                                                   \
    "(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|" \
    "Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
#define ISO_DATE "\\d{4}[-/](?:0[1-9]|1[0-2])[-/](?:0[1-9]|[12]\\d|3[01])"
#define NUM_DATE                                                                    \
    "(?<![\\d./-])(?:0?[1-9]|[12]\\d|3[01])([/.-])(?:0?[1-9]|[12]\\d|3[01])\\g{-1}" \
    "(?:\\d{4}|\\d{2})(?![\\d.]\\d)"
#define MNAME_DATE                                                                             \
    "(?:" WDAY "\\.?,?\\h+)?(?:" MONTH "\\.?\\h+\\d{1,2}(?:st|nd|rd|th)?\\b(?:,?\\h+\\d{4})?|" \
    "(?:the\\h+)?\\d{1,2}(?:st|nd|rd|th)?\\h+(?:of\\h+)?" MONTH "\\b\\.?(?:,?\\h+\\d{4})?)"
#define MNAME_DATE_Y                                                                   \
    "(?:" WDAY "\\.?,?\\h+)?(?:" MONTH "\\.?\\h+\\d{1,2}(?:st|nd|rd|th)?,?\\h+\\d{4}|" \
    "\\d{1,2}(?:st|nd|rd|th)?\\h+(?:of\\h+)?" MONTH "\\.?,?\\h+\\d{4})"
#define ZONE "(?-i:\\h*(?:(?:UTC|GMT|[A-Z]{2,4}T)\\b|Z\\b|[+-]\\d{2}:?\\d{2}))?"
#define TOD                                                                                \
    "(?:(?<![\\d:.])(?:[01]?\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:[.,]\\d{1,9})?)?(?![\\d:])" \
    "(?:\\h*[ap]\\.?m\\.?\\b)?" ZONE "|(?<![\\d:.])(?:1[0-2]|0?[1-9])\\h*[ap]\\.?m\\b\\.?" ZONE ")"
#define ISO_DT                                                              \
    ISO_DATE "[T\\h](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:[.,]\\d+)?)?" \
             "(?:Z|[+-](?:[01]\\d):?[0-5]\\d)?"
#define RFC2822                                                              \
    WDAY ",\\h+\\d{1,2}\\h+" MONTH "\\h+\\d{4}\\h+\\d{2}:\\d{2}(?::\\d{2})?" \
         "(?:\\h+(?:[+-]\\d{4}|UT|GMT|[A-Z]{3}))?"
#define UNIX_TS "(?<![\\d.])1[5-9]\\d{8}(?:\\d{3})?(?!\\d|\\.\\d)"
/* A time of day in a short pattern, for rows that add it to others (a
 * shorter pattern compiles faster on every run): "14:22", "14:22:08",
 * "2:22 PM", "14:22 UTC". */
#define SHORT_TOD                                                                                    \
    "(?<![\\d:.])(?:[01]?\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d)?(?![\\d:])(?:\\h*[AaPp]\\.?[Mm]\\b\\.?)?" \
    "(?-i:\\h*(?:UTC|GMT|[A-Z]{2,4}T)\\b)?"
/* A date as a runtime renders it in the user's locale, "5. März 2026",
 * "5 mars 2026", "5 de marzo de 2026", "5 марта 2026 г.": a day, a word of
 * Latin or Cyrillic letters (the month), a year. Only after a label (never
 * alone), where that shape is a date: the month names themselves would cost
 * every run a longer pattern to compile. */
#define INTL_WORD "(?:[A-Za-z]|[\\xc3\\xd0\\xd1][\\x80-\\xbf])"
#define INTL_DATE                                                                                \
    "\\d{1,2}(?:\\.|er)?\\h+(?:de\\h+)?" INTL_WORD "{3,10}\\.?(?:\\h+de)?,?\\h+\\d{4}(?![\\d:])" \
    "(?:\\h*\u0433(?:\u043e\u0434\u0430|\\.)?)?"

/* Markdown emphasis around a label or its value, the colon inside or outside
 * it: "**Current date**: ...", "*OS:* ...", "__Shell__: ...". */
#define EM "(?:\\*\\*?|__?)?"

#define LABEL                                                                                     \
    "((?<![A-Za-z0-9]|[A-Za-z0-9]_)(?:today(?:'s\\h+date)?|tonight|right\\h+now|now|currently|"   \
    "current(?:[\\h_-]?(?:date(?:\\h+and\\h+time)?|time(?:\\h+and\\h+date)?|datetime|"            \
    "timestamp|day|local\\h+time))?|as\\h+of\\h+(?:today|now)|"                                   \
    "the\\h+(?:date|time|day|date\\h+and\\h+time|time\\h+and\\h+date)(?:\\h+(?:today|now))?|"     \
    "it\\h+is(?:\\h+now)?|it's(?:\\h+now)?|date|time|datetime|date/time|timestamp|"               \
    "local\\h+time|server\\h+time|system\\h+time|utc\\h+time|generated(?:\\h+(?:at|on))?|"        \
    "rendered(?:\\h+(?:at|on))?|last\\h+(?:login|seen|active|activity)|"                          \
    "session\\h+start(?:ed)?(?:\\h+(?:at|on))?|started\\h+at|time\\h+now)(?:\\b|(?=__?(?!\\w))))" \
    "(?:\\h*\\([^()\\n]{1,24}\\))?(?<=[\\w)])" EM "[\"']?" /* a JSON key: "current_date": */      \
    "\\h*(?:(?:is|was)\\b\\h*:?|:|=|,(?:\\h*which\\h+is\\b)?|-|\\xe2\\x80[\\x93\\x94]|\\|)?\\h*"  \
    "(?:\\*\\*?|__?|[\"'])?\\h*"

/* --- the literal pattern table -------------------------------------------- */


/* A date as written after a strong label ("The current date is 2075-19-01"):
 * numbers in date shape, valid or not. */
/* A date written with CJK or Hangul units: 2025年3月3日, 2025년 3월 3일. */
#define CJK_DATE                                                                               \
    "\\d{4}\\h*\\xe5\\xb9\\xb4\\h*\\d{1,2}\\h*\\xe6\\x9c\\x88\\h*\\d{1,2}\\h*\\xe6\\x97\\xa5|" \
    "\\d{4}\\h*\\xeb\\x85\\x84\\h*\\d{1,2}\\h*\\xec\\x9b\\x94\\h*\\d{1,2}\\h*\\xec\\x9d\\xbc"
/* A Chinese weekday after such a date: "星期二", "周二", "週二" (U+661F U+671F, U+5468, U+9031). */
#define CJK_WDAY                                                                                      \
    "(?:(?:\\xef\\xbc\\x8c|,)?\\h*(?:\\xe6\\x98\\x9f\\xe6\\x9c\\x9f|\\xe5\\x91\\xa8|\\xe9\\x80\\xb1)" \
    "[\\xe4-\\xe9][\\x80-\\xbf]{2})?"
#define LOOSE_DATE "\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}(?![\\d])"
/* Facts about the user's machine, stated in prose or as a labelled line. */
#define ENV_KEY                                                                                                     \
    "(?:OS(?:\\h+(?:version|name))?|operating\\h+system(?:\\h+version)?|shell|default\\h+shell|(?:git\\h+)?branch|" \
    "IDE|editor|platform|architecture|(?:(?:current|primary)\\h+)?working\\h+directory|cwd|"                        \
    "current\\h+directory|(?:absolute\\h+)?path\\h+of\\h+the\\h+user'?s\\h+workspace|workspace(?:\\h+path)?|"       \
    "home\\h+directory|host\\h?name|computer\\h+name|machine\\h+name)"
#define ENV_VALUE                                                           \
    "(?:[A-Za-z]:[\\\\/][^\\s'\"`]*|/[^\\s'\"`]+|~/[^\\s'\"`]*|\\{\\w*\\}|" \
    "[A-Za-z][\\w+.-]*(?:\\h+\\d[\\w.+-]*)*)"

/* Keys of the user's machine and of the user, as a Markdown table row, a
 * JSON member, a tag or a heading write them ("| Shell | zsh |",
 * "\"os\": \"macOS 15.2\"", "<git_branch>x</git_branch>", "## Time Zone" then
 * "Europe/Berlin"): one value that is the whole cell, string, tag or line. */
#define ENV_KEYS_S                                                                                      \
    "(?:os(?:[\\h_-](?:name|version))?|operating[\\h_-]system(?:[\\h_-]version)?|platform|"             \
    "(?:default[\\h_-])?shell|cwd|(?:(?:current|primary)[\\h_-])?working[\\h_-]dir(?:ectory)?|workdir|" \
    "(?:git|current)[\\h_-]branch|branch)"
#define ENV_VAL_S \
    "(?:[A-Za-z]:\\\\[^\\s|\"<]*|[/~][^\\s|\"<]*|[A-Za-z][\\w.+-]*(?:/[\\w.+-]+)*(?:\\h+v?\\d[\\w.]*)*)"
#define ENV_KEYS_U "(?:time[\\h_-]?zone|tz|(?:user[\\h_-])?location|user[\\h_-]?name|username)"
#define ENV_VAL_U  "(?-i:[A-Z][\\w'.+/-]*(?:,?\\h+[A-Z][\\w'.-]*){0,4})"
#define ENV_FORMS(K, V)                                                                                      \
    "(?im)^\\h*(?:\\|\\h*" EM "|[\"']|<|#{1,6}\\h+)" K "(?:" EM "\\h*\\|\\h*[`'\"]?|[\"']\\h*:\\h*\"|>\\h*|" \
    "\\h*\\R(?:\\h*\\R)?\\h*)\\K" V                                                                          \
    "(?=[`'\"]?\\h*\\|\\h*(?:<!--[^\\n]*)?$(?!\\R\\h*\\|?\\h*:?-)|\"\\h*,?\\h*$|"                            \
    "\\h*</|\\h*(?:<!--[^\\n]*)?$)"
/* Words that follow "your cwd is" without being its value: "your cwd is
 * already under ...", "the current branch is visible". */
#define ENV_NOT_VALUE                                                                                       \
    "(?!(?:already|not|now|currently|still|also|just|then|set|unset|empty|unknown|available|visible|shown|" \
    "the|a|an|in|on|at|under|inside|outside|within|located|given|provided|listed|below|above|different|"    \
    "same|correct|wrong|valid|invalid|clean|dirty|checked|protected|required|used|up|out|behind|ahead)\\b)"
/* A product with its version as the whole value of an environment line:
 * "Ubuntu 24.04.1 LTS", "PowerShell 7.5.4 (Core)", "Windows 11 Pro 10.0.26100"
 * (a dotted version number, not "bash or zsh" or advice). */
#define ENV_VERSIONED                                                                       \
    "[A-Za-z][\\w+.-]*(?:\\h+[\\w+.-]+){0,6}?\\h+v?\\d+(?:\\.\\d+)+(?:\\h+[A-Z][A-Za-z]*)?" \
    "(?:\\h*\\([^()\\n]{1,40}\\))?"
/* A known operating system or shell, not one of a list ("bash or zsh"). */
#define OS_VALUE                                                                                             \
    "(?:windows|win32|linux|darwin|macos|mac\\h?os(?:\\h+x)?|ubuntu|debian|fedora|bash|zsh|fish|powershell|" \
    "pwsh|cmd(?:\\.exe)?)\\b(?!\\h*(?:,|/|\\bor\\b|\\band\\b))"


/* A repository named owner/name, not a stand-in ("owner/repo",
 * "your-org/your-repo", "org/project"): the owner and the name each a word
 * with nothing after the name but punctuation. */
#define REPO_NAME                                                                               \
    "(?!(?:owner|org|organi[sz]ation|user|username|namespace|team|company|example|someone|"     \
    "(?:your|my)[-_]?\\w*|<[^>\\n]*>)/)[A-Za-z0-9][\\w.-]*/(?!(?:repo|repository|project|name|" \
    "repo[-_]?name|(?:your|my)[-_]?\\w*)(?![\\w.-]))[A-Za-z0-9][\\w.-]*(?<![.-])(?![\\w/])"

const pat_def lint_detect_literals[] = {
    /* timestamps: machine-made, volatile even without a label */
    {"(?i)(?<![\\w])(?:" ISO_DT ")(?![\\w:])|(?<![\\w])" RFC2822, PM_ALWAYS, LINT_K_DATETIME, LINT_VC_CALL, 1,
     1, 0, NULL},
    {"(?i)(?<![\\w])(?:" MNAME_DATE_Y "|" ISO_DATE "|" NUM_DATE
     "),?\\h+(?:at\\h+)?(?:[01]?\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d)?(?:\\h*[ap]\\.?m\\b\\.?)?" ZONE,
     PM_ALWAYS, LINT_K_DATETIME, LINT_VC_CALL, 1, 1, 0, NULL},
    /* a date, weekday, time or epoch labelled as the current one */
    {"(?i)" LABEL "\\K(?:" ISO_DT "|" ISO_DATE "(?:,?\\h+(?:at\\h+)?" TOD ")?|" INTL_DATE "|" CJK_DATE
     "|(?:" WDAY ",?\\h+)?(?:" MNAME_DATE "|" NUM_DATE ")(?:,?\\h+(?:at\\h+)?" TOD ")?|" WDAY
     "\\b(?:,?\\h+(?:at\\h+)?" TOD ")?|" TOD "|" UNIX_TS ")",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 1, 0, NULL},
    /* the same with a bare weekday ("It's Monday"), on the lines the one above
     * does not search: no digit, a weekday's first three letters */
    {"(?i)" LABEL "\\K" WDAY "\\b", PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 2, 0, NULL},
    {"(?i)(\\b(?:ts|timestamp|epoch|unix(?:[\\h_]?time)?|created(?:_at)?|updated(?:_at)?)\\b)"
     "\\h*[:=]\\h*[\"']?\\K" UNIX_TS,
     PM_LABELLED, LINT_K_TIMESTAMP, LINT_VC_CALL, 1, 1, 0, NULL},
    /* a strong label with a date-shaped value, valid or not */
    {"(?i)(\\b(?:today(?:'s\\h+date)?|current\\h+(?:date|day)(?:\\h+and\\h+time)?|"
     "the\\h+date(?:\\h+today)?|(?:current\\h+)?system\\h+(?:time|date))\\b)" EM "\\h*"
     "(?:(?:is|was)\\b\\h*:?|:|=)\\h*(?:\\*\\*?|__?|[\"'])?\\h*\\K(?:" LOOSE_DATE "|" CJK_DATE ")",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 1, 0, NULL},
    /* the label is a heading or a caption line, the value starts the next line */
    {"(?im)^\\h*(?:#{1,6}\\h*)?" EM "((?:current|today'?s|the)\\h+(?:date|time|date\\h+and\\h+time|"
     "day)|today|date|time|timestamp)\\h*:?" EM "\\h*:?\\h*\\R(?:\\h*\\R)?\\h*(?:[-*]\\h+)?\\K"
     "(?:" ISO_DT "|" LOOSE_DATE "|" INTL_DATE "|" CJK_DATE "|(?:" WDAY ",?\\h+)?(?:" MNAME_DATE_Y
     "|" NUM_DATE ")(?:,?\\h+"
     "(?:at\\h+)?" TOD ")?|(?:" SHORT_TOD "|" UNIX_TS ")(?=\\h*(?:<!--[^\\n]*)?$))",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 0, 0, NULL},
    /* the current month or year */
    {"(?i)(\\b(?:current|this)\\h+(?:month|year)\\b)\\h*(?:is\\b|:|=)\\h*\\K(?:" MONTH
     ",?\\h+\\d{4}|\\d{4})\\b",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 1, 0, NULL},
    /* the month or year named as now: "It is currently June 2026", "It's now 2025" */
    {"(?i)\\b(?:it(?:'s|\\h+is)\\h+(?:now|currently)|currently\\h+it(?:'s|\\h+is))\\h+\\K(?:" MONTH
     "\\h+(?:of\\h+)?(?:19|20)\\d{2}|(?:19|20)\\d{2})\\b(?![\\d/-]|\\.\\d)",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 1, 0, NULL},
    /* Chinese and Japanese labels of the current date: 当前日期, 目前日期,
     * 当前的日期, 今天(的日期), 今日, 当前/目前/现在时间; then ':', '：', 是
     * or "，即" (", that is"); the date with or without spaces around its
     * units ("2025 年 8 月 5 日星期二", as machine translation writes it) */
    {"(?:(?:\\xe5\\xbd\\x93\\xe5\\x89\\x8d|\\xe7\\x9b\\xae\\xe5\\x89\\x8d)(?:\\xe7\\x9a\\x84)?\\xe6\\x97\\xa5\\xe6\\x9c\\x9f|"
     "\\xe4\\xbb\\x8a\\xe5\\xa4\\xa9(?:\\xe7\\x9a\\x84\\xe6\\x97\\xa5\\xe6\\x9c\\x9f)?|\\xe4\\xbb\\x8a\\xe6\\x97\\xa5|"
     "(?:\\xe5\\xbd\\x93\\xe5\\x89\\x8d|\\xe7\\x9b\\xae\\xe5\\x89\\x8d|\\xe7\\x8e\\xb0\\xe5\\x9c\\xa8)\\xe6\\x97\\xb6\\xe9\\x97\\xb4|"
     "\\xe7\\x8e\\xb0\\xe5\\x9c\\xa8(?=\\xe6\\x98\\xaf))\\h*"
     "(?::|\\xef\\xbc\\x9a|\\xe6\\x98\\xaf|(?:\\xef\\xbc\\x8c|,)\\h*\\xe5\\x8d\\xb3)?" EM
     "\\h*\\K(?:" ISO_DATE "|" LOOSE_DATE "|"
     "\\d{4}\\h*\\xe5\\xb9\\xb4\\h*\\d{1,2}\\h*\\xe6\\x9c\\x88\\h*\\d{1,2}\\h*\\xe6\\x97\\xa5" CJK_WDAY
     "(?:\\h*" SHORT_TOD ")?|" SHORT_TOD ")",
     PM_ALWAYS, LINT_K_DATE, LINT_VC_DAY, 0, 6, 0, NULL},
    /* Korean labels of the current date: 오늘 날짜, 현재 날짜, 현재 시각/시간, 현재 UTC */
    {"(?:\\xec\\x98\\xa4\\xeb\\x8a\\x98(?:\\h*\\xeb\\x82\\xa0\\xec\\xa7\\x9c)?|\\xed\\x98\\x84\\xec\\x9e\\xac\\h*(?:\\xeb\\x82\\xa0\\xec\\xa7\\x9c|\\xec\\x8b\\x9c\\xea\\xb0[\\x81\\x84]|UTC)|"
     "\\xec\\xa7\\x80\\xea\\xb8\\x88(?=\\xec\\x9d\\x80))\\h*(?::|\\xec\\x9d\\x80)?" EM "\\h*\\K(?:" ISO_DATE
     "|" LOOSE_DATE "|" CJK_DATE "|" SHORT_TOD ")",
     PM_ALWAYS, LINT_K_DATE, LINT_VC_DAY, 0, 6, 0, NULL},
    /* the same in German, French, Spanish, Portuguese, Italian, Russian and
     * Japanese: "Aktuelles Datum: 5. März 2026", "Nous sommes le 05/03/2026",
     * "Hoy es jueves, 5 de marzo de 2026", "Сейчас 14:22", "現在時刻：14:22";
     * the value is matched here, its label by lint_detect_intl_label_before (PM_INTL) */
    {"(?i)(?<![\\w.:/-])(?:(?:\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}|\\d{1,2}[-/.]\\d{1,2}[-/.]\\d{2,4}|" INTL_DATE
     "|" CJK_DATE
     ")(?![\\d.]\\d)(?:[T,]?\\h*(?:um\\h+|\\xc3\\xa0\\h+|a\\h+las\\h+|\\xc3\\xa0s\\h+|alle\\h+)?" SHORT_TOD
     ")?|" SHORT_TOD ")",
     PM_INTL, LINT_K_DATE, LINT_VC_DAY, 0, 6, 0, NULL},
    /* environment facts: "The user's OS version is win32 10.0", "Shell: bash" */
    {"(?i)\\b(?:the\\h+)?(?:user'?s|USER'?s|your|current|my)\\h+" ENV_KEY "\\h*(?:is\\b\\h*:?|:|=)\\h*"
     "['\"`]?\\K" ENV_NOT_VALUE ENV_VALUE,
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 0, NULL},
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:Operating\\h+System|OS(?:\\h+Version)?|Shell|Platform|"
     "(?:(?:Primary|Current|Initial|Main|Project)\\h+)?Working\\h+Directory|Current\\h+Directory|CWD|Host\\h?name)" EM
     "\\h*:" EM "\\h*"
     /* a shell as its variable prints it: "Shell: SHELL=/bin/zsh" */
     "['\"`]?\\K(?:(?-i:SHELL|COMSPEC)=)?(?:[A-Za-z]:[\\\\/]\\S*|/\\S+|~/\\S*|" ENV_VERSIONED
     "|[A-Za-z][\\w+.-]*(?:\\h+\\d+)?)"
     "(?=['\"`]?\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 0, NULL},
    /* the same labels inside a sentence or a tool comment, with a known OS or
     * shell as the value: "... on behalf of the user. Operating System: windows." */
    {"(?im)^" EM "(?:Operating\\h+System|OS|Shell|Platform|Host)" EM "\\h*:" EM "\\h*\\K" OS_VALUE, PM_ENV,
     LINT_K_ENV, LINT_VC_SESSION, 0, 4, 1, NULL},
    {"(?i)(?:[.;!?]\\h|//\\h)(?:Operating\\h+System|OS|Shell|Platform)\\h*:\\h*\\K" OS_VALUE, PM_ENV,
     LINT_K_ENV, LINT_VC_SESSION, 0, 4, 1, NULL},
    /* the same facts in a table row, a JSON member, a tag or under a heading */
    {ENV_FORMS(ENV_KEYS_S, ENV_VAL_S), PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 5, 0, NULL},
    {ENV_FORMS(ENV_KEYS_U, ENV_VAL_U), PM_ENV, LINT_K_PROFILE, LINT_VC_USER, 0, 5, 0, NULL},
    /* the repository's state when the prompt is built: "Current branch:
     * feature/x", git log lines ("abc1234 fix build") under a caption */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:current[\\h_]+|git[\\h_]+)?branch" EM "\\h*:" EM "\\h*[`'\"]?\\K"
     "[\\w.-]+(?:/[\\w.-]+)*(?=[`'\"]?\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 4, 1, NULL},
    /* the repository this session works in, as owner/name: "Repository:
     * acme/tidewatch", <repository>acme/tidewatch</repository>, "restricted
     * to the following repository:" then "- `acme/tidewatch`", "You are
     * working in the repository `acme/tidewatch`" (not a stand-in such as
     * owner/repo, not a URL) */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM
     "(?:(?:current[\\h_]+|git(?:hub)?[\\h_]+|target[\\h_]+)?repo(?:sitory)?(?:[\\h_]+name)?" EM "\\h*:" EM
     "\\h*)[`'\"]?\\K" REPO_NAME "(?=[`'\"]?\\h*(?:\\([^()\\n]{1,60}\\))?\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 4, 1, NULL},
    {"(?im)^\\h*<(?:current_|git_|target_)?repo(?:sitory)?(?:_name)?>\\h*\\K" REPO_NAME "(?=\\h*(?:</|$))",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 5, 1, NULL},
    {"(?i)\\b(?:the\\h+following\\h+repositor(?:y|ies)\\h*:(?:\\h*\\R){1,2}\\h*(?:[-*]\\h+)?|(?:you(?:'re|\\h+are)\\h+)?"
     "(?:working|operating|running)\\h+in\\h+(?:the\\h+)?(?:git(?:hub)?\\h+)?repo(?:sitory)?\\h+|"
     "(?:the\\h+)?(?:user'?s|your|current)\\h+(?:git(?:hub)?\\h+)?repo(?:sitory)?\\h+is\\h+)[`'\"]?\\K" REPO_NAME
     "(?![`'\"]?[\\w/])",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 1, "repo"},
    /* the branch this session works on, in a sentence: "Develop on branch
     * `claude/quiet-otter-x8Kq2`", "You are currently on the branch
     * fix/login" (not a long-lived branch every session shares, main or
     * develop, nor a pattern such as release/) */
    {"(?i)\\b(?:currently|you(?:'re|\\h+are)(?:\\h+(?:currently|now))?|working|develop(?:ing)?|"
     "repo(?:sitory)?\\h+[`'\"]?" REPO_NAME "[`'\"]?)\\h+on\\h+(?:the\\h+)?(?:git\\h+)?branch\\h+[`'\"]?\\K"
     "(?!(?:main|master|develop|development|dev|trunk|staging|production|prod|gh-pages|default)(?![\\w/.-]))"
     "[\\w.-]+(?:/[\\w.-]+)*(?![\\w/*-])",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 1, "branch"},
    {"(?i)\\bcommits?\\h*:\\h*\\R\\h*(?:[-*]\\h+)?\\K(?=[a-f]*\\d)(?=\\d*[a-f])[0-9a-f]{7,12}(?=\\h+\\S)",
     PM_ALWAYS, LINT_K_HASH, LINT_VC_SESSION, 0, 4, 1, NULL},
    /* what the editor has open: "Open file: src/app.ts", "Active file: ..." */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM
     "(?:(?:currently\\h+)?open(?:ed)?|active|current|focused|visible)\\h+files?" EM "\\h*:" EM
     "\\h*[`'\"]?\\K[\\w./~-]*\\.\\w+\\b",
     PM_ENV, LINT_K_ENV, LINT_VC_TURN, 0, 4, 1, NULL},
    /* the same said by the user in the first person, as a CLI's opening
     * message writes it: "I'm currently working in the directory: /srv/x" */
    {"(?i)\\bI(?:'m|\\h+am)\\h+(?:currently\\h+)?(?:working|running)\\h+in\\h+(?:the\\h+)?(?:directory|folder)\\h*:?\\h*"
     "['\"`]?\\K(?:[A-Za-z]:[\\\\/][^\\s'\"`]*|/[^\\s'\"`]+|~/[^\\s'\"`]*)(?<![.,;:])",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 1, "directory|folder"},
    /* a heading that carries the working directory, as Cline's environment
     * details write it: "# Current Working Directory (/srv/x) Files" */
    {"(?im)^\\h*#{1,6}\\h*Current\\h+Working\\h+Directory\\h*\\(\\K(?:[A-Za-z]:[\\\\/][^)\\n]*|/[^)\\n]*|~/[^)\\n]*)"
     "(?=\\))",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 5, 1, NULL},
    /* the file the user has open, said in a sentence: "The user's current
     * file is src/app.ts", "The user currently has these files open:
     * src/app.ts, ..." */
    {"(?i)\\b(?:(?:the\\h+)?user'?s|your|my)\\h+(?:current(?:ly\\h+open)?|active|open(?:ed)?|focused)\\h+file\\h+is\\h*:?"
     "\\h*[`'\"]?\\K[\\w./~-]*\\.\\w+\\b|\\b(?:the\\h+user|USER|I)\\h+(?:currently\\h+)?(?:ha(?:s|ve)\\h+(?:these|the\\h+"
     "following)\\h+files?\\h+open(?:ed)?|(?:ha(?:s|ve)\\h+)?open(?:ed)?\\h+(?:these|the\\h+following)\\h+files?)\\h*:\\h*"
     "[`'\"]?\\K[\\w./~-]*\\.\\w+\\b",
     PM_ENV, LINT_K_ENV, LINT_VC_TURN, 0, 0, 1, "file"},
    /* the user's operating system with its version, stated as a fact at the
     * start of a sentence: "The user is on macOS 14.5" (not "If the user is
     * on Windows", advice) */
    {"(?m)(?:^|[.!?]\\h+)(?:The\\h+user|USER)\\h+is\\h+(?:on|using|running)\\h+\\K(?:macOS|Mac\\h?OS(?:\\h+X)?|"
     "Windows|Ubuntu|Debian|Fedora|Linux|ChromeOS|Arch\\h+Linux)\\h+v?\\d+(?:\\.\\d+)*(?:\\h+(?:LTS|Pro|Home))?",
     PM_ENV, LINT_K_ENV, LINT_VC_SESSION, 0, 1, 1, NULL},
    /* git status output under its caption: "Git status:" then " M src/a.ts",
     * "?? notes.txt", "On branch x" or "nothing to commit" (not advice
     * under the same caption) */
    {"(?im)^\\h*(?:#{1,6}\\h+)?" EM "(?:current\\h+)?git\\h+status" EM "[^:\\n]{0,60}:?" EM
     "\\h*\\R(?:\\h*\\R)?\\h*\\K"
     "(?:(?-i:[MADRCU?!]{1,2})\\h+[\\w./~-]+\\S*|On\\h+branch\\h+\\S+|nothing\\h+to\\h+commit\\b[^\\n]*|"
     "Changes\\h+(?:not\\h+staged|to\\h+be\\h+committed)\\b[^\\n]*|Your\\h+branch\\h+is\\b[^\\n]*)",
     PM_ALWAYS, LINT_K_ENV, LINT_VC_SESSION, 0, 0, 1, "status"},
    /* what is left of a budget: "Remaining budget: 4,812 tokens", "812 tokens left" */
    {"(?i)\\bremaining\\h+(?:token\\h+)?(?:budget|tokens|context|credits)\\h*:\\h*\\K\\d[\\d,]*", PM_ALWAYS,
     LINT_K_COUNTER, LINT_VC_TURN, 0, 1, 1, NULL},
    /* a chat participant's profile: "pronouns: it/its", "- bio: hai! i'm lexi" */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:pronouns|bio|about\\h+me)" EM "\\h*:" EM "\\h*"
     "\\K(?![-*_\\h]*$)[^\\n]{1,200}?(?=\\h*(?:<!--|$))",
     PM_ALWAYS, LINT_K_PROFILE, LINT_VC_USER, 0, 0, 0, "pronouns|bio|about"},
    /* where the user is: "The user is located in Redmond", "User's timezone: CET" */
    {"(?i)\\b(?:the\\h+)?(?:user|USER|customer)(?:'s)?\\h+(?:is\\h+)?(?:(?:currently\\h+)?(?:located|based)\\h+"
     "in|is\\h+in|lives\\h+in|(?:current\\h+|approximate\\h+)?location\\h*(?:is|:)|time\\h?zone\\h*(?:is|:)|"
     "locale\\h*(?:is|:))\\h*\\K"
     "(?-i:[A-Z][\\w/+-]*(?:,?\\h+[A-Z][\\w/+-]*){0,4})",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 0, 0, NULL},
    {"(?i)\\b(?:current|your)\\h+time\\h?zone\\h*(?:is\\b\\h*:?|:)\\h*\\K(?-i:[A-Z][\\w/+-]*)", PM_ENV,
     LINT_K_LOCATION, LINT_VC_USER, 0, 0, 0, "zone"},
    /* a labelled time zone line in an environment block: "Time zone: UTC" */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:user(?:'s)?\\h+)?time\\h?zone" EM "\\h*:" EM "\\h*"
     "\\K(?-i:[A-Z][\\w/+-]*)(?=\\h*(?:\\(|<!--|$))",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 4, 0, NULL},
    /* a labelled location or user agent line: "- Location: Oslo, Norway" */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:user(?:'s)?\\h+)?(?:current\\h+|approximate\\h+)?location" EM "\\h*:" EM
     "\\h*\\K(?-i:[A-Z][\\w'.-]*(?:,?\\h+[A-Z][\\w'.-]*){0,4})"
     /* the place is the whole value: "- **Location**: Store test files in tests/" is advice */
     "(?=\\h*(?:\\([^)\\n]*\\))?\\h*[.;]?\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 4, 1, NULL},
    /* the same in Chinese, opening a line: "- 用户位置：NL。", "用户的大概位置:
     * 西班牙马德里" (用户 + 的? + 位置 / 所在地 / 所在位置 / 大概位置, a colon;
     * the place up to the next punctuation) */
    {"(?m)^\\h*(?:[-*]\\h+)?\\xe7\\x94\\xa8\\xe6\\x88\\xb7(?:\\xe7\\x9a\\x84)?(?:\\xe5\\xa4\\xa7\\xe6\\xa6\\x82|\\xe6\\x89\\x80\\xe5\\x9c\\xa8)?"
     "(?:\\xe4\\xbd\\x8d\\xe7\\xbd\\xae|\\xe5\\x9c\\xb0)\\h*(?::|\\xef\\xbc\\x9a)\\h*\\K"
     "(?![{<\\[]|\\xe3\\x80|\\xef\\xbc)(?:[A-Za-z][\\w'.-]*(?:,?\\h+[A-Za-z][\\w'.-]*){0,4}|"
     "(?:(?!\\xe3\\x80|\\xef\\xbc)[\\xe4-\\xe9][\\x80-\\xbf]{2}){2,20})",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 7, 0, NULL},
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "user[\\h-]?agent" EM "\\h*:" EM "\\h*\\K[A-Za-z][^\\n]{2,300}", PM_ENV,
     LINT_K_ENV, LINT_VC_SESSION, 0, 4, 1, NULL},
    /* an IANA time zone or a locale code given as someone's: "Her timezone is
     * Europe/Oslo", "Locale: nb-NO" */
    {"(?i)\\btime\\h?zone\\h*(?:is\\b\\h*:?|:|=)\\h*\\K(?-i:(?:Africa|America|Antarctica|Asia|Atlantic|Australia|"
     "Europe|Indian|Pacific)/[A-Z][\\w+-]*(?:/[A-Z][\\w+-]*)?)",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 0, 1, "zone"},
    /* and a language given as a locale code with its region, as a
     * runtime reports it: "Language: en_US", "LANG: de_DE.UTF-8" (not
     * "Language: go") */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:(?:user(?:'s)?\\h+)?locale" EM "\\h*:" EM
     "\\h*\\K(?-i:(?:[a-z]{2,3}(?:[-_][A-Z]{2})?|C)(?:\\.[\\w-]+)?)|(?:(?:user(?:'s)?\\h+)?language|lang|"
     "lc_all)" EM "\\h*:" EM "\\h*\\K(?-i:[a-z]{2,3}[-_][A-Z]{2}(?:\\.[\\w-]+)?))"
     "(?=\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_LOCATION, LINT_VC_USER, 0, 4, 1, NULL},
    /* a command's output inserted when the prompt runs, in each tool's own
     * syntax: Claude Code's !`git status`; docker-agent's (cagent's) bang
     * tool call !shell(cmd="git diff HEAD") (a name, then parentheses that
     * open with a key=value argument and may nest) and its JavaScript
     * ${shell({cmd: "task lint"})} */
    {"(?<![\\w`])!`[^`\\n]+`"
     "|(?<![\\w!])![a-z_][a-z0-9_]*(?=\\(\\h*[a-z_]\\w*\\h*=)(?<args>\\((?:[^()\\n]|(?&args))*\\))"
     "|\\$\\{\\h*shell\\(\\h*\\{[^{}\\n]*\\}\\h*\\)\\h*\\}",
     PM_SHELL, LINT_K_SHELL, LINT_VC_TURN, 0, 0, 0, NULL},
    {"(?i)\\b\\d+\\h+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\\h+ago\\b", PM_RELTIME,
     LINT_K_RELTIME, LINT_VC_CALL, 0, 1, 0, NULL},
    /* a day named relative to now with a time: "Updated yesterday at 14:05" */
    {"(?i)\\b(?:yesterday|today|tonight|tomorrow)\\h+at\\h+\\K" TOD, PM_ALWAYS, LINT_K_RELTIME, LINT_VC_CALL,
     1, 1, 1, NULL},
    /* a tag that names the current date or time around its value:
     * <current_date>2025-03-03</current_date> */
    {"(?i)<(current[_-]?(?:date|time|datetime|date[_-]?time)|today|todays?[_-]date|date|datetime|timestamp|"
     "time)>\\h*\\R?\\h*\\K(?:" ISO_DT "|" ISO_DATE "(?:,?\\h+(?:at\\h+)?" TOD ")?|" INTL_DATE "|" CJK_DATE
     "|(?:" WDAY ",?\\h+)?(?:" MNAME_DATE "|" NUM_DATE ")(?:,?\\h+(?:at\\h+)?" TOD ")?|" TOD "|" UNIX_TS ")",
     PM_LABELLED, LINT_K_DATE, LINT_VC_DAY, 0, 0, 0, NULL},
    {"(?im)^[\\h>*_#-]*\\Kgood\\h+(?:morning|afternoon|evening)\\b", PM_ALWAYS, LINT_K_GREETING, LINT_VC_CALL,
     1, 0, 0, "good"},
    /* ids, nonces, hashes */
    {"(?i)(?<![\\w-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\\w-])", PM_UUID,
     LINT_K_UUID, LINT_VC_CALL, 0, 0, 0, NULL},
    {"(?i)\\b(request|req|session|trace|span|correlation|conversation|run|job|message|msg|"
     "thread|chat|invocation|call|interaction|user|visitor|client|device|transaction|tx)"
     "[\\h_-]?id\\b\\h*(?:is\\h+|[:=#]\\h*)?[\"'`]?\\K[A-Za-z0-9][A-Za-z0-9_:.-]{3,}",
     PM_IDS, LINT_K_ID, LINT_VC_CALL, 0, 1, 0, NULL},
    {"(?i)\\bnonce\\h*(?:is\\h+|[:=]\\h*)[\"'`]?\\K(?=[A-Za-z+/=_-]*\\d)[A-Za-z0-9+/=_-]{6,}", PM_ALWAYS,
     LINT_K_NONCE, LINT_VC_CALL, 0, 1, 0, NULL},
    {"(?i)\\b(?:commit|sha(?:-?1|-?256)?|hash|head|rev(?:ision)?|checksum|digest|etag|"
     "build[\\h_-]?id)\\b\\h*(?:is\\h+|at\\h+|[:=#@]\\h*)?[\"'`]?\\K[0-9a-f]{7,64}(?![\\w])",
     PM_HASH, LINT_K_HASH, LINT_VC_SESSION, 0, 1, 0, NULL},
    {"(?i)(?<![\\w])[0-9a-f]{32,128}(?![\\w])", PM_HEX, LINT_K_HASH, LINT_VC_CALL, 0, 1, 0, NULL},
    /* people, places, machines */
    {"(?:(?i:\\byou(?:'re|\\h+are)?(?:\\h+now)?\\h+(?:talking|speaking|chatting|"
     "conversing)\\h+(?:to|with))|(?i:\\b(?:hello|hi|hey|dear|greetings|welcome(?:\\h+back)?|"
     "good\\h+(?:morning|afternoon|evening)),?)|(?i:\\bthe\\h+user(?:'s\\h+name)?\\h+is"
     "(?:\\h+(?:called|named))?)|(?i:\\byou\\h+are\\h+(?:assisting|helping|serving)))\\h+"
     "\\K[A-Z][a-z]+(?:[\\h-][A-Z][a-z]+){0,2}\\b",
     PM_NAME, LINT_K_NAME, LINT_VC_USER, 0, 0, 0, NULL},
    {"(?m)^\\h*(?:[-*]\\h+)?" EM "(?i:(?:current\\h+)?user|username|user[\\h_]+name|customer|human|client|"
     "name(?:\\h+of\\h+the\\h+user)?)" EM "\\h*:" EM "\\h*\\K[A-Z][a-z]+(?:\\h[A-Z][a-z]+){0,2}"
     "(?=\\h*(?:[(<][\\w.+-]+@[\\w.-]+[)>]\\h*)?(?:<!--[^\\n]*)?$)",
     PM_NAME_LINE, LINT_K_NAME, LINT_VC_USER, 0, 0, 0, NULL},
    /* the user's handle or e-mail address in an identity position: "Username:
     * maria_j", "The user's email address is maria@harbor.dev" */
    {"(?im)^\\h*(?:[-*]\\h+)?" EM "(?:current\\h+)?(?:user(?:'s)?\\h*)?(?:username|handle|login)" EM
     "\\h*:" EM "\\h*"
     "\\K@?[\\w.-]{2,40}(?=\\h*(?:<!--[^\\n]*)?$)",
     PM_ENV, LINT_K_NAME, LINT_VC_USER, 0, 4, 1, NULL},
    {"(?i)\\b(?:(?:the\\h+)?(?:user|customer)(?:'s)?\\h+e-?mail(?:\\h+address)?|your\\h+e-?mail(?:\\h+address)?|"
     "account|(?:logged|signed)\\h+in\\h+as|you\\h+are\\h+(?:assisting|helping|serving|talking\\h+(?:to|with)))"
     "\\h*(?:is\\b\\h*:?|:)?\\h*\\K[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+",
     PM_ENV, LINT_K_NAME, LINT_VC_USER, 0, 3, 1, NULL},
    {"(?<![\\w/~.])(?:/home|/Users)/(?!(?:user|username|you|me|name|example|someone|shared|"
     "Shared|runner|linuxbrew|claude|ubuntu|project|projects|app|node|coder|vscode|codespace|"
     "codespaces|jovyan|sandbox|workspace|workspaces|ec2-user|admin|root|dev|developer|agent|"
     "default|guest|daytona|gitpod|vercel|devuser|appuser|pi|ubuntu-user)\\b)"
     "[A-Za-z0-9_][\\w.-]*|(?i)\\b[A-Z]:\\\\Users\\\\"
     "(?!(?:user|username|you|public|default|example)\\b)\\w[\\w.-]*",
     PM_HOME, LINT_K_HOME, LINT_VC_USER, 0, 0, 0, "home|users"},
    {"(?<![\\w.])(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}"
     "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?!\\w)(?!\\.\\d)|(?i)(?<![\\w:])"
     "(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\\w:])",
     PM_IP, LINT_K_IP, LINT_VC_SESSION, 0, 1, 0, NULL}, /* a full IPv6 of letters only does not occur */
    {"(?i)\\b(?:host\\h?name|machine(?:\\h+name)?|computer(?:\\h+name)?|device\\h+name)"
     "\\h*(?:[:=](?:\\*\\*|__)?\\h*[\"'`]?\\K[A-Za-z0-9][A-Za-z0-9-]*(?:\\.[A-Za-z0-9-]+)*"
     /* the whole value of its line, maybe with a note in brackets:
      * "- **Machine:** BUILD-PC7 (x64, 8 cores)" */
     "(?=[\"'`]?(?:\\h*(?:\\r?\\n|$|<)|[,;)]|\\.(?:\\s|$)|\\h+\\([^()\\n]{1,60}\\)\\h*(?:\\r?\\n|$|<)))|is\\h+[\"'`]?\\K"
     "(?=[A-Za-z0-9-]*[.\\d-])[A-Za-z0-9][A-Za-z0-9-]*(?:\\.[A-Za-z0-9-]+)*)",
     PM_ALWAYS, LINT_K_HOST, LINT_VC_SESSION, 0, 0, 0, "host|machine|computer|device"},
    /* counters, stated as the conversation's position: "This is turn 7",
     * "Message #12", "turn: 7", "turn 3 of 10" (not "round 5's review") */
    {"(?i)\\b(?:(?:this\\h+is|you\\h+are\\h+(?:on|in|at)|we\\h+are\\h+(?:on|in|at)|current(?:ly)?"
     "(?:\\h+on)?)\\h+(?:the\\h+|your\\h+)?(?:turn|message|msg|round|iteration|attempt|request|"
     "exchange|interaction|step)\\h*(?:#|no\\.?\\h*|number\\h*)?:?\\h*\\d+\\b|(?:turn|message|msg|round|"
     "iteration|attempt|request|exchange|interaction)\\h*(?:#|no\\.\\h*|number\\h+)\\h*\\d+\\b|(?:turn|"
     "message|round|exchange)\\h+\\d+\\h+of\\h+\\d+\\b|this\\h+is\\h+(?:the|your)\\h+\\d+(?:st|nd|rd|th)\\h+"
     "(?:turn|message|round|attempt|request)\\b)(?!\\h*(?:%|ms\\b|s\\b|sec|min|hour|day|tokens?\\b|"
     "words?\\b|char|times\\b|[.,]\\d))|(?im)^\\h*(?:turn|message|round|iteration|exchange)"
     "(?:[\\h_]?(?:count|number|index))?\\h*[:=]\\h*\\d+\\h*(?=$|<!--)",
     PM_COUNTER, LINT_K_COUNTER, LINT_VC_TURN, 0, 1, 0, NULL},
};

/* --- placeholders: group 1 is the variable name ------------------------------ */

const char *const lint_detect_placeholders[] = {
    "\\$\\{\\s*([A-Za-z_][\\w.]*)[^}\\n]*\\}?",
    "(?<![\\w$\\\\])\\$([A-Za-z_]\\w*)\\b",
    /* {x}, {x.y}, {x[0]!r:>8}, and a Python f-string call: {datetime.today().strftime('%A')} */
    "(?:(?<![{\\w$])|(?<=\\\\[nt]))\\{([A-Za-z_][\\w.]*)(?:\\((?:[^(){}\\n]|\\([^(){}\\n]*\\))*\\)(?:\\.[A-Za-z_]\\w*)*)*"
    "(?:\\[[^\\]\\n]*\\])?(?:![rsa])?(?::(?!\\s)[^{}\\n]*)?\\}(?!\\})",
    "%\\(([A-Za-z_]\\w*)\\)[sdrfi]",
    /* {} and a positional {0}: no name, the words around it say (not a
     * regex's [0-9]{3}, a count after ) or }, or TeX's x^{2}) */
    "(?<![{\\w$])(?|\\{()\\}|(?<![\\])}^])\\{[0-9]{1,2}()\\})(?!\\})",
    /* $NAME$ (LongBench's $DOC$, $C_A$): upper case, two characters at
     * least, so that TeX's $x$ and $N$ are not one */
    "(?<![\\w$\\\\])\\$([A-Z][A-Z0-9_]+)\\$(?![\\w$])",
    /* %NAME% (refact's %CURRENT_FILE%): upper case, not "50%", a Windows
     * path (%APPDATA%\Code) nor a batch assignment (PATH=%PATH%;C:\bin) */
    "(?<![\\w%=])%([A-Z][A-Z0-9_]*[A-Z0-9])%(?![\\w%\\\\/;])",
};

/* Flags about the user's device, shell or machine (is_mobile, is_bash_env,
 * is_remote): other is_* flags are deployment switches (is_vlm) or, like
 * is_git_repo, facts about the project. */
#define DEVICE_FLAGS                                                                   \
    "(?:mobile|desktop|tablet|phone|ios|android|windows|win32|mac|macos|darwin|linux|" \
    "web|browser|bash(?:_env)?|powershell|zsh|sandbox(?:ed)?|remote|ssh|wsl)"

/* Placeholder names by change frequency, tried in this order; the first
 * entry lists names known to hold stable text (no class, but not unknown). */
const pat_name lint_detect_names[] = {
    {LINT_VC_NONE,
     "(?:(?:system|developer|safety|policy|guardrails?)_?(?:message|prompt|msg|instructions?)|default_system_\\w+|\\w*_?tokens?|tools?|tools_\\w+|"
     "tool_?(?:list|definitions?|schemas?|descriptions?|names|specs?)|functions?|"
     "(?:commands?|tools?|functions?|plugins?)_?(?:docs?|documentation|help|usage|reference)|"
     "available_\\w+|custom_tools|builtin_tools|tools_in_user_message|(?:assistant|bot|agent|ai|"
     "product|company|app|brand|model_display)_?name|company|persona|rules|guidelines|"
     /* a cache is per model: when the model changes the cache is cold anyway */
     "model|model_?(?:name|id)|"
     "examples?|few_?shot\\w*|format_?instructions|output_?format|response_?format|json_?schema|"
     "schema|add_generation_prompt|enable_\\w+|\\w*thinking\\w*|reasoning(?:_?effort)?|"
     "max_\\w+|is_(?!" DEVICE_FLAGS "$)\\w+|has_\\w+|use_\\w+|can_\\w+|should_\\w+|allows?_\\w+|disable_\\w+|"
     "supports?_\\w+|show_\\w+|hide_\\w+|knowledge_?cutoff|cutoff_?date|"
     /* a deployment's settings: its scoring rubric, the categories
      * a classifier picks from, a threshold, where and how it calls an API */
     "rubric|categories|threshold|\\w*api_?key|api_?base|base_?url|secrets?_\\w+|"
     /* where its database lives and what kind it is: {database_url},
      * ${DB_URL}, {db_type}, {sql_dialect} (set with the connection; a bare
      * {dialect} or {xxx_type} says less and stays unknown) */
     "database_?url|db_?url|(?:db|database|sql)_?(?:type|kind|dialect|engine|flavou?r|vendor|backend))"},
    {LINT_VC_CALL,
     "(?:now|time|timestamp|ts|datetime|date_?time|current_?(?:time|datetime|timestamp|ts)|"
     "time_?of_?day|(?:current_?)?hour(?:_?of_?day)?|minute|clock|(?:unix|epoch)(?:_?(?:time|ts|ms|s))?|request_?id|req_?id|nonce|"
     /* the hour in Portuguese, Spanish, French, German: {hora}, {heure}, {uhrzeit} */
     "hora|hora_?atual|hora_?actual|heure|heure_?actuelle|uhrzeit|"
     "random\\w*|rand|uuid\\d?|guid|trace_?id|span_?id|call_?id|seed|cache_?buster|"
     /* the time since a start, measured at each call: "Took {elapsed}ms" */
     "elapsed(?:_?(?:ms|secs?|seconds))?|"
     "\\w+_(?:timestamp|ts|nonce|uuid|time|datetime|at))"},
    {LINT_VC_TURN,
     "(?:retrieved\\w*|retrieval\\w*|context|contexts|notes|documents?|docs|documentation|"
     "search_?results?|results|history|chat_?history|conversation(?:_?history)?|thread|"
     "messages?|memory|memories|query|queries|question|input|inputs|user_?(?:input|message|"
     "query|question|request|prompt)|prompt|arguments|args|argv|turn(?:_\\w+)?|snippets?|chunks?|"
     "passages?|rag(?:_\\w+)?|tool_?(?:results?|outputs?|calls?|name)|observations?|scratchpad|"
     "git_?(?:status|diff|log)|diff|patch|file_?contents?|filecontent|(?:\\w+_)?file_?name|filename|"
     "file_?path|filepath|files?|file_\\w+|\\w+_files?|selected\\w*|selection|\\w+_selection|visible_?files|open_?(?:tabs|files|"
     "editors?)|active_?(?:file|editor|tab)|current_?file|cursor\\w*|terminal\\w*|clipboard|"
     "events?|logs?|transcript|text|content|contents|topic|answer|response|ground_?truth|"
     "summary|summaries|completions?|submissions?|ideal(?:_?answers?)?|(?:reference|expected|gold(?:en)?|correct|candidate)_?"
     "(?:answers?|outputs?|responses?)|\\w+_(?:responses?|answers?|completions?)|"
     "article|issue(?:_?\\w+)?|pr_\\w+|pull_?request\\w*|relevant_\\w+|knowledge|sources|"
     "reports?|drafts?|essay|chapter|excerpts?|paragraphs?|problem(?:_?statement)?|"
     "previous_\\w+|tickets?(?:_\\w+)?|url|(?:page|post|web|article|video|target|input)_?url|themes?|subject|"
     "task|current_task|\\w+_task|(?:task|message|step)_?id|objective|goals?|\\w+_goals?|instruction|plans?|\\w+_plan|request|"
     "feedback|\\w+_feedback|(?:human_|user_)?hints?|"
     /* what the last run printed or raised: {{ stdout }}, {error}, exit_code */
     "std_?(?:out|err)|stack_?trace|traceback|exception|errors?|error_?msg|"
     "(?:exit|return)_?code|"
     /* the code a request brings ({{code}}, {{{code}}}), what a person reports
      * ({symptoms}), a booking being made, and the history, message, question,
      * context and document in Portuguese, Spanish, French, German, Italian */
     "code|symptoms?|bookings?|reservations?|historico|historial|historique|verlauf|cronologia|"
     "mensagens?|mensajes?|nachrichten|nachricht|messaggi|messaggio|pergunta|pregunta|frage|domanda|"
     "contexto|contexte|kontext|documentos?|dokumente?|"
     /* what a request hands in to be judged, answered or translated: an
      * evaluator's {{output}} and {{expected}}, a task's {requirements}, the
      * {facts} and {premise} to reason from, a {review} or {claim} to
      * classify, {keywords} to search */
     "outputs?|result|requirements|facts|solutions?|expected|predicted|predictions?|actual|"
     "keywords?|search_?terms|claims?|sentences?|premises?|hypothes[ie]s|reviews?|comments?|"
     /* the {evidence} a check judges, a linter {violation} to fix, the
      * {key_points} a draft must cover, which {round_number} of an
      * iterative extraction this call is */
     "evidence|violations?|key_?points|round_?(?:number|num|index)|"
     "citations|\\w+_(?:results?|context|history|snippets?|chunks?|documents?|docs|messages?|"
     "query|input|contents?|reports?|chapter|excerpts?))"},
    {LINT_VC_SESSION,
     "(?:session(?:_?\\w+)?|cwd|pwd|workdir|work_?dir|working_?dir(?:ectory)?|"
     "project_?(?:dir|root|path)|git_\\w+|git(?:branch|status|sha|commit|head|ref)|branch|os|"
     /* the repository's history: RECENT_COMMITS, commit_log */
     "(?:\\w+_)?commits|commit_?(?:log|history)|"
     "platform|os_?(?:name|version)|arch|architecture|hostname|host|machine|shell|env|"
     "environment|pid|home|home_?dir|ide|editor|"
     "workspace(?:_?(?:dir|path|root|name|folder))?|worktrees?|abs_?path|root_?(?:dir|path)|"
     "repo(?:_?(?:name|dir|directory|path|root|url|owner))?|repository(?:_?\\w+)?|"
     /* the channel a conversation comes through (WhatsApp, a Slack channel) */
     "channel(?:_?(?:id|name))?|canal|"
     "\\w+_session(?:_id)?|(?:thread|conversation|chat|run|job|sub_?agent|execution|invocation)_?id|"
     "is_" DEVICE_FLAGS ")"},
    {LINT_VC_DAY, "(?:date|today|current_?date|todays?_?date|day|weekday|day_?of_?week|date_?str(?:ing)?|"
                  "\\w+_date|year|month|current_?(?:year|month|day)|fecha|fecha_?actual|datum|hoje|hoy|"
                  "aujourd_?hui|heute|oggi)"},
    {LINT_VC_USER, "(?:user|user_?name|username|name|email|e_?mail|user_?email|user_?id|first_?name|"
                   "last_?name|full_?name|display_?name|nick(?:name)?|locale|language|lang|"
                   "lang(?:uage)?_?code|timezone|tz|author_?name|location|city|country|region|address|"
                   "user_\\w+|customer(?:_\\w+)?|account(?:_\\w+)?|phone|preferred_\\w+|"
                   /* the tenant a multi-tenant deployment serves this request for */
                   "tenant(?:_?(?:id|name))?|"
                   "custom_(?:instructions|personality|style)|"
                   /* the person a sales or service agent talks to: lead_name, prospect_email */
                   "(?:lead|prospect|patient|paciente|caller|cliente)(?:_\\w+)?|"
                   "nome|nombre|usuario|utilisateur|benutzer|utente)"},
};

#define SUBDAY_NAMES                                                                                     \
    "(?:now|time|timestamp|ts|datetime|date_?time|current_?(?:time|datetime|timestamp|ts)|"              \
    "time_?of_?day|(?:current_?)?hour(?:_?of_?day)?|minute|clock|(?:unix|epoch)(?:_?(?:time|ts|ms|s))?|" \
    "hora|hora_?atual|hora_?actual|heure|heure_?actuelle|uhrzeit|\\w+_(?:timestamp|ts|time|"             \
    "datetime|at))"

/* Words that make a literal an example, and qualifiers that make a date a
 * fixed fact rather than the current one. Both look at the text before it. */
/* Chinese and Japanese words that introduce an example as "e.g." does:
 * 例如, 比如, 譬如, 示例, 举例/舉例, 范例/範例, 样例/樣例, 例えば, たとえば,
 * and 例 or 如 right before a colon (例：, 如：), not 比例 (a ratio). */
#define CJK_EXAMPLE                                                                                 \
    "例如|比如|譬如|示例|举例|舉例|范例|範例|样例|樣例|例えば|たとえば|" \
    "(?<!比)例\\h*(?::|：)|如(?::|：)"
#define EXAMPLE_CTX                                                                             \
    "(?i)(?:\\be\\.?g\\.|\\beg\\b|\\bi\\.?e\\.|\\bfor\\h+(?:example|instance)|\\bexamples?\\b|" \
    "\\bsamples?\\b|\\bsuch\\h+as\\b|\\blike\\b|\\bformat(?:ted|s)?\\b|\\bpattern\\b|"          \
    "\\bsyntax\\b|\\bstyle\\b|\\bplaceholder\\b|\\bfake\\b|\\bdummy\\b|" CJK_EXAMPLE ")"
#define CONST_CTX                                                                          \
    "(?i)\\b(?:release[sd]?|due|birth(?:day|date)?|born|expir\\w*|expires?|effective|"     \
    "publication|published|cut-?off|launch(?:ed)?|deadline|found(?:ed|ing)|creation|"      \
    "copyright|modified|revision|version|valid|since|until|from|between|opening|closing|"  \
    "fetched|captured|archived|crawled|scraped|"                                           \
    "office|business|meeting|appointment|departure|arrival|check-?in|check-?out|starts?|"  \
    "starting|ends?|ending|scheduled|schedule|event|on|before|after|by|response|run|wake|" \
    "opens?|closes?|last\\h+updated|slots?|book(?:ed|ing)?|reserv(?:e|ed|ation)|visit)\\b[^\\w\\n]*(?:\\w+[^\\w\\n]*){0,2}$"

#define ORDER_MAP                                                                         \
    "\\{%-?\\h*for\\h+\\w+\\h*,\\h*\\w+\\h+in\\h+(?![^%\\n]*sort)[^%\\n]*%\\}|"           \
    "\\{%-?\\h*for\\h+[^%\\n]*?\\bin\\h+(?![^%\\n]*sort)[^%\\n]*\\.(?:items|keys|values|" \
    "iteritems)\\h*\\(\\h*\\)[^%\\n]*%\\}|\\{\\{#each\\h+[^}\\n]*\\}\\}[^\\n]*\\{\\{@key"
#define ORDER_GLOB                                                                         \
    "\\{%-?\\h*(?:include|import|from)\\h+[\"'][^\"'\\n]*[*?][^\"'\\n]*[\"'][^%\\n]*%\\}|" \
    "\\{\\{>\\h*[^}\\n]*\\*[^}\\n]*\\}\\}|(?m)^\\h*[@!]include\\h+\\S*[*?]\\S*|"           \
    "\\bglob(?:\\.glob)?\\h*\\([^)\\n]*\\)"
#define ORDER_TOOLS                                                                        \
    "\\{%-?\\h*for\\h+\\w+\\h+in\\h+((?:tools|functions|skills|tool_list|available_tools|" \
    "commands|plugins)\\b)(?![^%\\n]*sort)[^%\\n]*%\\}"
#define TOOL_HEADING                                                                             \
    "(?i)^\\h{0,3}#{1,6}\\h+(?:\\*\\*)?(?:(?:available|the|your|allowed|built-?in|custom|"       \
    "agent)\\h+)?(?:tools?|functions?|commands|tool\\h+list)(?:\\h+(?:available|list|reference|" \
    "definitions?|you\\h+can\\h+use))?\\h*:?(?:\\*\\*)?\\h*$"
#define TOOL_ITEM                                                                                   \
    "^(\\h*)[-*+]\\h+(?:\\*\\*|`)?([A-Za-z_][\\w.-]*)(?:\\*\\*|`)?\\h*(?::|\\xe2\\x80[\\x93\\x94]|" \
    "-\\h|\\(|$)"

#define DIRECTIVE_HTML                                                                   \
    "<!--\\h*promptlint-(disable-next-line|disable-line|disable-file|disable|enable)\\b" \
    "([^>\\n]*?)\\h*-->"
#define DIRECTIVE_JINJA                                                                  \
    "\\{#-?\\h*promptlint\\h*:\\h*(disable-next-line|disable-line|disable-file|disable|" \
    "enable)\\b\\h*=?\\h*([^#\\n]*?)\\h*-?#\\}"

/* The words before a placeholder that no name classes ("The current date is
 * {}", "the user's workspace is {path}"), matched at the end of its sentence. */
#define CTX_TAIL "\\h*(?:\\*\\*|__|['\"`(\\[])?\\h*$"
/* The words between a caption and its value: a relative clause ("a file editor
 * that shows you {n} lines") hands the value to another noun. */
#define CTX_GAP "(?:(?!\\b(?:that|which|who|whose|where|when)\\b)[^.\\n]){0,24}?"
#define CTX_CALL                                                                               \
    "(?i)(?:\\b(?:current|local|system|server)\\h+time|\\btime\\h+now|\\bdate\\h+and\\h+time|" \
    "\\btime\\h+and\\h+date|\\btimestamp|\\bthe\\h+time|\\bright\\h+now,?\\h+it|\\bnow|"       \
    "\\b(?:heure|hora|uhrzeit)(?:\\h+(?:actuelle|atual|actual))?)\\h*(?:is\\b|was\\b)?\\h*[:=]?" CTX_TAIL
#define CTX_DAY                                                                                             \
    "(?i)(?:\\b(?:current|today'?s|the)\\h+(?:date|day)|\\btoday(?:\\h+is)?|\\bdate|\\bfecha|\\bdatum)\\h*" \
    "(?:is\\b|was\\b)?\\h*[:=]?" CTX_TAIL
/* A caption naming the piece of work a request hands in ("Task
 * description:", "Task:", "Request:", "Problem statement:", "Bug report:"),
 * right before the value: the task under routing or solving, per turn like
 * a task_description field. Only as a caption (a colon or "is"), not "the
 * task {x}". */
#define TASK_CAPTION                                                                                                 \
    "(?i)(?:^|[^\\w\\h*_]\\h*|\\bthe\\h+)(?:\\*\\*|__)?(?:task|request|problem|bug)(?:\\h+(?:description|statement|" \
    "details|report|text))?(?:\\*\\*|__)?\\h*(?::|\\his\\b)" CTX_TAIL
/* A caption saying what this call is to concentrate on ("Focus on:",
 * "**Focus Areas**:", "Review {{file}} with focus on:"): a summariser's or
 * reviewer's focus is an argument of the call, like its topic. Only as a
 * caption ending in a colon, not "reviews that focus on:" over a list. */
#define FOCUS_CAPTION                                                                        \
    "(?i)(?:^|[^\\w\\h*_]\\h*|\\b(?:with|and)\\h+)(?:\\*\\*|__)?focus(?:\\h+(?:on|areas?))?" \
    "(?:\\*\\*|__)?\\h*:" CTX_TAIL
#define CTX_TURN                                                                                  \
    "(?i)\\b(?:(?:the\\h+)?user'?s?\\h+(?:question|query|request|input|message|prompt)|question|" \
    "query|(?:current\\h+)?file(?:\\h*name|\\h+path|\\h+contents?)?|selected\\h+(?:code|text)|"   \
    "selection|open\\h+(?:tabs|files)|terminal(?:\\h+output)?|git\\h+(?:status|diff)|diff|"       \
    "issue(?:\\h+(?:number|#|id))?|pull\\h+request|PR|search\\h+results|documents?|"              \
    "conversation(?:\\h+history)?|chat\\h+history|arguments)\\b"                                  \
    "(?:[^.\\n]{0,24}?(?:\\h(?:is|are)\\b|:|=|#)|" CTX_GAP ")" CTX_TAIL "|" TASK_CAPTION "|" FOCUS_CAPTION
#define CTX_SESSION                                                                             \
    "(?i)\\b(?:working\\h+directory|cwd|current\\h+directory|workspace(?:\\h+(?:path|root|"     \
    "folder))?|project\\h+(?:root|directory|folder|path)|root\\h+director(?:y|ies)|repository|" \
    "repo|OS(?:\\h+(?:name|version))?|operating\\h+system|shell|platform|architecture|"         \
    "host\\h?name)\\b(?:[^.\\n]{0,24}?(?:\\h(?:is|are)\\b|:|=|\\(|\\hin)|" CTX_GAP ")" CTX_TAIL
#define CTX_USER                                                                                   \
    "(?i)\\b(?:(?:the\\h+)?user'?s\\h+(?:name|e-?mail|id|location|time\\h?zone)|(?:user|customer|" \
    "first|last|full)\\h*name|username|e-?mail(?:\\h+address)?|(?:talking|speaking|chatting)"      \
    "\\h+(?:to|with))\\h*(?:is\\b)?\\h*[:=]?" CTX_TAIL
/* The words right after a placeholder that name it the session's
 * directory: "Use ${path} as the primary workspace root", "{dir} is the
 * working directory", "{x} is your project root" (CTX_SESSION reads such
 * words before it). */
#define CTX_SESSION_AFTER                                                                           \
    "(?i)^\\h*(?:\\*\\*|__|['\"`)\\]])?\\h*,?\\h*(?:as|is)\\h+(?:the|your|its|our)\\h+"             \
    "(?:(?:primary|main|current|active|root|base|top-level)\\h+)*(?:working\\h+director(?:y|ies)|"  \
    "workspace(?:\\h+(?:root|folder|directory|path))?|project(?:'s)?\\h+(?:root|director(?:y|ies)|" \
    "folder|path)|repo(?:sitory)?(?:\\h+(?:root|directory|folder))?|root\\h+director(?:y|ies)|"     \
    "current\\h+directory|cwd)\\b"
/* Words that tie the value to this moment, whatever it is: "the user
 * selected the lines {a} to {b}", "for this task: {x}", "the current {x}". */
#define CTX_STATE                                                                                      \
    "(?i)(?:\\bthe\\h+user(?:'s|\\h+(?:selected|opened|provided|attached|uploaded|pasted|mentioned|"   \
    "wrote|typed|asked))|\\b(?:this|the\\h+current)\\h+(?:session|conversation|request|turn|task|run|" \
    "invocation)(?:'s)?|\\bcurrent(?:ly)?|\\bfor\\h+this\\h+(?:task|request|session|turn|run))\\b"     \
    "[^.,;()\\n]{0,30}?" CTX_TAIL
/* A caption saying that what follows is the state of this session: "The
 * currently active extensions are below.", "Servers connected right now:";
 * a state word next to "currently" / "right now" / "in this session", then
 * a pointer to what follows in the same sentence. Not "not currently active."
 * (nothing follows) nor "the tools available" (a fixed list). */
#define STATE_WORDS "(?:active|enabled|connected|installed|loaded|running|open(?:ed)?|attached|mounted)"
#define STATE_NOW   "(?:currently|presently|right\\h+now|at\\h+the\\h+moment|in\\h+this\\h+session)"
#define STATE_CAPTION                                                                      \
    "(?i)(?:\\b" STATE_NOW "\\h+(?:\\w+\\h+){0,2}?" STATE_WORDS "|\\b" STATE_WORDS         \
    "\\h+(?:\\w+\\h+){0,3}?" STATE_NOW ")\\b[^.!?]{0,80}?(?:\\b(?:below|following|listed|" \
    "here)\\b|:\\h*$)"
/* A heading, or a caption line ending in ':', that names the present state
 * of what it heads: "# Current target", "## Currently open files", and in
 * other languages "# 当前管理的目标" (Chinese; 目前, 现在, 當前, 現在 in
 * Japanese too), "## 현재 상태" (Korean), "## Aktueller Status" (German),
 * "## Текущая цель" (Russian), "## Estado actual" / "Estado atual" /
 * "Cible actuelle" / "Stato attuale" (Spanish, Portuguese, French, Italian:
 * the word after a noun). Matched on the line's text without its '#', '**'
 * and closing colon. */
#define STATE_HEADING                                                                            \
    "(?i)^(?:(?:the|your|our)\\h+)?current(?:ly)?\\b|"                                           \
    "^(?:\\xe5\\xbd\\x93\\xe5\\x89\\x8d|\\xe7\\x9b\\xae\\xe5\\x89\\x8d|"                         \
    "\\xe7\\x8e\\xb0\\xe5\\x9c\\xa8|\\xe7\\x95\\xb6\\xe5\\x89\\x8d|"                             \
    "\\xe7\\x8f\\xbe\\xe5\\x9c\\xa8|\\xed\\x98\\x84\\xec\\x9e\\xac)|"                            \
    "^(?:aktuell|derzeitig)|^(?:\\xd0\\xa2|\\xd1\\x82)\\xd0\\xb5\\xd0\\xba\\xd1\\x83\\xd1\\x89|" \
    "^\\S+(?:\\h+\\S+){0,3}\\h+(?:actual(?:es)?|atua(?:l|is)|actuel(?:le)?s?|attual[ei])(?:\\h|$)"
/* A heading, or a caption line ending in ':', that says the block below
 * holds what is known of the user now: "## Current user info", "User
 * profile", "What we know about the user so far", and in other languages
 * "## 用户当前信息" (Chinese), "ユーザー情報" (Japanese), "사용자 정보"
 * (Korean), "Perfil del usuario", "Benutzerprofil", "Informations sur
 * l'utilisateur", "Dados do usuário", "Информация о пользователе". Matched
 * as RX_STATE_HEADING is, on the line's text without its marks. */
#define USER_HEADING                                                                                                                     \
    "(?i)^(?:(?:the|our|your)\\h+)?(?:current\\h+|known\\h+)?user(?:'s)?\\h+(?:current\\h+)?"                                            \
    "(?:info(?:rmation)?|profile|data|details|state|status|context|facts)(?:\\h+so\\h+far)?$|"                                           \
    "^what\\h+(?:we|you)\\h+(?:already\\h+)?know\\h+about\\h+(?:the\\h+)?user(?:\\h+so\\h+far)?$|"                                       \
    "^(?:当前|目前|现在|當前|現在)?(?:的)?(?:用户|用戶|使用者)(?:的)?(?:当前|目前|现在|當前|現在)?(?:的)?" \
    "(?:基本|个人|個人)?(?:信息|资料|資料|資訊|档案|檔案|画像|畫像|状态|狀態|情况|情況|数据|數據)$|"   \
    "^(?:現在の)?ユーザー(?:の)?(?:現在の)?(?:情報|プロフィール|状態|データ)$|"                                  \
    "^(?:현재\\h*)?사용자\\h*(?:현재\\h*)?(?:정보|프로필|상태)$|"                                                          \
    "^(?:informaci(?:ó|o)n|perfil|datos|estado)(?:\\h+actual(?:es)?)?\\h+del\\h+usuario(?:\\h+actual)?$|"                               \
    "^(?:aktuelle\\h+)?(?:benutzer|nutzer)-?(?:informationen|info|profil|daten|status)$|"                                                \
    "^(?:informationen|daten)\\h+(?:über|zum)\\h+(?:den\\h+)?(?:benutzer|nutzer)$|"                                                     \
    "^(?:informations?|profil|donn(?:é|e)es|(?:é|e)tat)(?:\\h+actuel(?:le)?s?)?\\h+(?:de|sur)\\h+"                                     \
    "l(?:'|’)utilisateur(?:\\h+actuel)?$|"                                                                                             \
    "^(?:informa(?:çõ|co)es|perfil|dados|estado)(?:\\h+atua(?:l|is))?\\h+do\\h+(?:usu(?:á|a)rio|"                                     \
    "utilizador)$|^(?:(?:Т|т)екущ\\S*\\h+)?(?:(?:И|и)нформация|(?:П|п)рофиль|(?:Д|д)анные|"              \
    "(?:С|с)остояние)\\h+(?:о\\h+пользователе|пользователя)$"
/* A caption or tag that opens a list of the user's own settings ("The user
 * has the following system preferences:", <user-preferences>): its "Key:
 * value" items are the user's. */
#define USER_BLOCK                                                                                      \
    "(?i)(?:\\buser(?:'s)?\\h+(?:has\\h+the\\h+following\\h+)?(?:\\w+\\h+)?(?:preferences|settings|"    \
    "profile|information|info|details)\\b[^\\n]{0,60}:\\h*$|<user[-_]?(?:preferences|settings|profile|" \
    "info(?:rmation)?|details)>\\h*$|<(env|environment(?:_info|_details|_context)?|system_info|"        \
    "workspace_info)>\\h*$)"
/* A tag, at the start of a line, that holds what one request brings: search
 * results, the user's query, selected text, a pasted page, an attachment. */
#define CONTENT_TAG                                                                                       \
    "^\\h*<((?:search|web)_?results?|search_result|user_?(?:query|question|request|input|message)|"       \
    "selected_?(?:text|code)|selection|clipboard|(?:webpage|web_page|page|file)_?contents?|"              \
    "retrieved_?(?:context|documents?|chunks?)|attachments?|terminal_?output|git_?(?:status|diff)|"       \
    "open_?(?:tabs|files)|current_?file|(?:chat|conversation)_?history|tool_?results?|function_?results|" \
    "(?:user_?|current_?)?location|user_?(?:preferences|style|examples|memories|profile)|memories|"       \
    "memory|user_?info|about_?user|documents?|open_?file|tool_?output|(?:user|custom)_?instructions|"     \
    "conversation_?summary|previous_?session|session_?recap|issue|ticket|calendar(?:_?events)?|"          \
    "e-?mails|inbox)"                                                                                     \
    "(?:\\h[^>\\n]*)?>\\h*(?=\\S|$)"
/* A caption or heading that introduces per-user or per-request content in a
 * rendered prompt: the user's memories or facts about the user, retrieved
 * search results, a summary of the conversation so far, the selected text or
 * open file, a tool's output, the user's custom instructions, a recap of an
 * earlier session, the current task or issue, the user's calendar or mail
 * the schema of the user's notebook or database ("## Available schema:")
 * ("What you remember about the user:", "## Search Results",
 * "Selected text:"), maybe with a qualifier ("Calendar (today + tomorrow):",
 * "Recent emails from this week:") but not another noun ("Tool output
 * instructions:" is about the output, not the output). Group 1 is set for the user's own facts (per user). It
 * matches the whole line: a heading, or a caption ending in ':' (then
 * nothing, or the value itself after it: "Issue #4812: Login fails"). */
#define CC_USER                                                                                                   \
    "(?:(?:saved|stored|user|your)\\h+)?memories(?:\\h+about\\h+the\\h+user)?|what\\h+(?:you|we)\\h+(?:remember|" \
    "know)\\h+about\\h+the\\h+user|about\\h+the\\h+user|user(?:'s)?\\h+(?:information|profile)|model\\h+set\\h+context"
#define CC_TURN                                                                                                                  \
    "(?:web\\h+)?search\\h+results|retrieved\\h+(?:documents|context|passages|chunks)|(?:a\\h+)?summary\\h+of\\h+"               \
    "(?:the\\h+)?(?:conversation|chat|previous\\h+messages|earlier\\h+messages)(?:\\h+so\\h+far)?|"                              \
    "(?:previous\\h+)?conversation\\h+summary|selected\\h+(?:text|code)|the\\h+user\\h+has\\h+selected\\h+the\\h+"               \
    "following\\h+\\w+|(?:currently\\h+)?open\\h+file|clipboard(?:\\h+contents)?|tool\\h+(?:results?|output)|"                   \
    "output\\h+of\\h+the\\h+(?:last\\h+)?command|the\\h+user\\h+(?:has\\h+)?provided\\h+(?:the\\h+following\\h+)?"               \
    "(?:custom\\h+)?instructions|the\\h+user\\h+has\\h+provided\\h+additional\\h+info|user'?s\\h+custom\\h+"                     \
    "instructions|(?:previous|last)\\h+session(?:\\h+(?:recap|summary))?|recap\\h+of\\h+(?:your\\h+)?(?:last|"                   \
    "previous)\\h+session|current\\h+task|the\\h+user'?s\\h+task|ticket|issue\\h+#\\d+|(?:upcoming\\h+)?calendar"                \
    "(?:\\h+events)?|the\\h+user'?s\\h+calendar|(?:recent|pending|unread)\\h+e-?mails|inbox|"                                    \
    "available\\h+(?:data(?:base)?\\h+)?(?:schemas?|tables|data\\h*frames)|table\\h+schemas?|user(?:'s)?\\h+(?:question|query)|" \
    "question\\h+from\\h+the\\h+user"
/* Captions that name this request's data only by a general word ("CONTEXT:",
 * "Portfolio Data:", "Database schema context:", "Merge request details:",
 * 【当前市场状态】 "current market state" in Chinese brackets): group 2 (or
 * group 3, the bracket form) is set and the block under them must start
 * with a data line ("- Key: value", JSON), not an instruction ("Context:
 * you are a ..."). */
#define CC_WEAK                                                                                               \
    "context|(?:(?:current|live|real-?time)\\h+)?(?:portfolio|market|account|positions?|order|trade|request|" \
    "input)\\h+(?:data|state|status|details|info)|(?:data(?:base)?\\h+)?schema\\h+context|(?:merge|pull)\\h+" \
    "request\\h+(?:context|details|info)"
#define CC_BRACKET                                                                \
    "^\\h*(\xe3\x80\x90(?:\xe5\xbd\x93\xe5\x89\x8d|\xe7\x9b\xae\xe5\x89\x8d|"     \
    "\xe7\x8e\xb0\xe5\x9c\xa8|\xe7\x95\xb6\xe5\x89\x8d|\xe7\x8f\xbe\xe5\x9c\xa8|" \
    "\xed\x98\x84\xec\x9e\xac)[^\n]{0,40}?\xe3\x80\x91)\\h*$"
#define CONTENT_CAPTION                                                                                              \
    "(?i)^\\h*(?:#{1,4}\\h+)?(?:\\*\\*)?(?:(?:here\\h+(?:is|are)|below\\h+(?:is|are))\\h+)?(?:the\\h+)?(?:(" CC_USER \
    ")|(" CC_WEAK ")|" CC_TURN                                                                                       \
    ")\\b(?:\\h+(?:for|from|of|about|so|in|on|with|by|since|that|which|you|we)\\b"                                   \
    "[^:.!?<>{}()\\n]{0,60}?|\\h*\\([^()\\n]{1,60}\\))?(?:\\*\\*)?(?::(?:\\*\\*)?\\h*(?:\\S[^\\n]*)?|\\h*)$|" CC_BRACKET

/* Words that give the assistant's own name ("You're a helpful agent named
 * '{{name}}'", "Your name is {name}"): the name is configured, not the user's. */
#define SELF_NAME                                                                                \
    "(?i)(?:\\b(?:agent|assistant|bot|chatbot|ai|model|persona|character|helper)\\h+(?:is\\h+)?" \
    "(?:named|called)|\\byour\\h+name\\h+is|\\byou\\h+are\\h+(?:named|called))\\h*:?" CTX_TAIL
#define USER_ITEM \
    "^\\h*(?:[-*]\\h+)?(?:\\*\\*)?[A-Za-z][\\w\\h]{0,30}(?:\\*\\*)?:\\h*(?:\\*\\*)?\\K\\S[^\\n]*$"
/* A relative time that is what a tool's parameter defaults to or accepts,
 * fixed text of its documentation: "start_date: first day (YYYY-MM-DD),
 * defaults to 7 days ago", "(default: '24 hours ago')", "if omitted, 1 hour
 * ago", "accepts relative times such as '2 days ago'", and what a value
 * written in code stands for ("relative seconds: `-3600` for 1 hour ago"). */
#define DEFAULT_CTX                                                                                            \
    "(?:\\bdefault(?:s|ing)?(?:\\h+(?:to|is|of|value(?:\\h+is)?))?|\\bif\\h+(?:omitted|unset|"                 \
    "not\\h+(?:given|set|specified|provided|passed))|\\baccepts?(?:\\h+(?:relative|natural[-\\h]language)\\h+" \
    "(?:times?|dates?|values?|expressions?)(?:\\h+(?:like|such\\h+as))?)?|`[^`\\n]{1,40}`\\h+(?:for|means))"   \
    "\\h*[:=,]?\\h*[\"'`(]?\\h*$"
/* A value given as a setting's documented default, whatever it is
 * ("DOCS_DIR defaults to ${DAGS_DIR}/docs"). */
#define DEFAULT_ANY "(?i)" DEFAULT_CTX
/* A relative time that is a length, not a moment: "more than 7 days ago",
 * or (DEFAULT_CTX) a parameter's documented default. */
#define DURATION_CTX                                                                                  \
    "(?i)(?:\\b(?:more|less|fewer|longer|older|newer|earlier|later)\\h+than|\\bat\\h+(?:least|most)|" \
    "\\bwithin(?:\\h+the)?(?:\\h+(?:last|past))?|\\bup\\h+to|\\bover|\\bunder|\\bapproximately|"      \
    "\\babout|\\bmin(?:imum)?|\\bmax(?:imum)?|\\bevery|\\bthan|\\bbetween\\h+\\d+\\h+and)\\h*$|" DEFAULT_CTX

/* Where a file declares a speaker's token ({user}, {{char}}, {narrator}) as
 * text the model writes, not a field: quoted as a message's label ("All
 * user messages must start with \"{user}:\""), named a placeholder name
 * ("a blank slate with the placeholder name of {user}"), or put in place of
 * a name ("use {{char}} instead of the character's name", "Instead of the
 * character's name you must use {{char}}"). Group 1 is the token. */
#define ROLE_TOKEN \
    "(\\{\\{?\\h*(?:user|char|character|narrator|bot|npc|human|assistant|ai|player)\\h*\\}\\}?)"
#define ROLE_TOKEN_DECL                                                                                     \
    "(?i)(?|(?:[\"']|\xe2\x80\x9c|\xe2\x80\x98)" ROLE_TOKEN "\\h?:\\h?(?:[\"']|\xe2\x80\x9d|\xe2\x80\x99)|" \
    "\\bplaceholder\\s+names?\\s+(?:of\\s+|is\\s+)?" ROLE_TOKEN "|\\buse\\s+" ROLE_TOKEN                    \
    "\\s+(?:instead\\s+of|in\\s+place\\s+of|to\\s+refer\\s+to)\\b|\\binstead\\s+of\\s+[^.!?]{1,80}?\\b"     \
    "(?:use|write)\\s+" ROLE_TOKEN ")"

/* A line that shows a block describes the persona the assistant plays, not
 * its user: a trait field only a character sheet has ("Personality:",
 * "Temperament:", "Conversation Style:", "Backstory:", "Persona:"), or a
 * sentence about playing one ("Take on the following persona and emulate
 * it") that says nothing of a user or customer. */
#define PERSONA_LINE                                                                                      \
    "^\\h*(?:[-*]\\h+)?(?:\\*\\*)?(?:persona|personality|temperament|backstory|(?:conversation|speaking)" \
    "\\h+style)(?:\\*\\*)?\\h*:|^(?![^\\n]*\\b(?:users?|customers?|clients?|humans?)\\b)[^\\n]*\\b"       \
    "(?:persona|emulate|embody|impersonat\\w*|role-?play\\w*)\\b"

const char *const lint_detect_misc[] = {
    EXAMPLE_CTX,     CONST_CTX,       "^" SUBDAY_NAMES "$",
    ORDER_MAP,       ORDER_GLOB,      ORDER_TOOLS,
    TOOL_HEADING,    TOOL_ITEM,       DIRECTIVE_HTML,
    DIRECTIVE_JINJA, CTX_CALL,        CTX_DAY,
    CTX_TURN,        CTX_SESSION,     CTX_USER,
    DURATION_CTX,    USER_BLOCK,      USER_ITEM,
    CONTENT_TAG,     SELF_NAME,       CTX_STATE,
    STATE_CAPTION,   CONTENT_CAPTION, ROLE_TOKEN_DECL,
    DEFAULT_ANY,     STATE_HEADING,   CTX_SESSION_AFTER,
    PERSONA_LINE,    USER_HEADING,
};

#define ROWS(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(ROWS(lint_detect_literals) == LINT_N_LITERALS, "LINT_N_LITERALS is not the row count");
_Static_assert(ROWS(lint_detect_placeholders) == LINT_N_PLACEHOLDERS,
               "LINT_N_PLACEHOLDERS is not the row count");
_Static_assert(ROWS(lint_detect_names) == LINT_N_NAMES, "LINT_N_NAMES is not the row count");
_Static_assert(ROWS(lint_detect_misc) == RX_MISC_COUNT, "lint_detect_misc needs one row per RX_ id");
