// SPDX-License-Identifier: MIT
/* RDMA resource tracking over netlink: QP dump request and reply decoding. */
#include "rdma_qp.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QP_GET_TYPE RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET)

const char *ct_rdma_qp_type_name(uint8_t type)
{
	static const char *const names[] = {
		"SMI",		 "GSI",	    "RC",	  "UC",	     "UD",     "RAW_IPV6",
		"RAW_ETHERTYPE", "UNKNOWN", "RAW_PACKET", "XRC_INI", "XRC_TGT"};

	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	return type == 0xff ? "DRIVER" : "UNKNOWN";
}

const char *ct_rdma_qp_state_name(uint8_t state)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN";
}

struct attr_tab {
	const struct nlattr *a[RDMA_NLDEV_ATTR_MAX];
	bool bad;
};

/* The attributes commtap reads, with the type each must have. */
static int attr_type(uint16_t t)
{
	switch (t) {
	case RDMA_NLDEV_ATTR_DEV_INDEX:
	case RDMA_NLDEV_ATTR_PORT_INDEX:
	case RDMA_NLDEV_ATTR_RES_LQPN:
	case RDMA_NLDEV_ATTR_RES_RQPN:
	case RDMA_NLDEV_ATTR_RES_SQ_PSN:
	case RDMA_NLDEV_ATTR_RES_PID:
		return MNL_TYPE_U32;
	case RDMA_NLDEV_ATTR_RES_TYPE:
	case RDMA_NLDEV_ATTR_RES_STATE:
		return MNL_TYPE_U8;
	case RDMA_NLDEV_ATTR_DEV_NAME:
	case RDMA_NLDEV_ATTR_RES_KERN_NAME:
		return MNL_TYPE_NUL_STRING;
	case RDMA_NLDEV_ATTR_RES_QP:
	case RDMA_NLDEV_ATTR_RES_QP_ENTRY:
		return MNL_TYPE_NESTED;
	default:
		return -1;
	}
}

static int collect_attr(const struct nlattr *attr, void *data)
{
	struct attr_tab *tab = data;
	uint16_t t = mnl_attr_get_type(attr);
	int want;

	if (t >= RDMA_NLDEV_ATTR_MAX)
		return MNL_CB_OK;
	want = attr_type(t);
	if (want < 0)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, (enum mnl_attr_data_type)want) < 0) {
		tab->bad = true;
		return MNL_CB_ERROR;
	}
	tab->a[t] = attr;
	return MNL_CB_OK;
}

static void copy_str(char *dst, size_t len, const struct nlattr *a)
{
	if (a)
		snprintf(dst, len, "%s", mnl_attr_get_str(a));
}

