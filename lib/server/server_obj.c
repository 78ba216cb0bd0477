/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handle table and object lifetimes: handles (generation + index), and retired objects
 * ("zombies") whose memory waits for the dataplane's DONE. Destruction by type and a client's
 * reclaim are server.c's (they call every type's file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>

#include "srv_priv.h"

struct obj *
wn_server_obj_get(struct wn_server *srv, struct client *c, uint32_t h, enum obj_type t)
{
	uint32_t idx = (h & (MAX_OBJS - 1)) - 1;
	struct obj *o;

	if ((h & (MAX_OBJS - 1)) == 0 || idx >= srv->cap)
		return NULL;
	o = srv->tab[idx];
	if (o == NULL || o->zombie || o->handle != h || o->type != t ||
	    (c != NULL && o->owner != c))
		return NULL;
	return o;
}

/* Double the table (up to MAX_OBJS - 1 entries), its new slots free. @return 0 or -ENOMEM. */
static int
tab_grow(struct wn_server *srv)
{
	uint32_t ncap = srv->cap == 0 ? 256 : RTE_MIN(srv->cap * 2, MAX_OBJS - 1), i;
	struct obj **nt;
	uint16_t *ng;
	uint32_t *nf;

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
	nf = malloc(ncap * sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	for (i = 0; i < srv->free_len; i++)
		nf[i] = srv->free_idx[(srv->free_head + i) % srv->cap];
	free(srv->free_idx);
	srv->free_idx = nf;
	srv->free_head = 0;
	memset(&nt[srv->cap], 0, (ncap - srv->cap) * sizeof(*nt));
	memset(&ng[srv->cap], 0, (ncap - srv->cap) * sizeof(*ng));
	for (i = srv->cap; i < ncap; i++)
		nf[srv->free_len++] = i;
	srv->cap = ncap;
	return 0;
}

/* A slot freed: reused after every slot freed before it. */
static void
tab_slot_put(struct wn_server *srv, uint32_t idx)
{
	srv->tab[idx] = NULL;
	srv->free_idx[(srv->free_head + srv->free_len) % srv->cap] = idx;
	srv->free_len++;
}

struct obj *
wn_server_obj_new(struct wn_server *srv, struct client *owner, enum obj_type t)
{
	uint32_t idx;
	struct obj *o;

	if (srv->free_len == 0 && tab_grow(srv) != 0)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	idx = srv->free_idx[srv->free_head];
	srv->free_head = (srv->free_head + 1) % srv->cap;
	srv->free_len--;
	srv->gen[idx] = (uint16_t)((srv->gen[idx] + 1) & 0xfff);
	o->handle = ((uint32_t)srv->gen[idx] << 20) | (idx + 1);
	o->type = t;
	o->owner = owner;
	srv->tab[idx] = o;
	srv->counts[t]++;
	owner->nobjs++;
	return o;
}

static uint32_t
obj_idx(const struct obj *o)
{
	return (o->handle & (MAX_OBJS - 1)) - 1;
}

/* No longer the client's (its handle finds nothing); its slot stays taken. */
static void
obj_unlink(struct wn_server *srv, struct obj *o)
{
	srv->counts[o->type]--;
	o->owner->nobjs--;
	o->owner = NULL;
}

void
wn_server_obj_free(struct wn_server *srv, struct obj *o)
{
	obj_unlink(srv, o);
	tab_slot_put(srv, obj_idx(o));
	free(o);
}

/* An MR's span goes: its guards first, then the NIC's mapping, then the pages. */
void
wn_server_mr_release(struct wn_server *srv, struct obj *mr)
{
	uint32_t i;

	for (i = 0; i < mr->u.mr.n_guards; i++)
		wn_server_sigbus_del(mr->u.mr.guards[i]);
	free(mr->u.mr.guards);
	mr->u.mr.guards = NULL;
	mr->u.mr.n_guards = 0;
	if (mr->u.mr.hooked && srv->conf.mr_unmap != NULL)
		srv->conf.mr_unmap(srv->conf.mr_map_arg, mr->u.mr.dp.stag, mr->u.mr.map,
				   mr->u.mr.map_len);
	if (mr->u.mr.map != NULL)
		munmap(mr->u.mr.map, mr->u.mr.map_len);
	mr->u.mr.map = NULL;
}

/* Free the memory of an object nobody (client, table, dataplane) references any more. */
static void
obj_release(struct wn_server *srv, struct obj *o)
{
	switch (o->type) {
	case OBJ_QP:
		munmap(o->u.qp.dp.ring, o->u.qp.dp.ring_size);
		break;
	case OBJ_MR:
		wn_server_mr_release(srv, o);
		break;
	case OBJ_CQ:
		wn_server_notify_put(srv, o->u.cq.dp.notify_fd);
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
/*
 * A zombie keeps its slot (nothing else gets its index) until the dataplane's DONE, which
 * finds it there by its handle.
 */
void
wn_server_obj_retire(struct wn_server *srv, struct obj *o, uint32_t dp_type, void *desc)
{
	obj_unlink(srv, o);
	if (wn_server_dp_tell(srv, dp_type, o->handle, desc) != 0) {
		tab_slot_put(srv, obj_idx(o));
		obj_release(srv, o);
		return;
	}
	o->zombie = true;
	srv->n_zombies++;
}

void
wn_server_zombie_done(struct wn_server *srv, uint32_t handle)
{
	uint32_t idx = (handle & (MAX_OBJS - 1)) - 1;
	struct obj *o;

	if ((handle & (MAX_OBJS - 1)) == 0 || idx >= srv->cap)
		return;
	o = srv->tab[idx];
	if (o == NULL || !o->zombie || o->handle != handle)
		return;
	srv->n_zombies--;
	tab_slot_put(srv, idx);
	obj_release(srv, o);
}

void
wn_server_zombies_free(struct wn_server *srv)
{
	for (uint32_t i = 0; i < srv->cap && srv->n_zombies > 0; i++) {
		struct obj *o = srv->tab[i];

		if (o != NULL && o->zombie)
			wn_server_zombie_done(srv, o->handle);
	}
}

void
wn_server_tab_free(struct wn_server *srv)
{
	free(srv->tab);
	free(srv->gen);
	free(srv->free_idx);
	srv->tab = NULL;
	srv->gen = NULL;
	srv->free_idx = NULL;
	srv->cap = srv->free_len = 0;
}
