/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every limit ibv_query_device (ibv_devinfo -v) advertises is reachable: each object is
 * created at its advertised maximum, by count (max_pd PDs, max_cq CQs, max_qp QPs, max_srq
 * SRQs, max_mr MRs, max_mw windows, all alive at once; max_ah address handles) and by size
 * (a CQ of max_cqe entries, a QP with max_qp_wr work requests and max_sge SGEs each way and
 * max_inline_data, an SRQ of max_srq_wr with max_srq_sge, an MR of max_mr_size, IRD/ORD of
 * max_qp_rd_atom), and one beyond a size limit is refused with EINVAL. The daemon is one with no other client.
 *   dev_limits
 * Exit status 0 = pass; the failing check is printed otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <infiniband/verbs.h>

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "dev_limits: check failed line %d: %s (errno %d)\n", \
				__LINE__, #c, errno);                                      \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static struct ibv_device_attr da;

static struct ibv_qp *
small_qp(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .srq = srq,
				     .qp_type = IBV_QPT_RC,
				     .cap = {.max_send_wr = 1, .max_recv_wr = srq ? 0 : 1,
					     .max_send_sge = 1, .max_recv_sge = 1}};

	return ibv_create_qp(pd, &a);
}

static void
counts(struct ibv_context *ctx)
{
	struct ibv_pd **pds = calloc((size_t)da.max_pd, sizeof(*pds)), *pd;
	struct ibv_cq **cqs = calloc((size_t)da.max_cq, sizeof(*cqs));
	struct ibv_qp **qps = calloc((size_t)da.max_qp, sizeof(*qps));
	struct ibv_srq **srqs = calloc((size_t)da.max_srq, sizeof(*srqs));
	struct ibv_mr **mrs = calloc((size_t)da.max_mr, sizeof(*mrs)), *whole;
	struct ibv_mw **mws = calloc((size_t)da.max_mw, sizeof(*mws));
	size_t len = 1u << 20;
	uint8_t *buf = aligned_alloc(4096, len);
	int i;

	CHECK(pds && cqs && qps && srqs && mrs && mws && buf);
	for (i = 0; i < da.max_pd; i++)
		CHECK((pds[i] = ibv_alloc_pd(ctx)) != NULL);
	pd = pds[0];
	for (i = 0; i < da.max_cq; i++)
		CHECK((cqs[i] = ibv_create_cq(ctx, 1, NULL, NULL, 0)) != NULL);
	for (i = 0; i < da.max_qp; i++)
		CHECK((qps[i] = small_qp(pd, cqs[0], NULL)) != NULL);
	for (i = 0; i < da.max_srq; i++)
		CHECK((srqs[i] = ibv_create_srq(pd, &(struct ibv_srq_init_attr){
			.attr = {.max_wr = 1, .max_sge = 1}})) != NULL);
	/* max_mr registrations of 16 octets each inside one registered megabyte */
	memset(buf, 0, len);
	whole = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(whole != NULL);
	for (i = 0; i < da.max_mr - 1; i++)
		CHECK((mrs[i] = ibv_reg_mr(pd, buf + (size_t)(i * 16) % len, 16,
					   IBV_ACCESS_LOCAL_WRITE)) != NULL);
	/* windows share the region table with MRs: all of them once the MRs are gone */
	for (i = 0; i < da.max_mr - 1; i++)
		CHECK(ibv_dereg_mr(mrs[i]) == 0);
	CHECK(ibv_dereg_mr(whole) == 0);
	for (i = 0; i < da.max_mw; i++)
		CHECK((mws[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2)) != NULL);
	for (i = 0; i < da.max_mw; i++)
		CHECK(ibv_dealloc_mw(mws[i]) == 0);
	for (i = 0; i < da.max_srq; i++)
		CHECK(ibv_destroy_srq(srqs[i]) == 0);
	for (i = 0; i < da.max_qp; i++)
		CHECK(ibv_destroy_qp(qps[i]) == 0);
	for (i = 0; i < da.max_cq; i++)
		CHECK(ibv_destroy_cq(cqs[i]) == 0);
	for (i = 0; i < da.max_pd; i++)
		CHECK(ibv_dealloc_pd(pds[i]) == 0);
	printf("dev_limits: %d PDs, %d CQs, %d QPs, %d SRQs, %d MRs, %d MWs alive at once\n",
	       da.max_pd, da.max_cq, da.max_qp, da.max_srq, da.max_mr, da.max_mw);
	free(buf);
}

