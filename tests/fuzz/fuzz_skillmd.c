/* tests/fuzz/fuzz_skillmd.c: libFuzzer target for SKILL.md frontmatter
 * (util/skillmd.c on libyaml): the first byte picks the folder name the skill
 * is checked against, the rest is the file. Seeds: tests/fuzz/corpus/skillmd.
 * Build: make fuzz. Not part of the test runner. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../util/skillmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const folders[] = {NULL, "", "demo", "pdf-tools"};
    if (size < 1) return 0;
    util_skillmd s;
    if (util_skillmd_check(&s, (const char *)data + 1, size - 1, folders[data[0] % 4], NULL) != 0) return 0;
    for (size_t i = 0; i < s.n_problems; i++) sink += s.problems[i].line;
    util_skillmd_release(&s);
    return 0;
}
