/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devargs parser of net_wn_impair. Plain C over rte_kvargs: no EAL needed, so
 * the libFuzzer target drives it directly.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_kvargs.h>

#include "wn_impair.h"

enum dir_mask {
	DIR_RX = 1,
	DIR_TX = 2,
	DIR_BOTH = 3,
};

static const char *const impair_keys[] = {
	"port",         "drop",         "dup",         "reorder",     "corrupt",
	"mangle",       "delay_us",     "jitter_us",   "dir",         "rx_drop",
	"tx_drop",      "rx_dup",       "tx_dup",      "rx_reorder",  "tx_reorder",
	"rx_corrupt",   "tx_corrupt",   "rx_mangle",   "tx_mangle",   "rx_delay_us",
	"tx_delay_us",  "rx_jitter_us", "tx_jitter_us", "reorder_gap", "reorder_us",
	"seed",         "queues",       NULL,
};

static int
parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s)
		return -EINVAL;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end != '\0' || !isfinite(v) || v < 0.0 || v > 1.0)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
parse_dir(const char *s, unsigned int *mask)
{
	if (s == NULL)
		return -EINVAL;
	if (strcmp(s, "both") == 0)
		*mask = DIR_BOTH;
	else if (strcmp(s, "rx") == 0)
		*mask = DIR_RX;
	else if (strcmp(s, "tx") == 0)
		*mask = DIR_TX;
	else
		return -EINVAL;
	return 0;
}

/* Apply one impairment key ("drop", "dup", ...) to the directions in @mask. */
static int
set_dir_value(struct wn_impair_conf *conf, unsigned int mask, const char *what, const char *val)
{
	struct wn_impair_dir_conf *dirs[2] = {&conf->rx, &conf->tx};
	uint64_t u = 0;
	double d = 0;
	unsigned int i;
	int ret;

	if (strcmp(what, "delay_us") == 0 || strcmp(what, "jitter_us") == 0)
		ret = parse_u64(val, 10 * 1000 * 1000, &u);
	else
		ret = parse_rate(val, &d);
	if (ret < 0)
		return ret;
	for (i = 0; i < 2; i++) {
		if ((mask & (1u << i)) == 0)
			continue;
		if (strcmp(what, "drop") == 0)
			dirs[i]->drop = d;
		else if (strcmp(what, "dup") == 0)
			dirs[i]->dup = d;
		else if (strcmp(what, "reorder") == 0)
			dirs[i]->reorder = d;
		else if (strcmp(what, "corrupt") == 0)
			dirs[i]->corrupt = d;
		else if (strcmp(what, "mangle") == 0)
			dirs[i]->mangle = d;
		else if (strcmp(what, "jitter_us") == 0)
			dirs[i]->jitter_us = (uint32_t)u;
		else
			dirs[i]->delay_us = (uint32_t)u;
	}
	return 0;
}

static int
apply_pair(struct wn_impair_conf *conf, const char *key, const char *val, unsigned int dir)
{
	uint64_t u;
	int ret;

	if (strcmp(key, "port") == 0) {
		if (val == NULL || *val == '\0' || strlen(val) >= sizeof(conf->port))
			return -EINVAL;
		strcpy(conf->port, val);
		return 0;
	}
	if (strcmp(key, "reorder_gap") == 0) {
		ret = parse_u64(val, 1024, &u);
		if (ret == 0 && u == 0)
			ret = -EINVAL;
		if (ret == 0)
			conf->reorder_gap = (uint32_t)u;
		return ret;
	}
	if (strcmp(key, "reorder_us") == 0) {
		ret = parse_u64(val, 10 * 1000 * 1000, &u);
		if (ret == 0)
			conf->reorder_us = (uint32_t)u;
		return ret;
	}
	if (strcmp(key, "seed") == 0) {
		ret = parse_u64(val, UINT64_MAX, &u);
		if (ret == 0)
			conf->seed = u;
		return ret;
	}
	if (strcmp(key, "queues") == 0) {
		ret = parse_u64(val, WN_IMPAIR_MAX_QUEUES, &u);
		if (ret == 0 && u == 0)
			ret = -EINVAL;
		if (ret == 0)
			conf->queues = (uint16_t)u;
		return ret;
	}
	if (strncmp(key, "rx_", 3) == 0)
		return set_dir_value(conf, DIR_RX, key + 3, val);
	if (strncmp(key, "tx_", 3) == 0)
		return set_dir_value(conf, DIR_TX, key + 3, val);
	return set_dir_value(conf, dir, key, val);
}

int
wn_impair_conf_parse(const char *args, struct wn_impair_conf *conf)
{
	struct rte_kvargs *kv;
	unsigned int dir = DIR_BOTH;
	unsigned int i, pass;
	int ret = 0;

	if (conf == NULL)
		return -EINVAL;
	memset(conf, 0, sizeof(*conf));
	conf->reorder_gap = 3;
	conf->reorder_us = 1000;
	conf->seed = 1;
	conf->queues = 1;
	if (args == NULL || *args == '\0')
		return -EINVAL;
	kv = rte_kvargs_parse(args, impair_keys);
	if (kv == NULL)
		return -EINVAL;
	/* dir= first, whatever its position */
	for (i = 0; i < kv->count && ret == 0; i++)
		if (strcmp(kv->pairs[i].key, "dir") == 0)
			ret = parse_dir(kv->pairs[i].value, &dir);
	/* then unprefixed keys, then rx_/tx_ ones so that they override */
	for (pass = 0; pass < 2 && ret == 0; pass++) {
		for (i = 0; i < kv->count && ret == 0; i++) {
			const char *key = kv->pairs[i].key;
			int prefixed = strncmp(key, "rx_", 3) == 0 || strncmp(key, "tx_", 3) == 0;

			if (strcmp(key, "dir") == 0 || prefixed != (int)pass)
				continue;
			ret = apply_pair(conf, key, kv->pairs[i].value, dir);
		}
	}
	rte_kvargs_free(kv);
	if (ret == 0 && conf->port[0] == '\0')
		ret = -EINVAL;
	return ret;
}
