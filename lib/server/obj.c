/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handle table and object lifetimes: handles (generation + index), per-type destruction,
 * a client's reclaim in dependency order, and retired objects ("zombies") whose memory waits
 * for the dataplane's DONE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>

#include "server_priv.h"

struct obj *
srv_obj_get(struct wn_server *srv, struct client *c, uint32_t h, enum obj_type t)
{
	uint32_t idx = (h & (MAX_OBJS - 1)) - 1;
	struct obj *o;

	if ((h & (MAX_OBJS - 1)) == 0 || idx >= srv->cap)
		return NULL;
	o = srv->tab[idx];
	if (o == NULL || o->handle != h || o->type != t || (c != NULL && o->owner != c))
		return NULL;
	return o;
}

/* Double the table (up to MAX_OBJS - 1 entries); the first new index, or -ENOMEM. */
static int64_t
tab_grow(struct wn_server *srv)
{
	uint32_t ncap = srv->cap == 0 ? 256 : RTE_MIN(srv->cap * 2, MAX_OBJS - 1);
	struct obj **nt;
	uint16_t *ng;
	uint32_t idx;

	if (srv->cap == MAX_OBJS - 1)
		return -ENOMEM;
	nt = realloc(srv->tab, ncap * sizeof(*nt));
	if (nt == NULL)
		return -ENOMEM;
	srv->tab = nt;
	ng = realloc(srv->gen, ncap * sizeof(*ng));
	if (ng == NULL)
		return -ENOMEM;
	srv->gen = ng;
	memset(&nt[srv->cap], 0, (ncap - srv->cap) * sizeof(*nt));
	memset(&ng[srv->cap], 0, (ncap - srv->cap) * sizeof(*ng));
	idx = srv->cap;
	srv->cap = ncap;
	return idx;
}

static int64_t
tab_free_slot(struct wn_server *srv)
{
	uint32_t i, idx;

	for (i = 0; i < srv->cap; i++) {
		idx = (srv->next_free_hint + i) % srv->cap;
		if (srv->tab[idx] == NULL)
			return idx;
	}
	return tab_grow(srv);
}

struct obj *
srv_obj_new(struct wn_server *srv, struct client *owner, enum obj_type t)
{
	int64_t slot = tab_free_slot(srv);
	uint32_t idx;
	struct obj *o;

	if (slot < 0)
		return NULL;
	idx = (uint32_t)slot;
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	srv->gen[idx] = (uint16_t)((srv->gen[idx] + 1) & 0xfff);
	o->handle = ((uint32_t)srv->gen[idx] << 20) | (idx + 1);
	o->type = t;
	o->owner = owner;
	srv->tab[idx] = o;
	srv->next_free_hint = idx + 1;
	srv->counts[t]++;
	owner->nobjs++;
	return o;
}

static void
obj_unlink(struct wn_server *srv, struct obj *o)
{
	uint32_t idx = (o->handle & (MAX_OBJS - 1)) - 1;

	srv->tab[idx] = NULL;
	srv->counts[o->type]--;
	o->owner->nobjs--;
	o->owner = NULL;
}

void
srv_obj_free(struct wn_server *srv, struct obj *o)
{
	obj_unlink(srv, o);
	free(o);
}

/* Free the memory of an object nobody (client, table, dataplane) references any more. */
static void
obj_release(struct obj *o)
{
	switch (o->type) {
	case OBJ_QP:
		munmap(o->u.qp.dp.ring, o->u.qp.dp.ring_size);
		break;
	case OBJ_MR:
		munmap(o->u.mr.map, o->u.mr.map_len);
		break;
	case OBJ_CQ:
		if (o->u.cq.dp.notify_fd >= 0)
			close(o->u.cq.dp.notify_fd);
		munmap(o->u.cq.dp.ring, o->u.cq.dp.ring_size);
		break;
	case OBJ_SRQ:
		munmap(o->u.srq.dp.ring, o->u.srq.dp.ring_size);
		break;
	default:
		break;
	}
	free(o);
}

/*
 * Take an object out of the handle table. Without a dataplane its memory goes at once;
 * with one, the dataplane is told (@p dp_type) and the memory stays until its DONE.
 */
void
srv_obj_retire(struct wn_server *srv, struct obj *o, uint32_t dp_type, void *desc)
{
	obj_unlink(srv, o);
	if (srv_dp_tell(srv, dp_type, o->handle, desc) != 0) {
		obj_release(o);
		return;
	}
	o->znext = srv->zombies;
	srv->zombies = o;
}

void
srv_zombie_done(struct wn_server *srv, uint32_t handle)
{
	struct obj **pp;

	for (pp = &srv->zombies; *pp != NULL; pp = &(*pp)->znext)
		if ((*pp)->handle == handle) {
			struct obj *o = *pp;

			*pp = o->znext;
			obj_release(o);
			return;
		}
}

void
srv_zombies_free(struct wn_server *srv)
{
	while (srv->zombies != NULL) {
		struct obj *o = srv->zombies;

		srv->zombies = o->znext;
		obj_release(o);
	}
}

/* How each type goes (0, or -EBUSY when something still needs it). */
static int (*const destroy_of[OBJ_NTYPES])(struct wn_server *srv, struct obj *o) = {
	[OBJ_PD] = srv_pd_destroy,
	[OBJ_MR] = srv_mr_destroy,
	[OBJ_MW] = srv_mw_destroy,
	[OBJ_CQ] = srv_cq_destroy,
	[OBJ_SRQ] = srv_srq_destroy,
	[OBJ_QP] = srv_qp_destroy,
	[OBJ_CHAN] = srv_chan_destroy,
	[OBJ_CMID] = srv_cmid_destroy,
};

/* Destroy everything @p c owns, dependents first (socket EOF or client death). */
void
srv_client_reclaim(struct wn_server *srv, struct client *c)
{
	static const enum obj_type order[] = {OBJ_CMID, OBJ_QP, OBJ_MW, OBJ_SRQ, OBJ_CQ, OBJ_MR,
					      OBJ_PD, OBJ_CHAN};
	size_t k;
	uint32_t i;

	for (k = 0; k < RTE_DIM(order); k++) {
		for (i = 0; i < srv->cap; i++) {
			struct obj *o = srv->tab[i];

			if (o != NULL && o->owner == c && o->type == order[k])
				destroy_of[o->type](srv, o);
		}
	}
}

/* DEALLOC_PD, DEREG_MR, DEALLOC_MW, DESTROY_CQ/SRQ/QP, CM_DESTROY_CHANNEL/ID. */
int
srv_h_destroy(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	static const enum obj_type type_of[WN_CTL_OP_MAX] = {
		[WN_CTL_DEALLOC_PD] = OBJ_PD, [WN_CTL_DEREG_MR] = OBJ_MR,
		[WN_CTL_DESTROY_CQ] = OBJ_CQ, [WN_CTL_DESTROY_SRQ] = OBJ_SRQ,
		[WN_CTL_DESTROY_QP] = OBJ_QP, [WN_CTL_CM_DESTROY_CHANNEL] = OBJ_CHAN,
		[WN_CTL_CM_DESTROY_ID] = OBJ_CMID, [WN_CTL_DEALLOC_MW] = OBJ_MW,
	};
	const struct wn_ctl_handle *r = rq->body;
	struct obj *o = srv_obj_get(srv, rq->c, r->handle, type_of[rq->h->op]);

	(void)rs;
	if (o == NULL)
		return -EINVAL;
	if (o->refs != 0)
		return -EBUSY;
	return destroy_of[o->type](srv, o);
}
