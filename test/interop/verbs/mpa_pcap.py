#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The MPA CRCs on the wire, from a capture:

    mpa_pcap.py FILE     each TCP stream that carries MPA: its walk, or its first bad FPDU

Every stream that starts with an MPA Request is reassembled and walked in both directions
by wntest.capture (tshark's frames; every FPDU's Markers and CRC32c checked, RFC 5044 §4.3,
§4.4), so a peer that sends a bad CRC is told apart from a receiver that computes one
wrong. Exit status 1 when a stream's walk fails."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from wntest import capture  # noqa: E402 (the path above first)


def main():
    bad = 0
    for sid, segs in sorted(capture.streams(capture.frames(sys.argv[1])).items()):
        ini_port, res_port = capture.endpoints(segs)
        try:
            ini = capture.reassemble(segs, ini_port)
            if not ini.startswith(capture.KEY_REQ):
                continue
            lines = capture.describe(capture.walk_mpa(ini, capture.reassemble(segs, res_port),
                                                      ini_port, res_port))
        except capture.CaptureError as e:
            bad += 1
            lines = ["BAD: %s" % e]
        print("TCP stream %d (ports %d -> %d):" % (sid, ini_port, res_port))
        for line in lines:
            print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
