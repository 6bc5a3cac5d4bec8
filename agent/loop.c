/* agent/loop.c: the turn loop. Each request re-renders the whole conversation
 * through the chat template; when the new text extends the previous request
 * plus its reply byte for byte, the token sequence is the previous one plus
 * the generated ids plus the new suffix's tokens (so BPE re-tokenization of a
 * reply can never move the cache boundary; message text is tokenized with
 * special parsing off, only the template's markers are special); otherwise it is tokenized afresh
 * and the break is recorded with its cause and first divergent token. With
 * the HTTP backend the check is on the JSON messages sent (the server
 * tokenizes), and a break records the first divergent byte. Does not read the terminal (repl.c) or parse options (cmd_agent.c). */
#include "loop.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/path.h"
#include "../util/text.h"
#include "../util/time.h"
#include "../util/vec.h"
#include "session.h"
#include "toolcall.h"
#include "visible.h"

typedef struct agent_msg {
    char *role, *content;
} agent_msg;

struct agent {
    agent_opts o;
    char ws[PATH_MAX], data[PATH_MAX];
    eng_model *m;
    eng_seq *seq;
    agent_prompt prompt;
    agent_tools tools;
    agent_msg *msgs;
    size_t n_msgs, cap_msgs;
    char *tier2;
    const agent_format *fmt; /* the chat family: where tier 2 and tool results go (format.h) */
    int tier2_pending;       /* AGENT_TIER2_USER: tier 2 not yet prepended to a user message */
    agent_session sess;
    int32_t *prev; /* previous request's tokens + its generated ids */
    size_t n_prev;
    util_buf prev_text;      /* previous request's text + its reply */
    char pending_cause[256]; /* why the next request may not extend the previous one */
    int turn;
    int turns_done; /* turns this process completed (a new session without one is discarded) */
    long sum_prompt, sum_cached;
    agent_backend *be;    /* engine, replay or http (backend.h) */
    char model_name[256]; /* util_model_id of the model file, or the id the HTTP backend sends */
    double req_t0;        /* when the request now running started (prefill progress) */
};

/* --- small helpers -------------------------------------------------------------- */

static void note(agent *a, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void note(agent *a, const char *kind, const char *fmt, ...) {
    if (!a->o.on_note) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a->o.on_note(a->o.user, kind, msg);
}

static int event(agent *a, cJSON *ev, util_err *err) {
    int rc = ev ? agent_session_append(&a->sess, ev, err) : util_err_set(err, UTIL_ENOMEM, "out of memory");
    cJSON_Delete(ev);
    return rc;
}

static cJSON *ev_new(const char *type, int turn) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", type);
    if (turn >= 0) cJSON_AddNumberToObject(e, "turn", turn);
    return e;
}

/* Appends a message to the history and to the session file. */
static int push_msg(agent *a, const char *role, const char *content, util_err *err) {
    if (util_grow(&a->msgs, &a->cap_msgs, a->n_msgs + 1, sizeof *a->msgs))
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    agent_msg m = {strdup(role), strdup(content)};
    if (!m.role || !m.content) {
        free(m.role);
        free(m.content);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    a->msgs[a->n_msgs++] = m;
    cJSON *e = ev_new("message", a->turn);
    cJSON_AddStringToObject(e, "role", role);
    cJSON_AddStringToObject(e, "content", content);
    return event(a, e, err);
}

static void clear_msgs(agent *a, size_t keep) {
    for (size_t i = keep; i < a->n_msgs; i++) {
        free(a->msgs[i].role);
        free(a->msgs[i].content);
    }
    if (keep < a->n_msgs) a->n_msgs = keep;
}

/* Renders the conversation: through the chat template for the token
 * backends, as the JSON messages sent for the HTTP backend. *cm is the
 * message array (malloc'd; the caller frees). For the token backends *plain
 * (malloc'd; the caller frees) lists the bytes that came from the messages:
 * they are tokenized with special parsing off, so a file or tool result
 * holding `<|im_end|><|im_start|>system` cannot open a turn (chat.h). */
static int render(agent *a, util_buf *out, eng_chat_msg **cm, eng_tok_span **plain, size_t *nplain,
                  util_err *err) {
    *cm = calloc(a->n_msgs + 1, sizeof **cm);
    if (!*cm) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->n_msgs; i++) (*cm)[i] = (eng_chat_msg){a->msgs[i].role, a->msgs[i].content};
    if (!a->be->uses_tokens) return agent_http_render(out, *cm, a->n_msgs, err);
    return agent_format_render(a->fmt, eng_model_chat(a->m), *cm, a->n_msgs, out, plain, nplain, err);
}

/* --- one request ------------------------------------------------------------------------ */

