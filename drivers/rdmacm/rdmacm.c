/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm.so.1 ABI shim over lib/client's CM (and the verbs shim for QPs). Event
 * channels are real fds (a socket warpnicd writes events to); ids without a channel are
 * synchronous (rdma_create_ep style). iWARP semantics: the active side gets ESTABLISHED
 * directly (no CONNECT_RESPONSE), private data and IRD/ORD travel in the MPA exchange
 * (RFC 5044 §7.1, RFC 6581 §5). The UDP port space (RDMA_PS_UDP) is a warpnic extension
 * between warpnic instances, as librdmacm gives it: UD QPs in RTS with RDMA_UDP_QKEY from
 * rdma_create_qp, and rdma_connect resolves the passive side's QP number and Q_Key (given in
 * ESTABLISHED's ud parameters with an address handle's attributes); the passive side gets
 * CONNECT_REQUEST and answers with rdma_accept or rdma_reject, and no event after. Multicast
 * and ECE are InfiniBand/RoCE features and fail as on an iWARP device. rsockets: rsocket.c.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "wn_client.h"

#define EXPORT __attribute__((visibility("default")))

/* from the verbs shim (WARPNIC_PRIVATE_1) */
struct wn_client *wn_verbs_client(struct ibv_context *ctx);
uint32_t wn_verbs_qp_handle(struct ibv_qp *qp);
void wn_verbs_qp_cm_bind(struct ibv_qp *qp); /* WARPNIC_PRIVATE_2 */
struct ibv_comp_channel *wn_verbs_comp_channel_shared(struct ibv_context *ctx); /* _4 */
struct ibv_qp *wn_verbs_qp_by_num(struct ibv_context *ctx, uint32_t qpn); /* _3 */

struct wn_ec {
	struct rdma_event_channel ch;
	struct wn_client_cm_channel *wch;
	struct wn_ec *next; /* live channels (g_ecs) */
};

struct wn_id {
	struct rdma_cm_id id;
	uint32_t handle;
	struct wn_ec *ec;
	bool sync;        /* created without a channel: operations wait for their event */
	bool own_ec;      /* the channel was created for this id (destroyed with it) */
	bool own_cqs;     /* CQs created by rdma_create_qp */
	bool has_qp_attr; /* rdma_create_ep on a passive id: QP template for get_request */
	bool conn_started; /* connect/accept issued or request received: an iw_cm id exists */
	bool own_srq;     /* SRQ created by rdma_create_srq */
	bool dev_pd;      /* id.pd is the device's PD, shared by the ids (g_pd) */
	bool active;      /* rdma_connect was called */
	bool ext_qp;      /* the connection's QP is the program's own, named by conn_param.qp_num */
	bool timeout_set; /* rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT) */
	uint8_t timeout;  /* its value: the QP's ACK timeout, 4.096 us * 2^timeout */
	uint8_t tos;      /* RDMA_OPTION_ID_TOS */
	bool reuseaddr;   /* RDMA_OPTION_ID_REUSEADDR */
	bool afonly;      /* RDMA_OPTION_ID_AFONLY */
	struct ibv_qp_init_attr qp_attr;
	struct ibv_ece local_ece; /* rdma_set_local_ece(): kept, never sent (iWARP has no ECE) */
};

struct wn_event {
	struct rdma_cm_event ev;
	uint8_t pd[WN_CTL_PD_MAX];
};

