/* tests/lint_matrix_env.c: the coverage matrix of rendered environment values
 * (lint_matrix_env.h). Builds short prompts from values x labels x wrappers x
 * position, lints each and compares with what a reader expects: an error
 * (PL001) within a line of the value when fixed instructions follow it, no
 * error when it is last or is plainly not the current value (an example, a
 * release date, a knowledge cutoff, a fenced sample). Does not read files.
 *
 * Left out on purpose (promptlint does not claim them):
 * - a bare value with no label on its line or the line above (a date alone
 *   in a paragraph): nothing says it is the current one;
 * - a location, OS or shell in another language than English: rendered
 *   prompts seen so far label these in English;
 * - a label in another language in a file that is otherwise plain ASCII
 *   (those labels are looked for only where the file has a byte above 0x7f,
 *   as text in German, French, Spanish, Portuguese, Italian, Russian, CJK
 *   always does: it keeps English files from paying for them);
 * - a bare "## User" heading above a name: it is also a chat transcript's
 *   role caption ("## User" then what the user said);
 * - a weekday in another language after an English label ("Current date:
 *   jeudi 5 mars 2026"): the English rows read English weekdays only. */
#include "lint_matrix_env.h"

#include <stdio.h>
#include <string.h>

#include "../linter/lint.h"
#include "../linter/lint_ctx.h"
#include "../linter/lint_registry.h"
#include "../linter/lint_report.h"
#include "check.h"
#include "lint_matrix_cell.h"

/* --- the values --------------------------------------------------------- */

enum { K_DATE, K_TIME, K_TZ, K_LOC, K_OS, K_SHELL, K_CWD, K_BRANCH, K_NAME, K_COUNT };

/* How English writes each kind: a caption, a key, a sentence, a heading. */
static const struct {
    const char *title, *key, *prose, *heading;
} k_kind[K_COUNT] = {
    {"Current date", "current_date", "The current date is %s.", "## Current Date"},
    {"Current time", "current_time", "The current time is %s.", "## Current Time"},
    {"Time zone", "timezone", "The user's time zone is %s.", "## Time Zone"},
    {"Location", "location", "The user is located in %s.", "## User Location"},
    {"Operating system", "os", "The user's operating system is %s.", "## Operating System"},
    {"Shell", "shell", "The user's default shell is %s.", "## Shell"},
    {"Working directory", "cwd", "The current working directory is %s.", "## Working Directory"},
    {"Git branch", "git_branch", "The current git branch is %s.", "## Git Branch"},
    {"User name", "user_name", "The user's name is %s.", "## User Name"},
};

static const struct {
    int kind;
    const char *text;
} k_values[] = {
    {K_DATE, "2026-03-05"},
    {K_DATE, "2026-03-05T14:22:08Z"},
    {K_DATE, "Thursday, March 5, 2026"},
    {K_DATE, "5 March 2026"},
    {K_DATE, "03/05/2026"},
    {K_DATE, "05.03.2026"},
    {K_DATE, "5/3/2026 14:22"},
    {K_DATE, "Mar 5, 2026 2:22 PM PST"},
    {K_DATE, "2026年3月5日"},
    {K_DATE, "2026년 3월 5일"},
    {K_DATE, "5 de marzo de 2026"},
    {K_DATE, "5. März 2026"},
    {K_DATE, "5 mars 2026"},
    {K_DATE, "5 марта 2026 г."},
    {K_DATE, "1772720528"},
    {K_TIME, "14:22"},
    {K_TIME, "14:22:08"},
    {K_TIME, "2:22 PM"},
    {K_TIME, "14:22 UTC"},
    {K_TZ, "Europe/Berlin"},
    {K_TZ, "UTC+2"},
    {K_LOC, "Berlin, Germany"},
    {K_OS, "macOS 15.2"},
    {K_OS, "Windows 11"},
    {K_OS, "Ubuntu 24.04"},
    {K_SHELL, "zsh"},
    {K_SHELL, "/bin/zsh"},
    {K_CWD, "/Users/ann/proj"},
    {K_CWD, "C:\\Users\\ann\\proj"},
    {K_CWD, "/home/ann/x"},
    {K_BRANCH, "feature/login-fix"},
    {K_NAME, "Ann Smith"},
};

/* --- the wrappers ------------------------------------------------------- */

enum { W_PROSE, W_LINE, W_BULLET, W_TABLE, W_TAG, W_ENV, W_JSON, W_YAML, W_HEADING, W_COUNT };
static const char *const k_wrap_name[W_COUNT] = {"prose", "line", "bullet", "table",  "tag",
                                                 "env",   "json", "yaml",   "heading"};

/* Appends a prefix (lines before the value's line), marks the value's line,
 * then appends the rest of the block. */
