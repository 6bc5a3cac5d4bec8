/* cli/cmd_agent.c: the agent's command line: `cachet` (interactive),
 * `cachet -p TASK [--json]`, `cachet --resume [ID]` and `cachet prompt
 * [--json]`. Parses options and prints; the loop is agent/loop.c, the
 * terminal chat repl.c, stats and sessions cmd_stats.c. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/path.h"
#include "../util/text.h"
#include "cli.h"
#include "repl.h"
#include "status.h"
#include "../agent/session.h"
#include "../agent/stats.h"

static const char agent_usage[] =
    "usage: cachet [options]                 interactive chat in the workspace\n"
    "       cachet -p TASK [--json] [options] one task, then exit\n"
    "       ... | cachet [--json] [options]   one turn per line of stdin (a scripted session)\n"
    "       cachet --resume [ID] [options]    continue a session (the latest without ID)\n"
    "       cachet prompt [--json] [options]  the assembled prompt, tiers marked, token counts\n"
    "       cachet sessions [--json]          list the saved sessions\n"
    "       cachet stats [ID | --all] [--json] cache hit rate, TTFT and cost per session\n"
    "\n"
    "options:\n"
    "  --workspace DIR       the workspace (default: the current directory)\n"
    "  --data-dir DIR        where prompts/ and skills/ are (default: $CACHET_DATA, the source tree\n"
    "                        the binary was built in, <prefix>/share/cachet next to the binary, else\n"
    "                        the compiled-in install prefix)\n"
    "  --json                -p: print {\"reply\", \"session\", \"turns\", \"prompt_tokens\", \"cached_tokens\",\n"
    "                        \"stop_reason\", \"tool_calls\", ...} (valid UTF-8: see README)\n"
    "  --quiet               no progress line, [tool] lines or [cache] summary on stderr\n"
    "  --yes                 run writes and shell commands without asking\n"
    "  --max-tokens N        tokens per reply (default 256)\n"
    "  --max-rounds N        tool rounds per turn (default 8)\n"
    "  --temp T              temperature (default 0: greedy)\n"
    "  --seed S              sampling seed\n"
    "  --replay FILE         replies from a JSON array of recorded outputs instead of the model\n"
    "  --no-session          do not write a session file\n"
    "  --now EPOCH           the time tiers 2 and 3 show (tests)\n"
    "\n"
    "remote backend (any OpenAI-compatible server: cachet serve, vLLM, SGLang, llama.cpp, OpenAI):\n"
    "  --backend URL         POST URL/v1/chat/completions (URL with or without /v1) instead of the\n"
    "                        embedded engine; no model file is opened\n"
    "  --backend-model NAME  the model id to send (default: the first of GET URL/v1/models)\n"
    "  --api-key-env VAR     send 'Authorization: Bearer $VAR'\n"
    "  --connect-timeout S   seconds to connect (default 10)\n"
    "  --timeout S           seconds for one request, first byte to last (default 600)\n"
    "  --retries N           retries on 429, 5xx and connection errors (default 4; backoff with\n"
    "                        jitter, Retry-After honoured)\n"
    "  --no-stream           ask for one JSON answer instead of server-sent events\n"
    "\n"
    "engine options (the embedded engine):\n";

static void usage(FILE *f) {
    fputs(agent_usage, f);
    cli_engine_usage(f, CLI_ENGINE_ALL, NULL);
}

enum {
    O_WS = 300,
    O_DATA,
    O_JSON,
    O_YES,
    O_MAXTOK,
    O_ROUNDS,
    O_TEMP,
    O_SEED,
    O_REPLAY,
    O_NOSESS,
    O_NOW,
    O_HELP,
    O_RESUME,
    O_BACKEND,
    O_BMODEL,
    O_KEYENV,
    O_CONNTO,
    O_TIMEOUT,
    O_RETRIES,
    O_NOSTREAM,
    O_QUIET
};

/* One of the agent's own options with its argument; returns 0 or an exit status. */
static int parse_one(cli_agent *c, int o, const char *a) {
    long l;
    double d;
    switch (o) {
    case 'p': c->print = a; return 0;
    case O_WS: c->ao.workspace = a; return 0;
    case O_DATA: c->data_dir_opt = a; return 0;
    case O_JSON: c->json = 1; return 0;
    case O_QUIET: c->quiet = 1; return 0;
    case O_YES: c->ao.yes = 1; return 0;
    case O_REPLAY: c->ao.replay_path = a; return 0;
    case O_NOSESS: c->ao.no_session = 1; return 0;
    case O_BACKEND: c->ao.http.url = a; return 0;
    case O_BMODEL: c->ao.http.model = a; return 0;
    case O_KEYENV: c->ao.http.api_key_env = a; return 0;
    case O_NOSTREAM: c->ao.http.no_stream = 1; return 0;
    case O_CONNTO:
        return cli_parse_float("--connect-timeout", a, 0.001, 86400, &d)
                   ? CLI_EXIT_USAGE
                   : (c->ao.http.connect_timeout_s = d, 0);
    case O_TIMEOUT:
        return cli_parse_float("--timeout", a, 0.001, 86400 * 7, &d) ? CLI_EXIT_USAGE
                                                                     : (c->ao.http.timeout_s = d, 0);
    case O_RETRIES:
        return cli_parse_int("--retries", a, 0, 20, &l) ? CLI_EXIT_USAGE : (c->ao.http.retries = (int)l, 0);
    case O_MAXTOK:
        return cli_parse_int("--max-tokens", a, 1, 1 << 20, &l) ? CLI_EXIT_USAGE
                                                                : (c->ao.max_tokens = (int)l, 0);
    case O_ROUNDS:
        return cli_parse_int("--max-rounds", a, 1, 100, &l) ? CLI_EXIT_USAGE : (c->ao.max_rounds = (int)l, 0);
    case O_SEED:
        return cli_parse_int("--seed", a, 0, LONG_MAX, &l) ? CLI_EXIT_USAGE
                                                           : (c->ao.sp.seed = (uint64_t)l, 0);
    case O_NOW: return cli_parse_int("--now", a, 0, LONG_MAX, &l) ? CLI_EXIT_USAGE : (c->now = l, 0);
    case O_TEMP:
        return cli_parse_float("--temp", a, 0, 100, &d) ? CLI_EXIT_USAGE : (c->ao.sp.temp = (float)d, 0);
    default: return CLI_EXIT_USAGE;
    }
}

