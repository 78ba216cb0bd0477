#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's rdma_server / rdma_client (rdmacm-utils), unmodified, between two warpnicd
# instances: rdma_cm "endpoint" API (rdma_getaddrinfo, rdma_create_ep, rdma_get_request,
# synchronous ids without an event channel), rdma_verbs.h helpers (rdma_reg_msgs,
# rdma_post_recv/send, rdma_get_recv/send_comp on the CQs and completion channels that
# rdma_create_qp makes) and inline sends:
#   rdma_cm_examples.sh BUILD_DIR
# The client sends 16 bytes, the server answers with 16; both exit 0 only if every call
# and completion succeeded ("end 0"). With WARPNIC_LLP=sctp in the environment (the
# programs' own choice, read by the client library) both rounds run over DDP over SCTP
# (RFC 5043), and llp_check proves it through telemetry.
. "$(dirname "$0")/pair_lib.sh" "$1"
need rdma_server rdma_client

pair_start
for round in 1 2; do
	bg_a "rdma_server_$round" rdma_server -s "$A_IP" -p 7471
	SRV=$BG_PID
	wait_server 10 || fail "rdma_server is not listening (round $round)"
	on_b rdma_client -s "$A_IP" -p 7471 >"$T/rdma_client_$round.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "rdma_client exit status $rc (round $round)"
	grep -q 'rdma_client: end 0' "$T/rdma_client_$round.out" || fail "rdma_client did not end 0"
	wait_pid "$SRV" 15
	rc=$?
	[ $rc -eq 0 ] || fail "rdma_server exit status $rc (round $round)"
	grep -q 'rdma_server: end 0' "$T/rdma_server_$round.out" || fail "rdma_server did not end 0"
	# the CM ids of the finished server are gone before the next round listens again
	for ((i = 0; i < 50; i++)); do
		[ "$(tel_field a /warpnic/ctl cm_ids)" = 0 ] && break
		sleep 0.1
	done
	[ "$(tel_field a /warpnic/ctl cm_ids)" = 0 ] || fail "A still holds CM ids after round $round"
done
daemons_alive || fail "a warpnicd died"
llp_check
echo "rdma_server/rdma_client: 2 rounds, both sides end 0 (lower layer $LLP)"
