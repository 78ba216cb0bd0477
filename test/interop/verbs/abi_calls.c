/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shims' entry points that a software iWARP RNIC cannot serve fail cleanly when called,
 * with the answer libibverbs/librdmacm give on Linux siw (abi.sh checks that they exist):
 * the rest of libibverbs' public ABI (rereg's argument checks, dma-buf, imports, fork status,
 * rates), the old
 * IBVERBS_1.0 entries and the provider interface IBVERBS_PRIVATE_34 (reached with dlvsym, as
 * a program or provider linked against those versions binds them), multicast and ECE on an
 * rdma_cm id, rdma_migrate_id, rdma_get_devices. Runs against a warpnicd without dataplane:
 *   abi_calls
 * Exit status 0 = pass; the failing check is printed otherwise.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/efadv.h>
#include <infiniband/manadv.h>
#include <infiniband/mlx4dv.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CHECK(c)                                                                       \
	do {                                                                           \
		if (!(c)) {                                                            \
			fprintf(stderr, "abi_calls: check failed line %d: %s (errno %d)\n", \
				__LINE__, #c, errno);                                  \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

/* @p name of version @p ver in the library that defines ibv_open_device / rdma_create_id */
static void *
sym(const char *name, const char *ver)
{
	void *p = dlvsym(RTLD_DEFAULT, name, ver);

	if (p == NULL)
		fprintf(stderr, "abi_calls: %s@%s not found\n", name, ver);
	CHECK(p != NULL);
	return p;
}

static void
verbs_calls(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[4096];
	struct ibv_mr *mr;

	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	/* rereg checks its arguments as libibverbs does (verbs_mr_rereg tests what it does) */
	errno = 0;
	CHECK(ibv_rereg_mr(mr, 0x100, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT &&
	      errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0) ==
		      IBV_REREG_MR_ERR_INPUT && errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) == IBV_REREG_MR_ERR_CMD &&
	      errno == EOPNOTSUPP);
	errno = 0;
	CHECK(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE) == NULL &&
	      errno == EOPNOTSUPP);
	errno = 0;
	CHECK(ibv_import_pd(ctx, 1) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(ibv_import_mr(pd, 1) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	/* this provider's command fd, but no import (as siw); an fd of no device */
	CHECK(ibv_import_device(ctx->cmd_fd) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(ibv_import_device(STDERR_FILENO + 100) == NULL && errno == EINVAL);
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CHECK(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125 && ibv_rate_to_mult(IBV_RATE_MAX) == -1);
	CHECK(mult_to_ibv_rate(4) == IBV_RATE_10_GBPS && mbps_to_ibv_rate(1) == IBV_RATE_MAX);
	errno = 0;
	/* address handles are for UD QPs, as on RoCE: one without a global route is refused */
	CHECK(ibv_create_ah(pd, &(struct ibv_ah_attr){.port_num = 1}) == NULL &&
	      errno == EINVAL);
	CHECK(ibv_dereg_mr(mr) == 0);
	/* a parent domain stands for its PD: objects on it, the PD stays while it lives */
	{
		struct ibv_parent_domain_init_attr pa = {.pd = pd,
							 .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
							 .pd_context = buf};
		struct ibv_pd *par = ibv_alloc_parent_domain(ctx, &pa);
		struct ibv_cq_ex *cq;
		struct ibv_qp *qp;

		CHECK(par != NULL && par->handle == pd->handle);
		cq = ibv_create_cq_ex(ctx, &(struct ibv_cq_init_attr_ex){
			.cqe = 4, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par});
		CHECK(cq != NULL);
		qp = ibv_create_qp(par, &(struct ibv_qp_init_attr){
			.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
			.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 1, .max_recv_wr = 1,
						       .max_send_sge = 1, .max_recv_sge = 1}});
		CHECK(qp != NULL && qp->pd == par);
		CHECK(ibv_dealloc_pd(pd) == EBUSY);
		CHECK(ibv_destroy_qp(qp) == 0);
		CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0);
		CHECK(ibv_dealloc_pd(par) == 0);
		errno = 0;
		CHECK(ibv_create_cq_ex(ctx, &(struct ibv_cq_init_attr_ex){
			.cqe = 4, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pd}) == NULL &&
		      errno == EINVAL); /* a plain PD is no parent domain */
	}
	CHECK(ibv_dealloc_pd(pd) == 0);
}

static void
old_abi_calls(void)
{
	void **(*list_1_0)(int *) = sym("ibv_get_device_list", "IBVERBS_1.0");
	void (*free_1_0)(void **) = sym("ibv_free_device_list", "IBVERBS_1.0");
	void *(*open_1_0)(void *) = sym("ibv_open_device", "IBVERBS_1.0");
	int (*cmd_alloc_pd)(void) = sym("ibv_cmd_alloc_pd", "IBVERBS_PRIVATE_34");
	void *(*alloc_ctx)(void) = sym("_verbs_init_and_alloc_context", "IBVERBS_PRIVATE_34");
	void (*reg_drv)(const void *) = sym("verbs_register_driver_34", "IBVERBS_PRIVATE_34");
	void **l;
	int n = -1;

	/* the 1.0 ABI sees no device; its other entries fail */
	l = list_1_0(&n);
	CHECK(l != NULL && l[0] == NULL && n == 0);
	free_1_0(l);
	errno = 0;
	CHECK(open_1_0(NULL) == NULL && errno == EOPNOTSUPP);
	/* a provider loads and registers, but never gets a device or a command through */
	reg_drv(NULL);
	CHECK(cmd_alloc_pd() == EOPNOTSUPP);
	errno = 0;
	CHECK(alloc_ctx() == NULL && errno == EOPNOTSUPP);
}

/* What rdma-core's providers answer for a device that is not theirs. */
static void
provider_calls(struct ibv_device *dev, struct ibv_context *ctx)
{
	struct mlx5dv_context m5 = {0};
	struct mlx4dv_context m4 = {0};
	struct efadv_device_attr ea;
	struct mlx5dv_obj o = {0};
	int dummy = 0;

	CHECK(!mlx5dv_is_supported(dev));
	errno = 0;
	CHECK(mlx5dv_open_device(dev, NULL) == NULL && errno == EOPNOTSUPP);
	CHECK(mlx5dv_query_device(ctx, &m5) == EOPNOTSUPP);
	CHECK(mlx5dv_init_obj(&o, 0) == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_create_cq(ctx, &(struct ibv_cq_init_attr_ex){.cqe = 1}, NULL) == NULL &&
	      errno == EOPNOTSUPP);
	CHECK(mlx5dv_devx_general_cmd(ctx, &dummy, sizeof(dummy), &dummy, sizeof(dummy)) ==
	      EOPNOTSUPP);
	CHECK(mlx4dv_query_device(ctx, &m4) == EOPNOTSUPP);
	CHECK(efadv_query_device(ctx, &ea, sizeof(ea)) == EOPNOTSUPP);
	errno = 0;
	CHECK(efadv_create_qp_ex(ctx, &(struct ibv_qp_init_attr_ex){0}, NULL, 0) == NULL &&
	      errno == EOPNOTSUPP);
	CHECK(manadv_set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &dummy) == EOPNOTSUPP);
}

static void
cm_calls(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel(), *ch2;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct ibv_context **devs;
	struct rdma_cm_id *id;
	struct ibv_ece ece = {.vendor_id = 0x15b3, .options = 1};
	int n = 0;

	CHECK(ch != NULL);
	devs = rdma_get_devices(&n);
	CHECK(devs != NULL && n == 1 && devs[0] != NULL && devs[1] == NULL);
	rdma_free_devices(devs);
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0);
	CHECK(rdma_get_src_port(id) != 0); /* an ephemeral port was chosen */
	/* multicast: an RC (RDMA_PS_TCP) id is refused as the kernel does (EINVAL) */
	errno = 0;
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&a, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&a) == -1 && errno == EADDRNOTAVAIL);
	/* a datagram id (UD QPs, a warpnic extension); no multicast here: ENOSYS */
	{
		struct rdma_cm_id *ud;

		CHECK(rdma_create_id(ch, &ud, NULL, RDMA_PS_UDP) == 0 && ud->qp_type == IBV_QPT_UD);
		errno = 0;
		CHECK(rdma_join_multicast(ud, (struct sockaddr *)&a, NULL) == -1 && errno == ENOSYS);
		CHECK(rdma_destroy_id(ud) == 0);
	}
	/* id options at rdma_cm's sizes; ACK timeout has 5 bits; no IB path records on iWARP */
	{
		uint8_t tos = 0x28, t = 21, big = 32;
		int on = 1;

		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1) == 0);
		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on,
				      sizeof(on)) == 0);
		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on,
				      sizeof(on)) == 0);
		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, 1) == 0);
		errno = 0;
		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &big, 1) ==
			      -1 && errno == EINVAL);
		errno = 0;
		CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &on, sizeof(on)) ==
			      -1 && errno == EINVAL);
		errno = 0;
		CHECK(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &on, sizeof(on)) ==
			      -1 && errno == ENOSYS);
	}
	/* ECE is kept locally and never comes back from an MPA peer */
	CHECK(rdma_set_local_ece(id, &ece) == 0);
	CHECK(rdma_get_remote_ece(id, &ece) == 0 && ece.vendor_id == 0 && ece.options == 0);
	/* migrate to another channel and back; NULL makes it synchronous */
	ch2 = rdma_create_event_channel();
	CHECK(ch2 != NULL);
	CHECK(rdma_migrate_id(id, ch2) == 0 && id->channel == ch2);
	CHECK(rdma_migrate_id(id, ch) == 0 && id->channel == ch);
	CHECK(rdma_migrate_id(id, NULL) == 0 && id->channel != ch && id->channel != ch2);
	errno = 0;
	CHECK(rdma_migrate_id(id, NULL) == -1 && errno == EINVAL); /* already synchronous */
	CHECK(rdma_listen(id, 1) == 0);
	CHECK(rdma_destroy_id(id) == 0);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
}

int
main(void)
{
	struct ibv_device **l;
	struct ibv_context *ctx;
	int n = 0;

	l = ibv_get_device_list(&n);
	CHECK(l != NULL && n == 1);
	ctx = ibv_open_device(l[0]);
	CHECK(ctx != NULL);
	verbs_calls(ctx);
	provider_calls(l[0], ctx);
	old_abi_calls();
	cm_calls();
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(l);
	printf("abi_calls: ok\n");
	return 0;
}
