/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-nfs: an NFSv3-over-RDMA client tool. As mount.nfs does, it asks the server's MOUNT
 * service over ordinary TCP for the export's root file handle, then speaks NFSv3 over
 * RPC-over-RDMA (lib/rpcrdma): NULL, FSINFO, GETATTR, LOOKUP, READ (data by write chunk,
 * straight into registered buffers) and WRITE (data by read chunk). Credentials AUTH_SYS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nfs3.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

struct tool {
	struct wn_rpcrdma_opts o;
	const char *server;
	const char *export;
	const char *mount_host; /* NULL: the server */
	uint16_t mount_port;	/* 0: ask the portmapper (rpcbind) */
	uint32_t io;		/* 0: the server's rtmax/wtmax */
	uint32_t depth;
	bool stats;
	bool verbose;
	struct wn_rpcrdma_clnt *c;
	struct opaque_auth cred;
	char credbuf[MAX_AUTH_BYTES];
	char rootbuf[FHSIZE3];
	nfs_fh3 root;
	uint32_t rtmax, wtmax;
};

static int
die(const char *what, const char *why)
{
	fprintf(stderr, "wn-rpc-nfs: %s: %s\n", what, why);
	return 1;
}

/* ---- MOUNT over TCP (libtirpc) ---- */

static int
mount_root(struct tool *t)
{
	const char *host = t->mount_host != NULL ? t->mount_host : t->server;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(t->mount_port)};
	struct timeval tv = {.tv_sec = 10};
	struct addrinfo hints = {.ai_family = AF_INET}, *ai;
	int sock = RPC_ANYSOCK;
	dirpath path = (char *)t->export;
	mountres3 res;
	enum clnt_stat st;
	CLIENT *cl;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		if (getaddrinfo(host, NULL, &hints, &ai) != 0)
			return die(host, "unknown host");
		sa.sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		freeaddrinfo(ai);
	}
	/* port 0: clnttcp_create asks the host's portmapper, as mount.nfs does */
	cl = clnttcp_create(&sa, MOUNT_PROGRAM, MOUNT_V3, &sock, 0, 0);
	if (cl == NULL)
		return die("MOUNT over TCP", clnt_spcreateerror(host));
	cl->cl_auth = authunix_create_default();
	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&path,
		       (xdrproc_t)xdr_mountres3, (char *)&res, tv);
	if (st != RPC_SUCCESS) {
		fprintf(stderr, "wn-rpc-nfs: MNT %s: %s\n", t->export, clnt_sperrno(st));
		auth_destroy(cl->cl_auth);
		clnt_destroy(cl);
		return 1;
	}
	if (res.fhs_status != MNT3_OK) {
		fprintf(stderr, "wn-rpc-nfs: MNT %s: status %d\n", t->export, res.fhs_status);
		auth_destroy(cl->cl_auth);
		clnt_destroy(cl);
		return 1;
	}
	fhandle3 *fh = &res.mountres3_u.mountinfo.fhandle;

	memcpy(t->rootbuf, fh->fhandle3_val, fh->fhandle3_len);
	t->root.data.data_val = t->rootbuf;
	t->root.data.data_len = fh->fhandle3_len;
	xdr_free((xdrproc_t)xdr_mountres3, (char *)&res);
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
	return 0;
}

/* ---- NFS over RDMA ---- */

static void
call_init(struct tool *t, struct wn_rpcrdma_call *call, uint32_t proc, xdrproc_t xa,
	  const void *a, xdrproc_t xr, void *r)
{
	memset(call, 0, sizeof(*call));
	call->prog = NFS_PROGRAM;
	call->vers = NFS_V3;
	call->proc = proc;
	call->xargs = xa;
	call->args = a;
	call->xres = xr;
	call->res = r;
	call->cred = &t->cred;
}

static int
rpc(struct tool *t, struct wn_rpcrdma_call *call, const char *what)
{
	enum clnt_stat st = wn_rpcrdma_clnt_call(t->c, call);

	if (st != RPC_SUCCESS) {
		fprintf(stderr, "wn-rpc-nfs: %s: %s", what, clnt_sperrno(st));
		if (call->rdma_err != 0)
			fprintf(stderr, " (RDMA_ERROR %u)", call->rdma_err);
		fputc('\n', stderr);
		return 1;
	}
	return 0;
}