/* Parses the shared options; positional arguments are left in argv[optind..].
 * Returns CLI_GO_ON, else an exit status. */
static int parse_cli(cli_agent *c, int argc, char **argv, int allow_print) {
    static const struct option own[] = {{"workspace", required_argument, 0, O_WS},
                                        {"data-dir", required_argument, 0, O_DATA},
                                        {"json", no_argument, 0, O_JSON},
                                        {"yes", no_argument, 0, O_YES},
                                        {"max-tokens", required_argument, 0, O_MAXTOK},
                                        {"max-rounds", required_argument, 0, O_ROUNDS},
                                        {"temp", required_argument, 0, O_TEMP},
                                        {"seed", required_argument, 0, O_SEED},
                                        {"replay", required_argument, 0, O_REPLAY},
                                        {"no-session", no_argument, 0, O_NOSESS},
                                        {"now", required_argument, 0, O_NOW},
                                        {"help", no_argument, 0, O_HELP},
                                        {"resume", optional_argument, 0, O_RESUME},
                                        {"print", required_argument, 0, 'p'},
                                        {"backend", required_argument, 0, O_BACKEND},
                                        {"backend-model", required_argument, 0, O_BMODEL},
                                        {"api-key-env", required_argument, 0, O_KEYENV},
                                        {"connect-timeout", required_argument, 0, O_CONNTO},
                                        {"timeout", required_argument, 0, O_TIMEOUT},
                                        {"retries", required_argument, 0, O_RETRIES},
                                        {"no-stream", no_argument, 0, O_NOSTREAM},
                                        {"quiet", no_argument, 0, O_QUIET},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    int o;
    c->ao.sp = eng_sample_defaults();
    c->ao.sp.temp = 0;
    c->ao.sp.repeat_penalty = 1.1f;
    c->ao.sp.repeat_last_n = 64;
    c->ao.http.retries = -1;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, allow_print ? "+p:h" : "+h", opts, NULL)) != -1) {
        int k = cli_engine_parse(&c->e, o, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        if (o == 'h' || o == O_HELP) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (o == O_RESUME) {
            c->ao.resume_set = 1;
            /* --resume ID or --resume (the latest); a following non-option word is the id */
            if (optarg)
                c->ao.resume = optarg;
            else if (optind < argc && argv[optind][0] != '-')
                c->ao.resume = argv[optind++];
            else
                c->ao.resume = "";
            continue;
        }
        if (o == '?' || o == ':') {
            fprintf(stderr, "cachet: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        if ((k = parse_one(c, o, optarg))) return k;
    }
    /* a file is not a workspace: refused before anything runs in it */
    struct stat wst;
    if (c->ao.workspace) {
        int bad = stat(c->ao.workspace, &wst) != 0 ? errno : S_ISDIR(wst.st_mode) ? 0 : ENOTDIR;
        if (bad) {
            fprintf(stderr, "cachet: option '--workspace': '%s' %s\n", c->ao.workspace,
                    bad == ENOENT    ? "does not exist"
                    : bad == ENOTDIR ? "is not a directory"
                                     : strerror(bad));
            return CLI_EXIT_USAGE;
        }
    }
    /* a remote backend opens no model file */
    int st = cli_engine_finish(&c->e, !c->ao.http.url || !allow_print);
    if (st != CLI_GO_ON) return st;
    c->ao.mp = c->e.mp;
    c->ao.spec = c->e.spec;
    c->ao.n_ctx = c->e.n_ctx;
    c->ao.model_path = c->e.path;
    if (cli_data_dir(c->data, sizeof c->data, c->data_dir_opt)) return CLI_EXIT_FAIL;
    c->ao.data_dir = c->data;
    return CLI_GO_ON;
}

/* --- notes and streaming -------------------------------------------------------- */

/* -p and piped turns: the reply on stdout, everything else on stderr, each
 * note on a line of its own (stdout gets the newline a cut line needs). */
typedef struct batch_io {
    int mid_line; /* stdout's last byte was not a newline */
    int quiet;
    cli_progress progress;
} batch_io;

static void end_line(batch_io *io) {
    cli_progress_clear(&io->progress);
    if (io->mid_line) {
        fputc('\n', stdout);
        io->mid_line = 0;
    }
    fflush(stdout);
}

/* Notes go to stderr, which may be a terminal: what they quote (a tool's
 * arguments, a server's message) has its control characters escaped. */
static void on_note(void *user, const char *kind, const char *text) {
    batch_io *io = user;
    end_line(io); /* the reply so far ends its line, shown or not (the next round's text starts anew) */
    if (io->quiet && strcmp(kind, "tool") == 0) return;
    util_buf b;
    util_buf_init(&b);
    util_text_escape(&b, text, strlen(text), UTIL_ESC_KEEP_LINES);
    fprintf(stderr, "[%s] %s\n", kind, b.data ? b.data : "");
    util_buf_release(&b);
}

static int on_text_stdout(void *user, const char *text, size_t len) {
    batch_io *io = user;
    cli_progress_clear(&io->progress);
    if (!len) return 0;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    io->mid_line = text[len - 1] != '\n';
    return 0;
}

static void on_progress(void *user, int done, int total, double elapsed_ms) {
    batch_io *io = user;
    cli_progress_update(&io->progress, done, total, elapsed_ms);
}

/* --- cachet -p, and turns read from a pipe ---------------------------------------------- */

static void print_json_turn(agent *a, const agent_turn_result *r) {
    long p, k;
    agent_totals(a, &p, &k);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reply", r->reply); /* valid UTF-8 (agent_turn_result) */
    cJSON_AddStringToObject(o, "session", agent_session_id(a));
    cJSON_AddNumberToObject(o, "turns", agent_turns(a));
    cJSON_AddNumberToObject(o, "rounds", r->rounds);
    cJSON_AddNumberToObject(o, "prompt_tokens", (double)p);
    cJSON_AddNumberToObject(o, "cached_tokens", (double)k);
    cJSON_AddNumberToObject(o, "turn_prompt_tokens", (double)r->prompt_tokens);
    cJSON_AddNumberToObject(o, "turn_cached_tokens", (double)r->cached_tokens);
    cJSON_AddNumberToObject(o, "turn_generated_tokens", (double)r->generated_tokens);
    cJSON_AddNumberToObject(o, "ttft_ms", r->ttft_ms);
    cJSON_AddNumberToObject(o, "tool_calls", r->tool_calls);
    cJSON_AddStringToObject(o, "stop_reason", eng_stop_reason_name(r->stop_reason));
    cJSON_AddBoolToObject(o, "truncated",
                          r->stop_reason == ENG_STOP_MAX_TOKENS || r->stop_reason == ENG_STOP_CONTEXT_FULL);
    cli_json_puts(o);
    fflush(stdout);
    cJSON_Delete(o);
}

/* -p TASK runs one turn; without -p and without a terminal each line of
 * stdin is one turn (a scripted session). */
static int run_batch(cli_agent *c) {
    util_err err;
    util_err_clear(&err);
    batch_io io = {.mid_line = 0, .quiet = c->quiet};
    cli_progress_init(&io.progress, !c->quiet);
    c->ao.on_note = on_note;
    c->ao.on_progress = on_progress;
    c->ao.user = &io;
    if (!c->json) c->ao.on_text = on_text_stdout;
    agent *a = NULL;
    if (agent_open(&a, &c->ao, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    int rc = 0, turns = 0;
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        const char *task = c->print;
        if (!task) {
            ssize_t n = getline(&line, &cap, stdin);
            if (n < 0) break;
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
            if (n == 0) continue;
            task = line;
        }
        agent_turn_result r;
        turns++;
        int t = agent_turn(a, task, &r, &err);
        end_line(&io); /* the reply's last line ends, whatever came last */
        if (t) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            rc = CLI_EXIT_FAIL;
        } else {
            if (c->json) print_json_turn(a, &r);
            if (!c->quiet && !c->json) {
                char sum[512];
                cli_turn_summary(sum, sizeof sum, &r);
                fprintf(stderr, "%s\n", sum);
            }
        }
        agent_turn_result_release(&r);
        if (rc || c->print) break;
    }
    /* `cachet < /dev/null`, or a copied chat command run where stdin is no terminal */
    if (!turns && !c->quiet)
        fprintf(stderr, "cachet: stdin is not a terminal and held no task, so nothing was asked (one task: "
                        "cachet -p TASK; the chat needs a terminal)\n");
    free(line);
    agent_free(a);
    return rc;
}

int cli_cmd_agent(int argc, char **argv) {
    cli_agent c;
    memset(&c, 0, sizeof c);
    int st = parse_cli(&c, argc, argv, 1);
    if (st != CLI_GO_ON) return st;
    if (optind < argc) {
        fprintf(stderr, "cachet: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (c.print || !isatty(STDIN_FILENO)) return run_batch(&c);
    return cli_repl(&c);
}

/* --- cachet prompt ---------------------------------------------------------------------- */

static long count_tokens(const eng_tokenizer *t, const char *s) {
    int32_t *ids = NULL;
    size_t n = 0;
    util_err e;
    if (eng_tokenize(t, s, strlen(s), 0, 1, &ids, &n, &e)) return -1;
    free(ids);
    return (long)n;
}

int cli_cmd_prompt(int argc, char **argv) {
    cli_agent c;
    memset(&c, 0, sizeof c);
    int st = parse_cli(&c, argc, argv, 0);
    if (st != CLI_GO_ON) return st;
    util_err err;
    util_err_clear(&err);
    eng_gguf *g = NULL;
    eng_tokenizer *tok = NULL;
    eng_chat *chat = NULL;
    if (eng_gguf_open(&g, c.e.path, &err) || eng_tokenizer_new(&tok, g, &err) ||
        eng_chat_new_named(&chat, g, c.e.mp.chat_template, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        eng_tokenizer_free(tok);
        eng_gguf_free(g);
        return CLI_EXIT_FAIL;
    }
    char ws[PATH_MAX];
    if (!realpath(c.ao.workspace ? c.ao.workspace : ".", ws)) {
        fprintf(stderr, "cachet: workspace '%s' does not exist\n", c.ao.workspace);
        return CLI_EXIT_FAIL;
    }
    char model_name[256];
    util_model_id(model_name, sizeof model_name, c.e.path);
    agent_prompt p;
    eng_chat_format family = eng_chat_get_format(chat);
    agent_prompt_opts po = {ws, c.data, agent_format_of(family), NULL};
    const char *format_name = eng_chat_format_name(family);
    util_buf t2, t3, sys;
    util_buf_init(&t2);
    util_buf_init(&t3);
    util_buf_init(&sys);
    long long now = c.now ? c.now : (long long)time(NULL);
    int rc = agent_prompt_build(&p, &po, &err);
    if (!rc) rc = agent_tier2(&t2, c.data, ws, model_name, now, &err);
    if (!rc) rc = agent_tier3(&t3, c.data, ws, now, &err);
    if (!rc) {
        /* the system prompt as the agent sends it: before an (empty) first
         * user turn, as every family renders it (Gemma and Mistral fold it
         * into that turn, Mistral v0 refuses a system turn and Phi-3 mini
         * drops it: agent_format_render opens the user turn with it) */
        eng_chat_msg m[2] = {{"system", p.system}, {"user", ""}};
        eng_tok_span *plain = NULL;
        size_t np = 0;
        rc = agent_format_render(agent_format_of(family), chat, m, 2, &sys, &plain, &np, &err);
        free(plain);
    }
    if (rc) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        goto done;
    }
    util_buf_append(&t2, "", 0);
    util_buf_append(&t3, "", 0);
    util_buf_append(&sys, "", 0);
    const char *texts[4] = {p.tier0, p.tier1, t2.data, t3.data};
    static const char *const what[4] = {
        "built-in instructions, tools (sorted), AGENTS.md, SOUL.md, IDENTITY.md, TOOLS.md, skills index",
        "USER.md, MEMORY.md", "session context: one message after the system prompt, once per session",
        "turn context: appended to the newest user message"};
    if (c.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON *arr = cJSON_AddArrayToObject(o, "tiers");
        for (int i = 0; i < 4; i++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddNumberToObject(t, "tier", i);
            cJSON_AddStringToObject(t, "what", what[i]);
            cJSON_AddStringToObject(t, "text", texts[i]);
            cJSON_AddNumberToObject(t, "bytes", (double)strlen(texts[i]));
            cJSON_AddNumberToObject(t, "tokens", (double)count_tokens(tok, texts[i]));
            cJSON_AddItemToArray(arr, t);
        }
        cJSON_AddStringToObject(o, "system", p.system);
        cJSON_AddNumberToObject(o, "system_message_tokens", (double)count_tokens(tok, sys.data));
        cJSON_AddStringToObject(o, "chat_format", format_name);
        cJSON *sk = cJSON_AddArrayToObject(o, "skills");
        for (size_t i = 0; i < p.skills.n; i++)
            cJSON_AddItemToArray(sk, cJSON_CreateString(p.skills.v[i].name));
        cJSON *w = cJSON_AddArrayToObject(o, "warnings");
        for (size_t i = 0; i < p.warnings.n; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(p.warnings.v[i]));
        cli_json_puts(o);
        cJSON_Delete(o);
    } else {
        for (size_t i = 0; i < p.warnings.n; i++) fprintf(stderr, "cachet: warning: %s\n", p.warnings.v[i]);
        for (int i = 0; i < 4; i++) {
            printf("===== tier %d: %s (%ld tokens) =====\n%s\n", i, what[i], count_tokens(tok, texts[i]),
                   texts[i][0] == '\n' ? texts[i] + strspn(texts[i], "\n") : texts[i]);
        }
        printf(
            "===== end: the system prompt (tiers 0-1) opens the conversation with %ld tokens in the %s template =====\n",
            count_tokens(tok, sys.data), format_name);
    }
    agent_prompt_release(&p);
done:
    util_buf_release(&t2);
    util_buf_release(&t3);
    util_buf_release(&sys);
    eng_chat_free(chat);
    eng_tokenizer_free(tok);
    eng_gguf_free(g);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
