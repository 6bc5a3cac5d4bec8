/* cli/main.c: the cachet command line: dispatches subcommands. No
 * arguments or options only: the agent (interactive, -p TASK, --resume);
 * prompt, sessions and stats inspect it; generate, tokenize, kv, perplexity,
 * serve and bench run the embedded engine directly. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "../util/version.h"
#include "cli.h"

static void usage(FILE *f) {
    fputs(
        "usage: cachet [options]               interactive agent in the current workspace\n"
        "       cachet -p TASK [--json]        one task, then exit\n"
        "       cachet --resume [ID]           continue a session\n"
        "       cachet --backend URL ...       the agent on an OpenAI-compatible server (cachet serve, vLLM,\n"
        "                                      SGLang, llama.cpp, OpenAI) instead of the embedded engine\n"
        "       cachet <command> [options]\n"
        "\n"
        "commands:\n"
        "  prompt     the assembled prompt, tiers marked, with token counts\n"
        "  sessions   list saved sessions\n"
        "  stats      cache hit rate, TTFT and cost per session ([ID | --all] [--json])\n"
        "  generate   generate text with the embedded engine (see cachet generate --help)\n"
        "  tokenize   print the token ids of a text, a file or stdin\n"
        "  detokenize write the bytes of token ids (arguments, a file or stdin)\n"
        "  kv         KV-cache bytes per token and tokens that fit in a memory size\n"
        "  perplexity perplexity of the model over a text file, as llama.cpp's llama-perplexity\n"
        "  info       what a GGUF model file is: architecture, parameters, tensor types, window\n"
        "  serve      OpenAI-compatible HTTP server on 127.0.0.1 (see cachet serve --help)\n"
        "  bench      speed side by side with llama.cpp; 'cachet bench cache': prefix cache TTFT;\n"
        "             'cachet bench serve': N clients against cachet serve and llama-server\n"
        "  version    the version and the commit built from (also --version)\n"
        "\n"
        "cachet --help-agent lists the agent's options; cachet <command> --help those of a command.\n",
        f);
}

int main(int argc, char **argv) {
    curl_global_init(CURL_GLOBAL_DEFAULT); /* before any thread: the agent's HTTP backend */
    if (argc < 2) return cli_cmd_agent(argc, argv);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        UTIL_PRINT_VERSION(stdout, "cachet");
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--help-agent") == 0) {
        char *h[] = {argv[0], "--help", NULL};
        return cli_cmd_agent(2, h);
    }
    if (cmd[0] == '-') return cli_cmd_agent(argc, argv);
    if (strcmp(cmd, "prompt") == 0) return cli_cmd_prompt(argc - 1, argv + 1);
    if (strcmp(cmd, "sessions") == 0) return cli_cmd_sessions(argc - 1, argv + 1);
    if (strcmp(cmd, "stats") == 0) return cli_cmd_stats(argc - 1, argv + 1);
    if (strcmp(cmd, "generate") == 0) return cli_cmd_generate(argc - 1, argv + 1);
    if (strcmp(cmd, "tokenize") == 0) return cli_cmd_tokenize(argc - 1, argv + 1);
    if (strcmp(cmd, "detokenize") == 0) return cli_cmd_detokenize(argc - 1, argv + 1);
    if (strcmp(cmd, "kv") == 0) return cli_cmd_kv(argc - 1, argv + 1);
    if (strcmp(cmd, "perplexity") == 0) return cli_cmd_perplexity(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0) return cli_cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0) return cli_cmd_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0 && argc > 2 && strcmp(argv[2], "cache") == 0)
        return cli_cmd_bench_cache(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0 && argc > 2 && strcmp(argv[2], "serve") == 0)
        return cli_cmd_bench_serve(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0) return cli_cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "cachet: unknown command '%s'\n", cmd);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
