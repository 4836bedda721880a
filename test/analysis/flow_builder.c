// SPDX-License-Identifier: MIT
#include "flow_builder.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

void near_or_fail(double got, double want, double tol, const char *file, int line)
{
	if (fabs(got - want) <= tol)
		return;
	print_error("%.9g, expected %.9g +- %.3g\n", got, want, tol);
	_fail(file, line);
}

struct ct_addr addr_of(const char *text)
{
	struct ct_addr a;

	if (ct_addr_parse(text, &a))
		fail_msg("%s: not an address", text);
	return a;
}

struct ct_flow_key roce_key(const char *src, const char *dst, uint32_t qpn)
{
	struct ct_flow_key k;

	memset(&k, 0, sizeof(k));
	k.src = addr_of(src);
	k.dst = addr_of(dst);
	k.id = qpn;
	k.transport = CT_TRANSPORT_ROCE;
	return k;
}

struct ct_flow_key tcp_key(const char *src, const char *dst, uint16_t sport, uint16_t dport)
{
	struct ct_flow_key k;

	memset(&k, 0, sizeof(k));
	k.src = addr_of(src);
	k.dst = addr_of(dst);
	k.id = (uint32_t)sport << 16 | dport;
	k.transport = CT_TRANSPORT_TCP;
	return k;
}

struct ct_flow_summary summary_of(const struct ct_flow_key *key, uint64_t bytes, uint64_t first_ns,
				  uint64_t last_ns)
{
	struct ct_flow_summary s;

	memset(&s, 0, sizeof(s));
	s.key = *key;
	s.bytes = bytes;
	s.packets = bytes / 1000 ? bytes / 1000 : 1;
	s.first_ts = first_ns;
	s.last_ts = last_ns;
	s.records = 1;
	s.reverse = -1;
	return s;
}

void set_add(struct ct_flow_set *set, const struct ct_flow_summary *sum)
{
	assert_int_equal(ct_flow_set_add_summary(set, sum), 0);
}

size_t set_index(const struct ct_flow_set *set, const struct ct_flow_key *key)
{
	int64_t i = ct_flow_set_find(set, key);

	assert_true(i >= 0);
	return (size_t)i;
}

void log_burst(struct ct_burst_log *log, const struct ct_flow_key *key, uint64_t start_ns,
	       uint64_t end_ns, uint64_t bytes)
{
	struct ct_flow_burst b = {
		.key = *key, .start = start_ns, .end = end_ns, .bytes = bytes, .messages = 1};

	assert_int_equal(ct_burst_log_add(log, &b), 0);
}

void log_train(struct ct_burst_log *log, const struct ct_flow_key *key, uint64_t period_ns,
	       unsigned iterations, uint64_t offset_ns, uint64_t dur_ns, uint64_t bytes)
{
	for (unsigned i = 0; i < iterations; i++) {
		uint64_t start = T0 + i * period_ns + offset_ns;

		log_burst(log, key, start, start + dur_ns, bytes);
	}
}

void set_of_log(struct ct_flow_set *set, const struct ct_burst_log *log)
{
	ct_flow_set_init(set);
	for (size_t i = 0; i < log->n; i++) {
		const struct ct_flow_burst *b = &log->b[i];
		struct ct_flow_summary s = summary_of(&b->key, b->bytes, b->start, b->end);

		set_add(set, &s);
	}
	ct_flow_set_sort(set);
	ct_flow_set_pair(set, NULL, 0);
}
