/* cli/cmd_info.c: `cachet info MODEL`: what a GGUF file is: architecture,
 * parameter count, tensor types, context length, shape, RoPE bases, and the
 * sliding-window layer pattern and window. Reads metadata and the tensor
 * table only (eng_model_info_read); loads no weights, runs nothing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "../engine/engine.h"
#include "cli.h"

static const char info_usage[] =
    "usage: cachet info MODEL [--json]\n"
    "\n"
    "The architecture, parameter count, tensor types, context length, layer pattern\n"
    "(S: sliding-window layer, G: global) and window of a GGUF model file.\n";

static void print_json(const eng_model_info *in) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "architecture", in->arch);
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON_AddNumberToObject(o, "params", (double)in->n_params);
    cJSON_AddNumberToObject(o, "file_bytes", (double)in->file_bytes);
    cJSON_AddNumberToObject(o, "context_length", in->n_ctx_train);
    cJSON_AddNumberToObject(o, "vocab", in->n_vocab);
    cJSON_AddNumberToObject(o, "layers", in->shape.n_layer);
    cJSON_AddNumberToObject(o, "embedding", in->shape.n_embd);
    cJSON_AddNumberToObject(o, "heads", in->shape.n_head);
    cJSON_AddNumberToObject(o, "kv_heads", in->shape.n_kv_head);
    cJSON_AddNumberToObject(o, "head_dim", in->shape.head_dim);
    cJSON_AddNumberToObject(o, "ffn", in->shape.n_ff);
    cJSON_AddNumberToObject(o, "rope_base", in->rope_base);
    cJSON_AddNumberToObject(o, "window", in->shape.n_swa);
    cJSON_AddNumberToObject(o, "sliding_layers", in->shape.n_layer_swa);
    if (in->shape.n_swa > 0) cJSON_AddNumberToObject(o, "rope_base_sliding", in->rope_base_swa);
    cJSON_AddStringToObject(o, "layer_pattern", in->layer_pattern ? in->layer_pattern : "");
    cJSON *types = cJSON_AddArrayToObject(o, "tensor_types");
    for (int i = 0; i < in->n_types; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "type", in->types[i].name);
        cJSON_AddNumberToObject(t, "tensors", in->types[i].n_tensors);
        cJSON_AddNumberToObject(t, "params", (double)in->types[i].n_params);
        cJSON_AddNumberToObject(t, "bytes", (double)in->types[i].bytes);
        cJSON_AddItemToArray(types, t);
    }
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    cJSON_free(s);
    cJSON_Delete(o);
}

static void print_text(const char *path, const eng_model_info *in) {
    const eng_model_shape *sh = &in->shape;
    printf("model:        %s\n", path);
    printf("architecture: %s%s%s%s\n", in->arch, in->name[0] ? " (" : "", in->name, in->name[0] ? ")" : "");
    printf("parameters:   %llu (%.1fM), file %llu bytes\n", (unsigned long long)in->n_params,
           (double)in->n_params / 1e6, (unsigned long long)in->file_bytes);
    printf("context:      %d tokens (training), vocabulary %d\n", in->n_ctx_train, in->n_vocab);
    printf("shape:        %d layers, embedding %d, %d heads, %d kv heads, head dim %d, ffn %d\n", sh->n_layer,
           sh->n_embd, sh->n_head, sh->n_kv_head, sh->head_dim, sh->n_ff);
    if (sh->n_swa > 0) {
        printf("window:       %d positions on %d of %d layers (rope base %g; global layers %g)\n", sh->n_swa,
               sh->n_layer_swa, sh->n_layer, in->rope_base_swa, in->rope_base);
        printf("layers:       %s (S sliding, G global)\n", in->layer_pattern);
    } else {
        printf("window:       none: every layer attends to every position (rope base %g)\n", in->rope_base);
    }
    printf("tensor types:\n");
    for (int i = 0; i < in->n_types; i++)
        printf("  %-6s %4d tensors %12llu params %12llu bytes\n", in->types[i].name, in->types[i].n_tensors,
               (unsigned long long)in->types[i].n_params, (unsigned long long)in->types[i].bytes);
}

int cli_cmd_info(int argc, char **argv) {
    const char *path = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(info_usage, stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "cachet info: unexpected argument '%s'\n%s", argv[i], info_usage);
            return CLI_EXIT_USAGE;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "cachet info: give a model file\n%s", info_usage);
        return CLI_EXIT_USAGE;
    }
    eng_model_info in;
    util_err err;
    if (eng_model_info_read(path, &in, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        eng_model_info_release(&in);
        return CLI_EXIT_FAIL;
    }
    if (json)
        print_json(&in);
    else
        print_text(path, &in);
    eng_model_info_release(&in);
    return CLI_EXIT_OK;
}
