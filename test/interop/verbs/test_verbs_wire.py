# SPDX-License-Identifier: BSD-3-Clause
"""What warpnic puts on the wire under an unmodified rping, read by Wireshark (tshark's
JSON, wntest.capture): MPA/TCP over IPv4 and IPv6 (ICMPv6 neighbour discovery too), DDP over
SCTP (RFC 5043); and neighbour discovery and DAD (RFC 4861, 4862) between two warpnicd and
against the Linux kernel (iproute2's JSON). Each case has its own pair."""
import ipaddress
import json
import os
import subprocess
import sys

import pytest

from wntest.verbs import Verbs
from wntest import capture as cap
from wntest.check import poll
from wntest.pair import PairError

# Wireshark's iwarp_mpa dissector is heuristic only and needs the MPA handshake in the file:
# enabled explicitly, and the capture starts with the daemons
MPA = ('--enable-heuristic', 'iwarp_mpa_tcp')
PI_SEQUENCE = 0x02000000
TAGGED = {0: True, 1: False, 2: True, 3: False, 4: False, 5: False, 6: False, 7: False,
          8: False, 9: False, 10: False, 11: False, 12: False}


class Row:
    def __init__(self, name, run, ip='4', env=None, pair=(), **args):
        self.name, self.run, self.ip, self.env, self.pair, self.args = \
            name, run, ip, env or {}, tuple(pair), args

    def pair_key(self, params):
        return self.name  # a capture is the case's own


def rping_captured(v, count):
    v.need('rping', 'tshark')
    args = ['-a', v.a_ip, '-v', '-V', '-C', str(count)]
    srv = v.start_on('a', ['rping', '-s'] + args, 'rping_server')
    if not v.wait_server():
        v.fail('rping server is not listening')
    if v.on('b', ['rping', '-c'] + args, 'rping_client') != 0:
        v.fail('rping client failed')
    if v.wait(srv, 15) != 0:
        v.fail('rping server failed')


def stop(v):
    """Stopping the daemons closes (flushes) the pcapng files; both must exit 0."""
    v.last = True
    v.finish()


def frames(v, n, **kw):
    f = os.path.join(v.d, 'cap', n + '.pcapng')
    if not os.path.exists(f) or os.path.getsize(f) == 0:
        v.fail('no capture %s' % f)
    try:
        return cap.frames(f, protocols=None, **kw)
    except cap.CaptureError as e:
        v.fail(str(e))


def check_experts(v, n, layers):
    """No expert error or warning but TCP's sequence analysis (a tail loss probe after a
    stall draws a D-SACK) and Wireshark 4.0's two complaints about RFC 6581 startup frames."""
    for num, l in enumerate(layers, 1):
        for field, sev, group, msg in cap.experts(l):
            if group == PI_SEQUENCE or field in cap.RFC6581_EXPERT:
                continue
            v.fail('%s.pcapng frame %d: tshark expert %s: %s' % (n, num, field, msg))