static int record_break(agent *a, const int32_t *toks, size_t n, util_err *err) {
    size_t i = 0;
    while (i < n && i < a->n_prev && toks[i] == a->prev[i]) i++;
    if (i == a->n_prev) return UTIL_OK; /* a token-level extension after all */
    const char *cause = a->pending_cause[0] ? a->pending_cause : "history changed (unknown cause)";
    cJSON *e = ev_new("break", a->turn);
    cJSON_AddStringToObject(e, "cause", cause);
    cJSON_AddNumberToObject(e, "at_token", (double)i);
    cJSON_AddNumberToObject(e, "expected", i < a->n_prev ? a->prev[i] : -1);
    cJSON_AddNumberToObject(e, "got", i < n ? toks[i] : -1);
    cJSON_AddNumberToObject(e, "lost_tokens", (double)(a->n_prev - i));
    note(a, "break", "cache break at token %zu (%s): %zu cached tokens no longer match", i, cause,
         a->n_prev - i);
    return event(a, e, err);
}

/* Builds this request's tokens: a splice onto the previous request when the
 * text extends it, else a fresh tokenization (and a recorded break). The
 * message bytes (plain, in text's offsets) are tokenized with special parsing
 * off; in a splice the spans are clipped to the suffix (shifted in place). */
static int request_tokens(agent *a, const util_buf *text, eng_tok_span *plain, size_t np, int32_t **toks,
                          size_t *n, util_err *err) {
    const eng_tokenizer *tk = eng_model_tokenizer(a->m);
    size_t pl = a->prev_text.len;
    if (a->n_prev && text->len >= pl && memcmp(text->data, a->prev_text.data, pl) == 0) {
        int32_t *suf = NULL;
        size_t ns = 0;
        for (size_t i = 0; i < np; i++) {
            size_t s = plain[i].start, e = s + plain[i].len;
            s = s > pl ? s - pl : 0;
            e = e > pl ? e - pl : 0;
            plain[i] = (eng_tok_span){s, e - s};
        }
        int rc = eng_tokenize_spans(tk, text->data + pl, text->len - pl, 0, plain, np, &suf, &ns, err);
        if (rc) return rc;
        *toks = malloc((a->n_prev + ns + 1) * sizeof **toks);
        if (!*toks) {
            free(suf);
            return util_err_set(err, UTIL_ENOMEM, "out of memory");
        }
        memcpy(*toks, a->prev, a->n_prev * sizeof **toks);
        if (ns) memcpy(*toks + a->n_prev, suf, ns * sizeof **toks);
        *n = a->n_prev + ns;
        free(suf);
        return UTIL_OK;
    }
    int rc = eng_tokenize_spans(tk, text->data, text->len, 0, plain, np, toks, n, err);
    if (!rc && a->n_prev) rc = record_break(a, *toks, *n, err);
    return rc;
}

/* HTTP backend: the same append-only check on the rendered messages (the
 * server tokenizes). A break records the first divergent byte. */
static int check_text(agent *a, const util_buf *text, util_err *err) {
    size_t pl = a->prev_text.len, i = 0;
    if (!pl) return UTIL_OK;
    while (i < pl && i < text->len && text->data[i] == a->prev_text.data[i]) i++;
    if (i == pl) return UTIL_OK;
    const char *cause = a->pending_cause[0] ? a->pending_cause : "history changed (unknown cause)";
    cJSON *e = ev_new("break", a->turn);
    cJSON_AddStringToObject(e, "cause", cause);
    cJSON_AddNumberToObject(e, "at_byte", (double)i);
    cJSON_AddNumberToObject(e, "lost_bytes", (double)(pl - i));
    note(a, "break", "cache break at byte %zu of the messages (%s): %zu bytes no longer match", i, cause,
         pl - i);
    return event(a, e, err);
}

static void request_event(cJSON *e, const agent_gen_res *g, const eng_cache_stats *c0,
                          const eng_cache_stats *c1) {
    const eng_gen_stats *st = &g->st;
    cJSON_AddNumberToObject(e, "prompt_tokens", st->prompt_tokens);
    if (g->cached_reported) { /* absent: the endpoint did not say (stats.c leaves it out of hit rates) */
        cJSON_AddNumberToObject(e, "cached_tokens", st->cached_tokens);
        cJSON_AddNumberToObject(e, "cached_tokens_memory", st->cached_tokens_memory);
        cJSON_AddNumberToObject(e, "cached_tokens_disk", st->cached_tokens_disk);
    }
    cJSON_AddNumberToObject(e, "computed_tokens", st->computed_tokens);
    cJSON_AddNumberToObject(e, "generated_tokens", st->generated_tokens);
    cJSON_AddNumberToObject(e, "ttft_ms", st->ttft_ms);
    cJSON_AddNumberToObject(e, "prefill_tps", st->prefill_tps);
    cJSON_AddNumberToObject(e, "decode_tps", st->decode_tps);
    if (st->spec_drafted > 0) { /* --spec: what the drafts saved */
        cJSON_AddNumberToObject(e, "decode_forwards", st->decode_forwards);
        cJSON_AddNumberToObject(e, "spec_drafted", st->spec_drafted);
        cJSON_AddNumberToObject(e, "spec_accepted", st->spec_accepted);
    }
    if (c0) {
        cJSON_AddNumberToObject(e, "engine_queries", (double)(c1->queries - c0->queries));
        cJSON_AddNumberToObject(e, "engine_hits", (double)(c1->hits - c0->hits));
    } else {
        cJSON_AddNumberToObject(e, "attempts", g->attempts);
        cJSON_AddBoolToObject(e, "stream", g->streamed);
    }
}

