// SPDX-License-Identifier: MIT
/*
 * Load and attach the host probe on one interface (ebpf/probe.bpf.c).
 *
 * XDP goes through libxdp's dispatcher, so the probe runs beside other XDP
 * programs attached the same way; a program attached directly (not through
 * a dispatcher) is never replaced. TC egress is a clsact filter with
 * commtap's own handle. The maps are pinned: a later agent finds them, and
 * with them the counters, and takes over programs an agent left attached
 * with --persist. Pins are per network namespace and ifindex, and one agent
 * at a time holds them; the namespace's cookie pinned beside them tells a
 * namespace that reuses a gone one's numbers (pin_owner.h).
 */
#include "probe.h"

#include <commtap/error.h>
#include <commtap/roce_opcode.h>

#include "../ebpf/probe_abi.h"
#include "pin_owner.h"
#include "probe.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#define BPF_FS_MAGIC_ 0xcafe4a11
#define BPF_FS_ROOT   "/sys/fs/bpf"
#define KERNEL_BTF    "/sys/kernel/btf/vmlinux"
#define CT_TC_HANDLE  0xc7a9
#define CT_TC_PRIO    0xc7
#define XDP_PROG_NAME "ct_xdp"
#define TC_PROG_NAME  "ct_tc_egress"
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct ct_probe {
	char ifname[IF_NAMESIZE];
	int ifindex;
	unsigned long long netns; /* inode of the network namespace the agent runs in */
	char ns_dir[496];	  /* pin root/ns<inode> */
	char pin_dir[512];	  /* ns_dir/<ifindex> */
	int lock_fd;		  /* pin_dir, flock'ed while this agent uses the pins */
	uint64_t cookie;	  /* the namespace's cookie, 0 where the kernel has none */
	struct ctp_probe *skel;
	struct xdp_program *xdp; /* attached by this agent, NULL when taken over */
	enum xdp_attach_mode xdp_mode;
	int tc_hook_created;
	int resumed;		   /* programs or maps taken over from an earlier agent */
	int forked_copy;	   /* a reader's copy: never detaches or unpins */
	int dispatcher;		   /* XDP runs in libxdp's dispatcher (else alone) */
	char dispatcher_note[200]; /* libxdp's reason when it could not use it */
	uint32_t flow_entries;
	uint32_t flow_entries6;
};

static int debug_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("COMMTAP_BPF_DEBUG") != NULL;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* libxdp's first warning about its dispatcher or bpffs since the last reset. */
static char xdp_note[200];

static int xdp_debug_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	char line[sizeof(xdp_note)], *text = line;
	va_list aq;

	va_copy(aq, ap);
	vsnprintf(line, sizeof(line), fmt, aq);
	va_end(aq);
	text += strspn(text, " ");
	if (!strncmp(text, "libxdp: ", 8))
		text += 8;
	if (level != LIBXDP_DEBUG && !xdp_note[0] &&
	    (strstr(text, "dispatcher") || strstr(text, "bpffs")) &&
	    !strstr(text, "Falling back")) {
		text[strcspn(text, "\n")] = 0;
		snprintf(xdp_note, sizeof(xdp_note), "%s", text);
	}
	return debug_print((enum libbpf_print_level)level, fmt, ap);
}

/* Loading BPF needs CAP_BPF (or CAP_SYS_ADMIN), attaching CAP_NET_ADMIN. */
static int check_capabilities(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {0};
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data))
		return 0; /* cannot tell: let the kernel decide */
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	if (!(eff & (1ull << CAP_BPF)) && !(eff & (1ull << CAP_SYS_ADMIN)))
		return ct_fail(
			err, errlen, -EPERM,
			"missing capability CAP_BPF (or CAP_SYS_ADMIN): run as root or grant "
			"it (setcap cap_bpf,cap_net_admin,cap_perfmon+ep)");
	if (!(eff & (1ull << CAP_NET_ADMIN)))
		return ct_fail(err, errlen, -EPERM,
			       "missing capability CAP_NET_ADMIN (needed to attach XDP and TC "
			       "programs): run as root or grant it");
	return 0;
}

