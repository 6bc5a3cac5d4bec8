/* tests/test_layers.c: scripts/check-layers.sh on small trees planted in a
 * temporary directory: an upward #include, a sideways one, a generic engine file
 * reaching into engine/cpu (allowed only from the backend makers), a cycle by
 * #include, a cycle by symbols only (two objects calling each other through a
 * shared private header), a hand-declared upward call; what the allow file
 * turns into warnings; and a clean tree passing. The real tree is checked by
 * `make test` itself (the check-layers target), not here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proc.h"

/* Writes text to dir/rel, creating its folder. */
static void put(const char *dir, const char *rel, const char *text) {
    proc_result r = proc_runf("mkdir -p \"$(dirname '%s/%s')\" && printf '%%s' '%s' > '%s/%s'", dir, rel,
                              text, dir, rel);
    CHECK_MSG(r.status == 0, "write %s/%s: %s", dir, rel, r.err);
    proc_result_free(&r);
}

/* Runs the script on dir (objects under dir/build, the allow file dir/allow
 * when `allow`); returns its result. */
static proc_result layers(const char *dir, int allow) {
    return proc_runf("sh '%s/scripts/check-layers.sh' --root '%s' --build '%s/build' --allow '%s%s'",
                     check_root(), dir, dir, allow ? dir : "", allow ? "/allow" : "");
}

static int count_lines(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* A tree that follows every rule: exit 0 and nothing to say. */
static void test_clean(const char *dir) {
    put(dir, "util/u.h", "int u(void);\n");
    put(dir, "util/u.c", "#include \"u.h\"\nint u(void) { return 1; }\n");
    put(dir, "engine/e.h", "#include \"../util/u.h\"\nint e(void);\n");
    put(dir, "engine/e.c", "#include \"e.h\"\n#include \"model_impl.h\"\nint e(void) { return u(); }\n");
    put(dir, "engine/model_impl.h", "#include \"../util/u.h\"\n");
    put(dir, "engine/model.c", "#include \"model_impl.h\"\n#include \"cpu/k.h\"\n");
    put(dir, "engine/cpu/k.h", "#include \"../e.h\"\n");
    put(dir, "agent/a.c", "#include \"../engine/e.h\"\n");
    put(dir, "cli/c.c", "#include \"../agent/a.h\"\n#include \"../engine/e.h\"\n");
    proc_result r = layers(dir, 0);
    CHECK_MSG(r.status == 0 && !r.out[0], "a clean tree: exit %d: %s%s", r.status, r.out, r.err);
    proc_result_free(&r);
}

/* Includes that run upward or sideways, one line each, and exit 1. */
static void test_includes(const char *dir) {
    put(dir, "util/bad.c", "#include \"../engine/e.h\"\n");
    put(dir, "engine/up.c", "#include \"../agent/a.h\"\n");
    put(dir, "engine/quantx.c", "#include \"cpu/k.h\"\n");
    put(dir, "serve/s.c", "#include \"../cli/cli.h\"\n#include \"../agent/a.h\"\n");
    proc_result r = layers(dir, 0);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.out, "include util/bad.c engine/e.h: util/ depends on nothing"), "%s", r.out);
    CHECK_MSG(strstr(r.out, "include engine/up.c agent/a.h: engine/ must not depend on agent/"), "%s", r.out);
    CHECK_MSG(strstr(r.out, "include engine/quantx.c engine/cpu/k.h: the generic engine"), "%s", r.out);
    CHECK_MSG(strstr(r.out, "include serve/s.c cli/cli.h: serve/ must not depend on cli/"), "%s", r.out);
    CHECK_MSG(strstr(r.out, "include serve/s.c agent/a.h: agent/, serve/ and linter/ are peers"), "%s",
              r.out);
    CHECK_MSG(strstr(r.out, "engine/model.c") == NULL, "the backend maker was reported: %s", r.out);
    CHECK_EQ_INT(count_lines(r.out, "check-layers: include "), 5);
    CHECK(strstr(r.out, "5 violation(s)") != NULL);
    proc_result_free(&r);

    /* listed in the allow file: warnings, exit 0; a listed key not found is named */
    put(dir, "allow",
        "# planted\ninclude util/bad.c engine/e.h\ninclude engine/up.c agent/a.h  # why\n"
        "include engine/quantx.c engine/cpu/k.h\ninclude serve/s.c cli/cli.h\n"
        "include serve/s.c agent/a.h\ncycle engine/: gone away\n");
    r = layers(dir, 1);
    CHECK_MSG(r.status == 0, "all allowed: exit %d: %s", r.status, r.out);
    CHECK_EQ_INT(count_lines(r.out, "allowed (to be fixed): include "), 5);
    CHECK(strstr(r.out, "not found (remove it): cycle engine/: gone away") != NULL);
    proc_result_free(&r);
    put(dir, "allow", "include util/bad.c engine/e.h\n");
    r = layers(dir, 1);
    CHECK_EQ_INT(r.status, 1);
    CHECK(strstr(r.out, "4 violation(s)") != NULL);
    proc_result_free(&r);
    proc_result rm = proc_runf("cd '%s' && rm -f util/bad.c engine/up.c engine/quantx.c serve/s.c allow",
                               dir);
    proc_result_free(&rm);
}

