/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The warpnic control protocol between client processes (lib/client, the verbs and rdmacm
 * shims) and warpnicd's control thread.
 *
 * Transport: one unix SOCK_SEQPACKET connection per client (WARPNIC_CTL, default
 * WN_CTL_DEFAULT_PATH). Every message is one datagram: a struct wn_ctl_hdr followed by the
 * fixed-size body of its op (wn_ctl_op_info() gives both sizes). File descriptors travel as
 * SCM_RIGHTS ancillary data, at most WN_CTL_MAX_FDS per message, in the order the body lists
 * them. The client sends a request and waits for the response with the same seq; the server
 * answers every request it can parse, with hdr.status = 0 or -errno. Connection manager events
 * are not responses: they arrive as WN_CTL_CM_EVENT messages on a per-channel socket (created
 * by WN_CTL_CM_CREATE_CHANNEL) that the client can poll and read.
 *
 * All fields are fixed-width, host byte order (both ends are on one host), naturally aligned
 * with explicit padding; reserved fields must be zero. Handles are 32-bit, 0 is never valid,
 * and are scoped to the client connection that created them (CM ids of incoming connections
 * are created by the server on the listener's behalf). When the connection ends (EOF, also on
 * client death) the server destroys every object the client owned.
 *
 * Thread safety: the helpers here are stateless; a socket must not be used by two threads at
 * once without external locking.
 */
#ifndef WN_CTL_H
#define WN_CTL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default control socket path; clients override it with WARPNIC_CTL. */
#define WN_CTL_DEFAULT_PATH "/run/warpnic/warpnicd.sock"
/** Environment variable selecting the warpnicd instance. */
#define WN_CTL_ENV "WARPNIC_CTL"

#define WN_CTL_MAGIC   0x574e4354u /**< "WNCT" */
#define WN_CTL_VERSION 2           /**< bumped on any incompatible layout change */

#define WN_CTL_MSG_MAX     1024 /**< largest datagram either side sends or accepts */
#define WN_CTL_MAX_FDS     16   /**< most SCM_RIGHTS fds in one message */
#define WN_CTL_MR_MSG_PIECES 16 /**< most MR pieces one REG_MR or MR_PIECES message carries */
#define WN_CTL_MR_PIECES_MAX 4096 /**< most pieces one MR may have */
#define WN_CTL_MAX_GIDS    8    /**< GIDs (port addresses) reported per port */
#define WN_CTL_PD_MAX      512  /**< CM private data bound (RFC 5044 §7.1.1 limit) */
#define WN_CTL_NAME_LEN    32
#define WN_CTL_PAGE_SIZE   4096u /**< granularity of MR pieces and ring memfds */

/** Request/response operations; also the hdr.op of CM events. */
enum wn_ctl_op {
	WN_CTL_HELLO = 1,
	WN_CTL_QUERY_DEVICE,
	WN_CTL_QUERY_PORT,
	WN_CTL_ALLOC_PD,
	WN_CTL_DEALLOC_PD,
	WN_CTL_REG_MR,
	WN_CTL_DEREG_MR,
	WN_CTL_CREATE_CQ,
	WN_CTL_DESTROY_CQ,
	WN_CTL_CREATE_SRQ,
	WN_CTL_MODIFY_SRQ,
	WN_CTL_DESTROY_SRQ,
	WN_CTL_CREATE_QP,
	WN_CTL_MODIFY_QP,
	WN_CTL_QUERY_QP,
	WN_CTL_DESTROY_QP,
	WN_CTL_CM_CREATE_CHANNEL,
	WN_CTL_CM_DESTROY_CHANNEL,
	WN_CTL_CM_CREATE_ID,
	WN_CTL_CM_DESTROY_ID,
	WN_CTL_CM_BIND,
	WN_CTL_CM_RESOLVE_ADDR,
	WN_CTL_CM_RESOLVE_ROUTE,
	WN_CTL_CM_LISTEN,
	WN_CTL_CM_CONNECT,
	WN_CTL_CM_ACCEPT,
	WN_CTL_CM_REJECT,
	WN_CTL_CM_DISCONNECT,
	WN_CTL_CM_EVENT, /**< server → client only, on a CM channel socket */
	WN_CTL_ALLOC_MW,
	WN_CTL_DEALLOC_MW,
	WN_CTL_CM_MIGRATE_ID,
	WN_CTL_BELL,
	WN_CTL_ASYNC_CHANNEL, /**< the client's async event socket (response: 1 fd) */
	WN_CTL_ASYNC_EVENT,   /**< server → client only, on the async event socket */
	WN_CTL_MR_PIECES,    /**< the rest of an MR's pieces (struct wn_ctl_mr_pieces_req) */
	WN_CTL_REREG_MR,     /**< an MR takes another's STag (struct wn_ctl_rereg_mr_req) */
	WN_CTL_OP_MAX
};