/* What the backend calls during one request: the reply's visible part goes
 * to on_text (visible.h), the rest passes through to the agent's callbacks. */
typedef struct req_io {
    agent *a;
    agent_visible vis;
} req_io;

static int io_text(void *user, const char *text, size_t len) {
    req_io *io = user;
    return agent_visible_feed(&io->vis, text, len);
}

static int io_stop(void *user) {
    const agent *a = ((req_io *)user)->a;
    return a->o.should_stop ? a->o.should_stop(a->o.user) : 0;
}

static void io_note(void *user, const char *kind, const char *text) {
    const agent *a = ((req_io *)user)->a;
    if (a->o.on_note) a->o.on_note(a->o.user, kind, text);
}

static void loop_progress(void *user, int done, int total) {
    agent *a = user;
    if (a->o.on_progress) a->o.on_progress(a->o.user, done, total, util_now_ms() - a->req_t0);
}

/* A reply is stored, rendered into the next request and printed as JSON:
 * text that is not UTF-8 (a character cut at max_tokens, stray bytes from
 * byte tokens) gets U+FFFD in place (util_utf8_append_valid). The token
 * ids the backend returned stay the cache's, so nothing is recomputed. */
static int make_valid(util_buf *reply, util_err *err) {
    if (!reply->len || util_utf8_check(reply->data, reply->len) == reply->len) return UTIL_OK;
    util_buf v;
    util_buf_init(&v);
    if (util_utf8_append_valid(&v, reply->data, reply->len) == (size_t)-1) {
        util_buf_release(&v);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    util_buf_release(reply);
    *reply = v;
    return UTIL_OK;
}

static int request(agent *a, int round, util_buf *reply, agent_gen_res *g, util_err *err) {
    util_buf text;
    util_buf_init(&text);
    int32_t *toks = NULL;
    eng_chat_msg *cm = NULL;
    size_t n = 0;
    int tok = a->be->uses_tokens;
    memset(g, 0, sizeof *g);
    eng_tok_span *plain = NULL;
    size_t np = 0;
    int rc = render(a, &text, &cm, &plain, &np, err);
    if (!rc) rc = tok ? request_tokens(a, &text, plain, np, &toks, &n, err) : check_text(a, &text, err);
    free(plain);
    if (!rc && tok && (int)n + (a->o.max_tokens > 0 ? a->o.max_tokens : 1) > eng_seq_n_ctx(a->seq))
        rc = util_err_set(err, UTIL_ERANGE,
                          "the conversation is %zu tokens and the context is %d: /reset to start over", n,
                          eng_seq_n_ctx(a->seq));
    eng_cache_stats c0 = {0}, c1 = {0};
    if (tok) c0 = eng_model_cache_stats(a->m);
    req_io io = {.a = a};
    agent_visible_init(&io.vis, a->o.on_text, a->o.user);
    agent_gen_req rq = {
        toks,    (int)n,  cm,  a->n_msgs, a->o.max_tokens, &a->o.sp, a->o.on_text ? io_text : NULL,
        io_stop, io_note, &io, &a->o.spec};
    a->req_t0 = util_now_ms();
    if (!rc) rc = a->be->generate(a->be, &rq, reply, g, err);
    agent_visible_flush(&io.vis);
    agent_visible_release(&io.vis);
    if (!rc) rc = make_valid(reply, err);
    if (!rc) {
        if (tok) c1 = eng_model_cache_stats(a->m);
        const eng_gen_stats *st = &g->st;
        cJSON *e = ev_new("request", a->turn);
        cJSON_AddNumberToObject(e, "round", round);
        request_event(e, g, tok ? &c0 : NULL, &c1);
        cJSON_AddStringToObject(e, "backend", a->be->name);
        rc = event(a, e, err);
        a->sum_prompt += st->prompt_tokens;
        a->sum_cached += st->cached_tokens;
        /* the next request must extend this one plus its reply */
        int32_t *p = tok ? realloc(toks, (n + (size_t)g->n_ids + 1) * sizeof *p) : NULL;
        if (tok && !p)
            rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        else {
            if (g->n_ids) memcpy(p + n, g->ids, (size_t)g->n_ids * sizeof *g->ids);
            free(a->prev);
            a->prev = p;
            a->n_prev = tok ? n + (size_t)g->n_ids : 0;
            toks = NULL;
            util_buf_release(&a->prev_text);
            a->prev_text = text;
            util_buf_init(&text);
            if (tok)
                util_buf_append(&a->prev_text, reply->data ? reply->data : "", reply->len);
            else {
                util_buf_append(reply, "", 0);
                if (!rc) rc = agent_http_render_reply(&a->prev_text, reply->data, err);
            }
            a->pending_cause[0] = '\0';
        }
    }
    free(toks);
    free(cm);
    free(g->ids);
    g->ids = NULL;
    util_buf_release(&text);
    return rc;
}

/* --- tools ------------------------------------------------------------------------------- */

/* What a call acted on, for its note: the values of its path, command,
 * pattern and name arguments in the order given (each cut at 80 bytes on a
 * character boundary), else its arguments as JSON, cut the same way. */
static void call_summary(util_buf *out, const agent_toolcall *c) {
    static const char *const keys[] = {"path", "command", "pattern", "name"};
    const cJSON *arg;
    size_t before = out->len;
    cJSON_ArrayForEach(arg, c->args) {
        if (!cJSON_IsString(arg) || !arg->string) continue;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            if (strcmp(arg->string, keys[k]) != 0) continue;
            size_t n = strlen(arg->valuestring), cut = util_utf8_floor(arg->valuestring, n, 80);
            util_buf_printf(out, "%s%.*s%s", out->len > before ? " " : "", (int)cut, arg->valuestring,
                            cut < n ? "..." : "");
        }
    }
    if (out->len > before || !c->args || cJSON_GetArraySize(c->args) == 0) return;
    char *js = cJSON_PrintUnformatted(c->args);
    if (!js) return;
    size_t n = strlen(js), cut = util_utf8_floor(js, n, 80);
    util_buf_printf(out, "%.*s%s", (int)cut, js, cut < n ? "..." : "");
    free(js);
}

