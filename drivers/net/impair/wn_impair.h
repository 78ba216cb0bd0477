/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * net_wn_impair: a fault-injecting ethdev that wraps another port.
 *
 * An impairer owns an underlying port (a tap, memif, af_packet, ring, ...) and
 * exposes a new ethdev, the "face", that applications use like any port. Between
 * the two, per direction and per queue, it drops, duplicates, corrupts, delays
 * and reorders packets at configured rates with a seeded PRNG, so that a run is
 * reproducible for a given seed and packet sequence. Every action is counted. Drop,
 * duplication, reordering, delay, corruption and a link flap act on every frame whatever it
 * carries (TCP, SCTP as IP protocol 132, ARP, ...); only mangle= looks for TCP.
 *
 * Devargs (comma-separated key=value, as on an EAL --vdev line):
 *
 *   port=NAME|ID      underlying port, by ethdev name (e.g. net_tap0) or id (required)
 *   drop=P dup=P reorder=P corrupt=P
 *                     rates in [0,1], or percent with a '%' suffix ("1%")
 *   mangle=P          corruption below TCP: one octet of a TCP segment's payload is flipped
 *                     and the TCP checksum made right again, so only a check above TCP (MPA's
 *                     CRC32c) can catch it; the octet lies past the payload's first 32 octets
 *                     and before its last 8 (where a segment's first FPDU has its length and
 *                     DDP/RDMAP headers, and its last one PAD and CRC), so segments with 40
 *                     payload octets or fewer are left alone
 *   delay_us=N        fixed one-way delay added to every packet (FIFO, order kept)
 *   jitter_us=N       ... plus a uniform random delay in [0, N] per packet; a packet never
 *                     overtakes the one before it (reordering is reorder='s job)
 *   dir=both|rx|tx    directions the unprefixed keys above apply to (default both)
 *   rx_drop= tx_drop= rx_dup= tx_dup= rx_reorder= tx_reorder= rx_corrupt= tx_corrupt=
 *   rx_mangle= tx_mangle= rx_delay_us= tx_delay_us= rx_jitter_us= tx_jitter_us=
 *                     per-direction values; they override the unprefixed ones
 *   reorder_gap=N     a packet picked for reordering is released after N later
 *                     packets have passed (default 3) ...
 *   reorder_us=N      ... or after N microseconds, whichever comes first (default 1000)
 *   seed=S            PRNG seed (default 1); queue q of direction d uses a stream
 *                     derived from (S, q, d)
 *   queues=N          rx and tx queues of the face and the underlying port (default 1)
 *
 * "rx" is what the application receives (underlying rx → face rx); "tx" is what
 * it sends (face tx → underlying tx). A corrupted packet is a private copy with
 * one octet past the L2/L3/L4 headers XORed with a non-zero value (past the L2
 * header when there is no payload); pending checksum offloads are resolved in
 * software first, so the corruption reaches the peer as a bad checksum. A received TCP
 * segment whose checksum field holds only its pseudo-header sum (sent over a local link
 * by lib/net's WN_NET_CKSUM_LOCAL, which leaves the sum to an offload nothing performs) gets
 * its full sum on the way in, so the face is an ordinary link to its receiver; a corrupted
 * segment whose full sum equals its pseudo-header sum has that field flipped instead of a
 * payload octet, so that a local-link receiver does not take it unverified.
 *
 * Build note: Debian's libdpdk-dev ships no driver SDK headers (ethdev_driver.h,
 * bus_vdev_driver.h), so the face is a net_ring port (rte_eth_from_rings) and the
 * impairer moves packets between its rings and the underlying port whenever
 * wn_impair_poll() runs: call it from the lcore loop that polls the face (every
 * burst), or map it yourself to a service lcore. wn_impair_argv_extract() lets
 * an application accept the usual "--vdev net_wn_impair0,port=...,drop=..." EAL
 * syntax.
 *
 * At run time (any thread; also as telemetry commands): wn_impair_link_down() unplugs the
 * wire for a while (every frame either way is lost, a link flap), wn_impair_mangle_next()
 * mangles (as mangle=) the next N TCP segments with payload of one direction, so that a test
 * picks the moment.
 *
 * Counters: wn_impair_stats_get(), wn_impair_xstats_get() ("rx_impair_drop", ...), and
 * rte_telemetry commands /wn_impair/list and /wn_impair/xstats,<face port id>; the run-time
 * controls /wn_impair/link_down,<face port id>,<ms> and
 * /wn_impair/mangle,<face port id>,rx|tx,<n>.
 */
#ifndef WN_IMPAIR_H
#define WN_IMPAIR_H

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Prefix of the devargs name that wn_impair_argv_extract() takes from --vdev. */
#define WN_IMPAIR_VDEV_PREFIX "net_wn_impair"

/** Largest number of queues per impairer. */
#define WN_IMPAIR_MAX_QUEUES 8

/** Impairments of one direction. */
struct wn_impair_dir_conf {
	double drop;       /**< probability a packet is dropped */
	double dup;        /**< probability a packet is sent twice */
	double reorder;    /**< probability a packet is held back */
	double corrupt;    /**< probability one payload octet is flipped */
	double mangle;     /**< probability a TCP payload octet is flipped, checksum fixed */
	uint32_t delay_us; /**< fixed delay of every packet */
	uint32_t jitter_us; /**< random extra delay in [0, jitter_us], order kept */
};

/** Parsed devargs of one impairer. */
struct wn_impair_conf {
	char port[RTE_ETH_NAME_MAX_LEN]; /**< underlying port name or decimal id */
	struct wn_impair_dir_conf rx;    /**< towards the application */
	struct wn_impair_dir_conf tx;    /**< from the application */
	uint32_t reorder_gap;            /**< later packets before a held one goes */
	uint32_t reorder_us;             /**< longest hold of a reordered packet */
	uint64_t seed;                   /**< PRNG seed */
	uint16_t queues;                 /**< number of rx and tx queues */
};

/** Counters of one direction (summed over queues). */
struct wn_impair_stats {
	uint64_t in;       /**< packets that entered the impairer */
	uint64_t out;      /**< packets that left it (to the face rx ring or the wire) */
	uint64_t drop;     /**< dropped on purpose */
	uint64_t dup;      /**< extra copies emitted */
	uint64_t reorder;  /**< packets held back and released late */
	uint64_t delay;    /**< packets that went through the delay line */
	uint64_t corrupt;  /**< packets with one flipped octet */
	uint64_t overflow; /**< packets lost because an internal queue was full */
	uint64_t nomem;    /**< dup/corrupt skipped because no mbuf was free */
	uint64_t mangle;   /**< TCP segments with a flipped payload octet and a good checksum */
	uint64_t down;     /**< packets lost while the link was down (wn_impair_link_down()) */
};

/** Number of counters in struct wn_impair_stats, per direction. */
#define WN_IMPAIR_NB_XSTATS_PER_DIR 11

/**
 * Parse impairer devargs.
 *
 * @param args
 *   "key=value,..." as described in the file comment; NULL or "" is invalid
 *   (port= is required).
 * @param conf
 *   Filled with the defaults, then with @p args.
 * @return
 *   0, or -EINVAL for an unknown key, a malformed or out-of-range value or a
 *   missing port=.
 *
 * Thread safety: reentrant; usable before rte_eal_init().
 */
int wn_impair_conf_parse(const char *args, struct wn_impair_conf *conf);

/**
 * Create an impairer: take ownership of the underlying port named in @p args,
 * configure and start it with conf.queues queues, and create the face port.
 *
 * The face is created stopped and unconfigured; configure and start it like
 * any port (rx/tx queue setup is accepted with any descriptor count).
 *
 * @param name
 *   Name of the impairer (e.g. "net_wn_impair0"); the face's ethdev name is
 *   derived from it (see rte_eth_dev_get_name_by_port()).
 * @param args
 *   Devargs, see wn_impair_conf_parse().
 * @param mp
 *   Mempool for the underlying port's rx queues and for copies.
 * @return
 *   The face's port id (>= 0), or -EINVAL (bad args), -ENODEV (no such
 *   underlying port), -EBUSY (underlying port already owned), -ENOMEM, or the
 *   error of the underlying port's configuration.
 *
 * Thread safety: control path; call from the main lcore only.
 */
int wn_impair_create(const char *name, const char *args, struct rte_mempool *mp);

/**
 * Move packets one step: for every queue, release due delayed/held packets,
 * receive a burst from the underlying port into the face's rx ring, and send
 * a burst from the face's tx ring to the underlying port, impairing both.
 *
 * @param port_id
 *   Face port id returned by wn_impair_create().
 * @return
 *   Number of packets that entered the impairer in this call, or -ENODEV.
 *
 * Thread safety: not thread-safe per impairer: one lcore at a time, normally
 * the lcore that polls the face.
 */
int wn_impair_poll(uint16_t port_id);

/**
 * Run wn_impair_poll() on every impairer.
 *
 * @return total packets that entered impairers in this call.
 *
 * Thread safety: as wn_impair_poll(), for all impairers at once.
 */
int wn_impair_poll_all(void);

/**
 * @return 1 if @p port_id is an impairer face, else 0.
 *
 * Thread safety: any lcore.
 */
int wn_impair_is_face(uint16_t port_id);

/**
 * @return the port an impairer face @p port_id wraps (the one that sends its frames), or
 * -ENODEV when @p port_id is no face.
 *
 * Thread safety: any lcore.
 */
int wn_impair_under(uint16_t port_id);

/**
 * Read the counters.
 *
 * @param port_id
 *   Face port id.
 * @param rx
 *   Filled with the rx-direction counters (may be NULL).
 * @param tx
 *   Filled with the tx-direction counters (may be NULL).
 * @return 0, or -ENODEV.
 *
 * Thread safety: any lcore; values read while wn_impair_poll() runs elsewhere
 * may be a little stale.
 */
int wn_impair_stats_get(uint16_t port_id, struct wn_impair_stats *rx,
			struct wn_impair_stats *tx);

/**
 * Counters as ethdev-style extended statistics ("rx_impair_drop", ...).
 *
 * @param port_id
 *   Face port id.
 * @param names
 *   Array of @p n names to fill (may be NULL to ask for the count).
 * @param values
 *   Array of @p n values to fill (may be NULL).
 * @param n
 *   Size of the arrays.
 * @return
 *   The number of counters (2 * WN_IMPAIR_NB_XSTATS_PER_DIR); when larger than
 *   @p n nothing is filled. -ENODEV if @p port_id is not a face.
 *
 * Thread safety: as wn_impair_stats_get().
 */
int wn_impair_xstats_get(uint16_t port_id, struct rte_eth_xstat_name *names, uint64_t *values,
			 unsigned int n);

/**
 * Unplug the wire: every frame either way (entering the impairer from now on, or held or
 * delayed in it when it would leave) is lost for @p ms milliseconds, counted in "down".
 * A later call replaces the deadline; @p ms 0 plugs it back at once.
 *
 * @return 0, or -ENODEV.
 *
 * Thread safety: any thread (the deadline is one atomic store).
 */
int wn_impair_link_down(uint16_t port_id, uint32_t ms);

/**
 * Mangle the next @p n TCP segments of direction @p tx (0: rx, 1: tx) that carry more than
 * 40 payload octets, as mangle= does (one payload octet flipped, TCP checksum made right).
 *
 * @return 0, or -ENODEV.
 *
 * Thread safety: any thread (atomic counter, shared by the direction's queues).
 */
int wn_impair_mangle_next(uint16_t port_id, int tx, uint32_t n);

/**
 * Stop and close the face, free every packet the impairer holds, stop the
 * underlying port and give up its ownership.
 *
 * @return 0, or -ENODEV.
 *
 * Thread safety: control path; main lcore, with no concurrent poll.
 */
int wn_impair_destroy(uint16_t port_id);

/**
 * Take every "--vdev net_wn_impair...,ARGS" (or "--vdev=...") out of an EAL
 * argument vector and remember it for wn_impair_create_pending(). Call it before
 * rte_eal_init(), which would reject the unknown vdev.
 *
 * @param argc
 *   Number of arguments.
 * @param argv
 *   Arguments; edited in place (the taken ones are removed, order kept).
 * @return
 *   The new argc, or -E2BIG when more than WN_IMPAIR_MAX_PENDING were given.
 *
 * Thread safety: not thread-safe; call once from main() before rte_eal_init().
 */
int wn_impair_argv_extract(int argc, char **argv);

/** Most impairers wn_impair_argv_extract() remembers. */
#define WN_IMPAIR_MAX_PENDING 8

/**
 * Create the impairers remembered by wn_impair_argv_extract().
 *
 * @param mp
 *   Mempool for the underlying ports.
 * @param port_ids
 *   Filled with the face port ids, in command-line order (may be NULL).
 * @param n
 *   Size of @p port_ids.
 * @return
 *   The number created, or the -errno of the first wn_impair_create() that failed.
 *
 * Thread safety: main lcore, after rte_eal_init().
 */
int wn_impair_create_pending(struct rte_mempool *mp, uint16_t *port_ids, unsigned int n);

struct wn_node_port_wrap;
/**
 * The fault injector as lib/node's port wrapper (wn_node_conf.wrap): --impair and EAL
 * --vdev net_wn_impair faces in warpnicd.
 */
extern const struct wn_node_port_wrap wn_impair_node_wrap;

#ifdef __cplusplus
}
#endif

#endif /* WN_IMPAIR_H */