/** Header of every message. */
struct wn_ctl_hdr {
	uint32_t magic;   /**< WN_CTL_MAGIC */
	uint16_t version; /**< WN_CTL_VERSION */
	uint16_t op;      /**< enum wn_ctl_op */
	uint32_t seq;     /**< chosen by the requester, echoed in the response */
	uint32_t len;     /**< whole message, header included */
	int32_t status;   /**< responses: 0 or -errno; requests: 0 */
	uint32_t rsvd;
};
static_assert(sizeof(struct wn_ctl_hdr) == 24, "wn_ctl_hdr layout");

/** Address families in struct wn_ctl_addr. */
enum wn_ctl_af {
	WN_CTL_AF_NONE = 0,
	WN_CTL_AF_INET = 4,
	WN_CTL_AF_INET6 = 6,
};

/** A socket address: IPv4 uses addr[0..3] (network order), IPv6 all 16 octets. */
struct wn_ctl_addr {
	uint16_t family; /**< enum wn_ctl_af */
	uint16_t port;   /**< host order */
	uint32_t scope_id;
	uint8_t addr[16];
};
static_assert(sizeof(struct wn_ctl_addr) == 24, "wn_ctl_addr layout");

/**
 * Lower layers below DDP a client's connections may use (HELLO @c llp); the client picks one
 * with WN_CTL_LLP_ENV ("mpa" or "sctp"), else the daemon's default applies.
 */
enum wn_ctl_llp {
	WN_CTL_LLP_DEFAULT = 0, /**< the daemon's choice (warpnicd --llp) */
	WN_CTL_LLP_MPA = 1,     /**< MPA over TCP (RFC 5044, RFC 6581) */
	WN_CTL_LLP_SCTP = 2,    /**< DDP over SCTP (RFC 5043, RFC 6581) */
	WN_CTL_LLP_MAX
};
/** Environment variable selecting a client's lower layer: "mpa" (or "tcp") or "sctp". */
#define WN_CTL_LLP_ENV "WARPNIC_LLP"

/* ---- HELLO ---- */
struct wn_ctl_hello_req {
	uint32_t pid;
	uint32_t llp; /**< enum wn_ctl_llp: the lower layer of this client's connections */
	char name[WN_CTL_NAME_LEN]; /**< program name, NUL-terminated, informative */
};
struct wn_ctl_hello_resp {
	uint32_t server_version; /**< WN_CTL_VERSION of the server */
	uint32_t client_id;
	char dev_name[WN_CTL_NAME_LEN]; /**< verbs device name, e.g. "wn0" */
};

/* ---- QUERY_DEVICE ---- */
struct wn_ctl_device_attr {
	char fw_ver[64];
	uint64_t node_guid;
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;      /**< IRD limit (RFC 6581 §5) */
	uint32_t max_qp_init_rd_atom; /**< ORD limit */
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_inline_data;
	uint32_t phys_port_cnt;
	uint32_t max_mw;              /**< memory windows (0 from servers without them) */
};
static_assert(sizeof(struct wn_ctl_device_attr) == 168, "wn_ctl_device_attr layout");

/* ---- QUERY_PORT ---- */
struct wn_ctl_port_req {
	uint32_t port; /**< 1-based */
	uint32_t rsvd;
};
struct wn_ctl_port_attr {
	uint32_t state;       /**< IBV_PORT_* numbering: 4 = ACTIVE */
	uint32_t max_mtu;     /**< IBV_MTU_* numbering */
	uint32_t active_mtu;  /**< IBV_MTU_* numbering */
	uint32_t mtu_bytes;   /**< L3 MTU of the port */
	uint32_t max_msg_sz;
	uint32_t speed_mbps;
	uint32_t n_gids;
	uint32_t rsvd;
	uint8_t mac[8];       /**< 6 used */
	uint8_t gid[WN_CTL_MAX_GIDS][16]; /**< IPv4-mapped IPv4 or IPv6 address */
};
static_assert(sizeof(struct wn_ctl_port_attr) == 168, "wn_ctl_port_attr layout");

/* ---- PD / generic handle ---- */
struct wn_ctl_handle {
	uint32_t handle;
	uint32_t rsvd;
};