/* A UDP id's QP: a UD QP (RDMA_PS_IPOIB is InfiniBand's alone). */
static bool
id_udp(const struct rdma_cm_id *cid)
{
	return cid->ps == RDMA_PS_UDP;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *g_ctx;
static struct wn_ec *g_ecs;
static struct ibv_pd *g_pd; /* the device's PD, as librdmacm allocates one per device */
static unsigned int g_pd_refs;

static struct ibv_context *
cm_ctx(void)
{
	struct ibv_device **l;
	int n = 0;

	pthread_mutex_lock(&g_lock);
	if (g_ctx == NULL) {
		l = ibv_get_device_list(&n);
		if (l != NULL && n > 0)
			g_ctx = ibv_open_device(l[0]);
		if (l != NULL)
			ibv_free_device_list(l);
	}
	pthread_mutex_unlock(&g_lock);
	if (g_ctx == NULL && errno == 0)
		errno = ENODEV;
	return g_ctx;
}

static struct wn_client *
cm_cl(void)
{
	return wn_verbs_client(g_ctx);
}

/*
 * The live ids by handle: an open-addressing table (linear probing), so the event of any
 * of tens of thousands of connections finds its id at once.
 */
static struct wn_id **g_idtab;
static uint32_t g_idcap, g_idn;

static uint32_t
id_slot(uint32_t handle)
{
	return (handle * 0x9e3779b1u) & (g_idcap - 1);
}

static struct wn_id *
id_find(uint32_t handle)
{
	struct wn_id *i = NULL;
	uint32_t k;

	pthread_mutex_lock(&g_lock);
	if (g_idcap != 0)
		for (k = id_slot(handle); g_idtab[k] != NULL; k = (k + 1) & (g_idcap - 1))
			if (g_idtab[k]->handle == handle) {
				i = g_idtab[k];
				break;
			}
	pthread_mutex_unlock(&g_lock);
	return i;
}

static void
id_put(struct wn_id *i)
{
	uint32_t k = id_slot(i->handle);

	while (g_idtab[k] != NULL)
		k = (k + 1) & (g_idcap - 1);
	g_idtab[k] = i;
}

/* @return 0, or -1 with errno ENOMEM. */
static int
id_link(struct wn_id *i)
{
	struct wn_id **old = g_idtab;
	uint32_t ocap = g_idcap, k;
	int ret = 0;

	pthread_mutex_lock(&g_lock);
	if (2 * (g_idn + 1) > g_idcap) {
		uint32_t ncap = g_idcap == 0 ? 64 : 2 * g_idcap;
		struct wn_id **nt = calloc(ncap, sizeof(*nt));

		if (nt == NULL) {
			pthread_mutex_unlock(&g_lock);
			errno = ENOMEM;
			return -1;
		}
		g_idtab = nt;
		g_idcap = ncap;
		for (k = 0; k < ocap; k++)
			if (old[k] != NULL)
				id_put(old[k]);
		free(old);
	}
	id_put(i);
	g_idn++;
	pthread_mutex_unlock(&g_lock);
	return ret;
}

static void
id_unlink(struct wn_id *i)
{
	uint32_t k, j, h;

	pthread_mutex_lock(&g_lock);
	for (k = g_idcap != 0 ? id_slot(i->handle) : 0; g_idcap != 0 && g_idtab[k] != NULL;
	     k = (k + 1) & (g_idcap - 1)) {
		if (g_idtab[k] != i)
			continue;
		g_idtab[k] = NULL;
		g_idn--;
		/* move the rest of the cluster back over the hole */
		for (j = (k + 1) & (g_idcap - 1); g_idtab[j] != NULL; j = (j + 1) & (g_idcap - 1)) {
			h = id_slot(g_idtab[j]->handle);
			if ((j > k && (h <= k || h > j)) || (j < k && h <= k && h > j)) {
				g_idtab[k] = g_idtab[j];
				g_idtab[j] = NULL;
				k = j;
			}
		}
		break;
	}
	pthread_mutex_unlock(&g_lock);
}

/*
 * As librdmacm: an id that has an address (bound, resolved, or a received request) has its
 * device's PD in id->pd, one PD shared by every such id, freed with the last of them.
 */
static void
id_take_dev_pd(struct wn_id *id)
{
	if (id->id.pd != NULL || id->dev_pd)
		return;
	pthread_mutex_lock(&g_lock);
	if (g_pd == NULL)
		g_pd = ibv_alloc_pd(g_ctx);
	if (g_pd != NULL) {
		g_pd_refs++;
		id->id.pd = g_pd;
		id->dev_pd = true;
	}
	pthread_mutex_unlock(&g_lock);
}

static void
id_put_dev_pd(struct wn_id *id)
{
	if (!id->dev_pd)
		return;
	pthread_mutex_lock(&g_lock);
	/* a PD the program still has objects on stays (EBUSY), as with librdmacm */
	if (--g_pd_refs == 0 && ibv_dealloc_pd(g_pd) == 0)
		g_pd = NULL;
	pthread_mutex_unlock(&g_lock);
	id->dev_pd = false;
}

static int
fail(int err)
{
	errno = err < 0 ? -err : err;
	return -1;
}

/* ------------------------------------------------------------------ channels */

EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct wn_ec *ec;

	if (cm_ctx() == NULL)
		return NULL;
	ec = calloc(1, sizeof(*ec));
	if (ec == NULL)
		return NULL;
	ec->wch = wn_client_cm_channel_create(cm_cl());
	if (ec->wch == NULL) {
		int err = errno;

		free(ec);
		errno = err;
		return NULL;
	}
	ec->ch.fd = ec->wch->fd;
	pthread_mutex_lock(&g_lock);
	ec->next = g_ecs;
	g_ecs = ec;
	pthread_mutex_unlock(&g_lock);
	return &ec->ch;
}

EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct wn_ec *ec = (struct wn_ec *)ch, **pp;

	/* unlink first: a thread still blocked on the fd must see the channel as gone */
	pthread_mutex_lock(&g_lock);
	for (pp = &g_ecs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == ec) {
			*pp = ec->next;
			break;
		}
	pthread_mutex_unlock(&g_lock);
	wn_client_cm_channel_destroy(cm_cl(), ec->wch);
	free(ec);
}

static bool
ec_live(const struct wn_ec *ec)
{
	const struct wn_ec *e;

	pthread_mutex_lock(&g_lock);
	for (e = g_ecs; e != NULL && e != ec; e = e->next)
		;
	pthread_mutex_unlock(&g_lock);
	return e != NULL;
}

/*
 * A thread blocked in rdma_get_cm_event() when another thread destroys the channel: with
 * the kernel's rdma_cm the read() on the closed fd never returns (rping's CM thread relies
 * on it and exit()s on an error). Here warpnicd closing its end wakes the reader with EOF;
 * keep it blocked instead, as a cancellation point (pthread_cancel still ends it).
 */
static void
block_forever(void)
{
	for (;;)
		pause();
}

/* ------------------------------------------------------------------ events */

static void
set_addrs(struct rdma_cm_id *id, const struct wn_ctl_addr *src, const struct wn_ctl_addr *dst)
{
	if (src != NULL && src->family != WN_CTL_AF_NONE)
		wn_client_addr_to_sockaddr(&id->route.addr.src_storage, src);
	if (dst != NULL && dst->family != WN_CTL_AF_NONE)
		wn_client_addr_to_sockaddr(&id->route.addr.dst_storage, dst);
}

/* Our GID that is @p a's address (the GID table is warpnicd's --ip list), or 0. */
static uint8_t
gid_index_of(const struct wn_ctl_addr *a)
{
	union ibv_gid g;
	uint8_t want[16];

	memset(want, 0, sizeof(want));
	if (a->family == WN_CTL_AF_INET) {
		want[10] = want[11] = 0xff;
		memcpy(want + 12, a->addr, 4);
	} else {
		memcpy(want, a->addr, 16);
	}
	for (int i = 0; i < 256 && ibv_query_gid(g_ctx, 1, i, &g) == 0; i++)
		if (memcmp(g.raw, want, 16) == 0)
			return (uint8_t)i;
	return 0;
}

