/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names of the lower-layer seam's enumerations, for logs and telemetry, and what every
 * implementation does alike (wn_llp.h).
 */
#include <stddef.h>
#include <string.h>

#include "wn_llp.h"

const char *
wn_llp_event_str(enum wn_llp_event_type t)
{
	static const char *const names[] = {
		[WN_LLP_EV_REQUEST] = "request",   [WN_LLP_EV_ESTABLISHED] = "established",
		[WN_LLP_EV_TX_READY] = "tx_ready", [WN_LLP_EV_REJECTED] = "rejected",
		[WN_LLP_EV_ERROR] = "error",       [WN_LLP_EV_EOF] = "eof",
		[WN_LLP_EV_CLOSED] = "closed",     [WN_LLP_EV_MULPDU] = "mulpdu",
	};

	if ((unsigned int)t >= sizeof(names) / sizeof(names[0]) || names[t] == NULL)
		return "unknown";
	return names[t];
}

const char *
wn_llp_close_str(enum wn_llp_close why)
{
	static const char *const names[] = {
		[WN_LLP_CLOSE_NORMAL] = "normal",   [WN_LLP_CLOSE_RESET] = "reset",
		[WN_LLP_CLOSE_REFUSED] = "refused", [WN_LLP_CLOSE_TIMEOUT] = "timeout",
	};

	if ((unsigned int)why >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[why];
}

void
wn_llp_connect_keep(struct wn_llp *l, struct wn_llp_req *req, const struct wn_llp_connect *c)
{
	req->caps = c->caps;
	req->pd_len = c->pd_len;
	if (c->pd_len != 0)
		memcpy(req->pd, c->pd, c->pd_len);
	wn_llp_set_up(l, c->up, c->up_arg);
}