/* The BPF filesystem at /sys/fs/bpf, mounted if it is not. */
static int ensure_bpffs(char *err, size_t errlen)
{
	struct statfs st;

	if (!statfs(BPF_FS_ROOT, &st) && st.f_type == BPF_FS_MAGIC_)
		return 0;
	if (mount("bpffs", BPF_FS_ROOT, "bpf", 0, "mode=0700"))
		return ct_fail(err, errlen, -errno,
			       "%s is not a BPF filesystem and mounting one failed: %s",
			       BPF_FS_ROOT, strerror(errno));
	return 0;
}

static int mkdir_p(const char *dir)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Pins are keyed by the network namespace and the interface index: two
 * namespaces may each have an interface of the same name (or index), and
 * the agent usually runs in the host's mount namespace, so they share one
 * bpffs.
 */
static int set_pin_dir(struct ct_probe *p, const char *root, char *err, size_t errlen)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return ct_fail(err, errlen, -errno,
			       "cannot tell the network namespace (/proc/self/ns/net): %s",
			       strerror(errno));
	p->netns = (unsigned long long)st.st_ino;
	snprintf(p->ns_dir, sizeof(p->ns_dir), "%s/ns%llu", root, p->netns);
	snprintf(p->pin_dir, sizeof(p->pin_dir), "%s/%d", p->ns_dir, p->ifindex);
	return 0;
}

/*
 * One agent per set of pins: an exclusive flock on the pin directory, held
 * until exit (the kernel drops it when an agent is killed, so --persist
 * resumes after kill -9).
 */
static int lock_pins(struct ct_probe *p, char *err, size_t errlen)
{
	p->lock_fd = open(p->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->lock_fd < 0)
		return ct_fail(err, errlen, -errno, "cannot open %s: %s", p->pin_dir,
			       strerror(errno));
	if (!flock(p->lock_fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno == EWOULDBLOCK)
		return ct_fail(err, errlen, -EBUSY,
			       "%s: another commtap agent is running on this interface (network "
			       "namespace %llu, ifindex %d: %s is locked); stop it first",
			       p->ifname, p->netns, p->ifindex, p->pin_dir);
	return ct_fail(err, errlen, -errno, "cannot lock %s: %s", p->pin_dir, strerror(errno));
}

static void release_pins(struct ct_probe *p, int unpin)
{
	if (unpin) {
		rmdir(p->pin_dir);
		rmdir(p->ns_dir); /* fails while another interface of the namespace is pinned */
	}
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	p->lock_fd = -1;
}

void ct_probe_fill_opcodes(volatile uint32_t *out)
{
	for (unsigned i = 0; i < 256; i++) {
		const struct ct_opcode_info *o = &ct_opcode_table[i];

		out[i] = !o->valid ? 0
				   : CTP_OP_VALID | (o->response ? CTP_OP_RESPONSE : 0) |
					     (uint32_t)o->kind << 2 | (uint32_t)o->pos << 5 |
					     (uint32_t)o->ext_len << 8 | (uint32_t)o->ext << 16;
	}
}

/*
 * What is attached on the interface's XDP hook: 0 nothing, 1 our program
 * in a dispatcher, or -EBUSY (with err) when a program was attached
 * without a dispatcher.
 */
static int xdp_state(struct ct_probe *p, char *err, size_t errlen)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	struct xdp_program *prog;
	int rc = 0;

	if (libxdp_get_error(mp))
		return 0; /* nothing attached (or nothing libxdp can read) */
	if (xdp_multiprog__is_legacy(mp)) {
		prog = xdp_multiprog__main_prog(mp);
		if (prog && !strcmp(xdp_program__name(prog), XDP_PROG_NAME)) {
			/* ours, attached alone where libxdp had no dispatcher */
			p->xdp_mode = xdp_multiprog__attach_mode(mp);
			p->dispatcher = 0;
			xdp_multiprog__close(mp);
			return 1;
		}
		rc = ct_fail(
			err, errlen, -EBUSY,
			"%s: XDP program '%s' (id %u) is already attached by someone else, not "
			"through libxdp's dispatcher; commtap will not replace it (detach it, or "
			"load it with xdp-loader so both can run)",
			p->ifname, prog ? xdp_program__name(prog) : "?",
			prog ? xdp_program__id(prog) : 0);
	} else {
		for (prog = xdp_multiprog__next_prog(NULL, mp); prog;
		     prog = xdp_multiprog__next_prog(prog, mp))
			if (!strcmp(xdp_program__name(prog), XDP_PROG_NAME)) {
				p->xdp_mode = xdp_multiprog__attach_mode(mp);
				p->dispatcher = 1;
				rc = 1;
			}
	}
	xdp_multiprog__close(mp);
	return rc;
}

