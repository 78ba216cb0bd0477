/* SPDX-License-Identifier: BSD-3-Clause */
/* Private helpers of lib/client. */
#ifndef WN_CLIENT_PRIV_H
#define WN_CLIENT_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "wn_ctl.h"

struct wn_client_seg;

/*
 * Make the pages of [addr, addr+len) shared (memfd-backed at the same address), reusing
 * segments of earlier registrations. Fills req->n_pieces/piece[] and fds[] (borrowed: owned
 * by the segments), and the segment references taken. Returns 0 or -errno.
 */
int wn_client_share(void *addr, size_t len, struct wn_ctl_reg_mr_req *req, int *fds,
		    struct wn_client_seg **segs, uint32_t *n_segs);

/* Drop the references taken by wn_client_share(). */
void wn_client_unshare(struct wn_client_seg **segs, uint32_t n_segs);

#endif /* WN_CLIENT_PRIV_H */
