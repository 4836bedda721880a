// SPDX-License-Identifier: MIT
/*
 * commtap synth PROFILE -o OUT.pcap: what a mirror port would capture while
 * the job trains, with OUT.truth.json beside it.
 */
#include "commands.h"

#include <commtap/params.h>

#include "model.h"
#include "profile.h"
#include "synth.h"

#include <errno.h>
#include <getopt.h>
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

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap synth [options] PROFILE -o OUT.pcap\n"
		"  Render a profile's predicted traffic as a capture, with OUT.truth.json.\n"
		"  -o, --output FILE     the pcap to write (nanosecond timestamps)\n"
		"  --truth FILE          ground truth JSON (default: OUT with .truth.json)\n"
		"  --iterations N        iterations to render (default 5)\n"
		"  --transport roce|tcp  NCCL over RoCEv2 (default) or NCCL's socket transport\n"
		"  --scale X             multiply message sizes by X (default 1)\n"
		"  --time-scale X        multiply schedule times by X (default 1)\n"
		"  --jitter X            vary each iteration's length by +-X (e.g. 0.05)\n"
		"  --snaplen N           keep N bytes of each frame (header-only capture)\n"
		"  --vlan N              802.1Q tags on each frame, 0..2 (default 0)\n"
		"  --mtu N               RoCE path MTU (default 4096) or TCP IP MTU (default "
		"9000)\n"
		"  --channels N          NCCL channels (QPs or sockets) per peer (default: the\n"
		"                        profile's nccl.channels, else 2)\n"
		"  --noise               add storage TCP, ECN marks with CNPs, a retransmission\n"
		"  --truth-operations    the truth names each flow's collective operation and\n"
		"                        the layout (without it the truth is as it was)\n"
		"  --seed N              random seed (default 1)\n"
		"  anomalies to inject (hosts are the profile's host indices; from iteration\n"
		"  FROM on, default 0; the truth lists them; docs/anomalies.md):\n"
		"  --straggler H:SECONDS[:FROM]  host H's sends start late, the iteration waits\n"
		"  --slow-link A-B:FACTOR[:FROM] the A-B link serializes FACTOR times slower\n"
		"  --lossy-link A-B:RATE[:FROM]  packets on A-B lost with chance RATE (RoCE:\n"
		"                                before the mirror, NAK, go-back-N; TCP: after\n"
		"                                it, retransmitted)\n"
		"  --congest H:FRACTION[:FROM]   packets toward H CE-marked (RoCE: with CNPs)\n"
		"  --pfc-storm PRIO:PER_S[:FROM] PFC XOFF frames on a priority, PER_S a second\n");
}

static int number(const char *flag, const char *text, double min, double max, double *out)
{
	char err[256];
	int rc = ct_parse_number(flag + 2, text, min, max, 0, out, err, sizeof(err));

	if (rc)
		fprintf(stderr, "commtap synth: %s\n", err);
	return rc;
}

/*
 * An injection's argument: "A:V[:FROM]" or, with two hosts, "A-B:V[:FROM]".
 * Returns 0 or -EINVAL after saying what is wrong.
 */
static int inject_arg(const char *flag, const char *text, int two, double vmin, double vmax, int *a,
		      int *b, double *v, unsigned *from)
{
	unsigned x, y = 0, f = 0;
	int used = 0, got;
	char rest[64] = "";

	got = two ? sscanf(text, "%u-%u:%63[^:]%n", &x, &y, rest, &used)
		  : sscanf(text, "%u:%63[^:]%n", &x, rest, &used);
	if (got != (two ? 3 : 2) || (text[used] && sscanf(text + used, ":%u", &f) != 1) ||
	    (two && x == y)) {
		fprintf(stderr, "commtap synth: %s: expected %s, got '%s'\n", flag,
			two ? "A-B:VALUE[:FROM] (two different hosts)" : "HOST:VALUE[:FROM]", text);
		return -EINVAL;
	}
	if (number(flag, rest, vmin, vmax, v))
		return -EINVAL;
	*a = (int)x;
	if (b)
		*b = (int)y;
	*from = f;
	return 0;
}

