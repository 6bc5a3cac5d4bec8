/* linter/lint_sniff.c: whether the head of a walked file reads like a
 * prompt (lint_reads_like_prompt), for the selections lint_config_select
 * leaves to the text: prose addressed to a model, in several languages;
 * templates that are prose, not markup, config or code; prompt text in
 * data files. Does not decide by name or path (lint_config.c). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lint_config.h"
#include "lint_sniff.h"

/* Occurrences of a phrase (ASCII, case-insensitive) at word starts. */
static int has_phrase(const char *s, size_t n, const char *w) {
    size_t l = strlen(w);
    int c0 = tolower((unsigned char)*w); /* a cheap first test before strncasecmp */
    for (size_t i = 0; i + l <= n; i++)
        if (tolower((unsigned char)s[i]) == c0 && (i == 0 || !isalnum((unsigned char)s[i - 1])) &&
            strncasecmp(s + i, w, l) == 0 && (i + l == n || !isalnum((unsigned char)s[i + l])))
            return 1;
    return 0;
}

/* Sum of weight[k] over the phrases of each NULL-ended list lists[k] found
 * in s[0, n), each phrase counted once where has_phrase would find it: one
 * pass over the text, trying at each word start only the phrases whose
 * first letter (byte) matches, instead of one pass per phrase. At most
 * PHRASE_MAX phrases in all; more are ignored. */
#define PHRASE_MAX 128
static int phrase_score(const char *s, size_t n, const char *const *const *lists, const int *weight,
                        size_t nlists) {
    const char *ph[PHRASE_MAX];
    int wt[PHRASE_MAX];
    size_t len[PHRASE_MAX], np = 0;
    uint64_t by_first[256][PHRASE_MAX / 64] = {{0}}, found[PHRASE_MAX / 64] = {0};
    for (size_t k = 0; k < nlists; k++)
        for (const char *const *w = lists[k]; *w && np < PHRASE_MAX; w++, np++) {
            ph[np] = *w, wt[np] = weight[k], len[np] = strlen(*w);
            by_first[(unsigned char)tolower((unsigned char)**w)][np / 64] |= (uint64_t)1 << (np % 64);
        }
    for (size_t i = 0; i < n; i++) {
        const uint64_t *f = by_first[(unsigned char)tolower((unsigned char)s[i])];
        if (!(f[0] | f[1]) || (i > 0 && isalnum((unsigned char)s[i - 1]))) continue;
        for (size_t g = 0; g < PHRASE_MAX / 64; g++)
            for (uint64_t m = f[g] & ~found[g]; m; m &= m - 1) {
                size_t b = g * 64 + (size_t)__builtin_ctzll(m), l = len[b];
                if (i + l <= n && strncasecmp(s + i, ph[b], l) == 0 &&
                    (i + l == n || !isalnum((unsigned char)s[i + l])))
                    found[g] |= (uint64_t)1 << (b % 64);
            }
    }
    int score = 0;
    for (size_t b = 0; b < np; b++)
        if (found[b / 64] >> (b % 64) & 1) score += wt[b];
    return score;
}

/* Whether the text is a coding agent's command or agent file: Claude Code's
 * $ARGUMENTS (word-bounded, upper case; when args is set), or front matter
 * that names the command's arguments or tools (argument-hint:,
 * allowed-tools:). Such files are kept outside .claude/commands/ by
 * collections meant to be copied there (tools/review.md); a document may
 * name $ARGUMENTS while describing them. */
static int command_file(const char *p, size_t n, int args) {
    for (const char *q = p; args && (q = memmem(q, (size_t)(p + n - q), "$ARGUMENTS", 10)) != NULL; q += 10)
        if (q + 10 >= p + n || !(isalnum((unsigned char)q[10]) || q[10] == '_')) return 1;
    if (n > 4 && memcmp(p, "---", 3) == 0) {
        const char *end = memmem(p + 3, n - 3, "\n---", 4);
        size_t fl = end ? (size_t)(end - p) : 0;
        for (size_t i = 3; i + 14 <= fl; i++)
            if (p[i - 1] == '\n' &&
                (!strncmp(p + i, "argument-hint:", 14) || !strncmp(p + i, "allowed-tools:", 14)))
                return 1;
    }
    return 0;
}

/* How a template line ends, for telling prose templates from config and code
 * (a line ending in '}' was read as code before):
 * - TL_BARE, TL_CURLY: template tags and punctuation only (`{%- if x -%}`,
 *   `{# note #}`; TL_CURLY with an output tag, `{{ label }}: {{ value }}`,
 *   `{{#items}}`): a line, not code;
 * - TL_TEXT: text before a tag opened on the line (`Paragraph: {{ text }}`),
 *   a prose line whose field comes last: a line, not code;
 * - TL_KEY: a config key before it (`listen_port: {{ port }}`,
 *   `listen: 0.0.0.0:{{ port }}`, `app.kubernetes.io/name: {{ x }}`: a
 *   lower-case key, then ':' or '=', or a space and the tag): code;
 * - TL_GO: Go control tags (`{{- end }}`, `{{- if .Values.x }}`, a Go
 *   comment tag, `{{ .Values.x }}`), what Helm charts and other config
 *   templates are made of: code, and so are the file's TL_CURLY lines;
 * - TL_NONE: the line does not end in a tag: as before. */
