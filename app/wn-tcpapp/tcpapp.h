/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-tcpapp: lib/net + lib/tcp on one port and one lcore (run to completion).
 * Modes (one file each, a table of callbacks): echo, sink, source, and the raw
 * packet baselines rawtx/rawrx.
 */
#ifndef TCPAPP_H
#define TCPAPP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/evp.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#include "wn_net.h"
#include "wn_port.h"
#include "wn_tcp.h"

#define TCPAPP_BURST 32
#define TCPAPP_MAX_ADDRS 4

struct tcpapp;
struct tcpapp_conn;

/** One mode: designated-initializer table of callbacks. */
struct tcpapp_mode {
	const char *name;
	const char *help;
	bool uses_tcp;
	/** After the stack is up: listen or connect. @return 0 or -errno. */
	int (*start)(struct tcpapp *app, uint64_t now);
	/** Once per loop iteration. @return 1 when the mode is finished. */
	int (*poll)(struct tcpapp *app, uint64_t now);
	/** Print the results. @return process exit status (0: success). */
	int (*report)(struct tcpapp *app);
	const struct wn_tcp_cb *cb;
};

extern const struct tcpapp_mode tcpapp_mode_echo;
extern const struct tcpapp_mode tcpapp_mode_sink;
extern const struct tcpapp_mode tcpapp_mode_source;
extern const struct tcpapp_mode tcpapp_mode_rawtx;
extern const struct tcpapp_mode tcpapp_mode_rawrx;

/** Command-line options (params.c). */
struct tcpapp_params {
	const struct tcpapp_mode *mode;
	struct wn_ip_addr addr[TCPAPP_MAX_ADDRS];
	uint8_t prefix[TCPAPP_MAX_ADDRS];
	unsigned int nb_addr;
	struct wn_ip_addr gw;
	bool has_gw;
	uint16_t listen_port;
	struct wn_tcp_endpoint remote;
	bool has_remote;
	uint64_t bytes;      /* source: per connection; rawtx: total */
	uint32_t conns;      /* source: concurrent connections; servers: exit after N */
	uint64_t seed;       /* data generator */
	bool verify;         /* sink: check the seeded stream */
	const char *pcap;
	const char *impair;  /* devargs for net_wn_impair around the port */
	int port;            /* -1: first free port */
	uint16_t mtu;
	uint32_t bufsize;    /* TCP sndbuf and rcvbuf (0: library default) */
	uint32_t mbufs;
	uint32_t max_conns;
	uint32_t rto_min_us; /* 0: library default */
	double timeout;      /* seconds, 0: none */
	bool offload;
	enum wn_net_cksum cksum; /* without offload (lib/net) */
	bool quiet;
	bool park;           /* after the run: stop polling, close the port on SIGTERM */
	uint32_t pkt_size;   /* raw modes: frame size */
	struct rte_ether_addr peer_mac; /* rawtx destination */
};

/*
 * First member of struct tcpapp and struct tcpapp_conn: a closed event may carry the
 * listener's argument (the application) for a connection that never reached
 * ESTABLISHED, so callbacks check what their argument is.
 */
#define TCPAPP_MAGIC_APP 0x61707031u
#define TCPAPP_MAGIC_CONN 0x636f6e6eu

/** A TCP connection of the application. */
struct tcpapp_conn {
	uint32_t magic; /* TCPAPP_MAGIC_CONN */
	struct wn_tcp_conn *c;
	struct tcpapp *app;
	uint32_t idx;
	uint64_t bytes;      /* sent (source) or received (sink, echo) */
	uint64_t echoed;
	uint64_t mismatch;   /* sink --verify: octets that differ */
	EVP_MD_CTX *sha;
	uint64_t t_start;
	uint64_t t_end;
	struct wn_tcp_endpoint local, remote;
	bool established, fin, done, closed;
	enum wn_tcp_close_reason why;
};

struct tcpapp {
	uint32_t magic; /* TCPAPP_MAGIC_APP */
	struct tcpapp_params p;
	uint16_t port_id;
	struct rte_ether_addr mac; /* the port's */
	struct rte_mempool *pool;
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;
	struct wn_tcp_listener *listener;
	struct wn_pcap *pcap;
	struct tcpapp_conn *conns;  /* p.conns (source) or max_conns (servers) slots */
	uint32_t nb_slots;
	uint32_t nb_open;           /* connections started */
	uint32_t nb_done;           /* connections finished (results printed) */
	uint32_t nb_failed;         /* reset, refused, timed out */
	uint64_t total_bytes;
	uint64_t total_mismatch;
	uint64_t t_first;           /* first connection established (us) */
	uint64_t t_last;            /* last connection done (us) */
	uint64_t t_all_done;        /* servers: --conns reached (us) */
	uint64_t rx_pkts, tx_pkts, tx_drop;
	uint64_t raw_bytes;         /* raw modes */
	uint8_t *buf;               /* scratch for generating data (TCPAPP_CHUNK) */
};

#define TCPAPP_CHUNK (64 * 1024)
/** Servers wait this long for their last FINs to be acknowledged before exiting. */
#define TCPAPP_GRACE_US 3000000

/* params.c */
int tcpapp_params_parse(struct tcpapp_params *p, int argc, char **argv);
void tcpapp_usage(const char *prog);

/* parse.c: small string parsers (fuzzed) */
int tcpapp_parse_size(const char *s, uint64_t *out);
int tcpapp_parse_endpoint(const char *s, struct wn_tcp_endpoint *ep);
int tcpapp_parse_mac(const char *s, struct rte_ether_addr *mac);

/* stream.c */
void tcpapp_gen(uint64_t seed, uint64_t offset, uint8_t *buf, uint32_t len);
uint64_t tcpapp_verify(uint64_t seed, uint64_t offset, const uint8_t *buf, uint32_t len);
struct tcpapp_conn *tcpapp_conn_new(struct tcpapp *app, struct wn_tcp_conn *c);
void tcpapp_conn_finish(struct tcpapp_conn *ac, uint64_t now);
void tcpapp_fmt_ep(const struct wn_tcp_endpoint *ep, char *buf, size_t len);
int tcpapp_report_common(struct tcpapp *app, const char *what);
int tcpapp_listen(struct tcpapp *app, const struct wn_tcp_cb *cb);
int tcpapp_accept(struct wn_tcp_conn *c, void *arg, uint64_t now);
void tcpapp_server_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why);
int tcpapp_server_poll(struct tcpapp *app, uint64_t now);

#endif /* TCPAPP_H */