def rping_pcap(v, count):
    """In both captures: one MPA Request (B -> A) and one Reply (A -> B), revision 2, CRC
    flag, not rejected, no Markers (RFC 5044 §7.1, RFC 6581); every FPDU's CRC checked (and
    the walk of the stream finds each valid: wntest.capture); rping's rounds in the RDMAP
    opcodes (>= COUNT Writes, Read Requests and Read Responses, >= 2 x COUNT Sends) and the
    ping data in >= 2 x COUNT frames; every TCP segment with payload decoded as MPA, nothing
    malformed, no expert warning. IPv6 only: no IPv4 or ARP frame; A and B resolved each other
    (an NS answered by an NA), each announced its address (NA), the capturing daemon probed
    its address and a link-local one (DAD, NS from ::)."""
    rping_captured(v, count)
    v.ip_check()
    stop(v)
    src = 'ip.src' if v.ip == '4' else 'ipv6.src'
    for n in 'ab':
        layers = frames(v, n, options=MPA)
        req, rep, ops, pings, fpdus = [], [], [], 0, 0
        for num, l in enumerate(layers, 1):
            if '_ws.malformed' in l:
                v.fail('%s.pcapng frame %d: malformed' % (n, num))
            tcp = l.get('tcp')
            if isinstance(tcp, dict) and int(cap.value(tcp, 'tcp.len', '0')) > 0 and \
                    'iwarp_mpa' not in l:
                v.fail('%s.pcapng frame %d: TCP payload not decoded as MPA' % (n, num))
            if v.ip == '6' and ('ip' in l or 'arp' in l):
                v.fail('%s.pcapng frame %d: IPv4/ARP in an IPv6-only pair' % (n, num))
            mpa = l.get('iwarp_mpa')
            if mpa is None:
                continue
            hs = (cap.value(l, src), cap.value(mpa, 'iwarp_mpa.rev'),
                  cap.value(mpa, 'iwarp_mpa.crc_flag'), cap.value(mpa, 'iwarp_mpa.rej_flag'),
                  cap.value(mpa, 'iwarp_mpa.marker_flag'))
            if cap.value(mpa, 'iwarp_mpa.key.req') is not None:
                req.append(hs)
            if cap.value(mpa, 'iwarp_mpa.key.rep') is not None:
                rep.append(hs)
            n_f = len(cap.values(mpa, 'iwarp_mpa.ulpdulength'))
            fpdus += n_f
            if len(cap.values(mpa, 'iwarp_mpa.crc_check')) != n_f:
                v.fail('%s.pcapng frame %d: an FPDU without a checked CRC' % (n, num))
            ops += cap.values(l, 'iwarp_rdma.opcode')
            pings += any('72646d612d70696e672d' in (d or '').replace(':', '')  # rdma-ping-
                         for d in cap.values(l, 'data.data'))
        if req != [(v.b_ip, '2', '1', '0', '0')]:
            v.fail('%s.pcapng: MPA Request not one rev 2 CRC frame from B: %s' % (n, req))
        if rep != [(v.a_ip, '2', '1', '0', '0')]:
            v.fail('%s.pcapng: MPA Reply not one rev 2 CRC frame from A: %s' % (n, rep))
        if fpdus < 5 * count:
            v.fail('%s.pcapng: only %d FPDUs decoded' % (n, fpdus))
        for op, want, name in (('0x00', count, 'Write'), ('0x01', count, 'Read Request'),
                               ('0x02', count, 'Read Response'), ('0x03', 2 * count, 'Send')):
            if ops.count(op) < want:
                v.fail('%s.pcapng: %d RDMAP %s (want >= %d)' % (n, ops.count(op), name, want))
        if pings < 2 * count:
            v.fail('%s.pcapng: ping data in %d frames only' % (n, pings))
        try:
            walked = cap.mpa_streams(layers)
        except cap.CaptureError as e:
            v.fail('%s.pcapng: %s' % (n, e))
        check_experts(v, n, layers)
        if v.ip == '6':
            ndp_seen(v, n, layers)
        v.note('%s.pcapng: MPA Request/Reply rev 2 with CRC, %d FPDUs, walk: %s' % (
            n, fpdus, '; '.join(cap.describe(walked[min(walked)]))))


def ndp_seen(v, n, layers):
    a, b = ipaddress.ip_address(v.a_ip), ipaddress.ip_address(v.b_ip)
    own = a if n == 'a' else b
    ns, na = [], []
    for l in layers:
        t = cap.value(l, 'icmpv6.type')
        s = cap.value(l, 'ipv6.src')
        if t == '135':
            ns.append((ipaddress.ip_address(s),
                       ipaddress.ip_address(cap.value(l, 'icmpv6.nd.ns.target_address'))))
        elif t == '136':
            na.append((ipaddress.ip_address(s),
                       ipaddress.ip_address(cap.value(l, 'icmpv6.nd.na.target_address'))))
    unspec = ipaddress.ip_address('::')
    err = []
    # address resolution (RFC 4861 §7.2): one solicits the other, which answers
    if not [1 for s, t in ns if {s, t} == {a, b} and (t, t) in na]:
        err.append('no NS between %s and %s answered by an NA' % (a, b))
    for x in (a, b):
        if (x, x) not in na:
            err.append('no NA from %s' % x)
    dad = {t for s, t in ns if s == unspec}
    if own not in dad:
        err.append('no DAD probe for %s' % own)
    if not any(t.is_link_local for t in dad):
        err.append('no DAD probe for a link-local address')
    if err:
        v.fail('%s.pcapng: %s' % (n, '; '.join(err)))
    v.note('%s.pcapng: ICMPv6 %d NS (%d DAD probes), %d NA; no IPv4 or ARP frame' % (
        n, len(ns), len(dad), len(na)))