static int xdp_detach_ours(struct ct_probe *p)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	struct xdp_program *prog;
	int rc = -ENOENT;

	if (libxdp_get_error(mp))
		return -ENOENT;
	if (xdp_multiprog__is_legacy(mp)) {
		prog = xdp_multiprog__main_prog(mp);
		if (prog && !strcmp(xdp_program__name(prog), XDP_PROG_NAME))
			rc = xdp_program__detach(prog, p->ifindex, xdp_multiprog__attach_mode(mp),
						 0);
	} else {
		for (prog = xdp_multiprog__next_prog(NULL, mp); prog;
		     prog = xdp_multiprog__next_prog(prog, mp))
			if (!strcmp(xdp_program__name(prog), XDP_PROG_NAME)) {
				rc = xdp_program__detach(prog, p->ifindex,
							 xdp_multiprog__attach_mode(mp), 0);
				break;
			}
	}
	xdp_multiprog__close(mp);
	return rc;
}

static void set_pin(struct ct_probe *p, struct bpf_map *map, const char *what)
{
	char path[600];
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->pin_dir, what);
	bpf_map__set_pin_path(map, path);
	/* a pinned map from an earlier agent is reused: take its size */
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		if (bpf_map__max_entries(map) != info.max_entries)
			fprintf(stderr,
				"commtap agent: %s: %s keeps the size it was pinned with (%u)\n",
				p->ifname, what, info.max_entries);
		bpf_map__set_max_entries(map, info.max_entries);
		p->resumed = 1;
	}
	close(fd);
}

/*
 * IPv6 flows are rarer than IPv4 ones on the networks the probe watches; an
 * LRU map's entries are all allocated up front, so its default is smaller.
 */
static uint32_t ct_probe_default_entries6(uint32_t entries4)
{
	return entries4 / 8 > 64 ? entries4 / 8 : 64;
}

/* The version of the probe pinned in pin_dir: 0 none, 1 before the "abi" pin. */
static int pinned_abi(const struct ct_probe *p, uint32_t *version)
{
	static const char *const v1_pins[] = {"flows", "totals", "events"};
	char path[600];
	uint32_t zero = 0;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/abi", p->pin_dir);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		rc = bpf_map_lookup_elem(fd, &zero, version) ? -errno : 0;
		close(fd);
		return rc;
	}
	*version = 0;
	for (unsigned i = 0; i < sizeof(v1_pins) / sizeof(v1_pins[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->pin_dir, v1_pins[i]);
		if (!access(path, F_OK))
			*version = 1;
	}
	return 0;
}

/*
 * Maps pinned by a probe of another layout (an agent of another version
 * left it with --persist) would be misread: refuse them, saying what to do.
 */
static int check_pinned_abi(const struct ct_probe *p, char *err, size_t errlen)
{
	uint32_t version = 0;
	int rc = pinned_abi(p, &version);

	if (rc)
		return ct_fail(err, errlen, rc, "%s: cannot read %s/abi: %s", p->ifname, p->pin_dir,
			       strerror(-rc));
	if (!version || version == CTP_ABI_VERSION)
		return 0;
	return ct_fail(
		err, errlen, -EPROTO,
		"%s: the probe pinned in %s has map layout version %u, this agent reads "
		"version %u: its counters cannot be continued; stop it with the agent that "
		"started it (without --persist), or detach its XDP/TC programs and remove %s",
		p->ifname, p->pin_dir, version, CTP_ABI_VERSION, p->pin_dir);
}

/*
 * Pins left by a probe that is gone are never continued: those of another
 * network namespace that had this one's inode (its cookie differs), and,
 * without --persist, those whose XDP program is no longer attached here
 * (ours: 1 when it is). They are removed, with one line saying why.
 */
