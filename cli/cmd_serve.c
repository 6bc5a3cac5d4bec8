/* cli/cmd_serve.c: `cachet serve`: its options and usage, the API key from
 * the environment, signals (SIGINT/SIGTERM blocked before the server's
 * threads start, then taken with sigwait: no handler, no global flag) and
 * the lines it prints. The server itself is serve/serve.h. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../serve/serve.h"
#include "cli.h"
#include "opts.h"

static const char serve_usage[] =
    "usage: cachet serve [--host ADDR] [--port N] [--api-key-env VAR] [--parallel N] [options]\n"
    "                    [engine options]\n"
    "\n"
    "Serves the model over an OpenAI-compatible HTTP API: POST /v1/chat/completions,\n"
    "POST /v1/completions, GET /v1/models, GET /health, GET /metrics (Prometheus).\n"
    "Every client shares one warm prefix cache.\n"
    "\n"
    "  --model-name NAME     the model id /v1/models lists and replies carry (default: the file\n"
    "                        name without .gguf); requests may name any model\n"
    "  --strict-model        refuse (404) a request whose model is not that id\n"
    "  --host ADDR           address to bind, IPv4 or IPv6 (default 127.0.0.1)\n"
    "  --port N              port (default 8080; 0 picks a free one, printed at start)\n"
    "  --api-key-env VAR     require 'Authorization: Bearer $VAR' on /v1/ routes\n"
    "  --parallel N          requests generating at once (default 4)\n"
    "  --max-queue N         requests waiting beyond those before 503 (default 64)\n"
    "  --max-tokens N        cap on max_tokens; also the default (default 512)\n"
    "  --max-body SIZE       request body limit; larger is refused (413) (default 1MiB)\n"
    "  --prefill-chunk N     prompt tokens computed per scheduling round (default 256)\n"
    "  --max-connections N   concurrent connections (default 64)\n"
    "  --request-timeout S   seconds a client has to send a whole request, headers and\n"
    "                        body; a slower one is cut off (default 10)\n"
    "  --shutdown-grace MS   on SIGINT/SIGTERM, let requests finish for MS (default 5000)\n"
    "  --temp T, --top-k K, --top-p P, --min-p P, --seed S\n"
    "                        sampling defaults for requests that do not set them\n"
    "\n"
    "engine options:\n";

static const cli_engine_note serve_notes[] = {
    {"ctx-size", "context length per request, at least 16 (default: the model's)"},
    {"kv-window", "refused by serve (see --kv-evict)"},
    {"kv-sinks", "refused by serve (see --kv-evict)"},
    {"kv-evict", "refused by serve: an evicting sequence's rows are private (never shared\n"
                 "through the prefix cache) and it cannot join batched steps; use it with\n"
                 "generate, perplexity or the agent"},
    {0, 0}};

static void usage(FILE *f) {
    fputs(serve_usage, f);
    cli_engine_usage(f, CLI_ENGINE_ALL, serve_notes);
}

typedef struct serve_opts {
    serve_params p;
    cli_engine e;
    const char *api_key_env;
    int grace_ms;
} serve_opts;

/* --- options -------------------------------------------------------------- */

enum {
    O_NAME = 256,
    O_HOST,
    O_PORT,
    O_KEY,
    O_PAR,
    O_QUEUE,
    O_MAXTOK,
    O_BODY,
    O_CHUNK,
    O_CONNS,
    O_GRACE,
    O_RTIMEOUT,
    O_TEMP,
    O_TOPK,
    O_TOPP,
    O_MINP,
    O_SEED,
    O_STRICT,
    O_HELP
};

/* One of serve's own options with its argument; returns 0 or an exit status. */
static int parse_one(serve_opts *o, int c, const char *a) {
    long l;
    double d;
    switch (c) {
    case O_NAME: o->p.model_name = a; return 0;
    case O_HOST: o->p.host = a; return 0;
    case O_STRICT: o->p.strict_model = 1; return 0;
    case O_KEY: o->api_key_env = a; return 0;
    case O_PORT: return cli_parse_int("--port", a, 0, 65535, &l) ? CLI_EXIT_USAGE : (o->p.port = (int)l, 0);
    case O_PAR:
        return cli_parse_int("--parallel", a, 1, 64, &l) ? CLI_EXIT_USAGE : (o->p.parallel = (int)l, 0);
    case O_QUEUE:
        return cli_parse_int("--max-queue", a, 0, 100000, &l) ? CLI_EXIT_USAGE : (o->p.max_queue = (int)l, 0);
    case O_MAXTOK:
        return cli_parse_int("--max-tokens", a, 1, 1 << 24, &l) ? CLI_EXIT_USAGE
                                                                : (o->p.max_tokens = (int)l, 0);
    case O_CHUNK:
        return cli_parse_int("--prefill-chunk", a, 1, 1 << 20, &l) ? CLI_EXIT_USAGE
                                                                   : (o->p.prefill_chunk = (int)l, 0);
    case O_CONNS:
        return cli_parse_int("--max-connections", a, 1, 10000, &l) ? CLI_EXIT_USAGE
                                                                   : (o->p.max_conns = (int)l, 0);
    case O_GRACE:
        return cli_parse_int("--shutdown-grace", a, 0, 3600000, &l) ? CLI_EXIT_USAGE
                                                                    : (o->grace_ms = (int)l, 0);
    case O_RTIMEOUT:
        return cli_parse_int("--request-timeout", a, 1, 3600, &l) ? CLI_EXIT_USAGE
                                                                  : (o->p.request_timeout = (int)l, 0);
    case O_TOPK:
        return cli_parse_int("--top-k", a, 0, INT_MAX, &l) ? CLI_EXIT_USAGE : (o->p.sp.top_k = (int)l, 0);
    case O_SEED:
        return cli_parse_int("--seed", a, 0, LONG_MAX, &l) ? CLI_EXIT_USAGE : (o->p.sp.seed = (uint64_t)l, 0);
    case O_TEMP:
        return cli_parse_float("--temp", a, 0, 100, &d) ? CLI_EXIT_USAGE : (o->p.sp.temp = (float)d, 0);
    case O_TOPP:
        return cli_parse_float("--top-p", a, 0, 1, &d) ? CLI_EXIT_USAGE : (o->p.sp.top_p = (float)d, 0);
    case O_MINP:
        return cli_parse_float("--min-p", a, 0, 1, &d) ? CLI_EXIT_USAGE : (o->p.sp.min_p = (float)d, 0);
    case O_BODY: return cli_parse_size("--max-body", a, &o->p.max_body);
    default: return CLI_EXIT_USAGE;
    }
}

