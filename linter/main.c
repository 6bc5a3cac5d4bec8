/* linter/main.c: promptlint command line (placeholder until the linter lands). */
#include <stdio.h>

int main(void) {
    fprintf(stderr, "promptlint: not built yet\n");
    return 2;
}
