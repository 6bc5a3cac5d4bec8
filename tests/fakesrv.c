/* tests/fakesrv.c: the fake OpenAI-compatible server (see fakesrv.h). */
#include "fakesrv.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/time.h"

const char fake_sse_head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

static int stopping(fake *f) {
    pthread_mutex_lock(&f->mu);
    int s = f->stop;
    pthread_mutex_unlock(&f->mu);
    return s;
}

/* Reads headers and a Content-Length body. */
static char *read_request(int c) {
    util_buf b;
    util_buf_init(&b);
    char tmp[4096];
    long need = -1;
    for (;;) {
        struct pollfd p = {c, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) break;
        ssize_t k = recv(c, tmp, sizeof tmp, 0);
        if (k <= 0) break;
        util_buf_append(&b, tmp, (size_t)k);
        const char *end = strstr(b.data, "\r\n\r\n");
        if (end && need < 0) {
            const char *cl = strcasestr(b.data, "content-length:");
            need = (long)(end + 4 - b.data) + (cl && cl < end ? strtol(cl + 15, NULL, 10) : 0);
        }
        if (need >= 0 && (long)b.len >= need) break;
    }
    util_buf_append(&b, "", 0);
    return util_buf_detach(&b, NULL);
}

static void *fake_main(void *p) {
    fake *f = p;
    while (!stopping(f)) {
        struct pollfd pl = {f->fd, POLLIN, 0};
        if (poll(&pl, 1, 50) <= 0) continue;
        int c = accept(f->fd, NULL, NULL);
        if (c < 0) continue;
        char *req = read_request(c);
        pthread_mutex_lock(&f->mu);
        int i = f->served++;
        if (i < FAKE_MAX) {
            f->t[i] = util_now_s();
            f->req[i] = req;
            req = NULL;
        }
        const char *a = i < f->n_answers && f->answers[i]
                            ? f->answers[i]
                            : "HTTP/1.1 599 No More\r\nConnection: close\r\n\r\n";
        fake_gen_fn gen = i < f->n_answers ? f->gen[i] : NULL;
        void *gu = i < f->n_answers ? f->gen_user[i] : NULL;
        pthread_mutex_unlock(&f->mu);
        free(req);
        if (gen) {
            gen(gu, c);
        } else if (strcmp(a, FAKE_STALL) == 0) {
            char tmp[256];
            while (!stopping(f)) { /* until the client hangs up */
                struct pollfd q = {c, POLLIN, 0};
                if (poll(&q, 1, 50) > 0 && recv(c, tmp, sizeof tmp, 0) <= 0) break;
            }
        } else {
            send(c, a, strlen(a), MSG_NOSIGNAL);
        }
        shutdown(c, SHUT_WR);
        close(c);
    }
    return NULL;
}

void fake_init(fake *f) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    pthread_mutex_init(&f->mu, NULL);
}

void fake_set_gen(fake *f, int i, fake_gen_fn gen, void *user) {
    if (i < 0 || i >= FAKE_MAX) return;
    f->gen[i] = gen;
    f->gen_user[i] = user;
}

int fake_listen(fake *f, int n) {
    f->n_answers = n < FAKE_MAX ? n : FAKE_MAX;
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof sa) || listen(f->fd, 16) ||
        getsockname(f->fd, (struct sockaddr *)&sa, &sl))
        return -1;
    f->port = ntohs(sa.sin_port);
    return pthread_create(&f->th, NULL, fake_main, f);
}

int fake_start_v(fake *f, int n, const char *const *answers) {
    fake_init(f);
    for (int i = 0; i < n && i < FAKE_MAX; i++) f->answers[i] = answers[i] ? strdup(answers[i]) : NULL;
    return fake_listen(f, n);
}

int fake_start(fake *f, int n, ...) {
    const char *a[FAKE_MAX];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < FAKE_MAX; i++) a[i] = va_arg(ap, const char *);
    va_end(ap);
    return fake_start_v(f, n < FAKE_MAX ? n : FAKE_MAX, a);
}

int fake_served(fake *f) {
    pthread_mutex_lock(&f->mu);
    int n = f->served;
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_stop(fake *f) {
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->th, NULL);
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    pthread_mutex_destroy(&f->mu);
}

void fake_release(fake *f) {
    for (int i = 0; i < FAKE_MAX; i++) {
        free(f->req[i]);
        f->req[i] = NULL;
        free(f->answers[i]);
        f->answers[i] = NULL;
    }
}

char *fake_answer(const char *status, const char *headers, const char *body) {
    util_buf b;
    util_buf_init(&b);
    util_buf_printf(&b,
                    "HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n%s",
                    status, headers, strlen(body), body);
    return util_buf_detach(&b, NULL);
}

/* JSON string literal of s (with the quotes): malloc'd. */
static char *json_str(const char *s) {
    cJSON *j = cJSON_CreateString(s);
    char *o = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return o;
}

char *fake_sse_text(const char *text) {
    char *t = json_str(text);
    util_buf b;
    util_buf_init(&b);
    util_buf_printf(&b,
                    "%sdata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},"
                    "\"finish_reason\":\"stop\"}]}\n\n"
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":3}}\n\n"
                    "data: [DONE]\n\n",
                    fake_sse_head, t ? t : "\"\"");
    free(t);
    return util_buf_detach(&b, NULL);
}

char *fake_sse_tool(const char *name, const char *args_json) {
    char *n = json_str(name), *a = json_str(args_json);
    util_buf b;
    util_buf_init(&b);
    util_buf_printf(
        &b,
        "%sdata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
        "\"type\":\"function\",\"function\":{\"name\":%s,\"arguments\":%s}}]},"
        "\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":9}}\n\n"
        "data: [DONE]\n\n",
        fake_sse_head, n ? n : "\"\"", a ? a : "\"{}\"");
    free(n);
    free(a);
    return util_buf_detach(&b, NULL);
}