/*
 * A UDP id's event parameters (rdma_ud_param): the private data; with ESTABLISHED the
 * passive QP's number and Q_Key, and the attributes of an address handle to it, as RoCE
 * gives them (a global route: the peer's address as a GID, ours by its index).
 */
static void
ud_param(struct wn_id *id, const struct wn_ctl_cm_event *e, struct wn_event *w)
{
	struct rdma_ud_param *u = &w->ev.param.ud;
	struct ibv_ah_attr *ah = &u->ah_attr;

	u->private_data = e->param.pd_len ? w->pd : NULL;
	u->private_data_len = (uint8_t)(e->param.pd_len > 255 ? 255 : e->param.pd_len);
	if (e->event != WN_CTL_CM_EV_ESTABLISHED)
		return;
	u->qp_num = e->qpn;
	u->qkey = e->qkey;
	ah->is_global = 1;
	ah->port_num = id->id.port_num;
	if (e->dst.family == WN_CTL_AF_INET) {
		ah->grh.dgid.raw[10] = ah->grh.dgid.raw[11] = 0xff;
		memcpy(ah->grh.dgid.raw + 12, e->dst.addr, 4);
	} else {
		memcpy(ah->grh.dgid.raw, e->dst.addr, 16);
	}
	ah->grh.sgid_index = gid_index_of(&e->src);
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = id->tos;
}

/* Turn a wire event into an rdma_cm_event; NULL (errno set) if it must be skipped. */
static struct wn_event *
convert(struct wn_ec *ec, const struct wn_ctl_cm_event *e)
{
	struct wn_event *w = calloc(1, sizeof(*w));
	struct wn_id *id, *lid = NULL;

	if (w == NULL)
		return NULL;
	if (e->event == WN_CTL_CM_EV_CONNECT_REQUEST) {
		lid = id_find(e->listen_id);
		id = calloc(1, sizeof(*id));
		if (lid == NULL || id == NULL) {
			free(id);
			free(w);
			errno = EAGAIN;
			return NULL;
		}
		id->handle = e->id;
		id->ec = ec;
		id->sync = lid->sync;
		id->id.verbs = g_ctx;
		id->id.channel = &ec->ch;
		id->id.context = lid->id.context;
		id->id.ps = lid->id.ps;
		id->id.port_num = 1;
		id->id.qp_type = lid->id.qp_type;
		id->id.pd = lid->id.pd;
		id->conn_started = true;
		if (id_link(id) != 0) {
			free(id);
			free(w);
			return NULL;
		}
		id_take_dev_pd(id);
	} else {
		id = id_find(e->id);
		if (id == NULL) {
			free(w);
			errno = EAGAIN;
			return NULL;
		}
	}
	set_addrs(&id->id, &e->src, &e->dst);
	w->ev.id = &id->id;
	w->ev.listen_id = lid != NULL ? &lid->id : NULL;
	w->ev.event = (enum rdma_cm_event_type)e->event;
	/*
	 * A connecting id whose QP the program made itself (rdma_connect with conn_param.qp_num,
	 * no rdma_create_qp) gets CONNECT_RESPONSE, as rdma_cm gives such an id: the program
	 * then walks its QP to RTS (rdma_init_qp_attr) and calls rdma_establish. The MPA
	 * exchange is over by then; the QP already runs on the connection.
	 */
	if (e->event == WN_CTL_CM_EV_ESTABLISHED && id->ext_qp && id->active && id->id.qp == NULL)
		w->ev.event = RDMA_CM_EVENT_CONNECT_RESPONSE;
	w->ev.status = e->status;
	memcpy(w->pd, e->param.pd, e->param.pd_len);
	if (id_udp(&id->id)) {
		/* the UDP port space: ud parameters, and no QP state changes (nothing connects) */
		ud_param(id, e, w);
		return w;
	}
	w->ev.param.conn.private_data = e->param.pd_len ? w->pd : NULL;
	/* rdma_conn_param carries at most 255 octets; iWARP allows up to 512 */
	w->ev.param.conn.private_data_len =
		(uint8_t)(e->param.pd_len > 255 ? 255 : e->param.pd_len);
	w->ev.param.conn.responder_resources = (uint8_t)e->param.ird;
	w->ev.param.conn.initiator_depth = (uint8_t)e->param.ord;
	w->ev.param.conn.flow_control = (uint8_t)(e->param.flags & 1);
	w->ev.param.conn.srq = (uint8_t)((e->param.flags >> 1) & 1);
	if (id->id.qp != NULL) {
		w->ev.param.conn.qp_num = id->id.qp->qp_num;
		if (e->event == WN_CTL_CM_EV_ESTABLISHED)
			id->id.qp->state = IBV_QPS_RTS;
		else if (e->event == WN_CTL_CM_EV_DISCONNECTED ||
			 e->event == WN_CTL_CM_EV_REJECTED ||
			 e->event == WN_CTL_CM_EV_CONNECT_ERROR ||
			 e->event == WN_CTL_CM_EV_UNREACHABLE)
			id->id.qp->state = IBV_QPS_ERR; /* warpnicd moved it (failed connect) */
	}
	return w;
}

EXPORT int
rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct wn_ec *ec = (struct wn_ec *)ch;
	struct wn_ctl_cm_event e;
	struct wn_event *w;
	int ret;

	for (;;) {
		ret = wn_client_cm_get_event(ec->wch, &e);
		if (ret == -EPIPE && !ec_live(ec))
			block_forever();
		if (ret != 0)
			return fail(ret == -EPIPE ? ENODEV : -ret);
		w = convert(ec, &e);
		if (w != NULL)
			break;
		if (errno != EAGAIN)
			return -1;
	}
	*event = &w->ev;
	return 0;
}

EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);
	return 0;
}

