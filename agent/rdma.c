// SPDX-License-Identifier: MIT
#include "rdma.h"

#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define IB_ROOT "/sys/class/infiniband"

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	unsigned long long x;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*v = x;
	return 0;
}

/* Every numeric file of dir as {name: value}. */
static json_object *counters_dir(const char *dir)
{
	json_object *o = json_object_new_object();
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];
	uint64_t v;

	if (!d)
		return o;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!read_u64(path, &v))
			json_object_object_add(o, e->d_name, json_object_new_uint64(v));
	}
	closedir(d);
	return o;
}

json_object *ct_rdma_json(void)
{
	json_object *arr = json_object_new_array();
	DIR *devs = opendir(IB_ROOT);
	struct dirent *dev, *port;
	char path[768], buf[64];

	if (!devs)
		return arr;
	while ((dev = readdir(devs))) {
		DIR *ports;

		if (dev->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), IB_ROOT "/%s/ports", dev->d_name);
		ports = opendir(path);
		if (!ports)
			continue;
		while ((port = readdir(ports))) {
			json_object *o;
			FILE *f;

			if (port->d_name[0] == '.')
				continue;
			o = json_object_new_object();
			json_object_object_add(o, "device", json_object_new_string(dev->d_name));
			json_object_object_add(o, "port", json_object_new_int(atoi(port->d_name)));
			snprintf(path, sizeof(path), IB_ROOT "/%s/ports/%s/link_layer", dev->d_name,
				 port->d_name);
			f = fopen(path, "r");
			if (f && fgets(buf, sizeof(buf), f)) {
				buf[strcspn(buf, "\n")] = 0;
				json_object_object_add(o, "link_layer",
						       json_object_new_string(buf));
			}
			if (f)
				fclose(f);
			snprintf(path, sizeof(path), IB_ROOT "/%s/ports/%s/counters", dev->d_name,
				 port->d_name);
			json_object_object_add(o, "counters", counters_dir(path));
			snprintf(path, sizeof(path), IB_ROOT "/%s/ports/%s/hw_counters",
				 dev->d_name, port->d_name);
			json_object_object_add(o, "hw_counters", counters_dir(path));
			json_object_array_add(arr, o);
		}
		closedir(ports);
	}
	closedir(devs);
	return arr;
}

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = {0};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* Driver statistics whose names speak of pause or priority flow control. */
json_object *ct_rdma_pause_json(const char *ifname)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} sset = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS}};
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *stats = NULL;
	json_object *o = NULL;
	uint32_t n;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return NULL;
	if (ethtool(fd, ifname, &sset) || !sset.hdr.sset_mask || !(n = sset.len))
		goto out;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(uint64_t));
	if (!names || !stats)
		goto out;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	if (ethtool(fd, ifname, names) || ethtool(fd, ifname, stats))
		goto out;
	o = json_object_new_object();
	for (uint32_t i = 0; i < n && i < names->len && i < stats->n_stats; i++) {
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, names->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = 0;
		if (strstr(name, "pause") || strstr(name, "pfc") || strstr(name, "prio"))
			json_object_object_add(o, name, json_object_new_uint64(stats->data[i]));
	}
out:
	free(names);
	free(stats);
	close(fd);
	return o;
}