enum { TL_NONE, TL_BARE, TL_CURLY, TL_TEXT, TL_KEY, TL_GO };

static int control_tag(const char *a, const char *b) {
    while (a < b && (*a == '-' || *a == '~' || *a == ' ')) a++;
    if (a + 1 < b &&
        ((*a == '.' && isalpha((unsigned char)a[1])) || *a == '$' || *a == '*' || (*a == '/' && a[1] == '*')))
        return 1; /* Go's .Values.x, $name, comments; not Mustache's {{.}} */
    static const char *const k_go[] = {"end",       "else",   "if ",      "range ",  "with ", "define ",
                                       "template ", "block ", "include ", "printf ", NULL};
    for (const char *const *w = k_go; *w; w++)
        if ((size_t)(b - a) >= strlen(*w) && !strncmp(a, *w, strlen(*w))) return 1;
    return 0;
}

/* A config line: an INI/TOML section (`[client]`, `[Service]`,
 * `[plugins."cri"]`); a key and '=' (`gpgcheck=0`, `ExecStart=/bin/x`,
 * `sandbox_image = "{{ img }}"`); a YAML key that starts lower-case
 * (`kind: ConfigMap`, `failSwapOn: {{ x }}`, `- name: web`, `metadata:`),
 * except a chat role marker (`system:`, `user: {{ question }}`). Not a JSON
 * key: prompts show JSON output formats. Prompt captions are capitalized (`Paragraph:`,
 * `QUESTION:`) or several words (`Text content:`). */
static int config_line(const char *q, const char *te) {
    if (*q == '[' && te[-1] == ']' && te - q > 2) {
        for (const char *k = q + 1; k < te - 1; k++)
            if (!(isalnum((unsigned char)*k) || strchr("_.-\"'", *k))) return 0;
        return 1;
    }
    if (*q == '-' && q + 1 < te && q[1] == ' ') q += 2;
    const char *k = q;
    for (; k < te && (isalnum((unsigned char)*k) || strchr("_.-/", *k)); k++)
        ;
    if (k == q || !isalpha((unsigned char)*q)) return 0;
    const char *v = k;
    if (v < te && *v == ' ') v++;
    if (v < te && *v == '=' && (v + 1 >= te || v[1] != '=')) return 1;
    if (k >= te || *k != ':' || (k + 1 < te && k[1] != ' ') || !islower((unsigned char)*q)) return 0;
    static const char *const k_roles[] = {"system",    "user",  "assistant", "human",    "ai", "bot",
                                          "developer", "model", "tool",      "function", NULL};
    for (const char *const *r = k_roles; *r; r++)
        if (strlen(*r) == (size_t)(k - q) && !strncmp(q, *r, (size_t)(k - q))) return 0;
    return 1;
}

/* Whether a line opening with '<' is a prompt's XML section tag
 * (`<instructions>`, `</user_question>`, `<id>{{ task.id }}</id>`) rather than
 * HTML or SVG markup: its name is no HTML element and it has no attributes.
 * Such lines count as prose only in a template with three lines of five
 * words or more outside tags (a prompt, not XML data). */
static int prompt_section(const char *q, const char *te) {
    static const char *const k_html[] = {
        "a",       "abbr",    "address", "area",   "article", "aside",    "audio",    "b",     "base",
        "body",    "br",      "button",  "canvas", "caption", "circle",   "code",     "col",   "dd",
        "defs",    "details", "dialog",  "div",    "dl",      "dt",       "em",       "embed", "fieldset",
        "figure",  "footer",  "form",    "g",      "h1",      "h2",       "h3",       "h4",    "h5",
        "h6",      "head",    "header",  "hr",     "html",    "i",        "iframe",   "img",   "input",
        "label",   "legend",  "li",      "line",   "link",    "main",     "meta",     "nav",   "noscript",
        "ol",      "option",  "p",       "path",   "picture", "polygon",  "pre",      "rect",  "script",
        "section", "select",  "small",   "source", "span",    "strong",   "style",    "sub",   "summary",
        "sup",     "svg",     "table",   "tbody",  "td",      "template", "textarea", "tfoot", "th",
        "thead",   "title",   "tr",      "u",      "ul",      "use",      "video",    "slot",  NULL};
    const char *k = q + 1;
    if (*k == '/') k++;
    const char *n = k;
    while (k < te && (isalnum((unsigned char)*k) || *k == '_' || *k == '-')) k++;
    if (k == n || k >= te || (*k != '>' && !(*k == '/' && k + 1 < te && k[1] == '>'))) return 0;
    size_t len = (size_t)(k - n);
    int c0 = tolower((unsigned char)*n);
    for (const char *const *h = k_html; *h; h++)
        if (**h == c0 && !strncasecmp(n, *h, len) && (*h)[len] == '\0') return 0;
    return 1;
}