/* Synchronous ids: wait for the event that completes an operation. */
static int
sync_wait(struct wn_id *id, enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;
	int ret;

	for (;;) {
		if (rdma_get_cm_event(&id->ec->ch, &ev) != 0)
			return -1;
		if (ev->id != &id->id && ev->listen_id != &id->id) {
			rdma_ack_cm_event(ev);
			continue;
		}
		if (ev->event == want) {
			if (out != NULL) {
				*out = ev;
				return 0;
			}
			rdma_ack_cm_event(ev);
			return 0;
		}
		ret = ev->status ? -ev->status : ECONNREFUSED;
		rdma_ack_cm_event(ev);
		return fail(ret > 0 ? ret : ECONNREFUSED);
	}
}

EXPORT const char *
rdma_event_str(enum rdma_cm_event_type e)
{
	static const char *const n[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT"};

	return (unsigned int)e < sizeof(n) / sizeof(n[0]) ? n[e] : "UNKNOWN EVENT";
}

/* ------------------------------------------------------------------ ids */

EXPORT int
rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out, void *context,
	       enum rdma_port_space ps)
{
	struct wn_id *id;
	int ret;

	/*
	 * As the kernel's rdma_cm: any port space makes an id. UDP ids are for UD QPs (a
	 * warpnic extension); IPoIB ids too, whose QP is then refused (EOPNOTSUPP: IPoIB is
	 * InfiniBand's), as is multicast (ENOSYS), not the id.
	 */
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB && ps != RDMA_PS_UDP && ps != RDMA_PS_IPOIB)
		return fail(EINVAL);
	if (cm_ctx() == NULL)
		return -1;
	id = calloc(1, sizeof(*id));
	if (id == NULL)
		return -1;
	if (ch == NULL) {
		ch = rdma_create_event_channel();
		if (ch == NULL) {
			free(id);
			return -1;
		}
		id->sync = true;
		id->own_ec = true;
	}
	id->ec = (struct wn_ec *)ch;
	ret = wn_client_cm_create_id_ps(cm_cl(), id->ec->wch,
					ps == RDMA_PS_UDP ? WN_CTL_PS_UDP : WN_CTL_PS_TCP,
					(uintptr_t)id, &id->handle);
	if (ret != 0) {
		if (id->own_ec)
			rdma_destroy_event_channel(ch);
		free(id);
		return fail(ret);
	}
	id->id.verbs = g_ctx;
	id->id.channel = ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.port_num = 1;
	id->id.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	if (id_link(id) != 0) {
		wn_client_cm_destroy_id(cm_cl(), id->handle);
		if (id->own_ec)
			rdma_destroy_event_channel(ch);
		free(id);
		return -1;
	}
	*out = &id->id;
	return 0;
}

EXPORT int
rdma_destroy_id(struct rdma_cm_id *cid)
{
	struct wn_id *id = (struct wn_id *)cid;

	wn_client_cm_destroy_id(cm_cl(), id->handle);
	id_unlink(id);
	id_put_dev_pd(id);
	/* ids of incoming connections share their listener's private channel */
	if (id->own_ec)
		rdma_destroy_event_channel(&id->ec->ch);
	free(id);
	return 0;
}

static int
sockaddr_in(struct wn_ctl_addr *a, const struct sockaddr *sa)
{
	if (sa == NULL) {
		memset(a, 0, sizeof(*a));
		return 0;
	}
	return wn_client_addr_from_sockaddr(a, sa);
}

EXPORT int
rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ctl_cm_addr_resp r;
	struct wn_ctl_addr a;
	int ret;

	if (addr == NULL || sockaddr_in(&a, addr) != 0)
		return fail(EAFNOSUPPORT);
	ret = wn_client_cm_addr(cm_cl(), WN_CTL_CM_BIND, id->handle, &a, NULL, 0, &r);
	if (ret != 0)
		return fail(ret);
	set_addrs(cid, &r.src, NULL);
	id_take_dev_pd(id);
	return 0;
}

EXPORT int
rdma_resolve_addr(struct rdma_cm_id *cid, struct sockaddr *src, struct sockaddr *dst,
		  int timeout_ms)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ctl_cm_addr_resp r;
	struct wn_ctl_addr s, d;
	int ret;

	if (dst == NULL || sockaddr_in(&s, src) != 0 || sockaddr_in(&d, dst) != 0)
		return fail(EAFNOSUPPORT);
	ret = wn_client_cm_addr(cm_cl(), WN_CTL_CM_RESOLVE_ADDR, id->handle,
				src != NULL ? &s : NULL, &d, (uint32_t)timeout_ms, &r);
	if (ret != 0)
		return fail(ret);
	set_addrs(cid, &r.src, &r.dst);
	id_take_dev_pd(id);
	return id->sync ? sync_wait(id, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) : 0;
}

EXPORT int
rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct wn_id *id = (struct wn_id *)cid;
	int ret = wn_client_cm_addr(cm_cl(), WN_CTL_CM_RESOLVE_ROUTE, id->handle, NULL, NULL,
				    (uint32_t)timeout_ms, NULL);

	if (ret != 0)
		return fail(ret);
	return id->sync ? sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) : 0;
}

EXPORT int
rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct wn_id *id = (struct wn_id *)cid;
	int ret = wn_client_cm_addr(cm_cl(), WN_CTL_CM_LISTEN, id->handle, NULL, NULL,
				    backlog > 0 ? (uint32_t)backlog : 0, NULL);

	return ret != 0 ? fail(ret) : 0;
}

static void
param_from(struct wn_ctl_conn_param *p, const struct rdma_conn_param *c)
{
	memset(p, 0, sizeof(*p));
	if (c == NULL) {
		p->ird = 1;
		p->ord = 1;
		return;
	}
	p->ird = c->responder_resources;
	p->ord = c->initiator_depth;
	p->flags = (c->flow_control ? 1u : 0u) | (c->srq ? 2u : 0u);
	if (c->private_data != NULL && c->private_data_len > 0) {
		p->pd_len = c->private_data_len;
		memcpy(p->pd, c->private_data, p->pd_len);
	}
}

