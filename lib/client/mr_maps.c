/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What backs a range of this process: its mappings as /proc/self/maps lists them, the page
 * size of each (hugetlbfs), and an fd of the object behind a shared one.
 *
 * The object is opened the first way that works: /proc/self/map_files (the mapping itself,
 * whatever its name; needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN), the path maps shows
 * (a file that still has it), or an fd the process holds on the same inode (a memfd or a
 * POSIX shm object it kept open). Each is checked against the device and inode maps shows.
 * What none of them opens (a SysV segment, MAP_SHARED|MAP_ANONYMOUS memory, a closed
 * memfd, for an unprivileged program) warpnicd opens itself through /proc/PID/map_files
 * (WN_CTL_MR_SRC_PEER).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client_priv.h"

/* Names of kernel mappings that hold no program memory to register. */
static bool
vma_special(const char *path)
{
	if (path[0] != '[')
		return false;
	return strcmp(path, "[heap]") != 0 && strncmp(path, "[stack", 6) != 0 &&
	       strncmp(path, "[anon:", 6) != 0;
}

static int
vma_parse(const char *line, struct wn_client_vma *v)
{
	unsigned int maj, min;
	char perms[8];
	int name = 0;

	memset(v, 0, sizeof(*v));
	if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &v->lo,
		   &v->hi, perms, &v->off, &maj, &min, &v->ino, &name) < 7)
		return -EINVAL;
	if (name > 0) {
		snprintf(v->path, sizeof(v->path), "%s", line + name);
		v->path[strcspn(v->path, "\n")] = '\0';
	}
	v->dev = makedev(maj, min);
	v->r = perms[0] == 'r';
	v->w = perms[1] == 'w';
	v->x = perms[2] == 'x';
	v->shared = perms[3] == 's';
	v->anon = !v->shared && v->ino == 0;
	v->special = vma_special(v->path);
	v->shift = 12;
	return 0;
}

/*
 * Call @p fn for each line of /proc/self/maps until it returns non-zero (which is returned).
 * No malloc: a fork() child reads its maps before its heap is its own again.
 */
int
wn_client_maps_scan(int (*fn)(const struct wn_client_vma *v, void *arg), void *arg)
{
	char buf[4096], line[512];
	size_t l = 0;
	bool skip = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (ret == 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n && ret == 0; i++) {
			struct wn_client_vma v;

			if (buf[i] != '\n') {
				/* a path too long for the line: the rest of it is dropped */
				if (l < sizeof(line) - 1)
					line[l++] = buf[i];
				else
					skip = true;
				continue;
			}
			line[l] = '\0';
			l = 0;
			if (skip) {
				skip = false;
				if (vma_parse(line, &v) == 0)
					v.path[0] = '\0'; /* truncated: not to be opened by it */
				else
					continue;
			} else if (vma_parse(line, &v) != 0) {
				continue;
			}
			ret = fn(&v, arg);
		}
	}
	close(fd);
	return ret;
}

struct vma_list {
	struct wn_client_vma *v;
	uint32_t n, cap;
	uintptr_t lo, hi, covered;
	uint64_t dev, ino; /* maps_of */
	int err;
};

static int
list_add(struct vma_list *l, const struct wn_client_vma *v)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 8;
		struct wn_client_vma *g = realloc(l->v, cap * sizeof(*g));

		if (g == NULL)
			return -ENOMEM;
		l->v = g;
		l->cap = cap;
	}
	l->v[l->n++] = *v;
	return 0;
}

static int
range_cb(const struct wn_client_vma *v, void *arg)
{
	struct vma_list *l = arg;

	if (v->hi <= l->covered || v->lo >= l->hi)
		return l->covered >= l->hi ? 1 : 0;
	if (v->lo > l->covered)
		return 1; /* a hole */
	l->covered = v->hi;
	return list_add(l, v);
}