static int drop_stale_pins(struct ct_probe *p, const struct ct_probe_config *cfg, int ours,
			   char *err, size_t errlen)
{
	uint64_t owner = 0;
	uint32_t version = 0;
	const char *why = NULL;
	char what[160];
	int have, rc;

	p->cookie = ct_netns_cookie();
	have = ct_pin_owner_read(p->pin_dir, &owner);
	if (have < 0)
		return ct_fail(err, errlen, have, "%s: cannot read %s/owner: %s", p->ifname,
			       p->pin_dir, strerror(-have));
	rc = pinned_abi(p, &version);
	if (rc || (!version && !have))
		return rc; /* nothing pinned */
	if (have && p->cookie && owner != p->cookie) {
		snprintf(what, sizeof(what),
			 "they belong to a network namespace that is gone (cookie %llu, this one "
			 "%llu)",
			 (unsigned long long)owner, (unsigned long long)p->cookie);
		why = what;
	} else if (!ours && !cfg->persist) {
		why = "no probe counts into them any more (give --persist to continue them)";
	}
	if (!why)
		return 0;
	rc = ct_pins_remove(p->pin_dir);
	if (rc < 0)
		return ct_fail(err, errlen, rc, "%s: cannot remove the stale pins in %s: %s",
			       p->ifname, p->pin_dir, strerror(-rc));
	fprintf(stderr, "commtap agent: %s: %d pin(s) in %s removed, not continued: %s\n",
		p->ifname, rc, p->pin_dir, why);
	return 0;
}

/* Write the layout version into the (pinned) abi map. */
static int write_abi(struct ct_probe *p, char *err, size_t errlen)
{
	uint32_t zero = 0, version = CTP_ABI_VERSION;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.ctp_abi), &zero, &version, BPF_ANY))
		return ct_fail(err, errlen, -errno, "%s: cannot write the probe's abi map: %s",
			       p->ifname, strerror(errno));
	return 0;
}

static int open_skeleton(struct ct_probe *p, const struct ct_probe_config *cfg, int load_xdp,
			 char *err, size_t errlen)
{
	struct ctp_probe *s = ctp_probe__open();

	if (!s)
		return ct_fail(err, errlen, -errno, "%s: cannot open the BPF object: %s", p->ifname,
			       strerror(errno));
	p->skel = s;
	ct_probe_fill_opcodes(s->rodata->ctp_opcode_info);
	s->rodata->ctp_burst_gap_ns = cfg->burst_gap_ns;
	s->rodata->ctp_tcp_msg_gap_ns = cfg->tcp_msg_gap_ns;
	s->rodata->ctp_sample_every = cfg->sample_every ? cfg->sample_every : 1;
	s->rodata->ctp_transports = cfg->transports ? cfg->transports : CTP_EN_ROCE | CTP_EN_TCP;
	bpf_map__set_max_entries(s->maps.ctp_flows, cfg->flow_entries);
	bpf_map__set_max_entries(s->maps.ctp_flows6,
				 cfg->flow_entries6 ? cfg->flow_entries6
						    : ct_probe_default_entries6(cfg->flow_entries));
	bpf_map__set_max_entries(s->maps.ctp_events, cfg->ring_bytes);
	set_pin(p, s->maps.ctp_flows, "flows");
	set_pin(p, s->maps.ctp_flows6, "flows6");
	set_pin(p, s->maps.ctp_totals, "totals");
	set_pin(p, s->maps.ctp_events, "events");
	set_pin(p, s->maps.ctp_abi, "abi");
	p->flow_entries = bpf_map__max_entries(s->maps.ctp_flows);
	p->flow_entries6 = bpf_map__max_entries(s->maps.ctp_flows6);
	bpf_program__set_autoload(s->progs.ct_xdp, load_xdp);
	return 0;
}

static void close_skeleton(struct ct_probe *p)
{
	if (p->xdp)
		xdp_program__close(p->xdp);
	p->xdp = NULL;
	ctp_probe__destroy(p->skel);
	p->skel = NULL;
}

static int xdp_dispatcher_in_use(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	int in_use;

	if (libxdp_get_error(mp))
		return 0;
	in_use = !xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return in_use;
}

/* Load the object through libxdp and attach XDP in mode. */
static int attach_xdp(struct ct_probe *p, const struct ct_probe_config *cfg,
		      enum xdp_attach_mode mode, char *err, size_t errlen)
{
	char msg[256];
	int rc;

