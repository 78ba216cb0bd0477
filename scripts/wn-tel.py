#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ask one DPDK telemetry command of a running process (warpnicd: /warpnic/ctl,
/warpnic/dp/stats, /warpnic/dp/tcp, /warpnic/dp/qp,N, ...).

    wn-tel.py SOCKET COMMAND            the reply's value as JSON
    wn-tel.py SOCKET COMMAND KEY...     "KEY=VALUE ..." of a dictionary reply, in that order

e.g. wn-tel.py /var/run/dpdk/wn_a_1/dpdk_telemetry.v2 /warpnic/ctl clients qps
(scripts/wn-pair.sh tel a|b COMMAND [KEY...] finds the socket of a pair's instance).
The v2 protocol (DPDK 22.11): a SOCK_SEQPACKET unix socket; the server first sends a JSON
greeting with max_output_len, then answers each command with {"COMMAND": value}.
Exit status 1 when the socket cannot be reached, the reply is not for the command or a
KEY is missing.
"""
import json
import socket
import sys


def query_once(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)  # a telemetry thread on a CPU shared with busy pollers answers late
    try:
        s.connect(path)
        hello = json.loads(s.recv(4096).decode())
        s.send(cmd.encode())
        reply = json.loads(s.recv(hello.get('max_output_len', 16384)).decode())
    finally:
        s.close()
    return reply[cmd.split(',')[0]]  # the reply is keyed by the command without parameters


def query(path, cmd):
    # a connection that gets no answer in 10 s (seen on a loaded machine) is tried again on a
    # new one: the commands only read
    for attempt in range(3):
        try:
            return query_once(path, cmd)
        except socket.timeout:
            if attempt == 2:
                raise
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        value = query(sys.argv[1], sys.argv[2])
        if len(sys.argv) > 3:
            print(' '.join('%s=%s' % (k, value[k]) for k in sys.argv[3:]))
            return 0
    except (OSError, ValueError, KeyError, TypeError) as e:
        print('wn-tel.py: %s %s: %s' % (sys.argv[1], sys.argv[2], e), file=sys.stderr)
        return 1
    print(json.dumps(value, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
