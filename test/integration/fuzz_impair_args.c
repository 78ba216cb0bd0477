/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the net_wn_impair devargs parser (wn_impair_conf_parse).
 * Invariants checked on success: rates in [0,1], a non-empty NUL-terminated port,
 * queues and reorder_gap in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_impair.h"

static void
check_dir(const struct wn_impair_dir_conf *d)
{
	if (!(d->drop >= 0 && d->drop <= 1) || !(d->dup >= 0 && d->dup <= 1) ||
	    !(d->reorder >= 0 && d->reorder <= 1) || !(d->corrupt >= 0 && d->corrupt <= 1) ||
	    !(d->mangle >= 0 && d->mangle <= 1) || d->delay_us > 10000000 ||
	    d->jitter_us > 10000000)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_impair_conf conf;
	char *s = malloc(size + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (wn_impair_conf_parse(s, &conf) == 0) {
		check_dir(&conf.rx);
		check_dir(&conf.tx);
		if (conf.port[0] == '\0' || memchr(conf.port, '\0', sizeof(conf.port)) == NULL)
			abort();
		if (conf.queues == 0 || conf.queues > WN_IMPAIR_MAX_QUEUES || conf.reorder_gap == 0)
			abort();
	}
	free(s);
	return 0;
}
