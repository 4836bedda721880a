// SPDX-License-Identifier: MIT
/* RDMA QP netlink decoding on constructed RES_QP_GET replies, laid out as
 * the kernel's nldev dump writes them. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rdma_qp.h"

#define QP_GET RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET)

static _Alignas(8) char buf[8192];
static struct ct_rdma_qp got[16];
static int n_got;

static void collect(void *arg, const struct ct_rdma_qp *qp)
{
	if (n_got < 16)
		got[n_got++] = *qp;
}

static struct nlmsghdr *put_msg(char *at, uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(at);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = 7;
	return nlh;
}

struct qp_attrs {
	uint32_t lqpn, rqpn, pid;
	uint8_t type, state;
	const char *kern;
};

static void put_qp_attrs(struct nlmsghdr *nlh, const struct qp_attrs *q)
{
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, q->lqpn);
	if (q->rqpn)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, q->rqpn);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_SQ_PSN, 0x1234);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, q->type);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, q->state);
	if (q->pid)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, q->pid);
	if (q->kern)
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_RES_KERN_NAME, q->kern);
}

/* A whole device's table: RES_QP { RES_QP_ENTRY {...}, ... }, then a
 * per-object message, then DONE. Returns the length. */
static size_t build_reply(void)
{
	static const struct qp_attrs table[] = {
		{.lqpn = 1, .type = 1, .state = 3, .kern = "ib_core"},
		{.lqpn = 263, .rqpn = 4711, .type = 2, .state = 3, .pid = 1234},
		{.lqpn = 264, .type = 4, .state = 3, .pid = 1234},
	};
	static const struct qp_attrs flat = {
		.lqpn = 300, .rqpn = 500, .type = 2, .state = 2, .pid = 99};
	struct nlmsghdr *nlh;
	struct nlattr *qps, *ent;
	char *p = buf;

	nlh = put_msg(p, QP_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	qps = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
	for (unsigned i = 0; i < 3; i++) {
		ent = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		put_qp_attrs(nlh, &table[i]);
		mnl_attr_nest_end(nlh, ent);
	}
	mnl_attr_nest_end(nlh, qps);
	p += nlh->nlmsg_len;

	nlh = put_msg(p, QP_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rocep1s0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 2);
	put_qp_attrs(nlh, &flat);
	p += nlh->nlmsg_len;

	nlh = put_msg(p, NLMSG_DONE);
	mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	p += nlh->nlmsg_len;
	return (size_t)(p - buf);
}

static void test_dump_reply(void **state)
{
	size_t len = build_reply();
	bool done;

	n_got = 0;
	assert_int_equal(ct_rdma_qp_decode(buf, len, collect, NULL, &done), 4);
	assert_true(done);
	assert_int_equal(n_got, 4);

	assert_string_equal(got[0].dev_name, "mlx5_0");
	assert_int_equal(got[0].lqpn, 1);
	assert_string_equal(ct_rdma_qp_type_name(got[0].type), "GSI");
	assert_false(got[0].has_pid);
	assert_string_equal(got[0].comm, "ib_core");

	assert_int_equal(got[1].lqpn, 263);
	assert_true(got[1].has_rqpn);
	assert_int_equal(got[1].rqpn, 4711);
	assert_string_equal(ct_rdma_qp_type_name(got[1].type), "RC");
	assert_string_equal(ct_rdma_qp_state_name(got[1].state), "RTS");
	assert_true(got[1].has_pid);
	assert_int_equal(got[1].pid, 1234);
	assert_int_equal(got[1].port, 1);
	assert_int_equal(got[1].sq_psn, 0x1234);

	assert_false(got[2].has_rqpn);
	assert_string_equal(ct_rdma_qp_type_name(got[2].type), "UD");

	assert_string_equal(got[3].dev_name, "rocep1s0");
	assert_int_equal(got[3].dev_index, 1);
	assert_int_equal(got[3].port, 2);
	assert_int_equal(got[3].lqpn, 300);
	assert_int_equal(got[3].rqpn, 500);
	assert_string_equal(ct_rdma_qp_state_name(got[3].state), "RTR");
	assert_int_equal(got[3].pid, 99);
}

static void test_split_reply(void **state)
{
	size_t len = build_reply();
	const struct nlmsghdr *first = (const struct nlmsghdr *)buf;
	bool done;

	/* The first recv holds the first message only: no DONE yet. */
	n_got = 0;
	assert_int_equal(ct_rdma_qp_decode(buf, first->nlmsg_len, collect, NULL, &done), 3);
	assert_false(done);
	/* Cut inside a message: malformed. */
	assert_int_equal(ct_rdma_qp_decode(buf, len - 30, collect, NULL, &done), -EPROTO);
}

static void test_bad_attr(void **state)
{
	struct nlmsghdr *nlh = put_msg(buf, QP_GET);
	bool done;

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	/* LQPN must be a u32: two bytes is malformed. */
	mnl_attr_put_u16(nlh, RDMA_NLDEV_ATTR_RES_LQPN, 5);
	n_got = 0;
	assert_int_equal(ct_rdma_qp_decode(buf, nlh->nlmsg_len, collect, NULL, &done), -EPROTO);
	assert_int_equal(n_got, 0);
}

static void test_error_reply(void **state)
{
	struct nlmsghdr *nlh = put_msg(buf, NLMSG_ERROR);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	bool done;

	e->error = -EPERM;
	assert_int_equal(ct_rdma_qp_decode(buf, nlh->nlmsg_len, collect, NULL, &done), -EPERM);
	assert_true(done);
	/* An unrelated message type is skipped. */
	nlh = put_msg(buf, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET));
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, 5);
	n_got = 0;
	assert_int_equal(ct_rdma_qp_decode(buf, nlh->nlmsg_len, collect, NULL, &done), 0);
	assert_int_equal(ct_rdma_qp_decode(buf, 3, collect, NULL, &done), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_reply),
		cmocka_unit_test(test_split_reply),
		cmocka_unit_test(test_bad_attr),
		cmocka_unit_test(test_error_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