/*
 * The QP of a connection: the id's (rdma_create_qp), else one the program created itself
 * and names by number in conn_param.qp_num (rping -q), as the kernel's iw_cm looks it up.
 */
static uint32_t
qp_handle(struct rdma_cm_id *cid, const struct rdma_conn_param *conn)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct ibv_qp *qp = cid->qp;

	if (qp == NULL && conn != NULL && conn->qp_num != 0) {
		qp = wn_verbs_qp_by_num(cid->verbs, conn->qp_num);
		id->ext_qp = qp != NULL;
	}
	if (qp == NULL)
		return 0;
	wn_verbs_qp_cm_bind(qp);
	if (id->timeout_set)
		(void)ibv_modify_qp(qp, &(struct ibv_qp_attr){.timeout = id->timeout},
				    IBV_QP_TIMEOUT);
	return wn_verbs_qp_handle(qp);
}

EXPORT int
rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *conn)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ctl_conn_param p;
	int ret;

	param_from(&p, conn);
	ret = wn_client_cm_conn(cm_cl(), WN_CTL_CM_CONNECT, id->handle, qp_handle(cid, conn), &p);
	if (ret != 0)
		return fail(ret);
	id->conn_started = true;
	id->active = true;
	return id->sync ? sync_wait(id, id->ext_qp && cid->qp == NULL ?
					    RDMA_CM_EVENT_CONNECT_RESPONSE : RDMA_CM_EVENT_ESTABLISHED,
				    NULL) : 0;
}

EXPORT int
rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *conn)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ctl_conn_param p;
	int ret;

	param_from(&p, conn);
	ret = wn_client_cm_conn(cm_cl(), WN_CTL_CM_ACCEPT, id->handle, qp_handle(cid, conn), &p);
	if (ret != 0)
		return fail(ret);
	/* a UDP id's accept is its answer (a SIDR REP): nothing follows on this side */
	return id->sync && !id_udp(cid) ? sync_wait(id, RDMA_CM_EVENT_ESTABLISHED, NULL) : 0;
}

EXPORT int
rdma_reject(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ctl_conn_param p;
	int ret;

	memset(&p, 0, sizeof(p));
	if (private_data != NULL) {
		p.pd_len = len;
		memcpy(p.pd, private_data, len);
	}
	ret = wn_client_cm_conn(cm_cl(), WN_CTL_CM_REJECT, id->handle, 0, &p);
	return ret != 0 ? fail(ret) : 0;
}

EXPORT int
rdma_disconnect(struct rdma_cm_id *cid)
{
	struct wn_id *id = (struct wn_id *)cid;
	int ret = wn_client_cm_disconnect(cm_cl(), id->handle);

	/*
	 * iw_cm_disconnect() returns 0 when the peer closed first, when this side already
	 * disconnected, and after a rejected or never accepted request, as warpnicd does; an
	 * id whose connect warpnicd refused (no connection ever requested there) counts too.
	 * Only an id that never took part in a connection (or a listener) fails, as with
	 * rdma_cm.
	 */
	if (ret == -EINVAL && id->conn_started)
		ret = 0;
	if (ret != 0)
		return fail(ret);
	/* a UDP id's QP too, as rdma_cm's cma_modify_qp_err() */
	if (cid->qp != NULL)
		cid->qp->state = IBV_QPS_ERR;
	return 0;
}

EXPORT int
rdma_establish(struct rdma_cm_id *cid)
{
	/* iWARP: the connection is up when ESTABLISHED was reported; nothing to send */
	(void)cid;
	return 0;
}

/*
 * The attributes for the program's own QP (rping -q, an external QP), as rdma_cm gives them
 * for an iWARP id. Before a connection is requested: no access rights. Once one is (connect,
 * or a request received): INIT and RTR with remote read and write rights; RTS with no state
 * at all, since the connection itself moves an iWARP QP to RTS (a program that applies the
 * attributes changes nothing). With an ACK timeout set (rdma_set_option), RTS carries it.
 */
EXPORT int
rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *attr, int *mask)
{
	struct wn_id *id = (struct wn_id *)cid;

	if (attr->qp_state != IBV_QPS_INIT && attr->qp_state != IBV_QPS_RTR &&
	    attr->qp_state != IBV_QPS_RTS)
		return fail(EINVAL);
	if (id_udp(cid)) {
		/* a UD QP, as rdma_cm gives it: the P_Key, the port and RDMA_UDP_QKEY at INIT */
		*mask = IBV_QP_STATE;
		if (attr->qp_state == IBV_QPS_INIT) {
			attr->pkey_index = 0;
			attr->port_num = cid->port_num;
			attr->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		} else if (attr->qp_state == IBV_QPS_RTS) {
			attr->sq_psn = 0;
			*mask |= IBV_QP_SQ_PSN;
		}
		return 0;
	}
	if (!id->conn_started) {
		attr->qp_access_flags = 0;
		*mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
	} else if (attr->qp_state == IBV_QPS_RTS) {
		*mask = 0;
		if (id->timeout_set) {
			attr->timeout = id->timeout;
			*mask |= IBV_QP_TIMEOUT;
		}
	} else {
		attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		*mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
	}
	attr->port_num = cid->port_num;
	*mask |= IBV_QP_PORT;
	return 0;
}

/*
 * Options of an id (rdma_cm's RDMA_OPTION_ID level): the ACK timeout of its QP (kept and
 * applied to the QP, which ibv_query_qp reports), the type of service, and the bind options
 * ~SO_REUSEADDR and ~IPV6_V6ONLY. Each takes its value at the size rdma_cm takes it.
 */