/* max_ah address handles (UD QPs' destinations) alive at once; one more is refused. */
static void
ahs(struct ibv_context *ctx)
{
	struct ibv_ah **ah = calloc((size_t)da.max_ah, sizeof(*ah));
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1, .grh = {.hop_limit = 64}};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	int i;

	CHECK(ah != NULL && pd != NULL && da.max_ah > 0);
	CHECK(ibv_query_gid(ctx, 1, 0, &a.grh.dgid) == 0);
	for (i = 0; i < da.max_ah; i++)
		CHECK((ah[i] = ibv_create_ah(pd, &a)) != NULL);
	errno = 0;
	CHECK(ibv_create_ah(pd, &a) == NULL && errno == ENOMEM);
	for (i = 0; i < da.max_ah; i++)
		CHECK(ibv_destroy_ah(ah[i]) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	printf("dev_limits: %d address handles alive at once\n", da.max_ah);
	free(ah);
}

static void
sizes(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr at;
	uint8_t *big;

	CHECK(pd != NULL);
	cq = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
	CHECK(cq != NULL && cq->cqe >= da.max_cqe);
	CHECK(ibv_destroy_cq(cq) == 0);
	errno = 0;
	CHECK(ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0) == NULL && errno == EINVAL);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	qa = (struct ibv_qp_init_attr){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = {.max_send_wr = (uint32_t)da.max_qp_wr,
					       .max_recv_wr = (uint32_t)da.max_qp_wr,
					       .max_send_sge = (uint32_t)da.max_sge,
					       .max_recv_sge = (uint32_t)da.max_sge}};
	{
		struct ibv_qp_init_attr q2 = qa;

		CHECK((qp = ibv_create_qp(pd, &q2)) != NULL);
		CHECK(q2.cap.max_send_wr >= (uint32_t)da.max_qp_wr &&
		      q2.cap.max_send_sge >= (uint32_t)da.max_sge);
		/* IRD/ORD at max_qp_rd_atom */
		at = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT,
					  .max_rd_atomic = (uint8_t)da.max_qp_init_rd_atom,
					  .max_dest_rd_atomic = (uint8_t)da.max_qp_rd_atom};
		CHECK(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC |
						     IBV_QP_MAX_DEST_RD_ATOMIC) == 0);
		CHECK(ibv_query_qp(qp, &at, IBV_QP_MAX_QP_RD_ATOMIC, &q2) == 0 &&
		      at.max_rd_atomic == da.max_qp_init_rd_atom &&
		      at.max_dest_rd_atomic == da.max_qp_rd_atom);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	{
		struct ibv_qp_init_attr q2 = qa;

		q2.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
		errno = 0;
		CHECK(ibv_create_qp(pd, &q2) == NULL && errno == EINVAL);
		q2 = qa;
		q2.cap.max_recv_sge = (uint32_t)da.max_sge + 1;
		errno = 0;
		CHECK(ibv_create_qp(pd, &q2) == NULL && errno == EINVAL);
	}
	srq = ibv_create_srq(pd, &(struct ibv_srq_init_attr){
		.attr = {.max_wr = (uint32_t)da.max_srq_wr, .max_sge = (uint32_t)da.max_srq_sge}});
	CHECK(srq != NULL);
	CHECK(ibv_destroy_srq(srq) == 0);
	errno = 0;
	CHECK(ibv_create_srq(pd, &(struct ibv_srq_init_attr){
		.attr = {.max_wr = (uint32_t)da.max_srq_wr + 1, .max_sge = 1}}) == NULL &&
	      errno == EINVAL);
	/* an MR of max_mr_size, and one page more refused */
	big = mmap(NULL, da.max_mr_size + 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(big != MAP_FAILED);
	mr = ibv_reg_mr(pd, big, da.max_mr_size, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK(ibv_dereg_mr(mr) == 0);
	errno = 0;
	CHECK(ibv_reg_mr(pd, big, da.max_mr_size + 4096, IBV_ACCESS_LOCAL_WRITE) == NULL &&
	      errno == EINVAL);
	munmap(big, da.max_mr_size + 4096);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	printf("dev_limits: CQ of %d, QP of %d WRs x %d SGEs, SRQ of %d x %d, MR of %llu octets, "
	       "IRD/ORD %d/%d\n", da.max_cqe, da.max_qp_wr, da.max_sge, da.max_srq_wr,
	       da.max_srq_sge, (unsigned long long)da.max_mr_size, da.max_qp_rd_atom,
	       da.max_qp_init_rd_atom);
}

int
main(void)
{
	struct ibv_device **l;
	struct ibv_context *ctx;
	struct rlimit rl;
	int n = 0;

	/* a descriptor per object at most: room for all of them */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = rl.rlim_max;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	l = ibv_get_device_list(&n);
	CHECK(l != NULL && n == 1);
	ctx = ibv_open_device(l[0]);
	CHECK(ctx != NULL);
	CHECK(ibv_query_device(ctx, &da) == 0);
	counts(ctx);
	ahs(ctx);
	sizes(ctx);
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(l);
	return 0;
}