/* "[tool] read_file src/main.c (1.2 KB)" once a call ran, or with why it failed. */
static void tool_note(agent *a, const agent_toolcall *c, int ok, const util_buf *out) {
    util_buf b;
    util_buf_init(&b);
    util_buf_puts(&b, c->name ? c->name : "(malformed call)");
    size_t at = b.len;
    util_buf_puts(&b, " ");
    call_summary(&b, c);
    if (b.len == at + 1) b.len = at; /* no arguments */
    double n = (double)(out->len ? out->len : 0);
    if (!ok)
        util_buf_printf(&b, ": failed: %s", out->data ? out->data : "");
    else if (n < 1000)
        util_buf_printf(&b, " (%.0f B)", n);
    else if (n < 1e6)
        util_buf_printf(&b, " (%.1f KB)", n / 1e3);
    else
        util_buf_printf(&b, " (%.1f MB)", n / 1e6);
    note(a, "tool", "%s", b.data ? b.data : "");
    util_buf_release(&b);
}

static int run_calls(agent *a, const agent_toolcalls *calls, util_err *err) {
    int rc = UTIL_OK;
    for (size_t i = 0; i < calls->n && !rc; i++) {
        const agent_toolcall *c = &calls->v[i];
        util_buf out, msg;
        util_buf_init(&out);
        util_buf_init(&msg);
        int ok = 0;
        cJSON *e = ev_new("tool_call", a->turn);
        cJSON_AddStringToObject(e, "name", c->name ? c->name : "");
        if (c->args) cJSON_AddItemToObject(e, "arguments", cJSON_Duplicate(c->args, 1));
        if (c->error) cJSON_AddStringToObject(e, "error", c->error);
        rc = event(a, e, err);
        if (c->error) {
            util_buf_puts(&out, c->error);
        } else if (!agent_tool_exists(c->name)) {
            util_buf_printf(&out, "unknown tool '%s'; the tools are listed in <tools>", c->name);
        } else {
            util_err te;
            util_err_clear(&te);
            if (agent_tool_run(&a->tools, c->name, c->args, &out, &te) == UTIL_OK)
                ok = 1;
            else
                util_buf_puts(&out, te.msg);
        }
        util_buf_append(&out, "", 0);
        tool_note(a, c, ok, &out);
        e = ev_new("tool_result", a->turn);
        cJSON_AddStringToObject(e, "name", c->name ? c->name : "");
        cJSON_AddBoolToObject(e, "ok", ok);
        cJSON_AddNumberToObject(e, "bytes", (double)out.len);
        if (!ok) cJSON_AddStringToObject(e, "error", out.data);
        if (!rc)
            rc = event(a, e, err);
        else
            cJSON_Delete(e);
        /* bare where the template wraps each result itself (Qwen's <tool_response>) */
        int wrapped = !(a->m && strcmp(a->fmt->tool_result_role, "tool") == 0 &&
                        eng_chat_wraps_tool_results(eng_model_chat(a->m)));
        agent_toolresult_format_as(&msg, c->name, ok, out.data, wrapped);
        if (!rc) rc = push_msg(a, a->fmt->tool_result_role, msg.data ? msg.data : "", err);
        util_buf_release(&out);
        util_buf_release(&msg);
    }
    return rc;
}