int cmd_synth(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"truth", required_argument, NULL, 'T'},
		{"iterations", required_argument, NULL, 'n'},
		{"transport", required_argument, NULL, 't'},
		{"scale", required_argument, NULL, 's'},
		{"time-scale", required_argument, NULL, 'S'},
		{"jitter", required_argument, NULL, 'j'},
		{"snaplen", required_argument, NULL, 'l'},
		{"vlan", required_argument, NULL, 'V'},
		{"mtu", required_argument, NULL, 'm'},
		{"channels", required_argument, NULL, 'c'},
		{"noise", no_argument, NULL, 'N'},
		{"truth-operations", no_argument, NULL, 6},
		{"seed", required_argument, NULL, 'r'},
		{"straggler", required_argument, NULL, 1},
		{"slow-link", required_argument, NULL, 2},
		{"lossy-link", required_argument, NULL, 3},
		{"congest", required_argument, NULL, 4},
		{"pfc-storm", required_argument, NULL, 5},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ct_synth_config cfg;
	struct ct_profile profile;
	struct ct_prediction pred;
	struct pcap_out out = {0};
	const char *output = NULL, *truth_path = NULL;
	char truth_buf[4096], err[512];
	FILE *truth = NULL;
	pcap_t *dead = NULL;
	double v;
	int c, rc, status = CT_EXIT_ERROR;

	ct_synth_config_default(&cfg);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'T':
			truth_path = optarg;
			break;
		case 'n':
			rc = number("--iterations", optarg, 1, 1e6, &v);
			cfg.iterations = (unsigned)v;
			break;
		case 't':
			if (!strcmp(optarg, "roce")) {
				cfg.transport = CT_SYNTH_ROCE;
			} else if (!strcmp(optarg, "tcp")) {
				cfg.transport = CT_SYNTH_TCP;
			} else {
				fprintf(stderr, "commtap synth: --transport: expected roce or tcp, got '%s'\n",
					optarg);
				rc = -EINVAL;
			}
			break;
		case 's':
			rc = number("--scale", optarg, 1e-12, 1e3, &cfg.size_scale);
			break;
		case 'S':
			rc = number("--time-scale", optarg, 1e-12, 1e3, &cfg.time_scale);
			break;
		case 'j':
			rc = number("--jitter", optarg, 0, 0.5, &cfg.jitter);
			break;
		case 'l':
			rc = number("--snaplen", optarg, 64, 65535, &v);
			cfg.snaplen = (unsigned)v;
			break;
		case 'V':
			rc = number("--vlan", optarg, 0, CT_SYNTH_MAX_VLAN, &v);
			cfg.vlan_tags = (unsigned)v;
			break;
		case 'm':
			rc = number("--mtu", optarg, 256, 9000, &v);
			cfg.mtu = (unsigned)v;
			break;
		case 'c':
			rc = number("--channels", optarg, 1, 64, &v);
			cfg.channels = (unsigned)v;
			break;
		case 'N':
			cfg.noise = 1;
			break;
		case 6:
			cfg.truth_operations = 1;
			break;
		case 'r':
			rc = number("--seed", optarg, 0, 1e18, &v);
			cfg.seed = (uint64_t)v;
			break;
		case 1:
			rc = inject_arg("--straggler", optarg, 0, 0, 1e3, &cfg.inject.straggler,
					NULL, &cfg.inject.straggler_s, &cfg.inject.straggler_from);
			break;
		case 2:
			rc = inject_arg("--slow-link", optarg, 1, 1, 1e3, &cfg.inject.slow_a,
					&cfg.inject.slow_b, &cfg.inject.slow_factor,
					&cfg.inject.slow_from);
			break;
		case 3:
			rc = inject_arg("--lossy-link", optarg, 1, 0, 0.5, &cfg.inject.lossy_a,
					&cfg.inject.lossy_b, &cfg.inject.loss_rate,
					&cfg.inject.lossy_from);
			break;
		case 4:
			rc = inject_arg("--congest", optarg, 0, 0, 1, &cfg.inject.congest, NULL,
					&cfg.inject.congest_fraction, &cfg.inject.congest_from);
			break;
		case 5:
			rc = inject_arg("--pfc-storm", optarg, 0, 0, 1e6, &cfg.inject.pfc_priority,
					NULL, &cfg.inject.pfc_per_s, &cfg.inject.pfc_from);
			break;
		case 'h':
			usage(stdout);
			return CT_EXIT_OK;
		default:
			fprintf(stderr, "commtap synth: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return CT_EXIT_ERROR;
		}
		if (rc)
			return CT_EXIT_ERROR;
	}
	if (optind != argc - 1 || !output) {
		fprintf(stderr, "commtap synth: %s (try --help)\n",
			!output ? "missing -o OUT.pcap" : "expected exactly one PROFILE");
		return CT_EXIT_ERROR;
	}
	if (cfg.transport == CT_SYNTH_ROCE && cfg.mtu && (cfg.mtu & (cfg.mtu - 1) || cfg.mtu > 4096)) {
		fprintf(stderr, "commtap synth: --mtu: a RoCE path MTU is 256, 512, 1024, 2048 or 4096\n");
		return CT_EXIT_ERROR;
	}
	rc = ct_profile_load(argv[optind], &profile, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap synth: %s\n", err);
		return CT_EXIT_ERROR;
	}
	rc = ct_predict(&profile, &pred);
	if (rc) {
		fprintf(stderr, "commtap synth: %s: %s\n", argv[optind],
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
				argv[optind], hmax, profile.hosts - 1);
			ct_prediction_free(&pred);
			ct_profile_free(&profile);
			return CT_EXIT_ERROR;
		}
	}
	rc = ct_synth_check(&profile, &pred, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap synth: %s: %s\n", argv[optind], err);
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