def sctp_pcap(v, count):
    """rping over DDP over SCTP (WARPNIC_LLP=sctp). Wireshark 4.0 has no SCTP binding for
    its DDP/RDMAP dissector, so tshark checks the SCTP layer (CRC32c verification on) and
    the DDP and RDMAP headers are read from the DATA payloads it leaves undissected. In both
    captures: every IP protocol 132 packet dissected as SCTP, none malformed, every CRC32c
    good, no expert warning but sequence analysis; INIT (B) and INIT ACK (A) carry the
    Adaptation Layer Indication 0x00000001 (RFC 5043 §5.1, RFC 5061 §4.2.7), COOKIE ECHO /
    ACK, SACKs both ways, SHUTDOWN / ACK / COMPLETE; every DATA chunk PPID 16 or 17,
    unordered and whole (U, B, E: §10), each direction's DDP-SSNs from 0 without a gap;
    session control: B's first message an Initiate, A's an Accept, each side's last a
    Terminate, all well formed (§5.2.3); every DDP segment DDP version 1, RDMAP version 1, a
    header of the length its T bit says, rping's rounds in the opcodes and the ping data."""
    rping_captured(v, count)
    v.llp_check()
    stop(v)
    a_ip, b_ip = v.a_ip, v.b_ip
    for n in 'ab':
        layers = frames(v, n, options=('-o', 'sctp.checksum:CRC-32C'), display='ip.proto == 132')
        err, chunks, adapt, ssns, ctl, ops = [], {}, {}, {}, {}, []
        pings = segs = 0
        for num, l in enumerate(layers, 1):
            src = cap.value(l, 'ip.src')
            sctp = l.get('sctp')
            if not isinstance(sctp, dict):
                err.append('frame %d: not dissected as SCTP' % num)
                continue
            if '_ws.malformed' in l:
                err.append('frame %d: malformed' % num)
            if cap.value(sctp, 'sctp.checksum.status') != '1':
                err.append('frame %d: CRC32c status %s' % (num, cap.value(
                    sctp, 'sctp.checksum.status')))
            types = [int(t) for t in cap.values(sctp, 'sctp.chunk_type')]
            for t in types:
                chunks[(src, t)] = chunks.get((src, t), 0) + 1
            ct = [t for t in types if t in (1, 2)]
            if ct:
                adapt.setdefault((src, ct[0]), []).extend(
                    cap.values(sctp, 'sctp.adaptation_layer_indication') or ['none'])
            cols = [cap.values(sctp, k) for k in (
                'sctp.data_payload_proto_id', 'sctp.data_u_bit', 'sctp.data_b_bit',
                'sctp.data_e_bit', 'sctp.data_sid')]
            data = [bytes.fromhex(r[0]) for r in cap.find(l.get('data'), 'data.data_raw')] \
                if 'data' in l else []
            if any(len(c) != types.count(0) for c in cols + [data]):
                err.append('frame %d: %d DATA chunks but %s PPIDs/U/B/E/streams/payloads' % (
                    num, types.count(0), [len(c) for c in cols + [data]]))
                continue
            for ppid, u, b, e, sid, p in zip(*cols, data):
                if (u, b, e) != ('1', '1', '1'):
                    err.append('frame %d: DATA chunk U/B/E %s/%s/%s' % (num, u, b, e))
                if len(p) < 4:
                    err.append('frame %d: a DATA payload of %d octets' % (num, len(p)))
                    continue
                ssns.setdefault((src, sid), set()).add(int.from_bytes(p[:2], 'big'))
                if ppid == '17':
                    fc, pd = int.from_bytes(p[2:4], 'big'), len(p) - 4
                    ctl.setdefault(src, []).append(fc)
                    if fc not in range(1, 8) or pd > 512 or (fc == 4 and pd) or \
                            (fc >= 5 and pd < 4):
                        err.append('frame %d: session control code %d with %d octets' % (
                            num, fc, pd))
                elif ppid == '16':
                    segs += 1
                    t, dv, rv, op = p[2] >> 7, p[2] & 3, p[3] >> 6, p[3] & 15
                    hl = 14 if t else 18
                    if dv != 1 or rv != 1 or op not in TAGGED or TAGGED[op] != bool(t) or \
                            len(p) < 2 + hl:
                        err.append('frame %d: DDP segment T %d DV %d RV %d opcode %d' % (
                            num, t, dv, rv, op))
                        continue
                    ops.append(op)
                    pings += b'rdma-ping-' in p[2 + hl:]
                else:
                    err.append('frame %d: DATA chunk with PPID %s' % (num, ppid))
        if not layers:
            err.append('no SCTP packet')
        for side, t, name in ((b_ip, 1, 'INIT'), (a_ip, 2, 'INIT ACK')):
            got = adapt.get((side, t), [])
            if not got or any(x != '0x00000001' for x in got):
                err.append('%s from %s: Adaptation Layer Indication %s' % (name, side, got))
        for side, t, name in ((b_ip, 10, 'COOKIE ECHO'), (a_ip, 11, 'COOKIE ACK'),
                              (a_ip, 3, 'SACK'), (b_ip, 3, 'SACK'), (b_ip, 7, 'SHUTDOWN'),
                              (a_ip, 8, 'SHUTDOWN ACK'), (b_ip, 14, 'SHUTDOWN COMPLETE')):
            if not chunks.get((side, t)):
                err.append('no %s from %s' % (name, side))
        for k, s in sorted(ssns.items()):
            if s != set(range(len(s))):
                err.append('%s stream %s: DDP-SSNs not 0..%d' % (k[0], k[1], len(s) - 1))
        for side, first, name in ((b_ip, (1, 5), 'Initiate'), (a_ip, (2, 6), 'Accept')):
            c = ctl.get(side, [])
            if not c or c[0] not in first or c[-1] != 4:
                err.append('session control from %s: %s (want %s first, Terminate last)' % (
                    side, c, name))
        for op, want, name in ((0, count, 'Write'), (1, count, 'Read Request'),
                               (2, count, 'Read Response'), (3, 2 * count, 'Send')):
            if ops.count(op) < want:
                err.append('%d RDMAP %s (want >= %d)' % (ops.count(op), name, want))
        if pings < 2 * count:
            err.append('ping data in %d segments only' % pings)
        if err:
            v.fail('%s.pcapng: %s' % (n, '; '.join(err[:12])))
        check_experts(v, n, layers)
        v.note('%s.pcapng: %d packets, %d DDP segments, session control %s / %s' % (
            n, len(layers), segs, ctl.get(b_ip), ctl.get(a_ip)))