	rc = open_skeleton(p, cfg, 1, err, errlen);
	if (rc)
		return rc;
	p->xdp = xdp_program__from_bpf_obj(p->skel->obj, "xdp.frags");
	rc = (int)libxdp_get_error(p->xdp);
	if (rc) {
		p->xdp = NULL;
		return ct_fail(err, errlen, rc, "%s: libxdp cannot use the probe: %s", p->ifname,
			       strerror(-rc));
	}
	xdp_note[0] = 0;
	rc = xdp_program__attach(p->xdp, p->ifindex, mode, 0);
	if (rc) {
		libxdp_strerror(rc, msg, sizeof(msg));
		return ct_fail(err, errlen, rc, "%s: attaching XDP (%s mode) failed: %s", p->ifname,
			       mode == XDP_MODE_SKB ? "generic" : "native", msg);
	}
	p->xdp_mode = mode;
	p->dispatcher = xdp_dispatcher_in_use(p->ifindex);
	if (!p->dispatcher) {
		/* see docs/deploy-host.md: e.g. kernels that refuse freplace programs */
		snprintf(p->dispatcher_note, sizeof(p->dispatcher_note), "%s",
			 xdp_note[0] ? xdp_note : "libxdp gave no reason");
		fprintf(stderr,
			"commtap agent: notice: %s: libxdp could not use its multi-program "
			"dispatcher (libxdp: %s); the probe's XDP program is attached alone, "
			"and other XDP programs cannot run beside it\n",
			p->ifname, p->dispatcher_note);
	}
	return 0;
}

static int attach_tc(struct ct_probe *p, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = CT_TC_HANDLE, .priority = CT_TC_PRIO);
	int rc = bpf_tc_hook_create(&hook);

	if (rc && rc != -EEXIST)
		return ct_fail(err, errlen, rc, "%s: cannot create the clsact qdisc: %s", p->ifname,
			       strerror(-rc));
	p->tc_hook_created = !rc;
	if (!bpf_tc_query(&hook, &opts)) {
		struct bpf_prog_info info = {0};
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(opts.prog_id);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    strcmp(info.name, TC_PROG_NAME)) {
			close(fd);
			return ct_fail(err, errlen, -EBUSY,
				       "%s: TC egress filter handle 0x%x priority %u holds someone "
				       "else's program '%s'; commtap will not replace it",
				       p->ifname, CT_TC_HANDLE, CT_TC_PRIO, info.name);
		}
		if (fd >= 0)
			close(fd);
		/* ours, from an earlier agent: replaced atomically by this build */
		p->resumed = 1;
		opts.flags = BPF_TC_F_REPLACE;
	}
	opts.prog_id = 0;
	opts.prog_fd = bpf_program__fd(p->skel->progs.ct_tc_egress);
	rc = bpf_tc_attach(&hook, &opts);
	if (rc)
		return ct_fail(err, errlen, rc, "%s: attaching the TC egress program failed: %s",
			       p->ifname, strerror(-rc));
	return 0;
}

static void detach_tc(struct ct_probe *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = CT_TC_HANDLE, .priority = CT_TC_PRIO);

	bpf_tc_detach(&hook, &opts);
	if (p->tc_hook_created)
		bpf_tc_hook_destroy(&hook);
}