static const char *
nfs_err(nfsstat3 s)
{
	switch (s) {
	case NFS3ERR_NOENT:
		return "no such file or directory";
	case NFS3ERR_ACCES:
		return "permission denied";
	case NFS3ERR_NOTDIR:
		return "not a directory";
	case NFS3ERR_ISDIR:
		return "is a directory";
	case NFS3ERR_STALE:
		return "stale file handle";
	case NFS3ERR_BADHANDLE:
		return "bad file handle";
	case NFS3ERR_IO:
		return "I/O error";
	case NFS3ERR_INVAL:
		return "invalid argument";
	default:
		return "NFS error";
	}
}

static int
do_fsinfo(struct tool *t, bool print)
{
	FSINFO3args a = {.fsroot = t->root};
	FSINFO3res r;
	struct wn_rpcrdma_call call;
	int ret;

	memset(&r, 0, sizeof(r));
	call_init(t, &call, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args, &a,
		  (xdrproc_t)xdr_FSINFO3res, &r);
	if (rpc(t, &call, "FSINFO") != 0)
		return 1;
	ret = r.status != NFS3_OK;
	if (ret) {
		fprintf(stderr, "wn-rpc-nfs: FSINFO: %s (%d)\n", nfs_err(r.status), r.status);
	} else {
		FSINFO3resok *ok = &r.FSINFO3res_u.resok;

		t->rtmax = ok->rtmax;
		t->wtmax = ok->wtmax;
		if (print)
			printf("fsinfo: rtmax %u rtpref %u rtmult %u wtmax %u wtpref %u wtmult %u "
			       "dtpref %u maxfilesize %" PRIu64 " time_delta %u.%09u properties "
			       "%#x\n",
			       ok->rtmax, ok->rtpref, ok->rtmult, ok->wtmax, ok->wtpref, ok->wtmult,
			       ok->dtpref, (uint64_t)ok->maxfilesize, ok->time_delta.seconds,
			       ok->time_delta.nseconds, ok->properties);
	}
	xdr_free((xdrproc_t)xdr_FSINFO3res, (char *)&r);
	return ret;
}

/* Walk @p path from the root with LOOKUP; @p fh gets the handle (data in @p buf). */
static int
walk(struct tool *t, const char *path, nfs_fh3 *fh, char *buf, fattr3 *attr)
{
	char *copy = strdup(path), *save = NULL, *name;
	int ret = 0;

	if (copy == NULL)
		return 1;
	memcpy(buf, t->root.data.data_val, t->root.data.data_len);
	fh->data.data_val = buf;
	fh->data.data_len = t->root.data.data_len;
	if (attr != NULL)
		memset(attr, 0, sizeof(*attr));
	for (name = strtok_r(copy, "/", &save); name != NULL; name = strtok_r(NULL, "/", &save)) {
		LOOKUP3args a = {.what = {.dir = *fh, .name = name}};
		LOOKUP3res r;
		struct wn_rpcrdma_call call;

		memset(&r, 0, sizeof(r));
		call_init(t, &call, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a,
			  (xdrproc_t)xdr_LOOKUP3res, &r);
		if (rpc(t, &call, "LOOKUP") != 0) {
			ret = 1;
			break;
		}
		if (r.status != NFS3_OK) {
			fprintf(stderr, "wn-rpc-nfs: LOOKUP %s: %s (%d)\n", name, nfs_err(r.status),
				r.status);
			xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
			ret = 1;
			break;
		}
		LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;

		memcpy(buf, ok->object.data.data_val, ok->object.data.data_len);
		fh->data.data_len = ok->object.data.data_len;
		if (attr != NULL && ok->obj_attributes.attributes_follow)
			*attr = ok->obj_attributes.post_op_attr_u.attributes;
		xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
	}
	free(copy);
	return ret;
}

