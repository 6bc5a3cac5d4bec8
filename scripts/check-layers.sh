#!/bin/sh
# scripts/check-layers.sh (make check-layers, run by make test): the one-way
# data flow between the parts, checked on the sources and the objects just built.
#   cli -> agent / serve / linter -> engine -> util   (engine/cpu, engine/cuda inside engine)
# Fails (exit 1, one line per violation) on
#   include  an #include that runs upward or sideways: util/ -> anything else;
#            engine/ -> agent/ serve/ cli/ linter/; agent/ serve/ linter/ -> cli/;
#            agent <-> serve <-> linter; engine/cpu <-> engine/cuda; and engine/*.c
#            (the generic layer) -> engine/cpu/ or engine/cuda/ except from the
#            files that create backends (BACKEND_MAKERS below);
#   symbol   the same rules on symbols: an object with an undefined symbol that
#            an object of a forbidden folder defines (nm on BUILD/<folder>/*.o),
#            so a prototype declared by hand does not get round them;
#   cycle    a cycle between the modules of one folder (module: X.c + X.h, or a
#            header alone such as X_impl.h) by #include and by symbols (A.o uses
#            a symbol B.o defines => A depends on B), printed edge by edge.
# Violations listed in the allow file (one key a line, `#` comments) are reported
# as "allowed (to be fixed)" and do not fail; listed keys no longer found are
# reported so the list can shrink. It does not check tests/ or anything outside
# the folders named above. POSIX sh, awk and nm; no Python.
#
# usage: check-layers.sh [--root DIR] [--build DIR] [--allow FILE]
#   --root   the source tree (default: the repository holding this script)
#   --build  the object tree, BUILD of the Makefile (default: ROOT/build); objects
#            that are missing are not checked (the include rules still are)
#   --allow  the allow file (default: ROOT/scripts/layers.allow; "" for none)
# Exit: 0 clean (allowed violations included), 1 violations, 2 usage error.
set -u

BACKEND_MAKERS="engine/model engine/backend" # generic-layer modules that may name a backend
FOLDERS="util engine engine/cpu engine/cuda agent serve linter cli"

root=$(cd "$(dirname "$0")/.." && pwd)
build=
allow=
allow_set=0
while [ $# -gt 0 ]; do
    case $1 in
    --root) [ $# -ge 2 ] || { echo "check-layers: --root needs a directory" >&2; exit 2; }; root=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || { echo "check-layers: --build needs a directory" >&2; exit 2; }; build=$2; shift 2 ;;
    --allow) [ $# -ge 2 ] || { echo "check-layers: --allow needs a file" >&2; exit 2; }; allow=$2; allow_set=1; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-layers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -d "$root" ] || { echo "check-layers: no directory '$root'" >&2; exit 2; }
# --build and --allow are taken from the caller's directory, the sources from ROOT
[ -n "$build" ] || build=$root/build
[ "$allow_set" = 1 ] || allow=$root/scripts/layers.allow
if [ -n "$allow" ] && [ ! -r "$allow" ]; then
    echo "check-layers: cannot read the allow file '$allow'" >&2
    exit 2
fi
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
case $allow in /* | "") ;; *) allow=$(pwd)/$allow ;; esac
cd "$root" || exit 2
command -v nm >/dev/null 2>&1 || echo "check-layers: no nm: only the #include rules are checked" >&2

# One record a line for the checker below:
#   I FILE TARGET   FILE has #include "..." resolving to TARGET (both relative to ROOT)
#   D OBJ SYM       OBJ (relative to BUILD, e.g. engine/seq.o) defines SYM
#   U OBJ SYM       OBJ uses SYM without defining it
#   A KEY           an allow-file entry
records() {
    files=
    for d in $FOLDERS; do
        for f in "$d"/*.c "$d"/*.h "$d"/*.cu; do
            [ -f "$f" ] && files="$files $f"
        done
    done
    # shellcheck disable=SC2086 # file names without blanks, split on purpose
    [ -n "$files" ] && awk '
        function norm(p,    n, i, k, parts, out) {
            n = split(p, parts, "/")
            k = 0
            for (i = 1; i <= n; i++) {
                if (parts[i] == "." || parts[i] == "") continue
                if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
                out[++k] = parts[i]
            }
            p = ""
            for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
            return p
        }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            t = $0
            sub(/^[^"]*"/, "", t)
            sub(/".*$/, "", t)
            d = FILENAME
            if (sub(/\/[^\/]*$/, "", d) == 0) d = "."
            print "I", FILENAME, norm(d "/" t)
        }' $files
    for d in $FOLDERS; do
        for o in "$build/$d"/*.o; do
            [ -f "$o" ] || continue
            # an object left behind by a source that moved or went away is not the program
            stem=${o##*/}
            stem=${stem%.o}
            [ -f "$d/$stem.c" ] || [ -f "$d/$stem.cu" ] || continue
            nm -P "$o" 2>/dev/null | awk -v obj="$d/${o##*/}" '
                $2 == "U" || $2 == "w" || $2 == "v" { print "U", obj, $1; next }
                $2 ~ /^[BCDGRSTVWi]$/ { print "D", obj, $1 }'
        done
    done
    if [ -n "$allow" ]; then
        sed -e 's/#.*//' -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' "$allow" |
            awk 'NF { print "A", $0 }'
    fi
}