def net_state(v, side, addr):
    """An address's DAD state in /warpnic/dp/net ('absent' when it has none)."""
    for x in v.pair.tel(side, '/warpnic/dp/net')['addrs']:
        f = x.split()
        if f[0] == addr:
            return f[1]
    return 'absent'


def ndp_duplicate(v):
    """Two daemons, one address (memif, IPv6 only): B restarted with A's address as a second
    one: A defends it (NA to all nodes), B finds it duplicate and never uses it (the
    restart fails: an address is not usable); rping still runs over B's own."""
    v.need('rping')
    try:
        v.pair.restart('b', '--ip', 'fd77:6e::1/64')
    except PairError:
        pass  # B's addresses never all became usable
    else:
        v.fail('restart of B succeeded with a duplicate address')
    # the restart gives up at the first duplicate: B's own address may finish its DAD later
    for side, addr, want in (('b', 'fd77:6e::1/64', 'duplicate'),
                             ('b', 'fd77:6e::2/64', 'preferred'),
                             ('a', 'fd77:6e::1/64', 'preferred')):
        ok, st = poll(lambda: (lambda x: (x == want, x))(net_state(v, side, addr)))
        if not ok:
            v.fail('%s\'s %s: %s, not %s' % (side.upper(), addr, st, want))
    d = v.pair.tel('b', '/warpnic/dp/net')
    if (d['dad_duplicates'], d['addrs_duplicate']) != (1, 1):
        v.fail('B: dad_duplicates %d, addrs_duplicate %d' % (d['dad_duplicates'],
                                                              d['addrs_duplicate']))
    args = ['-a', v.a_ip, '-V', '-C', '20', '-S', '1000']
    srv = v.start_on('a', ['rping', '-s'] + args, 'rping_server')
    if not v.wait_server():
        v.fail('rping server is not listening')
    if v.on('b', ['rping', '-c'] + args, 'rping_client') != 0:
        v.fail('rping with a duplicate address on B failed')
    if v.wait(srv, 15) != 0:
        v.fail('rping server failed')


def ipj(*args):
    r = subprocess.run(['ip', '-j'] + list(args), capture_output=True, text=True)
    return json.loads(r.stdout or '[]') if r.returncode == 0 else []