/*
 * ---- REG_MR and MR_PIECES: the memory of an MR as the objects that hold it ----
 *
 * A piece is a run of the client's pages and the object behind them, which warpnicd maps
 * itself (MAP_SHARED): the pages stay the client's own, nothing is copied. The pieces of an
 * MR follow each other in the client's address space, each starting where the one before
 * ended, from the page that holds the MR's first octet to the page that holds its last; each
 * is aligned to its own page size and a multiple of it (a hugetlbfs piece may so start before
 * the MR or end after it). REG_MR carries the first WN_CTL_MR_MSG_PIECES pieces; when an MR has
 * more (a DPDK heap: a file per hugepage), MR_PIECES messages carry the rest, in order, and the
 * response to the message that completes it has the keys.
 */
/** IBV_ACCESS_* compatible access bits accepted by REG_MR. */
#define WN_CTL_ACCESS_LOCAL_WRITE  (1u << 0)
#define WN_CTL_ACCESS_REMOTE_WRITE (1u << 1)
#define WN_CTL_ACCESS_REMOTE_READ  (1u << 2)
#define WN_CTL_ACCESS_REMOTE_ATOMIC (1u << 3)
#define WN_CTL_ACCESS_MW_BIND      (1u << 4) /**< memory windows may be bound to the MR */
#define WN_CTL_ACCESS_MASK         0x1fu
/**
 * The access bits that need writable memory, as Linux's ib_access_writable() counts them: a
 * window bound to the MR may grant write access.
 */
#define WN_CTL_ACCESS_WRITABLE (WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE | \
				WN_CTL_ACCESS_REMOTE_ATOMIC | WN_CTL_ACCESS_MW_BIND)

/** Where warpnicd finds a piece's object. */
enum wn_ctl_mr_src {
	/** the message's fd number fd_index: a regular file (memfd, tmpfs or POSIX shm,
	 *  hugetlbfs, SysV shm, a file of a disk filesystem), opened read-write when the MR
	 *  needs writable memory */
	WN_CTL_MR_SRC_FD = 1,
	/** the client's own shared mapping at addr, which it may not open itself
	 *  (/proc/self/map_files needs CAP_CHECKPOINT_RESTORE): warpnicd opens it through
	 *  /proc/PID/map_files after checking it in the client's /proc/PID/maps (shared, writable
	 *  if the MR needs it, at offset) */
	WN_CTL_MR_SRC_PEER = 2,
};

struct wn_ctl_mr_piece {
	uint64_t addr;       /**< client address of the first octet, a page multiple */
	uint64_t len;        /**< octets, a page multiple, > 0 */
	uint64_t offset;     /**< where the piece starts in its object, a page multiple */
	uint8_t src;         /**< enum wn_ctl_mr_src */
	uint8_t page_shift;  /**< 12 (4 KiB pages), 21 (2 MiB) or 30 (1 GiB hugetlbfs pages) */
	uint8_t fd_index;    /**< WN_CTL_MR_SRC_FD: which fd of the message; else 0 */
	uint8_t rsvd0;
	uint32_t rsvd;
};
static_assert(sizeof(struct wn_ctl_mr_piece) == 32, "wn_ctl_mr_piece layout");

struct wn_ctl_reg_mr_req {
	uint32_t pd;
	uint32_t access;   /**< WN_CTL_ACCESS_* */
	uint64_t addr;     /**< client virtual address of the first byte */
	uint64_t length;   /**< > 0 */
	uint64_t iova;     /**< address remote peers use (ibv_reg_mr_iova2) */
	uint64_t span;     /**< octets from piece[0].addr to the end of the MR's last piece */
	uint32_t flags;    /**< WN_CTL_MR_F_* */
	uint32_t n_total;  /**< pieces of the whole MR: 1..WN_CTL_MR_PIECES_MAX */
	uint32_t n_pieces; /**< pieces in this message: 1..WN_CTL_MR_MSG_PIECES, at most n_total */
	uint32_t align_shift; /**< the largest page_shift among all the MR's pieces */
	struct wn_ctl_mr_piece piece[WN_CTL_MR_MSG_PIECES];
};
/**
 * flags: allocate a fast-register MR (RFC 5042 §4.2) over [addr, addr+length) as its
 * backing memory instead of registering it: the STag stays invalid until a FAST_REG WQE gives
 * it a key, range and rights; access and iova must be 0. Deregistered with DEREG_MR.
 */
#define WN_CTL_MR_F_FAST_REG (1u << 0)
/**
 * flags: the new registration of an ibv_rereg_mr: its STag stays invalid (nothing reaches
 * its memory through it) until REREG_MR gives it the old MR's STag. Not with FAST_REG.
 */
