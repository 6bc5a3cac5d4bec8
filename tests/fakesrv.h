/* tests/fakesrv.h: a fake OpenAI-compatible server for tests: a thread in the
 * test process on a free loopback port answering each connection with the
 * next canned answer (raw HTTP bytes, so answers can be as hostile as a test
 * wants: malformed JSON, crafted tool calls, endless streams, stalls) and
 * keeping what each request sent. Helpers build the usual answers: SSE text,
 * SSE tool calls. One request per connection (answers say Connection: close),
 * which is what the agent's HTTP backend does with them. Not a real server:
 * no keep-alive, no routing. */
#ifndef TESTS_FAKESRV_H
#define TESTS_FAKESRV_H

#include <pthread.h>
#include <stddef.h>

#define FAKE_STALL "STALL" /* read the request, answer nothing until the client leaves */
#define FAKE_MAX   64

/* Writes the answer for a connection to fd; returns nonzero to stop early
 * (used for answers too large to build in memory). */
typedef int (*fake_gen_fn)(void *user, int fd);

typedef struct fake {
    int fd, port;
    pthread_t th;
    char *answers[FAKE_MAX]; /* owned copies */
    fake_gen_fn gen[FAKE_MAX];
    void *gen_user[FAKE_MAX];
    int n_answers;
    pthread_mutex_t mu;
    int stop, served;
    double t[FAKE_MAX];
    char *req[FAKE_MAX]; /* what each connection sent (headers and body) */
} fake;

/* Listens on a free loopback port with n answers (copied), one per
 * connection in order; connections past the last get "599 No More". */
int fake_start(fake *f, int n, ...);
/* The same from an array. */
int fake_start_v(fake *f, int n, const char *const *answers);
/* Before fake_start_v/fake_start has been called on f: set answer i to be
 * produced by gen (for streams of any size). Call fake_init first. */
void fake_init(fake *f);
void fake_set_gen(fake *f, int i, fake_gen_fn gen, void *user);
int fake_listen(fake *f, int n); /* starts a fake_init'ed f with n answers */
/* Stops the thread and closes the socket (the requests stay readable). */
void fake_stop(fake *f);
/* Frees the answers and what the connections sent. */
void fake_release(fake *f);

/* The number of connections served so far (thread-safe). */
int fake_served(fake *f);

/* A complete answer with a Content-Length: malloc'd, caller frees. */
char *fake_answer(const char *status, const char *headers, const char *body);
/* An SSE answer whose assistant content is text (JSON-escaped here) with
 * finish_reason "stop" and a usage chunk: malloc'd. */
char *fake_sse_text(const char *text);
/* An SSE answer carrying one OpenAI-style tool call of `name` with its
 * arguments (a JSON text, escaped here), finish_reason "tool_calls": malloc'd. */
char *fake_sse_tool(const char *name, const char *args_json);

extern const char fake_sse_head[];

#endif
