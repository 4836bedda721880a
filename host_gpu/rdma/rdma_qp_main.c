// SPDX-License-Identifier: MIT
/* commtap-rdma-qp: the host's RDMA QPs as commtap sees them (compare with
 * `rdma resource show qp`), after a "# at NS" line (CLOCK_REALTIME): one
 * snapshot of a QP table that `commtap-gpu correlate --qp-table` reads. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rdma_qp.h"

static void print_qp(void *arg, const struct ct_rdma_qp *qp)
{
	printf("link %s/%u lqpn %u", qp->dev_name, qp->port, qp->lqpn);
	if (qp->has_rqpn)
		printf(" rqpn %u", qp->rqpn);
	printf(" type %s state %s", ct_rdma_qp_type_name(qp->type),
	       ct_rdma_qp_state_name(qp->state));
	if (qp->has_pid)
		printf(" pid %u", qp->pid);
	printf(" comm %s\n", qp->comm[0] ? qp->comm : "[unknown]");
}

int main(int argc, char **argv)
{
	struct timespec ts;
	int n;

	if (argc > 1) {
		fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("# at %llu\n",
	       (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	n = ct_rdma_qp_dump(print_qp, NULL);
	if (n < 0) {
		fprintf(stderr, "commtap-rdma-qp: netlink RDMA resource dump: %s\n", strerror(-n));
		return 1;
	}
	fprintf(stderr, "%d QPs\n", n);
	return 0;
}