static int tag_line(const char *q, const char *te) {
    if (te - q < 4 || te[-1] != '}' || (te[-2] != '}' && te[-2] != '%' && te[-2] != '#')) return TL_NONE;
    char open = te[-2] == '}' ? '{' : te[-2];
    const char *o = NULL; /* the opener of the closing tag */
    for (const char *k = te - 3; k > q; k--)
        if (k[-1] == '{' && k[0] == open) {
            o = k - 1;
            break;
        }
    if (!o) return TL_NONE;
    /* only tags and the punctuation between them */
    int bare = 1, curly = 0;
    for (const char *k = q; k < te && bare;) {
        if (*k == '{' && k + 1 < te && (k[1] == '{' || k[1] == '%' || k[1] == '#')) {
            char c = k[1] == '{' ? '}' : k[1];
            const char *e = k + 2;
            while (e + 1 < te && !(e[0] == c && e[1] == '}')) e++;
            if (e + 1 >= te) return TL_NONE;
            if (c == '}' && control_tag(k + 2, e)) return TL_GO;
            curly |= c == '}';
            k = e + 2;
        } else if (isalpha((unsigned char)*k)) {
            bare = 0;
        } else {
            k++;
        }
    }
    if (bare) return curly ? TL_CURLY : TL_BARE;
    if (control_tag(o + 2, te - 2)) return TL_GO;
    const char *k = q;
    while (k < o && (islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_' || *k == '.' ||
                     *k == '-' || *k == '/'))
        k++;
    if (k > q && k < o && (*k == ':' || *k == '=')) return TL_KEY;
    if (k > q && k < o && *k == ' ') {
        const char *v = k + 1;
        while (v < o && (*v == ' ' || *v == '=' || *v == '"' || *v == '\'')) v++;
        if (*v == '{') return TL_KEY;
    }
    return TL_TEXT;
}

/* Whether line [q, le) (past '#', list marks and spaces, and a trailing
 * ':' or '*') starts with one of the words (as a prefix when prefix, else
 * whole). */
static int line_starts(const char *q, const char *le, const char *const *w, int prefix) {
    while (q < le && (*q == '#' || *q == '-' || *q == '*' || *q == ' ' || *q == '\t' || *q == '>')) q++;
    while (le > q && (le[-1] == ' ' || le[-1] == ':' || le[-1] == '*' || le[-1] == '\r')) le--;
    for (; *w; w++) {
        size_t l = strlen(*w);
        if ((size_t)(le - q) >= l && strncasecmp(q, *w, l) == 0 &&
            (prefix ? (size_t)(le - q) == l || !isalnum((unsigned char)q[l]) : (size_t)(le - q) == l))
            return 1;
    }
    return 0;
}

/* Whether text written in German, French, Spanish, Portuguese, Italian or
 * Dutch reads as a system prompt without a "you are" opening: a line (a
 * heading too) among the first eight that names the model's task or role
 * ("Deine Aufgabe", "Ta mission", "Tu tarea", "Sua tarefa", "Il tuo
 * compito", "Je taak"), or a rules heading ("## Regeln", "Règles :",
 * "Reglas:") with a line or list item that tells it how to answer
 * ("Antworte", "Réponds", "Responde"); never text with a README's or a
 * changelog's marks (installation, licence, changelog in those languages). */
static int european_prompt(const char *p, const char *e) {
    static const char *const k_role[] = {
        "deine aufgabe", "ihre aufgabe", "deine rolle", "ta mission", "ta tâche",     "votre mission",
        "votre tâche",   "ton rôle",     "votre rôle",  "tu tarea",   "tu misión",    "tu rol ",
        "su tarea",      "sua tarefa",   "sua missão",  "seu papel",  "a sua tarefa", "il tuo compito",
        "il tuo ruolo",  "sei un",       "sei una",     "je taak",    "jouw taak",    "uw taak",
        "je bent ",      "jij bent ",    "u bent ",     NULL};
    static const char *const k_rules[] = {
        "regeln",    "règles",      "reglas",     "regras",      "regole",      "regels", "richtlinien",
        "consignes", "directrices", "diretrizes", "linee guida", "richtlijnen", NULL};
    static const char *const k_answer[] = {"antworte", "antworten sie", "beantworte", "réponds",
                                           "répondez", "responde",      "responda",   "rispondi",
                                           "antwoord", "beantwoord",    NULL};
    static const char *const k_docs[] = {"installation",
                                         "installieren",
                                         "lizenz",
                                         "licence",
                                         "license",
                                         "licencia",
                                         "licença",
                                         "licenza",
                                         "licentie",
                                         "instalación",
                                         "instalação",
                                         "installazione",
                                         "changelog",
                                         "änderungsprotokoll",
                                         "journal des modifications",
                                         "registro de cambios",
                                         "registro delle modifiche",
                                         "wijzigingslog",
                                         "pip install",
                                         "npm install",
                                         NULL};
    int role = 0, rules = 0, answer = 0, seen = 0;
    for (const char *l = p; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        const char *q = l;
        while (q < le && (*q == ' ' || *q == '\t')) q++;
        if (q < le) {
            if (seen++ < 8 && line_starts(q, le, k_role, 1)) role = 1;
            if (*q == '#' || le[-1] == ':' || (le - q > 2 && le[-1] == '*'))
                rules |= line_starts(q, le, k_rules, 0);
            answer |= line_starts(q, le, k_answer, 1);
        }
        l = nl ? nl + 1 : e;
    }
    if (!role && !(rules && answer)) return 0;
    static const char *const *const k_doc_list[] = {k_docs};
    static const int k_doc_weight[] = {1};
    return phrase_score(p, (size_t)(e - p), k_doc_list, k_doc_weight, 1) ==
           0; /* no README or changelog marks */
}

