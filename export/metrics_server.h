/* SPDX-License-Identifier: MIT */
/*
 * The /metrics endpoint (libmicrohttpd, its own thread). A producer renders
 * the exposition (prom.h) after each report and publishes it; scrapes get
 * the latest copy. GET or HEAD /metrics only; anything else is answered
 * with an HTTP error. Requests are bounded: headers larger than the
 * connection memory (32 KiB) get 431 from the library, bodies 413. Slow
 * clients cannot starve scrapes: a connection waiting for its request is
 * closed 2 s after it began waiting, at most 64 wait (one more evicts the
 * oldest), 256 connections in all, 10 s of silence once a request is in
 * (metrics_server.c says why).
 *
 * The report sink (report_sink.h) starts it for every producer's --listen
 * and publishes each report's exposition.
 */
#ifndef COMMTAP_EXPORT_METRICS_SERVER_H
#define COMMTAP_EXPORT_METRICS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#define CT_METRICS_DEFAULT_ADDR "127.0.0.1"
#define CT_METRICS_DEFAULT_PORT 9464

struct ct_metrics_server;

/*
 * Listen on "ADDR:PORT", "[V6ADDR]:PORT", "ADDR" (port 9464) or ":PORT"
 * (127.0.0.1). Port 0 picks a free one (see ct_metrics_server_port).
 * Returns 0, or a negative errno with a one-line reason in err.
 */
int ct_metrics_server_start(const char *listen, struct ct_metrics_server **out, char *err,
			    size_t errlen);

/* Serve this exposition from now on (copied). Returns 0 or -ENOMEM. */
int ct_metrics_server_publish(struct ct_metrics_server *s, const char *text, size_t len);

uint16_t ct_metrics_server_port(const struct ct_metrics_server *s);
void ct_metrics_server_stop(struct ct_metrics_server *s);

#endif
