/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs.so.1 ABI shim over lib/client: devices, contexts, PD, MR, CQ, completion
 * channels, SRQ, QP. Exported names and versions: libibverbs.map. The verbs.h inlines
 * (ibv_post_send, ibv_poll_cq, ...) dispatch through ctx->ops, filled from dp.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <search.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs_priv.h"
#include "wnv.h"

/* ------------------------------------------------------------------ devices */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wn_vdev *the_dev; /* one device per warpnicd instance; never freed */

static const char *
ctl_path(void)
{
	const char *p = getenv(WN_CTL_ENV);

	return (p == NULL || p[0] == '\0') ? WN_CTL_DEFAULT_PATH : p;
}

/*
 * No warpnicd to talk to: the program sees no device, as with no RNIC, and stderr says once
 * per process where the shim looked, why it failed and how to start one.
 */
static void
say_no_daemon(const char *path, int err)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	struct stat st;
	struct group *g;

	if (atomic_flag_test_and_set(&said))
		return;
	if (err == EACCES && stat(path, &st) == 0) {
		g = getgrgid(st.st_gid);
		fprintf(stderr, "warpnic: %s: permission denied: the control socket is for group "
			"%s (mode %04o); join that group, or ask warpnicd for --ctl-group/--ctl-mode\n",
			path, g != NULL ? g->gr_name : "?", (unsigned int)(st.st_mode & 07777));
	} else if (err == EPROTO) {
		fprintf(stderr, "warpnic: %s: the warpnicd there speaks another version of the "
			"control protocol than this shim; use the shim installed with it\n", path);
	} else {
		fprintf(stderr, "warpnic: no warpnicd serves %s (%s): start one with warpnic-up (this "
			"host, no NIC) or systemctl start warpnicd@local, or point WARPNIC_CTL "
			"(warpnic-run --ctl) at another one\n", path, strerror(err));
	}
}

/* Probe warpnicd; on success create (once) the device entry. */
static struct wn_vdev *
probe_device(void)
{
	struct wn_ctl_device_attr attr;
	struct wn_client *cl;
	struct wn_vdev *d;

	pthread_mutex_lock(&dev_lock);
	d = the_dev;
	if (d != NULL)
		goto out;
	cl = wn_client_open(ctl_path());
	if (cl == NULL) {
		say_no_daemon(ctl_path(), errno);
		goto out;
	}
	if (wn_client_query_device(cl, &attr) != 0) {
		wn_client_close(cl);
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (d != NULL) {
		d->dev.node_type = IBV_NODE_RNIC;
		d->dev.transport_type = IBV_TRANSPORT_IWARP;
		snprintf(d->dev.name, sizeof(d->dev.name), "%s", wn_client_dev_name(cl));
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs_%.48s", d->dev.name);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "/dev/infiniband/uverbs_%.48s",
			 d->dev.name);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
			 "/sys/class/infiniband/%.48s", d->dev.name);
		d->guid = attr.node_guid;
		snprintf(d->ctl_path, sizeof(d->ctl_path), "%s", ctl_path());
		the_dev = d;
	}
	wn_client_close(cl);
out:
	pthread_mutex_unlock(&dev_lock);
	return d;
}

/* rdma-core's check_env(): set and not "0" */
static bool
env_on(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && strcmp(v, "0") != 0;
}

/* libibverbs' first-use initialisation: RDMAV_FORK_SAFE / IBV_FORK_SAFE call ibv_fork_init() */
static void
verbs_init(void)
{
	if ((env_on("RDMAV_FORK_SAFE") || env_on("IBV_FORK_SAFE")) && ibv_fork_init() != 0)
		fprintf(stderr, "libibverbs: Warning: fork()-safety requested but init failed\n");
}

struct ibv_device **
(ibv_get_device_list)(int *num_devices)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct ibv_device **l = calloc(2, sizeof(*l));
	struct wn_vdev *d;

	pthread_once(&once, verbs_init);

	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	d = probe_device();
	if (d != NULL)
		l[0] = &d->dev;
	if (num_devices != NULL)
		*num_devices = d != NULL ? 1 : 0;
	return l;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct wn_vdev *d = (struct wn_vdev *)device;

	return (__be64)d->guid;
}

WN_VERBS_EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	(void)device;
	return 0;
}

WN_VERBS_EXPORT int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	if (the_dev != NULL && strcmp(dir, the_dev->dev.ibdev_path) == 0) {
		/* our device has no sysfs node: answer the files tools read */
		const char *v = NULL;

		if (strcmp(file, "board_id") == 0)
			v = "warpnic";
		else if (strcmp(file, "node_desc") == 0)
			v = "warpnic software iWARP RNIC";
		if (v == NULL)
			return -1;
		return snprintf(buf, size, "%s", v);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	else if (n > 0 && (size_t)n < size)
		buf[n] = '\0';
	return (int)n;
}

bool
wn_verbs_is_cmd_fd(int fd)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	struct stat st;

	memset(&a, 0, sizeof(a));
	return the_dev != NULL && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       getpeername(fd, (struct sockaddr *)&a, &len) == 0 && a.sun_family == AF_UNIX &&
	       strncmp(a.sun_path, the_dev->ctl_path, sizeof(a.sun_path)) == 0;
}

WN_VERBS_EXPORT int
ibv_get_sysfs_path(char *buf, size_t size)
{
	return snprintf(buf, size, "/sys");
}

/* ------------------------------------------------------------------ context */

static struct ibv_mw *vq_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
static int vq_dealloc_mw(struct ibv_mw *mw);
static int vq_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a,
			 size_t len);
static int vq_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t attr_size);
static struct ibv_qp *vq_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
static struct ibv_cq_ex *vq_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a);
static struct ibv_pd *vq_alloc_parent_domain(struct ibv_context *ctx,
					     struct ibv_parent_domain_init_attr *attr);

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct wn_vdev *d = (struct wn_vdev *)device;
	struct wn_vctx *v;
	struct ibv_context *ctx;

	if (d == NULL || d != the_dev) {
		errno = ENODEV;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	v->cl = wn_client_open(d->ctl_path);
	if (v->cl == NULL) {
		int err = errno;

		free(v);
		errno = err;
		return NULL;
	}
	v->vdev = d;
	/*
	 * Async events come on a socket of their own (wn_client_async_open()), readable when
	 * one is queued, so poll() and O_NONBLOCK work as on a kernel device. Should warpnicd
	 * not offer it, the fd stays real for poll()/fcntl() users and nothing arrives.
	 */
	v->async_fd = wn_client_async_open(v->cl);
	v->async_sock = v->async_fd >= 0;
	if (!v->async_sock)
		v->async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	v->vctx.sz = sizeof(struct verbs_context);
	v->vctx.query_port = vq_query_port;
	v->vctx.query_device_ex = vq_query_device_ex;
	v->vctx.create_qp_ex = vq_create_qp_ex;
	v->vctx.create_cq_ex = vq_create_cq_ex;
	v->vctx.alloc_parent_domain = vq_alloc_parent_domain;
	ctx = &v->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = wn_client_fd(v->cl);
	ctx->async_fd = v->async_fd;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = wn_verbs_poll_cq;
	ctx->ops.req_notify_cq = wn_verbs_req_notify_cq;
	ctx->ops.post_send = wn_verbs_post_send;
	ctx->ops.post_recv = wn_verbs_post_recv;
	ctx->ops.post_srq_recv = wn_verbs_post_srq_recv;
	ctx->ops.alloc_mw = vq_alloc_mw;
	ctx->ops.dealloc_mw = vq_dealloc_mw;
	ctx->ops.bind_mw = wn_verbs_bind_mw;
	return ctx;
}

static void share_free(struct wn_vshare *sh);

int
ibv_close_device(struct ibv_context *ctx)
{
	struct wn_vctx *v = wn_vctx_of(ctx);

	wn_client_close(v->cl);
	if (v->async_fd >= 0)
		close(v->async_fd);
	share_free(v->share);
	pthread_mutex_destroy(&ctx->mutex);
	free(v);
	return 0;
}

WN_VERBS_EXPORT struct wn_client *
wn_verbs_client(struct ibv_context *ctx)
{
	return wn_cl_of(ctx);
}

