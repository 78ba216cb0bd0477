#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Idempotent machine set-up for warpnic on Debian 12 or 13: installs packages with apt,
# reserves hugepages and mounts hugetlbfs. Needs root (or sudo) for those steps.
#
#   scripts/setup.sh            building, running and every test suite (what CI needs)
#   scripts/setup.sh --run      building and running only (what demo.sh needs): the build
#                               dependencies, Debian's RDMA programs, 320 hugepages
#   scripts/setup.sh --deps     packages only (building, running and testing)
#   scripts/setup.sh --huge     hugepages only
#   WN_HUGEPAGES=N              number of 2 MiB pages to reserve (default 3072; --run 320)
#   WN_HUGEPAGES_1G=N           number of 1 GiB pages to reserve (default 1, --run 0: the
#                               registered memory test of 1 GiB pages; 0 for none), hugetlbfs
#                               with pagesize=1G on /dev/hugepages-1G
set -euo pipefail

want_deps=1 want_huge=1 want_tests=1 pages_default=3072
case "${1:-}" in
--run) want_tests=0 pages_default=320 ;;
--deps) want_huge=0 ;;
--huge) want_deps=0 ;;
-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "setup.sh: not root and no sudo: run it as root, or install the packages" >&2
		echo "listed in this script and reserve hugepages by hand (see docs/testing.md)." >&2
		exit 1
	fi
fi

# building and running: the compiler and meson, the libraries warpnic links, help2man for
# the man pages, iproute2, and the RDMA programs the demo runs through the shim
RUN_PKGS=(
	build-essential pkg-config meson ninja-build python3 python3-pyelftools help2man
	debhelper
	dpdk libdpdk-dev libisal-dev libusrsctp-dev libibverbs-dev librdmacm-dev
	libtirpc-dev rpcsvc-proto iproute2 procps kmod
	# the stand-in provider libraries are generated from the real ones (drivers/verbs)
	ibverbs-providers binutils
	ibverbs-utils rdmacm-utils perftest
)
# the test suites on top of that
TEST_PKGS=(
	dpdk-dev libcmocka-dev libssl-dev
	# rdma-core's own test suite runs on Debian's pyverbs (verbs_rdma_core_suite)
	python3-pyverbs
	fio qperf libfabric-bin
	clang-14 libclang-rt-14-dev llvm-14
	libpcap-dev
	tshark socat iperf3 valgrind
	# the integration and interop runner (test/README.md)
	python3-pytest
	# verbs_programs::rspreload: a plain TCP program that uses accept(), not accept4(), which
	# Debian 12's librspreload does not wrap
	netcat-traditional
	# scripts/bench.sh: kernel TCP latency beside iperf3, and its chart
	sockperf gnuplot-nox
	# Linux's NFS server over RDMA for wn-rpc-nfs (test/interop/rpcrdma/linux_nfsd.sh) and
	# rdma-core's rsockets (test/interop/verbs/rs_linux_siw.sh): Debian's kernel under qemu
	# with siw built against these headers; the guest's nfs-utils and rdma-core binaries use
	# these libraries (and libibverbs1's libnl). The same guest kernel with its sctp.ko runs
	# DDP over SCTP against the kernel's SCTP (test/interop/sctp/: its peer is linked
	# statically against libc6-dev, on linux-libc-dev's <linux/sctp.h>)
	qemu-system-x86 busybox-static linux-headers-amd64 libc6-dev linux-libc-dev
	libwrap0 libnsl2 libblkid1 libuuid1 libkrb5-3 libgssapi-krb5-2 libsystemd0 libmnl0 libbsd0
	# scripts/deb_test.sh: the Debian packages, built, checked and installed in a fresh root
	lintian mmdebstrap systemd-container
)
PKGS=("${RUN_PKGS[@]}")
[ "$want_tests" = 0 ] || PKGS+=("${TEST_PKGS[@]}")

if [ "$want_deps" = 1 ]; then
	missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "setup.sh: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		echo "wireshark-common wireshark-common/install-setuid boolean false" |
			$SUDO debconf-set-selections
		$SUDO apt-get update -qq
		$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	else
		echo "setup.sh: all packages present"
	fi
fi

if [ "$want_huge" = 1 ]; then
	pages=${WN_HUGEPAGES:-$pages_default}
	cur=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$cur" -lt "$pages" ]; then
		echo "$pages" | $SUDO tee /proc/sys/vm/nr_hugepages >/dev/null ||
			echo "setup.sh: could not reserve hugepages (tests fall back to --no-huge)" >&2
	fi
	if ! grep -q "^[^ ]* /dev/hugepages hugetlbfs" /proc/mounts; then
		$SUDO mkdir -p /dev/hugepages
		$SUDO mount -t hugetlbfs nodev /dev/hugepages ||
			echo "setup.sh: could not mount hugetlbfs (tests fall back to --no-huge)" >&2
	fi
	echo "setup.sh: hugepages $(cat /proc/sys/vm/nr_hugepages) x 2 MiB, hugetlbfs on /dev/hugepages"
	# 1 GiB pages need 1 GiB of contiguous memory each: easy at boot, possible later while
	# memory is not fragmented (compaction); the kernel gives what it can
	gig=${WN_HUGEPAGES_1G:-$want_tests}
	n1g=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
	if [ "$gig" -gt 0 ] && [ -e "$n1g" ]; then
		if [ "$(cat "$n1g")" -lt "$gig" ]; then
			echo "$gig" | $SUDO tee "$n1g" >/dev/null
			[ "$(cat "$n1g")" -ge "$gig" ] ||
				echo "setup.sh: only $(cat "$n1g") of $gig 1 GiB pages could be reserved" \
					"(memory fragmented: reserve them at boot, hugepagesz=1G hugepages=$gig)" >&2
		fi
		if ! grep -q "^[^ ]* /dev/hugepages-1G hugetlbfs" /proc/mounts; then
			$SUDO mkdir -p /dev/hugepages-1G
			$SUDO mount -t hugetlbfs -o pagesize=1G nodev /dev/hugepages-1G ||
				echo "setup.sh: could not mount hugetlbfs with 1 GiB pages" >&2
		fi
		echo "setup.sh: hugepages $(cat "$n1g") x 1 GiB, hugetlbfs on /dev/hugepages-1G"
	elif [ "$gig" -gt 0 ]; then
		echo "setup.sh: this kernel has no 1 GiB hugepages (the CPU lacks pdpe1gb)" >&2
	fi
fi