/* Whether one of the first six text lines opens as addressed to a model
 * ("You are ...", "Your task", "Act as", or the same in other languages). */
static int model_opening(const char *p, const char *e) {
    static const char *const k_open[] = {
        "you are", "you're", "you will", "your task", "your role", "your job", "act as", "i want you to",
        "as an ai", "the assistant is", "assistant is", "this is a conversation", "you have access",
        /* the same opening in other languages */
        "你是", "您是", "你现在是", "你将扮演", "你的任务", "你的角色", "あなたは", "당신은", "너는",
        "du bist ", "sie sind ein", "tu es ", "vous êtes ", "eres ", "tú eres", "actúa como", "você é ",
        "voce e ", "aja como", "ты — ", "ты - ", "Ты — ", "Ты - ", "Вы — ", "Ты являешься", "Вы являетесь",
        NULL};
    int seen_lines = 0;
    for (const char *l = p; l < e && seen_lines < 6;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        const char *q = l;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '>' || *q == '*' || *q == '-')) q++;
        if (q < le && *q != '#' && *q != '<' && *q != '`' && *q != '[' && *q != '|') {
            seen_lines++;
            for (const char *const *w = k_open; *w; w++)
                if (tolower((unsigned char)*q) == (unsigned char)**w && (size_t)(le - q) >= strlen(*w) &&
                    strncasecmp(q, *w, strlen(*w)) == 0)
                    return 1;
        }
        l = nl ? nl + 1 : e;
    }
    return 0;
}

/* Whether text reads as addressed to a model: an opening such as "You are
 * ...", or phrases instructions to a model use scoring min_score or more;
 * the same openings in Chinese, Japanese, Korean, German, French, Spanish,
 * Portuguese and Russian, and (in text with non-ASCII letters) the same
 * phrases in those languages; a task or role line, or a rules heading with
 * an answer line, in six European languages (european_prompt). */
static int addressed_to_model(const char *p, const char *e, int min_score) {
    if (model_opening(p, e)) return 1;
    static const char *const k_strong[] = {"you are",        "you must",      "your task",
                                           "the user",       "the user's",    "the assistant",
                                           "respond",        "your response", "you will be given",
                                           "system prompt",  "as an ai",      "you have access to",
                                           "do not mention", "in your reply", NULL};
    static const char *const k_weak[] = {"never",        "always",       "do not",     "don't",
                                         "you should",   "answer",       "reply",      "instructions",
                                         "follow these", "guidelines",   "be concise", "you can",
                                         "tools",        "ask the user", "output",     NULL};
    static const char *const k_docs[] = {"installation",
                                         "npm install",
                                         "pip install",
                                         "license",
                                         "getting started",
                                         "## usage",
                                         "contributing",
                                         "changelog",
                                         "```bash",
                                         "```sh",
                                         NULL};
    size_t m = (size_t)(e - p);
    static const char *const *const k_lists[] = {k_strong, k_weak, k_docs};
    static const int k_weights[] = {2, 1, -2};
    int score = phrase_score(p, m, k_lists, k_weights, 3);
    if (score >= min_score) return 1;
    if (european_prompt(p, e)) return 1;
    /* the same cues in other languages, looked for only in text written
     * mostly outside ASCII (one byte in eight at least: Chinese, Japanese,
     * Korean, Russian; not English with an emoji or a box drawing, and
     * seldom German, French, Spanish or Portuguese, which their openings
     * find); CJK phrases match anywhere, having no spaces */
    size_t wide = 0;
    const char *k = p;
    for (uint64_t v; k + 8 <= e; k += 8) { /* eight bytes at a time: mostly ASCII */
        memcpy(&v, k, 8);
        if (v & 0x8080808080808080u)
            for (int b = 0; b < 8; b++) wide += (unsigned char)k[b] >= 0x80;
    }
    for (; k < e; k++) wide += (unsigned char)*k >= 0x80;
    if (wide < 16 || wide * 8 < m) return 0;
    static const char *const k_strong_intl[] = {
        "用户",          "你必须",      "您必须",       "你的任务",
        "你的回答",      "ユーザー",    "あなたの役割", "してはいけません",
        "사용자",        "당신의 역할", "der benutzer", "den benutzer",
        "des benutzers", "du musst",    "sie müssen",   "l'utilisateur",
        "tu dois",       "vous devez",  "el usuario",   "debes ",
        "o usuário",     "você deve",   "пользовател",  "ты должен",
        "вы должны",     NULL};
    static const char *const k_weak_intl[] = {"请",
                                              "不要",
                                              "必须",
                                              "回答",
                                              "始终",
                                              "永远不要",
                                              "你应该",
                                              "你可以",
                                              "系统提示",
                                              "してください",
                                              "しないでください",
                                              "하세요",
                                              "하지 마",
                                              "답변",
                                              "antworte",
                                              "niemals",
                                              "réponds",
                                              "répondez",
                                              "ne jamais",
                                              "responde",
                                              "nunca",
                                              "responda",
                                              "отвечай",
                                              "никогда",
                                              NULL};
    static const char *const k_docs_intl[] = {
        "安装",         "许可证",     "快速开始",  "贡献",     "更新日志", "使用方法",
        "インストール", "ライセンス", "설치",      "라이선스", "lizenz",   "licence",
        "instalación",  "instalação", "установка", "лицензия", NULL};
    static const char *const *const k_lists_intl[] = {k_strong_intl, k_weak_intl, k_docs_intl};
    score += phrase_score(p, m, k_lists_intl, k_weights, 3);
    return score >= min_score;
}

