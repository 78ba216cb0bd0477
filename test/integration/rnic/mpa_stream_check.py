#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Walk both directions of one TCP stream of a capture as MPA (RFC 5044, RFC 6581).

    mpa_stream_check.py CAPTURE.pcapng | TSHARK_OUTPUT [STREAM]

STREAM is tshark's tcp.stream index (default 0, the first connection). TSHARK_OUTPUT is any
tshark output that contains a "-z follow,tcp,raw,STREAM" section (so one tshark pass can serve
several checks); a .pcap/.pcapng file is read with tshark directly.

Independent of Wireshark's MPA dissector (which frames FPDUs with Markers only when a TCP
segment holds exactly one FPDU): the reassembled byte stream of each direction is parsed from
the startup frame to the last FPDU. Checked:
  * the startup frames: key, PD_Length; which directions carry Markers (the Request's M asks
    the Responder for Markers, the Reply's M asks the Initiator, RFC 5044 §7.1.2) and whether
    CRCs are on (C in either frame);
  * every Marker sits at SeqStart + 512 * k, its FPDUPTR is 0 when it precedes an FPDU and
    otherwise the distance back to that FPDU's ULPDU_Length (RFC 5044 §4.3);
  * every FPDU's CRC32c covers ULPDU_Length, ULPDU, PAD and its Markers (RFC 5044 §4.4), or
    is 0 when CRCs are off;
  * the stream ends on an FPDU boundary;
  * given tshark -V output, every frame of this stream that tshark calls "Bad CRC32": with
    Markers, Wireshark 4.0 frames an FPDU from the segment's length, so its verdict on a
    segment that is not exactly one whole FPDU (several packed, or one cut by a
    retransmission that starts inside it) is its own misreading, not ours: such frames are
    counted; a Bad CRC on a segment holding exactly one FPDU, or in a direction without
    Markers, fails.
Output (for the driver to compare):
    request: M C Rev            e.g. "request: 0 1 2"
    reply: M C Rev | none       "none": the responder sent nothing (closed the connection)
    first: OPCODE ULPDU_LENGTH  the initiator's first FPDU (RDMAP opcode in hex) or "none"
    <direction> -> peer: ...    one summary line per direction
    tshark bad CRC excused: N   frames of this stream that tshark misframed (above)
Exits 1 with "FAIL:" on the first violation.
"""
import subprocess
import sys

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def die(msg):
    print("mpa_stream_check: FAIL: " + msg)
    sys.exit(1)


def follow_text(arg, stream):
    if arg.endswith(".pcap") or arg.endswith(".pcapng"):
        return subprocess.run(["tshark", "-r", arg, "-q", "-z", "follow,tcp,raw,%d" % stream],
                              check=True, capture_output=True, text=True).stdout
    with open(arg, encoding="utf-8", errors="replace") as f:
        return f.read()


def streams(text, stream):
    data = {0: bytearray(), 1: bytearray()}
    ports = {}
    state = 0  # 0: before the section, 1: headers, 2: data, 3: after
    for line in text.splitlines():
        if state == 0:
            if line.startswith("Follow: tcp,raw"):
                state = 1
            continue
        if state == 1:
            if line.startswith("Filter: ") and line.split()[-1] != str(stream):
                state = 0  # another stream's section
            elif line.startswith("Node "):
                # "Node 0: 198.19.0.2:32768"
                ports[int(line[5])] = line.rsplit(":", 1)[-1].strip()
                if line.startswith("Node 1:"):
                    state = 2
            continue
        if state == 2:
            if line.startswith("="):
                break
            node = 1 if line.startswith("\t") else 0
            h = line.strip()
            if h:
                data[node] += bytes.fromhex(h)
    if state == 0:
        die("no follow,tcp,raw section of TCP stream %d in the input" % stream)
    if not data[0]:
        die("TCP stream %d carried nothing from its initiator" % stream)
    # node 0 opened the connection: the Initiator
    return data[0], data[1], (ports.get(0), ports.get(1))


def bad_crc_frames(text):
    """(frame, src port, relative Seq, Len) of every frame tshark -V calls "Bad CRC32"."""
    out = []
    frame = tcp = None
    for line in text.splitlines():
        if line.startswith("Frame ") and ":" in line:
            frame, tcp = line.split(":", 1)[0][6:], None
        elif line.startswith("Transmission Control Protocol, Src Port: "):
            f = {}
            for part in line.split(", ")[1:]:
                k, _, v = part.partition(": ")
                f[k] = v
            try:
                tcp = (f["Src Port"], int(f["Seq"]), int(f["Len"]))
            except (KeyError, ValueError):
                tcp = None
        elif "Bad CRC32" in line:
            out.append((frame,) + (tcp if tcp else (None, None, None)))
    return out


def startup(s, key, who):
    if len(s) < 20 or s[:16] != key:
        die("%s: no MPA %s frame at the start of its stream" % (who, key[7:10].decode()))
    flags, rev = s[16], s[17]
    pd_len = int.from_bytes(s[18:20], "big")
    if pd_len > 512 or len(s) < 20 + pd_len:
        die("%s: bad PD_Length %d" % (who, pd_len))
    return {"m": bool(flags & 0x80), "c": bool(flags & 0x40), "r": bool(flags & 0x20),
            "rev": rev, "len": 20 + pd_len}


def walk(s, start, markers, crc, who):
    """Parse FPDUs of s[start:]; positions are relative to SeqStart = start."""
    n = len(s) - start
    pos = 0
    fpdus = nmark = 0
    first = None
    bounds = [0]  # every FPDU's first octet (a leading Marker's), then the stream's end
    while pos < n:
        fstart = pos
        hdr = pos
        if markers and pos % 512 == 0:
            m = s[start + pos:start + pos + 4]
            if len(m) < 4 or int.from_bytes(m, "big") & 0xFFFF != 0:
                die("%s: Marker at FPDU start %d has FPDUPTR %s, want 0" % (who, pos, m.hex()))
            nmark += 1
            hdr = pos + 4
        # logical octets of the FPDU, Markers skipped
        if hdr + 2 > n:
            die("%s: stream ends inside an FPDU header at %d" % (who, hdr))
        ulen = int.from_bytes(s[start + hdr:start + hdr + 2], "big")
        need = 2 + ulen + (-(2 + ulen)) % 4 + 4
        p = hdr
        logical = 0
        while logical < need:
            if markers and p % 512 == 0 and p != fstart:
                if p + 4 > n:
                    die("%s: stream ends inside a Marker at %d" % (who, p))
                ptr = int.from_bytes(s[start + p:start + p + 4], "big") & 0xFFFF
                if ptr != p - hdr:
                    die("%s: Marker at %d has FPDUPTR %d, want %d (FPDU header at %d)" %
                        (who, p, ptr, p - hdr, hdr))
                nmark += 1
                p += 4
                continue
            take = need - logical
            if markers:
                take = min(take, 512 - p % 512)
            p += take
            logical += take
        if p > n:
            die("%s: stream ends inside the FPDU at %d (ULPDU_Length %d)" % (who, hdr, ulen))
        wire = s[start + fstart:start + p]
        if first is None:
            # ULPDU_Length, DDP control, RDMAP control (opcode in its low 4 bits): FPDUs
            # start 4-aligned from SeqStart, so only a leading Marker can precede them
            off = hdr - fstart
            first = (wire[off + 3] & 0x0F if ulen >= 2 else -1, ulen)
        got = int.from_bytes(wire[-4:], "little")  # CRC-32C value, least significant octet first
        want = crc32c(wire[:-4]) if crc else 0
        if got != want:
            die("%s: FPDU %d at %d (ULPDU_Length %d): CRC 0x%08x, want 0x%08x" %
                (who, fpdus, hdr, ulen, got, want))
        fpdus += 1
        pos = p
        bounds.append(pos)
    return fpdus, nmark, first, bounds


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        sys.exit(2)
    stream = int(sys.argv[2]) if len(sys.argv) == 3 else 0
    text = follow_text(sys.argv[1], stream)
    ini, res, ports = streams(text, stream)
    req = startup(ini, KEY_REQ, "initiator")
    print("request: %d %d %d" % (req["m"], req["c"], req["rev"]))
    if len(res) == 0:
        # the responder closed without a Reply: nothing may follow the Request
        print("reply: none")
        print("first: none")
        if len(ini) != req["len"]:
            die("initiator sent %d octets after its Request without a Reply" %
                (len(ini) - req["len"]))
        return
    rep = startup(res, KEY_REP, "responder")
    print("reply: %d %d %d" % (rep["m"], rep["c"], rep["rev"]))
    if rep["r"]:
        die("the Reply rejected the connection")
    crc = req["c"] or rep["c"]
    lines = []
    seen = {}  # src port -> (who, Markers, startup length, FPDU boundaries)
    for who, s, f, markers, port in (("initiator", ini, req, rep["m"], ports[0]),
                                     ("responder", res, rep, req["m"], ports[1])):
        fpdus, nmark, first, bounds = walk(s, f["len"], markers, crc, who)
        seen[port] = (who, markers, f["len"], set(bounds))
        if who == "initiator":
            print("first: " + ("none" if first is None else
                               "0x%02x %d" % (first[0], first[1])))
        lines.append("%s -> peer: Rev %d, %d FPDUs, Markers %s (%d), CRC %s: all valid" %
                     (who, f["rev"], fpdus, "on" if markers else "off", nmark,
                      "on" if crc else "off"))
    print("\n".join(lines))
    excused = 0
    for frame, port, seq, length in bad_crc_frames(text):
        if port not in seen:
            continue  # another TCP stream's frame (the driver counts what is excused)
        who, markers, hdr, bounds = seen[port]
        # relative Seq 1 is the stream's first octet; FPDU positions count from SeqStart
        lo = seq - 1 - hdr
        hi = lo + length
        if not markers:
            die("tshark: frame %s: Bad CRC32 from the %s, which sends no Markers" % (frame, who))
        whole = lo in bounds and hi in bounds
        if whole and sorted(b for b in bounds if lo <= b <= hi) == [lo, hi]:
            die("tshark: frame %s: Bad CRC32 on one whole FPDU from the %s (at %d)" %
                (frame, who, lo))
        excused += 1
    print("tshark bad CRC excused: %d" % excused)


if __name__ == "__main__":
    main()
