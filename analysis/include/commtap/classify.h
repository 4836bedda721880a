/* SPDX-License-Identifier: MIT */
/*
 * Flow classification (slow path, per report): each flow gets a traffic
 * class, a confidence and the evidence, from the strongest knowledge at
 * hand:
 *   1. labels from the host agent (flow key -> class): authoritative;
 *   2. a profile's expectation (hosts, and when and how much each class
 *      sends between each pair of hosts in an iteration);
 *   3. the traffic's own signature (periodicity, phase, fan-out, volume
 *      variation) when nothing else is known.
 * The two directions of a connection share the class of the one that
 * carries the data.
 */
#ifndef COMMTAP_CLASSIFY_H
#define COMMTAP_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/flow_set.h>
#include <commtap/periodicity.h>
#include <commtap/traffic_class.h>

enum ct_class_source {
	CT_CLASS_BY_SIGNATURE = 0,
	CT_CLASS_BY_PROFILE,
	CT_CLASS_BY_LABEL,
	CT_CLASS_BY_CONNECTION, /* the class of the connection's data direction */
};

#define CT_CLASS_EVIDENCE_LEN 192

struct ct_flow_class {
	uint8_t cls;	/* enum ct_class */
	uint8_t source; /* enum ct_class_source */
	uint8_t op;	/* enum ct_op: the collective operation the wire shows */
	double confidence;
	char evidence[CT_CLASS_EVIDENCE_LEN];
};

/* A job's name as a scheduler or the training processes know it. */
#define CT_JOB_NAME_LEN 64

/*
 * Agent labels: flow key -> class and job (commtap.labels/v1; see
 * docs/labels.md). A label may give the job alone: the class then comes
 * from the traffic as for an unlabelled flow.
 */
struct ct_label {
	struct ct_flow_key key;
	uint8_t cls;
	uint8_t no_class;	   /* the label names the job alone */
	char comm[24];		   /* communicator, "" if not given */
	char job[CT_JOB_NAME_LEN]; /* the job, "" if not given */
};

struct ct_labels {
	struct ct_label *l; /* sorted by key */
	size_t n;
};

/*
 * Load labels from a commtap.labels/v1 (or commtap.truth/v1) JSON file. On
 * failure returns a negative errno and writes "FILE: $.json.path: what is
 * wrong" into err.
 */
int ct_labels_load(const char *path, struct ct_labels *out, char *err, size_t errlen);
/*
 * Every *.json file of a directory (the labels of many hosts' agents, one
 * file each), in name order, as one set; the same flow labelled with two
 * classes by two files is an error.
 */
int ct_labels_load_dir(const char *dir, struct ct_labels *out, char *err, size_t errlen);
/*
 * a and b as one set (neither changed): the labels of one flow merge; two
 * classes or two jobs for one flow is -EINVAL with why in err.
 */
int ct_labels_join(const struct ct_labels *a, const struct ct_labels *b, struct ct_labels *out,
		   char *err, size_t errlen);
void ct_labels_free(struct ct_labels *l);
/* Labels built in memory (by an agent) are sorted once before lookups. */
void ct_labels_sort(struct ct_labels *l);
const struct ct_label *ct_labels_find(const struct ct_labels *l, const struct ct_flow_key *key);

/* One transfer a profile expects between two hosts, placed in the iteration (0..1). */
struct ct_expect_xfer {
	uint32_t src_rank, dst_rank;
	uint16_t src_host, dst_host;
	uint8_t cls;
	double phase_start, phase_end;
	double bytes;
};

struct ct_class_expect {
	const char *profile; /* its name, for the evidence */
	unsigned hosts;
	const struct ct_addr *host_addr; /* hosts entries */
	const struct ct_expect_xfer *xfers;
	size_t n_xfers;
	/* NULL, or hosts x nics_per_host NIC addresses, host by host (rail-optimized hosts) */
	const struct ct_addr *nic_addr;
	unsigned nics_per_host;
};

/* One group of hosts joined by flows of one class (a TP group, a DP ring, a pipeline chain). */
struct ct_layout_group {
	uint8_t cls;	 /* enum ct_class */
	size_t first, n; /* its hosts: ct_layout.group_hosts[first .. first + n) */
};

/* A parallel layout inferred from the traffic (signatures only). */
struct ct_layout {
	unsigned hosts;	    /* hosts seen in periodic traffic */
	unsigned pp_stages; /* hosts in the longest pipeline chain, 0 none */
	unsigned dp_ring;   /* hosts in the largest DP ring, 0 none */
	unsigned ep_group;  /* hosts exchanging all-to-all, 0 none */
	/*
	 * The degrees as the wire shows them: the hosts of the largest group
	 * of each class (p: a pipeline chain's stages); 0 where no flow of
	 * that class crosses a NIC (TP and DP inside hosts), which the report
	 * gives as unknown.
	 */
	unsigned p, t, d, ep;
	/*
	 * Data parallelism sharded (ZeRO, FSDP): its one group of hosts
	 * carries two operations (all-gather and reduce-scatter).
	 */
	unsigned sharded;
	struct ct_layout_group *groups; /* by class, then first host */
	size_t n_groups;
	struct ct_addr *group_hosts; /* in address order inside each group */
	size_t n_group_hosts;
};

/* A profile's groups of hosts per class against those the wire shows. */
struct ct_layout_check {
	int done;  /* a profile was given and the wire's groups found */
	int agree; /* every class's groups alike */
	unsigned profile_groups[CT_CLASS_COUNT], wire_groups[CT_CLASS_COUNT];
	unsigned same[CT_CLASS_COUNT]; /* the profile's groups the wire shows alike */
	char summary[320];
};

struct ct_classification {
	struct ct_flow_class *flows; /* one per flow of the set */
	size_t n;
	const char *method;  /* "labels", "profile" or "signatures" */
	const char *profile; /* the profile's name when one was given (it names the job) */
	/*
	 * Per periodicity job, the name its flows' labels give (the one
	 * carrying most bytes), "" where no flow of it is labelled with a job.
	 */
	char (*job_names)[CT_JOB_NAME_LEN];
	size_t n_job_names;
	struct ct_layout layout;
	struct ct_layout_check check; /* with a profile: its layout against the wire's */
};

/*
 * Classify every flow of set (sorted and paired). per may be NULL (no
 * periodicity: signatures then say Other), labels and expect may be NULL.
 * Returns 0 or -ENOMEM.
 */
int ct_classify(const struct ct_flow_set *set, const struct ct_periodicity *per,
		const struct ct_labels *labels, const struct ct_class_expect *expect,
		struct ct_classification *out);
void ct_classification_free(struct ct_classification *c);

/*
 * The congestion-control figures per receiver again for each class alone
 * (per->class_receivers): DP's incast is not EP's. Returns 0 or -ENOMEM.
 */
int ct_classification_cc(const struct ct_classification *c, const struct ct_flow_set *set,
			 struct ct_periodicity *per);

#endif
