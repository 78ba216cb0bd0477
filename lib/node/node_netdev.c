/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel interface that carries warpnicd's addresses (--netdev NAME), as an RNIC's
 * netdev carries its own: programs that open a TCP side channel to the device's address
 * (qperf, perftest without -R) or look for the RDMA device among the host's interfaces
 * (getifaddrs: libfabric's verbs provider, Open MPI) find it there.
 *
 * NAME is one end of a veth pair (the kernel names the other end), both up, so that the
 * interface is running and not a loopback one (libfabric skips those). Each address is
 * added with IFA_F_NOPREFIXROUTE (and IPv6 without DAD): the kernel delivers what is sent
 * to it locally and routes nothing new, so nothing warpnicd carries is taken by the kernel.
 * The interface's alias says which warpnicd owns it; one left behind by a warpnicd that is
 * gone is replaced, one of a live warpnicd or of anyone else is never touched.
 *
 * Plain rtnetlink, one request at a time, each acknowledged.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "wn_node.h"

#define ALIAS_TAG "warpnicd pid "

/* One request: the header, the family message and room for attributes. */
struct nl_req {
	struct nlmsghdr n;
	union {
		struct ifinfomsg ifi;
		struct ifaddrmsg ifa;
	};
	char attrs[512];
};

/* An answer of the kernel (RTM_GETLINK: every attribute of a link, statistics included). */
struct nl_ans {
	struct nlmsghdr n;
	struct ifinfomsg ifi;
	char attrs[8192];
};

static struct rtattr *
attr_put(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));
	size_t need = RTA_SPACE(len);

	if (NLMSG_ALIGN(r->n.nlmsg_len) + need > sizeof(*r))
		return NULL;
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len > 0)
		memcpy(RTA_DATA(a), data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + need;
	return a;
}

/* Close a nested attribute opened by attr_put(r, type, NULL, 0). */
static void
attr_end(struct nl_req *r, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)r + r->n.nlmsg_len - (char *)nest);
}

/*
 * Send @p r and wait for its answer: 0 on the kernel's ACK, -errno of its error. With
 * @p reply (RTM_GETLINK), the first answer of that type is copied there.
 */
static int
nl_talk(struct nl_req *r, void *reply, size_t reply_len)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	char buf[sizeof(struct nl_ans)];
	int fd, ret = -EIO;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	r->n.nlmsg_seq = 1;
	if (sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			ret = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			break;
		}
		if (reply != NULL && h->nlmsg_len <= reply_len) {
			memcpy(reply, h, h->nlmsg_len);
			ret = 0;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

static void
req_init(struct nl_req *r, unsigned short type, unsigned short flags, size_t fam_len)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(fam_len);
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST | flags;
}

/*
 * The owner of an existing interface @p name: its warpnicd's pid from the alias, 0 when it
 * is warpnicd's but that process is gone, -EEXIST when it is not warpnicd's, -ENODEV when
 * there is no such interface.
 */