WN_VERBS_EXPORT uint32_t
wn_verbs_qp_handle(struct ibv_qp *qp)
{
	return ((struct wn_vqp *)qp)->wqp->handle;
}

/* The QP belongs to an rdma_cm id (rdma_create_qp, or connect/accept with it). */
WN_VERBS_EXPORT void
wn_verbs_qp_cm_bind(struct ibv_qp *qp)
{
	((struct wn_vqp *)qp)->cm_bound = true;
}

/* Doubly linked lists of live objects: insertion at the head and removal are O(1). */
#define LIVE_INSERT(head, o)                                                                \
	do {                                                                               \
		(o)->next = (head);                                                        \
		if ((head) != NULL)                                                        \
			(head)->pprev = &(o)->next;                                        \
		(head) = (o);                                                              \
		(o)->pprev = &(head);                                                      \
	} while (0)
#define LIVE_REMOVE(o)                                                                      \
	do {                                                                               \
		*(o)->pprev = (o)->next;                                                   \
		if ((o)->next != NULL)                                                     \
			(o)->next->pprev = (o)->pprev;                                     \
	} while (0)

static pthread_mutex_t qp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wn_vqp *live_qps; /* for wn_verbs_qp_by_num() */

/* The QP numbered @p qpn of context @p ctx (rdma_connect with conn_param.qp_num), or NULL. */
WN_VERBS_EXPORT struct ibv_qp *
wn_verbs_qp_by_num(struct ibv_context *ctx, uint32_t qpn)
{
	struct wn_vqp *q;

	pthread_mutex_lock(&qp_lock);
	for (q = live_qps; q != NULL && (q->qp.context != ctx || q->qp.qp_num != qpn);
	     q = q->next)
		;
	pthread_mutex_unlock(&qp_lock);
	return q != NULL ? &q->qp : NULL;
}

static_assert((int)IBV_EVENT_CQ_ERR == (int)WN_CTL_ASYNC_CQ_ERR &&
	      (int)IBV_EVENT_QP_FATAL == (int)WN_CTL_ASYNC_QP_FATAL &&
	      (int)IBV_EVENT_QP_ACCESS_ERR == (int)WN_CTL_ASYNC_QP_ACCESS_ERR &&
	      (int)IBV_EVENT_SRQ_LIMIT_REACHED == (int)WN_CTL_ASYNC_SRQ_LIMIT_REACHED,
	      "ibv_event_type values");

static struct wn_vcq *live_cqs;   /* for async events */
static struct wn_vsrq *live_srqs; /* for async events */

/* The object of event @p e, if it still lives in @p ctx: fills @p event. @return 0 or -1. */
static int
async_element(struct ibv_context *ctx, const struct wn_ctl_async_event *e,
	      struct ibv_async_event *event)
{
	int ret = -1;

	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)e->event;
	pthread_mutex_lock(&qp_lock);
	if (e->event == WN_CTL_ASYNC_CQ_ERR) {
		struct wn_vcq *c;

		for (c = live_cqs; c != NULL && (c->cq.context != ctx || c->cq.handle != e->handle);
		     c = c->next)
			;
		if (c != NULL) {
			event->element.cq = &c->cq;
			ret = 0;
		}
	} else if (e->event == WN_CTL_ASYNC_SRQ_LIMIT_REACHED) {
		struct wn_vsrq *s;

		for (s = live_srqs;
		     s != NULL && (s->srq.context != ctx || s->srq.handle != e->handle);
		     s = s->next)
			;
		if (s != NULL) {
			event->element.srq = &s->srq;
			ret = 0;
		}
	} else {
		struct wn_vqp *q;

		for (q = live_qps;
		     q != NULL && (q->qp.context != ctx || q->wqp->handle != e->handle);
		     q = q->next)
			;
		if (q != NULL) {
			event->element.qp = &q->qp;
			ret = 0;
		}
	}
	pthread_mutex_unlock(&qp_lock);
	return ret;
}

/*
 * The next async event (wn_ctl.h WN_CTL_ASYNC_*: QP_FATAL, QP_ACCESS_ERR, CQ_ERR,
 * SRQ_LIMIT_REACHED): blocks unless async_fd was made non-blocking (then EAGAIN), as on a
 * kernel device. Events about objects destroyed meanwhile are skipped.
 */
int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct wn_vctx *v = wn_vctx_of(ctx);
	uint64_t x;

	if (!v->async_sock) {
		/* nothing ever arrives: block (or EAGAIN) as an idle device does */
		if (read(ctx->async_fd, &x, sizeof(x)) < 0)
			return -1;
		errno = EIO;
		return -1;
	}
	for (;;) {
		struct wn_ctl_async_event e;
		int ret = wn_client_async_read(ctx->async_fd, &e);

		if (ret != 0) {
			errno = ret == -EBADMSG ? EIO : -ret;
			return -1;
		}
		if (async_element(ctx, &e, event) == 0)
			return 0;
	}
}

/* As rdma-core: count the acknowledged event on its object. */
void
ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *m;
	pthread_cond_t *cv;
	uint32_t *done;

	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		m = &event->element.cq->mutex;
		cv = &event->element.cq->cond;
		done = &event->element.cq->async_events_completed;
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		m = &event->element.srq->mutex;
		cv = &event->element.srq->cond;
		done = &event->element.srq->events_completed;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_ACCESS_ERR:
		m = &event->element.qp->mutex;
		cv = &event->element.qp->cond;
		done = &event->element.qp->events_completed;
		break;
	default:
		return;
	}
	pthread_mutex_lock(m);
	(*done)++;
	pthread_cond_signal(cv);
	pthread_mutex_unlock(m);
}

/* ------------------------------------------------------------------ queries */

static void
dev_attr_from(struct ibv_device_attr *a, const struct wn_ctl_device_attr *w)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", w->fw_ver);
	a->node_guid = w->node_guid;
	a->sys_image_guid = w->sys_image_guid;
	a->max_mr_size = w->max_mr_size;
	a->page_size_cap = w->page_size_cap;
	a->vendor_id = w->vendor_id;
	a->vendor_part_id = w->vendor_part_id;
	a->hw_ver = w->hw_ver;
	a->max_qp = (int)w->max_qp;
	a->max_qp_wr = (int)w->max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS | IBV_DEVICE_RC_RNR_NAK_GEN;
	if (w->max_mw != 0)
		a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_mw = (int)w->max_mw;
	a->max_sge = (int)w->max_sge;
	a->max_sge_rd = (int)w->max_sge;
	a->max_cq = (int)w->max_cq;
	a->max_cqe = (int)w->max_cqe;
	a->max_mr = (int)w->max_mr;
	a->max_pd = (int)w->max_pd;
	a->max_qp_rd_atom = (int)w->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)w->max_qp_init_rd_atom;
	a->max_res_rd_atom = (int)(w->max_qp_rd_atom * w->max_qp);
	/* RFC 7306 atomics run as locked compare-and-exchanges on the target (lib/rnic): atomic
	 * among this device's operations on every lcore, not against plain CPU stores */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = (int)w->max_srq;
	a->max_srq_wr = (int)w->max_srq_wr;
	a->max_srq_sge = (int)w->max_srq_sge;
	a->max_pkeys = 1;
	/* address handles live in the program (copied into each UD Send), counted per context */
	a->max_ah = WN_VERBS_MAX_AH;
	a->local_ca_ack_delay = 0;
	a->phys_port_cnt = (uint8_t)w->phys_port_cnt;
}

int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	struct wn_ctl_device_attr w;
	int ret = wn_client_query_device(wn_cl_of(ctx), &w);

	if (ret != 0)
		return -ret;
	dev_attr_from(attr, &w);
	return 0;
}

static int
vq_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int ret;

	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	ret = ibv_query_device(ctx, &a.orig_attr);
	if (ret != 0)
		return ret;
	/*
	 * What the extended attributes have to say about an iWARP RNIC without on-demand
	 * paging, completion clock (hca_core_clock 0: ibv_create_cq_ex refuses timestamps),
	 * TSO, RSS, packet pacing, raw packets, tag matching, CQ moderation or device memory:
	 * the device flags and the port count.
	 */
	a.device_cap_flags_ex = (uint64_t)(unsigned int)a.orig_attr.device_cap_flags;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

