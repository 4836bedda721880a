// SPDX-License-Identifier: MIT
/* Shared-memory event ring: creation, mapping, multi-producer push, pop. */
#include "commtap/gpu_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* This thread's lane in the ring it last wrote, chosen at its first record
 * there: a lane of its own while there are free ones (written with plain
 * stores), else the shared last lane (claimed with a CAS). */
static __thread uint32_t tl_epoch __attribute__((tls_model("initial-exec")));
static __thread unsigned tl_lane __attribute__((tls_model("initial-exec")));
static __thread bool tl_own __attribute__((tls_model("initial-exec")));
static uint32_t ring_epochs; /* rings created in this process: their epochs */

static uint32_t round_pow2(uint32_t v, uint32_t p)
{
	while (p < v && p < (1u << 26))
		p <<= 1;
	return p;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ct_gpu_ring_path(char *buf, size_t len, const char *dir, const char *kind, int pid)
{
	int n = snprintf(buf, len, "%s/commtap-%s.%d", dir, kind, pid);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int map_ring(struct ct_gpu_ring *r, int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	r->hdr = p;
	r->slots = (struct ct_gpu_rec *)((char *)p + CT_GPU_RING_HDR_SIZE);
	r->map_len = len;
	r->fd = fd;
	return 0;
}

static void ring_shape(uint32_t slots, uint32_t lanes, uint32_t *nl, uint32_t *per)
{
	*nl = round_pow2(lanes ? lanes : 1, 1);
	if (*nl > CT_GPU_RING_MAX_LANES)
		*nl = CT_GPU_RING_MAX_LANES;
	*per = round_pow2(slots / *nl, 64);
}

size_t ct_gpu_ring_bytes(uint32_t slots, uint32_t lanes)
{
	uint32_t nl, per;

	ring_shape(slots, lanes, &nl, &per);
	return CT_GPU_RING_HDR_SIZE + (size_t)per * nl * CT_GPU_REC_SIZE;
}

int ct_gpu_ring_create(struct ct_gpu_ring *r, const char *path, uint32_t slots, uint32_t lanes,
		       enum ct_gpu_source source)
{
	return ct_gpu_ring_create_at(r, AT_FDCWD, path, slots, lanes, source);
}

int ct_gpu_ring_create_at(struct ct_gpu_ring *r, int dirfd, const char *path, uint32_t slots,
			  uint32_t lanes, enum ct_gpu_source source)
{
	uint32_t nl, per, n;
	size_t len;

	ring_shape(slots, lanes, &nl, &per);
	n = per * nl;
	len = CT_GPU_RING_HDR_SIZE + (size_t)n * CT_GPU_REC_SIZE;
	struct ct_gpu_ring_hdr *h;
	int fd, err;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	/* A ring left by an earlier process with the same pid is stale. */
	unlinkat(dirfd, path, 0);
	/* 0600: the agent reads as root; no other user has to. */
	fd = openat(dirfd, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		err = -errno;
		goto fail;
	}
	err = map_ring(r, fd, len);
	if (err)
		goto fail;
	h = r->hdr;
	h->version = CT_GPU_RING_VERSION;
	h->hdr_size = CT_GPU_RING_HDR_SIZE;
	h->rec_size = CT_GPU_REC_SIZE;
	h->slots = n;
	h->lanes = nl;
	h->lane_slots = per;
	h->source = source;
	h->clock = CT_GPU_CLOCK_REALTIME;
	h->pid = getpid();
	h->created_realtime_ns = clock_ns(CLOCK_REALTIME);
	h->created_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	{
		FILE *f = fopen("/proc/self/comm", "re");

		if (f) {
			if (fgets(h->comm, sizeof(h->comm), f))
				h->comm[strcspn(h->comm, "\n")] = 0;
			fclose(f);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		r->slots[i].seq = i % per;
	r->mask = per - 1;
	r->lanes = nl;
	r->epoch = __atomic_add_fetch(&ring_epochs, 1, __ATOMIC_RELAXED);
	/* Readers check the magic last: everything above is visible first. */
	__atomic_store_n(&h->magic, CT_GPU_RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
fail:
	close(fd);
	unlinkat(dirfd, path, 0);
	r->fd = -1;
	return err;
}

int ct_gpu_ring_open(struct ct_gpu_ring *r, const char *path)
{
	struct ct_gpu_ring_hdr h;
	struct stat st;
	int fd, err;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < CT_GPU_RING_HDR_SIZE) {
		close(fd);
		return -EINVAL;
	}
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != CT_GPU_RING_MAGIC ||
	    h.version != CT_GPU_RING_VERSION || h.rec_size != CT_GPU_REC_SIZE ||
	    h.hdr_size != CT_GPU_RING_HDR_SIZE || h.lanes == 0 || h.lanes > CT_GPU_RING_MAX_LANES ||
	    (h.lanes & (h.lanes - 1)) || h.lane_slots == 0 || (h.lane_slots & (h.lane_slots - 1)) ||
	    h.slots != h.lanes * h.lane_slots ||
	    (size_t)st.st_size < CT_GPU_RING_HDR_SIZE + (size_t)h.slots * CT_GPU_REC_SIZE) {
		close(fd);
		return -EPROTO;
	}
	err = map_ring(r, fd, CT_GPU_RING_HDR_SIZE + (size_t)h.slots * CT_GPU_REC_SIZE);
	if (err) {
		close(fd);
		return err;
	}
	r->mask = h.lane_slots - 1;
	r->lanes = h.lanes;
	return 0;
}

void ct_gpu_ring_close(struct ct_gpu_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	r->hdr = NULL;
	r->fd = -1;
}

void ct_gpu_ring_attach(struct ct_gpu_ring *r)
{
	__atomic_fetch_or(&r->hdr->flags, CT_GPU_RING_F_READER, __ATOMIC_RELEASE);
}

bool ct_gpu_ring_attached(const struct ct_gpu_ring *r)
{
	return __atomic_load_n(&r->hdr->flags, __ATOMIC_ACQUIRE) & CT_GPU_RING_F_READER;
}

/* Lanes 0..n-2 go to the first threads, one each; the last lane is never
 * owned: every later thread shares it, claiming slots with a CAS. A shared
 * lane must have no owner, since an owner writes with plain stores (a thread
 * sharing a live owner's lane lost records: 100 dropped in
 * test_nccl_plugin's threaded case). One lane: all share it. */
static void pick_lane(struct ct_gpu_ring *r)
{
	uint32_t ownable = (1u << (r->lanes - 1)) - 1;
	uint32_t owned = __atomic_load_n(&r->owned, __ATOMIC_RELAXED);

	tl_epoch = r->epoch;
	tl_own = false;
	while ((owned & ownable) != ownable) {
		unsigned lane = (unsigned)__builtin_ctz(~owned);

		if (__atomic_compare_exchange_n(&r->owned, &owned, owned | 1u << lane, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			tl_lane = lane;
			tl_own = true;
			return;
		}
	}
	tl_lane = r->lanes - 1;
}

static unsigned my_lane(struct ct_gpu_ring *r)
{
	if (__builtin_expect(tl_epoch != r->epoch, 0))
		pick_lane(r);
	return tl_lane;
}

bool ct_gpu_ring_push(struct ct_gpu_ring *r, const struct ct_gpu_rec *rec)
{
	unsigned lane = my_lane(r);
	struct ct_gpu_lane_ctl *ctl = &r->hdr->lane[lane];
	struct ct_gpu_rec *base = r->slots + (size_t)lane * (r->mask + 1);
	uint64_t pos = __atomic_load_n(&ctl->tail, __ATOMIC_RELAXED);
	struct ct_gpu_rec *slot;

	if (tl_own) {
		/* The only producer of this lane: no claim needed. */
		slot = &base[pos & r->mask];
		if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != pos) {
			__atomic_store_n(&ctl->dropped, ctl->dropped + 1, __ATOMIC_RELAXED);
			return false;
		}
		__atomic_store_n(&ctl->tail, pos + 1, __ATOMIC_RELAXED);
	} else {
		for (;;) {
			slot = &base[pos & r->mask];
			uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
			int64_t diff = (int64_t)(seq - pos);

			if (diff == 0) {
				if (__atomic_compare_exchange_n(&ctl->tail, &pos, pos + 1, true,
								__ATOMIC_RELAXED, __ATOMIC_RELAXED))
					break;
			} else if (diff < 0) {
				/* The reader has not freed this slot: full. */
				__atomic_fetch_add(&ctl->dropped, 1, __ATOMIC_RELAXED);
				return false;
			} else {
				pos = __atomic_load_n(&ctl->tail, __ATOMIC_RELAXED);
			}
		}
	}
	memcpy((char *)slot + sizeof(slot->seq), (const char *)rec + sizeof(rec->seq),
	       CT_GPU_REC_SIZE - sizeof(slot->seq));
	__atomic_store_n(&slot->seq, pos + 1, __ATOMIC_RELEASE);
	return true;
}

void ct_gpu_ring_count_error(struct ct_gpu_ring *r)
{
	__atomic_fetch_add(&r->hdr->lane[my_lane(r)].errors, 1, __ATOMIC_RELAXED);
}

static int pop_lane(struct ct_gpu_ring *r, unsigned lane, struct ct_gpu_rec *out)
{
	struct ct_gpu_lane_ctl *ctl = &r->hdr->lane[lane];
	uint64_t pos = __atomic_load_n(&ctl->head, __ATOMIC_RELAXED);
	struct ct_gpu_rec *slot = &r->slots[(size_t)lane * (r->mask + 1) + (pos & r->mask)];

	if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != pos + 1)
		return 0;
	memcpy(out, slot, CT_GPU_REC_SIZE);
	out->seq = pos;
	__atomic_store_n(&slot->seq, pos + r->mask + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl->head, pos + 1, __ATOMIC_RELAXED);
	return 1;
}

/* Round-robin over the lanes, staying on a lane while it has records. */
int ct_gpu_ring_pop(struct ct_gpu_ring *r, struct ct_gpu_rec *out)
{
	for (unsigned i = 0; i < r->lanes; i++) {
		unsigned lane = (r->next_lane + i) & (r->lanes - 1);

		if (pop_lane(r, lane, out)) {
			r->next_lane = lane;
			return 1;
		}
	}
	return 0;
}

uint64_t ct_gpu_ring_dropped(const struct ct_gpu_ring *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->lanes; i++)
		n += __atomic_load_n(&r->hdr->lane[i].dropped, __ATOMIC_RELAXED);
	return n;
}

uint64_t ct_gpu_ring_errors(const struct ct_gpu_ring *r)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->lanes; i++)
		n += __atomic_load_n(&r->hdr->lane[i].errors, __ATOMIC_RELAXED);
	return n;
}