static int
getattr(struct tool *t, const nfs_fh3 *fh, fattr3 *attr)
{
	GETATTR3args a = {.object = *fh};
	GETATTR3res r;
	struct wn_rpcrdma_call call;
	int ret;

	memset(&r, 0, sizeof(r));
	call_init(t, &call, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &a,
		  (xdrproc_t)xdr_GETATTR3res, &r);
	if (rpc(t, &call, "GETATTR") != 0)
		return 1;
	ret = r.status != NFS3_OK;
	if (ret)
		fprintf(stderr, "wn-rpc-nfs: GETATTR: %s (%d)\n", nfs_err(r.status), r.status);
	else
		*attr = r.GETATTR3res_u.resok.obj_attributes;
	xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&r);
	return ret;
}

static void
print_attr(const char *path, const fattr3 *a)
{
	printf("%s: type %d mode %04o nlink %u uid %u gid %u size %" PRIu64 " used %" PRIu64
	       " fsid %#" PRIx64 " fileid %" PRIu64 " mtime %u.%09u\n",
	       path, a->type, a->mode, a->nlink, a->uid, a->gid, (uint64_t)a->size,
	       (uint64_t)a->used, (uint64_t)a->fsid, (uint64_t)a->fileid, a->mtime.seconds,
	       a->mtime.nseconds);
}

/* ---- bulk READ / WRITE with calls outstanding ---- */

struct io {
	struct wn_rpcrdma_call call;
	uint8_t *buf;
	uint64_t off;
	uint32_t len;
	bool busy;
	union {
		READ3args r;
		WRITE3args w;
	} a;
	union {
		READ3res r;
		WRITE3res w;
	} res;
};

enum bulk { B_READ, B_WRITE, B_VERIFY };

static void
io_done(struct wn_rpcrdma_call *call)
{
	((struct io *)call->arg)->busy = false;
}

