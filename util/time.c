/* util/time.c: the monotonic clock (see time.h). */
#include "time.h"

#include <time.h>

double util_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double util_now_s(void) { return util_now_ms() / 1e3; }