#define WN_CTL_MR_F_REREG    (1u << 1)
static_assert(sizeof(struct wn_ctl_reg_mr_req) == 56 + 32 * WN_CTL_MR_MSG_PIECES,
	      "wn_ctl_reg_mr_req layout");

/** MR_PIECES: the next pieces of an MR whose REG_MR did not carry them all. */
struct wn_ctl_mr_pieces_req {
	uint32_t mr;       /**< the handle REG_MR answered */
	uint32_t n_pieces; /**< 1..WN_CTL_MR_MSG_PIECES */
	struct wn_ctl_mr_piece piece[WN_CTL_MR_MSG_PIECES];
};
static_assert(sizeof(struct wn_ctl_mr_pieces_req) == 8 + 32 * WN_CTL_MR_MSG_PIECES,
	      "wn_ctl_mr_pieces_req layout");

/** Response of REG_MR and MR_PIECES. */
struct wn_ctl_reg_mr_resp {
	uint32_t mr;
	uint32_t lkey;    /**< 0 while pieces are missing */
	uint32_t rkey;
	uint32_t pending; /**< pieces still to come in MR_PIECES messages; 0: registered */
};

/**
 * REREG_MR (ibv_rereg_mr keeping the keys): MR @p mr, registered with what changes, takes the
 * STag of MR @p old, which is deregistered; the response (struct wn_ctl_reg_mr_resp) carries
 * @p old's keys. On failure both MRs are as they were: -EINVAL (not two registered MRs of the
 * client, a fast-register MR), -EBUSY (windows are bound to @p old).
 */
struct wn_ctl_rereg_mr_req {
	uint32_t mr;  /**< the new registration's handle */
	uint32_t old; /**< the handle of the MR whose STag it takes */
};

/* ---- ALLOC_MW (DEALLOC_MW takes a struct wn_ctl_handle) ---- */
struct wn_ctl_alloc_mw_req {
	uint32_t pd;
	uint32_t type; /**< 1 (PD-associated) or 2 (QP-associated, invalidatable): IBV_MW_TYPE_* */
};
struct wn_ctl_alloc_mw_resp {
	uint32_t mw;   /**< handle */
	uint32_t rkey; /**< window STag, invalid until bound (BIND_MW WQE with a new key) */
};

/* ---- CM_MIGRATE_ID: the id's later events go to another channel (rdma_migrate_id) ---- */
struct wn_ctl_cm_migrate_req {
	uint32_t id;
	uint32_t channel;
};

/*
 * ---- BELL: the dataplane lcores' doorbells (wn_queue.h, "Lcore doorbells"); fd = the bell
 * page memfd (bell == WN_CTL_BELL_PAGE; map it read-only, WN_QUEUE_BELL_PAGE_SIZE octets) or
 * the eventfd of bell @c bell. -ENOENT: the server has no bells (or not that many): a client
 * then never rings. ----
 */
#define WN_CTL_BELL_PAGE 0xffffffffu
struct wn_ctl_bell_req {
	uint32_t bell; /**< bell index, or WN_CTL_BELL_PAGE */
	uint32_t rsvd;
};
struct wn_ctl_bell_resp {
	uint32_t n_bells; /**< bells in the page (dataplane lcores) */
	uint32_t rsvd;
};

/* ---- CREATE_CQ: optional fd = notification fd (pipe/eventfd write side) ---- */
#define WN_CTL_CQ_NOTIFY_FD (1u << 0)
struct wn_ctl_create_cq_req {
	uint32_t cqe;
	uint32_t flags;   /**< WN_CTL_CQ_NOTIFY_FD: one fd attached */
	uint64_t cookie;  /**< written (8 octets) to the notification fd on each event */
};
/** Response of CREATE_CQ / CREATE_SRQ / CREATE_QP: fd = ring memfd of ring_size octets. */
struct wn_ctl_ring_resp {
	uint32_t handle;
	uint32_t qpn;       /**< QP number (CREATE_QP only) */
	uint32_t depth[2];  /**< CQ: [0] = CQEs; QP: [0] = SQ WRs, [1] = RQ WRs; SRQ: [0] = WRs */
	uint32_t sge[2];    /**< QP: [0] send SGEs, [1] recv SGEs; SRQ: [0] */
	uint32_t max_inline;
	uint32_t rsvd;
	uint64_t ring_size;
};
static_assert(sizeof(struct wn_ctl_ring_resp) == 40, "wn_ctl_ring_resp layout");

/* ---- SRQ ---- */
struct wn_ctl_create_srq_req {
	uint32_t pd;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};