/* Returns CLI_GO_ON, else the exit status. */
static int parse_opts(serve_opts *o, int argc, char **argv) {
    static const struct option own[] = {{"model-name", required_argument, 0, O_NAME},
                                        {"host", required_argument, 0, O_HOST},
                                        {"port", required_argument, 0, O_PORT},
                                        {"api-key-env", required_argument, 0, O_KEY},
                                        {"parallel", required_argument, 0, O_PAR},
                                        {"max-queue", required_argument, 0, O_QUEUE},
                                        {"max-tokens", required_argument, 0, O_MAXTOK},
                                        {"max-body", required_argument, 0, O_BODY},
                                        {"prefill-chunk", required_argument, 0, O_CHUNK},
                                        {"max-connections", required_argument, 0, O_CONNS},
                                        {"shutdown-grace", required_argument, 0, O_GRACE},
                                        {"temp", required_argument, 0, O_TEMP},
                                        {"request-timeout", required_argument, 0, O_RTIMEOUT},
                                        {"top-k", required_argument, 0, O_TOPK},
                                        {"top-p", required_argument, 0, O_TOPP},
                                        {"min-p", required_argument, 0, O_MINP},
                                        {"seed", required_argument, 0, O_SEED},
                                        {"strict-model", no_argument, 0, O_STRICT},
                                        {"help", no_argument, 0, O_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        if (c == O_HELP) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (c == '?' || c == ':') {
            fprintf(stderr, "cachet serve: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        if ((k = parse_one(o, c, optarg))) return k;
    }
    if (optind < argc) {
        fprintf(stderr, "cachet serve: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (o->e.mp.kv_window > 0 || o->e.mp.kv_sinks > 0 || o->e.mp.kv_evict != ENG_KV_EVICT_NONE) {
        fprintf(stderr, "cachet serve: '--kv-window', '--kv-sinks' and '--kv-evict' are not served: an "
                        "evicting sequence keeps its rows private (no prefix-cache sharing) and cannot join "
                        "batched steps; use them with generate, perplexity or the agent\n");
        return CLI_EXIT_USAGE;
    }
    int st = cli_engine_finish(&o->e, 1);
    o->p.model_path = o->e.path;
    o->p.mp = o->e.mp;
    o->p.spec = o->e.spec;
    o->p.n_ctx = o->e.n_ctx;
    return st;
}

/* Runs the server until SIGINT or SIGTERM. The signals are blocked in every
 * thread (masks are inherited, so this happens before any thread starts) and
 * taken here with sigwait. */
static int run(serve_opts *o, const sigset_t *sigs) {
    util_err err;
    util_err_clear(&err);
    serve_server *srv = NULL;
    if (serve_start(&srv, &o->p, &err)) {
        fprintf(stderr, "cachet serve: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    const char *host = o->p.host;
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr,
            "cachet serve: model '%s' (%d-token context, %d parallel, %s), listening on http://%s%s%s:%d\n",
            serve_model_id(srv), serve_n_ctx(srv), o->p.parallel, serve_backend(srv), v6 ? "[" : "", host,
            v6 ? "]" : "", serve_port(srv));
    fflush(stderr);
    int sig = 0;
    while (sigwait(sigs, &sig) != 0) {}
    fprintf(stderr, "cachet serve: %s, finishing requests (up to %d ms)\n", strsignal(sig), o->grace_ms);
    serve_stop(srv, o->grace_ms);
    serve_free(srv);
    return CLI_EXIT_OK;
}

int cli_cmd_serve(int argc, char **argv) {
    serve_opts o = {.grace_ms = 5000};
    serve_params_init(&o.p);
    int st = parse_opts(&o, argc, argv);
    if (st != CLI_GO_ON) return st;
    if (o.api_key_env) {
        o.p.api_key = getenv(o.api_key_env);
        if (!o.p.api_key || !*o.p.api_key) {
            fprintf(stderr, "cachet serve: --api-key-env: environment variable '%s' is not set or empty\n",
                    o.api_key_env);
            return CLI_EXIT_USAGE;
        }
    }
    if (strcmp(o.p.host, "127.0.0.1") != 0 && strcmp(o.p.host, "::1") != 0)
        fprintf(stderr, "cachet serve: warning: listening on %s, not loopback%s\n", o.p.host,
                o.p.api_key ? "" : ", without an API key");
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    signal(SIGPIPE, SIG_IGN); /* a client that left is an error return, not a signal */
    int rc = run(&o, &sigs);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
