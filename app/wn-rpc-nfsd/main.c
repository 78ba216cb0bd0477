/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-nfsd: a small NFSv3 server over RPC-over-RDMA (lib/rpcrdma), exporting one
 * directory tree: NULL, GETATTR, LOOKUP, READ (result data by write chunk, RDMA-Written
 * straight from registered read buffers), WRITE (data by read chunk), FSINFO; every other
 * procedure is PROC_UNAVAIL. MOUNT v3 (MNT, UMNT) is served over TCP by libtirpc on another
 * thread, as mountd is beside knfsd. File handles: the export's 8-octet id and the file's
 * inode number; the server remembers the path of every handle it gave out (a handle it
 * never gave out is NFS3ERR_STALE). A test fixture where a Linux NFS/RDMA server cannot be
 * had; it is not a general-purpose NFS server (no access control beyond the export: the
 * transport accepts AUTH_NONE and AUTH_SYS, and files are accessed as this process).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfs3.h"
#include "wn_rpcrdma_xprt.h"

#define FH_LEN 16
#define MAX_FILES 4096

struct file {
	uint64_t ino;
	char *path; /* absolute */
};

struct nfsd {
	const char *addr;
	const char *export; /* the directory (absolute, as MNT must name it) */
	const char *mount_addr;
	uint16_t mount_port;
	uint32_t max_io;
	struct wn_rpcrdma_opts o;
	uint64_t export_id;
	pthread_mutex_t lock; /* the file table: the MOUNT thread reads the root entry */
	struct file files[MAX_FILES];
	uint32_t nfiles;
	/* registered buffers READ results are RDMA-Written from */
	uint8_t *rbufs;
	uint32_t nrbufs;
	uint32_t *rfree;
	uint32_t nrfree;
	writeverf3 verf;
};

static struct nfsd g;
static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* ---- file handles ---- */

static void
make_fh(char *buf, uint64_t ino)
{
	memcpy(buf, &g.export_id, 8);
	memcpy(buf + 8, &ino, 8);
}

static const char *
fh_path(const nfs_fh3 *fh)
{
	uint64_t id, ino;
	const char *p = NULL;

	if (fh->data.data_len != FH_LEN)
		return NULL;
	memcpy(&id, fh->data.data_val, 8);
	memcpy(&ino, fh->data.data_val + 8, 8);
	if (id != g.export_id)
		return NULL;
	pthread_mutex_lock(&g.lock);
	for (uint32_t i = 0; i < g.nfiles; i++)
		if (g.files[i].ino == ino) {
			p = g.files[i].path;
			break;
		}
	pthread_mutex_unlock(&g.lock);
	return p;
}

