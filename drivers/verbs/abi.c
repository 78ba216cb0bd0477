/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of libibverbs.so.1's ABI (rdma-core 44), so that every program and library linked
 * against it loads (they are linked BIND_NOW): what a software RNIC can do is done here or in
 * verbs.c; what it cannot fails at call time with the errno libibverbs gives on Linux siw
 * (rdma-core's fallback for an operation the provider lacks is EOPNOTSUPP).
 *
 * - IBVERBS_1.0: the pre-2006 ABI (struct ibv_device_1_0 and friends). No such program is
 *   left in Debian; they see no device, and every other old entry fails with EOPNOTSUPP.
 * - IBVERBS_PRIVATE_34: the provider interface (ibv_cmd_*, verbs_register_driver_34, ...).
 *   A real provider library can be loaded (perftest links libmlx5.so.1 directly) but never
 *   gets a device here: registration is accepted and ignored, commands fail EOPNOTSUPP.
 * - Pure helpers (rate conversions, kernel ABI struct copies) are implemented.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "verbs_priv.h"

/* Prototypes of exported entries that no installed header declares. */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

/* ------------------------------------------------------------------ rates */

/* enum ibv_rate → (multiple of 2.5 Gb/s or 0: none, Mb/s); index = enum value */
static const struct {
	int mult;
	int mbps;
} rates[] = {
	[IBV_RATE_2_5_GBPS] = {1, 2500},      [IBV_RATE_5_GBPS] = {2, 5000},
	[IBV_RATE_10_GBPS] = {4, 10000},      [IBV_RATE_20_GBPS] = {8, 20000},
	[IBV_RATE_30_GBPS] = {12, 30000},     [IBV_RATE_40_GBPS] = {16, 40000},
	[IBV_RATE_60_GBPS] = {24, 60000},     [IBV_RATE_80_GBPS] = {32, 80000},
	[IBV_RATE_120_GBPS] = {48, 120000},   [IBV_RATE_14_GBPS] = {0, 14062},
	[IBV_RATE_56_GBPS] = {0, 56250},     [IBV_RATE_112_GBPS] = {0, 112500},
	[IBV_RATE_168_GBPS] = {0, 168750},   [IBV_RATE_25_GBPS] = {0, 25781},
	[IBV_RATE_100_GBPS] = {0, 103125},   [IBV_RATE_200_GBPS] = {0, 206250},
	[IBV_RATE_300_GBPS] = {0, 309375},   [IBV_RATE_28_GBPS] = {11, 28125},
	[IBV_RATE_50_GBPS] = {20, 53125},     [IBV_RATE_400_GBPS] = {160, 425000},
	[IBV_RATE_600_GBPS] = {240, 637500},  [IBV_RATE_800_GBPS] = {320, 850000},
};
#define N_RATES ((int)(sizeof(rates) / sizeof(rates[0])))

WN_VERBS_EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	return (int)rate > IBV_RATE_MAX && (int)rate < N_RATES && rates[rate].mult != 0 ?
		       rates[rate].mult : -1;
}

WN_VERBS_EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	return (int)rate > IBV_RATE_MAX && (int)rate < N_RATES && rates[rate].mbps != 0 ?
		       rates[rate].mbps : -1;
}

WN_VERBS_EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	int r;

	for (r = 1; r < N_RATES; r++)
		if (rates[r].mult != 0 && rates[r].mult == mult)
			return (enum ibv_rate)r;
	return IBV_RATE_MAX;
}

WN_VERBS_EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	int r;

	for (r = 1; r < N_RATES; r++)
		if (rates[r].mbps != 0 && rates[r].mbps == mbps)
			return (enum ibv_rate)r;
	return IBV_RATE_MAX;
}

/* ------------------------------------------------------------------ kernel ABI copies */

WN_VERBS_EXPORT void
ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

WN_VERBS_EXPORT void
ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = (enum ibv_qp_state)src->cur_qp_state;
	dst->path_mtu = (enum ibv_mtu)src->path_mtu;
	dst->path_mig_state = (enum ibv_mig_state)src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = (unsigned int)src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* The path record fields other than the two GIDs, in both directions. */
#define PATH_REC_FIELDS(d, s) \
	do { \
		(d)->dlid = (s)->dlid; \
		(d)->slid = (s)->slid; \
		(d)->raw_traffic = (s)->raw_traffic; \
		(d)->flow_label = (s)->flow_label; \
		(d)->hop_limit = (s)->hop_limit; \
		(d)->traffic_class = (s)->traffic_class; \
		(d)->reversible = (s)->reversible; \
		(d)->numb_path = (s)->numb_path; \
		(d)->pkey = (s)->pkey; \
		(d)->sl = (s)->sl; \
		(d)->mtu_selector = (s)->mtu_selector; \
		(d)->mtu = (s)->mtu; \
		(d)->rate_selector = (s)->rate_selector; \
		(d)->rate = (s)->rate; \
		(d)->packet_life_time = (s)->packet_life_time; \
		(d)->preference = (s)->preference; \
		(d)->packet_life_time_selector = (s)->packet_life_time_selector; \
	} while (0)