static int
bulk(struct tool *t, enum bulk kind, const nfs_fh3 *fh, int fd, uint64_t size)
{
	uint32_t io = t->io != 0 ? t->io : kind == B_WRITE ? t->wtmax : t->rtmax;
	struct io *ios = calloc(t->depth, sizeof(*ios));
	size_t mem_len = (size_t)t->depth * io;
	uint8_t *mem, *cmp = malloc(io);
	uint64_t next = 0, done = 0, mismatch = UINT64_MAX;
	struct timespec t0, t1;
	int errors = 0;

	if (io == 0 || io > (64u << 20))
		io = 1u << 20;
	mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ios == NULL || cmp == NULL || mem == MAP_FAILED)
		return die("bulk", "no memory");
	/* direct placement: the server reads/writes these buffers themselves */
	if (wn_rpcrdma_clnt_reg(t->c, mem, mem_len) != 0)
		return die("bulk", "cannot register the buffers");
	for (uint32_t i = 0; i < t->depth; i++)
		ios[i].buf = mem + (size_t)i * io;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < size) {
		for (uint32_t i = 0; i < t->depth && next < size; i++) {
			struct io *x = &ios[i];

			if (x->busy || x->call.prog != 0)
				continue;
			x->off = next;
			x->len = size - next < io ? (uint32_t)(size - next) : io;
			next += x->len;
			memset(&x->res, 0, sizeof(x->res));
			if (kind == B_WRITE) {
				if (pread(fd, x->buf, x->len, (off_t)x->off) != (ssize_t)x->len)
					return die("write", "reading the input file failed");
				x->a.w = (WRITE3args){.file = *fh, .offset = x->off, .count = x->len,
						      .stable = FILE_SYNC,
						      .data = {.data_len = x->len,
							       .data_val = (char *)x->buf}};
				call_init(t, &x->call, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args,
					  &x->a.w, (xdrproc_t)xdr_WRITE3res, &x->res.w);
				x->call.flags = WN_RPCRDMA_CALL_DDP_ARGS; /* RFC 8267 §5 */
			} else {
				x->a.r = (READ3args){.file = *fh, .offset = x->off, .count = x->len};
				x->res.r.READ3res_u.resok.data.data_val = (char *)x->buf;
				call_init(t, &x->call, NFSPROC3_READ, (xdrproc_t)xdr_READ3args,
					  &x->a.r, (xdrproc_t)xdr_READ3res, &x->res.r);
				x->call.ddp_buf = x->buf; /* the write chunk (RFC 8267 §5) */
				x->call.ddp_len = x->len;
				/* without a write chunk the data comes inline: then a reply chunk
				 * (with one the reply is small: xprtrdma offers none either, and
				 * knfsd would use one it is offered) */
				x->call.reply_max = x->len >= t->o.ddp_min ? 0 : x->len + 512;
			}
			x->call.done = io_done;
			x->call.arg = x;
			x->busy = true;
			if (wn_rpcrdma_clnt_start(t->c, &x->call) != 0)
				return die("NFS", "connection lost");
		}
		if (wn_rpcrdma_clnt_poll(t->c, 1000) < 0 && wn_rpcrdma_clnt_outstanding(t->c) == 0)
			return die("NFS", "connection lost");
		for (uint32_t i = 0; i < t->depth; i++) {
			struct io *x = &ios[i];

			if (x->busy || x->call.prog == 0)
				continue;
			x->call.prog = 0;
			done += x->len;
			if (x->call.stat != RPC_SUCCESS) {
				fprintf(stderr, "wn-rpc-nfs: %s at %" PRIu64 ": %s\n",
					kind == B_WRITE ? "WRITE" : "READ", x->off,
					clnt_sperrno(x->call.stat));
				errors++;
				continue;
			}
			if (kind == B_WRITE) {
				WRITE3res *r = &x->res.w;

				if (r->status != NFS3_OK || r->WRITE3res_u.resok.count != x->len) {
					fprintf(stderr, "wn-rpc-nfs: WRITE at %" PRIu64 ": %s\n",
						x->off, nfs_err(r->status));
					errors++;
				}
				xdr_free((xdrproc_t)xdr_WRITE3res, (char *)r);
				continue;
			}
			READ3res *r = &x->res.r;
			READ3resok *ok = &r->READ3res_u.resok;

			if (r->status != NFS3_OK || ok->count != x->len ||
			    ok->data.data_len != x->len || ok->data.data_val != (char *)x->buf) {
				fprintf(stderr, "wn-rpc-nfs: READ at %" PRIu64 ": %s (%u octets)\n",
					x->off, nfs_err(r->status), ok->data.data_len);
				errors++;
			} else if (kind == B_READ) {
				if (pwrite(fd, x->buf, x->len, (off_t)x->off) != (ssize_t)x->len)
					return die("read", "writing the output file failed");
			} else if (pread(fd, cmp, x->len, (off_t)x->off) != (ssize_t)x->len ||
				   memcmp(cmp, x->buf, x->len) != 0) {
				for (uint32_t j = 0; j < x->len; j++)
					if (cmp[j] != x->buf[j]) {
						if (x->off + j < mismatch)
							mismatch = x->off + j;
						break;
					}
				errors++;
			}
			/* the data pointed into our buffer: free only what xdr allocated */
			ok->data.data_val = NULL;
			ok->data.data_len = 0;
			xdr_free((xdrproc_t)xdr_READ3res, (char *)r);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	if (mismatch != UINT64_MAX)
		fprintf(stderr, "wn-rpc-nfs: verify: data differs at octet %" PRIu64 "\n", mismatch);
	printf("%s: %" PRIu64 " octets in %.3f s (%.1f MB/s), %u octets per call, %u outstanding%s\n",
	       kind == B_WRITE ? "write" : kind == B_READ ? "read" : "verify", size, s,
	       s > 0 ? size / s / 1e6 : 0, io, t->depth,
	       errors == 0 ? (kind == B_VERIFY ? ", identical" : "") : ", FAILED");
	wn_rpcrdma_clnt_dereg(t->c, mem);
	munmap(mem, mem_len);
	free(ios);
	free(cmp);
	return errors != 0;
}

static int
command(struct tool *t, int argc, char **argv)
{
	const char *cmd = argv[0];
	char fhbuf[NFS3_FHSIZE];
	nfs_fh3 fh;
	fattr3 attr;
	int fd, ret;

	if (strcmp(cmd, "null") == 0) {
		struct wn_rpcrdma_call call;

		call_init(t, &call, NFSPROC3_NULL, NULL, NULL, NULL, NULL);
		if (rpc(t, &call, "NULL") != 0)
			return 1;
		printf("null: ok\n");
		return 0;
	}
	if (strcmp(cmd, "fsinfo") == 0)
		return do_fsinfo(t, true);
	if (argc < 2)
		return die(cmd, "needs a path (see --help)");
	if (walk(t, argv[1], &fh, fhbuf, &attr) != 0)
		return 1;
	if (strcmp(cmd, "lookup") == 0) {
		printf("%s: handle ", argv[1]);
		for (u_int i = 0; i < fh.data.data_len; i++)
			printf("%02x", (uint8_t)fh.data.data_val[i]);
		putchar('\n');
		return 0;
	}
	if (getattr(t, &fh, &attr) != 0)
		return 1;
	if (strcmp(cmd, "getattr") == 0) {
		print_attr(argv[1], &attr);
		return 0;
	}
	if (attr.type != NF3REG)
		return die(argv[1], "not a regular file");
	if (strcmp(cmd, "read") == 0 || strcmp(cmd, "verify") == 0) {
		bool rd = cmd[0] == 'r';
		struct stat st;

		if (argc < 3)
			return die(cmd, "needs a local file");
		fd = rd ? open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(argv[2], O_RDONLY);
		if (fd < 0)
			return die(argv[2], strerror(errno));
		if (!rd && (fstat(fd, &st) != 0 || (uint64_t)st.st_size != attr.size)) {
			fprintf(stderr, "wn-rpc-nfs: verify: %s has %" PRIu64 " octets, %s %lld\n",
				argv[1], (uint64_t)attr.size, argv[2], (long long)st.st_size);
			close(fd);
			return 1;
		}
		ret = bulk(t, rd ? B_READ : B_VERIFY, &fh, fd, attr.size);
		close(fd);
		return ret;
	}
	if (strcmp(cmd, "write") == 0) {
		struct stat st;

		if (argc < 3)
			return die(cmd, "needs a local file");
		fd = open(argv[2], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) != 0)
			return die(argv[2], strerror(errno));
		ret = bulk(t, B_WRITE, &fh, fd, (uint64_t)st.st_size);
		close(fd);
		if (ret == 0 && getattr(t, &fh, &attr) == 0 && attr.size < (uint64_t)st.st_size)
			return die("write", "the file is shorter than what was written");
		return ret;
	}
	return die(cmd, "unknown command (see --help)");
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: wn-rpc-nfs --server ADDR --export PATH [options] COMMAND [ARGS]\n"
		"An NFSv3 client over RPC-over-RDMA (RFC 8267 with RFC 8166 / RFC 5666): the root\n"
		"file handle from MOUNT over TCP, then NFS over RDMA. On warpnic run it with\n"
		"warpnic-run.\n"
		"Commands:\n"
		"  null                  NFSPROC3_NULL\n"
		"  fsinfo                FSINFO of the export\n"
		"  lookup PATH           LOOKUP each component, print the file handle\n"
		"  getattr PATH          GETATTR\n"
		"  read PATH FILE        READ the whole file into FILE (data by write chunk)\n"
		"  write PATH FILE       WRITE FILE's contents from offset 0, FILE_SYNC (data by read\n"
		"                        chunk); the file must exist on the server\n"
		"  verify PATH FILE      READ the whole file and compare it with FILE\n"
		"Options:\n"
		"  --server ADDR         the NFS server's RDMA address\n"
		"  --export PATH         the export to mount (MOUNTPROC3_MNT)\n"
		"  --mount HOST          the MOUNT service's host (default: the server), over TCP\n"
		"  --mount-port N        its port (default 0: ask the host's portmapper)\n"
		"  --io N                octets per READ/WRITE (default: the server's rtmax/wtmax)\n"
		"  --depth N             calls outstanding (8)\n"
		"  --stats               print the transport's counters at the end\n"
		"Transport (the NFS/RDMA port 20049 by default; Linux uses --inline 4096):\n%s",
		wn_rpcrdma_opts_help);
}

