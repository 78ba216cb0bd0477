/* SPDX-License-Identifier: BSD-3-Clause */
/* Private objects of the libibverbs.so.1 shim: verbs objects embedding lib/client ones. */
#ifndef WN_VERBS_PRIV_H
#define WN_VERBS_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <stdbool.h>

#include <infiniband/verbs.h>

#include "wn_client.h"
#include "wn_queue.h"

#define WN_VERBS_EXPORT __attribute__((visibility("default")))

/*
 * A public entry point that libibverbs also exports in an old version (IBVERBS_1.0, abi.c):
 * the C definition keeps the name but stays hidden, and this exports an alias of it as
 * NAME@@IBVERBS_1.1, the default version, as rdma-core does (an exported plain NAME would
 * take the first node of the version script that lists it). Same translation unit as the
 * definition.
 */
#define WN_VERBS_DEFAULT_1_1(name) \
	extern __typeof(name) wn_v11_##name __attribute__((alias(#name), \
							  visibility("default"))); \
	__asm__(".symver wn_v11_" #name ", " #name "@@IBVERBS_1.1")

/* An old-ABI version of @p name defined as @p impl (abi.c). */
#define WN_VERBS_COMPAT(impl, name, node) __asm__(".symver " #impl ", " #name "@" #node)

struct wn_vdev {
	struct ibv_device dev;
	uint64_t guid; /* network order */
	char ctl_path[108];
};

struct wn_vshare;

/* Address handles a device context may hold (ibv_query_device's max_ah). */
#define WN_VERBS_MAX_AH 65536

struct wn_vctx {
	struct wn_client *cl;
	_Atomic uint32_t n_ah;     /* address handles alive */
	struct wn_vdev *vdev;
	struct wn_vshare *share; /* the channels rdma_create_qp makes share one pipe (verbs.c) */
	int async_fd;
	bool async_sock; /* async_fd is warpnicd's async event socket (else a silent eventfd) */
	struct verbs_context vctx; /* must be last: ends with struct ibv_context */
};

/* A PD, or a parent domain (ibv_alloc_parent_domain) that stands for one. */
struct wn_vpd {
	struct ibv_pd pd;
	struct wn_vpd *base; /* parent domain: the PD it refers to (its handle is base's) */
	uint32_t parents;    /* PD: parent domains referring to it */
	void *pd_context;    /* parent domain: the program's, passed to its allocators */
};

struct wn_vcq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx; /* valid when ex: ibv_create_cq_ex */
	};
	bool ex;
	struct wn_client_cq *wcq;
	struct wn_queue_cqe cur; /* the completion ibv_start_poll/ibv_next_poll took (cqx.c) */
	uint32_t polled;         /* completions taken since ibv_start_poll */
	uint32_t armed;
	struct wn_client_backoff bo; /* empty polls: yield to a dataplane lcore on this CPU */
	struct wn_vcq *next, **pprev; /* live CQs (async events) */
};

struct wn_vqp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qpx; /* valid when ex: created with send_ops_flags */
	};
	bool ex;
	struct wn_client_qp *wqp;
	/* the batch being built by ibv_wr_start .. ibv_wr_complete (qpx.c) */
	struct {
		int64_t space; /* slots free at ibv_wr_start, -1: none started */
		uint32_t n;    /* WQEs begun */
		int err;       /* first error of the batch: ibv_wr_complete returns it */
		struct wn_queue_swqe *cur;  /* the WQE its SGE or inline setter completes */
		struct wn_queue_swqe *last; /* the WQE begun last (ibv_wr_set_ud_addr's) */
	} batch;
	uint32_t sq_sig_all;
	uint32_t max_inline;
	bool cm_bound; /* given to an rdma_cm id: its connection may move it to RTS */
	bool ib_path;  /* moved to RTR with the peer's GID and QP number: warpnicd connects it */
	bool ud;       /* IBV_QPT_UD: unreliable datagrams (a warpnic extension over UDP) */
	struct wn_vqp *next, **pprev; /* live QPs */
};

/* An address handle: what a UD Send copies into its WQE (warpnicd keeps no AH object). */
struct wn_vah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

struct wn_vsrq {
	struct ibv_srq srq;
	struct wn_client_srq *wsrq;
	struct wn_vsrq *next; /* live SRQs (async events) */
};

struct wn_vmr {
	struct ibv_mr mr;
	struct wn_client_mr *wmr;
	bool frmr; /* wnv_alloc_frmr() */
};

struct wn_vchannel {
	struct ibv_comp_channel ch;
	int wfd; /* write side, passed to warpnicd for each CQ */
	struct wn_vchannel *next, **pprev; /* live channels */
	/* a channel on its context's shared pipe: CQ cookies another channel's reader took */
	struct wn_vshare *share;
	uint64_t *q;
	uint32_t qhead, qlen, qcap;
};

static inline struct wn_vctx *
wn_vctx_of(struct ibv_context *ctx)
{
	return (struct wn_vctx *)((char *)ctx - offsetof(struct wn_vctx, vctx.context));
}

static inline struct wn_client *
wn_cl_of(struct ibv_context *ctx)
{
	return wn_vctx_of(ctx)->cl;
}

/* data path (dp.c) */
int wn_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int wn_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int wn_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int wn_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
struct wn_queue_swqe;
void wn_verbs_fill_bind(struct wn_queue_swqe *w, uint32_t rkey,
			const struct ibv_mw_bind_info *b);
int wn_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int wn_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad);

/* extended QP (qpx.c): the ibv_wr_* operations an RC QP of this device offers */
#define WN_VERBS_QPX_OPS \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV)
/* ... and a UD QP: Sends, with or without immediate data */
#define WN_VERBS_QPX_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
/* a UD Send's destination from its address handle (dp.c) */
void wn_verbs_fill_ud(struct wn_queue_swqe *w, struct ibv_ah *ah, uint32_t remote_qpn,
		      uint32_t remote_qkey);
/* may a Send be posted to this QP now (EINVAL: a UD QP not in RTS or SQD) */
int wn_verbs_send_state(const struct wn_vqp *q);
void wn_verbs_qpx_init(struct wn_vqp *q);

/* extended CQ (cqx.c) */
int wn_verbs_cqx_check(const struct ibv_cq_init_attr_ex *a);
void wn_verbs_cqx_init(struct wn_vcq *c, uint64_t wc_flags);

/* @p fd is a warpnicd control socket (a context's cmd_fd) */
bool wn_verbs_is_cmd_fd(int fd);

/* shared with the rdmacm shim (same process, exported under IBVERBS_PRIVATE_WN) */
struct wn_client *wn_verbs_client(struct ibv_context *ctx);
uint32_t wn_verbs_qp_handle(struct ibv_qp *qp);
void wn_verbs_qp_cm_bind(struct ibv_qp *qp);
struct ibv_qp *wn_verbs_qp_by_num(struct ibv_context *ctx, uint32_t qpn);
struct ibv_comp_channel *wn_verbs_comp_channel_shared(struct ibv_context *ctx);

#endif /* WN_VERBS_PRIV_H */