struct wn_ctl_modify_srq_req {
	uint32_t srq;
	uint32_t mask;      /**< 1 = max_wr (unsupported: resize), 2 = srq_limit */
	uint32_t max_wr;
	uint32_t srq_limit;
};

/* ---- QP ---- */
enum wn_ctl_qp_type {
	WN_CTL_QPT_RC = 2, /**< IBV_QPT_RC: the type an RNIC offers */
	WN_CTL_QPT_UD = 4, /**< IBV_QPT_UD: unreliable datagrams, a warpnic extension over UDP */
};
struct wn_ctl_create_qp_req {
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq; /**< 0 = none */
	uint32_t qp_type;
	uint32_t sq_sig_all;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t rsvd;
	uint64_t cookie; /**< client's QP context, reported back in events */
};
static_assert(sizeof(struct wn_ctl_create_qp_req) == 56, "wn_ctl_create_qp_req layout");

/** QP states, IBV_QPS_* numbering (RFC 5040 §6.2 maps RTS to iWARP RTS, ERR to Error). */
enum wn_ctl_qp_state {
	WN_CTL_QPS_RESET = 0,
	WN_CTL_QPS_INIT,
	WN_CTL_QPS_RTR,
	WN_CTL_QPS_RTS,
	WN_CTL_QPS_SQD,
	WN_CTL_QPS_SQE,
	WN_CTL_QPS_ERR,
	WN_CTL_QPS_MAX
};
/** MODIFY_QP mask bits (IBV_QP_* subset, same values). */
#define WN_CTL_QP_STATE          (1u << 0)
#define WN_CTL_QP_ACCESS_FLAGS   (1u << 3)
#define WN_CTL_QP_PKEY_INDEX     (1u << 4)  /**< UD: @c ud.pkey_index */
#define WN_CTL_QP_PORT           (1u << 5)  /**< UD: @c ud.port_num */
#define WN_CTL_QP_QKEY           (1u << 6)  /**< UD: @c ud.qkey */
#define WN_CTL_QP_AV             (1u << 7)  /**< the peer's address: @c dgid, @c sgid_index */
#define WN_CTL_QP_PATH_MTU       (1u << 8)
#define WN_CTL_QP_TIMEOUT        (1u << 9)
#define WN_CTL_QP_RETRY_CNT      (1u << 10)
#define WN_CTL_QP_RNR_RETRY      (1u << 11)
#define WN_CTL_QP_RQ_PSN         (1u << 12)
#define WN_CTL_QP_MAX_QP_RD_ATOMIC (1u << 13)
#define WN_CTL_QP_MIN_RNR_TIMER  (1u << 15)
#define WN_CTL_QP_SQ_PSN         (1u << 16) /**< RC: @c path.sq_psn; UD: @c ud.sq_psn */
#define WN_CTL_QP_MAX_DEST_RD_ATOMIC (1u << 17)
#define WN_CTL_QP_DEST_QPN       (1u << 20)
#define WN_CTL_QP_MASK (WN_CTL_QP_STATE | WN_CTL_QP_ACCESS_FLAGS | WN_CTL_QP_PKEY_INDEX | \
			WN_CTL_QP_PORT | WN_CTL_QP_QKEY | WN_CTL_QP_AV | \
			WN_CTL_QP_PATH_MTU | WN_CTL_QP_TIMEOUT | WN_CTL_QP_RETRY_CNT | \
			WN_CTL_QP_RNR_RETRY | WN_CTL_QP_RQ_PSN | WN_CTL_QP_MAX_QP_RD_ATOMIC | \
			WN_CTL_QP_MIN_RNR_TIMER | WN_CTL_QP_SQ_PSN | \
			WN_CTL_QP_MAX_DEST_RD_ATOMIC | WN_CTL_QP_DEST_QPN)
/**
 * The attributes of a move to RTR that connect a QP InfiniBand-style (both set, no CM id
 * bound): warpnicd connects it to QP @c dest_qp_num at the address @c dgid names.
 */
#define WN_CTL_QP_IB_PATH (WN_CTL_QP_AV | WN_CTL_QP_DEST_QPN)

/**
 * The path of an RC QP as InfiniBand names it (struct ibv_qp_attr). On iWARP the GID is an IP
 * address (IPv4-mapped IPv6 for IPv4, as RoCEv2 and iWARP devices give it); PSNs, the path
 * MTU and the RNR attributes are kept and reported, not used on the wire.
 */
