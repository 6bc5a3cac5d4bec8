/* agent/main.c: the cachet command line (placeholder until the CLI lands). */
#include <stdio.h>

int main(void) {
    fprintf(stderr, "cachet: not built yet\n");
    return 2;
}