enum { O_SERVER = 256, O_EXPORT, O_MOUNT, O_MPORT, O_IO, O_DEPTH, O_STATS, O_XPRT };

static const struct option app_opts[] = {
	{"server", required_argument, NULL, O_SERVER},
	{"export", required_argument, NULL, O_EXPORT},
	{"mount", required_argument, NULL, O_MOUNT},
	{"mount-port", required_argument, NULL, O_MPORT},
	{"io", required_argument, NULL, O_IO},
	{"depth", required_argument, NULL, O_DEPTH},
	{"stats", no_argument, NULL, O_STATS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};
static struct option long_opts[64]; /* app_opts, then the transport's */

static int
parse(int argc, char **argv, struct tool *t)
{
	int opt, idx = 0;
	uint64_t v;

	memset(t, 0, sizeof(*t));
	wn_rpcrdma_opts_default(&t->o);
	t->depth = 8;
	wn_rpcrdma_opts_long(long_opts, sizeof(long_opts) / sizeof(long_opts[0]), app_opts,
			     O_XPRT);
	while ((opt = getopt_long(argc, argv, "+h", long_opts, &idx)) != -1) {
		switch (opt) {
		case O_SERVER:
			t->server = optarg;
			break;
		case O_EXPORT:
			t->export = optarg;
			break;
		case O_MOUNT:
			t->mount_host = optarg;
			break;
		case O_STATS:
			t->stats = true;
			break;
		case O_MPORT:
		case O_IO:
		case O_DEPTH:
			if (wn_rpcrdma_parse_size(optarg, &v) != 0 || (opt == O_MPORT && v > 65535) ||
			    (opt == O_IO && (v < 1 || v > (64ul << 20))) ||
			    (opt == O_DEPTH && (v < 1 || v > 256)))
				goto bad;
			if (opt == O_MPORT)
				t->mount_port = (uint16_t)v;
			else if (opt == O_IO)
				t->io = (uint32_t)v;
			else
				t->depth = (uint32_t)v;
			break;
		case O_XPRT:
			if (wn_rpcrdma_opts_set(&t->o, long_opts[idx].name,
						long_opts[idx].has_arg ? optarg : NULL) != 0)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (t->server == NULL || t->export == NULL || optind >= argc) {
		fprintf(stderr, "wn-rpc-nfs: --server, --export and a command are needed (see "
				"--help)\n");
		return -EINVAL;
	}
	return optind;
bad:
	fprintf(stderr, "wn-rpc-nfs: bad value for --%s: '%s'\n", long_opts[idx].name, optarg);
	return -EINVAL;
}

int
main(int argc, char **argv)
{
	struct tool t;
	char host[256];
	int first, ret;

	first = parse(argc, argv, &t);
	if (first < 0)
		return 2;
	if (mount_root(&t) != 0)
		return 1;
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	if (wn_rpcrdma_auth_sys(&t.cred, t.credbuf, sizeof(t.credbuf), host, (uint32_t)getuid(),
				(uint32_t)getgid()) != 0)
		return die("AUTH_SYS", "credential too long");
	t.c = wn_rpcrdma_clnt_create(t.server, &t.o);
	if (t.c == NULL)
		return die(t.server, strerror(errno));
	ret = do_fsinfo(&t, false);
	if (ret == 0)
		ret = command(&t, argc - first, argv + first);
	if (t.stats) {
		struct wn_rpcrdma_info in;

		wn_rpcrdma_clnt_info(t.c, &in);
		printf("transport: calls %" PRIu64 " read_chunks %" PRIu64 " write_chunks %" PRIu64
		       " reply_chunks %" PRIu64 " long_calls %" PRIu64 " remote_inv %" PRIu64
		       " discarded %" PRIu64 " inline call %u reply %u credits %u\n",
		       in.calls, in.read_chunks, in.write_chunks, in.reply_chunks, in.long_calls,
		       in.remote_inv_count, in.discarded, in.call_inline, in.reply_inline,
		       in.credits);
	}
	wn_rpcrdma_clnt_destroy(t.c);
	return ret;
}