/* --- turns --------------------------------------------------------------------------------- */

/* Re-reads the workspace: an edited file changes the system prompt, which
 * is used from now on and recorded as the cause of the coming break. */
static int refresh_prompt(agent *a, util_err *err) {
    agent_prompt np;
    agent_prompt_opts po = {a->ws, a->data, a->fmt, NULL};
    int rc = agent_prompt_build(&np, &po, err);
    if (rc) return rc;
    if (strcmp(np.system, a->prompt.system) != 0 && a->n_msgs > 0) {
        const char *which =
            strcmp(np.tier0, a->prompt.tier0) != 0
                ? "tier 0 changed (AGENTS.md, SOUL.md, IDENTITY.md, TOOLS.md, skills or prompts/)"
                : "tier 1 changed (USER.md or MEMORY.md)";
        snprintf(a->pending_cause, sizeof a->pending_cause, "workspace files changed: %s", which);
        free(a->msgs[0].content);
        a->msgs[0].content = strdup(np.system);
        cJSON *e = ev_new("system", a->turn);
        cJSON_AddStringToObject(e, "content", np.system);
        cJSON_AddStringToObject(e, "cause", a->pending_cause);
        rc = event(a, e, err);
        agent_prompt_release(&a->prompt);
        a->prompt = np;
        a->tools.skills = &a->prompt.skills;
        if (!a->msgs[0].content) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        return rc;
    }
    agent_prompt_release(&np);
    return UTIL_OK;
}

