#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The NFSv3-over-RDMA tool (wn-rpc-nfs) against our NFS server (wn-rpc-nfsd), between two
# warpnicd:
#   nfs.sh BUILD_DIR CASE
# wn-rpc-nfsd on A exports a directory; MOUNT goes over kernel TCP (127.0.0.1), as mount.nfs
# asks mountd, NFS over RDMA. The tool on B runs NULL, FSINFO, LOOKUP, GETATTR (an existing
# and a missing name), WRITE of SIZE random octets into an existing file (data by read
# chunks, FILE_SYNC), READ of another file (data by write chunks into registered buffers) and
# VERIFY; the files on both sides must be identical octet for octet. Cases:
#   default   inline 1024, 8 MiB
#   linux     what Linux's client and knfsd use: inline 4096, 128 credits asked, 64 granted
#   impaired  B's port drops 1 % of frames: WN_RPC_IMPAIR_BYTES (64 MiB) each way
# (The same tool against Linux's knfsd over siw in a qemu guest:
# test/interop/rpcrdma/linux_nfsd.sh.)
. "$(dirname "$0")/../../interop/verbs/pair_lib.sh" "$1"
CASE=${2:-default}
NFS=$WN_BUILD/app/bin/wn-rpc-nfs
NFSD=$WN_BUILD/app/bin/wn-rpc-nfsd
[ -x "$NFS" ] && [ -x "$NFSD" ] || fail "wn-rpc-nfs/wn-rpc-nfsd not built"

pair=() sopts=() copts=() bytes=8m
case "$CASE" in
default) ;;
linux) sopts=(--inline 4096 --credits 64); copts=(--inline 4096 --credits 128) ;;
impaired) pair=(--impair drop=0.01,seed=9); bytes=${WN_RPC_IMPAIR_BYTES:-64m} ;;
*) fail "unknown case $CASE" ;;
esac
size=$(numfmt --from=iec "${bytes^^}")
# the export on tmpfs when there is one: FILE_SYNC writes fdatasync every call
EXP=$(mktemp -d /dev/shm/wn-nfs-export.XXXXXX 2>/dev/null) || EXP=$T/export
trap 'rm -rf "$EXP"; cleanup' EXIT
mkdir -p "$EXP/dir"
head -c "$size" /dev/urandom >"$EXP/dir/data"
head -c "$size" /dev/urandom >"$T/in"
: >"$EXP/dir/target"

pair_start "${pair[@]}"
bg_exec a nfsd "$NFSD" --addr "$A_IP" --export "$EXP" --mount-port 0 "${sopts[@]}"
SRV=$BG_PID
wait_line "$T/nfsd.out" "exporting" 20 || fail "wn-rpc-nfsd did not start"
MPORT=$(sed -n 's/.*MOUNT over TCP on [0-9.]* port \([0-9]*\).*/\1/p' "$T/nfsd.out")
[ -n "$MPORT" ] || fail "no MOUNT port in the server's output"
tool() {
	on_b "$NFS" --server "$A_IP" --export "$EXP" --mount 127.0.0.1 --mount-port "$MPORT" \
		"${copts[@]}" --stats "$@"
}
tool null >"$T/null.out" 2>&1 && grep -q "null: ok" "$T/null.out" || fail "NULL"
tool fsinfo >"$T/fsinfo.out" 2>&1 && grep -q "rtmax 1048576" "$T/fsinfo.out" || fail "FSINFO"
tool lookup dir/data >"$T/lookup.out" 2>&1 && grep -q "handle [0-9a-f]\{32\}" "$T/lookup.out" ||
	fail "LOOKUP"
tool getattr dir/data >"$T/getattr.out" 2>&1 && grep -q "type 1 .* size $size " "$T/getattr.out" ||
	fail "GETATTR"
tool getattr dir/missing >"$T/missing.out" 2>&1 && fail "GETATTR of a missing file succeeded"
grep -q "no such file" "$T/missing.out" || fail "LOOKUP of a missing name: not NFS3ERR_NOENT"
note "write $size octets"
tool write dir/target "$T/in" >"$T/write.out" 2>&1 || fail "WRITE"
cmp "$T/in" "$EXP/dir/target" || fail "the server's file differs from what was written"
note "read $size octets"
tool read dir/data "$T/out" >"$T/read.out" 2>&1 || fail "READ"
cmp "$EXP/dir/data" "$T/out" || fail "what was read differs from the server's file"
tool verify dir/target "$T/in" >"$T/verify.out" 2>&1 && grep -q identical "$T/verify.out" ||
	fail "VERIFY"
grep -Eq 'transport: .* read_chunks [1-9]' "$T/write.out" || fail "WRITE data did not go by read chunk"
grep -Eq 'transport: .* write_chunks [1-9]' "$T/read.out" || fail "READ data did not come by write chunk"
kill -INT "$SRV" 2>/dev/null
wait_pid "$SRV" 60
rc=$?
[ $rc -eq 0 ] || fail "wn-rpc-nfsd: exit status $rc after SIGINT"
srv=$(grep '^nfsd:' "$T/nfsd.out") || fail "server printed no statistics"
grep -q ' disconnects 0 ' <<<"$srv" || fail "server closed a connection: $srv"
daemons_alive || fail "a warpnicd died"
cat "$T/fsinfo.out" "$T/getattr.out" "$T/write.out" "$T/read.out" "$T/verify.out"
echo "$srv"