static int
port_attr(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a)
{
	struct wn_ctl_port_attr w;
	int ret = wn_client_query_port(wn_cl_of(ctx), port, &w);

	if (ret != 0)
		return -ret;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)w.state;
	a->max_mtu = (enum ibv_mtu)w.max_mtu;
	a->active_mtu = (enum ibv_mtu)w.active_mtu;
	a->gid_tbl_len = (int)w.n_gids;
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_DEVICE_MGMT_SUP;
	a->max_msg_sz = w.max_msg_sz;
	a->pkey_tbl_len = 1;
	a->active_width = 2;  /* 4x */
	a->active_speed = 32; /* 10 Gb/s lane (FDR10 encoding): 40 Gb/s at 4x */
	a->phys_state = 5;    /* LinkUp */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

static int
vq_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	struct ibv_port_attr full;
	int ret = port_attr(ctx, port, &full);

	if (ret == 0)
		memcpy(a, &full, len < sizeof(full) ? len : sizeof(full));
	return ret;
}

/* IBVERBS_1.1 compat entry: the layout before 'flags' was added is 48 octets. */
int
(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	return vq_query_port(ctx, port, (struct ibv_port_attr *)attr,
			     offsetof(struct ibv_port_attr, flags));
}

int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	struct wn_ctl_port_attr w;
	int ret = wn_client_query_port(wn_cl_of(ctx), port, &w);

	if (ret != 0) {
		errno = -ret;
		return -1;
	}
	if (index < 0 || (uint32_t)index >= w.n_gids) {
		errno = EINVAL;
		return -1;
	}
	memcpy(gid->raw, w.gid[index], 16);
	return 0;
}

WN_VERBS_EXPORT int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;

	if (flags != 0 || port > 255 || index > INT32_MAX)
		return EINVAL;
	memset(&e, 0, sizeof(e));
	if (ibv_query_gid(ctx, (uint8_t)port, (int)index, &e.gid) != 0)
		return errno;
	e.gid_index = index;
	e.port_num = port;
	e.gid_type = IBV_GID_TYPE_IB; /* iWARP GIDs are plain addresses */
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

WN_VERBS_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, size_t max,
		     uint32_t flags, size_t entry_size)
{
	struct wn_ctl_port_attr w;
	size_t i;
	int ret;

	if (flags != 0 || entries == NULL || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	ret = wn_client_query_port(wn_cl_of(ctx), 1, &w);
	if (ret != 0)
		return ret;
	if (w.n_gids > max)
		return -EINVAL; /* as the kernel: the table does not fit */
	for (i = 0; i < w.n_gids && i < max; i++)
		_ibv_query_gid_ex(ctx, 1, (uint32_t)i,
				  (struct ibv_gid_entry *)((char *)entries + i * entry_size), 0,
				  entry_size);
	return (ssize_t)i;
}

/* IBVERBS_PRIVATE_34 (ibv_devinfo): 0 = IBV_GID_TYPE_SYSFS_IB_ROCE_V1 ("IB/RoCE v1"). */
WN_VERBS_EXPORT int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type)
{
	union ibv_gid g;

	if (ibv_query_gid(ctx, port, (int)index, &g) != 0)
		return -1;
	*type = 0;
	return 0;
}

int
ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	(void)ctx;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = 0xffff;
	return 0;
}

WN_VERBS_EXPORT int
ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	(void)ctx;
	return (port == 1 && pkey == 0xffff) ? 0 : -1;
}

/* ------------------------------------------------------------------ PD / MR */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	struct wn_vpd *p = calloc(1, sizeof(*p));
	int ret;

	if (p == NULL)
		return NULL;
	ret = wn_client_alloc_pd(wn_cl_of(ctx), &p->pd.handle);
	if (ret != 0) {
		free(p);
		errno = -ret;
		return NULL;
	}
	p->pd.context = ctx;
	return &p->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct wn_vpd *p = (struct wn_vpd *)pd;
	int ret;

	if (p->base != NULL) { /* a parent domain: the PD it refers to stays */
		pthread_mutex_lock(&pd->context->mutex);
		p->base->parents--;
		pthread_mutex_unlock(&pd->context->mutex);
		free(p);
		return 0;
	}
	if (p->parents != 0)
		return EBUSY;
	ret = wn_client_dealloc_pd(wn_cl_of(pd->context), pd->handle);
	if (ret != 0)
		return -ret;
	free(p);
	return 0;
}

/*
 * A parent domain: a PD for creating QPs, CQs and MRs that stands for @p attr->pd. Its
 * allocators are accepted and never called: this device's queues are rings warpnicd shares
 * with the program, not memory the program provides (a provider uses the allocators for
 * the buffers it allocates, and allocates none). No thread domains (ibv_alloc_td: none).
 */
static struct ibv_pd *
vq_alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{
	struct wn_vpd *base = (struct wn_vpd *)attr->pd, *p;

	if ((attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) != 0 ||
	    attr->td != NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (base == NULL || base->pd.context != ctx || base->base != NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->pd.context = ctx;
	p->pd.handle = base->pd.handle;
	p->base = base;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = attr->pd_context;
	pthread_mutex_lock(&ctx->mutex);
	base->parents++;
	pthread_mutex_unlock(&ctx->mutex);
	return &p->pd;
}

/* Optional access bits (IBV_ACCESS_RELAXED_ORDERING and friends) are hints: drop them. */
static uint32_t
access_from(int access, int *bad)
{
	uint32_t a = 0;

	*bad = 0;
	if (access & IBV_ACCESS_LOCAL_WRITE)
		a |= WN_CTL_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		a |= WN_CTL_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		a |= WN_CTL_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		a |= WN_CTL_ACCESS_REMOTE_ATOMIC;
	if (access & IBV_ACCESS_MW_BIND)
		a |= WN_CTL_ACCESS_MW_BIND;
	/* IBV_ACCESS_HUGETLB says hugepages back it: they are welcome, and found anyway */
	if (access & (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND))
		*bad = 1;
	return a;
}

/* The ibv_mr of lib/client's @p wmr (NULL: the registration failed, errno set). */
static struct ibv_mr *
vmr_wrap(struct ibv_pd *pd, struct wn_client_mr *wmr, void *addr, size_t length, bool frmr)
{
	struct wn_vmr *m;

	if (wmr == NULL)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		wn_client_dereg_mr(wn_cl_of(pd->context), wmr);
		errno = ENOMEM;
		return NULL;
	}
	m->wmr = wmr;
	m->frmr = frmr;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = wmr->handle;
	m->mr.lkey = wmr->lkey;
	m->mr.rkey = wmr->rkey;
	return &m->mr;
}

WN_VERBS_EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	uint32_t a;
	int bad;

	a = access_from((int)access, &bad);
	if (bad) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return vmr_wrap(pd, wn_client_reg_mr(wn_cl_of(pd->context), pd->handle, addr, length,
					     iova, a),
			addr, length, false);
}

WN_VERBS_EXPORT struct ibv_mr *
wnv_alloc_frmr(struct ibv_pd *pd, void *addr, size_t length)
{
	return vmr_wrap(pd, wn_client_alloc_frmr(wn_cl_of(pd->context), pd->handle, addr, length),
			addr, length, true);
}

struct ibv_mr *
(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

WN_VERBS_EXPORT struct ibv_mr *
(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

/*
 * As libibverbs checks the arguments (IBV_REREG_MR_ERR_INPUT) and a provider changes the MR
 * (IBV_REREG_MR_ERR_CMD, errno set, the MR as it was): registered anew with what changes,
 * the new registration takes the old one's keys (as mlx5 keeps them), the old one goes.
 */
WN_VERBS_EXPORT int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	struct wn_vmr *m = (struct wn_vmr *)mr;
	uint32_t a = 0;
	int bad = 0, ret;

	if (m->frmr || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) != 0 ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (length == 0 || addr == NULL)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (pd == NULL || pd->context != mr->context))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags == 0)
		return 0;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		a = access_from(access, &bad);
		if (bad) {
			errno = EOPNOTSUPP;
			return IBV_REREG_MR_ERR_CMD;
		}
	}
	ret = wn_client_rereg_mr(wn_cl_of(mr->context), m->wmr, (uint32_t)flags,
				 (flags & IBV_REREG_MR_CHANGE_PD) ? pd->handle : 0, addr, length, a);
	if (ret != 0) {
		errno = -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	mr->handle = m->wmr->handle;
	mr->lkey = m->wmr->lkey;
	mr->rkey = m->wmr->rkey;
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	return 0;
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct wn_vmr *m = (struct wn_vmr *)mr;
	int ret = wn_client_dereg_mr(wn_cl_of(mr->context), m->wmr);

	if (ret != 0)
		return -ret;
	free(m);
	return 0;
}

