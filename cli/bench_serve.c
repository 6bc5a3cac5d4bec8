/* cli/bench_serve.c: `cachet bench serve` (make bench-serve): N clients, each
 * sending R chat requests in turn that share one long system prompt, against
 * `cachet serve` (started in this process on a free loopback port) and, when
 * LLAMA_CPP_DIR (or --llama-cpp) holds llama-server, against it on the same
 * model, threads and load. Reports wall time, aggregate generated tok/s,
 * p50/p95 request latency and the share of prompt tokens served from cache.
 * Loopback only; never builds llama.cpp. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../serve/serve.h"
#include "../util/buf.h"
#include "../util/time.h"
#include "cli.h"
#include "opts.h"

extern char **environ;

static const char bench_serve_usage[] =
    "usage: cachet bench serve [--clients N] [--requests N] [--max-tokens N] [--system N]\n"
    "                          [--parallel N] [--llama-cpp DIR | --no-llama] [--json] [engine options]\n"
    "\n"
    "N clients at once, each sending R chat requests one after another that share a system\n"
    "prompt, against cachet serve and (from DIR, default $LLAMA_CPP_DIR) llama-server on the\n"
    "same model, threads and load: wall time, generated tok/s, p50/p95 latency, cached share;\n"
    "then two streamed requests alone on each server: single-stream decode tok/s, and the\n"
    "aggregate over it.\n"
    "\n"
    "  --clients N           concurrent clients (default 8)\n"
    "  --requests N          requests per client (default 6)\n"
    "  --max-tokens N        tokens generated per request, greedy (default 16)\n"
    "  --system N            shared system prompt, about N tokens (default 1500)\n"
    "  --parallel N          requests generating at once, both servers (default 4)\n"
    "  --llama-cpp DIR       llama.cpp build directory holding bin/llama-server\n"
    "  --no-llama            do not run llama-server\n"
    "  --json                print one JSON object\n"
    "\n"
    "engine options (cachet serve's; --threads also llama-server's):\n";

static const cli_engine_note bench_serve_notes[] = {{"threads", "threads of both servers (default 2)"},
                                                    {"ctx-size", "context per request (default 4096)"},
                                                    {"no-disk-cache", "the bench keeps the cache in memory"},
                                                    {0, 0}};

typedef struct bs_opts {
    cli_engine e;
    const char *llama_dir;
    int clients, requests, max_tokens, system_tokens, parallel, json, no_llama;
} bs_opts;

/* One server's figures. */
typedef struct bs_result {
    int ok; /* ran */
    char note[256];
    double wall_s, gen_tps, p50_s, p95_s, cached_share;
    double single_tps; /* one streamed request alone: tokens after the first / their time (0: none) */
    long single_tokens;
    long requests, failed, prompt_tokens, cached_tokens, completion_tokens;
    char first_failure[320]; /* the first failed request's status and body ("": none) */
} bs_result;

/* --- the load --------------------------------------------------------------------- */

/* A system prompt of about n tokens: numbered rules of ~15 tokens each. */
static char *system_prompt(int n) {
    static const char *rules[] = {"keep answers short and name the file you changed",
                                  "prefer plain words over jargon and short sentences over long ones",
                                  "stable instructions come first so the prefix cache can reuse them",
                                  "when you are unsure, say so instead of guessing an answer",
                                  "never print secrets, keys or tokens found in the workspace"};
    util_buf b;
    util_buf_init(&b);
    util_buf_puts(&b, "You are a careful assistant for a team that builds an inference engine in C.\n");
    for (int i = 0; i * 15 < n; i++) util_buf_printf(&b, "Rule %d: %s.\n", i + 1, rules[i % 5]);
    return util_buf_detach(&b, NULL);
}

typedef struct bs_shared {
    const bs_opts *o;
    const char *url; /* http://127.0.0.1:PORT/v1/chat/completions */
    const char *system;
    double *lat; /* clients x requests latencies, seconds (-1: failed) */
    pthread_mutex_t mu;
    long prompt, cached, completion, failed;
    char first_failure[320];
} bs_shared;

typedef struct bs_client {
    bs_shared *sh;
    int id;
} bs_client;