static void block(mx_buf *b, const char *before, const char *fmt, const char *v) {
    mx_put(b, "%s", before);
    b->vline = mx_lines(b);
    const char *at = strstr(fmt, "%s");
    if (!at) {
        mx_put(b, "%s", fmt);
        return;
    }
    size_t vl = strlen(v);
    /* "5 марта 2026 г." ends a sentence with its own period */
    const char *rest = vl && v[vl - 1] == '.' && at[2] == '.' ? at + 3 : at + 2;
    mx_put(b, "%.*s%s%s", (int)(at - fmt), fmt, v, rest);
}

static void wrap(mx_buf *b, int w, int kind, const char *v) {
    char f[256];
    switch (w) {
    case W_PROSE: block(b, "", k_kind[kind].prose, v); break;
    case W_LINE:
        snprintf(f, sizeof f, "%s: %%s", k_kind[kind].title);
        block(b, "", f, v);
        break;
    case W_BULLET:
        snprintf(f, sizeof f, "- **%s:** %%s", k_kind[kind].title);
        block(b, "", f, v);
        break;
    case W_TABLE:
        snprintf(f, sizeof f, "| %s | %%s |", k_kind[kind].title);
        block(b, "| Field | Value |\n|---|---|\n", f, v);
        break;
    case W_TAG:
        snprintf(f, sizeof f, "<%s>%%s</%s>", k_kind[kind].key, k_kind[kind].key);
        block(b, "", f, v);
        break;
    case W_ENV:
        snprintf(f, sizeof f, "%s: %%s\n</env>", k_kind[kind].title);
        block(b, "<env>\n", f, v);
        break;
    case W_JSON: {
        /* JSON escapes a backslash */
        char esc[128];
        size_t j = 0;
        for (const char *p = v; *p && j + 2 < sizeof esc; p++) {
            if (*p == '\\') esc[j++] = '\\';
            esc[j++] = *p;
        }
        esc[j] = 0;
        snprintf(f, sizeof f, "  \"%s\": \"%%s\"\n}", k_kind[kind].key);
        block(b, "{\n", f, esc);
        break;
    }
    case W_YAML:
        snprintf(f, sizeof f, "%s: %%s", k_kind[kind].key);
        block(b, "", f, v);
        break;
    case W_HEADING:
        snprintf(f, sizeof f, "%s\n", k_kind[kind].heading);
        block(b, f, "%s", v);
        break;
    default: break;
    }
}

/* --- other languages: dates and times under native labels --------------- */

static const struct {
    const char *lang;
    const char *intro; /* a sentence of the prompt in that language */
    const char *dates[3];
    const char *date_fmt[3]; /* a caption line, a bullet, a sentence */
    const char *time_fmt[2]; /* a caption line, a sentence */
} k_langs[] = {
    {"de",
     "Du bist Nova, ein hilfreicher Assistent für Acme.\n\n",
     {"5. März 2026", "05.03.2026", "Donnerstag, 5. März 2026"},
     {"Aktuelles Datum: %s", "- **Heutiges Datum:** %s", "Heute ist %s."},
     {"Aktuelle Uhrzeit: %s", "Es ist jetzt %s Uhr."}},
    {"fr",
     "Tu es Nova, l'assistant très serviable d'Acme.\n\n",
     {"5 mars 2026", "05/03/2026", "jeudi 5 mars 2026"},
     {"Date actuelle : %s", "- **Date du jour :** %s", "Nous sommes le %s."},
     {"Heure actuelle : %s", "Il est %s."}},
    {"es",
     "Eres Nova, el asistente útil de Acme.\n\n",
     {"5 de marzo de 2026", "05/03/2026", "jueves, 5 de marzo de 2026"},
     {"Fecha actual: %s", "- **Fecha de hoy:** %s", "Hoy es %s."},
     {"Hora actual: %s", "Son las %s."}},
    {"pt",
     "Você é Nova, o assistente útil da Acme.\n\n",
     {"5 de março de 2026", "05/03/2026", "2026-03-05"},
     {"Data atual: %s", "- **Data de hoje:** %s", "Hoje é %s."},
     {"Hora atual: %s", "Agora são %s."}},
    {"it",
     "Sei Nova, l'assistente di Acme: rispondi sempre in modo più chiaro.\n\n",
     {"5 marzo 2026", "05/03/2026", "giovedì 5 marzo 2026"},
     {"Data odierna: %s", "- **Data attuale:** %s", "Oggi è %s."},
     {"Ora attuale: %s", "Sono le %s."}},
    {"ru",
     "Ты Нова, полезный помощник Acme.\n\n",
     {"5 марта 2026 г.", "05.03.2026", "2026-03-05"},
     {"Текущая дата: %s", "- **Сегодняшняя дата:** %s", "Сегодня %s."},
     {"Текущее время: %s", "Сейчас %s."}},
    {"zh",
     "你是 Acme 的助手 Nova。\n\n",
     {"2026年3月5日", "2026-03-05", "2026/03/05"},
     {"当前日期：%s", "- **今天的日期：** %s", "今天是%s。"},
     {"当前时间：%s", "现在是%s。"}},
    {"ja",
     "あなたは Acme のアシスタント Nova です。\n\n",
     {"2026年3月5日", "2026-03-05", "2026/03/05"},
     {"現在の日付：%s", "- **今日の日付：** %s", "今日は%sです。"},
     {"現在時刻：%s", "現在の時刻は%sです。"}},
    {"ko",
     "당신은 Acme의 도우미 Nova입니다.\n\n",
     {"2026년 3월 5일", "2026-03-05", "2026.03.05"},
     {"현재 날짜: %s", "- **오늘 날짜:** %s", "오늘은 %s입니다."},
     {"현재 시간: %s", "지금은 %s입니다."}},
};
static const char *const k_times[] = {"14:22", "14:22:08"};