/* Whether text is a log, not a prompt: of ten or more lines, a third or more
 * open with a date and time (`2025-08-08 07:06:59`, `[2025/08/08T07:06`,
 * after a terminal colour code), as in a recorded tool output or a server
 * log kept as a test fixture. */
static int log_text(const char *p, const char *e) {
    int lines = 0, stamped = 0;
    for (const char *l = p; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e, *q = l;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q < le) {
            lines++;
            if (*q == '\033' && q + 1 < le && q[1] == '[') { /* a colour code */
                q += 2;
                while (q < le && (isdigit((unsigned char)*q) || *q == ';')) q++;
                q += q < le && *q == 'm';
            }
            q += q < le && *q == '[';
            static const char k_shape[] =
                "dddd-dd-dd dd:dd"; /* d: a digit; '-': '-' or '/'; ' ': ' ' or 'T' */
            size_t i = 0;
            for (; k_shape[i] && q + i < le; i++) {
                char ch = q[i], want = k_shape[i];
                if (want == 'd'   ? !isdigit((unsigned char)ch)
                    : want == '-' ? ch != '-' && ch != '/'
                    : want == ' ' ? ch != ' ' && ch != 'T'
                                  : ch != want)
                    break;
            }
            stamped += !k_shape[i];
        }
        l = nl ? nl + 1 : e;
    }
    return lines >= 10 && stamped * 3 >= lines;
}

/* Whether text is an environment file, not a prompt: two or more
 * assignment lines (`API_KEY=abc`, `export HOST=x`: a name of letters,
 * digits, '_', '.' or '-', then '=' with no space before it) and no other
 * lines but blank ones, '#' comments and the later lines of a quoted value
 * (`KEY="-----BEGIN ...` up to its closing quote), as a .env dump kept among
 * prompts. */
static int env_file(const char *p, const char *e) {
    int assigns = 0;
    char open = 0; /* the quote of a value still open on an earlier line */
    for (const char *l = p; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e, *q = l, *v = NULL;
        l = nl ? nl + 1 : e;
        if (open) {
            open = memchr(q, open, (size_t)(le - q)) ? 0 : open;
            continue;
        }
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q == le || *q == '#') continue;
        if (le - q > 7 && !strncmp(q, "export ", 7)) q += 7;
        const char *k = q;
        while (k < le && (isalnum((unsigned char)*k) || *k == '_' || *k == '.' || *k == '-')) k++;
        if (k == q || k >= le || *k != '=' || !(isalpha((unsigned char)*q) || *q == '_')) return 0;
        v = k + 1;
        if (v < le && (*v == '"' || *v == '\'') && !memchr(v + 1, *v, (size_t)(le - v - 1))) open = *v;
        assigns++;
    }
    return assigns >= 2;
}

/* --- prompt text in data files (LINT_SEL_DATA) ---------------------------------- */

/* Whether a key names prompt text: system, user, content, prompt(s),
 * template(s), instruction(s), message, persona, backstory, goal, or a key
 * holding "prompt" or "instruction" or ending in "template" or "message"
 * (system_prompt, userPrompt, prompt_template, system_message); case, '_',
 * '-' and spaces aside. */