struct wn_ctl_qp_path {
	uint8_t dgid[16];     /**< the peer's GID (WN_CTL_QP_AV) */
	uint32_t dest_qp_num; /**< < 2^24 (WN_CTL_QP_DEST_QPN) */
	uint32_t rq_psn;      /**< < 2^24 */
	uint32_t sq_psn;      /**< < 2^24 */
	uint8_t is_global;    /**< the AV has a GRH (needed for an address: iWARP has no LIDs) */
	uint8_t sgid_index;   /**< our GID (address) to use */
	uint8_t path_mtu;     /**< IBV_MTU_256 (1) .. IBV_MTU_4096 (5) */
	uint8_t timeout;      /**< local ACK timeout, 4.096 us * 2^timeout (0: none), < 32 */
	uint8_t retry_cnt;    /**< <= 7 */
	uint8_t rnr_retry;    /**< <= 7 */
	uint8_t min_rnr_timer; /**< < 32 */
	uint8_t rsvd;
};
static_assert(sizeof(struct wn_ctl_qp_path) == 36, "wn_ctl_qp_path layout");

/** The attributes a UD QP has, the ones the mask names. */
#define WN_CTL_QP_UD_MASK (WN_CTL_QP_STATE | WN_CTL_QP_PKEY_INDEX | WN_CTL_QP_PORT | \
			   WN_CTL_QP_QKEY | WN_CTL_QP_SQ_PSN)

/** A UD QP's own attributes (IBV_QP_QKEY and friends). */
struct wn_ctl_qp_ud {
	uint32_t qkey;       /**< datagrams must carry it to be received (IBTA 10.2.5) */
	uint32_t sq_psn;     /**< < 2^24; kept and reported, not used on the wire */
	uint16_t pkey_index; /**< 0: the one P_Key (0xffff) */
	uint8_t port_num;    /**< 1 */
	uint8_t rsvd;
};
static_assert(sizeof(struct wn_ctl_qp_ud) == 12, "wn_ctl_qp_ud layout");

struct wn_ctl_modify_qp_req {
	uint32_t qp;
	uint32_t mask;
	uint32_t qp_state;
	uint32_t access;
	uint32_t max_rd_atomic;      /**< ORD */
	uint32_t max_dest_rd_atomic; /**< IRD */
	struct wn_ctl_qp_path path;  /**< the IB path attributes the mask names (RC) */
	struct wn_ctl_qp_ud ud;      /**< the UD attributes the mask names */
};
static_assert(sizeof(struct wn_ctl_modify_qp_req) == 72, "wn_ctl_modify_qp_req layout");
struct wn_ctl_qp_attr {
	uint32_t qp_state;
	uint32_t access;
	uint32_t max_rd_atomic;
	uint32_t max_dest_rd_atomic;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t qpn;
	uint32_t path_mask;          /**< the WN_CTL_QP_* path attributes ever set */
	struct wn_ctl_qp_path path;  /**< their values */
	uint32_t qp_type;            /**< enum wn_ctl_qp_type */
	struct wn_ctl_qp_ud ud;      /**< UD QPs: their attributes */
};
static_assert(sizeof(struct wn_ctl_qp_attr) == 96, "wn_ctl_qp_attr layout");

/* ---- CM ---- */
/** rdma_cm port spaces accepted by CM_CREATE_ID. */
#define WN_CTL_PS_TCP 0x0106
/** UD QPs through rdma_cm (SIDR-style resolution between warpnic instances). */
#define WN_CTL_PS_UDP 0x0111
/** The Q_Key rdma_cm gives the UD QPs of RDMA_PS_UDP ids (librdmacm's RDMA_UDP_QKEY). */
#define WN_CTL_UDP_QKEY 0x01234567u
/** Most private data of a UDP id's CONNECT (a SIDR REQ's, less rdma_cm's header). */
#define WN_CTL_UDP_REQ_PD_MAX 180
/** Most private data of a UDP id's ACCEPT or REJECT (a SIDR REP's). */
#define WN_CTL_UDP_REP_PD_MAX 136
/**
 * Octets a UD message's datagram adds to it: an IPv6 header, UDP, and warpnic's UD header
 * with immediate data (40 + 8 + 20). The port's active MTU (QUERY_PORT) is the largest IB MTU
 * a message fits in with them: UD messages are bounded by it.
 */
#define WN_CTL_UD_OVERHEAD 68
/** Event types, RDMA_CM_EVENT_* numbering. */
enum wn_ctl_cm_event_type {
	WN_CTL_CM_EV_ADDR_RESOLVED = 0,
	WN_CTL_CM_EV_ADDR_ERROR,
	WN_CTL_CM_EV_ROUTE_RESOLVED,
	WN_CTL_CM_EV_ROUTE_ERROR,
	WN_CTL_CM_EV_CONNECT_REQUEST,
	WN_CTL_CM_EV_CONNECT_RESPONSE,
	WN_CTL_CM_EV_CONNECT_ERROR,
	WN_CTL_CM_EV_UNREACHABLE,
	WN_CTL_CM_EV_REJECTED,
	WN_CTL_CM_EV_ESTABLISHED,
	WN_CTL_CM_EV_DISCONNECTED,
	WN_CTL_CM_EV_DEVICE_REMOVAL,
	WN_CTL_CM_EV_MAX
};

