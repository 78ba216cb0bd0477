#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Usage: scripts/deb_test.sh [--debs DIR] [--keep] [--work DIR]
# The Debian packages as a user gets them, on Debian 12 (as root):
#  1. dpkg-buildpackage -b -us -uc on a copy of this tree (skipped with --debs DIR: the
#     .debs and .changes already built there);
#  2. lintian on the .changes: no error;
#  3. a fresh Debian 12 root (mmdebstrap: the base system, systemd to run the service, ip and
#     Debian's RDMA programs to run through the shim), the packages installed into it with
#     apt, which adds nothing but what their Depends pull in;
#  4. that root booted under systemd-nspawn (its own network namespace): systemctl start
#     warpnicd@local must come up (Type=notify), then the installed warpnic-run runs rping
#     (data verified) and ib_write_bw through the installed shim against it, and
#     systemctl stop leaves no kernel interface behind;
#  5. remove, then purge, then autoremove what the Depends pulled in: no file of the
#     packages may stay (the configuration only until purge), and the root must be what it
#     was before the install (what piuparts checks).
# Takes about 10 minutes (most of it the build); not in scripts/test.sh. Needs
# dpkg-buildpackage, lintian, mmdebstrap and systemd-nspawn (scripts/setup.sh installs
# them) and the network to a Debian mirror. The last line is "deb_test: N passed, N failed".
#   --debs DIR   use the packages in DIR instead of building them
#   --keep       keep the work directory (the build, the root) for a look
#   --work DIR   the work directory (default: a new one in /var/tmp)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
debs= keep=0 work= mirror=${WN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${WN_DEB_SUITE:-bookworm}
while [ $# -gt 0 ]; do
	case "$1" in
	--debs) debs=$(cd "$2" && pwd); shift 2 ;;
	--keep) keep=1; shift ;;
	--work) work=$2; shift 2 ;;
	-h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "deb_test: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "deb_test: run it as root" >&2; exit 2; }