static int prompt_key(const char *k, size_t n, int strict) {
    char w[48];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '_' || k[i] == '-' || k[i] == ' ') continue;
        if (m + 1 >= sizeof w) return 0;
        w[m++] = (char)tolower((unsigned char)k[i]);
    }
    w[m] = 0;
    static const char *const k_keys[] = {
        "system",      "user",         "content", "prompt",  "prompts",   "template", "templates",
        "instruction", "instructions", "message", "persona", "backstory", "goal",     NULL};
    for (const char *const *x = k_keys; *x; x++)
        if (!strcmp(w, *x))
            return !strict ||
                   (strcmp(w, "user") && strcmp(w, "content") && strcmp(w, "message") && strcmp(w, "goal"));
    if (strstr(w, "prompt") || strstr(w, "instruction")) return 1;
    if (m > 8 && !strcmp(w + m - 8, "template")) return 1;
    return m > 7 && !strcmp(w + m - 7, "message") && (!strict || !strncmp(w, "system", 6));
}

/* The prompt text found so far: values of prompt keys, a blank line apart. */
typedef struct data_text {
    char *p;
    size_t n, cap;
    int opens;  /* a value opens as addressed to a model */
    int strict; /* LINT_SEL_DATA_PROSE: whole-prompt keys, long values only */
} data_text;

static void data_put(data_text *t, const char *s, size_t n) {
    if (n > t->cap - t->n) n = t->cap - t->n;
    memcpy(t->p + t->n, s, n);
    t->n += n;
}

/* End of the string opened by the quote at d[i] (one past the closing
 * quote, or n); with t, its text decoded (JSON/YAML escapes, YAML's ''). */
static size_t data_string(const char *d, size_t i, size_t n, data_text *t) {
    char q = d[i];
    for (i++; i < n; i++) {
        if (d[i] == q) {
            if (q == '\'' && i + 1 < n && d[i + 1] == '\'') {
                if (t) data_put(t, "'", 1);
                i++;
                continue;
            }
            return i + 1;
        }
        if (q == '"' && d[i] == '\\' && i + 1 < n) {
            char c = d[++i];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
            if (t) data_put(t, &c, 1);
        } else if (t) {
            data_put(t, d + i, 1);
        }
    }
    return n;
}

/* Whether the first text line of a prompt key's value opens with a task
 * given to a model ("Summarize this output focusing on:", "Given the
 * following ...", "Classify ..."): under a key that names a whole prompt, an
 * imperative addressed to whoever reads the value. */
static int task_opening(const char *p, const char *e) {
    static const char *const k_task[] = {"summarize ", "summarise ", "analyze ",      "analyse ", "generate ",
                                         "classify ",  "extract ",   "translate ",    "rewrite ", "evaluate ",
                                         "given the ", "given a ",   "based on the ", NULL};
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    for (const char *const *w = k_task; *w; w++)
        if ((size_t)(e - p) > strlen(*w) && !strncasecmp(p, *w, strlen(*w))) return 1;
    return 0;
}

/* Reads the value of a prompt key at d[v] (after ':' or '='; the key at
 * column col) into t when it is text: a YAML block scalar (the lines
 * indented past the key), a TOML multi-line string, a quoted string or a
 * plain scalar; kept when it spans lines or holds 24 bytes or more. Returns
 * where scanning goes on: past the value, or at v for a nested value. */
static size_t data_value(const char *d, size_t v, size_t n, size_t col, data_text *t) {
    while (v < n && (d[v] == ' ' || d[v] == '\t')) v++;
    if (v >= n || strchr("\r\n{[#&*!", d[v])) return v;
    size_t mark = t->n, end, a = v, b;
    if (d[v] == '|' || d[v] == '>') { /* a YAML block scalar */
        size_t k = v + 1;
        while (k < n && (d[k] == '-' || d[k] == '+' || isdigit((unsigned char)d[k]))) k++;
        while (k < n && (d[k] == ' ' || d[k] == '\t')) k++;
        if (k < n && d[k] != '\n' && d[k] != '\r' && d[k] != '#') return v;
        while (k < n && d[k] != '\n') k++;
        a = b = end = k < n ? k + 1 : n;
        for (size_t l = a; l < n;) {
            const char *nl = memchr(d + l, '\n', n - l);
            size_t le = nl ? (size_t)(nl - d) : n, q = l;
            while (q < le && (d[q] == ' ' || d[q] == '\t' || d[q] == '\r')) q++;
            if (q < le && q - l <= col) break; /* a line at the key's indent or less */
            l = le < n ? le + 1 : n;
            if (q < le) b = end = l;
        }
        data_put(t, d + a, b - a);
    } else if (v + 2 < n && (d[v] == '"' || d[v] == '\'') && d[v + 1] == d[v] && d[v + 2] == d[v]) {
        char tq[3] = {d[v], d[v], d[v]}; /* a TOML multi-line string */
        const char *c = memmem(d + v + 3, n - v - 3, tq, 3);
        a = v + 3, b = c ? (size_t)(c - d) : n, end = c ? b + 3 : n;
        data_put(t, d + a, b - a);
    } else if (d[v] == '"' || d[v] == '\'') {
        end = data_string(d, v, n, t);
    } else { /* a plain scalar: the rest of the line, less a comment */
        end = v;
        while (end < n && d[end] != '\n' && !(d[end] == '#' && d[end - 1] == ' ')) end++;
        b = end;
        while (b > v && (d[b - 1] == ' ' || d[b - 1] == '\r')) b--;
        data_put(t, d + v, b - v);
    }
    size_t got = t->n - mark;
    int line = !memchr(t->p + mark, '\n', got);
    if (line && (got < 24 || (t->strict && got < 80 && !model_opening(t->p + mark, t->p + t->n)))) {
        t->n = mark;
        return end;
    }
    t->opens |= model_opening(t->p + mark, t->p + t->n) ||
                (t->strict && task_opening(t->p + mark, t->p + t->n));
    data_put(t, "\n\n", 2);
    return end;
}

