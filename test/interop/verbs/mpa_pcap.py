#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The MPA CRCs on the wire, from a capture (Ethernet, IPv4, classic pcap):

    mpa_pcap.py FILE     one line per TCP direction that carries MPA, then each bad FPDU

Each direction's payload is put in sequence order (a retransmission that differs from the
first copy is reported, the first copy kept); from the MPA Request or Reply on (RFC 5044
§7.1), the FPDUs (without Markers: siw never asks for them) are walked and each CRC32c
checked (RFC 5044 §4.4). Exit status 1 when an FPDU's CRC or a retransmission is wrong, so a
peer that sends a bad CRC is told apart from a receiver that computes one wrong."""
import struct
import sys

CRC_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def frames(path):
    with open(path, "rb") as f:
        d = f.read()
    e = "<" if struct.unpack("<I", d[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    o, n = 24, 0
    while o + 16 <= len(d):
        incl = struct.unpack(e + "I", d[o + 8:o + 12])[0]
        n += 1
        yield n, d[o + 16:o + 16 + incl]
        o += 16 + incl


def streams(path):
    """{(src, sport, dst, dport): {"isn", "data": {offset: octet}, "frame", "bad_rtx"}}"""
    out = {}
    for n, f in frames(path):
        if len(f) < 34 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ip = f[14:]
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:struct.unpack(">H", ip[2:4])[0]]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        key = (".".join(map(str, ip[12:16])), sport, ".".join(map(str, ip[16:20])), dport)
        s = out.setdefault(key, {"isn": None, "data": {}, "frame": {}, "bad_rtx": []})
        if tcp[13] & 2:  # SYN
            s["isn"] = seq
            continue
        pay = tcp[(tcp[12] >> 4) * 4:]
        if s["isn"] is None or not pay:
            continue
        rel = (seq - s["isn"] - 1) & 0xFFFFFFFF
        for i, b in enumerate(pay):
            old = s["data"].setdefault(rel + i, b)
            s["frame"].setdefault(rel + i, n)
            if old != b:
                s["bad_rtx"].append((n, rel + i))
    return out


def check(key, s):
    data = s["data"]
    end = 0
    while end in data:
        end += 1
    buf = bytes(data[i] for i in range(end))
    if buf[:16] not in (b"MPA ID Req Frame", b"MPA ID Rep Frame"):
        return 0
    bad = len(s["bad_rtx"])
    markers, crc = bool(buf[16] & 0x80), bool(buf[16] & 0x40)
    o = 20 + struct.unpack(">H", buf[18:20])[0]
    fpdus = 0
    lines = []
    while not markers and o + 2 <= end:
        ulen = struct.unpack(">H", buf[o:o + 2])[0]
        wire = 2 + ulen + (-(2 + ulen) & 3) + 4
        if o + wire > end:
            break
        want = struct.unpack("<I", buf[o + wire - 4:o + wire])[0]
        if crc and crc32c(buf[o:o + wire - 4]) != want:
            bad += 1
            lines.append("  bad CRC: FPDU at stream octet %d (frame %d), ULPDU_Length %d"
                         % (o, s["frame"][o], ulen))
        fpdus += 1
        o += wire
    print("%s:%d -> %s:%d: %d octets in order, %s%d FPDUs, %d bad, %d retransmitted "
          "octets differ" % (key + (end, "Markers (not walked), " if markers else "",
                                    fpdus, bad - len(s["bad_rtx"]), len(s["bad_rtx"]))))
    for n, off in s["bad_rtx"][:5]:
        lines.append("  retransmission differs: stream octet %d (frame %d)" % (off, n))
    for line in lines[:20]:
        print(line)
    return bad


def main():
    bad = 0
    for key, s in streams(sys.argv[1]).items():
        bad += check(key, s)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
