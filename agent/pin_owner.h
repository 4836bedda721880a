/* SPDX-License-Identifier: MIT */
/*
 * Whose pins these are. A probe's pins live under the network namespace's
 * inode and the interface's index (probe.c), two numbers the kernel reuses
 * once the namespace is gone; the namespace's cookie (SO_NETNS_COOKIE,
 * Linux >= 5.14), which it never reuses while it runs, is pinned beside
 * them ("owner") and checked before they are continued.
 */
#ifndef COMMTAP_AGENT_PIN_OWNER_H
#define COMMTAP_AGENT_PIN_OWNER_H

#include <stdint.h>

/* This network namespace's cookie, or 0 where the kernel has none. */
uint64_t ct_netns_cookie(void);

/* The cookie pinned in pin_dir/owner: 1 with *cookie, 0 when there is no
 * owner pin (none yet, an older agent's, or a kernel without cookies), or
 * -errno. */
int ct_pin_owner_read(const char *pin_dir, uint64_t *cookie);

/* Pin pin_dir/owner holding cookie (replacing an older one). 0 or -errno. */
int ct_pin_owner_write(const char *pin_dir, uint64_t cookie);

/* Unpin pin_dir/owner: 0, or -errno other than -ENOENT. */
int ct_pin_owner_remove(const char *pin_dir);

/* Unpin everything in pin_dir (the pins of a gone owner): count or -errno. */
int ct_pins_remove(const char *pin_dir);

#endif
