// SPDX-License-Identifier: MIT
/* The /metrics endpoint on libmicrohttpd (see metrics_server.h). */
#include "metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define CONTENT_TYPE	  "text/plain; version=0.0.4; charset=utf-8"
#define CONNECTION_MEMORY (32 * 1024)
/*
 * Slow clients must not starve scrapes. The library's one thread polls
 * every connection (epoll), so an open one costs memory, not time; a
 * thread per connection would cost 300 threads for 300 slow clients.
 * Its own timeout is one of silence, which a client that sends a byte a
 * second never meets; so a connection still waiting for its request (new,
 * or kept alive after an answer) is shut down REQUEST_TIMEOUT_S after it
 * began waiting, by a reaper that looks every REAP_PERIOD_MS. At most
 * MAX_WAITING connections wait at once: one more evicts the oldest
 * waiting, so a new one (a scraper's) is always let in and a flood only
 * shortens the wait of the flood. A connection is evicted so only after
 * EVICT_GRACE_MS of waiting: a client's request may come a little after
 * its connect (a test scraper's came 5 ms late, behind 64 connections of a
 * flood on a fast CI machine, and was shut down unanswered); the list then
 * runs over MAX_WAITING for that while, and the reaper trims it back. A
 * flood of more than MAX_CONNECTIONS in EVICT_GRACE_MS (4,000 a second)
 * is refused at accept, scrapes with it. No limit per address: one would let a
 * local flood refuse a scraper of the same address (loopback, a NAT).
 * MAX_CONNECTIONS bounds the rest (requests being answered, whose readers
 * get RESPONSE_TIMEOUT_S of silence, and connections evicted that the
 * library has yet to close); it stays far above MAX_WAITING so that waiting
 * and evicted ones never fill it: at 256, 300 stalled clients on a loaded
 * machine kept it full of evicted connections the library had not closed
 * yet, and it refused a scrape at accept (1 run in 5, metrics-slow-clients).
 * A connection costs the library a few KiB.
 */
#define MAX_CONNECTIONS	   1024
#define MAX_WAITING	   64
#define REQUEST_TIMEOUT_S  2
#define RESPONSE_TIMEOUT_S 10
#define REAP_PERIOD_MS	   100
#define EVICT_GRACE_MS	   250

/* A connection of the server; on the waiting list while its request is not in. */
struct conn {
	int fd;
	uint64_t since_ns; /* when it began waiting */
	struct conn *prev, *next;
	int waiting;
};

struct ct_metrics_server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	char *text; /* the latest exposition, NULL before the first */
	size_t len;
	uint16_t port;
	/* the waiting list, oldest first, and its reaper (under conn_lock) */
	pthread_mutex_t conn_lock;
	pthread_cond_t reaper_wake;
	pthread_t reaper;
	struct conn *oldest, *newest;
	unsigned n_waiting;
	int stopping, reaper_started;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void unlist(struct ct_metrics_server *s, struct conn *c)
{
	if (!c->waiting)
		return;
	*(c->prev ? &c->prev->next : &s->oldest) = c->next;
	*(c->next ? &c->next->prev : &s->newest) = c->prev;
	c->prev = c->next = NULL;
	c->waiting = 0;
	s->n_waiting--;
}

/*
 * Shut the socket down: the library then reads its end and closes the
 * connection in its own thread. The descriptor is still the connection's
 * (it is closed only after the CLOSED notice, which takes conn_lock).
 */
static void evict(struct ct_metrics_server *s, struct conn *c)
{
	unlist(s, c);
	shutdown(c->fd, SHUT_RDWR);
}

/* Over MAX_WAITING: the oldest waiting go, those past their grace. */
static void trim(struct ct_metrics_server *s, uint64_t now)
{
	const uint64_t grace = (uint64_t)EVICT_GRACE_MS * 1000000u;

	while (s->n_waiting > MAX_WAITING && now - s->oldest->since_ns >= grace)
		evict(s, s->oldest);
}

static void start_waiting(struct ct_metrics_server *s, struct conn *c)
{
	unlist(s, c);
	c->since_ns = now_ns();
	c->prev = s->newest;
	*(s->newest ? &s->newest->next : &s->oldest) = c;
	s->newest = c;
	c->waiting = 1;
	s->n_waiting++;
	trim(s, c->since_ns);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct ct_metrics_server *s = cls;
	const union MHD_ConnectionInfo *info;
	struct conn *c = *socket_context;

	pthread_mutex_lock(&s->conn_lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		c = info ? calloc(1, sizeof(*c)) : NULL;
		if (c) { /* else not tracked: the library's silence timeout still applies */
			c->fd = info->connect_fd;
			start_waiting(s, c);
		}
		*socket_context = c;
	} else if (c) {
		unlist(s, c);
		free(c);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&s->conn_lock);
}

/* An answer sent on a connection kept alive: it waits for its next request. */
static void on_completed(void *cls, struct MHD_Connection *connection, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	struct ct_metrics_server *s = cls;
	struct conn *c = conn_of(connection);

	(void)state;
	if (!c || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		return;
	pthread_mutex_lock(&s->conn_lock);
	start_waiting(s, c);
	pthread_mutex_unlock(&s->conn_lock);
}

static void *reap(void *arg)
{
	struct ct_metrics_server *s = arg;
	const uint64_t limit = (uint64_t)REQUEST_TIMEOUT_S * 1000000000u;

	pthread_mutex_lock(&s->conn_lock);
	while (!s->stopping) {
		struct timespec until;
		uint64_t now = now_ns();

		while (s->oldest && now - s->oldest->since_ns >= limit)
			evict(s, s->oldest);
		trim(s, now);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += REAP_PERIOD_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->reaper_wake, &s->conn_lock, &until);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, msg, strlen(msg), MHD_RESPMEM_PERSISTENT,
		     "text/plain; charset=utf-8");
}

