/* SPDX-License-Identifier: MIT */
/*
 * commtap analyze's options, shared by its two readers: a capture file
 * (analyze.c) and live interfaces (live.c, --live).
 */
#ifndef COMMTAP_CLI_ANALYZE_H
#define COMMTAP_CLI_ANALYZE_H

#include <stddef.h>

#include "producer_options.h"

struct analyze_opts {
	const char *capture;
	const char *json_path;
	const char *lines_path;
	int table;
	int flows;	     /* the table lists every flow, not the summary */
	double pace;	     /* 0: as fast as it reads; F: F times the capture's own speed */
	size_t report_flows; /* flows kept in detail, the lightest of the rest summed */
	/* --live */
	const char *live;   /* IFACE[,IFACE...] */
	unsigned workers;   /* threads, each with a socket per interface and an engine */
	const char *filter; /* the capture filter (tcpdump's syntax) */
	double duration_s;  /* stop after this long; 0: at SIGINT/SIGTERM */
	const char *user;   /* read and report as this user, without capabilities */
	size_t ring_bytes;  /* each socket's ring */
	unsigned snaplen;   /* bytes of each frame copied into the ring */
	struct ct_producer_options common;
};

/* commtap analyze --live: the exit status. */
int analyze_live(const struct analyze_opts *o);

#endif