static size_t on_body(char *p, size_t sz, size_t n, void *user) {
    return util_buf_append(user, p, sz * n) ? 0 : sz * n;
}

/* POSTs body (JSON; NULL: a GET) to url on c, the reply to fn(arg), within
 * timeout seconds; *status is the HTTP status (0: no answer). */
static CURLcode bs_perform(CURL *c, const char *url, const char *body, curl_write_callback fn, void *arg,
                           long timeout, long *status) {
    struct curl_slist *h = body ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fn);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, arg);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
    *status = 0;
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    return rc;
}

static long num_at(const cJSON *o, const char *a, const char *b) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

/* One request; returns its latency in seconds, or -1 when it failed. */
static double one_request(bs_shared *sh, CURL *c, int client, int r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", "bench"); /* any name: one model is served */
    cJSON *m = cJSON_AddArrayToObject(o, "messages");
    cJSON *s = cJSON_CreateObject(), *u = cJSON_CreateObject();
    char q[128];
    snprintf(q, sizeof q, "Client %d, question %d: name a prime number larger than %d.", client, r,
             client * 100 + r);
    cJSON_AddStringToObject(s, "role", "system");
    cJSON_AddStringToObject(s, "content", sh->system);
    cJSON_AddStringToObject(u, "role", "user");
    cJSON_AddStringToObject(u, "content", q);
    cJSON_AddItemToArray(m, s);
    cJSON_AddItemToArray(m, u);
    cJSON_AddNumberToObject(o, "max_tokens", sh->o->max_tokens);
    cJSON_AddNumberToObject(o, "temperature", 0);
    char *body = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    util_buf resp;
    util_buf_init(&resp);
    double t0 = util_now_s();
    long status;
    CURLcode rc = bs_perform(c, sh->url, body, on_body, &resp, 600L, &status);
    double dt = util_now_s() - t0;
    free(body);
    cJSON *a = rc == CURLE_OK && status == 200 && resp.data ? cJSON_Parse(resp.data) : NULL;
    long pt = num_at(cJSON_GetObjectItem(a, "usage"), "prompt_tokens", NULL);
    long ct = num_at(cJSON_GetObjectItem(a, "usage"), "completion_tokens", NULL);
    char why[sizeof sh->first_failure] = "";
    if (rc != CURLE_OK)
        snprintf(why, sizeof why, "%s", curl_easy_strerror(rc));
    else if (pt < 0 || ct < 0) /* the body's start, one line */
        snprintf(why, sizeof why, "HTTP %ld: %.256s", status, resp.data ? resp.data : "(no body)");
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    util_buf_release(&resp);
    /* cached prompt tokens: the OpenAI field, else llama-server's timings.cache_n */
    long ca = num_at(cJSON_GetObjectItem(a, "usage"), "prompt_tokens_details", "cached_tokens");
    if (ca < 0) ca = num_at(a, "timings", "cache_n");
    cJSON_Delete(a);
    pthread_mutex_lock(&sh->mu);
    if (pt < 0 || ct < 0) {
        if (sh->failed++ == 0) snprintf(sh->first_failure, sizeof sh->first_failure, "%s", why);
        dt = -1;
    } else {
        sh->prompt += pt;
        sh->completion += ct;
        sh->cached += ca > 0 ? ca : 0;
    }
    pthread_mutex_unlock(&sh->mu);
    return dt;
}

static void *client_main(void *p) {
    bs_client *cl = p;
    bs_shared *sh = cl->sh;
    CURL *c = curl_easy_init();
    for (int r = 0; r < sh->o->requests; r++)
        sh->lat[cl->id * sh->o->requests + r] = c ? one_request(sh, c, cl->id, r) : -1;
    if (c) curl_easy_cleanup(c);
    return NULL;
}

/* --- single-stream decode ------------------------------------------------------------ */

/* An SSE reply read as it arrives: the time of the first and the last chunk
 * that carries content, and how many did. */
typedef struct bs_sse {
    util_buf line;
    double t_first, t_last;
    long n;     /* chunks with content */
    long usage; /* completion_tokens of the usage chunk (-1: none) */
} bs_sse;