/* 1 if text names a built-in tool as a word of its own ("use read_file"). */
static int names_tool(const char *text, char *name, size_t cap) {
    for (const char *p = text; *p;) {
        size_t n = 0;
        while ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '_') n++;
        if (n && n < cap &&
            (p == text || !((p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9')))) {
            memcpy(name, p, n);
            name[n] = '\0';
            if (!((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9')) && agent_tool_exists(name))
                return 1;
        }
        p += n ? n : 1;
    }
    return 0;
}

/* What the user should know about how the turn ended: a reply cut short,
 * and a tool the task names that never ran (the answer is then the model's
 * own text; a small model often answers instead of calling). */
static void turn_notes(agent *a, const char *user_text, const agent_turn_result *res) {
    if (res->stop_reason == ENG_STOP_MAX_TOKENS)
        note(a, "limit", "the reply stopped at the token limit (--max-tokens %d): it is cut short",
             a->o.max_tokens);
    else if (res->stop_reason == ENG_STOP_CONTEXT_FULL)
        note(a, "limit",
             "the reply stopped because the context is full: it is cut short (/reset starts over)");
    char name[32];
    if (res->tool_calls == 0 && !res->canceled && names_tool(user_text, name, sizeof name))
        note(a, "no-tool",
             "the task names %s, but the model called no tool: no tool ran, the reply is its own text", name);
}

int agent_turn(agent *a, const char *user_text, agent_turn_result *res, util_err *err) {
    memset(res, 0, sizeof *res);
    a->turn++;
    int rc = refresh_prompt(a, err);
    util_buf u;
    util_buf_init(&u);
    if (a->tier2_pending) {
        util_buf_printf(&u, "%s\n\n", a->tier2);
        a->tier2_pending = 0;
    }
    util_buf_puts(&u, user_text);
    if (!rc) rc = agent_tier3(&u, a->data, a->ws, (long long)time(NULL), err);
    if (!rc) rc = push_msg(a, "user", u.data, err);
    util_buf_release(&u);
    util_buf reply;
    util_buf_init(&reply);
    for (int round = 0; !rc; round++) {
        agent_gen_res g;
        util_buf_release(&reply);
        util_buf_init(&reply);
        rc = request(a, round, &reply, &g, err);
        if (rc) break;
        util_buf_append(&reply, "", 0);
        if (res->rounds++ == 0) res->ttft_ms = g.st.ttft_ms, res->cached_reported = 1;
        res->cached_reported &= g.cached_reported != 0;
        res->prompt_tokens += g.st.prompt_tokens;
        res->cached_tokens += g.st.cached_tokens;
        res->generated_tokens += g.st.generated_tokens;
        res->stop_reason = g.st.stop_reason;
        if ((rc = push_msg(a, "assistant", reply.data, err))) break;
        if (g.st.stop_reason == ENG_STOP_CANCELED) {
            res->canceled = 1;
            break;
        }
        agent_toolcalls calls;
        eng_chat_format fam = a->m ? eng_chat_get_format(eng_model_chat(a->m)) : a->fmt->chat;
        if ((rc = agent_toolcalls_parse_for(&calls, reply.data, fam, err)))
            break; /* native form, or <tool_call> */
        if (calls.n == 0) {
            agent_toolcalls_release(&calls);
            break;
        }
        if (round + 1 >= a->o.max_rounds) {
            note(a, "limit", "stopped after %d tool rounds this turn (--max-rounds)", a->o.max_rounds);
            agent_toolcalls_release(&calls);
            break;
        }
        rc = run_calls(a, &calls, err);
        res->tool_calls += (int)calls.n;
        agent_toolcalls_release(&calls);
    }
    if (!rc) turn_notes(a, user_text, res);
    if (!rc) {
        cJSON *e = ev_new("reply", a->turn);
        cJSON_AddStringToObject(e, "text", reply.data ? reply.data : "");
        rc = event(a, e, err);
        e = ev_new("turn_end", a->turn);
        cJSON_AddNumberToObject(e, "rounds", res->rounds);
        cJSON_AddBoolToObject(e, "canceled", res->canceled);
        if (!rc)
            rc = event(a, e, err);
        else
            cJSON_Delete(e);
        if (!rc) a->turns_done++;
    }
    util_err e2;
    if (agent_session_sync(&a->sess, &e2) && !rc) rc = util_err_set(err, e2.code, "%s", e2.msg);
    res->reply = util_buf_detach(&reply, NULL);
    if (!res->reply) res->reply = strdup("");
    return rc;
}

void agent_turn_result_release(agent_turn_result *r) {
    free(r->reply);
    r->reply = NULL;
}

int agent_reset(agent *a, util_err *err) {
    clear_msgs(a, (size_t)agent_format_kept_messages(a->fmt));
    if (a->fmt->tier2 == AGENT_TIER2_USER) a->tier2_pending = 1;
    snprintf(a->pending_cause, sizeof a->pending_cause, "reset");
    cJSON *e = ev_new("reset", a->turn);
    int rc = event(a, e, err);
    if (!rc) rc = agent_session_sync(&a->sess, err);
    return rc;
}

/* --- open, resume, free ---------------------------------------------------------------------- */

static int start_session(agent *a, util_err *err) {
    int rc = a->o.no_session ? UTIL_OK : agent_session_create(&a->sess, err);
    if (rc) return rc;
    cJSON *e = ev_new("session", -1);
    cJSON_AddNumberToObject(e, "version", 1);
    cJSON_AddStringToObject(e, "id", a->sess.id);
    cJSON_AddNumberToObject(e, "created", (double)time(NULL));
    cJSON_AddStringToObject(e, "workspace", a->ws);
    cJSON_AddStringToObject(e, "model", a->model_name);
    if (a->m) cJSON_AddStringToObject(e, "model_path", eng_model_path(a->m));
    if (a->m) cJSON_AddStringToObject(e, "engine_backend", eng_model_backend(a->m));
    cJSON_AddStringToObject(e, "backend", a->be->name);
    if (a->o.http.url) cJSON_AddStringToObject(e, "backend_url", a->o.http.url);
    if ((rc = event(a, e, err))) return rc;
    if ((rc = push_msg(a, "system", a->prompt.system, err))) return rc;
    if (a->fmt->tier2 == AGENT_TIER2_SYSTEM)
        rc = push_msg(a, "system", a->tier2, err);
    else
        a->tier2_pending = 1;
    if (!rc) rc = agent_session_sync(&a->sess, err);
    return rc;
}

/* A user message whose turn never ended (the process was killed before the
 * reply): shown to the user and marked in the session before anything
 * answers it. text is the message as stored (tier 2 and 3 around the user's
 * words); the note quotes the user's part. */
static int mark_unanswered(agent *a, int turn, const char *text, util_err *err) {
    size_t t2 = a->tier2 ? strlen(a->tier2) : 0;
    if (t2 && strncmp(text, a->tier2, t2) == 0) text += t2 + strspn(text + t2, "\n");
    const char *end = strstr(text, "\n\n"); /* the turn context (tier 3) follows a blank line */
    size_t n = end ? (size_t)(end - text) : strlen(text);
    size_t k = util_utf8_floor(text, n, 200);
    note(a, "resume",
         "turn %d had no answer (the session stopped before its reply): '%.*s%s'; it stays in the "
         "conversation, before your next message",
         turn, (int)k, text, k < n ? "..." : "");
    cJSON *e = ev_new("unanswered", turn);
    cJSON_AddNumberToObject(e, "time", (double)time(NULL));
    return event(a, e, err);
}

/* Rebuilds the history from a session file's message events (a->sess is
 * open and locked already). */
static int resume_session(agent *a, cJSON *evs, util_err *err) {
    int rc = UTIL_OK;
    const cJSON *ev;
    const char *model = NULL;
    int open_turn = -1; /* the turn of the last user message, until its turn_end */
    const char *open_text = NULL;
    cJSON_ArrayForEach(ev, evs) {
        if (rc) break;
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
        const cJSON *turn = cJSON_GetObjectItemCaseSensitive(ev, "turn");
        int t = -1; /* agent_session_load checked the range; checked again, it costs nothing */
        if (cJSON_IsNumber(turn) && turn->valuedouble >= 0 && turn->valuedouble <= AGENT_SESSION_MAX_TURN)
            t = (int)turn->valuedouble;
        if (t > a->turn) a->turn = t;
        if (!type) continue;
        if (strcmp(type, "session") == 0) {
            model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "model"));
        } else if (strcmp(type, "message") == 0) {
            const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "role"));
            const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "content"));
            if (role && content) {
                agent_session s = a->sess;
                a->sess.fd = -1; /* rebuilding: do not write the messages again */
                rc = push_msg(a, role, content, err);
                a->sess = s;
                if (strcmp(role, "user") == 0) open_turn = t, open_text = content;
            }
        } else if (strcmp(type, "turn_end") == 0 || strcmp(type, "unanswered") == 0) {
            if (t == open_turn) open_turn = -1;
        } else if (strcmp(type, "reset") == 0) {
            clear_msgs(a, (size_t)agent_format_kept_messages(a->fmt));
            open_turn = -1;
        } else if (strcmp(type, "system") == 0 && a->n_msgs) {
            const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "content"));
            if (c) {
                free(a->msgs[0].content);
                a->msgs[0].content = strdup(c);
            }
        }
    }
    if (rc) return rc;
    if (a->n_msgs == 0)
        return util_err_set(err, UTIL_EFORMAT, "session '%s' holds no messages", a->sess.path);
    /* a resumed session keeps its tier 2; its cache comes back from the disk tier */
    if (a->n_msgs > 1 && a->fmt->tier2 == AGENT_TIER2_SYSTEM) {
        free(a->tier2);
        a->tier2 = strdup(a->msgs[1].content);
    }
    cJSON *e = ev_new("resume", a->turn);
    cJSON_AddNumberToObject(e, "time", (double)time(NULL));
    rc = event(a, e, err);
    if (!rc && open_turn >= 0 && open_text) rc = mark_unanswered(a, open_turn, open_text, err);
    if (!rc && model && strcmp(model, a->model_name) != 0) {
        snprintf(a->pending_cause, sizeof a->pending_cause, "model changed from '%s' to '%s'", model,
                 a->model_name);
        e = ev_new("break", a->turn);
        cJSON_AddStringToObject(e, "cause", a->pending_cause);
        rc = event(a, e, err);
    }
    if (!rc && strcmp(a->msgs[0].content, a->prompt.system) != 0) {
        /* the workspace changed since: the new system prompt replaces the old */
        free(a->msgs[0].content);
        a->msgs[0].content = strdup(a->prompt.system);
        e = ev_new("break", a->turn);
        cJSON_AddStringToObject(e, "cause", "workspace files changed since the session was saved");
        if (!(rc = event(a, e, err))) {
            e = ev_new("system", a->turn);
            cJSON_AddStringToObject(e, "content", a->prompt.system);
            rc = event(a, e, err);
        }
        note(a, "break",
             "the workspace files changed since this session was saved: the system prompt is new");
    }
    return rc;
}

