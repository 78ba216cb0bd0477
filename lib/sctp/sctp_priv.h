/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/sctp's private structures. Files: pkt.c (usrsctp's start, the AF_CONN paths, packets in
 * and out, the timers), assoc.c (associations: sockets, notifications, what they receive,
 * listeners and accepting), stream.c (the lower-layer ops: streams over DDP Stream Sessions,
 * the instance), session.c (one session's protocol, wn_sctp_sess.h).
 */
#ifndef WN_SCTP_PRIV_H
#define WN_SCTP_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>
#include <rte_ring.h>

#include <usrsctp.h>

#include "wn_sctp.h"
#include "wn_sctp_sess.h"

extern int wn_sctp_logtype;
#define SCTP_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_sctp_logtype, "sctp: " __VA_ARGS__)

/* Association-level timers and the deferred work run at most this often. */
#define SCTP_TICK_US 1000u

struct sctp_proto;
struct sctp_assoc;

/*
 * One AF_CONN "address" of usrsctp: the pair of IP addresses a packet travels between. Its
 * pointer is the sconn_addr of both ends of every association over it (usrsctp hands it to
 * the output callback, and we give it to usrsctp_conninput).
 */
struct sctp_path {
	TAILQ_ENTRY(sctp_path) next;
	struct sctp_proto *p;         /* the instance that owns its associations */
	struct wn_ip_addr local, remote;
};

/* A listening socket of usrsctp, one per SCTP port for the whole process. */
struct sctp_lsock {
	TAILQ_ENTRY(sctp_lsock) next;
	struct socket *so;
	uint16_t port;
	unsigned int refs;            /* instance listeners on this port */
};

/* An instance's listener on a port (wn_llp_listen). */
struct sctp_listener {
	TAILQ_ENTRY(sctp_listener) next;
	struct sctp_proto *p;
	struct sctp_lsock *ls;
	struct wn_llp_ep ep;
	wn_llp_incoming_fn incoming;
	void *arg;
};

/* A stream of this layer: one DDP Stream Session on one SCTP stream pair. */
struct sctp_stream {
	struct wn_llp l;              /* first: the wrappers' and the owner's view */
	TAILQ_ENTRY(sctp_stream) next;
	struct sctp_proto *p;
	struct sctp_assoc *a;         /* NULL once the association is gone */
	uint16_t sid;
	struct wn_sctp_sess sess;
	struct wn_llp_req req;        /* active: the Initiate's IRD/ORD and Private Data */
	bool incoming_done;           /* passive: handed to the listener */
	bool released;                /* the owner is done: no more upcalls */
	bool closed;                  /* CLOSED reported (or due without an owner) */
	bool detached;                /* no longer in its association's slot */
	enum wn_llp_close why;        /* of CLOSED */
	uint64_t linger;              /* our Terminate out: the peer's is awaited until then */
	struct wn_llp_ep local, remote;
	uint8_t *txbuf;               /* one DDP Segment Chunk being gathered */
	uint32_t mulpdu;
};

/* One association: a one-to-one usrsctp socket. */
struct sctp_assoc {
	TAILQ_ENTRY(sctp_assoc) next;
	TAILQ_ENTRY(sctp_assoc) rnext; /* in the instance's ready list */
	struct sctp_proto *p;
	struct socket *so;            /* NULL once closed */
	struct sctp_path *path;
	struct sctp_listener *ls;     /* passive: the listener that took it */
	uint16_t lport, rport;
	bool active;
	bool up;                      /* COMM_UP seen */
	bool ddp;                     /* the peer indicated DDP (RFC 5043 §11.1) */
	bool checked;                 /* the indication was judged */
	bool blocked;                 /* a send found no room: streams wait for writability */
	bool shutting;                /* SHUTDOWN asked */
	bool peer_shut;               /* the peer's SHUTDOWN arrived */
	bool ended;                   /* usrsctp reported the end (why set); streams not told yet */
	bool checked_session;         /* passive: a session started before the deadline */
	bool gone;                    /* over: streams told */
	bool on_ready;
	enum wn_llp_close why;        /* of the end */
	_Atomic bool ready;           /* usrsctp's upcall: something to read (any thread) */
	uint64_t deadline;            /* the association or its first session must be up by */
	uint16_t n_streams;           /* SCTP streams each way */
	struct sctp_stream **slot;    /* the session on each stream id, or NULL */
	uint32_t refs;                /* streams pointing here */
};

TAILQ_HEAD(sctp_stream_list, sctp_stream);
TAILQ_HEAD(sctp_assoc_list, sctp_assoc);

/*
 * What an association tells the streams above it (stream.c's, set at the instance's
 * creation): assoc.c reaches its sessions through this table, never by name.
 */
struct sctp_stream_up {
	/** A stream for session id @p sid of @p a (passive ones: before their Initiate). */
	struct sctp_stream *(*new_stream)(struct sctp_assoc *a, uint16_t sid, bool active);
	/** The association came up (and indicated DDP): an active stream sends its Initiate. */
	void (*start)(struct sctp_stream *s);
	/** The association is gone: CLOSED (@p why). */
	void (*gone)(struct sctp_stream *s, enum wn_llp_close why);
	/** The peer shut the association down: no more chunks will arrive (EOF). */
	void (*eof)(struct sctp_stream *s);
	/** The association can take more: recompute the stream's tx_ready. */
	void (*ready)(struct sctp_stream *s);
};

struct sctp_proto {
	struct wn_llp_proto base;     /* first: the wrappers' view */
	const struct sctp_stream_up *up; /* the streams above (stream.c) */
	struct wn_sctp_conf c;
	TAILQ_HEAD(, sctp_path) paths;
	TAILQ_HEAD(, sctp_listener) listeners;
	struct sctp_assoc_list assocs;
	struct sctp_assoc_list ready;  /* associations to read */
	struct sctp_stream_list streams;
	struct rte_ring *txq;          /* packets to send (any thread enqueues) */
	struct rte_ring *adopt;        /* sockets another lcore accepted for us */
	uint8_t *rxbuf;                /* one received message (recvv), or a chained packet */
	uint64_t now, last_tick;
	struct wn_sctp_stats sx;
};

/* ---- pkt.c ---- */
/** The instance running on this thread (set while it calls into usrsctp). */
extern __thread struct sctp_proto *wn_sctp_cur;
/** Start usrsctp once per process. @return 0 or -errno. */
int wn_sctp_global_init(void);
/** The path between @p local and @p remote, created on first use. NULL: no memory. */
struct sctp_path *wn_sctp_path_get(struct sctp_proto *p, const struct wn_ip_addr *local,
				const struct wn_ip_addr *remote);
/** The IP header length of @p path's family. */
uint32_t wn_sctp_path_ip_hdr(const struct sctp_path *path);
/** usrsctp's timers, from whichever instance polls first each millisecond. */
void wn_sctp_timers(uint64_t now);
/**
 * One SCTP packet in (@p m freed): CRC32c checked, then usrsctp_conninput on its path.
 * @return -1 when dropped (counted), 1 when it was a COOKIE ECHO to port *@p dport (an
 * association may have come up on a listening socket), else 0.
 */
int wn_sctp_pkt_input(struct sctp_proto *p, struct rte_mbuf *m, uint64_t now, uint16_t *dport);
/** Free the instance's paths (after its sockets). */
void wn_sctp_paths_free(struct sctp_proto *p);
/** Set the options every socket of ours has (before bind/listen). @return 0 or -errno. */
int wn_sctp_socket_setup(struct sctp_proto *p, struct socket *so, uint32_t ip_hdr);
/** An AF_CONN address for usrsctp: @p path (NULL: any) and @p port (host order). */
void wn_sctp_sconn(struct sockaddr_conn *sa, struct sctp_path *path, uint16_t port);

/* ---- assoc.c ---- */
/** A new association over @p so. NULL: no memory (the socket is aborted). */
struct sctp_assoc *wn_sctp_assoc_new(struct sctp_proto *p, struct socket *so,
				  struct sctp_path *path, uint16_t lport, uint16_t rport,
				  bool active);
/** Read what @p a has (notifications, chunks) and act on it. */
void wn_sctp_assoc_drain(struct sctp_assoc *a);
/** Drain every association marked ready. @return work done. */
unsigned int wn_sctp_ready_run(struct sctp_proto *p);
/** Accept what the listening sockets of port @p port have. */
void wn_sctp_accept_port(struct sctp_proto *p, uint16_t port);
/** Sockets accepted for @p p by another lcore. @return work done. */
unsigned int wn_sctp_adopt_poll(struct sctp_proto *p);
/** Every millisecond: associations marked by other threads, deadlines, frees. */
void wn_sctp_assoc_tick(struct sctp_proto *p);
/** Shut @p a down (SHUTDOWN) when none of its sessions is alive any more. */
void wn_sctp_assoc_maybe_shutdown(struct sctp_assoc *a);
/** Abort @p a (ABORT), end its sessions (CLOSED, reset). */
void wn_sctp_assoc_abort(struct sctp_assoc *a, enum wn_llp_close why);
/** Free an association whose socket is closed and that no stream points to. */
void wn_sctp_assoc_put(struct sctp_assoc *a);
/** Free every association and listener (instance free). */
void wn_sctp_assocs_free(struct sctp_proto *p);
/** Listening sockets (process-wide, by port). */
struct sctp_lsock *wn_sctp_lsock_get(struct sctp_proto *p, uint16_t port);
void wn_sctp_lsock_put(struct sctp_lsock *ls);

/* ---- stream.c ---- */
/** A stream for session id @p sid of @p a (passive ones: before their Initiate). */
struct sctp_stream *wn_sctp_stream_new(struct sctp_assoc *a, uint16_t sid, bool active);
/** The association came up (and indicated DDP): an active stream sends its Initiate. */
void wn_sctp_stream_start(struct sctp_stream *s);
/** The association is gone: CLOSED (@p why). */
void wn_sctp_stream_gone(struct sctp_stream *s, enum wn_llp_close why);
/** The peer shut the association down: no more chunks will arrive (EOF). */
void wn_sctp_stream_eof(struct sctp_stream *s);
/** Free streams that are released and over. */
void wn_sctp_streams_reap(struct sctp_proto *p);
/** Recompute @p s's tx_ready. */
void wn_sctp_stream_ready(struct sctp_stream *s);

#endif /* WN_SCTP_PRIV_H */