/** rdma_conn_param subset; ird/ord are negotiated as in RFC 6581 §5 (Enhanced MPA). */
struct wn_ctl_conn_param {
	uint32_t ird; /**< responder_resources */
	uint32_t ord; /**< initiator_depth */
	uint32_t flags; /**< bit 0: flow_control; bit 1: srq */
	uint32_t pd_len; /**< <= WN_CTL_PD_MAX */
	uint8_t pd[WN_CTL_PD_MAX];
};
static_assert(sizeof(struct wn_ctl_conn_param) == 16 + WN_CTL_PD_MAX, "conn_param layout");

struct wn_ctl_cm_create_id_req {
	uint32_t channel;
	uint32_t ps;     /**< WN_CTL_PS_TCP or WN_CTL_PS_UDP */
	uint64_t cookie; /**< client's id context, echoed in events */
};
struct wn_ctl_cm_addr_req {
	uint32_t id;
	uint32_t timeout_ms; /**< RESOLVE_ADDR/ROUTE; LISTEN: backlog */
	struct wn_ctl_addr src; /**< BIND: the address; RESOLVE_ADDR: optional source */
	struct wn_ctl_addr dst; /**< RESOLVE_ADDR: the destination */
};
/** Response of BIND / RESOLVE_ADDR / LISTEN: the id's addresses after the call. */
struct wn_ctl_cm_addr_resp {
	struct wn_ctl_addr src;
	struct wn_ctl_addr dst;
};
struct wn_ctl_cm_conn_req {
	uint32_t id;
	uint32_t qp; /**< CONNECT/ACCEPT: the QP to bind (0: none, rdma_establish style) */
	struct wn_ctl_conn_param param; /**< REJECT uses pd_len/pd only */
};

/** CM event, sent on the channel socket; hdr.op = WN_CTL_CM_EVENT, hdr.seq counts. */
struct wn_ctl_cm_event {
	uint32_t event;  /**< enum wn_ctl_cm_event_type */
	int32_t status;  /**< 0 or -errno (REJECTED: -ECONNREFUSED) */
	uint32_t id;     /**< the id concerned (CONNECT_REQUEST: the new id) */
	uint32_t listen_id; /**< CONNECT_REQUEST: the listener, else 0 */
	uint64_t cookie; /**< cookie of the id (CONNECT_REQUEST: the listener's) */
	struct wn_ctl_addr src;
	struct wn_ctl_addr dst;
	uint32_t qpn;    /**< UDP ids' ESTABLISHED: the passive side's QP number */
	uint32_t qkey;   /**< ... and its Q_Key */
	struct wn_ctl_conn_param param;
};
static_assert(sizeof(struct wn_ctl_cm_event) == 24 + 48 + 8 + sizeof(struct wn_ctl_conn_param),
	      "cm_event layout");

/**
 * Async event types (ibv_get_async_event), IBV_EVENT_* numbering. What warpnicd raises, as
 * Linux siw does for the same causes: QP_ACCESS_ERR on the QP that terminated the connection
 * for a remote access violation (RDMAP Remote Protection, DDP tagged buffer errors), QP_FATAL
 * on a QP whose connection ended with any other Terminate sent or with one received,
 * CQ_ERR on a CQ that overflowed, SRQ_LIMIT_REACHED when an armed SRQ limit is crossed.
 */
enum wn_ctl_async_type {
	WN_CTL_ASYNC_CQ_ERR = 0,
	WN_CTL_ASYNC_QP_FATAL = 1,
	WN_CTL_ASYNC_QP_ACCESS_ERR = 3,
	WN_CTL_ASYNC_SRQ_LIMIT_REACHED = 15,
};

/**
 * Async event, sent on the client's async socket (WN_CTL_ASYNC_CHANNEL); hdr.op =
 * WN_CTL_ASYNC_EVENT, hdr.seq counts.
 */
struct wn_ctl_async_event {
	uint32_t event;      /**< enum wn_ctl_async_type */
	uint32_t handle;     /**< the QP, SRQ or CQ concerned (by the event type) */
	uint32_t vendor_err; /**< QP events: the Terminate's cause, layer << 12 | etype << 8 |
			      *   code (RFC 5040 §7.1); else 0 */
	uint32_t rsvd;
};
static_assert(sizeof(struct wn_ctl_async_event) == 16, "async_event layout");