static void sse_line(bs_sse *s, const char *l) {
    if (strncmp(l, "data: ", 6) != 0) return;
    cJSON *o = cJSON_Parse(l + 6);
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "choices"), 0);
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "delta"), "content");
    long u = num_at(cJSON_GetObjectItem(o, "usage"), "completion_tokens", NULL);
    if (u >= 0) s->usage = u;
    if (cJSON_IsString(c) && c->valuestring[0]) {
        double t = util_now_s();
        if (s->n++ == 0) s->t_first = t;
        s->t_last = t;
    }
    cJSON_Delete(o);
}

static size_t on_sse(char *p, size_t sz, size_t n, void *user) {
    bs_sse *s = user;
    for (size_t i = 0; i < sz * n; i++) {
        if (p[i] != '\n') {
            if (util_buf_append(&s->line, &p[i], 1)) return 0;
            continue;
        }
        if (s->line.data) sse_line(s, s->line.data);
        s->line.len = 0;
        if (s->line.data) s->line.data[0] = '\0';
    }
    return sz * n;
}

/* Decode speed of one stream alone on url, the shared prefix warm: `reps`
 * streamed requests one after another, each timed from its first content
 * chunk to its last (the prompt's prefill is outside that span); tokens after
 * the first (the usage chunk's count) over their time, summed over the reps. */