static int
netdev_owner(const char *name)
{
	struct nl_ans ans;
	struct nl_req r;
	struct rtattr *a;
	int len, ret;
	long pid;

	req_init(&r, RTM_GETLINK, 0, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	if (attr_put(&r, IFLA_IFNAME, name, strlen(name) + 1) == NULL)
		return -ENAMETOOLONG;
	ret = nl_talk(&r, &ans, sizeof(ans));
	if (ret != 0)
		return ret == -ENODEV ? -ENODEV : ret;
	len = (int)ans.n.nlmsg_len - (int)NLMSG_LENGTH(sizeof(struct ifinfomsg));
	for (a = IFLA_RTA(&ans.ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		const char *alias = RTA_DATA(a);

		if (a->rta_type != IFLA_IFALIAS)
			continue;
		if (strncmp(alias, ALIAS_TAG, strlen(ALIAS_TAG)) != 0)
			return -EEXIST;
		pid = strtol(alias + strlen(ALIAS_TAG), NULL, 10);
		return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM) ? (int)pid : 0;
	}
	return -EEXIST;
}

static int
link_delete(const char *name)
{
	struct nl_req r;

	req_init(&r, RTM_DELLINK, NLM_F_ACK, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	if (attr_put(&r, IFLA_IFNAME, name, strlen(name) + 1) == NULL)
		return -ENAMETOOLONG;
	return nl_talk(&r, NULL, 0);
}

/* A veth pair, NAME and a peer the kernel names. */
static int
veth_create(const char *name)
{
	struct rtattr *info, *data, *peer;
	struct ifinfomsg peer_ifi = {.ifi_family = AF_UNSPEC};
	struct nl_req r;

	req_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	if (attr_put(&r, IFLA_IFNAME, name, strlen(name) + 1) == NULL ||
	    (info = attr_put(&r, IFLA_LINKINFO, NULL, 0)) == NULL ||
	    attr_put(&r, IFLA_INFO_KIND, "veth", 5) == NULL ||
	    (data = attr_put(&r, IFLA_INFO_DATA, NULL, 0)) == NULL ||
	    (peer = attr_put(&r, VETH_INFO_PEER, &peer_ifi, sizeof(peer_ifi))) == NULL)
		return -ENAMETOOLONG;
	attr_end(&r, peer);
	attr_end(&r, data);
	attr_end(&r, info);
	return nl_talk(&r, NULL, 0);
}

/* Interface @p index up, with @p alias when not NULL. */
static int
link_up(int index, const char *alias)
{
	struct nl_req r;

	req_init(&r, RTM_NEWLINK, NLM_F_ACK, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = index;
	r.ifi.ifi_flags = IFF_UP;
	r.ifi.ifi_change = IFF_UP;
	if (alias != NULL && attr_put(&r, IFLA_IFALIAS, alias, strlen(alias) + 1) == NULL)
		return -ENAMETOOLONG;
	return nl_talk(&r, NULL, 0);
}

/* The index of @p index's veth peer (IFLA_LINK), or -errno. */
static int
veth_peer(int index)
{
	struct nl_ans ans;
	struct nl_req r;
	struct rtattr *a;
	int len, ret;

	req_init(&r, RTM_GETLINK, 0, sizeof(struct ifinfomsg));
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = index;
	ret = nl_talk(&r, &ans, sizeof(ans));
	if (ret != 0)
		return ret;
	len = (int)ans.n.nlmsg_len - (int)NLMSG_LENGTH(sizeof(struct ifinfomsg));
	for (a = IFLA_RTA(&ans.ifi); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_LINK)
			return *(int *)RTA_DATA(a);
	return -ENOENT;
}

static int
addr_add(int index, const struct wn_node_netdev_addr *ad)
{
	uint32_t flags = IFA_F_NOPREFIXROUTE | (ad->family == AF_INET6 ? IFA_F_NODAD : 0);
	size_t alen = ad->family == AF_INET6 ? 16 : 4;
	struct nl_req r;

	req_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, sizeof(struct ifaddrmsg));
	r.ifa.ifa_family = (unsigned char)ad->family;
	r.ifa.ifa_prefixlen = ad->prefix;
	r.ifa.ifa_flags = (unsigned char)flags;
	r.ifa.ifa_scope = RT_SCOPE_UNIVERSE;
	r.ifa.ifa_index = (unsigned int)index;
	if (attr_put(&r, IFA_LOCAL, ad->addr, alen) == NULL ||
	    attr_put(&r, IFA_ADDRESS, ad->addr, alen) == NULL ||
	    attr_put(&r, IFA_FLAGS, &flags, sizeof(flags)) == NULL)
		return -ENOSPC;
	return nl_talk(&r, NULL, 0);
}

int
wn_node_netdev_up(const char *name, const struct wn_node_netdev_addr *addrs, unsigned int n,
		  int *owner)
{
	char alias[64];
	int index, peer, ret;

	*owner = 0;
	if (strlen(name) == 0 || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	ret = netdev_owner(name);
	if (ret > 0 && ret != (int)getpid()) {
		*owner = ret;
		return -EBUSY;
	}
	if (ret == -EEXIST)
		return -EEXIST;
	if (ret >= 0) { /* ours from before, or a warpnicd's that is gone */
		ret = link_delete(name);
		if (ret != 0)
			return ret;
	} else if (ret != -ENODEV) {
		return ret;
	}
	ret = veth_create(name);
	if (ret != 0)
		return ret;
	index = (int)if_nametoindex(name);
	if (index == 0) {
		ret = -errno;
		goto fail;
	}
	snprintf(alias, sizeof(alias), ALIAS_TAG "%d", (int)getpid());
	peer = veth_peer(index);
	if (peer < 0) {
		ret = peer;
		goto fail;
	}
	ret = link_up(peer, alias);
	if (ret == 0)
		ret = link_up(index, alias);
	for (unsigned int i = 0; ret == 0 && i < n; i++)
		ret = addr_add(index, &addrs[i]);
	if (ret == 0)
		return 0;
fail:
	link_delete(name);
	return ret;
}

void
wn_node_netdev_down(const char *name)
{
	if (netdev_owner(name) == (int)getpid())
		link_delete(name);
}
