/* SPDX-License-Identifier: MIT */
/*
 * What the NIC counts where the probe cannot see: RDMA devices' port
 * counters and hw_counters (CNPs sent and handled, ECN-marked RoCE packets,
 * out-of-sequence, retransmissions) from sysfs, and an interface's pause
 * and per-priority flow-control counters from its driver statistics.
 */
#ifndef COMMTAP_AGENT_RDMA_H
#define COMMTAP_AGENT_RDMA_H

#include <json-c/json.h>

/* [{device, port, link_layer, counters{}, hw_counters{}}], empty without RDMA devices. */
json_object *ct_rdma_json(void);

/* {name: value} of the driver statistics about pause/PFC, or NULL (JSON null). */
json_object *ct_rdma_pause_json(const char *ifname);

#endif