/* Two modules including each other: the cycle and its edges are printed. */
static void test_include_cycle(const char *dir) {
    put(dir, "linter/x.h", "#include \"y.h\"\n");
    put(dir, "linter/x.c", "#include \"x.h\"\n");
    put(dir, "linter/y.h", "int y(void);\n");
    put(dir, "linter/y.c", "#include \"y.h\"\n#include \"x.h\"\n");
    put(dir, "linter/z.c", "#include \"y.h\"\n"); /* depends on the cycle, not part of it */
    proc_result r = layers(dir, 0);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(
        strstr(r.out, "check-layers: cycle linter/: x y: x -> y [#include \"y.h\"] -> x [#include \"x.h\"]"),
        "%s", r.out);
    CHECK_EQ_INT(count_lines(r.out, "cycle "), 1);
    proc_result_free(&r);
    proc_result rm = proc_runf("rm -rf '%s/linter'", dir);
    proc_result_free(&rm);
}

/* Callbacks through a shared private header: no include cycle, but p.o uses
 * q_cb from q.o and q.o uses p_run from p.o. And a call from util/ into the
 * engine through a prototype declared by hand, which no #include shows. */
static void test_symbols(const char *dir) {
    proc_result r = proc_runf("command -v cc && command -v nm");
    int have = r.status == 0;
    proc_result_free(&r);
    if (!have) {
        CHECK_SKIP("no cc or nm: the symbol checks did not run");
        return;
    }
    put(dir, "serve/pq_impl.h", "int p_run(int);\nint q_cb(int);\n");
    put(dir, "serve/p.c", "#include \"pq_impl.h\"\nint p_run(int x) { return x ? q_cb(x - 1) : 0; }\n");
    put(dir, "serve/q.c", "#include \"pq_impl.h\"\nint q_cb(int x) { return p_run(x); }\n");
    put(dir, "util/w.c", "int e(void);\nint w(void) { return e(); }\n");
    r = proc_runf(
        "cd '%s' && mkdir -p build/serve build/util build/engine && cc -c serve/p.c -o build/serve/p.o && "
        "cc -c serve/q.c -o build/serve/q.o && cc -c util/w.c -o build/util/w.o && "
        "cc -c engine/e.c -o build/engine/e.o && cc -c util/u.c -o build/util/u.o && "
        "cc -c -x c /dev/null -o build/serve/gone.o",
        dir);
    CHECK_MSG(r.status == 0, "cc: %s", r.err);
    proc_result_free(&r);
    r = layers(dir, 0);
    CHECK_EQ_INT(r.status, 1);
    CHECK_MSG(strstr(r.out, "cycle serve/: p q: p -> q [uses q_cb] -> p [uses p_run]"), "%s", r.out);
    CHECK_MSG(strstr(r.out, "symbol util/w.o engine/e.o: util/ depends on nothing outside util/ (e)"), "%s",
              r.out);
    CHECK_MSG(strstr(r.out, "gone") == NULL, "an object without a source was read: %s", r.out);
    CHECK(strstr(r.out, "2 violation(s)") != NULL);
    proc_result_free(&r);
}

/* Usage errors are exit 2. */
static void test_usage(const char *dir) {
    proc_result r = proc_runf("sh '%s/scripts/check-layers.sh' --bogus", check_root());
    CHECK_EQ_INT(r.status, 2);
    proc_result_free(&r);
    r = proc_runf("sh '%s/scripts/check-layers.sh' --root '%s' --allow '%s/no-such-file'", check_root(), dir,
                  dir);
    CHECK_EQ_INT(r.status, 2);
    CHECK(strstr(r.err, "no-such-file") != NULL);
    proc_result_free(&r);
}

void test_layers(void) {
    char dir[] = "/tmp/cachet-layers-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    test_clean(dir); /* the tree every case below adds to */
    CHECK_CASE(includes) test_includes(dir);
    CHECK_CASE(include_cycle) test_include_cycle(dir);
    CHECK_CASE(symbols) test_symbols(dir);
    CHECK_CASE(usage) test_usage(dir);
    proc_result r = proc_runf("rm -rf '%s'", dir);
    proc_result_free(&r);
}
