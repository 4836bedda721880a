/* SPDX-License-Identifier: MIT */
/*
 * The host's RDMA queue pairs from the kernel's RDMA resource tracking
 * (netlink NETLINK_RDMA, RDMA_NLDEV_CMD_RES_QP_GET dump: what
 * `rdma resource show qp` prints), so that each QP maps to its process and,
 * through the plugin's communicators, a destination QPN on the wire maps to
 * a communicator.
 */
#ifndef COMMTAP_RDMA_QP_H
#define COMMTAP_RDMA_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ct_rdma_qp {
	uint32_t dev_index;
	char dev_name[32];
	uint32_t port; /* 0 when the QP is not bound to a port yet */
	uint32_t lqpn;
	uint32_t rqpn; /* valid when has_rqpn (connected QPs: RC, UC, XRC) */
	uint32_t sq_psn;
	uint8_t type;  /* IB_QPT_* */
	uint8_t state; /* IB_QPS_* */
	bool has_rqpn;
	bool has_pid;
	uint32_t pid;  /* user QPs */
	char comm[32]; /* kernel QPs: the owning module; user QPs: from /proc */
};

typedef void (*ct_rdma_qp_fn)(void *arg, const struct ct_rdma_qp *qp);

/* Decode a buffer of netlink messages (one recv's worth of a QP dump).
 * Returns the number of QPs passed to `fn`, -EPROTO for a malformed
 * message, or -errno for an NLMSG_ERROR reply. Sets *done on NLMSG_DONE. */
int ct_rdma_qp_decode(const void *buf, size_t len, ct_rdma_qp_fn fn, void *arg, bool *done);

/* Dump the live host's QPs (needs NETLINK_RDMA; root to see other
 * users' QPs). Fills user QPs' comm from /proc/<pid>/comm. Returns the count
 * or negative errno. */
int ct_rdma_qp_dump(ct_rdma_qp_fn fn, void *arg);

const char *ct_rdma_qp_type_name(uint8_t type);
const char *ct_rdma_qp_state_name(uint8_t state);

#endif