/* ------------------------------------------------------------------ memory windows */

static struct ibv_mw *
vq_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw;
	uint32_t h, rkey;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return NULL;
	ret = wn_client_alloc_mw(wn_cl_of(pd->context), pd->handle, (uint32_t)type, &h, &rkey);
	if (ret != 0) {
		free(mw);
		errno = -ret;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = rkey;
	mw->handle = h;
	mw->type = type;
	return mw;
}

static int
vq_dealloc_mw(struct ibv_mw *mw)
{
	int ret = wn_client_dealloc_mw(wn_cl_of(mw->context), mw->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return -ret;
	free(mw);
	return 0;
}

/* Ranges the program keeps from a child itself, in ibv_fork_init()'s madvise mode. */
WN_VERBS_EXPORT int
ibv_dontfork_range(void *base, size_t size)
{
	return wn_client_fork_range(base, size, true) == 0 ? 0 : -1;
}

WN_VERBS_EXPORT int
ibv_dofork_range(void *base, size_t size)
{
	return wn_client_fork_range(base, size, false) == 0 ? 0 : -1;
}

/*
 * As rdma-core on a kernel that copies pinned pages on fork (what warpnic's child gets,
 * ibv_is_fork_initialized() UNNEEDED): nothing to do, unless RDMAV_USE_MADVISE asks for the
 * old way, MADV_DONTFORK on every registered page (EINVAL once an MR was registered).
 */
WN_VERBS_EXPORT int
ibv_fork_init(void)
{
	if (!env_on("RDMAV_USE_MADVISE"))
		return 0;
	return -wn_client_fork_madvise();
}

/* ------------------------------------------------------------------ channels and CQs */

static pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wn_vchannel *live_chans;

static bool
chan_live(const struct wn_vchannel *c)
{
	const struct wn_vchannel *l;

	pthread_mutex_lock(&chan_lock);
	for (l = live_chans; l != NULL && l != c; l = l->next)
		;
	pthread_mutex_unlock(&chan_lock);
	return l != NULL;
}

/*
 * The completion channels rdma_create_qp makes for an id (two per connection, for
 * rdma_verbs.h's rdma_get_send_comp/rdma_get_recv_comp) share one pipe per device context:
 * a process with tens of thousands of connections would otherwise need four descriptors
 * per connection here and one per CQ in warpnicd. A reader takes the next cookie from the
 * pipe; one for another channel's CQ goes to that channel's queue and its reader is woken.
 * The live CQs on the pipe are kept in a tree, so a cookie of a CQ destroyed meanwhile is
 * dropped rather than followed.
 */
struct wn_vshare {
	int rfd, wfd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool reading;          /* a thread is in read() on rfd */
	void *cqs;             /* tsearch() tree of the live CQs on the pipe */
};

static int
ptr_cmp(const void *a, const void *b)
{
	return a < b ? -1 : a > b;
}

static void
share_cq_add(struct wn_vshare *sh, struct ibv_cq *cq)
{
	pthread_mutex_lock(&sh->lock);
	(void)tsearch(cq, &sh->cqs, ptr_cmp);
	pthread_mutex_unlock(&sh->lock);
}

static void
share_cq_gone(struct wn_vshare *sh, struct ibv_cq *cq)
{
	pthread_mutex_lock(&sh->lock);
	(void)tdelete(cq, &sh->cqs, ptr_cmp);
	pthread_mutex_unlock(&sh->lock);
}

static struct wn_vchannel *
chan_new(struct ibv_context *ctx, int rfd, int wfd, struct wn_vshare *sh)
{
	struct wn_vchannel *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ch.context = ctx;
	c->ch.fd = rfd;
	c->ch.refcnt = 0;
	c->wfd = wfd;
	c->share = sh;
	pthread_mutex_lock(&chan_lock);
	LIVE_INSERT(live_chans, c);
	pthread_mutex_unlock(&chan_lock);
	return c;
}

WN_VERBS_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct wn_vchannel *c;
	int p[2];

	/* a pipe: warpnicd writes 8-octet CQ cookies, read() blocks and is a cancel point */
	if (pipe2(p, O_CLOEXEC) != 0)
		return NULL;
	c = chan_new(ctx, p[0], p[1], NULL);
	if (c == NULL) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	return &c->ch;
}

/* A channel on the context's shared pipe (rdma_create_qp's CQs). */
WN_VERBS_EXPORT struct ibv_comp_channel *
wn_verbs_comp_channel_shared(struct ibv_context *ctx)
{
	struct wn_vctx *v = wn_vctx_of(ctx);
	struct wn_vshare *sh;
	struct wn_vchannel *c;
	int p[2];

	pthread_mutex_lock(&ctx->mutex);
	sh = v->share;
	if (sh == NULL && pipe2(p, O_CLOEXEC) == 0) {
		sh = calloc(1, sizeof(*sh));
		if (sh == NULL) {
			close(p[0]);
			close(p[1]);
		} else {
			sh->rfd = p[0];
			sh->wfd = p[1];
			pthread_mutex_init(&sh->lock, NULL);
			pthread_cond_init(&sh->cond, NULL);
			v->share = sh;
		}
	}
	pthread_mutex_unlock(&ctx->mutex);
	if (sh == NULL)
		return NULL;
	c = chan_new(ctx, sh->rfd, sh->wfd, sh);
	return c != NULL ? &c->ch : NULL;
}

static void
free_nothing(void *p)
{
	(void)p;
}

/* Free the context's shared pipe (its channels and CQs are gone). */
static void
share_free(struct wn_vshare *sh)
{
	if (sh == NULL)
		return;
	close(sh->rfd);
	close(sh->wfd);
	tdestroy(sh->cqs, free_nothing);
	pthread_mutex_destroy(&sh->lock);
	pthread_cond_destroy(&sh->cond);
	free(sh);
}

WN_VERBS_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct wn_vchannel *c = (struct wn_vchannel *)ch;

	if (ch->refcnt != 0)
		return EBUSY;
	/* unlink before the write side closes: a reader woken by EOF must see it gone */
	pthread_mutex_lock(&chan_lock);
	LIVE_REMOVE(c);
	pthread_mutex_unlock(&chan_lock);
	if (c->share == NULL) {
		close(ch->fd);
		close(c->wfd);
	}
	free(c->q);
	free(c);
	return 0;
}

/* Keep @p cookie for shared channel @p c's reader. @return 0 or -1 (ENOMEM). */
static int
chan_push(struct wn_vchannel *c, uint64_t cookie)
{
	uint64_t *nq;
	uint32_t ncap, i;

	if (c->qlen == c->qcap) {
		ncap = c->qcap == 0 ? 16 : 2 * c->qcap;
		nq = malloc(ncap * sizeof(*nq));
		if (nq == NULL)
			return -1;
		for (i = 0; i < c->qlen; i++)
			nq[i] = c->q[(c->qhead + i) % c->qcap];
		free(c->q);
		c->q = nq;
		c->qhead = 0;
		c->qcap = ncap;
	}
	c->q[(c->qhead + c->qlen) % c->qcap] = cookie;
	c->qlen++;
	return 0;
}

static void
share_read_cancelled(void *arg)
{
	struct wn_vshare *sh = arg;

	pthread_mutex_lock(&sh->lock);
	sh->reading = false;
	pthread_cond_broadcast(&sh->cond);
	pthread_mutex_unlock(&sh->lock);
}

