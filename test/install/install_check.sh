#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What `meson install` puts in place, used as a user would:
#   install_check.sh BUILD_DIR
# Installs BUILD_DIR into a scratch DESTDIR, then checks: every program in bin/ and sbin/ has
# its man page; the shim is in the private $libdir/warpnic, never beside the system's
# libibverbs; the installed warpnic-run names that directory; a program compiled outside
# the tree with the installed headers and pkg-config files (test/install/use_installed.c)
# links against the installed shared libraries and runs; the installed warpnicd (no NIC:
# net_null, no hugepages) serves that program and ibv_devinfo through the installed shim.
set -euo pipefail
build=$(cd "${1:?usage: install_check.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/wn-install.XXXXXX)
dpid=
cleanup() {
	[ -z "$dpid" ] || { kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

dest=$tmp/dest
DESTDIR=$dest meson install -C "$build" --quiet --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print({o["name"]: o["value"] for o in json.load(sys.stdin)}["prefix"])')
libdir=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print({o["name"]: o["value"] for o in json.load(sys.stdin)}["libdir"])')
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$dest$prefix
shim=$dest$libdir/warpnic

# programs and their man pages
for p in sbin/warpnicd bin/warpnic-run bin/warpnic-perf; do
	[ -x "$root/$p" ] || bad "$p not installed"
done
for p in "$root"/bin/* "$root"/sbin/*; do
	n=$(basename "$p")
	ls "$root"/share/man/man[18]/"$n".[18] >/dev/null 2>&1 || bad "$n has no man page"
done
# the shim, privately
for l in libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1; do
	[ -e "$shim/$l" ] || bad "shim $l not in $libdir/warpnic"
	[ ! -e "$dest$libdir/$l" ] || bad "$l installed in $libdir, where it shadows rdma-core's"
done
grep -q "^installed_shim='$libdir/warpnic'\$" "$root/bin/warpnic-run" ||
	bad "installed warpnic-run does not name $libdir/warpnic"
[ -f "$root/share/doc/warpnic/LICENSE" ] || bad "LICENSE not installed"

# a program of one's own, against the installed development files
# (the .pc files with their prefix moved into DESTDIR; the packages they require keep theirs)
mkdir "$tmp/pc"
for f in "$dest$libdir"/pkgconfig/*.pc; do
	sed "s|^prefix=.*|prefix=$dest$prefix|" "$f" >"$tmp/pc/$(basename "$f")"
done
export PKG_CONFIG_PATH=$tmp/pc
pc=pkg-config
if ! cc -o "$tmp/use_installed" "$here/use_installed.c" \
	$($pc --cflags warpnic-client warpnic-rpcrdma) \
	$($pc --libs warpnic-client warpnic-rpcrdma) 2>"$tmp/cc.log"; then
	cat "$tmp/cc.log"
	bad "use_installed.c does not build against the installed headers and pkg-config files"
else
	readelf -d "$tmp/use_installed" | grep -q 'libwarpnic-client.so.0' ||
		bad "use_installed is not linked against libwarpnic-client.so.0"
	export LD_LIBRARY_PATH=$dest$libdir
	"$tmp/use_installed" || bad "use_installed without a daemon"
fi

# the installed daemon, the installed library and the installed shim together
sock=$tmp/ctl.sock
env -u LD_LIBRARY_PATH "$root/sbin/warpnicd" --no-huge --no-shconf -m 256 --no-pci -l 0 \
	--vdev net_null0,no-rx=1 --file-prefix "wn-inst-$$" --log-level=lib.eal:error \
	-- --ip 198.18.77.1/24 --ctl "$sock" --name wninst0 >"$tmp/warpnicd.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S "$sock" ]; then
	cat "$tmp/warpnicd.log"
	bad "installed warpnicd did not start"
else
	out=$("$tmp/use_installed" "$sock") || bad "use_installed against the installed warpnicd"
	[ "$out" = "device wninst0" ] || bad "use_installed printed '$out'"
	out=$(env -u LD_LIBRARY_PATH "$root/bin/warpnic-run" --shim "$shim" --ctl "$sock" \
		ibv_devinfo 2>&1) || bad "ibv_devinfo through the installed shim: $out"
	grep -q 'hca_id:[[:space:]]*wninst0' <<<"$out" ||
		bad "ibv_devinfo through the installed shim did not see wninst0: $out"
fi
[ "$fails" = 0 ] || exit 1
echo "install: programs, man pages, shim in $libdir/warpnic, development files, daemon: ok"