static int
remember(const char *path, uint64_t ino)
{
	int ret = 0;

	pthread_mutex_lock(&g.lock);
	for (uint32_t i = 0; i < g.nfiles; i++)
		if (g.files[i].ino == ino)
			goto out;
	if (g.nfiles == MAX_FILES) {
		ret = -ENOSPC;
		goto out;
	}
	g.files[g.nfiles].path = strdup(path);
	if (g.files[g.nfiles].path == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	g.files[g.nfiles++].ino = ino;
out:
	pthread_mutex_unlock(&g.lock);
	return ret;
}

static nfsstat3
errno_stat(int e)
{
	switch (e) {
	case ENOENT:
		return NFS3ERR_NOENT;
	case EACCES:
	case EPERM:
		return NFS3ERR_ACCES;
	case ENOTDIR:
		return NFS3ERR_NOTDIR;
	case EISDIR:
		return NFS3ERR_ISDIR;
	case ENAMETOOLONG:
		return NFS3ERR_NAMETOOLONG;
	case ENOSPC:
		return NFS3ERR_NOSPC;
	case EFBIG:
		return NFS3ERR_FBIG;
	case EINVAL:
		return NFS3ERR_INVAL;
	default:
		return NFS3ERR_IO;
	}
}

static void
to_fattr(const struct stat *st, fattr3 *a)
{
	memset(a, 0, sizeof(*a));
	a->type = S_ISDIR(st->st_mode)	? NF3DIR
		  : S_ISLNK(st->st_mode) ? NF3LNK
		  : S_ISBLK(st->st_mode) ? NF3BLK
		  : S_ISCHR(st->st_mode) ? NF3CHR
		  : S_ISSOCK(st->st_mode) ? NF3SOCK
		  : S_ISFIFO(st->st_mode) ? NF3FIFO
					  : NF3REG;
	a->mode = st->st_mode & 07777;
	a->nlink = (uint32)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->size = (uint64)st->st_size;
	a->used = (uint64)st->st_blocks * 512;
	a->rdev.specdata1 = major(st->st_rdev);
	a->rdev.specdata2 = minor(st->st_rdev);
	a->fsid = g.export_id;
	a->fileid = st->st_ino;
	a->atime = (nfstime3){(uint32)st->st_atim.tv_sec, (uint32)st->st_atim.tv_nsec};
	a->mtime = (nfstime3){(uint32)st->st_mtim.tv_sec, (uint32)st->st_mtim.tv_nsec};
	a->ctime = (nfstime3){(uint32)st->st_ctim.tv_sec, (uint32)st->st_ctim.tv_nsec};
}

static void
post_attr(const char *path, post_op_attr *pa)
{
	struct stat st;

	pa->attributes_follow = path != NULL && stat(path, &st) == 0;
	if (pa->attributes_follow)
		to_fattr(&st, &pa->post_op_attr_u.attributes);
}

/* ---- NFS procedures (RDMA) ---- */

static enum accept_stat
nfs_null(void *a, void *r, struct wn_rpcrdma_req *rq)
{
	(void)a;
	(void)r;
	(void)rq;
	return SUCCESS;
}

/* @return the path of @p fh, or NULL with @p status set to NFS3ERR_STALE */
static const char *
resolve(const nfs_fh3 *fh, nfsstat3 *status)
{
	const char *path = fh_path(fh);

	if (path == NULL)
		*status = NFS3ERR_STALE;
	return path;
}

static enum accept_stat
nfs_getattr(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	GETATTR3args *a = args;
	GETATTR3res *r = res;
	const char *path = resolve(&a->object, &r->status);
	struct stat st;

	(void)rq;
	if (path != NULL && stat(path, &st) != 0)
		r->status = errno_stat(errno);
	else if (path != NULL)
		to_fattr(&st, &r->GETATTR3res_u.resok.obj_attributes);
	return SUCCESS;
}

static enum accept_stat
nfs_lookup(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	LOOKUP3args *a = args;
	LOOKUP3res *r = res;
	const char *dir = resolve(&a->what.dir, &r->status), *name = a->what.name;
	char path[PATH_MAX];
	struct stat st;

	(void)rq;
	if (dir == NULL)
		return SUCCESS;
	post_attr(dir, &r->LOOKUP3res_u.resfail.dir_attributes);
	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0) {
		r->status = strcmp(name != NULL ? name : "", "..") == 0 ? NFS3ERR_ACCES
								      : NFS3ERR_INVAL;
		return SUCCESS;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		r->status = NFS3ERR_NAMETOOLONG;
		return SUCCESS;
	}
	if (lstat(path, &st) != 0) {
		r->status = errno_stat(errno);
		return SUCCESS;
	}
	if (remember(path, st.st_ino) != 0) {
		r->status = NFS3ERR_SERVERFAULT;
		return SUCCESS;
	}
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	post_op_attr dir_attr = r->LOOKUP3res_u.resfail.dir_attributes;

	r->status = NFS3_OK;
	ok->object.data.data_val = malloc(FH_LEN);
	if (ok->object.data.data_val == NULL) {
		r->status = NFS3ERR_SERVERFAULT;
		return SUCCESS;
	}
	make_fh(ok->object.data.data_val, st.st_ino);
	ok->object.data.data_len = FH_LEN;
	ok->obj_attributes.attributes_follow = TRUE;
	to_fattr(&st, &ok->obj_attributes.post_op_attr_u.attributes);
	ok->dir_attributes = dir_attr;
	return SUCCESS;
}

static uint8_t *
rbuf_get(void)
{
	return g.nrfree == 0 ? NULL : g.rbufs + (size_t)g.rfree[--g.nrfree] * g.max_io;
}

static void
rbuf_put(void *p)
{
	g.rfree[g.nrfree++] = (uint32_t)(((uint8_t *)p - g.rbufs) / g.max_io);
}