static void single_stream(const bs_opts *o, const char *url, const char *system, bs_result *r, int reps) {
    CURL *c = curl_easy_init();
    double span = 0;
    long toks = 0;
    for (int k = 0; c && k < reps; k++) {
        cJSON *q = cJSON_CreateObject();
        cJSON_AddStringToObject(q, "model", "bench");
        cJSON *m = cJSON_AddArrayToObject(q, "messages");
        cJSON *sy = cJSON_CreateObject(), *u = cJSON_CreateObject();
        char text[128];
        snprintf(text, sizeof text, "Alone, question %d: name a prime number larger than %d.", k, 7919 + k);
        cJSON_AddStringToObject(sy, "role", "system");
        cJSON_AddStringToObject(sy, "content", system);
        cJSON_AddStringToObject(u, "role", "user");
        cJSON_AddStringToObject(u, "content", text);
        cJSON_AddItemToArray(m, sy);
        cJSON_AddItemToArray(m, u);
        cJSON_AddNumberToObject(q, "max_tokens", o->max_tokens);
        cJSON_AddNumberToObject(q, "temperature", 0);
        cJSON_AddBoolToObject(q, "stream", 1);
        cJSON_AddBoolToObject(cJSON_AddObjectToObject(q, "stream_options"), "include_usage", 1);
        char *body = cJSON_PrintUnformatted(q);
        cJSON_Delete(q);
        bs_sse sse = {.n = 0, .usage = -1};
        util_buf_init(&sse.line);
        long status;
        bs_perform(c, url, body, on_sse, &sse, 600L, &status);
        free(body);
        util_buf_release(&sse.line);
        /* tokens after the first chunk's one: the usage count (a chunk may carry
         * several tokens under --spec), else one per chunk */
        long after = (sse.usage > 0 ? sse.usage : sse.n) - 1;
        if (status == 200 && sse.n > 1 && after > 0) {
            span += sse.t_last - sse.t_first;
            toks += after;
        }
    }
    if (c) curl_easy_cleanup(c);
    r->single_tokens = toks;
    r->single_tps = span > 0 ? (double)toks / span : 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs the clients against url and fills r. */
static void run_load(const bs_opts *o, const char *url, const char *system, bs_result *r) {
    int n = o->clients * o->requests;
    bs_shared sh = {.o = o, .url = url, .system = system, .lat = calloc((size_t)n, sizeof(double))};
    pthread_t th[256];
    bs_client cl[256];
    if (!sh.lat) {
        snprintf(r->note, sizeof r->note, "out of memory");
        return;
    }
    pthread_mutex_init(&sh.mu, NULL);
    double t0 = util_now_s();
    int started = 0;
    for (int i = 0; i < o->clients; i++) {
        cl[i] = (bs_client){&sh, i};
        if (pthread_create(&th[i], NULL, client_main, &cl[i])) break;
        started++;
    }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    r->wall_s = util_now_s() - t0;
    pthread_mutex_destroy(&sh.mu);
    int k = 0;
    for (int i = 0; i < started * o->requests; i++)
        if (sh.lat[i] >= 0) sh.lat[k++] = sh.lat[i];
    qsort(sh.lat, (size_t)k, sizeof *sh.lat, cmp_double);
    r->ok = 1;
    r->requests = n;
    r->failed = n - k;
    r->prompt_tokens = sh.prompt;
    r->cached_tokens = sh.cached;
    r->completion_tokens = sh.completion;
    snprintf(r->first_failure, sizeof r->first_failure, "%s", sh.first_failure);
    r->gen_tps = r->wall_s > 0 ? sh.completion / r->wall_s : 0;
    r->cached_share = sh.prompt > 0 ? (double)sh.cached / (double)sh.prompt : 0;
    if (k > 0) {
        r->p50_s = sh.lat[(int)floor(0.50 * (k - 1) + 0.5)];
        r->p95_s = sh.lat[(int)floor(0.95 * (k - 1) + 0.5)];
    }
    free(sh.lat);
}

/* --- the servers ------------------------------------------------------------------- */

static int run_cachet(const bs_opts *o, const char *system, bs_result *r) {
    serve_params p;
    serve_params_init(&p);
    p.model_path = o->e.path;
    p.port = 0;
    p.parallel = o->parallel;
    p.max_queue = o->clients * o->requests + 16;
    p.max_tokens = o->max_tokens;
    p.max_conns = o->clients + 16;
    p.request_timeout = 60;
    p.n_ctx = o->e.n_ctx > 0 ? o->e.n_ctx : 4096;
    p.mp = o->e.mp;
    p.mp.no_disk_cache = 1; /* what one process keeps warm, as llama-server */
    p.spec = o->e.spec;
    serve_server *srv = NULL;
    util_err err;
    if (serve_start(&srv, &p, &err)) {
        snprintf(r->note, sizeof r->note, "cachet serve: %s", err.msg);
        return CLI_EXIT_FAIL;
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", serve_port(srv));
    run_load(o, url, system, r);
    single_stream(o, url, system, r, 2);
    serve_stop(srv, 1000);
    serve_free(srv);
    return CLI_EXIT_OK;
}

/* A free loopback port (bound, read, released), or 0. */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* GET url's status (0: no answer). */
static long http_status(const char *url) {
    CURL *c = curl_easy_init();
    if (!c) return 0;
    util_buf sink;
    util_buf_init(&sink);
    long status;
    bs_perform(c, url, NULL, on_body, &sink, 2L, &status);
    curl_easy_cleanup(c);
    util_buf_release(&sink);
    return status;
}

/* llama-server on the same model, threads, slots and context per slot, its
 * prompt cache on (its default); stopped with SIGTERM (SIGKILL after 10 s). */
static void run_llama(const bs_opts *o, const char *system, bs_result *r) {
    const char *dir = o->llama_dir ? o->llama_dir : getenv("LLAMA_CPP_DIR");
    if (o->no_llama || !dir || !*dir) {
        snprintf(r->note, sizeof r->note, "not run (set LLAMA_CPP_DIR)");
        return;
    }
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/bin/llama-server", dir);
    if (access(exe, X_OK) != 0) snprintf(exe, sizeof exe, "%s/llama-server", dir);
    if (access(exe, X_OK) != 0) {
        snprintf(r->note, sizeof r->note, "not run (no llama-server in '%s')", dir);
        return;
    }
    int port = free_port();
    char ps[16], ts[16], np[16], cs[16];
    snprintf(ps, sizeof ps, "%d", port);
    snprintf(ts, sizeof ts, "%d", o->e.mp.n_threads);
    snprintf(np, sizeof np, "%d", o->parallel);
    snprintf(cs, sizeof cs, "%d", (o->e.n_ctx > 0 ? o->e.n_ctx : 4096) * o->parallel);
    char *argv[] = {
        exe, "-m", (char *)o->e.path, "--host", "127.0.0.1", "--port", ps, "-t", ts, "-np", np, "-c",
        cs,  NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        snprintf(r->note, sizeof r->note, "cannot run '%s': %s", exe, strerror(rc));
        return;
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", port);
    int up = 0, status;
    for (int i = 0; i < 1200 && !up; i++) { /* loading a model: up to 2 minutes */
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        up = http_status(url) == 200;
        if (!up) nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    if (up) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
        run_load(o, url, system, r);
        single_stream(o, url, system, r, 2);
    } else {
        snprintf(r->note, sizeof r->note, "llama-server did not come up on port %d", port);
    }
    kill(pid, SIGTERM);
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
}

/* --- report --------------------------------------------------------------------------- */

static void add_result(cJSON *j, const char *name, const bs_result *r) {
    if (!r->ok) {
        cJSON *n = cJSON_AddObjectToObject(j, name);
        cJSON_AddStringToObject(n, "note", r->note);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(j, name);
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    cJSON_AddNumberToObject(o, "generated_tps", r->gen_tps);
    cJSON_AddNumberToObject(o, "latency_p50_s", r->p50_s);
    cJSON_AddNumberToObject(o, "latency_p95_s", r->p95_s);
    cJSON_AddNumberToObject(o, "cached_share", r->cached_share);
    cJSON_AddNumberToObject(o, "requests", (double)r->requests);
    cJSON_AddNumberToObject(o, "failed", (double)r->failed);
    cJSON_AddNumberToObject(o, "prompt_tokens", (double)r->prompt_tokens);
    cJSON_AddNumberToObject(o, "cached_tokens", (double)r->cached_tokens);
    cJSON_AddNumberToObject(o, "completion_tokens", (double)r->completion_tokens);
    cJSON_AddNumberToObject(o, "single_stream_tps", r->single_tps);
    cJSON_AddNumberToObject(o, "single_stream_tokens", (double)r->single_tokens);
    cJSON_AddNumberToObject(o, "aggregate_over_single", r->single_tps > 0 ? r->gen_tps / r->single_tps : 0);
    if (r->failed) cJSON_AddStringToObject(o, "first_failure", r->first_failure);
}

static void print_row(const char *name, const bs_result *r) {
    if (!r->ok) {
        printf("%-14s %s\n", name, r->note);
        return;
    }
    printf("%-14s %8.1f s %10.1f %9.3f s %9.3f s %9.1f%% %7ld %10.1f %7.2fx\n", name, r->wall_s, r->gen_tps,
           r->p50_s, r->p95_s, 100 * r->cached_share, r->failed, r->single_tps,
           r->single_tps > 0 ? r->gen_tps / r->single_tps : 0);
}

static int parse_bs(bs_opts *o, int argc, char **argv) {
    enum { O_CLIENTS = 1, O_REQS, O_MAXTOK, O_SYSTEM, O_PAR, O_LLAMA, O_NOLLAMA, O_JSON, O_HELP };
    static const struct option own[] = {{"clients", required_argument, 0, O_CLIENTS},
                                        {"requests", required_argument, 0, O_REQS},
                                        {"max-tokens", required_argument, 0, O_MAXTOK},
                                        {"system", required_argument, 0, O_SYSTEM},
                                        {"parallel", required_argument, 0, O_PAR},
                                        {"llama-cpp", required_argument, 0, O_LLAMA},
                                        {"no-llama", no_argument, 0, O_NOLLAMA},
                                        {"json", no_argument, 0, O_JSON},
                                        {"help", no_argument, 0, O_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[48];
    if (cli_engine_longopts(opts, 48, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        switch (c) {
        case O_CLIENTS:
            if (cli_parse_int("--clients", optarg, 1, 256, &v)) return CLI_EXIT_USAGE;
            o->clients = (int)v;
            break;
        case O_REQS:
            if (cli_parse_int("--requests", optarg, 1, 10000, &v)) return CLI_EXIT_USAGE;
            o->requests = (int)v;
            break;
        case O_MAXTOK:
            if (cli_parse_int("--max-tokens", optarg, 1, 4096, &v)) return CLI_EXIT_USAGE;
            o->max_tokens = (int)v;
            break;
        case O_SYSTEM:
            if (cli_parse_int("--system", optarg, 0, 100000, &v)) return CLI_EXIT_USAGE;
            o->system_tokens = (int)v;
            break;
        case O_PAR:
            if (cli_parse_int("--parallel", optarg, 1, 64, &v)) return CLI_EXIT_USAGE;
            o->parallel = (int)v;
            break;
        case O_LLAMA: o->llama_dir = optarg; break;
        case O_NOLLAMA: o->no_llama = 1; break;
        case O_JSON: o->json = 1; break;
        case O_HELP:
            fputs(bench_serve_usage, stdout);
            cli_engine_usage(stdout, CLI_ENGINE_ALL, bench_serve_notes);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet bench serve: unknown or incomplete option '%s'\n", argv[optind - 1]);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet bench serve: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    return cli_engine_finish(&o->e, 1);
}

int cli_cmd_bench_serve(int argc, char **argv) {
    bs_opts o = {.e.mp.n_threads = 2,
                 .clients = 8,
                 .requests = 6,
                 .max_tokens = 16,
                 .system_tokens = 1500,
                 .parallel = 4};
    int rc = parse_bs(&o, argc, argv);
    if (rc != CLI_GO_ON) return rc;
    signal(SIGPIPE, SIG_IGN); /* a client gone shows up as a failed write */
    double load = 0;
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf", &load) != 1) load = 0;
        fclose(lf);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && load > 0.5 * (double)cores) /* the threshold of cachet bench */
        fprintf(
            stderr,
            "cachet bench serve: warning: load average %.2f is above %.2f (0.5 per core): other work competes "
            "for the cores, so these figures are not a result\n",
            load, 0.5 * (double)cores);
    char *system = system_prompt(o.system_tokens);
    if (!system) return CLI_EXIT_FAIL;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bs_result rc_cachet = {0}, rc_llama = {0};
    if (!o.json)
        fprintf(stderr, "cachet bench serve: cachet serve, %d clients x %d requests\n", o.clients,
                o.requests);
    int st = run_cachet(&o, system, &rc_cachet);
    if (st == CLI_EXIT_OK) {
        if (!o.json && !o.no_llama) fprintf(stderr, "cachet bench serve: llama-server\n");
        run_llama(&o, system, &rc_llama);
    }
    curl_global_cleanup();
    free(system);
    if (st != CLI_EXIT_OK) {
        fprintf(stderr, "cachet: %s\n", rc_cachet.note);
        return st;
    }
    if (o.json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", o.e.path);
        cJSON_AddNumberToObject(j, "threads", o.e.mp.n_threads);
        cJSON_AddNumberToObject(j, "clients", o.clients);
        cJSON_AddNumberToObject(j, "requests_per_client", o.requests);
        cJSON_AddNumberToObject(j, "max_tokens", o.max_tokens);
        cJSON_AddNumberToObject(j, "system_tokens_approx", o.system_tokens);
        cJSON_AddNumberToObject(j, "parallel", o.parallel);
        cJSON_AddStringToObject(j, "spec", o.e.spec.mode == ENG_SPEC_NGRAM ? "ngram" : "none");
        cJSON_AddNumberToObject(j, "load_average", load);
        add_result(j, "cachet", &rc_cachet);
        add_result(j, "llama_server", &rc_llama);
        cli_json_puts(j);
        cJSON_Delete(j);
    } else {
        printf("cachet bench serve: %s, %d threads, %d clients x %d requests, %d tokens each, ~%d-token "
               "shared system prompt, %d parallel, load average %.2f before\n\n",
               o.e.path, o.e.mp.n_threads, o.clients, o.requests, o.max_tokens, o.system_tokens, o.parallel,
               load);
        printf("%-14s %10s %10s %11s %11s %10s %7s %10s %8s\n", "", "wall", "gen tok/s", "p50", "p95",
               "cached", "failed", "1 stream", "x 1");
        print_row("cachet serve", &rc_cachet);
        print_row("llama-server", &rc_llama);
        printf(
            "\n\"1 stream\": decode tok/s of one streamed request alone on the same server after the load\n"
            "(first content chunk to last, prefill outside); \"x 1\": aggregate gen tok/s over it.\n");
        if (rc_cachet.ok && rc_cachet.failed)
            printf("\ncachet serve: first failure: %s\n", rc_cachet.first_failure);
        if (rc_llama.ok && rc_llama.failed)
            printf("\nllama-server: first failure: %s\n", rc_llama.first_failure);
    }
    return rc_cachet.failed || (rc_llama.ok && rc_llama.failed) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