/** Sizes and fd counts an op's messages must have. */
struct wn_ctl_op_info {
	const char *name;
	uint16_t req_len;   /**< request body octets */
	uint16_t resp_len;  /**< response body octets */
	uint8_t req_fds_max; /**< fds a request may carry (exact count checked per op) */
	uint8_t resp_fds;   /**< fds a successful response carries */
};

/**
 * Describe an operation.
 * @param op
 *   enum wn_ctl_op value.
 * @return
 *   The op's description, or NULL when @p op is not a valid request op.
 *   Thread-safe (constant table).
 */
const struct wn_ctl_op_info *wn_ctl_op_info(uint32_t op);

/**
 * Validate a request as the server receives it: header, exact size for the op, fd count,
 * enum ranges, length bounds and reserved-zero fields. Semantic checks (does the handle
 * exist, does it belong to this client) are the server's.
 *
 * @param buf
 *   The datagram.
 * @param len
 *   Its length as received (a truncated datagram must be passed with MSG_TRUNC's length).
 * @param nfds
 *   Number of SCM_RIGHTS fds that came with it.
 * @return
 *   0 if well formed, -EBADMSG for a bad header or size, -EPROTO for a bad version,
 *   -EOPNOTSUPP for an unknown op, -EINVAL for a bad field or fd count.
 *   Thread-safe (pure).
 */
int wn_ctl_req_check(const void *buf, size_t len, unsigned int nfds);

/**
 * Validate a CM event message as the client receives it.
 * @return 0 if well formed, else -EBADMSG or -EINVAL. Thread-safe (pure).
 */
int wn_ctl_event_check(const void *buf, size_t len);

/**
 * Check an async event datagram read from the async socket (header + struct
 * wn_ctl_async_event): a known event type, a handle, reserved zero.
 * @return 0 if well formed, else -EBADMSG or -EINVAL. Thread-safe (pure).
 */
int wn_ctl_async_check(const void *buf, size_t len);

/**
 * Parse a lower layer's name as WN_CTL_LLP_ENV and warpnicd --llp give it: "mpa" (also "tcp",
 * "mpa-tcp") or "sctp"; NULL or "" is WN_CTL_LLP_DEFAULT.
 * @return an enum wn_ctl_llp value, or -EINVAL. Thread-safe (pure).
 */
int wn_ctl_llp_parse(const char *name);

/** @return the name of lower layer @p llp ("default", "mpa-tcp", "sctp", or "unknown"). */
const char *wn_ctl_llp_name(uint32_t llp);

/**
 * Send one message with optional fds.
 * @param sock
 *   SOCK_SEQPACKET socket.
 * @param msg
 *   Header and body; msg->len gives the size.
 * @param fds
 *   Fds to pass (may be NULL when @p nfds is 0).
 * @param nfds
 *   At most WN_CTL_MAX_FDS.
 * @return
 *   0, or -errno of sendmsg (-EPIPE when the peer is gone; SIGPIPE is never raised).
 *   Thread-safe if callers serialize use of @p sock.
 */
int wn_ctl_send(int sock, const struct wn_ctl_hdr *msg, const int *fds, unsigned int nfds);

/**
 * Receive one message with its fds (O_CLOEXEC). Excess fds are closed.
 * @param sock
 *   SOCK_SEQPACKET socket.
 * @param buf
 *   At least WN_CTL_MSG_MAX octets.
 * @param fds
 *   Array of WN_CTL_MAX_FDS receiving the fds.
 * @param nfds
 *   Out: how many fds were received.
 * @return
 *   Octets received (the full datagram size, even if it was truncated; a value larger than
 *   WN_CTL_MSG_MAX means truncation), 0 on EOF, or -errno.
 *   Thread-safe if callers serialize use of @p sock.
 */
long wn_ctl_recv(int sock, void *buf, int *fds, unsigned int *nfds);

/** wn_ctl_recv() with recvmsg() @p flags more (MSG_DONTWAIT: -EAGAIN when none is there). */
long wn_ctl_recv_flags(int sock, void *buf, int *fds, unsigned int *nfds, int flags);

/** Fill a header for @p op with body length @p body_len. Thread-safe. */
void wn_ctl_hdr_init(struct wn_ctl_hdr *h, uint16_t op, uint32_t seq, size_t body_len);

#ifdef __cplusplus
}
#endif

#endif /* WN_CTL_H */