int
wn_client_maps_read(uintptr_t lo, uintptr_t hi, struct wn_client_vma **vmas, uint32_t *n)
{
	struct vma_list l = {.lo = lo, .hi = hi, .covered = lo};
	int ret = wn_client_maps_scan(range_cb, &l);

	if (ret < 0 || l.covered < hi) {
		free(l.v);
		return ret < 0 ? ret : -EFAULT;
	}
	*vmas = l.v;
	*n = l.n;
	return 0;
}

static int
of_cb(const struct wn_client_vma *v, void *arg)
{
	struct vma_list *l = arg;

	if (!v->shared || v->dev != l->dev || v->ino != l->ino)
		return 0;
	return list_add(l, v);
}

int
wn_client_maps_of(uint64_t dev, uint64_t ino, struct wn_client_vma **vmas, uint32_t *n)
{
	struct vma_list l = {.dev = dev, .ino = ino};
	int ret = wn_client_maps_scan(of_cb, &l);

	if (ret < 0) {
		free(l.v);
		return ret;
	}
	*vmas = l.v;
	*n = l.n;
	return 0;
}

/* The page size of the mapping at @p lo, from /proc/self/smaps (KernelPageSize). */
static int
smaps_shift(uintptr_t lo)
{
	char line[512];
	bool in = false;
	int shift = -ENOENT;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		uintptr_t a, b;
		unsigned long kb;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 && strchr(line, ':')) {
			if (in)
				break;
			in = a == lo;
			continue;
		}
		if (in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
			shift = 10;
			while ((1ul << (shift - 10)) < kb)
				shift++;
			break;
		}
	}
	fclose(f);
	return shift;
}

static int
statfs_shift(const struct statfs *s)
{
	int shift = 12;

	if (s->f_type != HUGETLBFS_MAGIC)
		return 12;
	while (((long)1 << shift) < (long)s->f_bsize)
		shift++;
	return shift;
}

static bool
deleted(const char *path)
{
	size_t l = strlen(path);

	return l >= 10 && strcmp(path + l - 10, " (deleted)") == 0;
}

int
wn_client_vma_shift(struct wn_client_vma *v, int fd)
{
	struct statfs s;
	int shift;

	if (v->ino == 0)
		shift = 12; /* anonymous memory: 4 KiB pages, transparent hugepages or not */
	else if (fd >= 0)
		shift = fstatfs(fd, &s) == 0 ? statfs_shift(&s) : -errno;
	else if (v->path[0] == '/' && !deleted(v->path) && statfs(v->path, &s) == 0)
		shift = statfs_shift(&s);
	else if (strncmp(v->path, "/anon_hugepage", 14) == 0 || v->path[0] == '/')
		shift = smaps_shift(v->lo); /* a deleted file, memfd, SysV or anonymous hugetlb */
	else
		shift = 12;
	if (shift < 0)
		return shift;
	if (shift != 12 && shift != 21 && shift != 30)
		return -EINVAL;
	v->shift = (uint8_t)shift;
	return 0;
}

static bool
same_object(int fd, const struct wn_client_vma *v)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == v->dev &&
	       st.st_ino == v->ino;
}

/* An fd this process holds on the object, opened again with @p mode. */
static int
open_held(const struct wn_client_vma *v, int mode)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char path[64];
		int n = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || n == dirfd(d) ||
		    !same_object(n, v))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", n);
		fd = open(path, mode);
		if (fd >= 0 && same_object(fd, v))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	closedir(d);
	return fd;
}

int
wn_client_vma_open(const struct wn_client_vma *v, bool writable)
{
	int mode = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%" PRIxPTR "-%" PRIxPTR, v->lo, v->hi);
	fd = open(path, mode);
	if (fd >= 0 && same_object(fd, v))
		return fd;
	if (fd >= 0)
		close(fd);
	if (v->path[0] == '/' && !deleted(v->path) && stat(v->path, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_dev == v->dev && st.st_ino == v->ino) {
		fd = open(v->path, mode);
		if (fd >= 0 && same_object(fd, v))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	fd = open_held(v, mode);
	return fd >= 0 ? fd : -ENOENT;
}