static enum accept_stat
nfs_read(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	READ3args *a = args;
	READ3res *r = res;
	const char *path = resolve(&a->file, &r->status);
	READ3resok *ok = &r->READ3res_u.resok;
	uint8_t *buf;
	ssize_t n;
	int fd;

	(void)rq;
	if (path == NULL)
		return SUCCESS;
	if (a->count > g.max_io)
		a->count = g.max_io; /* rtmax (RFC 1813: the server may return less) */
	fd = open(path, O_RDONLY);
	buf = rbuf_get();
	if (fd < 0 || buf == NULL) {
		r->status = fd < 0 ? errno_stat(errno) : NFS3ERR_JUKEBOX;
		if (fd >= 0)
			close(fd);
		if (buf != NULL)
			rbuf_put(buf);
		post_attr(path, &r->READ3res_u.resfail.file_attributes);
		return SUCCESS;
	}
	n = pread(fd, buf, a->count, (off_t)a->offset);
	close(fd);
	if (n < 0) {
		r->status = errno_stat(errno);
		rbuf_put(buf);
		post_attr(path, &r->READ3res_u.resfail.file_attributes);
		return SUCCESS;
	}
	r->status = NFS3_OK;
	post_attr(path, &ok->file_attributes);
	ok->count = (count3)n;
	ok->eof = ok->file_attributes.attributes_follow &&
		  a->offset + (uint64_t)n >= ok->file_attributes.post_op_attr_u.attributes.size;
	/* a registered buffer: the transport RDMA-Writes the data from it */
	ok->data.data_val = (char *)buf;
	ok->data.data_len = (u_int)n;
	return SUCCESS;
}

static void
free_read(void *res, void *ctx)
{
	READ3res *r = res;

	(void)ctx;
	if (r->status == NFS3_OK && r->READ3res_u.resok.data.data_val != NULL) {
		rbuf_put(r->READ3res_u.resok.data.data_val);
		r->READ3res_u.resok.data.data_val = NULL;
		r->READ3res_u.resok.data.data_len = 0;
	}
	xdr_free((xdrproc_t)xdr_READ3res, (char *)r);
}

static enum accept_stat
nfs_write(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	WRITE3args *a = args;
	WRITE3res *r = res;
	const char *path = resolve(&a->file, &r->status);
	WRITE3resok *ok = &r->WRITE3res_u.resok;
	ssize_t n;
	int fd;

	(void)rq;
	if (path == NULL)
		return SUCCESS;
	if (a->count != a->data.data_len) {
		r->status = NFS3ERR_INVAL;
		return SUCCESS;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		r->status = errno_stat(errno);
		return SUCCESS;
	}
	n = pwrite(fd, a->data.data_val, a->data.data_len, (off_t)a->offset);
	if (n >= 0 && a->stable != UNSTABLE && fdatasync(fd) != 0)
		n = -1;
	close(fd);
	if (n < 0) {
		r->status = errno_stat(errno);
		return SUCCESS;
	}
	r->status = NFS3_OK;
	post_attr(path, &ok->file_wcc.after);
	ok->count = (count3)n;
	ok->committed = a->stable == UNSTABLE ? UNSTABLE : FILE_SYNC;
	memcpy(ok->verf, g.verf, sizeof(g.verf));
	return SUCCESS;
}

static enum accept_stat
nfs_fsinfo(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	FSINFO3args *a = args;
	FSINFO3res *r = res;
	const char *path = resolve(&a->fsroot, &r->status);
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;

	(void)rq;
	if (path == NULL)
		return SUCCESS;
	r->status = NFS3_OK;
	post_attr(path, &ok->obj_attributes);
	ok->rtmax = ok->rtpref = ok->wtmax = ok->wtpref = g.max_io;
	ok->rtmult = ok->wtmult = 4096;
	ok->dtpref = 4096;
	ok->maxfilesize = INT64_MAX;
	ok->time_delta = (nfstime3){0, 1};
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
	return SUCCESS;
}

#define PROC(n, fn_, ta, tr)                                                                      \
	[n] = {.fn = fn_,                                                                         \
	       .xargs = (xdrproc_t)xdr_##ta,                                                      \
	       .args_size = sizeof(ta),                                                           \
	       .xres = (xdrproc_t)xdr_##tr,                                                       \
	       .res_size = sizeof(tr)}

static const struct wn_rpcrdma_svc_proc nfs_procs[] = {
	[NFSPROC3_NULL] = {.fn = nfs_null},
	PROC(NFSPROC3_GETATTR, nfs_getattr, GETATTR3args, GETATTR3res),
	PROC(NFSPROC3_LOOKUP, nfs_lookup, LOOKUP3args, LOOKUP3res),
	[NFSPROC3_READ] = {.fn = nfs_read,
			   .xargs = (xdrproc_t)xdr_READ3args,
			   .args_size = sizeof(READ3args),
			   .xres = (xdrproc_t)xdr_READ3res,
			   .res_size = sizeof(READ3res),
			   .flags = WN_RPCRDMA_PROC_DDP_RESULT, /* RFC 8267 §5: READ data */
			   .free_res = free_read},
	PROC(NFSPROC3_WRITE, nfs_write, WRITE3args, WRITE3res),
	PROC(NFSPROC3_FSINFO, nfs_fsinfo, FSINFO3args, FSINFO3res),
};

