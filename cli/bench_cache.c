/* cli/bench_cache.c: `cachet bench cache` (make bench-cache): what the
 * prefix cache buys on the real model, from one run: TTFT cold, warm from
 * memory, warm from disk in a new process, for a long shared prefix plus a
 * short new suffix; and prefill time at a 0% hit rate with the cache on versus
 * --no-cache (the cache's overhead). Prints a table or --json. */
#include <cjson/cJSON.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../util/path.h"
#include "cli.h"
#include "opts.h"

extern char **environ;

static const char bench_cache_usage[] =
    "usage: cachet bench cache [--prefix N] [--suffix N] [--reps N] [--json] [engine options]\n"
    "\n"
    "TTFT cold / warm from memory / warm from disk (new process) for a shared prefix of N tokens\n"
    "(default 2000) plus a new suffix (default 30), and prefill time at a 0% hit rate with the\n"
    "cache on versus --no-cache. Times are the best of --reps (at most 16, default 3).\n"
    "\n"
    "  --prefix N            shared prefix tokens (default 2000)\n"
    "  --suffix N            new suffix tokens (default 30)\n"
    "  --reps N              runs per figure, the best shown (default 3, at most 16)\n"
    "  --json                print one JSON object\n"
    "\n"
    "engine options:\n";

/* Each phase sets the caches itself. */
static const cli_engine_note bench_cache_notes[] = {
    {"ctx-size", "set by the measurement: prefix + suffix + 8 tokens"},
    {"no-cache", "set per phase: cold runs without the cache, warm runs with it"},
    {"no-disk-cache", "set per phase: the disk tier is measured in a new process"},
    {"kv-dir", "where the disk phase's temporary directory is made (default /tmp)"},
    {"spec", "not used: TTFT is prefill and one token"},
    {"spec-max", "not used"},
    {"spec-ngram", "not used"},
    {0, 0}};

static void usage(FILE *f) {
    fputs(bench_cache_usage, f);
    cli_engine_usage(f, CLI_ENGINE_ALL, bench_cache_notes);
}

enum { BC_MAX_REPS = 16 };

typedef struct bc_opts {
    cli_engine e;
    int prefix, suffix, reps, json;
    const char *phase_dir; /* internal: child process measuring the disk tier */
} bc_opts;

/* Deterministic token ids that stand for text: ordinary vocabulary ids, no
 * special tokens, a different stream per seed. */
static void make_tokens(int32_t *t, int n, uint64_t seed) {
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        t[i] = 200 + (int32_t)((seed >> 33) % 40000);
    }
}

static double ttft(eng_model *m, const int32_t *t, int n, int *cached, util_err *err) {
    eng_seq *s = NULL;
    if (eng_seq_new(&s, m, n + 8, err)) return -1;
    eng_gen_params gp = {.max_tokens = 1, .sample = eng_sample_defaults()};
    gp.sample.temp = 0;
    eng_gen_stats st;
    int rc = eng_generate(s, t, n, &gp, NULL, NULL, &st, err);
    eng_seq_free(s);
    if (cached) *cached = st.cached_tokens;
    return rc ? -1 : st.ttft_ms;
}

static eng_model *open_model(const bc_opts *o, const char *path, int no_cache, const char *dir,
                             util_err *err) {
    eng_model_params mp = o->e.mp;
    mp.no_cache = no_cache;
    mp.kv_dir = dir;
    mp.no_disk_cache = dir == NULL;
    eng_model *m = NULL;
    return eng_model_open(&m, path, &mp, err) ? NULL : m;
}

/* Child: a fresh process whose only warm tier is the disk. Prints "ttft cached". */
static int disk_phase(const bc_opts *o, const char *path) {
    util_err err;
    int n = o->prefix + o->suffix;
    int32_t *t = malloc((size_t)n * sizeof *t);
    make_tokens(t, o->prefix, 1);
    make_tokens(t + o->prefix, o->suffix, 3);
    eng_model *m = open_model(o, path, 0, o->phase_dir, &err);
    int cached = 0;
    double ms = m ? ttft(m, t, n, &cached, &err) : -1;
    if (ms < 0)
        fprintf(stderr, "cachet: %s\n", err.msg);
    else
        printf("%.3f %d\n", ms, cached);
    eng_model_free(m);
    free(t);
    return ms < 0;
}

