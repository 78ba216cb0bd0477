#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Self-test of mpa_stream_check.py on synthetic tshark output (no capture, no tshark).

A TCP stream is built as rnic_it's captures carry it: MPA Request and Reply (RFC 6581 Rev 2,
CRC on, Markers from the initiator only), then FPDUs with Markers every 512 octets from
SeqStart (RFC 5044 §4.3) and their CRC32c. It is written as tshark -V frame headers plus a
"-z follow,tcp,raw" section, and the checker must:
  * pass a clean stream (0 excused);
  * fail a Bad CRC32 verdict on a segment that holds exactly one whole FPDU;
  * excuse (count) one on a segment with two FPDUs, and one on a segment cut inside an FPDU;
  * fail one in the direction without Markers (Wireshark frames those right);
  * leave a Bad CRC32 of another TCP stream's frame to the driver (not excused here);
  * fail a stream whose FPDU carries a wrong CRC.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import mpa_stream_check as msc  # noqa: E402

INI_PORT, RES_PORT = "32768", "7471"


def startup(key, m):
    return key + bytes([(0x80 if m else 0) | 0x40, 2]) + (0).to_bytes(2, "big")


def fpdus(payloads, markers):
    """The octets after SeqStart and each FPDU's (start, end) in them."""
    out = bytearray()
    spans = []
    for ulpdu in payloads:
        fstart = len(out)
        if markers and len(out) % 512 == 0:
            out += (0).to_bytes(4, "big")
        hdr = len(out)
        body = len(ulpdu).to_bytes(2, "big") + ulpdu
        body += bytes(-len(body) % 4)
        for i in range(0, len(body) + 4, 4):
            if markers and len(out) % 512 == 0 and len(out) != fstart:
                out += (len(out) - hdr).to_bytes(4, "big")
            if i < len(body):
                out += body[i:i + 4]
        out += msc.crc32c(out[fstart:]).to_bytes(4, "little")
        spans.append((fstart, len(out)))
    return out, spans


def render(ini, res, ini_segs, res_segs, bad):
    """tshark -V frame headers (Bad CRC32 where bad holds (port, offset)) + follow section."""
    lines = []
    n = 0
    for port, dport, segs in ((INI_PORT, RES_PORT, ini_segs), (RES_PORT, INI_PORT, res_segs)):
        for off, ln in segs:
            n += 1
            lines.append("Frame %d: %d bytes on wire" % (n, ln + 54))
            lines.append("Transmission Control Protocol, Src Port: %s, Dst Port: %s, Seq: %d, "
                         "Ack: 1, Len: %d" % (port, dport, off + 1, ln))
            crc = "0x00000000 (Bad CRC32, should be 0x1)" if (port, off) in bad else \
                "0x00000000 (Good CRC32)"
            lines.append("        CRC check: " + crc)
    lines += ["=" * 66, "Follow: tcp,raw", "Filter: tcp.stream eq 0",
              "Node 0: 198.19.0.2:" + INI_PORT, "Node 1: 198.19.0.1:" + RES_PORT]
    for off, ln in ini_segs:
        lines.append(ini[off:off + ln].hex())
    for off, ln in res_segs:
        lines.append("\t" + res[off:off + ln].hex())
    lines.append("=" * 66)
    return "\n".join(lines) + "\n"


def check(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([sys.executable, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "mpa_stream_check.py"), f.name],
            capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return r.returncode, r.stdout


def main():
    req = startup(msc.KEY_REQ, False)  # M in the Request: the responder sends Markers (no)
    rep = startup(msc.KEY_REP, True)   # M in the Reply: the initiator sends Markers (yes)
    sizes = [1430, 28, 28, 700, 1430, 12, 300, 1430, 1430, 64]
    i_body, i_spans = fpdus([bytes((k * 7 + j) & 0xFF for j in range(s))
                             for k, s in enumerate(sizes)], True)
    r_body, r_spans = fpdus([bytes(range(40)), bytes(range(200))], False)
    ini, res = req + i_body, rep + r_body
    h = len(req)
    # one segment per FPDU, except FPDUs 1 and 2 packed into one segment
    i_segs = [(0, h)] + [(h + a, b - a) for a, b in i_spans]
    i_segs[2:4] = [(i_segs[2][0], i_segs[2][1] + i_segs[3][1])]
    r_segs = [(0, len(rep))] + [(len(rep) + a, b - a) for a, b in r_spans]
    whole = i_segs[1][0]      # FPDU 0, alone in its segment
    packed = i_segs[2][0]     # FPDUs 1 and 2
    failures = 0

    def expect(name, text, rc, excused=None, why=None):
        nonlocal failures
        got_rc, out = check(text)
        got_ex = None
        for line in out.splitlines():
            if line.startswith("tshark bad CRC excused: "):
                got_ex = int(line.split(": ")[1])
        ok = got_rc == rc and (excused is None or got_ex == excused) and \
            (why is None or why in out)
        print("%s %s (rc %d, excused %s)" % ("ok  " if ok else "FAIL", name, got_rc, got_ex))
        if not ok:
            print(out)
            failures += 1

    expect("clean stream", render(ini, res, i_segs, r_segs, set()), 0, 0)
    expect("Bad CRC on one whole FPDU", render(ini, res, i_segs, r_segs,
                                                {(INI_PORT, whole)}), 1,
           why="Bad CRC32 on one whole FPDU from the initiator")
    expect("Bad CRC on two packed FPDUs", render(ini, res, i_segs, r_segs,
                                                  {(INI_PORT, packed)}), 0, 1)
    # FPDU 3 (700 octets) retransmitted as two segments cut inside it
    a, ln = i_segs[4]
    cut = i_segs[:4] + [(a, 300), (a + 300, ln - 300)] + i_segs[5:]
    expect("Bad CRC on a segment cut inside an FPDU",
           render(ini, res, cut, r_segs, {(INI_PORT, a + 300)}), 0, 1)
    expect("Bad CRC without Markers", render(ini, res, i_segs, r_segs,
                                             {(RES_PORT, r_segs[1][0])}), 1,
           why="from the responder, which sends no Markers")
    other = render(ini, res, i_segs, r_segs, set()).replace(
        "Frame 1: ", "Frame 99: 60 bytes on wire\nTransmission Control Protocol, Src Port: 40000, "
        "Dst Port: 7471, Seq: 1, Ack: 1, Len: 24\n        CRC check: 0x0 (Bad CRC32, should be "
        "0x1)\nFrame 1: ", 1)
    expect("Bad CRC of another stream left to the driver", other, 0, 0)
    broken = bytearray(ini)
    broken[h + i_spans[4][0] + 10] ^= 1
    expect("a wrong CRC in the stream", render(bytes(broken), res, i_segs, r_segs, set()), 1,
           why="initiator: FPDU 4 at")
    print("%d of 7 checks failed" % failures if failures else "all 7 checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
