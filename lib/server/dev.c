/* SPDX-License-Identifier: BSD-3-Clause */
/* The device as clients see it: HELLO, QUERY_DEVICE, QUERY_PORT, the lcore doorbells. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "srv_priv.h"
#include "wn_build_config.h"
#include "wn_mem.h"

int
wn_server_h_hello(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_hello_req *r = rq->body;

	rq->c->llp = r->llp;
	rs->u.hello.server_version = WN_CTL_VERSION;
	rs->u.hello.client_id = rq->c->id;
	snprintf(rs->u.hello.dev_name, sizeof(rs->u.hello.dev_name), "%s", srv->dev_name);
	SRV_LOG(DEBUG, "client %u: hello from pid %u", rq->c->id, r->pid);
	return 0;
}

/* An lcore doorbell for the client (wn_ctl.h WN_CTL_BELL): a duplicate of the page or eventfd. */
int
wn_server_h_bell(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_bell_req *r = rq->body;
	int fd;

	if (srv->n_bells == 0 || (r->bell != WN_CTL_BELL_PAGE && r->bell >= srv->n_bells))
		return -ENOENT;
	fd = fcntl(r->bell == WN_CTL_BELL_PAGE ? srv->bell_page_fd : srv->bell_efd[r->bell],
		   F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rs->u.bell.n_bells = srv->n_bells;
	rs->fd = fd;
	return 0;
}

/*
 * The client's async event socket (WN_CTL_ASYNC_CHANNEL): one SEQPACKET pair, our end
 * non-blocking (a client that does not read loses events, not the control thread), its end
 * receive-only; one per client.
 */
int
wn_server_h_async_channel(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	int sv[2];

	(void)srv;
	if (rq->c->async_fd >= 0)
		return -EBUSY;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	shutdown(sv[1], SHUT_WR);
	rq->c->async_fd = sv[0];
	rs->fd = sv[1];
	return 0;
}

/*
 * A dataplane async event (WN_SERVER_DP_ASYNC_EVENT) to the client that owns the object, on
 * its async socket. An object gone meanwhile, or a client without the socket: dropped.
 */
void
wn_server_async_dp_event(struct wn_server *srv, const struct wn_server_dp_msg *m)
{
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_async_event ev;
	} a;
	enum obj_type t;
	struct obj *o;
	struct client *c;

	switch (m->u.async.event) {
	case WN_CTL_ASYNC_CQ_ERR:
		t = OBJ_CQ;
		break;
	case WN_CTL_ASYNC_SRQ_LIMIT_REACHED:
		t = OBJ_SRQ;
		break;
	default:
		t = OBJ_QP;
		break;
	}
	o = wn_server_obj_get(srv, NULL, m->handle, t);
	if (o == NULL || (c = o->owner) == NULL || c->async_fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	wn_ctl_hdr_init(&a.h, WN_CTL_ASYNC_EVENT, ++c->async_seq, sizeof(a.ev));
	a.ev.event = m->u.async.event;
	a.ev.handle = m->handle;
	a.ev.vendor_err = m->u.async.vendor_err;
	if (wn_ctl_send(c->async_fd, &a.h, NULL, 0) != 0) {
		c->async_lost++;
		SRV_LOG(WARNING, "client %u: async event %u for %#x lost", c->id, a.ev.event,
			m->handle);
	}
}

static uint64_t
node_guid(const struct wn_server *srv)
{
	const uint8_t *m = srv->conf.mac;
	/* EUI-64 from the MAC, as Linux siw does for its node GUID */
	uint8_t g[8] = {m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | g[i];
	return v;
}

int
wn_server_h_query_device(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	struct wn_ctl_device_attr *a = &rs->u.dev;
	uint32_t llp = rq->c->llp != WN_CTL_LLP_DEFAULT ? rq->c->llp : srv->conf.llp;

	/* ibv_devinfo shows the lower layer this client's connections use */
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s (%s)", WN_VERSION,
		 wn_ctl_llp_name(llp != WN_CTL_LLP_DEFAULT ? llp : WN_CTL_LLP_MPA));
	/* GUIDs in network order, as verbs reports them */
	a->node_guid = __builtin_bswap64(node_guid(srv));
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = srv->max_mr_size;
	a->page_size_cap = WN_CTL_PAGE_SIZE;
	a->vendor_id = 0x626d74;   /* same "unknown vendor" Linux siw reports */
	a->vendor_part_id = 0x7770;
	a->hw_ver = 0;
	a->max_qp = srv->conf.max_qp != 0 ? srv->conf.max_qp : MAX_QP;
	a->max_qp_wr = MAX_QP_WR;
	a->max_sge = MAX_SGE;
	a->max_cq = 2 * a->max_qp; /* a send and a receive CQ each (rdma_create_qp's) */
	a->max_cqe = MAX_CQE;
	/* one table of regions and windows (--max-mrs) for all clients; index 0 is reserved */
	a->max_mr = (srv->conf.mem_entries != 0 ? srv->conf.mem_entries : MEM_ENTRIES) - 1;
	a->max_mw = a->max_mr;
	a->max_pd = WN_MEM_MAX_PDS; /* one table for all clients */
	a->max_qp_rd_atom = MAX_RD_ATOM;
	a->max_qp_init_rd_atom = MAX_RD_ATOM;
	a->max_srq = 1024;
	a->max_srq_wr = MAX_QP_WR;
	a->max_srq_sge = MAX_SGE;
	a->max_inline_data = MAX_INLINE;
	a->phys_port_cnt = 1;
	return 0;
}

static uint32_t
ib_mtu_enum(uint32_t mtu)
{
	/* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5: largest not above @p mtu (at least 256) */
	uint32_t e = 1, v = 256;

	while (e < 5 && v * 2 <= mtu) {
		v *= 2;
		e++;
	}
	return e;
}

/* GIDs: the port's addresses; with none configured, GID 0 derived from the MAC. */
static void
port_gids(const struct wn_server *srv, struct wn_ctl_port_attr *a)
{
	uint32_t i;

	for (i = 0; i < srv->conf.n_addrs; i++) {
		const struct wn_ctl_addr *ad = &srv->conf.addrs[i];

		if (ad->family == WN_CTL_AF_INET) {
			/* IPv4-mapped IPv6 (RFC 4291 §2.5.5.2), as iWARP GIDs are built */
			a->gid[i][10] = 0xff;
			a->gid[i][11] = 0xff;
			memcpy(&a->gid[i][12], ad->addr, 4);
		} else {
			memcpy(a->gid[i], ad->addr, 16);
		}
	}
	a->n_gids = srv->conf.n_addrs;
	if (a->n_gids == 0) {
		uint64_t g = node_guid(srv);

		a->gid[0][0] = 0xfe;
		a->gid[0][1] = 0x80;
		for (i = 0; i < 8; i++)
			a->gid[0][8 + i] = (uint8_t)(g >> (56 - 8 * i));
		a->n_gids = 1;
	}
}

int
wn_server_h_query_port(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_port_req *r = rq->body;
	struct wn_ctl_port_attr *a = &rs->u.port;

	if (r->port != 1)
		return -EINVAL;
	a->state = 4; /* ACTIVE */
	a->mtu_bytes = srv->conf.mtu;
	/* the largest UD message with its headers fits the L3 MTU (WN_CTL_UD_OVERHEAD) */
	a->max_mtu = ib_mtu_enum(srv->conf.mtu > WN_CTL_UD_OVERHEAD ?
				 srv->conf.mtu - WN_CTL_UD_OVERHEAD : 0);
	a->active_mtu = a->max_mtu;
	a->max_msg_sz = 1u << 31;
	a->speed_mbps = 10000;
	memcpy(a->mac, srv->conf.mac, 6);
	port_gids(srv, a);
	return 0;
}
