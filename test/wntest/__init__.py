# SPDX-License-Identifier: BSD-3-Clause
"""warpnic's integration and interop test library (test/README.md).

pair     two warpnicd joined by a link (scripts/wn-pair.sh underneath), started once per
         configuration and shared by the cases that ask for the same one
tel      DPDK telemetry of a running instance, and counters as deltas over one case
capture  tshark's JSON of a capture, TCP streams reassembled, MPA walked (RFC 5044)
proc     programs on an instance (scripts/warpnic-run), bounded in time
verbs    one case's programs on a shared pair: servers on A, clients on B, listeners seen in
         telemetry, IPv6 and lower-layer checks
check    comparisons and polling for the checks of a case
"""