EXPORT int
rdma_set_option(struct rdma_cm_id *cid, int level, int optname, void *optval, size_t optlen)
{
	struct wn_id *id = (struct wn_id *)cid;

	if (level != RDMA_OPTION_ID)
		return fail(level == RDMA_OPTION_IB ? ENOSYS : EINVAL); /* IB paths: not iWARP */
	if (optval == NULL)
		return fail(EINVAL);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return fail(EINVAL);
		id->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return fail(EINVAL);
		id->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return fail(EINVAL);
		id->afonly = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		/* an RC id's (rdma_set_ack_timeout); 5 bits, as the QP attribute */
		if (optlen != sizeof(uint8_t) || cid->qp_type != IBV_QPT_RC ||
		    *(uint8_t *)optval > 31)
			return fail(EINVAL);
		id->timeout = *(uint8_t *)optval;
		id->timeout_set = true;
		if (cid->qp != NULL &&
		    ibv_modify_qp(cid->qp, &(struct ibv_qp_attr){.timeout = id->timeout},
				  IBV_QP_TIMEOUT) != 0)
			return -1;
		return 0;
	default:
		return fail(ENOSYS);
	}
}

/* ------------------------------------------------------------------ QPs */

/* @p pd, else the id's PD (its device's, as librdmacm gives it); NULL with errno. */
static struct ibv_pd *
id_pd(struct rdma_cm_id *cid, struct ibv_pd *pd)
{
	if (pd != NULL)
		return pd;
	id_take_dev_pd((struct wn_id *)cid);
	if (cid->pd == NULL && errno == 0)
		errno = ENOMEM;
	return cid->pd;
}

/* A UDP id's UD QP goes to RTS at once (INIT with RDMA_UDP_QKEY, RTR, RTS), as librdmacm's. */
static int
ud_qp_to_rts(struct rdma_cm_id *cid, struct ibv_qp *qp)
{
	static const enum ibv_qp_state to[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};
	struct ibv_qp_attr a;
	int mask, ret;

	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = to[i];
		if (rdma_init_qp_attr(cid, &a, &mask) != 0)
			return -1;
		ret = ibv_modify_qp(qp, &a, mask);
		if (ret != 0) {
			errno = ret;
			return -1;
		}
	}
	return 0;
}

/*
 * The id's QP from extended attributes (send_ops_flags for the ibv_wr_* API, create flags):
 * on the given PD, else the id's; with no CQs given, CQs and completion channels of its own
 * whose cq_context is the id (the rdma_verbs.h inlines expect them).
 */
EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *ax)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct ibv_qp_init_attr_ex a = *ax;
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	if (cid->qp != NULL)
		return fail(EINVAL);
	pd = id_pd(cid, (a.comp_mask & IBV_QP_INIT_ATTR_PD) ? a.pd : NULL);
	if (pd == NULL)
		return -1;
	if (pd->context != cid->verbs)
		return fail(EINVAL);
	a.pd = pd;
	a.comp_mask |= IBV_QP_INIT_ATTR_PD;
	if (a.srq == NULL)
		a.srq = cid->srq; /* rdma_create_srq's */
	if (a.send_cq == NULL || a.recv_cq == NULL) {
		/*
		 * rdma_verbs.h users: CQs + channels with cq_context = id. The channels share
		 * one pipe per device context (each its own events): tens of thousands of ids
		 * must not cost four descriptors each.
		 */
		cid->send_cq_channel = wn_verbs_comp_channel_shared(cid->verbs);
		cid->recv_cq_channel = wn_verbs_comp_channel_shared(cid->verbs);
		if (cid->send_cq_channel == NULL || cid->recv_cq_channel == NULL)
			return -1;
		cid->send_cq = ibv_create_cq(cid->verbs, (int)(a.cap.max_send_wr ? a.cap.max_send_wr
							   : 1), cid, cid->send_cq_channel, 0);
		cid->recv_cq = ibv_create_cq(cid->verbs, (int)(a.cap.max_recv_wr ? a.cap.max_recv_wr
							   : 1), cid, cid->recv_cq_channel, 0);
		if (cid->send_cq == NULL || cid->recv_cq == NULL)
			return -1;
		a.send_cq = cid->send_cq;
		a.recv_cq = cid->recv_cq;
		id->own_cqs = true;
	}
	if ((a.qp_type == IBV_QPT_UD) != id_udp(cid))
		return fail(cid->ps == RDMA_PS_IPOIB ? EOPNOTSUPP : EINVAL);
	qp = ibv_create_qp_ex(cid->verbs, &a);
	if (qp == NULL)
		return -1;
	if (id_udp(cid) && ud_qp_to_rts(cid, qp) != 0) {
		int err = errno;

		ibv_destroy_qp(qp);
		return fail(err);
	}
	ax->cap = a.cap;
	wn_verbs_qp_cm_bind(qp);
	if (id->timeout_set)
		(void)ibv_modify_qp(qp, &(struct ibv_qp_attr){.timeout = id->timeout},
				    IBV_QP_TIMEOUT);
	cid->qp = qp;
	cid->srq = a.srq;
	return 0;
}

EXPORT int
rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax;
	int ret;

	memset(&ax, 0, sizeof(ax));
	ax.qp_context = attr->qp_context;
	ax.send_cq = attr->send_cq;
	ax.recv_cq = attr->recv_cq;
	ax.srq = attr->srq;
	ax.cap = attr->cap;
	ax.qp_type = attr->qp_type;
	ax.sq_sig_all = attr->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	ret = rdma_create_qp_ex(cid, &ax);
	if (ret == 0)
		attr->cap = ax.cap;
	return ret;
}