for c in dpkg-buildpackage lintian mmdebstrap systemd-nspawn; do
	command -v "$c" >/dev/null ||
		{ echo "deb_test: $c missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -n "$work" ] || work=$(mktemp -d /var/tmp/wn-deb-test.XXXXXX)
mkdir -p "$work"
root=$work/root
passed=0 failed=0
ok() { echo "deb_test: ok: $*"; passed=$((passed + 1)); }
bad() { echo "deb_test: FAILED: $*"; failed=$((failed + 1)); }
nspawn_tmpfs=0
finish() {
	[ "$nspawn_tmpfs" = 0 ] || umount /run/systemd/nspawn
	[ "$keep" = 1 ] && echo "deb_test: kept $work" || rm -rf "$work"
	echo "deb_test: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}
t0=$(date +%s)
step() { echo "deb_test: [$(($(date +%s) - t0)) s] $*"; }

# 1. build
if [ -z "$debs" ]; then
	version=$(cat "$top/VERSION")
	src=$work/src/warpnic-$version
	mkdir -p "$src"
	git -C "$top" ls-files -co --exclude-standard | grep -v '^build' |
		tar -C "$top" -cf - -T - | tar -C "$src" -xf -
	step "dpkg-buildpackage -b -us -uc (log: $work/build.log)"
	if (cd "$src" && nice dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1; then
		ok "dpkg-buildpackage -b built $(ls "$work/src"/*.deb | wc -l) packages"
	else
		tail -n 30 "$work/build.log"
		bad "dpkg-buildpackage"
		finish
	fi
	debs=$work/src
fi
changes=$(ls "$debs"/warpnic_*.changes 2>/dev/null | head -1)
pkgs=()
for p in warpnic warpnic-shim libwarpnic-client0 libwarpnic-rpcrdma0 libwarpnic-dev; do
	f=$(ls "$debs/${p}"_*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { bad "no $p package in $debs"; finish; }
	pkgs+=("$f")
done

# 2. lintian
step "lintian"
if [ -n "$changes" ]; then
	lintian --fail-on error "$changes" >"$work/lintian.log" 2>&1
	rc=$?
else
	lintian --fail-on error "${pkgs[@]}" >"$work/lintian.log" 2>&1
	rc=$?
fi
nerr=$(grep -c '^E: ' "$work/lintian.log")
nwarn=$(grep -c '^W: ' "$work/lintian.log")
if [ "$rc" = 0 ] && [ "$nerr" = 0 ]; then
	ok "lintian: no error ($nwarn warnings)"
else
	cat "$work/lintian.log"
	bad "lintian: $nerr errors"
fi

# 3. a fresh root, the packages installed with apt
step "mmdebstrap $suite (log: $work/mmdebstrap.log)"
if ! mmdebstrap --variant=apt --include=systemd-sysv,dbus,iproute2,rdmacm-utils,perftest,ibverbs-utils \
	"$suite" "$root" "$mirror" >"$work/mmdebstrap.log" 2>&1; then
	tail -n 20 "$work/mmdebstrap.log"
	bad "mmdebstrap $suite"
	finish
fi
# what a root has that is not a package's: left out of the before/after comparison
snapshot() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \
		-o -path ./tmp -o -path ./var/cache -o -path ./var/lib/apt -o -path ./var/lib/dpkg \
		-o -path ./var/log -o -path ./var/lib/systemd -o -path ./etc/ld.so.cache \
		-o -path ./var/lib/dbus -o -path ./etc/machine-id -o -path ./root \
		-o -path ./etc/localtime \) -prune \
		-o -print | sort)
}
snapshot >"$work/before.txt"
mkdir -p "$root/tmp/debs"
cp "${pkgs[@]}" "$root/tmp/debs/"
step "apt-get install the packages (log: $work/install.log)"
chroot "$root" apt-get update -qq >"$work/install.log" 2>&1
inroot=()
for f in "${pkgs[@]}"; do inroot+=("/tmp/debs/$(basename "$f")"); done
if chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "${inroot[@]}" >>"$work/install.log" 2>&1; then
	ok "installed into a fresh $suite root with apt: $(grep -c '^Setting up' "$work/install.log") packages set up"
else
	tail -n 20 "$work/install.log"
	bad "apt-get install"
	finish
fi
for f in /usr/sbin/warpnicd /usr/sbin/warpnic-up /usr/bin/warpnic-run /etc/warpnic/local.conf \
	/usr/share/man/man8/warpnicd.8.gz; do
	[ -e "$root$f" ] || bad "$f not installed"
done
ls "$root"/usr/lib/*/warpnic/libibverbs.so.1 >/dev/null 2>&1 || bad "the shim is not installed"
ls "$root"/usr/lib/*/libibverbs.so.1 >/dev/null 2>&1 &&
	[ "$(readlink -f "$root"/usr/lib/*/libibverbs.so.1)" != "$(readlink -f "$root"/usr/lib/*/warpnic/libibverbs.so.1)" ] ||
	bad "the system's libibverbs.so.1 is the shim's"

# 4. the service, and programs through the installed shim, in the booted root
cat >"$root/root/pkgtest.sh" <<'EOF'
#!/bin/bash
# run inside the booted root: the service, then programs through the installed shim
exec >/root/pkgtest.log 2>&1
r=0
say() { echo "pkgtest: $*"; }
if systemctl start warpnicd@local; then
	say "service active: $(systemctl is-active warpnicd@local)"
	[ -S /run/warpnic/warpnicd.sock ] || { say "FAIL no control socket after start"; r=1; }
	ip -br addr show wn0 | grep -q 198.18.0.1 || { say "FAIL wn0 has not the address"; r=1; }
	warpnic-run ibv_devinfo | grep -q 'transport:.*iWARP' || { say "FAIL ibv_devinfo"; r=1; }
	warpnic-run rping -s -a 198.18.0.1 -V -C 10 >/root/rping.srv 2>&1 &
	s=$!; sleep 1
	if timeout 60 warpnic-run rping -c -a 198.18.0.1 -v -V -C 10 >/root/rping.cli 2>&1 &&
		wait $s && [ "$(grep -c '^ping data' /root/rping.cli)" = 10 ]; then
		say "rping ok"
	else
		say "FAIL rping"; cat /root/rping.cli /root/rping.srv; r=1
	fi
	warpnic-run ib_write_bw -R -s 65536 -n 1000 >/root/bw.srv 2>&1 &
	s=$!; sleep 1
	if timeout 120 warpnic-run ib_write_bw -R -s 65536 -n 1000 198.18.0.1 >/root/bw.cli 2>&1 &&
		wait $s && grep -q '^ 65536 ' /root/bw.cli; then
		say "ib_write_bw ok: $(grep '^ 65536 ' /root/bw.cli)"
	else
		say "FAIL ib_write_bw"; cat /root/bw.cli /root/bw.srv; r=1
	fi
	systemctl stop warpnicd@local
	ip link show wn0 >/dev/null 2>&1 && { say "FAIL wn0 left after stop"; r=1; }
else
	say "FAIL systemctl start warpnicd@local"; r=1
fi
journalctl -u warpnicd@local --no-pager | tail -n 30
say "result $r"
echo "$r" >/root/pkgtest.rc
systemctl poweroff --no-block
EOF
chmod +x "$root/root/pkgtest.sh"
cat >"$root/etc/systemd/system/wn-pkgtest.service" <<'EOF'
[Unit]
Description=warpnic package test
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/root/pkgtest.sh
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/wn-pkgtest.service \
	"$root/etc/systemd/system/multi-user.target.wants/wn-pkgtest.service"
# systemd-nspawn keeps state in /run/systemd/nspawn: a tmpfs of our own where the host has
# no systemd
if [ ! -d /run/systemd/system ] && ! grep -q ' /run/systemd/nspawn ' /proc/mounts; then
	mkdir -p /run/systemd/nspawn
	mount -t tmpfs tmpfs /run/systemd/nspawn && nspawn_tmpfs=1
fi
step "boot the root (systemd-nspawn, private network; log: $work/boot.log)"
# (the EAL looks for the vfio module in /sys/module, which the container's sysfs lacks)
timeout 300 systemd-nspawn -q -D "$root" --boot --private-network --register=no \
	--keep-unit --bind-ro=/sys/module -M "wnpkg$$" </dev/null >"$work/boot.log" 2>&1
cat "$root/root/pkgtest.log" 2>/dev/null | sed 's/^/  /'
if [ "$(cat "$root/root/pkgtest.rc" 2>/dev/null)" = 0 ]; then
	ok "warpnicd@local came up (Type=notify); rping and ib_write_bw through the installed shim"
else
	tail -n 30 "$work/boot.log"
	bad "the service or the programs in the booted root"
fi
rm -f "$root/etc/systemd/system/multi-user.target.wants/wn-pkgtest.service" \
	"$root/etc/systemd/system/wn-pkgtest.service" "$root/root/pkgtest.sh"

# 5. remove, purge, autoremove: nothing left
names=(warpnic warpnic-shim libwarpnic-client0 libwarpnic-rpcrdma0 libwarpnic-dev)
files=$(for p in "${names[@]}"; do chroot "$root" dpkg -L "$p"; done | sort -u)
step "apt-get remove, dpkg --purge, apt-get autoremove"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get remove -y "${names[@]}" \
	>"$work/remove.log" 2>&1 || bad "apt-get remove"
left=$(while read -r f; do
	[ -d "$root$f" ] && continue # directories the packages share with others
	[ -f "$root$f" ] || [ -L "$root$f" ] || continue
	case "$f" in /etc/warpnic/local.conf) ;; *) echo "$f" ;; esac
done <<<"$files")
[ -z "$left" ] && ok "removed: only the configuration stays" || bad "left after remove: $left"
[ -f "$root/etc/warpnic/local.conf" ] || bad "remove took the configuration (a conffile)"
# (dpkg: apt no longer knows the packages that left nothing behind)
chroot "$root" dpkg --purge "${names[@]}" >>"$work/remove.log" 2>&1 || bad "dpkg --purge"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y \
	>>"$work/remove.log" 2>&1 || bad "apt-get autoremove"
snapshot >"$work/after.txt"
if diff "$work/before.txt" "$work/after.txt" >"$work/diff.txt"; then
	ok "purged: the root is what it was before the install"
else
	sed 's/^/  /' "$work/diff.txt" | head -n 30
	bad "the root differs from before the install ($(grep -c '^[<>]' "$work/diff.txt") paths)"
fi
finish