WN_VERBS_EXPORT void
ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid.raw));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid.raw));
	PATH_REC_FIELDS(dst, src);
}

WN_VERBS_EXPORT void
ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	PATH_REC_FIELDS(dst, src);
}

/* ------------------------------------------------------------------ public verbs siw lacks */

/* dma-buf memory (a GPU's): not reachable by a software dataplane */
WN_VERBS_EXPORT struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
		  int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * Importing another process's context: libibverbs finds the device of a uverbs command fd
 * (a character device: ENODEV here, no such device; anything else: EINVAL) and fails with
 * EOPNOTSUPP when its provider cannot import, as siw's cannot. A warpnic context's command fd
 * (its control socket, or a dup of it) is this provider's: EOPNOTSUPP.
 */
WN_VERBS_EXPORT struct ibv_context *
ibv_import_device(int cmd_fd)
{
	struct stat st;

	if (wn_verbs_is_cmd_fd(cmd_fd))
		errno = EOPNOTSUPP;
	else
		errno = (fstat(cmd_fd, &st) == 0 && S_ISCHR(st.st_mode)) ? ENODEV : EINVAL;
	return NULL;
}

WN_VERBS_EXPORT struct ibv_pd *
ibv_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	(void)ctx;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

WN_VERBS_EXPORT struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

WN_VERBS_EXPORT struct ibv_dm *
ibv_import_dm(struct ibv_context *ctx, uint32_t dm_handle)
{
	(void)ctx;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

WN_VERBS_EXPORT void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

WN_VERBS_EXPORT void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

WN_VERBS_EXPORT void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/*
 * A forked child gets a private copy of registered private memory (lib/client's atfork
 * handler), as Linux's copy on fork gives it of pinned pages: ibv_fork_init() is not needed.
 */
WN_VERBS_EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* As siw (the fallback): no promise that a message is placed in order before its CQE. */
WN_VERBS_EXPORT int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}

/* The pre-rdma-core provider registration (IBVERBS_1.1 compat only): ignored. */
WN_VERBS_EXPORT void
wn_compat_register_driver(const char *name, void *init_func)
{
	(void)name;
	(void)init_func;
}
WN_VERBS_COMPAT(wn_compat_register_driver, ibv_register_driver, IBVERBS_1.1);

/* ------------------------------------------------------------------ IBVERBS_1.0 */

/*
 * The 1.0 ABI's device list holds struct ibv_device_1_0 pointers; this library offers its
 * device only to the current ABI, so an old program finds none (as on a host without RDMA
 * devices). The rest cannot be reached without a device and fail with EOPNOTSUPP.
 */
WN_VERBS_EXPORT void **
wn_compat_get_device_list(int *num)
{
	void **l = calloc(1, sizeof(*l));

	if (num != NULL)
		*num = 0;
	if (l == NULL)
		errno = ENOMEM;
	return l;
}
WN_VERBS_COMPAT(wn_compat_get_device_list, ibv_get_device_list, IBVERBS_1.0);

WN_VERBS_EXPORT void
wn_compat_free_device_list(void **list)
{
	free(list);
}
WN_VERBS_COMPAT(wn_compat_free_device_list, ibv_free_device_list, IBVERBS_1.0);

WN_VERBS_EXPORT void
wn_compat_void(void)
{
}
WN_VERBS_COMPAT(wn_compat_void, ibv_ack_async_event, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_void, ibv_ack_cq_events, IBVERBS_1.0);

WN_VERBS_EXPORT void *
wn_compat_null(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}
WN_VERBS_COMPAT(wn_compat_null, ibv_alloc_pd, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_create_ah, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_create_cq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_create_qp, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_create_srq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_get_device_name, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_open_device, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_null, ibv_reg_mr, IBVERBS_1.0);

WN_VERBS_EXPORT uint64_t
wn_compat_zero(void)
{
	return 0;
}
WN_VERBS_COMPAT(wn_compat_zero, ibv_get_device_guid, IBVERBS_1.0);

/* int-returning verbs: an errno value (and errno set, for the -1 style ones) */
WN_VERBS_EXPORT int
wn_compat_eopnotsupp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_attach_mcast, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_close_device, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_dealloc_pd, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_dereg_mr, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_destroy_ah, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_destroy_cq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_destroy_qp, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_destroy_srq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_detach_mcast, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_modify_qp, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_modify_srq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_device, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_gid, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_pkey, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_port, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_qp, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_query_srq, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_eopnotsupp, ibv_resize_cq, IBVERBS_1.0);

WN_VERBS_EXPORT int
wn_compat_minus_one(void)
{
	errno = EOPNOTSUPP;
	return -1;
}
WN_VERBS_COMPAT(wn_compat_minus_one, ibv_get_async_event, IBVERBS_1.0);
WN_VERBS_COMPAT(wn_compat_minus_one, ibv_get_cq_event, IBVERBS_1.0);

/* ------------------------------------------------------------------ IBVERBS_PRIVATE_34 */

/*
 * Provider entry points. The argument lists do not matter to a stub that reads none of them
 * (System V calling convention: the caller owns its arguments), so one definition per return
 * kind serves them all.
 */
