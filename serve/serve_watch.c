/* serve/serve_watch.c: the read deadline of `cachet serve`'s connections. A
 * client has `timeout` seconds from connecting (or from its previous answer,
 * on a kept-alive connection) to send a whole request, headers and body; one
 * that trickles bytes to stay alive is cut off by a watchdog thread, so slow
 * clients cannot hold every connection slot and block /health (libmicrohttpd's
 * idle timeout restarts at every byte). Does not time generation or the
 * writing of answers. */
#include <fcntl.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve_impl.h"

/* One TCP connection. fd is our own duplicate of its socket, so the number
 * cannot be reused by another connection while the watchdog may shut it. */
typedef struct watch_conn {
    struct watch_conn *prev, *next;
    serve_watch *w;
    int fd;
    int reading; /* waiting for a request's headers or body */
    double since;
} watch_conn;

struct serve_watch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int have_thread, stop;
    double timeout;
    watch_conn *head;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *watch_main(void *p) {
    serve_watch *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        double now = now_s();
        for (watch_conn *c = w->head; c; c = c->next)
            if (c->reading && c->fd >= 0 && now - c->since > w->timeout) {
                (void)shutdown(c->fd, SHUT_RDWR); /* its thread reads EOF and closes it */
                c->reading = 0;
            }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int serve_watch_new(serve_watch **out, double timeout_s) {
    *out = NULL;
    serve_watch *w = calloc(1, sizeof *w);
    if (!w) return UTIL_ENOMEM;
    w->timeout = timeout_s;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        serve_watch_free(w);
        return UTIL_ENOMEM;
    }
    w->have_thread = 1;
    *out = w;
    return UTIL_OK;
}

void serve_watch_free(serve_watch *w) {
    if (!w) return;
    if (w->have_thread) {
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
    }
    for (watch_conn *c = w->head, *n; c; c = n) { /* none once the daemon stopped */
        n = c->next;
        if (c->fd >= 0) close(c->fd);
        free(c);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void serve_watch_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe) {
    serve_watch *w = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        watch_conn *c = calloc(1, sizeof *c);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(connection,
                                                                     MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!c) return; /* no memory: this connection simply has no deadline */
        c->w = w;
        c->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 3) : -1;
        c->reading = 1;
        c->since = now_s();
        pthread_mutex_lock(&w->mu);
        c->next = w->head;
        if (w->head) w->head->prev = c;
        w->head = c;
        pthread_mutex_unlock(&w->mu);
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        watch_conn *c = *socket_context;
        pthread_mutex_lock(&w->mu);
        if (c->prev)
            c->prev->next = c->next;
        else
            w->head = c->next;
        if (c->next) c->next->prev = c->prev;
        pthread_mutex_unlock(&w->mu);
        if (c->fd >= 0) close(c->fd);
        free(c);
        *socket_context = NULL;
    }
}

void serve_watch_reading(struct MHD_Connection *connection, int reading) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(connection,
                                                                 MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    watch_conn *c = ci ? ci->socket_context : NULL;
    if (!c) return;
    pthread_mutex_lock(&c->w->mu);
    c->reading = reading;
    c->since = now_s();
    pthread_mutex_unlock(&c->w->mu);
}
