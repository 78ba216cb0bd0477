#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wn-rpc-nfs against Linux's NFS server over RDMA:
#   linux_nfsd.sh BUILD_DIR [SIZE] [IMPAIR]
# Boots Debian 12's kernel under qemu-system-x86 (TCG; linux_nfsd_image.sh builds the kernel
# pieces and siw, cached in $WN_LINUX_NFSD_CACHE, default /var/cache/warpnic/linux-nfsd):
# knfsd serves NFSv3 over RDMA on siw (port 20049) and MOUNT over TCP (rpcbind, mountd),
# exporting a tmpfs that holds a file of SIZE random octets (default 4m). The guest's NIC is a
# tap in a private network namespace; one warpnicd runs there on that tap (net_af_packet,
# 198.19.9.3), and wn-rpc-nfs, through scripts/warpnic-run, with Linux's parameters (inline
# 4096; --settle-ms 200: siw can leave an FPDU that comes with its MPA Reply unprocessed):
# MOUNT through the guest's portmapper over kernel TCP, NULL, FSINFO, GETATTR, READ
# of the file (data by write chunk) compared with what the guest was given, WRITE of SIZE
# random octets (data by read chunk), READ back and compared (VERIFY). RFC 8797 private data
# and the 64 credits knfsd grants are checked from the tool's counters. IMPAIR (e.g.
# drop=0.01,seed=3) wraps warpnicd's port with the fault injector.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../verbs/pair_lib.sh" "$1"
. "$HERE/../qemu_guest.sh"
SIZE=${2:-4m}
IMPAIR=${3:-}
NFS=$WN_BUILD/app/bin/wn-rpc-nfs
CACHE=${WN_LINUX_NFSD_CACHE:-/var/cache/warpnic/linux-nfsd}
[ -x "$NFS" ] || fail "wn-rpc-nfs not built"
for t in qemu-system-x86_64 busybox ip; do
	command -v $t >/dev/null || fail "$t not installed (scripts/setup.sh installs it)"
done
NS=wn-lnfs$$
GUEST=198.19.9.2
WPID=
vdevs=(--vdev net_af_packet0,iface=wnq0)
[ -n "$IMPAIR" ] && vdevs+=(--vdev "net_wn_impair0,port=net_af_packet0,$IMPAIR")
cleanup_linux() {
	[ -n "$WPID" ] && kill -TERM "$WPID" 2>/dev/null && sleep 1 && kill -KILL "$WPID" 2>/dev/null
	guest_cleanup
	rm -rf "/var/run/dpdk/$NS"
	cleanup
}
trap cleanup_linux EXIT

note "kernel, siw and initramfs (cache $CACHE)"
"$HERE/linux_nfsd_image.sh" "$CACHE" >"$T/image.out" 2>&1 || fail "building the guest failed"
size=$(numfmt --from=iec "${SIZE^^}")
# /bin/sh is the base image's (a top-level directory here would replace its /bin link)
mkdir -p "$T/extra"
cp "$HERE/linux_nfsd_init.sh" "$T/extra/init"
head -c "$size" /dev/urandom >"$T/extra/data.bin"
guest_cpio "$T/extra" "$T/extra.cpio"
cat "$CACHE/base.cpio" "$T/extra.cpio" | gzip -1 >"$T/initrd.gz"

note "booting the guest"
guest_net "$NS" wnq0 || fail "cannot create the guest's network"
ip -n "$NS" addr add 198.19.9.1/24 dev wnq0 # the kernel's end, for MOUNT over TCP
guest_boot "$NS" wnq0 "$CACHE/vmlinuz" "$T/initrd.gz" "$T/console.out" "wn_ip=$GUEST/24" ||
	fail "cannot start the guest"
wait_line "$T/console.out" "WN-NFSD-(READY|FAILED)" 300 || fail "the guest did not start knfsd in 300 s"
grep -q WN-NFSD-READY "$T/console.out" || fail "the guest: $(grep WN-NFSD-FAILED "$T/console.out")"
note "$(grep -a WN-NFSD-READY "$T/console.out")"
env -u LD_LIBRARY_PATH ip netns exec "$NS" "$WN_BUILD/app/warpnicd/warpnicd" -l 0 \
	--file-prefix "$NS" --no-pci --no-huge -m 256 --log-level lib.eal:error \
	"${vdevs[@]}" -- --ip 198.19.9.3/24 --ctl "$T/w.sock" \
	--mpa-timeout 20000 >"$T/warpnicd.out" 2>&1 &
WPID=$!
wait_line "$T/warpnicd.out" "warpnicd: serving" 30 || fail "warpnicd did not start"
tool() {
	timeout -k 5 240 ip netns exec "$NS" "$RUN" --ctl "$T/w.sock" --shim "$SHIM" "$NFS" \
		--server $GUEST --export /export --mount $GUEST --inline 4096 --settle-ms 200 \
		--stats "$@"
}
tool null >"$T/null.out" 2>&1 && grep -q "null: ok" "$T/null.out" || fail "NULL"
grep -Eq "inline call 4096 reply 4096 credits 64" "$T/null.out" ||
	fail "not knfsd's parameters (RFC 8797 private data, 64 credits): $(grep transport "$T/null.out")"
tool fsinfo >"$T/fsinfo.out" 2>&1 && grep -q "rtmax" "$T/fsinfo.out" || fail "FSINFO"
tool getattr data >"$T/getattr.out" 2>&1 && grep -q "size $size " "$T/getattr.out" || fail "GETATTR"
note "READ $size octets from knfsd"
tool read data "$T/out" >"$T/read.out" 2>&1 || fail "READ"
cmp "$T/extra/data.bin" "$T/out" || fail "READ: the data differs from the guest's file"
grep -Eq "write_chunks [1-9]" "$T/read.out" || fail "READ data did not come by write chunk"
head -c "$size" /dev/urandom >"$T/in"
note "WRITE $size octets to knfsd"
tool write target "$T/in" >"$T/write.out" 2>&1 || fail "WRITE"
grep -Eq "read_chunks [1-9]" "$T/write.out" || fail "WRITE data did not go by read chunk"
tool verify target "$T/in" >"$T/verify.out" 2>&1 && grep -q identical "$T/verify.out" ||
	fail "VERIFY: knfsd did not store what was written"
kill -0 "$WPID" 2>/dev/null || fail "warpnicd died"
cat "$T/fsinfo.out" "$T/getattr.out" "$T/read.out" "$T/write.out" "$T/verify.out"