#define PRIV_INT(name) \
	WN_VERBS_EXPORT int name(void); \
	int name(void) \
	{ \
		return EOPNOTSUPP; \
	}
#define PRIV_NULL(name) \
	WN_VERBS_EXPORT void *name(void); \
	void *name(void) \
	{ \
		errno = EOPNOTSUPP; \
		return NULL; \
	}
#define PRIV_VOID(name) \
	WN_VERBS_EXPORT void name(void); \
	void name(void) \
	{ \
	}

/* kernel commands: there is no uverbs device behind a warpnic context */
PRIV_INT(execute_ioctl)
PRIV_INT(ibv_cmd_advise_mr)
PRIV_INT(ibv_cmd_alloc_dm)
PRIV_INT(ibv_cmd_alloc_mw)
PRIV_INT(ibv_cmd_alloc_pd)
PRIV_INT(ibv_cmd_attach_mcast)
PRIV_INT(ibv_cmd_close_xrcd)
PRIV_INT(ibv_cmd_create_ah)
PRIV_INT(ibv_cmd_create_counters)
PRIV_INT(ibv_cmd_create_cq)
PRIV_INT(ibv_cmd_create_cq_ex)
PRIV_INT(ibv_cmd_create_flow)
PRIV_INT(ibv_cmd_create_flow_action_esp)
PRIV_INT(ibv_cmd_create_qp)
PRIV_INT(ibv_cmd_create_qp_ex)
PRIV_INT(ibv_cmd_create_qp_ex2)
PRIV_INT(ibv_cmd_create_rwq_ind_table)
PRIV_INT(ibv_cmd_create_srq)
PRIV_INT(ibv_cmd_create_srq_ex)
PRIV_INT(ibv_cmd_create_wq)
PRIV_INT(ibv_cmd_dealloc_mw)
PRIV_INT(ibv_cmd_dealloc_pd)
PRIV_INT(ibv_cmd_dereg_mr)
PRIV_INT(ibv_cmd_destroy_ah)
PRIV_INT(ibv_cmd_destroy_counters)
PRIV_INT(ibv_cmd_destroy_cq)
PRIV_INT(ibv_cmd_destroy_flow)
PRIV_INT(ibv_cmd_destroy_flow_action)
PRIV_INT(ibv_cmd_destroy_qp)
PRIV_INT(ibv_cmd_destroy_rwq_ind_table)
PRIV_INT(ibv_cmd_destroy_srq)
PRIV_INT(ibv_cmd_destroy_wq)
PRIV_INT(ibv_cmd_detach_mcast)
PRIV_INT(ibv_cmd_free_dm)
PRIV_INT(ibv_cmd_get_context)
PRIV_INT(ibv_cmd_modify_cq)
PRIV_INT(ibv_cmd_modify_flow_action_esp)
PRIV_INT(ibv_cmd_modify_qp)
PRIV_INT(ibv_cmd_modify_qp_ex)
PRIV_INT(ibv_cmd_modify_srq)
PRIV_INT(ibv_cmd_modify_wq)
PRIV_INT(ibv_cmd_open_qp)
PRIV_INT(ibv_cmd_open_xrcd)
PRIV_INT(ibv_cmd_poll_cq)
PRIV_INT(ibv_cmd_post_recv)
PRIV_INT(ibv_cmd_post_send)
PRIV_INT(ibv_cmd_post_srq_recv)
PRIV_INT(ibv_cmd_query_context)
PRIV_INT(ibv_cmd_query_device_any)
PRIV_INT(ibv_cmd_query_mr)
PRIV_INT(ibv_cmd_query_port)
PRIV_INT(ibv_cmd_query_qp)
PRIV_INT(ibv_cmd_query_srq)
PRIV_INT(ibv_cmd_read_counters)
PRIV_INT(ibv_cmd_reg_dm_mr)
PRIV_INT(ibv_cmd_reg_dmabuf_mr)
PRIV_INT(ibv_cmd_reg_mr)
PRIV_INT(ibv_cmd_req_notify_cq)
PRIV_INT(ibv_cmd_rereg_mr)
PRIV_INT(ibv_cmd_resize_cq)
/* a provider's context and device: never created for a warpnic device */
PRIV_NULL(_verbs_init_and_alloc_context)
PRIV_NULL(verbs_open_device)
/* a provider's constructor registers it: accepted, it matches no device here */
PRIV_VOID(verbs_register_driver_34)
PRIV_VOID(verbs_set_ops)
PRIV_VOID(verbs_uninit_context)
PRIV_VOID(verbs_init_cq)
PRIV_VOID(__verbs_log)

WN_VERBS_EXPORT unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	(void)link;
	return num_attrs;
}

WN_VERBS_EXPORT bool
verbs_allow_disassociate_destroy(int fw_ret)
{
	(void)fw_ret;
	return false;
}

/* sysfs of a kernel RDMA device: warpnic's has none (ibv_read_sysfs_file answers for it) */
WN_VERBS_EXPORT int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...)
{
	(void)buf;
	(void)size;
	(void)sysfs_dev;
	(void)fnfmt;
	errno = ENOENT;
	return -1;
}
