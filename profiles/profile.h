/* SPDX-License-Identifier: MIT */
/*
 * A job profile: one training job's model, parallelism, placement and
 * hardware, loaded from JSON (docs/profiles.md) and validated on load.
 */
#ifndef COMMTAP_PROFILE_H
#define COMMTAP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <commtap/parse.h>
#include <commtap/traffic_class.h>

enum ct_model_kind {
	CT_MODEL_GPT = 1,
	CT_MODEL_DDP,
	CT_MODEL_MOE,
};

enum ct_mapping {
	CT_MAP_DEEPSPEED_DEFAULT = 1, /* TP and DP inside hosts, pipeline stages across */
	CT_MAP_CUSTOM,		      /* TP and stages inside hosts, DP across */
	CT_MAP_EXPLICIT,	      /* a host index per rank */
};

struct ct_hardware {
	char platform[32];
	double peak_flops;    /* per GPU, FLOP/s */
	char flops_kind[48];  /* which figure peak_flops is */
	double mu;	      /* achieved fraction of peak */
	double nic_gbps;      /* per host */
	char intra_host[32];  /* the link between a host's GPUs */
	double intra_host_Bps; /* effective all-reduce bandwidth inside a host */
	double nic_efficiency; /* achieved fraction of the NIC rate */
	/* effective bandwidths (bytes/s); 0 = derived from the links and the mapping */
	double c_tp, c_pp, c_dp, c_ep;
};

/* How NCCL cuts transfers into network messages (docs/profiles.md, "nccl"). */
enum ct_nccl_protocol {
	CT_NCCL_SIMPLE = 0,
	CT_NCCL_LL,    /* 8 data bytes in each 16-byte line */
	CT_NCCL_LL128, /* 120 data bytes in each 128-byte line */
};

enum ct_nccl_algorithm {
	CT_NCCL_RING = 0, /* Simple: a slice of 2 steps per network message */
	CT_NCCL_TREE,	  /* one step per message */
};

struct ct_nccl {
	bool given; /* the profile has an "nccl" object; without it synth keeps its fixed sizes */
	enum ct_nccl_protocol protocol;
	enum ct_nccl_algorithm algorithm;
	uint64_t buffsize;  /* the protocol's buffer, NCCL_STEPS = 8 steps */
	uint64_t p2p_chunk; /* NCCL_P2P_NET_CHUNKSIZE */
	unsigned channels;  /* connections per peer; 0: synth's --channels */
};

struct ct_profile {
	char path[256];
	char name[64];
	char description[256];
	enum ct_model_kind kind;

	/* gpt and moe */
	unsigned layers, hidden, seq_len, vocab;
	unsigned global_batch, micro_batch, micro_batches;
	unsigned bytes_per_elem; /* precision: fp16/bf16 2, fp32 4 */
	bool partition_pipeline_sends;
	/* moe */
	unsigned experts, top_k, moe_interval;
	/* ddp */
	char arch[32];		/* named architecture, or "" with layer_params */
	uint64_t *layer_params; /* explicit parameter tensors, registration order */
	size_t n_layer_params;
	unsigned batch_per_gpu;
	uint64_t bucket_bytes, first_bucket_bytes;

	/* parallelism */
	unsigned p, t, d, ep;
	bool recompute;
	unsigned virtual_stages; /* interleaved 1F1B: model chunks per stage (1: plain 1F1B) */
	unsigned zero;	   /* ZeRO stage: 0 (plain DP all-reduce), 1 (distributed optimizer), 3 */
	bool zero_overlap; /* ZeRO-1: reduce-scatter during backward, all-gather during forward */

	/* placement */
	unsigned gpus, gpus_per_host, hosts;
	enum ct_mapping mapping;
	unsigned *rank_host;	 /* gpus entries: the host of each rank */
	struct ct_addr *host_addr; /* hosts entries */
	bool host_addr_given;
	/* NICs: nics_per_host on every host (rail-optimized: one per GPU); a
	 * host's GPUs are its ranks in rank order, GPU g sends through NIC
	 * g·nics_per_host/gpus_per_host of its host */
	unsigned nics_per_host, nics; /* nics = hosts·nics_per_host */
	unsigned *rank_nic;	      /* gpus entries: global NIC index, host·nics_per_host + k */
	struct ct_addr *nic_addr;     /* nics entries; with one NIC per host, the hosts' */

	struct ct_hardware hw;
	struct ct_nccl nccl;
};

/*
 * Load and validate a profile. On failure returns a negative errno and
 * writes "FILE: $.json.path: what was expected" into err.
 */
int ct_profile_load(const char *path, struct ct_profile *p, char *err, size_t errlen);
void ct_profile_free(struct ct_profile *p);

/* Fill hw with a named platform's defaults; -ENOENT if unknown. */
int ct_platform_defaults(const char *name, struct ct_hardware *hw, unsigned *gpus_per_host);
const char *const *ct_platform_names(void);

/*
 * Placement, as the loader does it: rank -> host for the named mappings
 * (not "explicit"), and rank -> NIC from rank_host (host-major, the host's
 * GPUs in rank order). Both write arrays the caller sized (gpus entries);
 * map_nics returns 0 or -ENOMEM.
 */
void ct_profile_map_ranks(struct ct_profile *p);
int ct_profile_map_nics(struct ct_profile *p);


/*
 * Rank numbering follows Megatron: tensor-parallel rank fastest, then
 * data-parallel, then pipeline stage: rank = (stage * d + dp) * t + tp.
 */
static inline unsigned ct_rank_of(const struct ct_profile *p, unsigned stage, unsigned dp,
				  unsigned tp)
{
	return (stage * p->d + dp) * p->t + tp;
}

#endif