int ct_probe_open(const char *ifname, const struct ct_probe_config *cfg, struct ct_probe **out,
		  char *err, size_t errlen)
{
	struct ct_probe *p;
	int rc, ours;

	libbpf_set_print(debug_print);
	libxdp_set_print(xdp_debug_print);
	if (strlen(ifname) >= IF_NAMESIZE || !if_nametoindex(ifname))
		return ct_fail(err, errlen, -ENODEV, "no such interface: %s", ifname);
	rc = check_capabilities(err, errlen);
	if (rc)
		return rc;
	if (access(KERNEL_BTF, R_OK))
		return ct_fail(err, errlen, -EOPNOTSUPP,
			       "the kernel has no BTF (%s is missing): the probe needs a kernel "
			       "built with CONFIG_DEBUG_INFO_BTF=y",
			       KERNEL_BTF);
	rc = ensure_bpffs(err, errlen);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ct_fail(err, errlen, -ENOMEM, "out of memory");
	p->lock_fd = -1;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->ifindex = (int)if_nametoindex(ifname);
	rc = set_pin_dir(p, cfg->pin_root ? cfg->pin_root : CT_PROBE_PIN_ROOT, err, errlen);
	if (rc)
		goto err;
	rc = mkdir_p(p->pin_dir);
	if (rc) {
		ct_fail(err, errlen, rc, "cannot create %s: %s", p->pin_dir, strerror(-rc));
		goto err;
	}
	rc = lock_pins(p, err, errlen);
	if (rc)
		goto err;
	rc = check_pinned_abi(p, err, errlen);
	if (rc)
		goto err;

	ours = xdp_state(p, err, errlen);
	if (ours < 0) {
		rc = ours;
		goto err;
	}
	rc = drop_stale_pins(p, cfg, ours, err, errlen);
	if (rc)
		goto err;
	if (ours) {
		/* an earlier agent's XDP program stays: it already counts into the pins */
		p->resumed = 1;
		rc = open_skeleton(p, cfg, 0, err, errlen);
		if (!rc && (rc = ctp_probe__load(p->skel)))
			ct_fail(err, errlen, rc, "%s: loading the probe failed: %s", ifname,
				strerror(-rc));
	} else {
		rc = attach_xdp(p, cfg, cfg->skb_mode ? XDP_MODE_SKB : XDP_MODE_NATIVE, err,
				errlen);
		if (rc && !cfg->skb_mode) {
			fprintf(stderr,
				"commtap agent: notice: %s: %s; falling back to generic (skb) "
				"XDP\n",
				ifname, err);
			close_skeleton(p);
			rc = attach_xdp(p, cfg, XDP_MODE_SKB, err, errlen);
		}
	}
	if (!rc)
		rc = write_abi(p, err, errlen);
	if (!rc && p->cookie && (rc = ct_pin_owner_write(p->pin_dir, p->cookie)))
		ct_fail(err, errlen, rc, "%s: cannot pin %s/owner: %s", ifname, p->pin_dir,
			strerror(-rc));
	if (rc) {
		if (p->xdp)
			xdp_program__detach(p->xdp, p->ifindex, p->xdp_mode, 0);
		goto err;
	}
	rc = attach_tc(p, err, errlen);
	if (rc) {
		if (p->xdp)
			xdp_program__detach(p->xdp, p->ifindex, p->xdp_mode, 0);
		goto err;
	}
	*out = p;
	return 0;
err:
	close_skeleton(p);
	release_pins(p, 0);
	free(p);
	return rc;
}

void ct_probe_forked_copy(struct ct_probe *p)
{
	/*
	 * close, never flock(LOCK_UN): the lock belongs to the open file the
	 * opener shares, and must die with the opener (kill -9 included)
	 */
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	p->lock_fd = -1;
	p->forked_copy = 1;
}

void ct_probe_close(struct ct_probe *p, int persist)
{
	if (!p)
		return;
	if (p->forked_copy)
		persist = 1; /* the opener detaches and unpins */
	if (!persist) {
		if (p->xdp)
			xdp_program__detach(p->xdp, p->ifindex, p->xdp_mode, 0);
		else
			xdp_detach_ours(p);
		detach_tc(p);
		bpf_object__unpin_maps(p->skel->obj, NULL);
		ct_pin_owner_remove(p->pin_dir);
	}
	release_pins(p, !persist);
	close_skeleton(p);
	free(p);
}

const char *ct_probe_ifname(const struct ct_probe *p)
{
	return p->ifname;
}

int ct_probe_flows_fd(const struct ct_probe *p)
{
	return bpf_map__fd(p->skel->maps.ctp_flows);
}

int ct_probe_flows6_fd(const struct ct_probe *p)
{
	return bpf_map__fd(p->skel->maps.ctp_flows6);
}

int ct_probe_totals_fd(const struct ct_probe *p)
{
	return bpf_map__fd(p->skel->maps.ctp_totals);
}

int ct_probe_events_fd(const struct ct_probe *p)
{
	return bpf_map__fd(p->skel->maps.ctp_events);
}

uint32_t ct_probe_flow_entries(const struct ct_probe *p)
{
	return p->flow_entries;
}

uint32_t ct_probe_flow_entries6(const struct ct_probe *p)
{
	return p->flow_entries6;
}

const char *ct_probe_xdp_mode(const struct ct_probe *p)
{
	switch (p->xdp_mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "generic";
	case XDP_MODE_HW:
		return "offload";
	default:
		return "unknown";
	}
}

int ct_probe_resumed(const struct ct_probe *p)
{
	return p->resumed;
}

int ct_probe_dispatcher(const struct ct_probe *p)
{
	return p->dispatcher;
}

const char *ct_probe_dispatcher_note(const struct ct_probe *p)
{
	return p->dispatcher_note[0] ? p->dispatcher_note : NULL;
}