/* ---- MOUNT over TCP (libtirpc svc, its own thread) ---- */

static bool_t
xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static void
mount_prog(struct svc_req *rq, SVCXPRT *x)
{
	dirpath path = NULL;
	mountres3 res;

	switch (rq->rq_proc) {
	case MOUNTPROC3_NULL:
		svc_sendreply(x, (xdrproc_t)xdr_nothing, NULL);
		return;
	case MOUNTPROC3_MNT:
		break;
	case MOUNTPROC3_UMNT:
		if (!svc_getargs(x, (xdrproc_t)xdr_dirpath, (char *)&path)) {
			svcerr_decode(x);
			return;
		}
		svc_freeargs(x, (xdrproc_t)xdr_dirpath, (char *)&path);
		svc_sendreply(x, (xdrproc_t)xdr_nothing, NULL);
		return;
	default:
		svcerr_noproc(x);
		return;
	}
	if (!svc_getargs(x, (xdrproc_t)xdr_dirpath, (char *)&path)) {
		svcerr_decode(x);
		return;
	}
	static char fh[FH_LEN];
	static int flavors[] = {AUTH_SYS};
	struct stat st;

	memset(&res, 0, sizeof(res));
	if (strcmp(path, g.export) != 0 || stat(g.export, &st) != 0) {
		res.fhs_status = MNT3ERR_NOENT;
	} else {
		make_fh(fh, st.st_ino);
		res.fhs_status = MNT3_OK;
		res.mountres3_u.mountinfo.fhandle.fhandle3_val = fh;
		res.mountres3_u.mountinfo.fhandle.fhandle3_len = FH_LEN;
		res.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = flavors;
		res.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 1;
	}
	svc_sendreply(x, (xdrproc_t)xdr_mountres3, (char *)&res);
	svc_freeargs(x, (xdrproc_t)xdr_dirpath, (char *)&path);
}

static void *
mount_thread(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

static int
mount_start(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(g.mount_port)};
	socklen_t len = sizeof(sa);
	pthread_t th;
	SVCXPRT *x;
	int s, one = 1;

	if (inet_pton(AF_INET, g.mount_addr, &sa.sin_addr) != 1)
		return -EINVAL;
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 16) != 0 ||
	    getsockname(s, (struct sockaddr *)&sa, &len) != 0) {
		int e = errno;

		close(s);
		return -e;
	}
	x = svctcp_create(s, 0, 0);
	/* protocol 0: not registered with a portmapper (clients give --mount-port) */
	if (x == NULL || !svc_register(x, MOUNT_PROGRAM, MOUNT_V3, mount_prog, 0))
		return -EIO;
	g.mount_port = ntohs(sa.sin_port);
	if (pthread_create(&th, NULL, mount_thread, NULL) != 0)
		return -EAGAIN;
	pthread_detach(th);
	return 0;
}

/* ---- main ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: wn-rpc-nfsd --addr ADDR --export DIR [options]\n"
		"A small NFSv3 server over RPC-over-RDMA (NULL, GETATTR, LOOKUP, READ, WRITE,\n"
		"FSINFO) exporting DIR; MOUNT v3 over TCP. On warpnic run it with\n"
		"warpnic-run.\n"
		"Options:\n"
		"  --addr ADDR           RDMA address to listen on (NFS/RDMA port 20049 by default)\n"
		"  --export DIR          the directory to export (absolute path; MNT names it)\n"
		"  --mount-addr ADDR     kernel TCP address of the MOUNT service (127.0.0.1)\n"
		"  --mount-port N        its port (0: any, printed at start)\n"
		"  --max-io N            rtmax/wtmax (1048576)\n"
		"Transport:\n%s",
		wn_rpcrdma_opts_help);
}

enum { O_ADDR = 256, O_EXPORT, O_MADDR, O_MPORT, O_MAXIO, O_XPRT };

static const struct option app_opts[] = {
	{"addr", required_argument, NULL, O_ADDR},
	{"export", required_argument, NULL, O_EXPORT},
	{"mount-addr", required_argument, NULL, O_MADDR},
	{"mount-port", required_argument, NULL, O_MPORT},
	{"max-io", required_argument, NULL, O_MAXIO},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};
static struct option long_opts[64]; /* app_opts, then the transport's */

