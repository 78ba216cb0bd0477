/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The daemon as a library (lib/node): a whole dataplane as warpnicd runs it, in any process:
 * warpnicd's options and config file, then the port, the control thread (lib/server) and the
 * shards (lib/dp, wn_dp.h),
 * started after rte_eal_init(). warpnicd's main.c is a thin layer on top; warpnic-perf embeds
 * it (testpmd style) to run the RNIC in-process and drive it through lib/client on a private
 * socket.
 *
 *   wn_node_defaults(&c); wn_node_option(&c, "ip", "198.18.0.1/24"); ...
 *   wn_node_start(&c);              // port, rings, control thread, shards on worker lcores
 *   ... clients use c.ctl_path ...
 *   wn_node_stop();                 // shards and control thread end, everything freed
 *
 * Thread safety: one dataplane per process; start, run_main and stop run on the main lcore
 * (the thread that called rte_eal_init()); wn_node_quit() is async-signal-safe.
 */
#ifndef WN_NODE_H
#define WN_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "wn_dp.h"
#include "wn_server.h"

/**
 * A port wrapper the application links in and hands over (warpnicd: the fault injector,
 * drivers/net/impair): a "face" port over the real one. lib/node includes no driver.
 */
struct wn_node_port_wrap {
	/**
	 * Create a face named @p name over the port and with the settings in @p args
	 * ("port=NAME,queues=N,SPEC" where SPEC is --impair's). @return its port id or -errno.
	 */
	int (*create)(const char *name, const char *args, struct rte_mempool *mp);
	/**
	 * Create the faces given as EAL --vdev options, which wait for an mbuf pool.
	 * @return how many (their port ids in @p ports, at most @p n), or -errno.
	 */
	int (*create_pending)(struct rte_mempool *mp, uint16_t *ports, unsigned int n);
	/** Move frames through every face (faces move frames when polled). @return frames. */
	int (*poll_all)(void);
	/** @return the port under face @p port, or a negative errno when it is no face. */
	int (*under)(uint16_t port);
	/** Destroy face @p port. @return 0 or -errno. */
	int (*destroy)(uint16_t port);
};

/** Everything warpnicd's options set (see wn_node_usage()). */
struct wn_node_conf {
	struct wn_server_conf ctl;
	struct wn_dp_conf dp;
	char ctl_path[108];           /**< --ctl */
	char dev_name[WN_CTL_NAME_LEN]; /**< --name */
	const char *pcap;             /**< --pcap (owned: wn_node_conf_free()) */
	const char *impair;           /**< --impair (owned) */
	const char *netdev;           /**< --netdev: the kernel interface with our addresses (owned) */
	const char *pidfile;          /**< --pidfile (owned) */
	bool daemon;                  /**< --daemon (warpnicd's main detaches before the EAL) */
	/** The wrapper --impair and EAL --vdev faces need (NULL: --impair refused). */
	const struct wn_node_port_wrap *wrap;
	int port;                     /**< --port (-1: the first ethdev) */
	uint32_t mbufs;               /**< --mbufs */
	bool offload;                 /**< not --no-offload */
	/**
	 * true (warpnicd): shard 0 runs on the main lcore in wn_node_run_main(), one shard
	 * per EAL lcore. false (embedded): one shard per worker lcore, all started by
	 * wn_node_start(); the main lcore stays the caller's.
	 */
	bool main_shard;
	/**
	 * Run to completion (wn_dp_embed.h): no control server or thread, a lib/mem table of
	 * the dataplane's own, one shard per EAL lcore and none started: the application runs
	 * each on its lcore (wn_node_shard(), then wn_dp_start/poll/stop) with its workload
	 * in the same loop. main_shard is ignored.
	 */
	bool rtc;
};

/** Fill @p c with warpnicd's defaults (main_shard true). */
void wn_node_defaults(struct wn_node_conf *c);

/** Free what the options allocated in @p c (not @p c itself). */
void wn_node_conf_free(struct wn_node_conf *c);

/** Print warpnicd's usage text for @p prog to stdout. */
void wn_node_usage(const char *prog);

/**
 * Apply one option by its long name (without dashes) as on warpnicd's command line or in
 * its config file ("config" reads a file).
 * @param arg
 *   Its value; NULL for the options without one.
 * @return 0, -ENOENT (no such option, or "help"), -EINVAL (bad or missing value), -ENOSPC
 *   (too many --ip), -ENOMEM, or -errno of a config file.
 */