/* A resumed session runs in the workspace it recorded (its resolved path)
 * unless --workspace says otherwise: a recorded path that now resolves
 * elsewhere (a directory on the way replaced by a link) is refused rather
 * than followed; another workspace given is said. */
static int open_workspace(agent *a, const char *session_ws, util_err *err) {
    const char *ws = a->o.workspace ? a->o.workspace : session_ws ? session_ws : ".";
    if (!realpath(ws, a->ws)) return util_err_set(err, UTIL_ENOTFOUND, "workspace '%s' does not exist", ws);
    if (session_ws && strcmp(a->ws, session_ws) != 0) {
        if (!a->o.workspace)
            return util_err_set(
                err, UTIL_EINVAL,
                "the session's workspace '%s' now leads to '%s' (a link on the way): refused; "
                "pass --workspace DIR to resume it in a workspace of your choice",
                session_ws, a->ws);
        note(a, "warning", "this session was recorded in workspace '%s'; it is resumed in '%s'", session_ws,
             a->ws);
    }
    snprintf(a->data, sizeof a->data, "%s", a->o.data_dir);
    agent_prompt_opts po = {a->ws, a->data, a->fmt, NULL};
    int rc = agent_prompt_build(&a->prompt, &po, err);
    if (!rc) rc = agent_tools_init(&a->tools, a->ws, err);
    if (rc) return rc;
    for (size_t i = 0; i < a->prompt.warnings.n; i++) note(a, "warning", "%s", a->prompt.warnings.v[i]);
    a->tools.yes = a->o.yes;
    a->tools.confirm = a->o.confirm;
    a->tools.confirm_user = a->o.confirm_user;
    a->tools.key_env = a->o.http.api_key_env;
    a->tools.skills = &a->prompt.skills;
    util_buf t2;
    util_buf_init(&t2);
    rc = agent_tier2(&t2, a->data, a->ws, a->model_name, (long long)time(NULL), err);
    util_buf_append(&t2, "", 0);
    a->tier2 = util_buf_detach(&t2, NULL);
    return rc;
}

