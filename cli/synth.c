// SPDX-License-Identifier: MIT
/*
 * commtap synth PROFILE -o OUT.pcap: what a mirror port would capture while
 * the job trains, with OUT.truth.json beside it.
 */
#include "commands.h"

#include <commtap/params.h>

#include "app_args.h"
#include "model.h"
#include "profile.h"
#include "synth.h"

#include <errno.h>
#include <stddef.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

struct pcap_out {
	pcap_dumper_t *dumper;
	unsigned long long packets;
};

static int write_frame(void *ctx, uint64_t ts_ns, const uint8_t *frame, uint32_t cap_len,
		       uint32_t wire_len)
{
	struct pcap_out *out = ctx;
	struct pcap_pkthdr hdr;

	/* a nanosecond-precision dumper takes nanoseconds in tv_usec */
	hdr.ts.tv_sec = (time_t)(ts_ns / 1000000000ull);
	hdr.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000ull);
	hdr.caplen = cap_len;
	hdr.len = wire_len;
	pcap_dump((u_char *)out->dumper, &hdr, frame);
	out->packets++;
	return 0;
}

/*
 * An injection's argument: "A:V[:FROM]" or, with two hosts, "A-B:V[:FROM]",
 * V a number in [vmin, vmax]. Returns 0 or -EINVAL with the reason in err.
 */
static int inject_arg(const char *name, const char *text, int two, double vmin, double vmax, int *a,
		      int *b, double *v, unsigned *from, char *err, size_t errlen)
{
	unsigned x, y = 0, f = 0;
	int used = 0, got;
	char rest[64] = "";

	got = two ? sscanf(text, "%u-%u:%63[^:]%n", &x, &y, rest, &used)
		  : sscanf(text, "%u:%63[^:]%n", &x, rest, &used);
	if (got != (two ? 3 : 2) || (text[used] && sscanf(text + used, ":%u", &f) != 1) ||
	    (two && x == y)) {
		snprintf(err, errlen, "--%s: expected %s, got '%s'", name,
			 two ? "A-B:VALUE[:FROM] (two different hosts)" : "HOST:VALUE[:FROM]",
			 text);
		return -EINVAL;
	}
	if (ct_parse_number(name, rest, vmin, vmax, 0, v, err, errlen))
		return -EINVAL;
	*a = (int)x;
	if (b)
		*b = (int)y;
	*from = f;
	return 0;
}

/* The injections' options: value is the configuration's struct ct_synth_inject. */
static int parse_straggler(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;

	return inject_arg("straggler", text, 0, 0, 1e3, &in->straggler, NULL, &in->straggler_s,
			  &in->straggler_from, err, errlen);
}

static int parse_slow_link(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;

	return inject_arg("slow-link", text, 1, 1, 1e3, &in->slow_a, &in->slow_b, &in->slow_factor,
			  &in->slow_from, err, errlen);
}

static int parse_lossy_link(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;

	return inject_arg("lossy-link", text, 1, 0, 0.5, &in->lossy_a, &in->lossy_b, &in->loss_rate,
			  &in->lossy_from, err, errlen);
}

static int parse_congest(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;

	return inject_arg("congest", text, 0, 0, 1, &in->congest, NULL, &in->congest_fraction,
			  &in->congest_from, err, errlen);
}

static int parse_pfc_storm(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;

	return inject_arg("pfc-storm", text, 0, 0, 1e6, &in->pfc_priority, NULL, &in->pfc_per_s,
			  &in->pfc_from, err, errlen);
}

static int parse_pause(const char *text, void *value, char *err, size_t errlen)
{
	struct ct_synth_inject *in = value;
	unsigned at;
	int used = 0;
	char rest[64] = "";

	if (sscanf(text, "%u:%63s%n", &at, rest, &used) != 2 || text[used]) {
		snprintf(err, errlen, "--pause: expected IT:SECONDS, got '%s'", text);
		return -EINVAL;
	}
	if (ct_parse_number("pause", rest, 0, 1e3, 0, &in->pause_s, err, errlen))
		return -EINVAL;
	in->pause_at = (int)at;
	return 0;
}

static int parse_transport(const char *text, void *value, char *err, size_t errlen)
{
	enum ct_synth_transport *t = value;

	if (!strcmp(text, "roce")) {
		*t = CT_SYNTH_ROCE;
	} else if (!strcmp(text, "tcp")) {
		*t = CT_SYNTH_TCP;
	} else {
		snprintf(err, errlen, "--transport: expected roce or tcp, got '%s'", text);
		return -EINVAL;
	}
	return 0;
}

struct synth_args {
	const char *output, *truth;
	struct ct_synth_config cfg;
};

#define CFG(field) offsetof(struct synth_args, cfg.field)