int
main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct wn_rpcrdma_svc *s;
	struct wn_rpcrdma_info in;
	int opt, idx = 0, ret;
	uint64_t v;
	struct stat st;

	wn_rpcrdma_opts_default(&g.o);
	g.o.credits = 64; /* as knfsd grants */
	g.mount_addr = "127.0.0.1";
	g.max_io = 1u << 20;
	pthread_mutex_init(&g.lock, NULL);
	wn_rpcrdma_opts_long(long_opts, sizeof(long_opts) / sizeof(long_opts[0]), app_opts,
			     O_XPRT);
	while ((opt = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		switch (opt) {
		case O_ADDR:
			g.addr = optarg;
			break;
		case O_EXPORT:
			g.export = optarg;
			break;
		case O_MADDR:
			g.mount_addr = optarg;
			break;
		case O_MPORT:
		case O_MAXIO:
			if (wn_rpcrdma_parse_size(optarg, &v) != 0 || (opt == O_MPORT && v > 65535) ||
			    (opt == O_MAXIO && (v < 4096 || v > (16ul << 20))))
				goto bad;
			if (opt == O_MPORT)
				g.mount_port = (uint16_t)v;
			else
				g.max_io = (uint32_t)v;
			break;
		case O_XPRT:
			if (wn_rpcrdma_opts_set(&g.o, long_opts[idx].name,
						long_opts[idx].has_arg ? optarg : NULL) != 0)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (g.addr == NULL || g.export == NULL || g.export[0] != '/' || optind != argc) {
		fprintf(stderr, "wn-rpc-nfsd: --addr and --export (absolute) are needed\n");
		return 2;
	}
	if (stat(g.export, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "wn-rpc-nfsd: %s: not a directory\n", g.export);
		return 1;
	}
	g.export_id = ((uint64_t)st.st_dev << 32) ^ st.st_ino ^ 0x776e6e6673ull;
	for (size_t i = 0; i < sizeof(g.verf); i++)
		g.verf[i] = (char)(getpid() >> (8 * (i % 4)));
	remember(g.export, st.st_ino);
	if (g.o.max_msg < g.max_io + 4096)
		g.o.max_msg = g.max_io + 4096;
	/* the READ buffers are registered: READ data is RDMA-Written from them directly */
	g.nrbufs = g.o.credits;
	g.rbufs = mmap(NULL, (size_t)g.nrbufs * g.max_io, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g.rfree = calloc(g.nrbufs, sizeof(*g.rfree));
	if (g.rbufs == MAP_FAILED || g.rfree == NULL)
		return 1;
	for (uint32_t i = 0; i < g.nrbufs; i++)
		g.rfree[g.nrfree++] = i;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = mount_start();
	if (ret != 0) {
		fprintf(stderr, "wn-rpc-nfsd: MOUNT on %s:%u: %s\n", g.mount_addr, g.mount_port,
			strerror(-ret));
		return 1;
	}
	s = wn_rpcrdma_svc_create(g.addr, &g.o);
	if (s == NULL) {
		fprintf(stderr, "wn-rpc-nfsd: listening on %s: %s\n", g.addr, strerror(errno));
		return 1;
	}
	if (wn_rpcrdma_svc_register(s, NFS_PROGRAM, NFS_V3, nfs_procs,
				    sizeof(nfs_procs) / sizeof(nfs_procs[0]), NULL) != 0 ||
	    wn_rpcrdma_svc_reg(s, g.rbufs, (size_t)g.nrbufs * g.max_io) != 0) {
		fprintf(stderr, "wn-rpc-nfsd: setting up the service failed\n");
		return 1;
	}
	printf("wn-rpc-nfsd: exporting %s: NFSv3 over RDMA on %s port %u, MOUNT over TCP on "
	       "%s port %u\n",
	       g.export, g.addr, g.o.port, g.mount_addr, g.mount_port);
	fflush(stdout);
	while (!quit)
		if (wn_rpcrdma_svc_poll(s, 200) < 0)
			break;
	wn_rpcrdma_svc_info(s, &in);
	printf("nfsd: calls %" PRIu64 " read_chunks %" PRIu64 " write_chunks %" PRIu64
	       " reply_chunks %" PRIu64 " remote_inv %" PRIu64 " rdma_errors_sent %" PRIu64
	       " disconnects %" PRIu64 " placed %" PRIu64 " copied %" PRIu64 "\n",
	       in.calls, in.read_chunks, in.write_chunks, in.reply_chunks, in.remote_inv_count,
	       in.rdma_errors_sent, in.disconnects, in.bytes_placed, in.bytes_copied);
	wn_rpcrdma_svc_destroy(s);
	return 0;
bad:
	fprintf(stderr, "wn-rpc-nfsd: bad value for --%s: '%s'\n", long_opts[idx].name, optarg);
	return 2;
}