/* ibv_get_cq_event on a shared channel: its own queue first, else read for everyone. */
static int
share_get_event(struct wn_vchannel *c, uint64_t *cookie)
{
	struct wn_vshare *sh = c->share;
	struct wn_vchannel *to;
	struct ibv_cq *cq;
	ssize_t n;
	int err;

	pthread_mutex_lock(&sh->lock);
	for (;;) {
		if (c->qlen > 0) {
			*cookie = c->q[c->qhead];
			c->qhead = (c->qhead + 1) % c->qcap;
			c->qlen--;
			pthread_mutex_unlock(&sh->lock);
			return 0;
		}
		if (sh->reading) {
			pthread_cond_wait(&sh->cond, &sh->lock);
			continue;
		}
		sh->reading = true;
		pthread_mutex_unlock(&sh->lock);
		pthread_cleanup_push(share_read_cancelled, sh);
		n = read(sh->rfd, cookie, sizeof(*cookie));
		pthread_cleanup_pop(0);
		err = errno;
		pthread_mutex_lock(&sh->lock);
		sh->reading = false;
		pthread_cond_broadcast(&sh->cond);
		if (n != (ssize_t)sizeof(*cookie)) {
			pthread_mutex_unlock(&sh->lock);
			errno = n < 0 ? err : EIO;
			return -1;
		}
		cq = (struct ibv_cq *)(uintptr_t)*cookie;
		if (tfind(cq, &sh->cqs, ptr_cmp) == NULL)
			continue; /* its CQ was destroyed meanwhile */
		to = (struct wn_vchannel *)cq->channel;
		if (to == c) {
			pthread_mutex_unlock(&sh->lock);
			return 0;
		}
		if (to != NULL && chan_push(to, *cookie) != 0) {
			pthread_mutex_unlock(&sh->lock);
			errno = ENOMEM;
			return -1;
		}
	}
}

static struct wn_vcq *
create_cq(struct ibv_context *ctx, const struct ibv_cq_init_attr_ex *a)
{
	struct ibv_comp_channel *channel = a->channel;
	struct wn_vcq *c;

	if (a->cqe == 0 || a->cqe > INT32_MAX || a->comp_vector >= (uint32_t)ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->wcq = wn_client_create_cq(wn_cl_of(ctx), a->cqe,
				     channel != NULL ? ((struct wn_vchannel *)channel)->wfd : -1,
				     (uintptr_t)&c->cq);
	if (c->wcq == NULL) {
		int err = errno;

		free(c);
		errno = err;
		return NULL;
	}
	c->cq.context = ctx;
	c->cq.channel = channel;
	c->cq.cq_context = a->cq_context;
	c->cq.handle = c->wcq->handle;
	c->cq.cqe = (int)c->wcq->depth;
	pthread_mutex_init(&c->cq.mutex, NULL);
	pthread_cond_init(&c->cq.cond, NULL);
	pthread_mutex_lock(&qp_lock);
	LIVE_INSERT(live_cqs, c);
	pthread_mutex_unlock(&qp_lock);
	if (channel != NULL) {
		pthread_mutex_lock(&ctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
		if (((struct wn_vchannel *)channel)->share != NULL)
			share_cq_add(((struct wn_vchannel *)channel)->share, &c->cq);
	}
	return c;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex a = {.cqe = cqe > 0 ? (uint32_t)cqe : 0,
					.cq_context = cq_context, .channel = channel,
					.comp_vector = comp_vector >= 0 ? (uint32_t)comp_vector :
									  UINT32_MAX};
	struct wn_vcq *c = create_cq(ctx, &a);

	return c != NULL ? &c->cq : NULL;
}

static struct ibv_cq_ex *
vq_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	struct wn_vcq *c;
	int ret = wn_verbs_cqx_check(a);

	if (ret != 0) {
		errno = ret;
		return NULL;
	}
	c = create_cq(ctx, a);
	if (c == NULL)
		return NULL;
	wn_verbs_cqx_init(c, a->wc_flags);
	return &c->cqx;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct wn_vcq *c = (struct wn_vcq *)cq;
	struct ibv_comp_channel *ch = cq->channel;
	int ret = wn_client_destroy_cq(wn_cl_of(cq->context), c->wcq);

	if (ret != 0)
		return -ret;
	pthread_mutex_lock(&qp_lock);
	LIVE_REMOVE(c);
	pthread_mutex_unlock(&qp_lock);
	if (ch != NULL && ((struct wn_vchannel *)ch)->share != NULL)
		share_cq_gone(((struct wn_vchannel *)ch)->share, cq);
	if (ch != NULL) {
		pthread_mutex_lock(&cq->context->mutex);
		ch->refcnt--;
		pthread_mutex_unlock(&cq->context->mutex);
	}
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	free(c);
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	uint64_t cookie;
	ssize_t n;

	if (((struct wn_vchannel *)ch)->share != NULL) {
		if (share_get_event((struct wn_vchannel *)ch, &cookie) != 0)
			return -1;
		*cq = (struct ibv_cq *)(uintptr_t)cookie;
		*cq_context = (*cq)->cq_context;
		return 0;
	}
	/* read(): blocking and a pthread cancellation point (rping cancels its CQ thread) */
	n = read(ch->fd, &cookie, sizeof(cookie));
	/*
	 * EOF: every write side is closed, so the channel was destroyed under this reader.
	 * With the kernel's uverbs the read() on the closed fd never returns; stay blocked
	 * likewise (still cancellable) rather than report an error the program never expects.
	 */
	if (n == 0 && !chan_live((struct wn_vchannel *)ch))
		for (;;)
			pause();
	if (n != (ssize_t)sizeof(cookie))
		return -1;
	*cq = (struct ibv_cq *)(uintptr_t)cookie;
	*cq_context = (*cq)->cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/*
 * Completions @p cq holds or will get for work already under way: those in its ring and the
 * Sends posted to its QPs that warpnicd has not taken yet (each completes into it, signaled
 * or in error; its receives may never complete and are not counted).
 */
static uint64_t
cq_pending(struct ibv_cq *cq)
{
	struct wn_vcq *c = (struct wn_vcq *)cq;
	const struct wn_queue_ring_hdr *h = c->wcq->cqr.hdr;
	uint64_t n;
	struct wn_vqp *q;

	n = (uint32_t)(atomic_load_explicit(&h->prod, memory_order_acquire) -
		       atomic_load_explicit(&h->cons, memory_order_acquire));
	pthread_mutex_lock(&qp_lock);
	for (q = live_qps; q != NULL; q = q->next) {
		const struct wn_queue_ring_hdr *sq = q->wqp->sq.hdr;

		if (q->qp.send_cq == cq)
			n += (uint32_t)(atomic_load_explicit(&sq->prod, memory_order_acquire) -
					atomic_load_explicit(&sq->cons, memory_order_acquire));
	}
	pthread_mutex_unlock(&qp_lock);
	return n;
}

/*
 * The ring is warpnicd's and keeps its size: a CQ is not grown (EOPNOTSUPP) and "shrinks"
 * by promising no more; never below what it holds or will get (EINVAL, the verbs rule).
 */
int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (cqe <= 0)
		return EINVAL;
	if (cqe > cq->cqe)
		return EOPNOTSUPP;
	return (uint64_t)cqe < cq_pending(cq) ? EINVAL : 0;
}

/* ------------------------------------------------------------------ SRQ */

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct wn_vsrq *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->wsrq = wn_client_create_srq(wn_cl_of(pd->context), pd->handle, attr->attr.max_wr,
				       attr->attr.max_sge, attr->attr.srq_limit);
	if (s->wsrq == NULL) {
		int err = errno;

		free(s);
		errno = err;
		return NULL;
	}
	s->srq.context = pd->context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = s->wsrq->handle;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	attr->attr.max_wr = s->wsrq->depth;
	attr->attr.max_sge = s->wsrq->max_sge;
	pthread_mutex_lock(&qp_lock);
	s->next = live_srqs;
	live_srqs = s;
	pthread_mutex_unlock(&qp_lock);
	return &s->srq;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct wn_ctl_modify_srq_req r = {.srq = srq->handle, .mask = (uint32_t)mask & 3u,
					  .max_wr = attr->max_wr, .srq_limit = attr->srq_limit};

	return -wn_client_call(wn_cl_of(srq->context), WN_CTL_MODIFY_SRQ, &r, NULL, 0, NULL,
			       NULL);
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct wn_vsrq *s = (struct wn_vsrq *)srq;

	memset(attr, 0, sizeof(*attr));
	attr->max_wr = s->wsrq->depth;
	attr->max_sge = s->wsrq->max_sge;
	/* armed limit, 0 once the event fired (the dataplane disarms it) */
	attr->srq_limit = atomic_load_explicit(&s->wsrq->rq.hdr->srq_limit, memory_order_acquire);
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct wn_vsrq *s = (struct wn_vsrq *)srq;
	int ret = wn_client_destroy_srq(wn_cl_of(srq->context), s->wsrq);

	if (ret != 0)
		return -ret;
	pthread_mutex_lock(&qp_lock);
	for (struct wn_vsrq **pp = &live_srqs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&qp_lock);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}

