#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel-side TCP peer for the interop tests (runs inside the test's network namespace).

  kpeer.py send HOST PORT BYTES          connect, send BYTES random octets, print their sha256
  kpeer.py recv PORT [--ready FILE]      accept one connection, read to EOF, print bytes + sha256
  kpeer.py echo-many HOST PORT CONNS BYTES
                                         CONNS concurrent connections, each sends BYTES random
                                         octets, half-closes, and checks the echo is identical
  kpeer.py synflood HOST PORT SECONDS [PPS]
                                         spoofed SYNs (raw socket, random on-link sources),
                                         as fast as possible or PPS per second
Output lines are "key value" pairs the shell scripts grep.
"""
import asyncio
import hashlib
import os
import random
import socket
import struct
import sys
import time

CHUNK = 1 << 20


def cmd_send(host, port, nbytes):
    h = hashlib.sha256()
    left = nbytes
    t0 = time.monotonic()
    with socket.create_connection((host, port), timeout=60) as s:
        s.settimeout(None)
        while left > 0:
            b = os.urandom(min(CHUNK, left))
            h.update(b)
            s.sendall(b)
            left -= len(b)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    dt = time.monotonic() - t0
    print("bytes %d sha256 %s seconds %.3f gbps %.3f" % (nbytes, h.hexdigest(), dt,
                                                         nbytes * 8 / dt / 1e9 if dt else 0))


def cmd_recv(port, ready=None):
    h = hashlib.sha256()
    n = 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("0.0.0.0", port))
        ls.listen(1)
        if ready:
            with open(ready, "w") as f:
                f.write("ready\n")
        c, _ = ls.accept()
        t0 = time.monotonic()
        with c:
            while True:
                b = c.recv(CHUNK)
                if not b:
                    break
                h.update(b)
                n += len(b)
        dt = time.monotonic() - t0
    print("bytes %d sha256 %s seconds %.3f" % (n, h.hexdigest(), dt))


async def one_echo(host, port, nbytes, res):
    data = os.urandom(nbytes)
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 60)
        w.write(data)
        await w.drain()
        w.write_eof()
        got = await asyncio.wait_for(r.read(-1), 120)
        w.close()
        res["ok" if got == data else "bad"] += 1
    except Exception as e:  # noqa: BLE001 - every failure counts
        res["err"] += 1
        res.setdefault("why", repr(e))


async def echo_many(host, port, conns, nbytes):
    res = {"ok": 0, "bad": 0, "err": 0}
    await asyncio.gather(*(one_echo(host, port, nbytes, res) for _ in range(conns)))
    return res


def cmd_echo_many(host, port, conns, nbytes):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, conns + 256)), hard))
    t0 = time.monotonic()
    res = asyncio.run(echo_many(host, port, conns, nbytes))
    print("ok %d bad %d err %d seconds %.3f%s" % (res["ok"], res["bad"], res["err"],
                                                  time.monotonic() - t0,
                                                  " why " + res["why"] if "why" in res else ""))
    return 0 if res["ok"] == conns else 1


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def cmd_synflood(host, port, seconds, pps=0):
    dst = socket.inet_aton(host)
    base = struct.unpack("!I", dst)[0] & 0xFFFFFF00
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    rnd = random.Random(1)
    sent = 0
    t0 = time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        if pps > 0:
            ahead = t0 + sent / pps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        for _ in range(256 if pps == 0 else 16):
            src = struct.pack("!I", base | rnd.randrange(100, 250))
            sport = rnd.randrange(1024, 65535)
            seq = rnd.getrandbits(32)
            tcp = struct.pack("!HHIIBBHHH", sport, port, seq, 0, 5 << 4, 0x02, 64240, 0, 0)
            ph = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
            tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), rnd.getrandbits(16), 0,
                             64, 6, 0, src, dst)
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            try:
                s.sendto(ip + tcp, (host, 0))
                sent += 1
            except OSError:
                time.sleep(0.001)
    print("syns %d seconds %d" % (sent, seconds))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "send":
        cmd_send(argv[2], int(argv[3]), int(argv[4]))
    elif cmd == "recv":
        ready = argv[argv.index("--ready") + 1] if "--ready" in argv else None
        cmd_recv(int(argv[2]), ready)
    elif cmd == "echo-many":
        return cmd_echo_many(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif cmd == "synflood":
        cmd_synflood(argv[2], int(argv[3]), float(argv[4]),
                     float(argv[5]) if len(argv) > 5 else 0)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