EXPORT void
rdma_destroy_qp(struct rdma_cm_id *cid)
{
	struct wn_id *id = (struct wn_id *)cid;

	if (cid->qp != NULL)
		ibv_destroy_qp(cid->qp);
	cid->qp = NULL;
	if (id->own_cqs) {
		if (cid->send_cq != NULL)
			ibv_destroy_cq(cid->send_cq);
		if (cid->recv_cq != NULL)
			ibv_destroy_cq(cid->recv_cq);
		if (cid->send_cq_channel != NULL)
			ibv_destroy_comp_channel(cid->send_cq_channel);
		if (cid->recv_cq_channel != NULL)
			ibv_destroy_comp_channel(cid->recv_cq_channel);
		cid->send_cq = cid->recv_cq = NULL;
		cid->send_cq_channel = cid->recv_cq_channel = NULL;
		id->own_cqs = false;
	}
}

/* ------------------------------------------------------------------ endpoints */

static struct sockaddr *
addr_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d != NULL)
		memcpy(d, sa, len);
	return d;
}

/*
 * Resolve @p node / @p service (passive: the source, else the destination); addresses the
 * hints carry fill what is left, so a caller may pass addresses instead of names (libfabric
 * does: no node, the destination in ai_dst_addr).
 */
EXPORT int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);
	struct addrinfo h, *ai = NULL;
	struct rdma_addrinfo *r;
	int ret;

	if (node == NULL && service == NULL &&
	    (hints == NULL || (hints->ai_src_addr == NULL && hints->ai_dst_addr == NULL)))
		return fail(EINVAL);
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = hints != NULL ? hints->ai_family : AF_UNSPEC;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	if (hints != NULL && (hints->ai_port_space == RDMA_PS_UDP ||
			      hints->ai_port_space == RDMA_PS_IPOIB)) {
		/* a datagram service: the id becomes a UD one */
		r->ai_port_space = hints->ai_port_space;
		r->ai_qp_type = IBV_QPT_UD;
	}
	if (node != NULL || service != NULL) {
		memset(&h, 0, sizeof(h));
		h.ai_socktype = SOCK_STREAM;
		h.ai_family = r->ai_family == AF_INET || r->ai_family == AF_INET6 ?
				      r->ai_family : AF_UNSPEC;
		if (passive)
			h.ai_flags |= AI_PASSIVE;
		if (hints != NULL && (hints->ai_flags & RAI_NUMERICHOST))
			h.ai_flags |= AI_NUMERICHOST;
		ret = getaddrinfo(node, service, &h, &ai);
		if (ret != 0) {
			free(r);
			return ret == EAI_SYSTEM ? -1 : fail(EADDRNOTAVAIL);
		}
		r->ai_family = ai->ai_family;
		if (passive) {
			r->ai_src_addr = addr_dup(ai->ai_addr, ai->ai_addrlen);
			r->ai_src_len = ai->ai_addrlen;
		} else {
			r->ai_dst_addr = addr_dup(ai->ai_addr, ai->ai_addrlen);
			r->ai_dst_len = ai->ai_addrlen;
		}
		freeaddrinfo(ai);
	}
	if (hints != NULL && hints->ai_src_addr != NULL && r->ai_src_addr == NULL) {
		r->ai_src_addr = addr_dup(hints->ai_src_addr, hints->ai_src_len);
		r->ai_src_len = hints->ai_src_len;
	}
	if (hints != NULL && hints->ai_dst_addr != NULL && r->ai_dst_addr == NULL) {
		r->ai_dst_addr = addr_dup(hints->ai_dst_addr, hints->ai_dst_len);
		r->ai_dst_len = hints->ai_dst_len;
	}
	if ((r->ai_src_len != 0 && r->ai_src_addr == NULL) ||
	    (r->ai_dst_len != 0 && r->ai_dst_addr == NULL)) {
		rdma_freeaddrinfo(r);
		return fail(ENOMEM);
	}
	if (r->ai_family == AF_UNSPEC)
		r->ai_family = (r->ai_dst_addr != NULL ? r->ai_dst_addr : r->ai_src_addr)->sa_family;
	*res = r;
	return 0;
}

EXPORT void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = n;
	}
}

EXPORT int
rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct wn_id *id;
	int ret;

	if (rdma_create_id(NULL, &cid, NULL, res->ai_port_space == RDMA_PS_UDP ? RDMA_PS_UDP :
								      RDMA_PS_TCP) != 0)
		return -1;
	id = (struct wn_id *)cid;
	cid->pd = pd;
	if (res->ai_flags & RAI_PASSIVE) {
		ret = rdma_bind_addr(cid, res->ai_src_addr);
		if (ret == 0 && qp_init_attr != NULL) {
			id->qp_attr = *qp_init_attr;
			id->qp_attr.qp_type = (enum ibv_qp_type)res->ai_qp_type;
			id->has_qp_attr = true;
		}
	} else {
		ret = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (ret == 0)
			ret = rdma_resolve_route(cid, 2000);
		/* as librdmacm: the QP type comes from the addrinfo (rdma_client leaves it 0) */
		if (ret == 0 && qp_init_attr != NULL) {
			qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
			ret = rdma_create_qp(cid, pd, qp_init_attr);
		}
	}
	if (ret != 0) {
		int err = errno;

		rdma_destroy_id(cid);
		errno = err;
		return -1;
	}
	*out = cid;
	return 0;
}

EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct wn_id *l = (struct wn_id *)listen;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;

	if (!l->sync)
		return fail(EINVAL);
	if (sync_wait(l, RDMA_CM_EVENT_CONNECT_REQUEST, &ev) != 0)
		return -1;
	cid = ev->id;
	rdma_ack_cm_event(ev);
	if (l->has_qp_attr) {
		struct ibv_qp_init_attr a = l->qp_attr;

		if (rdma_create_qp(cid, listen->pd, &a) != 0) {
			int err = errno;

			rdma_reject(cid, NULL, 0);
			rdma_destroy_id(cid);
			return fail(err);
		}
	}
	*out = cid;
	return 0;
}