/* ------------------------------------------------------------------ QP */

/*
 * An RC or UD QP from the extended attributes (ibv_create_qp and ibv_create_qp_ex). UD QPs
 * are a warpnic extension (datagrams over UDP between warpnic instances). What the device
 * has no use for is refused as a provider without it refuses it: other QP types, XRC,
 * receive hashing, TSO and any create flag (EOPNOTSUPP).
 */
static struct ibv_qp *
create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	bool ud = attr->qp_type == IBV_QPT_UD;
	struct wn_ctl_create_qp_req r;
	struct wn_vqp *q;

	if ((attr->qp_type != IBV_QPT_RC && !ud) || (attr->comp_mask & ~known) != 0 ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~(ud ? WN_VERBS_QPX_UD_OPS : WN_VERBS_QPX_OPS)) != 0)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (pd == NULL || attr->send_cq == NULL || attr->recv_cq == NULL) {
		errno = EINVAL;
		return NULL;
	}
	memset(&r, 0, sizeof(r));
	r.pd = pd->handle;
	r.send_cq = attr->send_cq->handle;
	r.recv_cq = attr->recv_cq->handle;
	r.srq = attr->srq != NULL ? attr->srq->handle : 0;
	r.qp_type = ud ? WN_CTL_QPT_UD : WN_CTL_QPT_RC;
	r.sq_sig_all = attr->sq_sig_all ? 1 : 0;
	/*
	 * A queue of 0 work requests (qperf's one-way tests: a sender without receives, a
	 * receiver without sends) is granted as the smallest ring, as iWARP hardware (cxgb4)
	 * does; siw refuses an empty SQ (EINVAL), which made those tests fail on it.
	 */
	r.max_send_wr = attr->cap.max_send_wr != 0 ? attr->cap.max_send_wr : 1;
	r.max_recv_wr = attr->cap.max_recv_wr != 0 || attr->srq != NULL ?
				attr->cap.max_recv_wr : 1;
	r.max_send_sge = attr->cap.max_send_sge;
	r.max_recv_sge = attr->cap.max_recv_sge;
	r.max_inline_data = attr->cap.max_inline_data;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	r.cookie = (uintptr_t)q;
	q->wqp = wn_client_create_qp(wn_cl_of(pd->context), &r);
	if (q->wqp == NULL) {
		int err = errno;

		free(q);
		errno = err;
		return NULL;
	}
	q->qp.context = pd->context;
	q->qp.qp_context = attr->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = attr->send_cq;
	q->qp.recv_cq = attr->recv_cq;
	q->qp.srq = attr->srq;
	q->qp.handle = q->wqp->handle;
	q->qp.qp_num = q->wqp->qpn;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = attr->qp_type;
	q->ud = ud;
	q->sq_sig_all = r.sq_sig_all;
	q->max_inline = q->wqp->max_inline;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		wn_verbs_qpx_init(q);
	attr->cap.max_send_wr = q->wqp->sq_depth;
	attr->cap.max_recv_wr = q->wqp->rq_depth;
	attr->cap.max_send_sge = q->wqp->max_send_sge;
	attr->cap.max_recv_sge = q->wqp->max_recv_sge;
	attr->cap.max_inline_data = q->wqp->max_inline;
	pthread_mutex_lock(&qp_lock);
	LIVE_INSERT(live_qps, q);
	pthread_mutex_unlock(&qp_lock);
	return &q->qp;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;

	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, attr, sizeof(*attr));
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	qp = create_qp(pd, &ax);
	if (qp != NULL)
		attr->cap = ax.cap;
	return qp;
}

static struct ibv_qp *
vq_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL ||
	    attr->pd->context != ctx) {
		errno = attr->comp_mask & IBV_QP_INIT_ATTR_XRCD ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return create_qp(attr->pd, attr);
}

WN_VERBS_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;

	return q->ex ? &q->qpx : NULL;
}

static uint32_t
access_to_wn(int a)
{
	int bad;

	return access_from(a, &bad);
}

