/* SPDX-License-Identifier: MIT */
/*
 * Hand-made flow sets and burst logs for the slow path's unit tests: keys
 * from address text, summaries, and bursts that recur every iteration.
 * Every helper asserts (cmocka) that what it builds was accepted.
 */
#ifndef TEST_ANALYSIS_FLOW_BUILDER_H
#define TEST_ANALYSIS_FLOW_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/flow_set.h>
#include <commtap/periodicity.h>

#define MS 1000000ull	 /* ns */
#define T0 1000000000ull /* where the hand-made captures start: 1 s */

/* got within tol of want, else the test fails at the caller's line. */
#define assert_near(got, want, tol) near_or_fail((got), (want), (tol), __FILE__, __LINE__)
void near_or_fail(double got, double want, double tol, const char *file, int line);

struct ct_addr addr_of(const char *text);
struct ct_flow_key roce_key(const char *src, const char *dst, uint32_t qpn);
struct ct_flow_key tcp_key(const char *src, const char *dst, uint16_t sport, uint16_t dport);

/* A summary of key seen from first_ns to last_ns, no PSNs, unpaired. */
struct ct_flow_summary summary_of(const struct ct_flow_key *key, uint64_t bytes, uint64_t first_ns,
				  uint64_t last_ns);
void set_add(struct ct_flow_set *set, const struct ct_flow_summary *sum);
/* The index of key in set (which must hold it). */
size_t set_index(const struct ct_flow_set *set, const struct ct_flow_key *key);

/* One burst of key (packets unknown: its rate is bytes * 8 / duration). */
void log_burst(struct ct_burst_log *log, const struct ct_flow_key *key, uint64_t start_ns,
	       uint64_t end_ns, uint64_t bytes);
/* A burst at offset_ns into each of iterations iterations of period_ns from T0. */
void log_train(struct ct_burst_log *log, const struct ct_flow_key *key, uint64_t period_ns,
	       unsigned iterations, uint64_t offset_ns, uint64_t dur_ns, uint64_t bytes);

/*
 * The flow set of a burst log: one summary per key, its bytes the sum of
 * its bursts', seen from its first burst's start to its last's end (1 kB
 * packets). Sorted and paired, as a report has it.
 */
void set_of_log(struct ct_flow_set *set, const struct ct_burst_log *log);

#endif
