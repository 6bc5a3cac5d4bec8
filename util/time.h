/* util/time.h: the one monotonic clock the parts read for timings (TTFT,
 * tokens/s, timeouts, benchmarks). Wall-clock time for people (dates in
 * prompts, session stamps) is not here: that belongs to its caller. */
#ifndef UTIL_TIME_H
#define UTIL_TIME_H

/* Milliseconds on CLOCK_MONOTONIC since an arbitrary point: only differences
 * mean anything. Thread-safe. */
double util_now_ms(void);

/* The same in seconds. */
double util_now_s(void);

#endif
