/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd's control thread: the descriptors CQs notify their completion channels through,
 * one per pipe, counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srv_priv.h"

/*
 * CQ notification descriptors. A completion channel is one pipe however many CQs it serves
 * (perftest's one channel for all its CQs, the verbs shim's one pipe for the channels of
 * rdma_create_qp): the server keeps one descriptor per pipe, found by its inode, with a
 * count of the CQs using it, so tens of thousands of CQs do not cost as many descriptors.
 */
struct srv_notify {
	dev_t dev;
	ino_t ino;
	int fd;        /* -1: free slot */
	uint32_t refs;
};

static uint32_t
notify_hash(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

/* The slot of (@p dev, @p ino), or the free slot where it would go. */
static struct srv_notify *
notify_slot(struct wn_server *srv, dev_t dev, ino_t ino)
{
	uint32_t i = notify_hash(dev, ino) & (srv->notify_cap - 1);

	while (srv->notify[i].fd >= 0 && (srv->notify[i].dev != dev || srv->notify[i].ino != ino))
		i = (i + 1) & (srv->notify_cap - 1);
	return &srv->notify[i];
}

static int
notify_grow(struct wn_server *srv)
{
	uint32_t ncap = srv->notify_cap == 0 ? 64 : 2 * srv->notify_cap, ocap = srv->notify_cap, i;
	struct srv_notify *old = srv->notify, *n = malloc(ncap * sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	for (i = 0; i < ncap; i++)
		n[i].fd = -1;
	srv->notify = n;
	srv->notify_cap = ncap;
	for (i = 0; i < ocap; i++)
		if (old[i].fd >= 0)
			*notify_slot(srv, old[i].dev, old[i].ino) = old[i];
	free(old);
	return 0;
}

/* The descriptor to notify through for the pipe of @p fd (borrowed), or -1. */
int
wn_server_notify_get(struct wn_server *srv, int fd)
{
	struct srv_notify *e;
	struct stat st;
	int fl;

	if (fstat(fd, &st) != 0)
		return -1;
	if (2 * (srv->notify_n + 1) > srv->notify_cap && notify_grow(srv) != 0)
		return -1;
	e = notify_slot(srv, st.st_dev, st.st_ino);
	if (e->fd >= 0) {
		e->refs++;
		return e->fd;
	}
	/* non-blocking: a client that does not read loses notifications, not our time */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (e->fd < 0)
		return -1;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->refs = 1;
	srv->notify_n++;
	return e->fd;
}

void
wn_server_notify_put(struct wn_server *srv, int fd)
{
	struct srv_notify *e;
	struct stat st;
	uint32_t i, j, k;

	if (fd < 0 || srv->notify_cap == 0 || fstat(fd, &st) != 0)
		return;
	e = notify_slot(srv, st.st_dev, st.st_ino);
	if (e->fd != fd || --e->refs > 0)
		return;
	close(fd);
	e->fd = -1;
	srv->notify_n--;
	/* linear probing: move later entries of the cluster back over the hole */
	i = (uint32_t)(e - srv->notify);
	for (j = (i + 1) & (srv->notify_cap - 1); srv->notify[j].fd >= 0;
	     j = (j + 1) & (srv->notify_cap - 1)) {
		k = notify_hash(srv->notify[j].dev, srv->notify[j].ino) & (srv->notify_cap - 1);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			srv->notify[i] = srv->notify[j];
			srv->notify[j].fd = -1;
			i = j;
		}
	}
}

void
wn_server_notify_free(struct wn_server *srv)
{
	for (uint32_t i = 0; i < srv->notify_cap; i++)
		if (srv->notify[i].fd >= 0)
			close(srv->notify[i].fd);
	free(srv->notify);
	srv->notify = NULL;
	srv->notify_cap = srv->notify_n = 0;
}