/* One QP from an entry's attributes over the message's device defaults. */
static bool qp_from(struct ct_rdma_qp *qp, const struct ct_rdma_qp *dev, const struct attr_tab *t)
{
	const struct nlattr *const *a = t->a;

	if (!a[RDMA_NLDEV_ATTR_RES_LQPN])
		return false;
	*qp = *dev;
	qp->lqpn = mnl_attr_get_u32(a[RDMA_NLDEV_ATTR_RES_LQPN]);
	if (a[RDMA_NLDEV_ATTR_PORT_INDEX])
		qp->port = mnl_attr_get_u32(a[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (a[RDMA_NLDEV_ATTR_RES_RQPN]) {
		qp->rqpn = mnl_attr_get_u32(a[RDMA_NLDEV_ATTR_RES_RQPN]);
		qp->has_rqpn = true;
	}
	if (a[RDMA_NLDEV_ATTR_RES_SQ_PSN])
		qp->sq_psn = mnl_attr_get_u32(a[RDMA_NLDEV_ATTR_RES_SQ_PSN]);
	if (a[RDMA_NLDEV_ATTR_RES_TYPE])
		qp->type = mnl_attr_get_u8(a[RDMA_NLDEV_ATTR_RES_TYPE]);
	if (a[RDMA_NLDEV_ATTR_RES_STATE])
		qp->state = mnl_attr_get_u8(a[RDMA_NLDEV_ATTR_RES_STATE]);
	if (a[RDMA_NLDEV_ATTR_RES_PID]) {
		qp->pid = mnl_attr_get_u32(a[RDMA_NLDEV_ATTR_RES_PID]);
		qp->has_pid = true;
	}
	copy_str(qp->comm, sizeof(qp->comm), a[RDMA_NLDEV_ATTR_RES_KERN_NAME]);
	return true;
}

/* One RES_QP_GET message: device attributes, then either a RES_QP table of
 * entries (dump of a whole device) or one QP's attributes at the top level
 * (per-object replies of newer kernels). */
static int decode_msg(const struct nlmsghdr *nlh, ct_rdma_qp_fn fn, void *arg)
{
	struct attr_tab top = {0};
	struct ct_rdma_qp dev = {0}, qp;
	int n = 0;

	if (mnl_attr_parse(nlh, 0, collect_attr, &top) < 0 || top.bad)
		return -EPROTO;
	if (top.a[RDMA_NLDEV_ATTR_DEV_INDEX])
		dev.dev_index = mnl_attr_get_u32(top.a[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(dev.dev_name, sizeof(dev.dev_name), top.a[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (top.a[RDMA_NLDEV_ATTR_PORT_INDEX])
		dev.port = mnl_attr_get_u32(top.a[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (top.a[RDMA_NLDEV_ATTR_RES_QP]) {
		const struct nlattr *e;

		mnl_attr_for_each_nested(e, top.a[RDMA_NLDEV_ATTR_RES_QP])
		{
			struct attr_tab ent = {0};

			if (mnl_attr_get_type(e) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
				continue;
			if (mnl_attr_validate(e, MNL_TYPE_NESTED) < 0 ||
			    mnl_attr_parse_nested(e, collect_attr, &ent) < 0 || ent.bad)
				return -EPROTO;
			if (qp_from(&qp, &dev, &ent)) {
				fn(arg, &qp);
				n++;
			}
		}
	} else if (qp_from(&qp, &dev, &top)) {
		fn(arg, &qp);
		n++;
	}
	return n;
}

int ct_rdma_qp_decode(const void *buf, size_t len, ct_rdma_qp_fn fn, void *arg, bool *done)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > INT32_MAX ? INT32_MAX : (int)len, total = 0;

	*done = false;
	while (mnl_nlmsg_ok(nlh, left)) {
		if (nlh->nlmsg_type == NLMSG_DONE) {
			*done = true;
			return total;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err)))
				return -EPROTO;
			*done = true;
			return err->error ? err->error : total;
		}
		if (nlh->nlmsg_type == QP_GET_TYPE) {
			int n = decode_msg(nlh, fn, arg);

			if (n < 0)
				return n;
			total += n;
		}
		nlh = mnl_nlmsg_next(nlh, &left);
	}
	/* Bytes left that do not make a whole message: truncated. */
	return left > 0 ? -EPROTO : total;
}

struct fill_comm {
	ct_rdma_qp_fn fn;
	void *arg;
};

static void with_comm(void *arg, const struct ct_rdma_qp *qp)
{
	struct fill_comm *fc = arg;
	struct ct_rdma_qp q = *qp;

	if (q.has_pid && !q.comm[0]) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/comm", q.pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(q.comm, sizeof(q.comm), f))
				q.comm[strcspn(q.comm, "\n")] = 0;
			fclose(f);
		}
	}
	fc->fn(fc->arg, &q);
}

int ct_rdma_qp_dump(ct_rdma_qp_fn fn, void *arg)
{
	static char buf[1 << 16] __attribute__((aligned(8)));
	struct fill_comm fc = {fn, arg};
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	unsigned seq = (unsigned)time(NULL);
	int total = 0, n, err = 0;
	bool done = false;
	ssize_t got;

	nl = mnl_socket_open(NETLINK_RDMA);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = QP_GET_TYPE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	while (!done) {
		got = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (got < 0) {
			err = -errno;
			goto out;
		}
		n = ct_rdma_qp_decode(buf, (size_t)got, with_comm, &fc, &done);
		if (n < 0) {
			err = n;
			goto out;
		}
		total += n;
		if (got == 0)
			break;
	}
out:
	mnl_socket_close(nl);
	return err ? err : total;
}