static double run_child(const bc_opts *o, const char *path, const char *dir, int *cached) {
    char exe[PATH_MAX];
    if (util_exe_path(exe, sizeof exe, NULL)) return -1;
    char prefix[16], suffix[16], tmpl[] = "/tmp/cachet-bench-XXXXXX";
    snprintf(prefix, sizeof prefix, "%d", o->prefix);
    snprintf(suffix, sizeof suffix, "%d", o->suffix);
    int fd = mkstemp(tmpl);
    if (fd < 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
    /* the engine options that shape the disk phase, as given (--threads only
     * when given: 0, all cores, is not a value the option takes) */
    char threads[16], budget[32], disk_budget[32];
    snprintf(threads, sizeof threads, "%d", o->e.mp.n_threads);
    snprintf(budget, sizeof budget, "%llu", (unsigned long long)o->e.mp.kv_budget);
    snprintf(disk_budget, sizeof disk_budget, "%llu", (unsigned long long)o->e.mp.kv_disk_budget);
    char *argv[24] = {exe,        "bench",    "cache", "--model",  (char *)path,           "--prefix",
                      prefix,     "--suffix", suffix,  "--device", (char *)o->e.mp.device, "--phase-disk",
                      (char *)dir};
    int n = 13;
    if (o->e.mp.n_threads) argv[n++] = "--threads", argv[n++] = threads;
    if (o->e.mp.kv_budget) argv[n++] = "--kv-budget", argv[n++] = budget;
    if (o->e.mp.kv_disk_budget) argv[n++] = "--kv-disk-budget", argv[n++] = disk_budget;
    if (o->e.mp.exact) argv[n++] = "--exact";
    if (o->e.mp.debug) argv[n++] = "--debug";
    argv[n] = NULL;
    pid_t pid;
    int st = -1;
    double ms = -1;
    if (posix_spawn(&pid, exe, &fa, NULL, argv, environ) == 0 && waitpid(pid, &st, 0) == pid &&
        WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        FILE *f = fopen(tmpl, "r");
        if (f && fscanf(f, "%lf %d", &ms, cached) != 2) ms = -1;
        if (f) fclose(f);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    unlink(tmpl);
    return ms;
}

/* nftw callback: removes each entry, children first (no shell, so any
 * --kv-dir path is safe). */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static double min_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

/* Returns CLI_GO_ON, else the exit status. */
static int parse_bench_cache(bc_opts *o, int argc, char **argv) {
    enum { O_PREFIX = 1, O_SUFFIX, O_REPS, O_JSON, O_PHASE, O_HELP };
    static const struct option own[] = {{"prefix", required_argument, 0, O_PREFIX},
                                        {"suffix", required_argument, 0, O_SUFFIX},
                                        {"reps", required_argument, 0, O_REPS},
                                        {"json", no_argument, 0, O_JSON},
                                        {"phase-disk", required_argument, 0, O_PHASE},
                                        {"help", no_argument, 0, O_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        switch (c) {
        case O_PREFIX:
            if (cli_parse_int("--prefix", optarg, 16, 1 << 20, &v)) return CLI_EXIT_USAGE;
            o->prefix = (int)v;
            break;
        case O_SUFFIX:
            if (cli_parse_int("--suffix", optarg, 1, 4096, &v)) return CLI_EXIT_USAGE;
            o->suffix = (int)v;
            break;
        case O_REPS:
            if (cli_parse_int("--reps", optarg, 1, BC_MAX_REPS, &v)) return CLI_EXIT_USAGE;
            o->reps = (int)v;
            break;
        case O_JSON: o->json = 1; break;
        case O_PHASE: o->phase_dir = optarg; break;
        case O_HELP: usage(stdout); return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet bench cache: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet bench cache: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return cli_engine_finish(&o->e, 1);
}

int cli_cmd_bench_cache(int argc, char **argv) {
    bc_opts o = {.prefix = 2000, .suffix = 30, .reps = 3};
    int st = parse_bench_cache(&o, argc, argv);
    if (st != CLI_GO_ON) return st;
    const char *path = o.e.path;
    if (o.phase_dir) return disk_phase(&o, path);

    util_err err;
    util_err_clear(&err);
    int n = o.prefix + o.suffix;
    int32_t *t = malloc((size_t)n * sizeof *t);
    make_tokens(t, o.prefix, 1);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/cachet-bench-kv-XXXXXX", o.e.mp.kv_dir ? o.e.mp.kv_dir : "/tmp");
    if (!t || !mkdtemp(dir)) {
        fprintf(stderr, "cachet: cannot make a directory '%s'\n", dir);
        free(t);
        return CLI_EXIT_FAIL;
    }
    double cold[BC_MAX_REPS], warm[BC_MAX_REPS], off[BC_MAX_REPS], on[BC_MAX_REPS], mem_only[BC_MAX_REPS];
    int cached_mem = 0, cached_disk = 0, rc = CLI_EXIT_FAIL;
    eng_model *nc = open_model(&o, path, 1, NULL, &err), *wc = NULL, *mc = NULL;
    if (!nc) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        goto done;
    }
    /* one plain line per phase on stderr: the whole run takes minutes on a small CPU */
    fprintf(stderr, "cachet bench cache: cold, %d run%s of %d tokens without a cache\n", o.reps,
            o.reps == 1 ? "" : "s", n);
    /* Cold: no cache at all. */
    for (int r = 0; r < o.reps; r++) {
        make_tokens(t + o.prefix, o.suffix, 100 + (uint64_t)r);
        if ((cold[r] = ttft(nc, t, n, NULL, &err)) < 0) goto fail;
    }
    /* Warm from memory: the prefix was seen by an earlier request with another suffix. */
    fprintf(stderr, "cachet bench cache: warm from memory, %d run%s\n", o.reps, o.reps == 1 ? "" : "s");
    if (!(wc = open_model(&o, path, 0, dir, &err))) goto fail;
    make_tokens(t + o.prefix, o.suffix, 2);
    if (ttft(wc, t, n, NULL, &err) < 0) goto fail;
    for (int r = 0; r < o.reps; r++) {
        make_tokens(t + o.prefix, o.suffix, 200 + (uint64_t)r);
        if ((warm[r] = ttft(wc, t, n, &cached_mem, &err)) < 0) goto fail;
    }
    eng_model_flush_cache(wc);
    /* Warm from disk: a new process with the same --kv-dir. */
    fprintf(stderr, "cachet bench cache: warm from disk, in a new process\n");
    double disk = run_child(&o, path, dir, &cached_disk);
    /* 0% hit rate: fresh token streams, cache off vs on (tree only, then
     * tree + disk writes), interleaved so load changes hit all three alike. */
    fprintf(stderr, "cachet bench cache: 0%% hit rate, %d x 3 runs (no cache, tree only, tree + disk)\n",
            o.reps);
    if (!(mc = open_model(&o, path, 0, NULL, &err))) goto fail;
    for (int r = 0; r < o.reps; r++) {
        make_tokens(t, n, 1000 + (uint64_t)r);
        if ((off[r] = ttft(nc, t, n, NULL, &err)) < 0) goto fail;
        make_tokens(t, n, 2000 + (uint64_t)r);
        if ((mem_only[r] = ttft(mc, t, n, NULL, &err)) < 0) goto fail;
        make_tokens(t, n, 3000 + (uint64_t)r);
        if ((on[r] = ttft(wc, t, n, NULL, &err)) < 0) goto fail;
    }
    double c0 = min_of(cold, o.reps), w0 = min_of(warm, o.reps), f0 = min_of(off, o.reps),
           n0 = min_of(on, o.reps);
    double m0 = min_of(mem_only, o.reps);
    double overhead = (n0 - f0) / f0 * 100.0, tree_overhead = (m0 - f0) / f0 * 100.0;
    if (o.json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "prefix_tokens", o.prefix);
        cJSON_AddNumberToObject(j, "suffix_tokens", o.suffix);
        cJSON_AddNumberToObject(j, "threads", eng_model_n_threads(nc));
        cJSON_AddStringToObject(j, "backend", eng_model_backend(nc));
        cJSON_AddNumberToObject(j, "ttft_cold_ms", c0);
        cJSON_AddNumberToObject(j, "ttft_warm_memory_ms", w0);
        cJSON_AddNumberToObject(j, "ttft_warm_disk_ms", disk);
        cJSON_AddNumberToObject(j, "cached_tokens_memory", cached_mem);
        cJSON_AddNumberToObject(j, "cached_tokens_disk", cached_disk);
        cJSON_AddNumberToObject(j, "prefill_no_cache_ms", f0);
        cJSON_AddNumberToObject(j, "prefill_cache_0pct_ms", n0);
        cJSON_AddNumberToObject(j, "prefill_cache_memory_only_0pct_ms", m0);
        cJSON_AddNumberToObject(j, "tree_overhead_pct", tree_overhead);
        cJSON_AddNumberToObject(j, "overhead_pct", overhead);
        char *s = cJSON_PrintUnformatted(j);
        if (s) puts(s);
        free(s);
        cJSON_Delete(j);
    } else {
        printf("prefix cache, %d-token prefix + %d-token suffix, %d threads, %s, best of %d\n", o.prefix,
               o.suffix, eng_model_n_threads(nc), eng_model_backend(nc), o.reps);
        printf("  %-36s %10s %10s %8s\n", "", "TTFT ms", "cached", "of cold");
        printf("  %-36s %10.1f %10d %7.1f%%\n", "cold (no cache)", c0, 0, 100.0);
        printf("  %-36s %10.1f %10d %7.1f%%\n", "warm from memory", w0, cached_mem, w0 / c0 * 100);
        printf("  %-36s %10.1f %10d %7.1f%%\n", "warm from disk (new process)", disk, cached_disk,
               disk / c0 * 100);
        printf("  %-36s %10.1f\n", "0% hit rate, --no-cache", f0);
        printf("  %-36s %10.1f %+9.2f%%\n", "0% hit rate, tree only (overhead)", m0, tree_overhead);
        printf("  %-36s %10.1f %+9.2f%%\n", "0% hit rate, tree + disk writes", n0, overhead);
    }
    rc = CLI_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, "cachet: %s\n", err.msg);
done:
    eng_model_free(nc);
    eng_model_free(wc);
    eng_model_free(mc);
    free(t);
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "cachet: could not remove %s\n", dir);
    return rc;
}
