/* SPDX-License-Identifier: MIT */
/* The GPU side (NCCL plugin and CUPTI rings) joined to the agent's flows. */
#ifndef COMMTAP_AGENT_GPU_LINK_H
#define COMMTAP_AGENT_GPU_LINK_H

#include <stddef.h>

#include <commtap/periodicity.h>
#include <commtap/report.h>

#include <commtap/analysis.h>

/*
 * Read the rings in ring_dir and join them to report r's flows (their
 * bursts in bursts): *gpu_json gets the commtap.gpu/v1 object (json_object_put() it),
 * labels_path (if not NULL) the agent labels. Returns 1 when rings were
 * found and joined, 0 when there are none, or a negative errno with err
 * saying what failed. Each ring read whose writer has ended is removed.
 */
/* The rings in ring_dir are marked as read by this agent (their writers
 * then leave them at finalize; ct_gpu_link removes them once read). */
void ct_gpu_attach(const char *ring_dir);

/* The ring directory: dir if given, else the writers' default
 * (gpu_ring_dir.h). */
const char *ct_gpu_ring_dir_of(const char *dir, char *buf, size_t len);

int ct_gpu_link(const char *ring_dir, const struct ct_knowledge *k, const struct ct_report *r,
		const struct ct_burst_log *bursts, double nic_gbps, const char *labels_path,
		struct json_object **gpu_json, char *err, size_t errlen);

#endif