EXPORT void
rdma_destroy_ep(struct rdma_cm_id *cid)
{
	rdma_destroy_qp(cid);
	if (((struct wn_id *)cid)->own_srq)
		rdma_destroy_srq(cid);
	rdma_destroy_id(cid);
}

/* ------------------------------------------------------------------ the rest of RDMACM_1.x */

EXPORT __be16
rdma_get_src_port(struct rdma_cm_id *cid)
{
	const struct sockaddr *sa = &cid->route.addr.src_addr;

	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port : 0;
}

EXPORT __be16
rdma_get_dst_port(struct rdma_cm_id *cid)
{
	const struct sockaddr *sa = &cid->route.addr.dst_addr;

	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port : 0;
}

/* The open devices (one: this process's context on warpnicd), NULL-terminated. */
EXPORT struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **l = calloc(2, sizeof(*l));

	if (l == NULL) {
		if (num_devices != NULL)
			*num_devices = 0;
		errno = ENOMEM;
		return NULL;
	}
	l[0] = cm_ctx();
	if (num_devices != NULL)
		*num_devices = l[0] != NULL ? 1 : 0;
	return l;
}

/* The list only: the contexts stay open for the process's lifetime, as in librdmacm. */
EXPORT void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* The kernel's rdma_notify() does nothing for an iWARP device once the id has a connection. */
EXPORT int
rdma_notify(struct rdma_cm_id *cid, enum ibv_event_type event)
{
	(void)event;
	return ((struct wn_id *)cid)->conn_started ? 0 : fail(EINVAL);
}

/*
 * Move an id to another event channel (libfabric's verbs provider creates its ids without
 * one and moves them to its event queue's). NULL: a private channel, the id becomes
 * synchronous, as in librdmacm. Events already queued on the old channel stay there.
 */
EXPORT int
rdma_migrate_id(struct rdma_cm_id *cid, struct rdma_event_channel *channel)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct wn_ec *old = id->ec;
	bool sync = channel == NULL;
	int ret;

	if (sync && id->sync)
		return fail(EINVAL);
	if (sync) {
		channel = rdma_create_event_channel();
		if (channel == NULL)
			return -1;
	}
	ret = wn_client_cm_migrate_id(cm_cl(), id->handle, ((struct wn_ec *)channel)->wch);
	if (ret != 0) {
		if (sync)
			rdma_destroy_event_channel(channel);
		return fail(ret);
	}
	id->ec = (struct wn_ec *)channel;
	cid->channel = channel;
	if (id->own_ec)
		rdma_destroy_event_channel(&old->ch);
	id->own_ec = sync;
	id->sync = sync;
	return 0;
}

/*
 * Multicast is an InfiniBand/RoCE service: the kernel's rdma_join_multicast() refuses an id
 * of a connected (non-UD) QP type with EINVAL, and answers ENOSYS for a device that has
 * neither, which an iWARP RNIC is.
 */
static int
join_mc(struct rdma_cm_id *cid)
{
	return fail(cid->qp_type != IBV_QPT_UD ? EINVAL : ENOSYS);
}

EXPORT int
rdma_join_multicast(struct rdma_cm_id *cid, struct sockaddr *addr, void *context)
{
	(void)addr;
	(void)context;
	return join_mc(cid);
}

EXPORT int
rdma_join_multicast_ex(struct rdma_cm_id *cid, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	(void)attr;
	(void)context;
	return join_mc(cid);
}

/* No group was joined: librdmacm answers EADDRNOTAVAIL for an address not in its list. */
EXPORT int
rdma_leave_multicast(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	(void)cid;
	return fail(addr == NULL ? EINVAL : EADDRNOTAVAIL);
}

EXPORT int
rdma_create_srq_ex(struct rdma_cm_id *cid, struct ibv_srq_init_attr_ex *attr)
{
	struct wn_id *id = (struct wn_id *)cid;
	struct ibv_srq_init_attr a;
	struct ibv_pd *pd;
	struct ibv_srq *srq;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return fail(EINVAL);
	if (attr->srq_type != IBV_SRQT_BASIC)
		return fail(EOPNOTSUPP); /* XRC and tag matching: not on an RNIC */
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd != NULL ? attr->pd : cid->pd;
	pd = id_pd(cid, pd);
	if (pd == NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	srq = ibv_create_srq(pd, &a);
	if (srq == NULL)
		return -1;
	attr->attr = a.attr;
	cid->srq = srq;
	id->own_srq = true;
	return 0;
}

EXPORT int
rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;
	int ret;

	memset(&ax, 0, sizeof(ax));
	ax.srq_context = attr->srq_context;
	ax.attr = attr->attr;
	ax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ax.srq_type = IBV_SRQT_BASIC;
	ax.pd = pd;
	ret = rdma_create_srq_ex(cid, &ax);
	if (ret == 0)
		attr->attr = ax.attr;
	return ret;
}

EXPORT void
rdma_destroy_srq(struct rdma_cm_id *cid)
{
	struct wn_id *id = (struct wn_id *)cid;

	if (cid->srq != NULL)
		ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
	id->own_srq = false;
}

/* ECE (Enhanced Connection Establishment) options ride in InfiniBand CM messages only. */
EXPORT int
rdma_set_local_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (cid == NULL || cid->qp != NULL || ece == NULL || ece->vendor_id == 0 ||
	    ece->comp_mask != 0)
		return fail(EINVAL);
	((struct wn_id *)cid)->local_ece = *ece;
	return 0;
}

/* The peer's options: none ever arrive over MPA. */
EXPORT int
rdma_get_remote_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (cid == NULL || cid->qp != NULL || ece == NULL)
		return fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

/* A reject "vendor option not supported": over MPA, a plain MPA Reject. */
EXPORT int
rdma_reject_ece(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	return rdma_reject(cid, private_data, len);
}