/* Whether a YAML, JSON or TOML file's prompt text (data_value under the
 * keys prompt_key names) reads as addressed to a model: a value opening as
 * one, or all of them together scoring 3 or more (addressed_to_model: the
 * key says half of it). */
static int data_prompt(const char *d, size_t n, int strict) {
    char store[16384 + 2];
    data_text t = {store, 0, sizeof store, 0, strict};
    for (size_t i = 0; i < n && !t.opens;) {
        /* a line: its indent, list dashes, then a bare key or tokens */
        size_t ls = i;
        while (i < n && (d[i] == ' ' || d[i] == '\t')) i++;
        while (i + 1 < n && d[i] == '-' && d[i + 1] == ' ') {
            i += 2;
            while (i < n && d[i] == ' ') i++;
        }
        size_t k = i;
        while (k < n && (isalnum((unsigned char)d[k]) || d[k] == '_' || d[k] == '-' || d[k] == '.')) k++;
        size_t s = k;
        while (s < n && (d[s] == ' ' || d[s] == '\t')) s++;
        if (k > i && s < n && ((d[s] == ':' && (s + 1 == n || strchr(" \t\r\n", d[s + 1]))) || d[s] == '=')) {
            i = prompt_key(d + i, k - i, t.strict) ? data_value(d, s + 1, n, i - ls, &t) : s + 1;
            if (i < n && d[i] == '\n') i++;
            continue;
        }
        while (i < n && d[i] != '\n') {
            if (d[i] == '"' || d[i] == '\'') {
                size_t e = data_string(d, i, n, NULL), c = e;
                while (c < n && (d[c] == ' ' || d[c] == '\t')) c++;
                if (c < n && d[c] == ':' && e - i > 2 && prompt_key(d + i + 1, e - i - 2, t.strict)) {
                    size_t col = i;
                    while (col > ls && d[col - 1] != '\n') col--;
                    e = data_value(d, c + 1, n, i - col, &t);
                }
                i = e;
            } else if (d[i] == '#' && (i == ls || d[i - 1] == ' ' || d[i - 1] == '\t')) {
                while (i < n && d[i] != '\n') i++;
            } else {
                i++;
            }
        }
        i += i < n;
    }
    return t.opens || addressed_to_model(t.p, t.p + t.n, strict ? 4 : 3);
}

/* Whether a YAML file is a CrewAI tasks file: entries (indented keys) with
 * a description: and an expected_output:, each a task's prompt. */
static int crewai_tasks(const char *d, size_t n) {
    int desc = 0, expected = 0;
    for (size_t i = 0; i < n;) {
        size_t q = i;
        while (q < n && d[q] == ' ') q++;
        if (q > i && n - q > 12 && !memcmp(d + q, "description:", 12)) desc = 1;
        if (q > i && n - q > 16 && !memcmp(d + q, "expected_output:", 16)) expected = 1;
        const char *nl = memchr(d + i, '\n', n - i);
        i = nl ? (size_t)(nl - d) + 1 : n;
    }
    return desc && expected;
}

/* Whether a YAML file is deployment or CI config by its top-level keys: a
 * Kubernetes manifest (apiVersion: and kind:), a CI pipeline (jobs: or
 * stages:, steps:), a compose file (services:). */
static int deploy_config(const char *d, size_t n) {
    static const char *const k_top[] = {
        "apiVersion:", "kind:", "jobs:", "stages:", "steps:", "services:", NULL};
    int seen[6] = {0};
    for (size_t i = 0; i < n;) {
        for (int k = 0; k_top[k]; k++)
            if (n - i >= strlen(k_top[k]) && !memcmp(d + i, k_top[k], strlen(k_top[k]))) seen[k] = 1;
        const char *nl = memchr(d + i, '\n', n - i);
        i = nl ? (size_t)(nl - d) + 1 : n;
    }
    return (seen[0] && seen[1]) || seen[2] || seen[3] || seen[4] || seen[5];
}