/* The embedded engine (sampling or replay), or an HTTP endpoint: then no
 * model file is opened, and the prompt uses the ChatML tool-use text. */
static int open_backend(agent *a, util_err *err) {
    const agent_opts *o = &a->o;
    if (o->http.url) {
        if (o->replay_path)
            return util_err_set(err, UTIL_EINVAL, "--replay and --backend cannot be combined");
        int rc = agent_backend_http_new(&a->be, &o->http, err);
        if (rc) return rc;
        snprintf(a->model_name, sizeof a->model_name, "%s", a->be->model);
        a->fmt = agent_format_of(ENG_CHAT_CHATML);
        return UTIL_OK;
    }
    int rc = eng_model_open(&a->m, o->model_path, &o->mp, err);
    if (!rc) rc = eng_seq_new(&a->seq, a->m, o->n_ctx, err);
    if (!rc && o->on_progress) eng_seq_set_progress(a->seq, loop_progress, a);
    if (!rc)
        rc = o->replay_path ? agent_backend_replay_new(&a->be, a->m, a->seq, o->replay_path, err)
                            : agent_backend_engine_new(&a->be, a->seq, err);
    if (rc) return rc;
    util_model_id(a->model_name, sizeof a->model_name, eng_model_path(a->m));
    a->fmt = agent_format_of(eng_chat_get_format(eng_model_chat(a->m)));
    return UTIL_OK;
}

int agent_open(agent **out, const agent_opts *o, util_err *err) {
    *out = NULL;
    agent *a = calloc(1, sizeof *a);
    if (!a) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    a->o = *o;
    a->sess.fd = -1;
    util_buf_init(&a->prev_text);
    if (a->o.max_tokens <= 0) a->o.max_tokens = 256;
    if (a->o.max_rounds <= 0) a->o.max_rounds = 8;
    cJSON *evs = NULL;
    char spath[4096], sid[64];
    const char *session_ws = NULL;
    int rc = UTIL_OK;
    if (o->resume_set) {
        /* locked before it is read: another process cannot extend it meanwhile */
        agent_session_info info;
        rc = agent_session_find(o->resume, spath, sizeof spath, sid, sizeof sid, err);
        if (!rc) rc = agent_session_open(&a->sess, spath, err);
        if (!rc) rc = agent_session_load(spath, &evs, &info, err);
        if (!rc && info.warning[0]) note(a, "warning", "%s", info.warning);
        const cJSON *first = evs ? cJSON_GetArrayItem(evs, 0) : NULL;
        session_ws = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "workspace"));
    }
    if (!rc) rc = open_backend(a, err);
    if (!rc && a->m && eng_chat_warning(eng_model_chat(a->m)))
        note(a, "warning", "%s", eng_chat_warning(eng_model_chat(a->m)));
    if (!rc) rc = open_workspace(a, session_ws, err);
    if (!rc) rc = o->resume_set ? resume_session(a, evs, err) : start_session(a, err);
    cJSON_Delete(evs);
    if (rc) {
        agent_free(a);
        return rc;
    }
    *out = a;
    return UTIL_OK;
}

void agent_free(agent *a) {
    if (!a) return;
    clear_msgs(a, 0);
    free(a->msgs);
    free(a->tier2);
    free(a->prev);
    util_buf_release(&a->prev_text);
    /* a new session in which no turn completed (the backend failed, the user
     * left at once) is not kept: it would become "the latest" for nothing */
    if (!a->o.resume_set && a->turns_done == 0) agent_session_discard(&a->sess);
    agent_session_close(&a->sess);
    agent_tools_release(&a->tools);
    agent_prompt_release(&a->prompt);
    agent_backend_free(a->be);
    if (a->m) eng_model_flush_cache(a->m);
    eng_seq_free(a->seq);
    eng_model_free(a->m);
    free(a);
}

const char *agent_session_id(const agent *a) { return a->sess.id; }
const char *agent_session_path(const agent *a) { return a->sess.path; }
int agent_turns(const agent *a) { return a->turn; }
void agent_totals(const agent *a, long *p, long *c) {
    *p = a->sum_prompt;
    *c = a->sum_cached;
}
const agent_prompt *agent_get_prompt(const agent *a) { return &a->prompt; }
const char *agent_get_tier2(const agent *a) { return a->tier2; }
eng_model *agent_model(agent *a) { return a->m; }
const char *agent_model_name(const agent *a) { return a->model_name; }
