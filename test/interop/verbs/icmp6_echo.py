#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Linux kernel reaches an address by NDP and ICMPv6 echo (run inside a namespace):

    icmp6_echo.py ADDRESS      exit status 0 when 3 echo requests got their 3 replies

A datagram makes the kernel resolve the address (its NS, the peer's NA); then 3 ICMPv6
echo requests (RFC 4443 §4.1; the kernel sums raw ICMPv6), each answered from ADDRESS."""
import socket
import struct
import sys
import time


dst = sys.argv[1]
# a datagram makes the kernel resolve the address (NS from fd77:6e::99, NA from warpnicd B)
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.sendto(b"x", (dst, 9))
# ICMPv6 echo (RFC 4443 §4.1; the kernel sums raw ICMPv6); replies from warpnicd B
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.settimeout(2)
got = 0
for seq in range(1, 4):
    s.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x776e, seq) + b"warpnic6", (dst, 0))
    end = time.time() + 2
    while time.time() < end:
        try:
            data, src = s.recvfrom(1500)
        except socket.timeout:
            break
        if data[0] == 129 and struct.unpack("!HH", data[4:8]) == (0x776e, seq) and \
                data[8:] == b"warpnic6" and src[0] == dst:
            got += 1
            break
print("echo replies: %d of 3" % got)
sys.exit(0 if got == 3 else 1)
