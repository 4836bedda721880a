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

#define CONTENT_TYPE	  "text/plain; version=0.0.4; charset=utf-8"
#define CONNECTION_MEMORY (32 * 1024)
/*
 * Idle clients must not starve scrapes: the library's thread polls every
 * connection (epoll), so open ones cost memory, not time; a client gets at
 * most PER_IP_CONNECTIONS of MAX_CONNECTIONS, and a connection that has not
 * sent its request headers is closed after REQUEST_TIMEOUT_S of silence.
 * Once a request is in, RESPONSE_TIMEOUT_S lets a slow reader finish.
 */
#define MAX_CONNECTIONS	   256
#define PER_IP_CONNECTIONS 16
#define REQUEST_TIMEOUT_S  2
#define RESPONSE_TIMEOUT_S 10

struct ct_metrics_server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	char *text; /* the latest exposition, NULL before the first */
	size_t len;
	uint16_t port;
};

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
		*state = &checked;
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
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
				     (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				     (size_t)CONNECTION_MEMORY, MHD_OPTION_CONNECTION_LIMIT,
				     (unsigned)MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				     (unsigned)PER_IP_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned)REQUEST_TIMEOUT_S, MHD_OPTION_END);
	if (!s->daemon) {
		rc = errno ? -errno : -EADDRNOTAVAIL;
		snprintf(err, errlen, "cannot listen on %s: %s", listen, strerror(-rc));
		pthread_mutex_destroy(&s->lock);
		free(s);
		return rc;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*out = s;
	return 0;
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
	MHD_stop_daemon(s->daemon);
	pthread_mutex_destroy(&s->lock);
	free(s->text);
	free(s);
}