static int
wn_access_to_ibv(uint32_t a)
{
	return ((a & WN_CTL_ACCESS_LOCAL_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       ((a & WN_CTL_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       ((a & WN_CTL_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
	       ((a & WN_CTL_ACCESS_REMOTE_ATOMIC) ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

/* The InfiniBand path attributes of @p mask (IBV_QP_* values are WN_CTL_QP_*'s). */
static void
path_to_wn(const struct ibv_qp_attr *a, int mask, struct wn_ctl_modify_qp_req *r)
{
	const int path = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
			 IBV_QP_DEST_QPN;
	struct wn_ctl_qp_path *p = &r->path;

	r->mask |= (uint32_t)(mask & path);
	if (mask & IBV_QP_AV) {
		memcpy(p->dgid, a->ah_attr.grh.dgid.raw, sizeof(p->dgid));
		p->is_global = a->ah_attr.is_global ? 1 : 0;
		p->sgid_index = a->ah_attr.grh.sgid_index;
	}
	p->dest_qp_num = a->dest_qp_num;
	p->rq_psn = a->rq_psn;
	p->sq_psn = a->sq_psn;
	p->path_mtu = (uint8_t)a->path_mtu;
	p->timeout = a->timeout;
	p->retry_cnt = a->retry_cnt;
	p->rnr_retry = a->rnr_retry;
	p->min_rnr_timer = a->min_rnr_timer;
}

/*
 * A UD QP's modify: the attributes a UD QP has (IBTA 11.2.1.2: state, P_Key index, port,
 * Q_Key, SQ PSN; the current state and SQD notification are accepted and have no effect);
 * any other is EINVAL, as the kernel's ib_modify_qp_is_ok() answers. warpnicd checks which
 * each transition requires.
 */
static int
modify_ud_qp(struct wn_vqp *q, struct ibv_qp_attr *attr, int mask)
{
	const int ud = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_QKEY | IBV_QP_SQ_PSN | IBV_QP_EN_SQD_ASYNC_NOTIFY;
	struct wn_ctl_modify_qp_req r;
	struct wn_ctl_qp_attr out;
	int ret;

	if ((mask & ~ud) != 0 || ((mask & IBV_QP_SQ_PSN) && attr->sq_psn > 0xffffff))
		return EINVAL;
	memset(&r, 0, sizeof(r));
	if (mask & IBV_QP_STATE) {
		r.mask |= WN_CTL_QP_STATE;
		r.qp_state = attr->qp_state;
	}
	if (mask & IBV_QP_PKEY_INDEX) {
		r.mask |= WN_CTL_QP_PKEY_INDEX;
		r.ud.pkey_index = attr->pkey_index;
	}
	if (mask & IBV_QP_PORT) {
		r.mask |= WN_CTL_QP_PORT;
		r.ud.port_num = attr->port_num;
	}
	if (mask & IBV_QP_QKEY) {
		r.mask |= WN_CTL_QP_QKEY;
		r.ud.qkey = attr->qkey;
	}
	if (mask & IBV_QP_SQ_PSN) {
		r.mask |= WN_CTL_QP_SQ_PSN;
		r.ud.sq_psn = attr->sq_psn;
	}
	ret = wn_client_modify_qp(wn_cl_of(q->qp.context), q->wqp, &r, &out);
	if (ret != 0)
		return -ret;
	q->qp.state = (enum ibv_qp_state)out.qp_state;
	return 0;
}

/*
 * Completions of @p qp not yet polled go, as mlx4's and mlx5's destroy_qp and modify_qp to
 * RESET clean them: programs written for those (libfabric 1.17's rxm closes a connection's
 * QP, then drains the CQ and reposts a receive to the QP for each receive it finds;
 * rdma-core's tests restart a QP from ERR through RESET and poll on) must not see a QP that
 * no longer exists, or a restarted QP's flushed work.
 */
static void
qp_cq_clean(struct ibv_qp *qp)
{
	(void)wn_client_cq_clean(((struct wn_vcq *)qp->send_cq)->wcq, qp->qp_num);
	if (qp->recv_cq != qp->send_cq)
		(void)wn_client_cq_clean(((struct wn_vcq *)qp->recv_cq)->wcq, qp->qp_num);
}

static int
modify_rc_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	struct wn_ctl_modify_qp_req r;
	struct wn_ctl_qp_attr out;
	int ret;

	memset(&r, 0, sizeof(r));
	/*
	 * An iWARP QP reaches RTS on a connection (LLP stream): the CM's, or the one warpnicd
	 * makes for a QP moved to RTR with the peer's address (GID) and QP number, as InfiniBand
	 * connects one (wn_cm.h). Without either, the move to RTS fails with EINVAL, as on siw
	 * ("no socket"), which has no such connections.
	 */
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTS && !q->cm_bound &&
	    !q->ib_path && qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return EINVAL;
	/*
	 * A QP its connection has moved to RTS stays there when the program then walks it
	 * through INIT, RTR and RTS itself (rping -q does, with rdma_init_qp_attr()): siw
	 * ignores those moves, its other attributes still apply.
	 */
	if ((mask & IBV_QP_STATE) && q->cm_bound &&
	    (attr->qp_state == IBV_QPS_INIT || attr->qp_state == IBV_QPS_RTR ||
	     attr->qp_state == IBV_QPS_RTS) &&
	    wn_client_query_qp(wn_cl_of(qp->context), q->wqp, &out) == 0 &&
	    (out.qp_state == WN_CTL_QPS_RTS || out.qp_state == WN_CTL_QPS_SQD))
		mask &= ~IBV_QP_STATE;
	if ((mask & IBV_QP_TIMEOUT) && attr->timeout > 31)
		return EINVAL; /* 5 bits (IBTA 9.7.6.1.3) */
	if (mask & IBV_QP_STATE) {
		r.mask |= WN_CTL_QP_STATE;
		r.qp_state = attr->qp_state;
	}
	if (mask & IBV_QP_ACCESS_FLAGS) {
		r.mask |= WN_CTL_QP_ACCESS_FLAGS;
		r.access = access_to_wn(attr->qp_access_flags);
	}
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
		r.mask |= WN_CTL_QP_MAX_QP_RD_ATOMIC;
		r.max_rd_atomic = attr->max_rd_atomic;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
		r.mask |= WN_CTL_QP_MAX_DEST_RD_ATOMIC;
		r.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	/* the pkey and the port have no iWARP meaning; the path attributes are kept */
	path_to_wn(attr, mask, &r);
	ret = wn_client_modify_qp(wn_cl_of(qp->context), q->wqp, &r, &out);
	if (ret != 0)
		return -ret;
	qp->state = (enum ibv_qp_state)out.qp_state;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTR &&
	    (mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) == (IBV_QP_AV | IBV_QP_DEST_QPN) &&
	    !q->cm_bound)
		q->ib_path = true;
	else if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET)
		q->ib_path = false;
	return 0;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	int ret = q->ud ? modify_ud_qp(q, attr, mask) : modify_rc_qp(qp, attr, mask);

	if (ret == 0 && (mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET &&
	    qp->send_cq != NULL)
		qp_cq_clean(qp);
	return ret;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	struct wn_ctl_qp_attr a;
	int ret;

	(void)mask;
	ret = wn_client_query_qp(wn_cl_of(qp->context), q->wqp, &a);
	if (ret != 0)
		return -ret;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)a.qp_state;
	/*
	 * An iWARP QP that has no connection yet is idle whether it was moved to INIT or not:
	 * siw keeps RESET and INIT as one state (IDLE) and reports it as INIT, which is what
	 * rdma-core's tests expect of an RNIC's new QP.
	 */
	if (attr->qp_state == IBV_QPS_RESET)
		attr->qp_state = IBV_QPS_INIT;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = IBV_MTU_1024;
	attr->qp_access_flags = wn_access_to_ibv(a.access);
	attr->cap.max_send_wr = a.max_send_wr;
	attr->cap.max_recv_wr = a.max_recv_wr;
	attr->cap.max_send_sge = a.max_send_sge;
	attr->cap.max_recv_sge = a.max_recv_sge;
	attr->cap.max_inline_data = a.max_inline_data;
	attr->max_rd_atomic = (uint8_t)a.max_rd_atomic;
	attr->max_dest_rd_atomic = (uint8_t)a.max_dest_rd_atomic;
	attr->port_num = 1;
	if (a.path_mask & WN_CTL_QP_PATH_MTU)
		attr->path_mtu = (enum ibv_mtu)a.path.path_mtu;
	if (a.path_mask & WN_CTL_QP_AV) {
		memcpy(attr->ah_attr.grh.dgid.raw, a.path.dgid, 16);
		attr->ah_attr.grh.sgid_index = a.path.sgid_index;
		attr->ah_attr.is_global = a.path.is_global;
		attr->ah_attr.port_num = 1;
	}
	attr->dest_qp_num = a.path.dest_qp_num;
	attr->rq_psn = a.path.rq_psn;
	attr->sq_psn = a.path.sq_psn;
	attr->timeout = a.path.timeout;
	attr->retry_cnt = a.path.retry_cnt;
	attr->rnr_retry = a.path.rnr_retry;
	attr->min_rnr_timer = a.path.min_rnr_timer;
	qp->state = attr->qp_state;
	if (q->ud) {
		/* its own attributes; the posting checks go by the state it is really in */
		attr->qkey = a.ud.qkey;
		attr->sq_psn = a.ud.sq_psn;
		attr->pkey_index = a.ud.pkey_index;
		attr->path_mtu = 0;
		attr->qp_access_flags = 0;
		attr->max_rd_atomic = attr->max_dest_rd_atomic = 0;
		qp->state = (enum ibv_qp_state)a.qp_state;
	}
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
		init->cap = attr->cap;
		init->qp_type = qp->qp_type;
		init->sq_sig_all = (int)q->sq_sig_all;
	}
	return 0;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	int ret = wn_client_destroy_qp(wn_cl_of(qp->context), q->wqp);

	if (ret != 0)
		return -ret;
	qp_cq_clean(qp); /* its completions not yet polled go with it */
	pthread_mutex_lock(&qp_lock);
	LIVE_REMOVE(q);
	pthread_mutex_unlock(&qp_lock);
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q);
	return 0;
}

/* ------------------------------------------------------------------ address handles */

/* An IPv4-mapped IPv6 GID (::ffff:a.b.c.d): an IPv4 address (RFC 4291 §2.5.5.2). */
static bool
gid_v4(const uint8_t *g)
{
	static const uint8_t p[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g, p, sizeof(p)) == 0;
}

/*
 * An address handle for UD Sends: as on RoCE, a global route is required (no LIDs), the GID
 * at sgid_index must exist and be of the destination's family (IPv4-mapped or IPv6), and the
 * destination a unicast address (no multicast here). Nothing is resolved now: a destination
 * nobody answers for loses its datagrams, counted by warpnicd (tx_drop_neigh), as datagrams
 * to an absent host are lost.
 */
struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct wn_ctl_port_attr w;
	struct wn_vah *a;
	const uint8_t *d = attr->grh.dgid.raw;
	int ret;

	if (!attr->is_global || attr->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	ret = wn_client_query_port(wn_cl_of(pd->context), 1, &w);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	if (attr->grh.sgid_index >= w.n_gids || gid_v4(w.gid[attr->grh.sgid_index]) != gid_v4(d) ||
	    d[0] == 0xff || (gid_v4(d) && (d[12] & 0xf0) == 0xe0)) {
		errno = EINVAL;
		return NULL;
	}
	if (atomic_fetch_add(&wn_vctx_of(pd->context)->n_ah, 1) >= WN_VERBS_MAX_AH) {
		atomic_fetch_sub(&wn_vctx_of(pd->context)->n_ah, 1);
		errno = ENOMEM;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		atomic_fetch_sub(&wn_vctx_of(pd->context)->n_ah, 1);
		return NULL;
	}
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->attr = *attr;
	return &a->ah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	atomic_fetch_sub(&wn_vctx_of(ah->context)->n_ah, 1);
	free((struct wn_vah *)ah);
	return 0;
}

/* The IPv4 header sum (RFC 791 §3.1) over the 20 octets at @p h: 0 when it is right. */
static uint16_t
ip4_hdr_sum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The address handle that answers a UD receive, from its completion and GRH, as libibverbs
 * reads a RoCEv2 GRH: an IPv4 header with a good sum in its last 20 octets, else an IPv6
 * header. The destination is the sender (its address as a GID, the hop limit and traffic
 * class it came with); ours is the GID the datagram was sent to.
 */
static int
ah_attr_from_wc(struct ibv_context *ctx, uint8_t port_num, const struct ibv_wc *wc,
		const struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *g = (const uint8_t *)grh;
	struct wn_ctl_port_attr w;
	uint8_t sgid[16];
	uint32_t i;
	int ret;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0; /* no GRH, no global route (which a RoCE device then refuses) */
	memset(sgid, 0, sizeof(sgid));
	if ((g[20] >> 4) == 4 && (g[20] & 0xf) == 5 && ip4_hdr_sum(g + 20) == 0) {
		sgid[10] = sgid[11] = 0xff;
		memcpy(sgid + 12, g + 20 + 16, 4);                /* its destination: ours */
		ah_attr->grh.dgid.raw[10] = ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(ah_attr->grh.dgid.raw + 12, g + 20 + 12, 4); /* its source */
		ah_attr->grh.hop_limit = g[20 + 8];
		ah_attr->grh.traffic_class = g[20 + 1];
	} else if ((g[0] >> 4) == 6) {
		uint32_t vtc = (uint32_t)g[0] << 24 | (uint32_t)g[1] << 16 | (uint32_t)g[2] << 8 | g[3];

		memcpy(sgid, g + 24, 16);
		memcpy(ah_attr->grh.dgid.raw, g + 8, 16);
		ah_attr->grh.hop_limit = g[7];
		ah_attr->grh.traffic_class = (uint8_t)(vtc >> 20);
		ah_attr->grh.flow_label = vtc & 0xfffff;
	} else {
		return EPROTONOSUPPORT;
	}
	ret = wn_client_query_port(wn_cl_of(ctx), port_num, &w);
	if (ret != 0)
		return -ret;
	for (i = 0; i < w.n_gids && memcmp(w.gid[i], sgid, 16) != 0; i++)
		;
	if (i == w.n_gids)
		return ENOENT; /* sent to an address that is not (any longer) one of ours */
	ah_attr->is_global = 1;
	ah_attr->grh.sgid_index = (uint8_t)i;
	return 0;
}

/* @return 0, or -1 with errno (its man page's contract). */
WN_VERBS_EXPORT int
ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	int ret = ah_attr_from_wc(ctx, port_num, wc, grh, ah_attr);

	if (ret != 0) {
		errno = ret;
		return -1;
	}
	return 0;
}

WN_VERBS_EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
		      uint8_t port_num)
{
	struct ibv_ah_attr a;
	int ret = ah_attr_from_wc(pd->context, port_num, wc, grh, &a);

	if (ret != 0) {
		errno = ret;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

/* ------------------------------------------------------------------ not on this device */

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

WN_VERBS_EXPORT int
ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[6], uint16_t *vid)
{
	(void)ctx;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return EOPNOTSUPP;
}

WN_VERBS_EXPORT int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

WN_VERBS_EXPORT int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

/* ------------------------------------------------------------------ strings */

WN_VERBS_EXPORT const char *
ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {"InfiniBand channel adapter", "InfiniBand switch",
					"InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP",
					"unspecified"};

	return (t >= IBV_NODE_CA && t <= IBV_NODE_UNSPECIFIED) ? s[t - 1] : "unknown";
}

WN_VERBS_EXPORT const char *
ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = {"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
					"PORT_ACTIVE", "PORT_ACTIVE_DEFER"};

	return (unsigned int)s < 6 ? n[s] : "unknown";
}

