/* tests/test_lint_cli.c: the promptlint binary end to end: exit statuses
 * (0 clean, 1 findings, 2 usage/config errors), --strict, --select/--ignore,
 * --format json/sarif, --explain, stdin, colour switches and `diff`.
 * Uses $CACHET_BIN/promptlint, else bin/promptlint under the repository root. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "lint_yaml_select.h"

typedef struct cli_dir {
    char dir[64];
    char bin[4096];
} cli_dir;

/* Makes the folder name (relative, its parent existing) in d->dir. */
static void mkdir_in(const cli_dir *d, const char *name) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", d->dir, name);
    CHECK_MSG(mkdir(p, 0755) == 0, "mkdir '%s'", p);
}

static void put(const cli_dir *d, const char *name, const char *text) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", d->dir, name);
    FILE *f = fopen(p, "wb");
    CHECK_MSG(f != NULL, "write '%s'", p);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* Runs promptlint with args in d->dir; returns the exit status, *out the stdout. */
static int run(const cli_dir *d, const char *args, char **out) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >out.txt 2>err.txt", d->dir, d->bin, args);
    int st = system(cmd);
    if (out) {
        char p[256];
        size_t n;
        util_err err = {0};
        snprintf(p, sizeof p, "%s/out.txt", d->dir);
        if (util_read_file(out, &n, p, &err)) *out = strdup("");
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs promptlint with args in d->dir; checks its exit status and how many
 * files its JSON summary says it checked. */
static void check_files_checked(const cli_dir *d, const char *args, int status, int want) {
    char *out = NULL;
    CHECK_EQ_INT(run(d, args, &out), status);
    cJSON *j = cJSON_Parse(out);
    cJSON *sum = j ? cJSON_GetObjectItem(j, "summary") : NULL;
    cJSON *n = sum ? cJSON_GetObjectItem(sum, "files_checked") : NULL;
    CHECK_MSG(n && n->valueint == want, "promptlint %s: want %d files checked: %s", args, want, out);
    cJSON_Delete(j);
    free(out);
}

/* Runs promptlint with args in d->dir; checks how many files its JSON
 * summary says it skipped as kind key. */
static void check_skipped(const cli_dir *d, const char *args, const char *key, int want) {
    char *out = NULL;
    run(d, args, &out);
    cJSON *j = cJSON_Parse(out);
    cJSON *sum = j ? cJSON_GetObjectItem(j, "summary") : NULL;
    cJSON *n = sum ? cJSON_GetObjectItem(cJSON_GetObjectItem(sum, "skipped"), key) : NULL;
    CHECK_MSG(n && n->valueint == want, "promptlint %s: want %d skipped as %s: %s", args, want, key, out);
    cJSON_Delete(j);
    free(out);
}

static void test_commands(void) {
    cli_dir d;
    snprintf(d.dir, sizeof d.dir, "/tmp/promptlint-cli-XXXXXX");
    const char *b = getenv("CACHET_BIN");
    if (b && *b)
        snprintf(d.bin, sizeof d.bin, "%s/promptlint", b);
    else
        snprintf(d.bin, sizeof d.bin, "%s/bin/promptlint", check_root());
    if (d.bin[0] != '/') {
        char cwd[2048], tmp[4096];
        if (getcwd(cwd, sizeof cwd)) snprintf(tmp, sizeof tmp, "%s/%s", cwd, d.bin);
        snprintf(d.bin, sizeof d.bin, "%s", tmp);
    }
    if (access(d.bin, X_OK) != 0 || !mkdtemp(d.dir)) {
        CHECK_MSG(0, "no promptlint binary at '%s'", d.bin);
        return;
    }
    char *out = NULL;
    put(&d, "clean.md", "You are helpful.\nAnswer briefly.\n");
    put(&d, "bad.md", "Today is {{ date }}.\nYou are helpful.\nAnswer briefly.\n");
    put(&d, "warn.md", "You are helpful.\n\n<!-- cache-boundary -->\nTime: {{ now }}\n");
    CHECK_EQ_INT(run(&d, "--no-model clean.md", &out), 0);
    CHECK(strstr(out, "All checks passed") != NULL);
    free(out);
    CHECK_EQ_INT(run(&d, "--no-model bad.md", &out), 1);
    CHECK(strstr(out, "bad.md:1:10: error PL001") != NULL);
    free(out);
    CHECK_EQ_INT(run(&d, "--no-model warn.md", NULL), 0);
    CHECK_EQ_INT(run(&d, "--no-model --strict warn.md", NULL), 1);
    CHECK_EQ_INT(run(&d, "--no-model --ignore PL001 bad.md", NULL), 0);
    CHECK_EQ_INT(run(&d, "--no-model --select PL003 bad.md", NULL), 0);
    CHECK_EQ_INT(run(&d, "--no-model --exit-zero bad.md", NULL), 0);
    /* usage and config errors are 2 */
    CHECK_EQ_INT(run(&d, "--bogus", NULL), 2);
    CHECK_EQ_INT(run(&d, "--format xml bad.md", NULL), 2);
    CHECK_EQ_INT(run(&d, "--select PL999 bad.md", NULL), 2);
    CHECK_EQ_INT(run(&d, "missing.md", NULL), 2);
    put(&d, ".promptlint.json", "{\"selectt\": []}");
    CHECK_EQ_INT(run(&d, "--no-model bad.md", NULL), 2);
    CHECK_EQ_INT(run(&d, "--no-model --isolated bad.md", NULL), 1);
    put(&d, ".promptlint.json", "{\"ignore\": [\"PL001\"]}");
    CHECK_EQ_INT(run(&d, "--no-model bad.md", NULL), 0);
    put(&d, ".promptlint.json", "{}");
    /* json and sarif parse; --explain prints the rule's document */
    CHECK_EQ_INT(run(&d, "--no-model --format json bad.md", &out), 1);
    cJSON *j = cJSON_Parse(out);
    CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "findings")) == 1);
    cJSON_Delete(j);
    free(out);
    CHECK_EQ_INT(run(&d, "--no-model --format sarif bad.md", &out), 1);
    j = cJSON_Parse(out);
    CHECK(j && !strcmp(cJSON_GetObjectItem(j, "version")->valuestring, "2.1.0"));
    cJSON_Delete(j);
    free(out);
    CHECK_EQ_INT(run(&d, "--explain PL001", &out), 0);
    CHECK(strstr(out, "# PL001") && strstr(out, "## Fix"));
    free(out);
    CHECK_EQ_INT(run(&d, "--explain PL404", NULL), 2);
    CHECK_EQ_INT(run(&d, "--list-rules", &out), 0);
    CHECK(strstr(out, "PL007") != NULL);
    free(out);
    /* stdin, colour */
    CHECK_EQ_INT(run(&d, "--no-model --stdin-filename AGENTS.md - < bad.md", &out), 1);
    CHECK(strstr(out, "AGENTS.md:1:10") != NULL);
    free(out);
    CHECK_EQ_INT(run(&d, "--no-model --color always bad.md", &out), 1);
    CHECK(strchr(out, '\033') != NULL);
    free(out);
    CHECK_EQ_INT(run(&d, "--no-model --color never bad.md", &out), 1);
    CHECK(strchr(out, '\033') == NULL);
    free(out);
    /* directories: only prompt files are linted when walking (the three .md
     * files read like prompts; notes.txt does not) */
    put(&d, "notes.txt", "Today is {{ date }}.\nStable.\n");
    check_files_checked(&d, "--no-model --format json .", 1, 3);
    /* a command file kept outside .claude/commands/ is found by its
     * $ARGUMENTS; a shell note with $HOME is not a prompt */
    mkdir_in(&d, "tools");
    put(&d, "tools/review.md",
        "---\nmodel: claude-sonnet-4-0\n---\n# Review\n\n"
        "Review the code for: $ARGUMENTS\n\nCheck error handling and tests.\n");
    put(&d, "tools/shell.md", "# Shell\n\nSet $HOME and $ARGUMENTS_FILE before the build.\n");
    check_files_checked(&d, "--no-model --format json tools", 1, 1);
    /* documentation folders (docs/, adr/, workorders/ ...) hold writing about
     * the project: a decision record named for prompt construction and a
     * work order that names $ARGUMENTS are no prompts; a system prompt kept
     * there (it opens addressed to a model), a command with its front matter,
     * and whatever lies in a prompts folder below docs/ are */
    mkdir_in(&d, "proj");
    mkdir_in(&d, "proj/docs");
    mkdir_in(&d, "proj/docs/adr");
    mkdir_in(&d, "proj/docs/workorders");
    mkdir_in(&d, "proj/docs/prompts");
    mkdir_in(&d, "proj/docs/commands");
    put(&d, "proj/docs/adr/0007-system-prompt-layout.md",
        "# ADR 0007: System prompt layout\n\n## Status\n\nAccepted\n\n## Date\n\n2025-02-11\n\n"
        "## Context\n\nThe system prompt tells the assistant which tools it has. The user sees answers\n"
        "slow down when the prompt changes on every turn, and the model must respond within two seconds.\n\n"
        "## Decision\n\nYou must keep the instructions and the tool list first, never put the date\n"
        "before them, and always append the user's question last. The assistant reads the rules once.\n");
    put(&d, "proj/docs/workorders/12-command-loader.md",
        "# WO 12: load custom commands\n\n## Status: open\n\nScan the commands folder, register each file "
        "as a command\nand replace $ARGUMENTS with the text the user typed after it.\n\n## Done when\n\n"
        "A command file with $ARGUMENTS runs from the prompt.\n");
    put(&d, "proj/docs/system_prompt.md",
        "# Support bot\n\nYou are the support assistant of a bike shop.\nAnswer in two sentences.\n"
        "Today is {{ date }}.\n");
    put(&d, "proj/docs/prompts/triage.md",
        "Sort the ticket into repair, sale or question.\nTicket: {{ ticket }}\nAnswer with one word.\n");
    put(&d, "proj/docs/commands/review.md",
        "---\nallowed-tools: Bash(git diff:*)\n---\nReview the staged diff for missing tests.\n");
    put(&d, "proj/docs/README.md", "# Docs\n\nYou are reading the project's documentation.\n");
    check_files_checked(&d, "--no-model --exit-zero --format json proj", 0, 3);
    check_skipped(&d, "--no-model --exit-zero --format json proj", "document", 2);
    CHECK_EQ_INT(run(&d, "--no-model --exit-zero proj", &out), 0);
    CHECK_MSG(strstr(out, "3 files checked; skipped 3: 1 not prompts (by name, extension or content), 2 "
                          "documents (docs/, adr/ ...) not addressed to a model") != NULL,
              "summary: %s", out);
    free(out);
    /* the same choice for files named by a hook (--prompts-only) */
    check_files_checked(
        &d, "--no-model --exit-zero --format json --prompts-only proj/docs/adr/0007-system-prompt-layout.md",
        0, 0);
    /* an environment file (KEY=value lines, '#' comments, a quoted value over
     * several lines) kept in a prompts folder is no prompt; a prompt there
     * that shows a few such lines is */
    mkdir_in(&d, "envs");
    mkdir_in(&d, "envs/prompts");
    put(&d, "envs/prompts/keys.txt",
        "# staging\nSHOP_API_KEY=3f9c2a71-0b4e-4d8a-9c1f-5e6d7a8b9c0d\nexport SHOP_BASE_URL=https://shop.test/api\n"
        "SIGNING_KEY=\"-----BEGIN KEY-----\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n-----END KEY-----\"\n"
        "mail.sender=bot@shop.test\n");
    put(&d, "envs/prompts/setup-help.txt",
        "You help developers set up the shop's API client.\nTell them to put these lines in .env:\n"
        "SHOP_API_KEY=<their key>\nSHOP_BASE_URL=https://shop.test/api\nThen answer their question.\n");
    check_files_checked(&d, "--no-model --exit-zero --format json envs", 0, 1);
    /* prompts in other languages read like prompts too: a Chinese one by its
     * cues (用户, 你必须, 请, 不要), a German one by its opening ("Du bist");
     * a Chinese README (安装, 使用方法) does not */
    mkdir_in(&d, "intl");
    put(&d, "intl/客服.md",
        "# 角色\n\n本助手为在线商店回答用户的问题。\n\n## 规则\n\n- 请用简体中文回答。\n"
        "- 不要透露内部价格。\n- 你必须先确认订单号。\n- 始终保持礼貌。\n- 你应该在三句话内结束。\n");
    put(&d, "intl/reise.txt",
        "Du bist ein Assistent für ein Reisebüro.\nAntworte kurz und auf Deutsch.\n"
        "Nenne keine Preise, die nicht im Katalog stehen.\n");
    put(&d, "intl/说明.md",
        "# 照片整理工具\n\n本项目是一个命令行工具，用于整理照片。\n\n## 安装\n\n请先安装 Python 3。\n\n"
        "## 使用方法\n\n运行 `photos sort` 即可。用户可以在配置文件中修改目录，不要删除缓存文件。\n");
    check_files_checked(&d, "--no-model --exit-zero --format json intl", 0, 2);
    /* system prompts in German, French, Spanish, Portuguese, Italian and
     * Dutch without a "you are" opening read like prompts by their task or
     * role line ("Deine Aufgabe", "Ta mission", "Tu tarea", "Sua tarefa",
     * "Il tuo compito", "Je taak") or a rules heading with an answer line
     * ("## Regeln" + "Antworte"); a German README, a French changelog and a
     * Spanish README in the same languages do not */
    mkdir_in(&d, "eu");
    put(&d, "eu/kundendienst.md",
        "# Rolle\n"
        "\n"
        "Deine Aufgabe ist es, Fragen zu Bestellungen im Onlineshop zu beantworten.\n"
        "\n"
        "## Regeln\n"
        "\n"
        "- Antworte immer auf Deutsch und in höchstens drei Sätzen.\n"
        "- Nenne niemals interne Preise.\n"
        "- Frage den Kunden zuerst nach der Bestellnummer.\n");
    put(&d, "eu/boutique.md",
        "# Ta mission\n"
        "\n"
        "Aide les clients de la boutique à suivre leurs commandes.\n"
        "\n"
        "## Règles\n"
        "\n"
        "- Réponds toujours en français, en trois phrases au plus.\n"
        "- Ne jamais révéler les prix internes.\n"
        "- Demande d'abord le numéro de commande.\n");
    put(&d, "eu/soporte.txt",
        "Tu tarea es responder preguntas sobre pedidos de la tienda.\n"
        "\n"
        "Reglas:\n"
        "- Responde siempre en español y en tres frases como máximo.\n"
        "- Nunca reveles precios internos.\n"
        "- Pide primero el número de pedido.\n");
    put(&d, "eu/suporte.md",
        "Sua tarefa é responder a perguntas sobre pedidos da loja.\n"
        "\n"
        "## Regras\n"
        "\n"
        "- Responda sempre em português, em no máximo três frases.\n"
        "- Nunca revele preços internos.\n"
        "- Peça primeiro o número do pedido.\n");
    put(&d, "eu/assistenza.md",
        "Il tuo compito è rispondere alle domande sugli ordini del negozio.\n"
        "\n"
        "## Regole\n"
        "\n"
        "- Rispondi sempre in italiano, in al massimo tre frasi.\n"
        "- Non rivelare mai i prezzi interni.\n"
        "- Chiedi prima il numero dell'ordine.\n");
    put(&d, "eu/klantenservice.md",
        "Je taak is vragen over bestellingen in de webwinkel te beantwoorden.\n"
        "\n"
        "## Regels\n"
        "\n"
        "- Antwoord altijd in het Nederlands, in maximaal drie zinnen.\n"
        "- Noem nooit interne prijzen.\n"
        "- Vraag eerst naar het bestelnummer.\n");
    put(&d, "eu/LIESMICH.md",
        "# Fotosortierer\n"
        "\n"
        "Ein Kommandozeilenwerkzeug, das Fotos nach Datum sortiert.\n"
        "\n"
        "## Installation\n"
        "\n"
        "Zuerst Python 3 installieren, dann `pip install fotosort` ausführen.\n"
        "\n"
        "## Verwendung\n"
        "\n"
        "Führe `fotosort ordner/` aus. Die Dateien werden niemals gelöscht, immer nur verschoben.\n"
        "\n"
        "## Lizenz\n"
        "\n"
        "MIT\n");
    put(&d, "eu/CHANGELOG.fr.md",
        "# Journal des modifications\n"
        "\n"
        "## 1.2.0\n"
        "\n"
        "- Ajout de la commande `trier`.\n"
        "- Les fichiers ne sont jamais supprimés, toujours déplacés.\n"
        "- Correction d'un bug de dates.\n"
        "\n"
        "## 1.1.0\n"
        "\n"
        "- Première version publique. Réponds aux retours sur GitHub.\n");
    put(&d, "eu/LEEME.md",
        "# Ordenador de fotos\n"
        "\n"
        "Herramienta de línea de comandos que ordena fotos por fecha.\n"
        "\n"
        "## Instalación\n"
        "\n"
        "Instala Python 3 y luego ejecuta `pip install fotosort`.\n"
        "\n"
        "## Uso\n"
        "\n"
        "Ejecuta `fotosort carpeta/`. Los archivos nunca se borran, siempre se mueven.\n"
        "\n"
        "## Reglas de contribución\n"
        "\n"
        "Abre un issue antes de enviar cambios.\n");
    check_files_checked(&d, "--no-model --exit-zero --format json eu", 0, 6);
    /* templates: a Jinja or Mustache prompt made mostly of tag lines
     * (`{%- if x -%}`, `{# note #}`, `{{ label }}: {{ value }}`, `{{#items}}`)
     * or in XML sections (`<rules>`) is prose; an INI or YAML config template,
     * XML data and a Helm helper are not */
    mkdir_in(&d, "tpl");
    put(&d, "tpl/tag.v2.jinja",
        "You sort support tickets into queues: {{ queues|join(', ') }}.\n"
        "Answer with the name of one queue and nothing else.\n"
        "{# spacing #}\n{%- if queue_notes -%}\n{%- for q in queue_notes|sort -%}\n"
        "{{ q.name }}: {{ q.note }}\n{# spacing #}\n{%- endfor -%}\n{%- endif -%}\n"
        "{%- for ex in examples -%}\nTicket: {{ ex.text }}\nQueue: {{ ex.queue }}\n{%- endfor -%}\n"
        "Ticket: {{ ticket }}\nQueue:\n");
    put(&d, "tpl/enrich.mustache",
        "Rewrite the ticket below for the on-call engineer.\n{{#product}}\n"
        "The product is {{product}}.\n{{/product}}\n{{^product}}\nGuess the product from the text.\n"
        "{{/product}}\nKnown components:\n{{#components}}\n  - {{.}}\n{{/components}}\nTicket:\n{{ticket}}\n");
    put(&d, "tpl/review.j2",
        "<role>\nYou review pull requests for the billing service.\n</role>\n<rules>\n"
        "Point out every change that touches money rounding or currency codes.\n"
        "Ask for a test when a change to the ledger has none.\n</rules>\n<pr_number>{{ pr }}</pr_number>\n"
        "<diff>\n{{ diff }}\n</diff>\n");
    put(&d, "tpl/core-site.xml.j2",
        "<configuration>\n<property>\n<name>fs.defaultFS</name>\n<value>hdfs://{{ namenode }}:8020</value>\n"
        "</property>\n<property>\n<name>hadoop.tmp.dir</name>\n<value>{{ tmp_dir }}</value>\n</property>\n"
        "</configuration>\n");
    put(&d, "tpl/client.cnf.j2",
        "{{ managed_by | comment }}\n\n[client]\nuser=\"{{ db_user }}\"\n"
        "{% if use_socket %}\nsocket={{ db_socket }}\n{% else %}\npassword=\"{{ db_password }}\"\n"
        "{% endif %}\nmax_allowed_packet: {{ packet_size }}\n");
    put(&d, "tpl/_helpers.tpl",
        "{{- /*\nPrints the release name and the chart version, trimmed to the\n"
        "length that labels allow.\n*/ -}}\n{{- define \"app.ref\" -}}\n"
        "{{- printf \"%s-%s\" .Release.Name .Chart.Version | trunc 63 -}}\n{{- end -}}\n");
    /* named like code or config (`.sh.j2`, `.yaml.j2`), or a script (#!): not
     * prompts whatever they say */
    put(&d, "tpl/notify.sh.j2",
        "echo \"You are on call this week. Answer the pager within five minutes.\"\n"
        "echo \"Write down what you did in the incident log.\"\n"
        "echo \"Hand over to {{ next_oncall }} on Monday.\"\n");
    put(&d, "tpl/run.j2",
        "#!/bin/sh\n# Start the worker. It reads the queue named below and exits on error.\n"
        "exec worker --queue {{ queue }} --retries 3\n");
    /* a project file rendered from a template (README.md.tmpl) is no prompt;
     * a template named by a word that also names a prompt part is judged by
     * its text */
    put(&d, "tpl/README.md.tmpl",
        "# {{ .ProjectName }}\n\nThis agent was generated for {{ .Owner }}. You must set the API key\n"
        "before the first run. Respond to issues within a week.\n\n## Running\n\nRun `make run` and open "
        "the page it prints.\nThe user guide lives in docs/.\n");
    put(&d, "tpl/history.j2",
        "You summarise a support conversation for the next agent on shift.\n"
        "Keep every promise the customer was given and every open question.\n"
        "Write at most five bullet points, oldest first.\n{% for m in turns %}\n{{ m.who }}: {{ m.text }}\n"
        "{% endfor %}\n");
    check_files_checked(&d, "--no-model --exit-zero --format json tpl", 0, 4);
    /* ERB, Velocity and StringTemplate files are mostly pages, mail and
     * code: prompts by their text (system.txt.erb), or by a name that says
     * prompt; never a page (index.html.erb) nor mail that reads like none */
    mkdir_in(&d, "eng");
    put(&d, "eng/system.txt.erb",
        "Today is <%= Date.today %>.\nYou are the support assistant of a bike shop. Answer questions about "
        "orders politely.\nAlways reply in English and never reveal internal notes.\n");
    put(&d, "eng/index.html.erb",
        "<h1>You are welcome here</h1>\n<p>Always reply to <%= @user.name %> within a day. Never share "
        "passwords.</p>\n");
    put(&d, "eng/shipped.vm", "#set($n = 1)\nDear $customer.name, your order $order.id has shipped.\n");
    put(&d, "eng/answer_prompt.st",
        "Answer the question below from the documents only.\nQuestion: <question>\nDocuments: "
        "<documents>\n");
    check_files_checked(&d, "--no-model --exit-zero --format json eng", 0, 2);
    /* a log (a third of its lines open with a date and time), say a recorded
     * tool output kept as a test fixture, is no prompt even when it quotes
     * one; a prompt with a few dated lines is */
    mkdir_in(&d, "logs");
    put(&d, "logs/worker.txt",
        "{\"tool\": \"tail_logs\", \"params\": {\"service\": \"billing\"}}\n"
        "\033[32m2024-11-02 09:14:01.220 INFO  worker started\033[0m\n"
        "\033[32m2024-11-02 09:14:01.305 INFO  loading prompt\033[0m\n"
        "  \"content\": \"You are a billing assistant. You must answer the user in English.\"\n"
        "\033[33m2024-11-02 09:14:02.001 WARN  retrying request 1f6a2c0e-55aa-4c1e-9b0d-2f5e8c7a9d10\033[0m\n"
        "[2024/11/02T09:14:03 INFO  respond to user queued]\n"
        "2024-11-02 09:14:04,118 INFO  the user asked about invoice 7741\n"
        "  at handler (worker.js:88)\n  at queue (worker.js:12)\n"
        "2024-11-02 09:14:05 ERROR timeout\n2024-11-02 09:14:06 INFO  done\n");
    put(&d, "logs/oncall.txt",
        "You are the on-call assistant for the payments team. Answer the user in two sentences.\n"
        "Shifts this week:\n2024-11-04 08:00 Dana\n2024-11-05 08:00 Lee\n"
        "You must never page anyone outside their shift.\nRespond with the name of the engineer to page.\n"
        "Say so when nobody is on shift.\nKeep a friendly tone.\nDo not guess.\nQuote the shift you used.\n"
        "End with the time you checked.\n");
    check_files_checked(&d, "--no-model --exit-zero --format json logs", 0, 1);
    /* prompts kept as data (YAML, JSON, TOML): read where the path or name
     * says prompts and a prompt key's text is addressed to a model; model
     * settings, package.json, a Kubernetes manifest and data elsewhere are not */
    mkdir_in(&d, "data");
    mkdir_in(&d, "data/prompts");
    put(&d, "data/prompts/triage.yaml",
        "- role: system\n  content: |\n    You are the triage assistant for a bike repair shop.\n"
        "    Sort each request into repair, sale or question. Never promise a price.\n"
        "- role: user\n  content: |\n    {request}\n");
    put(&d, "data/prompts/recap.yaml",
        "name: recap\nprompt: |\n  Write a three-line recap of the meeting notes below for the team.\n"
        "  Always answer in plain sentences, do not use bullet points, and keep names as written.\n"
        "  Notes: {notes}\n");
    put(&d, "data/prompts/config.yaml",
        "model: gpt-4o-mini\ntemperature: 0.2\nmax_tokens: 512\nstop: [\"###\"]\n");
    put(&d, "data/prompts/package.json",
        "{\"name\": \"shop-prompts\", \"version\": \"1.0.0\",\n"
        " \"description\": \"You are looking at the prompts of the shop; always run the tests.\",\n"
        " \"scripts\": {\"test\": \"node test.js\"}}\n");
    put(&d, "data/prompts/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: triage\nspec:\n  template:\n"
        "    metadata:\n      labels:\n        app: triage\n    spec:\n      containers:\n"
        "        - name: triage\n          image: shop/triage:1.4\n          args: [\"--answer\", \"always\"]\n");
    put(&d, "data/shop_prompts.json",
        "[{\"role\": \"system\", \"content\": \"You are the shop's assistant. Answer the user's question "
        "in two sentences and never quote prices.\"},\n {\"role\": \"user\", \"content\": \"{question}\"}]\n");
    put(&d, "data/messages.json",
        "[{\"role\": \"system\", \"content\": \"You are the shop's assistant. Answer the user's question "
        "in two sentences and never quote prices.\"}]\n");
    check_files_checked(&d, "--no-model --exit-zero --format json data", 0, 3);
    /* YAML elsewhere: read by content, the same set --staged picks (test_lint_git.c) */
    int want = 0;
    for (size_t i = 0; i < sizeof k_yaml_sel / sizeof *k_yaml_sel; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s", k_yaml_sel[i].path);
        for (char *c = strchr(p, '/'); c; c = strchr(c + 1, '/')) {
            *c = '\0';
            char full[512];
            snprintf(full, sizeof full, "%s/%s", d.dir, p);
            mkdir(full, 0755);
            *c = '/';
        }
        put(&d, k_yaml_sel[i].path, k_yaml_sel[i].text);
        want += k_yaml_sel[i].prompt;
    }
    check_files_checked(&d, "--no-model --exit-zero --format json pipelines", 0, want);
    /* diff */
    put(&d, "a.txt", "You are helpful.\nToday is 2025-03-03.\nRules.\n");
    put(&d, "b.txt", "You are helpful.\nToday is 2025-03-04.\nRules.\n");
    CHECK_EQ_INT(run(&d, "diff --no-model a.txt b.txt", &out), 1);
    CHECK(strstr(out, "line 2, column 19") && strstr(out, "date '2025-03-04'"));
    free(out);
    CHECK_EQ_INT(run(&d, "diff --no-model a.txt a.txt", NULL), 0);
    CHECK_EQ_INT(run(&d, "diff a.txt", NULL), 2);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d.dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove '%s'\n", d.dir);
}

void test_lint_cli(void) { CHECK_CASE(commands) test_commands(); }