/* A request with a body: refused before the body is read. */
static int has_body(struct MHD_Connection *c)
{
	const char *len =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0")) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/*
 * Every check is made on the first call, when only the headers are in:
 * answering then lets the library close the connection without reading a
 * body (an answer in the middle of an upload is an error to it).
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct ct_metrics_server *s = cls;
	static int checked;
	enum MHD_Result ok;

	(void)version;
	(void)upload;
	if (!*state) {
		struct conn *conn = conn_of(c);

		*state = &checked;
		if (conn) { /* its headers are in: answered, not reaped */
			pthread_mutex_lock(&s->conn_lock);
			unlist(s, conn);
			pthread_mutex_unlock(&s->conn_lock);
		}
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  (unsigned)RESPONSE_TIMEOUT_S);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n");
		if (has_body(c))
			return error(c, MHD_HTTP_CONTENT_TOO_LARGE,
				     "request bodies are not accepted\n");
		if (strcmp(url, "/metrics"))
			return error(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
		return MHD_YES;
	}
	if (*upload_size) /* a body the headers did not announce */
		return MHD_NO;
	pthread_mutex_lock(&s->lock);
	if (s->text)
		ok = reply(c, MHD_HTTP_OK, s->text, s->len, MHD_RESPMEM_MUST_COPY, CONTENT_TYPE);
	else
		ok = error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no report yet\n");
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* Parse the listen address; sa gets an IPv4 or IPv6 socket address. */
static int parse_listen(const char *listen, struct sockaddr_storage *sa, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2] = CT_METRICS_DEFAULT_ADDR;
	const char *port_text = NULL, *colon;
	unsigned long port = CT_METRICS_DEFAULT_PORT;
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	size_t n;

	memset(sa, 0, sizeof(*sa));
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		n = close ? (size_t)(close - listen - 1) : 0;
		if (!close || !n || n >= sizeof(host) || (close[1] && close[1] != ':'))
			goto bad;
		memcpy(host, listen + 1, n);
		host[n] = 0;
		port_text = close[1] ? close + 2 : NULL;
	} else if ((colon = strrchr(listen, ':')) && strchr(listen, ':') == colon) {
		n = (size_t)(colon - listen);
		if (n >= sizeof(host))
			goto bad;
		if (n) {
			memcpy(host, listen, n);
			host[n] = 0;
		}
		port_text = colon + 1;
	} else if (!strchr(listen, ':')) {
		if (strlen(listen) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%s", listen);
	} else {
		goto bad;
	}
	if (port_text) {
		char *end;

		errno = 0;
		port = strtoul(port_text, &end, 10);
		if (errno || end == port_text || *end || port > 65535)
			goto bad;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "'%s' is not ADDR:PORT, [IPV6]:PORT, ADDR or :PORT with a numeric address",
		 listen);
	return -EINVAL;
}

int ct_metrics_server_start(const char *listen, struct ct_metrics_server **out, char *err,
			    size_t errlen)
{
	struct sockaddr_storage sa;
	struct ct_metrics_server *s;
	const union MHD_DaemonInfo *info;
	pthread_condattr_t ca;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
	int rc = parse_listen(listen, &sa, err, errlen);

	*out = NULL;
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->reaper_wake, &ca);
	pthread_condattr_destroy(&ca);
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
				     (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				     (size_t)CONNECTION_MEMORY, MHD_OPTION_CONNECTION_LIMIT,
				     (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned)REQUEST_TIMEOUT_S, MHD_OPTION_NOTIFY_CONNECTION,
				     on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				     MHD_OPTION_END);
	if (!s->daemon) {
		rc = errno ? -errno : -EADDRNOTAVAIL;
		snprintf(err, errlen, "cannot listen on %s: %s", listen, strerror(-rc));
		goto fail;
	}
	rc = -pthread_create(&s->reaper, NULL, reap, s);
	if (rc) {
		snprintf(err, errlen, "cannot start the /metrics reaper: %s", strerror(-rc));
		MHD_stop_daemon(s->daemon);
		goto fail;
	}
	s->reaper_started = 1;
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*out = s;
	return 0;
fail:
	pthread_cond_destroy(&s->reaper_wake);
	pthread_mutex_destroy(&s->conn_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return rc;
}

int ct_metrics_server_publish(struct ct_metrics_server *s, const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = 0;
	pthread_mutex_lock(&s->lock);
	free(s->text);
	s->text = copy;
	s->len = len;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

uint16_t ct_metrics_server_port(const struct ct_metrics_server *s)
{
	return s->port;
}

void ct_metrics_server_stop(struct ct_metrics_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->conn_lock);
	s->stopping = 1;
	pthread_cond_signal(&s->reaper_wake);
	pthread_mutex_unlock(&s->conn_lock);
	if (s->reaper_started)
		pthread_join(s->reaper, NULL);
	MHD_stop_daemon(s->daemon); /* its CLOSED notices free every conn */
	pthread_cond_destroy(&s->reaper_wake);
	pthread_mutex_destroy(&s->conn_lock);
	pthread_mutex_destroy(&s->lock);
	free(s->text);
	free(s);
}