/* English labels of the date other than "Current date" (a line, a sentence). */
static const char *const k_date_more[] = {"Today's date: %s", "Today is %s.", "It is currently %s.",
                                          "- Date: %s"};

/* The same date where it is not the current one. */
static const char *const k_date_not_now[] = {
    "Write dates in a consistent format, e.g. %s.",
    "This model was released on %s.",
    "Knowledge cutoff: %s",
    "Reply in this shape:\n\n```\nCurrent date: %s\n```",
};

/* --- running a cell ----------------------------------------------------- */

/* One cell per position: the value then fixed instructions (error), the value
 * last (no error). */
static void both(lint_ctx *c, mx_stats *st, const char *intro, const char *name, int w, int kind,
                 const char *fmt, const char *v) {
    char nm[128];
    for (int pos = 0; pos < 2; pos++) {
        mx_buf b = {.n = 0};
        mx_put(&b, "%s", intro);
        if (fmt)
            block(&b, "", fmt, v);
        else
            wrap(&b, w, kind, v);
        if (!pos)
            mx_put(&b, "%s", mx_tail);
        else
            mx_put(&b, "\n");
        snprintf(nm, sizeof nm, "%s/%s", name, pos ? "last" : "before");
        mx_run_cell(c, st, 0, nm, &b, !pos);
    }
}

void lint_matrix_env_check(void) {
    lint_options o = {0};
    o.no_model = 1;
    o.no_config = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    int rc = lint_ctx_new(&c, &o, &err);
    CHECK_MSG(rc == 0, "lint_ctx_new: %s", err.msg);
    if (!c) return;
    mx_stats st = {0};
    char nm[128];
    size_t nv = sizeof k_values / sizeof k_values[0];
    for (size_t i = 0; i < nv; i++) {
        int kind = k_values[i].kind;
        for (int w = 0; w < W_COUNT; w++) {
            snprintf(nm, sizeof nm, "en/%s#%zu/%s", k_kind[kind].key, i, k_wrap_name[w]);
            both(c, &st, mx_intro, nm, w, kind, NULL, k_values[i].text);
        }
        if (kind != K_DATE) continue;
        for (size_t f = 0; f < sizeof k_date_more / sizeof k_date_more[0]; f++) {
            snprintf(nm, sizeof nm, "en/date#%zu/more%zu", i, f);
            both(c, &st, mx_intro, nm, 0, kind, k_date_more[f], k_values[i].text);
        }
        for (size_t f = 0; f < sizeof k_date_not_now / sizeof k_date_not_now[0]; f++) {
            mx_buf b = {.n = 0};
            mx_put(&b, "%s", mx_intro);
            block(&b, "", k_date_not_now[f], k_values[i].text);
            mx_put(&b, "%s", mx_tail);
            snprintf(nm, sizeof nm, "en/date#%zu/not-now%zu", i, f);
            mx_run_cell(c, &st, 0, nm, &b, 0);
        }
    }
    for (size_t l = 0; l < sizeof k_langs / sizeof k_langs[0]; l++) {
        for (int di = 0; di < 3; di++)
            for (int fi = 0; fi < 3; fi++) {
                snprintf(nm, sizeof nm, "%s/date%d/fmt%d", k_langs[l].lang, di, fi);
                both(c, &st, k_langs[l].intro, nm, 0, K_DATE, k_langs[l].date_fmt[fi], k_langs[l].dates[di]);
            }
        for (int ti = 0; ti < 2; ti++)
            for (int fi = 0; fi < 2; fi++) {
                snprintf(nm, sizeof nm, "%s/time%d/fmt%d", k_langs[l].lang, ti, fi);
                both(c, &st, k_langs[l].intro, nm, 0, K_TIME, k_langs[l].time_fmt[fi], k_times[ti]);
            }
    }
    fprintf(
        stderr,
        "lint environment matrix: %d cells (%d expect an error, %d none): missed %d (%d without error, %d with)\n",
        st.cells, st.pos, st.neg, st.miss_pos + st.miss_neg, st.miss_pos, st.miss_neg);
    CHECK_MSG(st.miss_pos + st.miss_neg == 0, "lint environment matrix: %d of %d cells missed",
              st.miss_pos + st.miss_neg, st.cells);
    lint_ctx_free(c);
}