int lint_reads_like_prompt(const char *data, size_t len, int how) {
    size_t n = len < 16384 ? len : 16384;
    const char *p = data, *e = data + n;
    if (how == LINT_SEL_DATA) return data_prompt(p, n, 0);
    if (how == LINT_SEL_DATA_PROSE)
        return !deploy_config(p, n) && (crewai_tasks(p, n) || data_prompt(p, n, 1));
    if (how == LINT_SEL_TEXT) return !env_file(p, e);
    if (how != LINT_SEL_TEMPLATE && env_file(p, e)) return 0;
    if (how != LINT_SEL_TEMPLATE && command_file(p, n, how != LINT_SEL_DOC)) return 1;
    /* past a YAML frontmatter */
    if (n > 4 && memcmp(p, "---", 3) == 0) {
        const char *q = memmem(p + 3, n - 3, "\n---", 4);
        if (q) p = q + 4;
    }
    if (how == LINT_SEL_DOC) /* written about the project: only an opening to a model tells */
        return !log_text(p, e) && (model_opening(p, e) || european_prompt(p, e));
    if (how == LINT_SEL_TEMPLATE) {
        /* prose, not an HTML page, config or code: markup, lines ending in
         * ';', '{', '}' or '\\' and config lines under a third of the lines; or,
         * in a template with sentences outside tags and comments (three, or
         * one for every four lines of text), the same with Jinja/Mustache tag
         * lines and XML sections read as prose lines; or a chat template */
        int lines = 0, bare = 0, markup = 0, strict = 0, words = 0, go = 0, curly = 0, sections = 0,
            sentences = 0;
        for (const char *l = p; l < e;) {
            const char *nl = memchr(l, '\n', (size_t)(e - l));
            const char *le = nl ? nl : e;
            const char *q = l;
            while (q < le && (*q == ' ' || *q == '\t')) q++;
            const char *te = le;
            while (te > q && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\r')) te--;
            int conf = 0;
            if (q < te) {
                int tag = tag_line(q, te);
                lines++;
                if (*q == '<' && q + 1 < te && (isalpha((unsigned char)q[1]) || q[1] == '!' || q[1] == '/')) {
                    strict++;
                    if (prompt_section(q, te))
                        sections++;
                    else
                        markup++;
                }
                go |= tag == TL_GO;
                curly += tag == TL_CURLY;
                bare += tag == TL_CURLY || tag == TL_BARE;
                int ends = te - q > 1 && (te[-1] == ';' || te[-1] == '{' || te[-1] == '}' || te[-1] == '\\');
                conf = config_line(q, te);
                strict += ends || conf;
                markup += (ends && tag != TL_TEXT && tag != TL_BARE && tag != TL_CURLY) || (!ends && conf);
            }
            int in = 0, lw = 0, out = 0;
            char close = 0, last = 0; /* inside a tag until "close}"; the last character outside tags */
            for (const char *k = q; k < le; k++) {
                int a = isalpha((unsigned char)*k);
                if (a && !in) {
                    lw++;
                    out += !close;
                }
                in = a;
                if (!close && *k == '{' && k + 1 < le && (k[1] == '{' || k[1] == '%' || k[1] == '#'))
                    close = k[1] == '{' ? '}' : k[1], k++;
                else if (close && *k == close && k + 1 < le && k[1] == '}')
                    close = 0, k++;
                else if (!close && *k != ' ' && *k != '\t' && *k != '\r')
                    last = *k;
            }
            words += lw;
            /* a sentence: five words or more outside tags, ending in a full
             * stop, a colon or a question mark, or eight words from a capital
             * letter (after a bullet or number); not a comment, markup or a
             * config line */
            if (out >= 5 && !conf && !strchr("#/;<{[|\"", *q)) {
                const char *f = q;
                while (f < te &&
                       (*f == '-' || *f == '*' || *f == ' ' || *f == '.' || isdigit((unsigned char)*f)))
                    f++;
                sentences += (out >= 8 && f < te && isupper((unsigned char)*f)) ||
                             (last && strchr(".:?!", last));
            }
            l = nl ? nl + 1 : e;
        }
        if (n >= 9 && (has_phrase(p, (size_t)(e - p), "<!DOCTYPE") || has_phrase(p, 6, "<html"))) return 0;
        if (memmem(p, (size_t)(e - p), "<?xml", 5)) return 0;  /* an XML document */
        if (e - p > 2 && p[0] == '#' && p[1] == '!') return 0; /* a script */
        if (words < 10) return 0;
        if (strict * 3 < lines) return 1;
        /* a chat template: the conversation's messages and the generation cue */
        static const char *const k_chat[] = {"add_generation_prompt", "in messages",  "in loop_messages",
                                             "message['role']",       "message.role", NULL};
        if (memmem(p, (size_t)(e - p), "message", 7) || memmem(p, (size_t)(e - p), "_generation_prompt", 18))
            for (const char *const *w = k_chat; *w; w++)
                if (memmem(p, (size_t)(e - p), *w, strlen(*w))) return 1;
        if (go) markup += curly; /* a Go template: its bare `{{ x }}` lines are code too */
        if (sections && sentences < 3) markup += sections; /* XML data, not a prompt in sections */
        return markup * 3 < lines && sentences >= 1 && (sentences >= 3 || sentences * 4 >= lines - bare);
    }
    if (log_text(p, e)) return 0;
    return addressed_to_model(p, e, 10);
}
