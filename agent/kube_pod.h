/* SPDX-License-Identifier: MIT */
/*
 * The Kubernetes pod a process of this node runs in, found as the kubelet
 * leaves it on the node, without the API server: the pod's UID in the
 * process's cgroup path, and the pod's namespace and name in the
 * directory the kubelet keeps the pod's logs in.
 */
#ifndef COMMTAP_AGENT_KUBE_POD_H
#define COMMTAP_AGENT_KUBE_POD_H

#define CT_POD_LOG_ROOT "/var/log/pods" /* the kubelet's --pod-logs-dir default */

/* A Kubernetes pod, as the node's kubelet names it (/var/log/pods/NAMESPACE_NAME_UID). */
struct ct_pod {
	char ns[64];	/* a DNS label: at most 63 characters */
	char name[254]; /* a DNS subdomain: at most 253 */
	char uid[37];	/* 8-4-4-4-12 hex digits and dashes */
};

/*
 * The pod UID in a process's cgroup paths (the text of /proc/PID/cgroup):
 * the kubelet's kubepods[-burstable|-besteffort]-pod<UID>.slice (systemd
 * driver, the UID's dashes as underscores) or kubepods[/burstable|
 * /besteffort]/pod<UID> (cgroupfs driver). 0 with uid set (with dashes),
 * or -ENOENT when the process is in no pod.
 */
int ct_pod_uid_of_cgroup(const char *cgroup, char uid[37]);

/*
 * The pod of uid from the node's pod log root (the kubelet's /var/log/pods,
 * one directory NAMESPACE_NAME_UID per pod). 0, -ENOENT when no directory
 * names it, or another negative errno when root cannot be read.
 */
int ct_pod_find(const char *root, const char *uid, struct ct_pod *pod);

#endif