WN_VERBS_EXPORT const char *
ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const n[] = {
		"CQ error", "local work queue catastrophic error",
		"invalid request local work queue error", "local access violation work queue error",
		"communication established", "send queue drained", "path migrated",
		"path migration request error", "local catastrophic error", "port active",
		"port error", "LID change", "P_Key change", "SM change", "SRQ catastrophic error",
		"SRQ limit reached", "last WQE reached", "client reregistration",
		"GID table change",
		"WQ fatal"};

	return (unsigned int)e < sizeof(n) / sizeof(n[0]) ? n[e] : "unknown";
}

WN_VERBS_EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status st)
{
	static const char *const n[] = {
		"success", "local length error", "local QP operation error",
		"local EE context operation error", "local protection error",
		"Work Request Flushed Error",
		"memory management operation error", "bad response error", "local access error",
		"remote invalid request error", "remote access error", "remote operation error",
		"transport retry counter exceeded", "RNR retry counter exceeded",
		"local RDD violation error", "remote invalid RD request", "aborted error",
		"invalid EE context number", "invalid EE context state", "fatal error",
		"response timeout error", "general error", "TM error", "TM rendezvous error"};

	return (unsigned int)st < sizeof(n) / sizeof(n[0]) ? n[st] : "unknown";
}

/*
 * Entry points that also have an IBVERBS_1.0 version (abi.c): exported as NAME@@IBVERBS_1.1
 * through an alias, the name itself stays hidden (libibverbs.map lists it in both nodes).
 */
WN_VERBS_DEFAULT_1_1(ibv_ack_async_event);
WN_VERBS_DEFAULT_1_1(ibv_ack_cq_events);
WN_VERBS_DEFAULT_1_1(ibv_alloc_pd);
WN_VERBS_DEFAULT_1_1(ibv_attach_mcast);
WN_VERBS_DEFAULT_1_1(ibv_close_device);
WN_VERBS_DEFAULT_1_1(ibv_create_ah);
WN_VERBS_DEFAULT_1_1(ibv_create_cq);
WN_VERBS_DEFAULT_1_1(ibv_create_qp);
WN_VERBS_DEFAULT_1_1(ibv_create_srq);
WN_VERBS_DEFAULT_1_1(ibv_dealloc_pd);
WN_VERBS_DEFAULT_1_1(ibv_dereg_mr);
WN_VERBS_DEFAULT_1_1(ibv_destroy_ah);
WN_VERBS_DEFAULT_1_1(ibv_destroy_cq);
WN_VERBS_DEFAULT_1_1(ibv_destroy_qp);
WN_VERBS_DEFAULT_1_1(ibv_destroy_srq);
WN_VERBS_DEFAULT_1_1(ibv_detach_mcast);
WN_VERBS_DEFAULT_1_1(ibv_free_device_list);
WN_VERBS_DEFAULT_1_1(ibv_get_async_event);
WN_VERBS_DEFAULT_1_1(ibv_get_cq_event);
WN_VERBS_DEFAULT_1_1(ibv_get_device_guid);
WN_VERBS_DEFAULT_1_1(ibv_get_device_list);
WN_VERBS_DEFAULT_1_1(ibv_get_device_name);
WN_VERBS_DEFAULT_1_1(ibv_modify_qp);
WN_VERBS_DEFAULT_1_1(ibv_modify_srq);
WN_VERBS_DEFAULT_1_1(ibv_open_device);
WN_VERBS_DEFAULT_1_1(ibv_query_device);
WN_VERBS_DEFAULT_1_1(ibv_query_gid);
WN_VERBS_DEFAULT_1_1(ibv_query_pkey);
WN_VERBS_DEFAULT_1_1(ibv_query_port);
WN_VERBS_DEFAULT_1_1(ibv_query_qp);
WN_VERBS_DEFAULT_1_1(ibv_query_srq);
WN_VERBS_DEFAULT_1_1(ibv_reg_mr);
WN_VERBS_DEFAULT_1_1(ibv_resize_cq);
