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
obj_release(struct wn_server *srv, struct obj *o)
{
	switch (o->type) {
	case OBJ_QP:
		munmap(o->u.qp.dp.ring, o->u.qp.dp.ring_size);
		break;
	case OBJ_MR:
		if (srv->conf.mr_unmap != NULL)
			srv->conf.mr_unmap(srv->conf.mr_map_arg, o->u.mr.dp.stag, o->u.mr.map,
					   o->u.mr.map_len);
		munmap(o->u.mr.map, o->u.mr.map_len);
		break;
	case OBJ_CQ:
		srv_notify_put(srv, o->u.cq.dp.notify_fd);
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
		obj_release(srv, o);
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
			obj_release(srv, o);
			return;
		}
}

void
srv_zombies_free(struct wn_server *srv)
{
	while (srv->zombies != NULL) {
		struct obj *o = srv->zombies;

		srv->zombies = o->znext;
		obj_release(srv, o);
	}
}