def ndp_kernel(v):
    """The Linux kernel on the link (af_packet over veth, IPv6 only): the kernel of A's
    namespace, on the veth A's warpnicd uses, gets fd77:6e::99/64, resolves warpnicd B's
    address by NDP (its neighbour entry holds B's MAC) and gets ICMPv6 echo replies from it;
    then its DAD for B's address is answered by warpnicd B: the kernel marks it dadfailed,
    B keeps it preferred."""
    env = v.pair.env
    ns, ifc = env.get('WN_A_NETNS'), env.get('WN_A_IFACE')
    if not ns:
        v.fail('wn-pair.sh env names no namespace')
    if subprocess.run(['ip', '-n', ns, '-6', 'addr', 'add', 'fd77:6e::99/64', 'dev', ifc,
                       'nodad'], capture_output=True).returncode != 0:
        v.fail('cannot give the kernel an address')
    rc = subprocess.run(['ip', 'netns', 'exec', ns, sys.executable,
                         os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      'icmp6_echo.py'), v.b_ip],
                        stdout=open(v.out('kernel'), 'w'), stderr=subprocess.STDOUT).returncode
    if rc != 0:
        v.fail('the kernel did not reach warpnicd B')
    neigh = [x for x in ipj('-n', ns, '-6', 'neigh', 'show', v.b_ip, 'dev', ifc)]
    bmac = [x.get('address') for x in ipj('-n', env['WN_B_NETNS'], 'link', 'show',
                                           env['WN_B_IFACE'])]
    if not neigh or not bmac or neigh[0].get('lladdr', '').lower() != bmac[0].lower():
        v.fail('the kernel\'s neighbour entry of %s is not warpnicd B\'s MAC %s: %s' % (
            v.b_ip, bmac, neigh))
    # telemetry's snapshots follow the shards: up to 10 s for them to show it
    ok, d = poll(lambda: (lambda d: (d['rx_icmp_echo'] >= 3 and any(
        x.startswith('fd77:6e::99') for x in d['neighbours']), d))(
        v.pair.tel('b', '/warpnic/dp/net')))
    if d['rx_icmp_echo'] < 3:
        v.fail('warpnicd B answered no echo')
    if not ok:
        v.fail('warpnicd B did not learn the kernel\'s address')
    if subprocess.run(['ip', '-n', ns, '-6', 'addr', 'add', v.b_ip + '/64', 'dev', ifc],
                      capture_output=True).returncode != 0:
        v.fail('ip addr add %s' % v.b_ip)

    def verdict():
        # "dadfailed", or no longer "tentative" (passed); the kernel may delay its probe
        for link in ipj('-n', ns, '-6', 'addr', 'show', 'dev', ifc):
            for a in link.get('addr_info', []):
                if a.get('local') == v.b_ip:
                    return bool(a.get('dadfailed') or not a.get('tentative')), a
        return False, None
    _, a = poll(verdict, 30, 0.1)
    if not a or not a.get('dadfailed'):
        v.fail('the kernel\'s DAD did not find %s in use: %s' % (v.b_ip, a))
    st = net_state(v, 'b', v.b_ip + '/64')
    if st != 'preferred':
        v.fail('warpnicd B\'s %s: %s after defending it' % (v.b_ip, st))


RUNS = {'rping_pcap': rping_pcap, 'sctp_pcap': sctp_pcap, 'ndp_duplicate': ndp_duplicate,
        'ndp_kernel': ndp_kernel}
ROWS = [
    Row('rping_pcap', 'rping_pcap', pair=('--pcap', 'CAP'), count=20),
    Row('ipv6_rping_pcap', 'rping_pcap', ip='6', pair=('--pcap', 'CAP'), count=20),
    Row('sctp_rping_pcap', 'sctp_pcap', env={'WARPNIC_LLP': 'sctp'}, pair=('--pcap', 'CAP'),
        count=20),
    Row('ipv6_ndp_duplicate', 'ndp_duplicate', ip='6'),
    Row('ipv6_ndp_kernel', 'ndp_kernel', ip='6', pair=('--link', 'af_packet')),
]


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in ROWS])
def test_verbs(request, build, pairs, row):
    v = Verbs(request, build, pairs, ip=row.ip, env=row.env)
    v.pair_opts = [os.path.join(v.d, 'cap') if w == 'CAP' else w for w in row.pair]
    v.start()
    try:
        RUNS[row.run](v, **row.args)
        if v.pair is not None and v.pair.up and not v.pair.alive():
            v.fail('a warpnicd died')
    except BaseException:
        pairs.release(judge=False)
        raise
    if v.pair.up:
        v.finish()
