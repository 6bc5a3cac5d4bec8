# tests/tools/cases.awk: the runner's suite list from the test sources, one line
# per tests/test_NAME.c: TEST_SUITE(NAME, "case", "case", ) with the names of its
# CHECK_CASE(name) uses in order of first appearance (comment lines skipped).
# Run by the Makefile: awk -f tests/tools/cases.awk tests/test_a.c tests/test_b.c
function flush() { if (suite != "") print line ")" }
FNR == 1 {
    flush()
    suite = FILENAME
    sub(/^.*\/test_/, "", suite)
    sub(/\.c$/, "", suite)
    line = "TEST_SUITE(" suite ","
    split("", seen)
}
/^[ \t]*(\*|\/\*|\/\/)/ { next }
{
    rest = $0
    while (match(rest, /CHECK_CASE\([a-z0-9_]+\)/)) {
        c = substr(rest, RSTART + 11, RLENGTH - 12)
        if (!(c in seen)) { seen[c] = 1; line = line " \"" c "\"," }
        rest = substr(rest, RSTART + RLENGTH)
    }
}
END { flush() }
