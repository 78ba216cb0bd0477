/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages to the dataplane (wn_server_dp.h): an object's creation or retirement, a CM
 * request, on the to_dp ring, with a ring of shard 0's bell; and lib/server's log type. The
 * files of the objects (obj.c, mr.c, queue.c, cm.c) send them; server.c attaches the rings
 * and reads the dataplane's answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_ring.h>

#include "srv_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_server_logtype, INFO); /* lib.wn.server */

struct wn_server_dp_msg *
srv_dp_msg(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj)
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

int
srv_dp_post(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	uint64_t one = 1;

	if (rte_ring_enqueue(srv->to_dp, m) != 0) {
		SRV_LOG(ERR, "dataplane queue full, message %u dropped", m->type);
		free(m);
		return -ENOBUFS;
	}
	/* the lcore taking to_dp may sleep: ring it (wn_queue.h, lcore doorbells) */
	if (srv->n_bells > 0 && wn_queue_bell_check(&srv->bells[0]) &&
	    write(srv->bell_efd[0], &one, sizeof(one)) < 0 && errno != EAGAIN)
		SRV_LOG(ERR, "dataplane bell: %s", strerror(errno));
	return 0;
}

/* Tell the dataplane about an object: 0, or -ENOTCONN (none attached), -ENOMEM, -ENOBUFS. */
int
srv_dp_tell(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj)
{
	struct wn_server_dp_msg *m = srv_dp_msg(srv, type, handle, obj);

	if (m == NULL)
		return srv->to_dp == NULL ? -ENOTCONN : -ENOMEM;
	return srv_dp_post(srv, m);
}
