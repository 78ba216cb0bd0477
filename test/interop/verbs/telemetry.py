#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ask one DPDK telemetry command of a running process and print the reply's value as JSON.

    telemetry.py SOCKET COMMAND       e.g. telemetry.py /var/run/dpdk/wn_a_1/dpdk_telemetry.v2 /warpnic/ctl

The v2 protocol (DPDK 22.11): a SOCK_SEQPACKET unix socket; the server first sends a JSON
greeting with max_output_len, then answers each command with {"COMMAND": value}.
Exit status 1 when the socket cannot be reached or the reply is not for the command.
"""
import json
import socket
import sys


def query(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    hello = json.loads(s.recv(4096).decode())
    s.send(cmd.encode())
    reply = json.loads(s.recv(hello.get('max_output_len', 16384)).decode())
    s.close()
    return reply[cmd]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        value = query(sys.argv[1], sys.argv[2])
    except (OSError, ValueError, KeyError) as e:
        print('telemetry.py: %s: %s' % (sys.argv[1], e), file=sys.stderr)
        return 1
    print(json.dumps(value, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
