/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The differences between the DPDK releases warpnic builds against (22.11 in Debian 12,
 * 24.11 in Debian 13), each behind one name here, so that the code reads the same for both.
 * Include it after the DPDK headers the code uses.
 */
#ifndef WN_DPDK_COMPAT_H
#define WN_DPDK_COMPAT_H

#include <rte_version.h>

/*
 * rte_pcapng_copy(): 23.03 dropped the timestamp (the library takes its own) and added a
 * comment. Before 23.11 rte_pcapng_fdopen() describes every port in the file; since, each
 * port a capture writes must be added (#if WN_PCAPNG_ADD_PORTS).
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define WN_PCAPNG_COPY(port, queue, m, mp, len, tsc, dir) \
	((void)(tsc), rte_pcapng_copy(port, queue, m, mp, len, dir, NULL))
#else
#define WN_PCAPNG_COPY(port, queue, m, mp, len, tsc, dir) \
	rte_pcapng_copy(port, queue, m, mp, len, tsc, dir)
#endif
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#define WN_PCAPNG_ADD_PORTS 1
#else
#define WN_PCAPNG_ADD_PORTS 0
#endif

/* ICMP's echo types (RFC 792) under 23.11's names; the RTE_IP_ICMP_* ones are deprecated. */
#include <rte_icmp.h>
#ifndef RTE_ICMP_TYPE_ECHO_REQUEST
#define RTE_ICMP_TYPE_ECHO_REQUEST RTE_IP_ICMP_ECHO_REQUEST
#define RTE_ICMP_TYPE_ECHO_REPLY RTE_IP_ICMP_ECHO_REPLY
#endif

/* Unsigned telemetry values: 23.03 named them rte_tel_data_add_{dict,array}_uint(). */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define wn_tel_dict_u64(d, name, v) rte_tel_data_add_dict_uint(d, name, v)
#define wn_tel_array_u64(d, v) rte_tel_data_add_array_uint(d, v)
#else
#define wn_tel_dict_u64(d, name, v) rte_tel_data_add_dict_u64(d, name, v)
#define wn_tel_array_u64(d, v) rte_tel_data_add_array_u64(d, v)
#endif

/*
 * A control thread (on the CPUs the EAL keeps for them, not the lcores'): 23.11 replaced
 * rte_ctrl_thread_create() by rte_thread_create_control(), whose threads return uint32_t and
 * are named rte_thread_t; on Linux that is the pthread, which the callers join.
 * @return 0, or a negative errno.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <rte_thread.h>

struct wn_ctrl_thread_start {
	void *(*fn)(void *);
	void *arg;
};

static inline uint32_t
wn_ctrl_thread_run(void *p)
{
	struct wn_ctrl_thread_start s = *(struct wn_ctrl_thread_start *)p;

	free(p);
	s.fn(s.arg);
	return 0;
}

static inline int
wn_ctrl_thread_create(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	struct wn_ctrl_thread_start *s = malloc(sizeof(*s));
	rte_thread_t id;
	int ret;

	if (s == NULL)
		return -ENOMEM;
	s->fn = fn;
	s->arg = arg;
	ret = rte_thread_create_control(&id, name, wn_ctrl_thread_run, s);
	if (ret != 0) {
		free(s);
		return ret > 0 ? -ret : ret;
	}
	*t = (pthread_t)id.opaque_id;
	return 0;
}
#else
#include <pthread.h>

#include <rte_lcore.h>

static inline int
wn_ctrl_thread_create(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	int ret = rte_ctrl_thread_create(t, name, NULL, fn, arg);

	return ret > 0 ? -ret : ret;
}
#endif

#endif /* WN_DPDK_COMPAT_H */