static const struct ct_param synth_params[] = {
	{.name = "output",
	 .short_name = 'o',
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct synth_args, output),
	 .help = "the pcap to write (nanosecond timestamps)"},
	{.name = "truth",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct synth_args, truth),
	 .help = "ground truth JSON (default: OUT with .truth.json)"},
	{.name = "iterations",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = CFG(iterations),
	 .min = 1,
	 .max = 1e6,
	 .show_default = 1,
	 .help = "iterations to render"},
	{.name = "transport",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "roce|tcp",
	 .offset = CFG(transport),
	 .parse = parse_transport,
	 .help = "NCCL over RoCEv2 (default) or NCCL's socket transport"},
	{.name = "scale",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = CFG(size_scale),
	 .min = 1e-12,
	 .max = 1e3,
	 .show_default = 1,
	 .help = "multiply message sizes by X"},
	{.name = "time-scale",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = CFG(time_scale),
	 .min = 1e-12,
	 .max = 1e3,
	 .show_default = 1,
	 .help = "multiply schedule times by X"},
	{.name = "jitter",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = CFG(jitter),
	 .min = 0,
	 .max = 0.5,
	 .help = "vary each iteration's length by +-X (e.g. 0.05)"},
	{.name = "snaplen",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = CFG(snaplen),
	 .min = 64,
	 .max = 65535,
	 .help = "keep N bytes of each frame (header-only capture)"},
	{.name = "vlan",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = CFG(vlan_tags),
	 .min = 0,
	 .max = CT_SYNTH_MAX_VLAN,
	 .show_default = 1,
	 .help = "802.1Q tags on each frame, 0..2"},
	{.name = "mtu",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = CFG(mtu),
	 .min = 256,
	 .max = 9000,
	 .help = "RoCE path MTU (default 4096) or TCP IP MTU (default 9000)"},
	{.name = "channels",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = CFG(channels),
	 .min = 1,
	 .max = 64,
	 .help = "NCCL channels (QPs or sockets) per peer (default: the\n"
		 "profile's nccl.channels, else 2)"},
	{.name = "noise",
	 .type = CT_PARAM_FLAG,
	 .offset = CFG(noise),
	 .help = "add storage TCP, ECN marks with CNPs, a retransmission"},
	{.name = "truth-operations",
	 .type = CT_PARAM_FLAG,
	 .offset = CFG(truth_operations),
	 .help = "the truth names each flow's collective operation and\n"
		 "the layout (without it the truth is as it was)"},
	{.name = "seed",
	 .type = CT_PARAM_U64,
	 .arg = "N",
	 .offset = CFG(seed),
	 .min = 0,
	 .max = 1e18,
	 .show_default = 1,
	 .help = "random seed"},
	{.name = "straggler",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "H:SECONDS[:FROM]",
	 .offset = CFG(inject),
	 .parse = parse_straggler,
	 .help = "host H's sends start late, the iteration waits"},
	{.name = "slow-link",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "A-B:FACTOR[:FROM]",
	 .offset = CFG(inject),
	 .parse = parse_slow_link,
	 .help = "the A-B link serializes FACTOR times slower"},
	{.name = "lossy-link",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "A-B:RATE[:FROM]",
	 .offset = CFG(inject),
	 .parse = parse_lossy_link,
	 .help = "packets on A-B lost with chance RATE (RoCE: before the\n"
		 "mirror, NAK, go-back-N; TCP: after it, retransmitted)"},
	{.name = "congest",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "H:FRACTION[:FROM]",
	 .offset = CFG(inject),
	 .parse = parse_congest,
	 .help = "packets toward H CE-marked (RoCE: with CNPs)"},
	{.name = "pfc-storm",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "PRIO:PER_S[:FROM]",
	 .offset = CFG(inject),
	 .parse = parse_pfc_storm,
	 .help = "PFC XOFF frames on a priority, PER_S a second"},
	{.name = "pause",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "IT:SECONDS",
	 .offset = CFG(inject),
	 .parse = parse_pause,
	 .help = "every host idle SECONDS once, after iteration IT's work\n"
		 "(a checkpoint, a stalled input pipeline: a rhythm break)"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args synth_app_args = {
	.prog = "commtap synth",
	.usage = "usage: commtap synth [options] PROFILE -o OUT.pcap\n"
		 "  Render a profile's predicted traffic as a capture, with OUT.truth.json.\n",
	.notes = "  Anomalies to inject: hosts are the profile's host indices, from iteration\n"
		 "  FROM on (default 0); the truth lists them (docs/anomalies.md).\n",
	.min_pos = 1,
	.max_pos = 1,
	.pos_meaning = "PROFILE",
};

const struct ct_param *const synth_options[] = {synth_params, NULL};

int cmd_synth(int argc, char **argv)
{
	struct synth_args a = {0};
	const struct ct_param_set set = {synth_params, &a};
	struct ct_synth_config cfg;
	struct ct_profile profile;
	struct ct_prediction pred;
	struct pcap_out out = {0};
	const char *output, *truth_path, *profile_path;
	char truth_buf[4096], err[512];
	FILE *truth = NULL;
	pcap_t *dead = NULL;
	int first, rc, status = CT_EXIT_ERROR;

	ct_synth_config_default(&a.cfg);
	rc = ct_app_parse(&synth_app_args, &set, 1, argc, argv, &first);
	if (rc)
		return rc == 1 ? CT_EXIT_OK : CT_EXIT_ERROR;
	if (!a.output) {
		fprintf(stderr, "commtap synth: missing -o OUT.pcap (try --help)\n");
		return CT_EXIT_ERROR;
	}
	cfg = a.cfg;
	output = a.output;
	truth_path = a.truth;
	profile_path = argv[first];
	if (cfg.transport == CT_SYNTH_ROCE && cfg.mtu && (cfg.mtu & (cfg.mtu - 1) || cfg.mtu > 4096)) {
		fprintf(stderr, "commtap synth: --mtu: a RoCE path MTU is 256, 512, 1024, 2048 or 4096\n");
		return CT_EXIT_ERROR;
	}
	rc = ct_profile_load(profile_path, &profile, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap synth: %s\n", err);
		return CT_EXIT_ERROR;
	}
	rc = ct_predict(&profile, &pred);
	if (rc) {
		fprintf(stderr, "commtap synth: %s: %s\n", profile_path,
			ct_predict_strerror(&pred, rc));
		ct_profile_free(&profile);
		return CT_EXIT_ERROR;
	}
	{
		const struct ct_synth_inject *in = &cfg.inject;
		int hmax = in->straggler > in->congest ? in->straggler : in->congest;

		hmax = in->slow_a > hmax ? in->slow_a : hmax;
		hmax = in->slow_b > hmax ? in->slow_b : hmax;
		hmax = in->lossy_a > hmax ? in->lossy_a : hmax;
		hmax = in->lossy_b > hmax ? in->lossy_b : hmax;
		if (hmax >= (int)profile.hosts || in->pfc_priority > 7) {
			fprintf(stderr,
				"commtap synth: %s: an injection names host %d, the profile has "
				"hosts 0..%u (PFC priorities 0..7)\n",
				profile_path, hmax, profile.hosts - 1);
			ct_prediction_free(&pred);
			ct_profile_free(&profile);
			return CT_EXIT_ERROR;
		}
	}
	rc = ct_synth_check(&profile, &pred, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap synth: %s: %s\n", profile_path, err);
		ct_prediction_free(&pred);
		ct_profile_free(&profile);
		return CT_EXIT_ERROR;
	}
	if (!truth_path) {
		size_t n = strlen(output);

		if (n > 5 && !strcmp(output + n - 5, ".pcap"))
			n -= 5;
		snprintf(truth_buf, sizeof(truth_buf), "%.*s.truth.json", (int)n, output);
		truth_path = truth_buf;
	}
	dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	out.dumper = dead ? pcap_dump_open(dead, output) : NULL;
	if (!out.dumper) {
		fprintf(stderr, "commtap synth: cannot write %s: %s\n", output,
			dead ? pcap_geterr(dead) : "out of memory");
		goto cleanup;
	}
	truth = fopen(truth_path, "w");
	if (!truth) {
		fprintf(stderr, "commtap synth: cannot write %s: %s\n", truth_path, strerror(errno));
		goto cleanup;
	}
	rc = ct_synth_run(&profile, &pred, &cfg, write_frame, &out, truth);
	if (rc) {
		fprintf(stderr, "commtap synth: rendering %s failed: %s\n", profile.name,
			strerror(-rc));
		goto cleanup;
	}
	if (pcap_dump_flush(out.dumper) || fflush(truth)) {
		fprintf(stderr, "commtap synth: writing %s failed\n", output);
		goto cleanup;
	}
	fprintf(stderr, "commtap synth: %s: %llu packets, %u iterations of %.6f s (x%g), truth in %s\n",
		output, out.packets, cfg.iterations, pred.t_iter * cfg.time_scale, cfg.time_scale,
		truth_path);
	status = CT_EXIT_OK;
cleanup:
	if (out.dumper)
		pcap_dump_close(out.dumper);
	if (dead)
		pcap_close(dead);
	if (truth && fclose(truth))
		status = CT_EXIT_ERROR;
	ct_prediction_free(&pred);
	ct_profile_free(&profile);
	return status;
}