records | awk -v makers="$BACKEND_MAKERS" '
function folder(p) { sub(/\/[^\/]*$/, "", p); return p }
function part(p) { sub(/\/.*$/, "", p); return p }
function module(p) { sub(/\.[a-z]*$/, "", p); return p } # engine/seq.c, engine/seq.o -> engine/seq
function base(p) { sub(/^.*\//, "", p); return p }
function known(f) { return f in layered }
# Why the dependency of a file (or object) in folder ff on folder ft breaks the
# flow, or "" when it does not; m is the source module (engine/model).
function why(ff, ft, m,    pf, pt) {
    if (ff == ft || !known(ff) || !known(ft)) return ""
    pf = part(ff); pt = part(ft)
    if (pf == "util") return "util/ depends on nothing outside util/"
    if (pf == "engine" && pt != "engine" && pt != "util")
        return "engine/ must not depend on " pt "/ (the flow is cli -> agent/serve/linter -> engine -> util)"
    if (pt == "cli") return pf "/ must not depend on cli/ (cli is the top)"
    if ((pf == "agent" || pf == "serve" || pf == "linter") && (pt == "agent" || pt == "serve" || pt == "linter"))
        return "agent/, serve/ and linter/ are peers and never depend on each other"
    if ((ff == "engine/cpu" && ft == "engine/cuda") || (ff == "engine/cuda" && ft == "engine/cpu"))
        return "the cpu and cuda backends never depend on each other"
    if (ff == "engine" && (ft == "engine/cpu" || ft == "engine/cuda") && !(m in maker))
        return "the generic engine reaches " ft "/ only from the files that create backends (" makers ")"
    return ""
}
function report(key, msg) {
    if (key in seen) return
    seen[key] = 1
    if (key in allowed) { used[key] = 1; print "check-layers: allowed (to be fixed): " key ": " msg; return }
    print "check-layers: " key ": " msg
    bad++
}
function edge(a, b, ev) { # module a depends on module b (same folder)
    if (a == b) return
    if (!((a, b) in has)) { has[a, b] = 1; adj[a] = adj[a] " " b; evid[a, b] = ev }
    node[a] = 1; node[b] = 1
}
function tarjan(v,    i, n, w, list, members, cnt) {
    idx[v] = low[v] = ++counter
    stack[++sp] = v; onstack[v] = 1
    n = split(adj[v], list, " ")
    for (i = 1; i <= n; i++) {
        w = list[i]
        if (!(w in idx)) { tarjan(w); if (low[w] < low[v]) low[v] = low[w] }
        else if (onstack[w] && idx[w] < low[v]) low[v] = idx[w]
    }
    if (low[v] != idx[v]) return
    cnt = 0
    do { w = stack[sp--]; onstack[w] = 0; comp[w] = v; mem[++cnt] = w } while (w != v)
    if (cnt > 1) cycle(cnt)
}
function cycle(cnt,    i, j, t, s, key, q, head, tail, cur, n, list, k, w, par, path, f, chain, depth, prev) {
    for (i = 2; i <= cnt; i++) # insertion sort: the key lists the members in order
        for (j = i; j > 1 && mem[j - 1] > mem[j]; j--) { t = mem[j]; mem[j] = mem[j - 1]; mem[j - 1] = t }
    f = folder(mem[1])
    key = "cycle " f "/:"
    for (i = 1; i <= cnt; i++) key = key " " base(mem[i])
    # the shortest way from the first member back to itself, inside the component
    s = mem[1]; head = 1; tail = 0; q[++tail] = s; par[s] = ""
    while (head <= tail) {
        cur = q[head++]
        n = split(adj[cur], list, " ")
        for (k = 1; k <= n; k++) {
            w = list[k]
            if (comp[w] != comp[s]) continue
            if (w == s) { tail = -1; break }
            if (!(w in par)) { par[w] = cur; q[++tail] = w }
        }
        if (tail < 0) break
    }
    depth = 0
    for (w = cur; w != s; w = par[w]) chain[++depth] = w
    path = base(s)
    prev = s
    for (k = depth; k >= 1; k--) { path = path " -> " base(chain[k]) " [" evid[prev, chain[k]] "]"; prev = chain[k] }
    report(key, path " -> " base(s) " [" evid[prev, s] "]")
}
BEGIN {
    n = split("util engine engine/cpu engine/cuda agent serve linter cli", l, " ")
    for (i = 1; i <= n; i++) layered[l[i]] = 1
    n = split(makers, l, " ")
    for (i = 1; i <= n; i++) maker[l[i]] = 1
}
$1 == "A" { k = $0; sub(/^A /, "", k); allowed[k] = 1; next }
$1 == "I" { inc[++ni] = $2 " " $3; next }
$1 == "D" { if (!($3 in def)) def[$3] = $2; next }
$1 == "U" { use[++nu] = $2 " " $3; next }
END {
    for (i = 1; i <= ni; i++) {
        split(inc[i], r, " ")
        w = why(folder(r[1]), folder(r[2]), module(r[1]))
        if (w != "") report("include " r[1] " " r[2], w)
        if (known(folder(r[1])) && folder(r[1]) == folder(r[2]))
            edge(module(r[1]), module(r[2]), "#include \"" base(r[2]) "\"")
    }
    for (i = 1; i <= nu; i++) {
        split(use[i], r, " ")
        if (!(r[2] in def)) continue # libc, libraries
        o = def[r[2]]
        w = why(folder(r[1]), folder(o), module(r[1]))
        if (w != "") report("symbol " r[1] " " o, w " (" r[2] ")")
        if (folder(r[1]) == folder(o)) edge(module(r[1]), module(o), "uses " r[2])
    }
    for (v in node) if (!(v in idx)) tarjan(v)
    for (k in allowed)
        if (!(k in used)) print "check-layers: listed in the allow file but not found (remove it): " k
    if (bad) { print "check-layers: " bad " violation(s) of the one-way flow"; exit 1 }
}'
