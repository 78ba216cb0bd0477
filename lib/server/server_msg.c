/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages: the answer to a client's request, and those to the dataplane (wn_server_dp.h):
 * an object's creation or retirement, a CM request, on the to_dp ring, with a ring of shard
 * 0's bell; and lib/server's log type. server.c and the files of the objects (server_obj.c,
 * server_mr.c, server_queue.c, server_cm.c) send them; server.c attaches the rings and reads
 * the dataplane's answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_ring.h>

#include "srv_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_server_logtype, INFO); /* lib.wn.server */

/*
 * Answer client @p c's request @p req: @p status, then (on success only) a body of @p len
 * octets and descriptor @p fd (-1: none).
 */
void
wn_server_reply(struct client *c, const struct wn_ctl_hdr *req, int status, const void *body,
		size_t len, int fd)
{
	struct {
		struct wn_ctl_hdr h;
		uint8_t body[WN_CTL_MSG_MAX - sizeof(struct wn_ctl_hdr)];
	} r;

	if (status != 0) {
		len = 0;
		fd = -1;
	}
	wn_ctl_hdr_init(&r.h, req->op, req->seq, len);
	r.h.status = status;
	if (len > 0)
		memcpy(r.body, body, len);
	if (wn_ctl_send(c->fd, &r.h, &fd, fd >= 0 ? 1 : 0) != 0)
		SRV_LOG(DEBUG, "client %u: reply to %u lost", c->id, req->op);
}

struct wn_server_dp_msg *
wn_server_dp_msg_new(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj)
{
	struct wn_server_dp_msg *m;

	if (srv->to_dp == NULL)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->type = type;
	m->handle = handle;
	m->obj = obj;
	return m;
}

/* The lcore taking to_dp may sleep: ring it (wn_queue.h, lcore doorbells). */
static void
dp_ring_bell(struct wn_server *srv)
{
	uint64_t one = 1;

	if (srv->n_bells > 0 && wn_queue_bell_check(&srv->bells[0]) &&
	    write(srv->bell_efd[0], &one, sizeof(one)) < 0 && errno != EAGAIN)
		SRV_LOG(ERR, "dataplane bell: %s", strerror(errno));
}

/* Keep @p m behind what waits for room in to_dp. @return 0 or -ENOMEM. */
static int
dp_wait_push(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	struct wn_server_dp_msg **nv;
	uint32_t ncap, i;

	if (srv->dp_wait_len == srv->dp_wait_cap) {
		ncap = srv->dp_wait_cap == 0 ? 64 : 2 * srv->dp_wait_cap;
		nv = malloc(ncap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		for (i = 0; i < srv->dp_wait_len; i++)
			nv[i] = srv->dp_wait[(srv->dp_wait_head + i) % srv->dp_wait_cap];
		free(srv->dp_wait);
		srv->dp_wait = nv;
		srv->dp_wait_head = 0;
		srv->dp_wait_cap = ncap;
	}
	srv->dp_wait[(srv->dp_wait_head + srv->dp_wait_len) % srv->dp_wait_cap] = m;
	srv->dp_wait_len++;
	srv->dp_waited++;
	return 0;
}

bool
wn_server_dp_flush(struct wn_server *srv)
{
	bool moved = false;

	while (srv->dp_wait_len > 0 && srv->to_dp != NULL &&
	       rte_ring_enqueue(srv->to_dp, srv->dp_wait[srv->dp_wait_head]) == 0) {
		srv->dp_wait_head = (srv->dp_wait_head + 1) % srv->dp_wait_cap;
		srv->dp_wait_len--;
		moved = true;
	}
	if (moved)
		dp_ring_bell(srv);
	return srv->dp_wait_len > 0;
}

void
wn_server_dp_wait_free(struct wn_server *srv)
{
	while (srv->dp_wait_len > 0) {
		free(srv->dp_wait[srv->dp_wait_head]);
		srv->dp_wait_head = (srv->dp_wait_head + 1) % srv->dp_wait_cap;
		srv->dp_wait_len--;
	}
	free(srv->dp_wait);
	srv->dp_wait = NULL;
	srv->dp_wait_cap = 0;
}

/*
 * Post @p m to the dataplane. A full ring (a client that creates or connects thousands of
 * objects faster than the lcore takes them) makes it wait, in order, for the next poll.
 */
int
wn_server_dp_post(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	if (srv->dp_wait_len == 0 && rte_ring_enqueue(srv->to_dp, m) == 0) {
		dp_ring_bell(srv);
		return 0;
	}
	if (dp_wait_push(srv, m) != 0) {
		SRV_LOG(ERR, "dataplane queue full, no memory: message %u dropped", m->type);
		free(m);
		return -ENOBUFS;
	}
	(void)wn_server_dp_flush(srv);
	return 0;
}

/* Tell the dataplane about an object: 0, or -ENOTCONN (none attached), -ENOMEM, -ENOBUFS. */
int
wn_server_dp_tell(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj)
{
	struct wn_server_dp_msg *m = wn_server_dp_msg_new(srv, type, handle, obj);

	if (m == NULL)
		return srv->to_dp == NULL ? -ENOTCONN : -ENOMEM;
	return wn_server_dp_post(srv, m);
}
