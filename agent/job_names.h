/* SPDX-License-Identifier: MIT */
/*
 * The jobs of this host's processes, named as their scheduler or launcher
 * names them, so that every probe of a job gives it one name (the fleet's
 * ct_job, docs/metrics.md): each flow the host sends or receives is joined
 * to the process that owns its socket (/proc) or queue pair (the kernel's
 * RDMA resource tracking), and that process's environment names the job.
 */
#ifndef COMMTAP_AGENT_JOB_NAMES_H
#define COMMTAP_AGENT_JOB_NAMES_H

#include <stddef.h>
#include <stdio.h>

#include "kube_pod.h"

#include <commtap/classify.h>
#include <commtap/flow_set.h>

/*
 * The job named by an environment (NUL-separated KEY=VALUE, as
 * /proc/PID/environ holds it) and the process's pod (NULL: in no pod),
 * first found of:
 *   SLURM_JOB_ID ("slurm:ID");
 *   in a pod, its training operator's job: JobSet ("jobset:NS/NAME"),
 *   Volcano ("volcano:NS/NAME"), Kubeflow PyTorchJob ("pytorchjob:NS/NAME");
 *   in a pod, the pod itself ("pod:NS/NAME");
 *   TORCHELASTIC_RUN_ID unless "none" ("torchelastic:ID");
 *   MASTER_ADDR and MASTER_PORT ("torch:ADDR:PORT", the rendezvous every
 *   rank of a torch.distributed job is given).
 * 0, or -ENOENT when none is there or the name would not fit in size.
 */
int ct_job_name_of_process(const char *env, size_t len, const struct ct_pod *pod, char *name,
			   size_t size);

/* ct_job_name_of_process for a process in no pod. */
int ct_job_name_from_environ(const char *env, size_t len, char *name, size_t size);

/*
 * Labels naming the job of every flow of set that a local process with a
 * job sends or receives (no class: the traffic decides it); pod_root is the
 * node's pod log root (NULL: pods are not looked up). Returns the number of
 * labels (0: none, out empty), or a negative errno.
 */
int ct_job_labels(const struct ct_flow_set *set, const char *pod_root, struct ct_labels *out);

/*
 * known, kept from one report to the next: the jobs named now, and those
 * named before for flows of set whose process has gone since (a report
 * still holds the flows of a job that ended). Returns 1 when known changed,
 * 0 when not, or a negative errno (known unchanged).
 */
int ct_job_labels_update(struct ct_labels *known, const struct ct_flow_set *set,
			 const char *pod_root);

/*
 * l as a commtap.labels/v1 file that names jobs only (what a mirror or
 * `commtap analyze --labels` reads beside other hosts' files). 0 or -EIO.
 */
int ct_job_labels_print(FILE *out, const struct ct_labels *l);

#endif