int wn_node_option(struct wn_node_conf *c, const char *name, const char *arg);

/**
 * Parse warpnicd's command line (after EAL's, @p argv[0] the program); --help prints the
 * usage and exits. @return 0 or -EINVAL; every mistake is said on stderr, naming the option
 * and the form it accepts.
 */
int wn_node_parse_args(struct wn_node_conf *c, int argc, char **argv);

/**
 * The EAL's command line for warpnicd's @p argc / @p argv ("[EAL options] -- [options]"):
 * the EAL options of every --config file's "eal" lines, then the command line's own.
 * @param eal_argv
 *   Set to a NULL-terminated copy for rte_eal_init() (freed at exit).
 * @param daemon
 *   Set when the options after "--" ask for --daemon.
 * @return the number of arguments in *eal_argv, or -errno (ENOMEM, E2BIG). Before the EAL.
 */
int wn_node_eal_args(int argc, char **argv, char ***eal_argv, bool *daemon);

/**
 * Free what wn_node_eal_args() made: @p eal_argv, its count @p n and the @p argc it was
 * given (before rte_eal_init(), which reorders the array). Before the EAL.
 */
void wn_node_eal_args_free(char **eal_argv, int n, int argc);

/** An address for wn_node_netdev_up(): AF_INET or AF_INET6, network order. */
struct wn_node_netdev_addr {
	int family;
	uint8_t addr[16];
	uint8_t prefix;
};

/**
 * Put @p n addresses on a kernel interface @p name, as an RDMA NIC's netdev carries its own:
 * one end of a veth pair made for it (both ends up), each address without a prefix route.
 * An interface of that name that a warpnicd which is gone left behind is replaced.
 * @param owner
 *   Set to the pid of the warpnicd that has @p name (with EBUSY), else 0.
 * @return 0, or -errno: EBUSY (a live warpnicd has it), EEXIST (an interface that is not
 *   warpnicd's), EINVAL (bad name), EPERM (no CAP_NET_ADMIN), or rtnetlink's. Any thread.
 */
int wn_node_netdev_up(const char *name, const struct wn_node_netdev_addr *addrs, unsigned int n,
		      int *owner);

/** Remove interface @p name if this process made it. Any thread. */
void wn_node_netdev_down(const char *name);

/**
 * Bring up the mbuf pool, the port (and --impair face), --pcap, the control rings, the
 * control server on c->ctl_path and its thread, and the dataplane shards; without
 * c->main_shard the shards start on the worker lcores here. With c->rtc: no control rings,
 * server or thread, a lib/mem table of the dataplane's own, and no shard started. @p c is
 * copied.
 * @return 0, or -errno with a message on stderr (EINVAL: no --ip; ENODEV: no port;
 *   ENOTSUP: no worker lcore for an embedded dataplane; EALREADY: already started);
 *   on failure nothing is left running. Main lcore, after rte_eal_init().
 */
int wn_node_start(const struct wn_node_conf *c);

/**
 * @return shard @p idx of the started dataplane (c->rtc: the application runs it), or NULL.
 * Any thread.
 */
struct wn_dp *wn_node_shard(uint16_t idx);

/** @return the number of shards of the started dataplane (0 when not started). Any thread. */
uint16_t wn_node_shards(void);

/**
 * With c->main_shard: run shard 0 on the calling (main) lcore until wn_node_quit() or a
 * shard fails. @return 0, or -errno of shard 0 (-EINVAL when not started that way).
 */
int wn_node_run_main(void);

/** Ask every shard to stop (e.g. from a signal handler). Any thread. */
void wn_node_quit(void);

/** @return true while started and no shard has stopped. Any thread. */
bool wn_node_running(void);

/**
 * Wait until every connection of the dataplane is closed or in TIME_WAIT (an embedding app's
 * clients closed theirs, and the FINs went both ways), at most @p timeout_ms: the peer then
 * has everything we sent. @return 0, or -ETIMEDOUT. Any thread but the shards'.
 */
int wn_node_wait_idle(unsigned int timeout_ms);

/**
 * Stop the shards and the control thread and free everything wn_node_start() created
 * (the ports stay for wn_net_port_shutdown()). No-op when not started.
 * @return 0, or -errno of the first worker shard that failed. Main lcore.
 */
int wn_node_stop(void);

#endif /* WN_NODE_H */
