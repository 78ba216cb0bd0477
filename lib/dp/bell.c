/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: the shards' doorbells (lib/queue's "Lcore doorbells"): the group's bell page, which
 * clients map read-only (wn_dp_bells()), and one eventfd per shard, rung (wn_dp_wake()) only
 * while the shard announced that it sleeps; after the page, in the same memfd, each shard's
 * ready map (lib/queue's "Ready maps"), which clients map read-write: where they mark the
 * SQs the shard parked. What a shard sleeps on is idle.c's; the ready QPs are dp_obj.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp_priv.h"

int
wn_dp_bells_create(struct wn_dp_group *g)
{
	uint16_t i;

	g->bell_fd = memfd_create("warpnic-bells", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (g->bell_fd < 0)
		return -errno;
	if (ftruncate(g->bell_fd, WN_QUEUE_BELLS_SIZE) != 0 ||
	    fcntl(g->bell_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		return -errno;
	g->bells = mmap(NULL, WN_QUEUE_BELLS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			g->bell_fd, 0);
	if (g->bells == MAP_FAILED) {
		g->bells = NULL;
		return -errno;
	}
	g->ready = (struct wn_queue_ready_map *)((uint8_t *)g->bells +
						 WN_QUEUE_READY_MAPS_OFFSET);
	for (i = 0; i < g->n; i++) {
		g->bell_efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (g->bell_efd[i] < 0)
			return -errno;
	}
	return 0;
}

void
wn_dp_bells_free(struct wn_dp_group *g)
{
	uint16_t i;

	for (i = 0; i < DP_MAX_SHARDS; i++)
		if (g->bell_efd[i] >= 0)
			close(g->bell_efd[i]);
	if (g->bells != NULL)
		munmap(g->bells, WN_QUEUE_BELLS_SIZE);
	if (g->bell_fd >= 0)
		close(g->bell_fd);
}

uint32_t
wn_dp_bells(struct wn_dp_group *g, int *page_fd, struct wn_queue_bell **page, int *efds)
{
	*page_fd = g->bell_fd;
	*page = g->bells;
	memcpy(efds, g->bell_efd, g->n * sizeof(*efds));
	return g->n;
}

void
wn_dp_wake(struct wn_dp_group *g, uint16_t idx)
{
	uint64_t one = 1;

	if (wn_queue_bell_check(&g->bells[idx]) &&
	    write(g->bell_efd[idx], &one, sizeof(one)) < 0 && errno != EAGAIN)
		DP_LOG(ERR, "bell of shard %u: %s\n", idx, strerror(errno));
}

void
wn_dp_wake_handoffs(struct wn_dp *dp)
{
	uint32_t m = dp->wake_mask;

	dp->wake_mask = 0;
	while (m != 0) {
		wn_dp_wake(dp->g, (uint16_t)__builtin_ctz(m));
		m &= m - 1;
	}
}
