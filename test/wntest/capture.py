# SPDX-License-Identifier: BSD-3-Clause
"""Captures read through tshark's JSON (-T json -x), never its text.

frames(PCAP)        every frame's layers as dictionaries (duplicate keys merged into lists)
streams(FRAMES)     each TCP stream's two directions reassembled from the segments' payload
walk_mpa(...)       one TCP stream walked as MPA (RFC 5044, RFC 6581) independently of
                    Wireshark's dissector: startup frames, Markers, FPDUPTRs, every CRC32c
iwarp_check(...)    Wireshark's own iWARP dissection of a capture judged against the walk
"""
import json
import subprocess

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"

# Our random payloads look like RPC-over-RDMA or SMB Direct to those heuristic dissectors:
# iWARP only.
TSHARK = ['tshark', '--disable-protocol', 'rpcordma', '--disable-protocol', 'smb_direct']

# _ws.expert.severity (epan/proto.h PI_WARN, PI_ERROR)
PI_WARN = 0x00600000
# Wireshark 4.0 calls RFC 6581's Rev 2 and enhanced bits in Res errors of RFC 5044: not ours
RFC6581_EXPERT = ('iwarp_mpa.res.not_set0', 'iwarp_mpa.rev.not_set1')


class CaptureError(Exception):
    pass


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def frames(pcap, protocols='tcp iwarp_mpa iwarp_ddp_rdmap', options=(), display=None):
    """The layers of every frame (tshark -T json -x; only PROTOCOLS' subtrees unless None;
    OPTIONS: more tshark options, e.g. ('-o', 'sctp.checksum:CRC-32C'); DISPLAY: a display
    filter)."""
    cmd = TSHARK + list(options) + ['-r', pcap, '-T', 'json', '-x', '--no-duplicate-keys']
    if protocols:
        cmd += ['-J', protocols]
    if display:
        cmd += ['-Y', display]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise CaptureError('tshark cannot read %s: %s' % (pcap, r.stderr.strip()[-500:]))
    return [p['_source']['layers'] for p in json.loads(r.stdout or '[]')]


def value(layer, key, default=None):
    """The first occurrence of KEY anywhere in a frame's layers."""
    for v in find(layer, key):
        return v
    return default


def values(layer, key):
    return list(find(layer, key))


def experts(layer, min_severity=PI_WARN):
    """(field, severity, group, message) of every expert item of a frame at or above
    min_severity."""
    out = []
    for e in find(layer, '_ws.expert'):
        if not isinstance(e, dict):
            continue
        sev = int(e.get('_ws.expert.severity', 0))
        if sev >= min_severity:
            field = [k for k in e if not k.startswith('_ws.expert.')]
            out.append((field[0] if field else '', sev, int(e.get('_ws.expert.group', 0)),
                        e.get('_ws.expert.message', '')))
    return out


def many(v):
    """A field's occurrences: tshark merges repeated keys into a list."""
    return v if isinstance(v, list) else [v]


def raws(v):
    """A _raw field's occurrences ([hex, pos, len, bitmask, type] each)."""
    if isinstance(v, list) and v and isinstance(v[0], list):
        return v
    return [v]


def find(obj, key):
    """Every occurrence of KEY at any depth of a layer tree."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                yield from (raws(v) if key.endswith('_raw') else many(v))
            else:
                yield from find(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from find(v, key)


def _one(layer, key, default=None):
    v = layer.get(key, default)
    return v[0] if isinstance(v, list) else v


class Segment:
    def __init__(self, frame, tcp):
        self.frame = frame
        self.src = int(_one(tcp, 'tcp.srcport'))
        self.dst = int(_one(tcp, 'tcp.dstport'))
        self.seq = int(_one(tcp, 'tcp.seq'))          # relative: 1 is the first data octet
        self.len = int(_one(tcp, 'tcp.len', 0))
        flags = int(_one(tcp, 'tcp.flags', '0'), 16)
        self.syn_only = flags & 0x12 == 0x02
        raw = tcp.get('tcp.payload_raw')
        self.payload = bytes.fromhex(raw[0]) if raw else b''
        self.payload_pos = raw[1] if raw else None


def streams(layers):
    """{tcp.stream: [Segment...]} in capture order."""
    out = {}
    for n, l in enumerate(layers, 1):
        tcp = l.get('tcp')
        if not isinstance(tcp, dict):
            continue
        out.setdefault(int(_one(tcp, 'tcp.stream')), []).append(Segment(n, tcp))
    return out


def reassemble(segs, src):
    """The octets SRC sent on one stream, from relative sequence number 1 (retransmissions
    dropped). CaptureError when the capture lacks a segment."""
    data = bytearray()
    nxt = 1
    for s in sorted((s for s in segs if s.src == src and s.len > 0), key=lambda s: s.seq):
        if s.seq > nxt:
            raise CaptureError('port %d: the capture lacks octets %d..%d' % (src, nxt, s.seq))
        if s.seq + s.len <= nxt:
            continue
        data += s.payload[nxt - s.seq:]
        nxt = s.seq + s.len
    return bytes(data)


def endpoints(segs):
    """(initiator port, responder port): the sender of the SYN, else of the first segment."""
    for s in segs:
        if s.syn_only:
            return s.src, s.dst
    return segs[0].src, segs[0].dst


def startup(s, key, who):
    if len(s) < 20 or s[:16] != key:
        raise CaptureError('%s: no MPA %s frame at the start of its stream' %
                           (who, key[7:10].decode()))
    flags, rev = s[16], s[17]
    pd_len = int.from_bytes(s[18:20], 'big')
    if pd_len > 512 or len(s) < 20 + pd_len:
        raise CaptureError('%s: bad PD_Length %d' % (who, pd_len))
    return {'m': bool(flags & 0x80), 'c': bool(flags & 0x40), 'r': bool(flags & 0x20),
            'rev': rev, 'len': 20 + pd_len, 'pd': bytes(s[20:20 + pd_len])}


def walk(s, start, markers, crc, who):
    """Parse the FPDUs of s[start:] (positions relative to SeqStart = start).

    Every Marker sits at SeqStart + 512 * k with FPDUPTR 0 before an FPDU, else the distance
    back to that FPDU's ULPDU_Length (RFC 5044 §4.3); every CRC32c covers ULPDU_Length, ULPDU,
    PAD and the FPDU's Markers (§4.4), or is 0 with CRCs off; the stream ends on an FPDU
    boundary. Returns {'fpdus', 'markers', 'first' (opcode, ULPDU_Length) or None,
    'bounds' (each FPDU's first octet and the end), 'headers' {position of ULPDU_Length:
    (ULPDU_Length, its CRC field read big-endian)}}."""
    n = len(s) - start
    pos = fpdus = nmark = 0
    first = None
    bounds = [0]
    headers = {}
    while pos < n:
        fstart = hdr = pos
        if markers and pos % 512 == 0:
            m = s[start + pos:start + pos + 4]
            if len(m) < 4 or int.from_bytes(m, 'big') & 0xFFFF != 0:
                raise CaptureError('%s: Marker at FPDU start %d has FPDUPTR %s, want 0' %
                                   (who, pos, m.hex()))
            nmark += 1
            hdr = pos + 4
        if hdr + 2 > n:
            raise CaptureError('%s: stream ends inside an FPDU header at %d' % (who, hdr))
        ulen = int.from_bytes(s[start + hdr:start + hdr + 2], 'big')
        need = 2 + ulen + (-(2 + ulen)) % 4 + 4
        p = hdr
        logical = 0
        while logical < need:
            if markers and p % 512 == 0 and p != fstart:
                if p + 4 > n:
                    raise CaptureError('%s: stream ends inside a Marker at %d' % (who, p))
                ptr = int.from_bytes(s[start + p:start + p + 4], 'big') & 0xFFFF
                if ptr != p - hdr:
                    raise CaptureError('%s: Marker at %d has FPDUPTR %d, want %d (FPDU header '
                                       'at %d)' % (who, p, ptr, p - hdr, hdr))
                nmark += 1
                p += 4
                continue
            take = need - logical
            if markers:
                take = min(take, 512 - p % 512)
            p += take
            logical += take
        if p > n:
            raise CaptureError('%s: stream ends inside the FPDU at %d (ULPDU_Length %d)' %
                               (who, hdr, ulen))
        wire = s[start + fstart:start + p]
        if first is None:
            # ULPDU_Length, DDP control, RDMAP control (opcode in its low 4 bits)
            off = hdr - fstart
            first = (wire[off + 3] & 0x0F if ulen >= 2 else -1, ulen)
        got = int.from_bytes(wire[-4:], 'little')  # CRC-32C, least significant octet first
        want = crc32c(wire[:-4]) if crc else 0
        if got != want:
            raise CaptureError('%s: FPDU %d at %d (ULPDU_Length %d): CRC 0x%08x, want 0x%08x' %
                               (who, fpdus, hdr, ulen, got, want))
        headers[hdr] = (ulen, int.from_bytes(wire[-4:], 'big'))
        fpdus += 1
        pos = p
        bounds.append(pos)
    return {'fpdus': fpdus, 'markers': nmark, 'first': first, 'bounds': bounds,
            'headers': headers}


def walk_mpa(ini, res, ini_port=None, res_port=None):
    """Both directions of one MPA connection (initiator's octets, responder's octets).

    Returns a summary: request / reply (M, C, Rev) or reply None when the responder sent
    nothing (then nothing may follow the Request), request_pd / reply_pd (their Private
    Data, Rev 2: RFC 6581's IRD/ORD octets first), first (the initiator's first FPDU's
    opcode and ULPDU_Length), and per direction its walk, Markers and CRC."""
    if not ini:
        raise CaptureError('the stream carried nothing from its initiator')
    req = startup(ini, KEY_REQ, 'initiator')
    out = {'request': (int(req['m']), int(req['c']), req['rev']), 'reply': None,
           'request_pd': req['pd'], 'reply_pd': None, 'first': None, 'dirs': {}}
    if not res:
        if len(ini) != req['len']:
            raise CaptureError('initiator sent %d octets after its Request without a Reply' %
                               (len(ini) - req['len']))
        return out
    rep = startup(res, KEY_REP, 'responder')
    out['reply'] = (int(rep['m']), int(rep['c']), rep['rev'])
    out['reply_pd'] = rep['pd']
    if rep['r']:
        raise CaptureError('the Reply rejected the connection')
    crc = req['c'] or rep['c']
    # the Request's M asks the Responder for Markers, the Reply's M the Initiator (§7.1.2)
    for who, s, f, markers, port in (('initiator', ini, req, rep['m'], ini_port),
                                     ('responder', res, rep, req['m'], res_port)):
        w = walk(s, f['len'], markers, crc, who)
        w.update(who=who, port=port, rev=f['rev'], marked=bool(markers), crc=bool(crc),
                 startup_len=f['len'])
        out['dirs'][who] = w
        if who == 'initiator':
            out['first'] = w['first']
    return out


def describe(summary):
    """The walk's summary as lines (for the case's output)."""
    lines = ['request: %d %d %d' % summary['request'],
             'reply: ' + ('none' if summary['reply'] is None else '%d %d %d' % summary['reply'])]
    if summary['first'] is not None:
        lines.append('first: 0x%02x %d' % summary['first'])
    for who, d in summary['dirs'].items():
        lines.append('%s -> peer: Rev %d, %d FPDUs, Markers %s (%d), CRC %s: all valid' %
                     (who, d['rev'], d['fpdus'], 'on' if d['marked'] else 'off', d['markers'],
                      'on' if d['crc'] else 'off'))
    return lines


def mpa_streams(layers):
    """Every TCP stream of the capture that starts with an MPA Request, walked:
    {tcp.stream: summary}, each summary with 'segments' for iwarp_check."""
    out = {}
    for sid, segs in sorted(streams(layers).items()):
        ini_port, res_port = endpoints(segs)
        ini = reassemble(segs, ini_port)
        if not ini.startswith(KEY_REQ):
            continue
        try:
            s = walk_mpa(ini, reassemble(segs, res_port), ini_port, res_port)
        except CaptureError as e:
            raise CaptureError('TCP stream %d: %s' % (sid, e)) from None
        s['segments'] = segs
        out[sid] = s
    return out


def wireshark_fpdus(layer):
    """(position in the frame, ULPDU_Length, CRC field, hex octets) of every FPDU Wireshark
    framed in one frame."""
    out = []
    for mpa in many(layer.get('iwarp_mpa', [])):
        if not isinstance(mpa, dict):
            continue
        for raw, fpdu in zip(raws(mpa.get('iwarp_mpa.fpdu_raw', [])),
                             many(mpa.get('iwarp_mpa.fpdu', []))):
            if not raw or not isinstance(fpdu, dict):
                continue
            ulen = _one(fpdu, 'iwarp_mpa.ulpdulength')
            out.append((raw[1], None if ulen is None else int(ulen), fpdu, raw[0]))
    return out


def iwarp_check(layers, walked, min_fpdus, crc):
    """Wireshark's dissection of the whole capture judged against the walk.

    * Wireshark frames at least min_fpdus FPDUs, each with a ULPDU_Length, a DDP and an
      RDMAP header;
    * with CRCs on it checks every FPDU's CRC, with CRCs off none;
    * its expert info in the iWARP layers holds no warning or error, except Wireshark 4.0's
      complaints about RFC 6581 startup frames;
    * every FPDU it frames in a walked stream lies where the walk found one, with the same
      ULPDU_Length and its CRC field where the walk found it (and, in a direction without
      Markers, the CRC32c over the octets it framed is the one sent). With Markers,
      Wireshark 4.0 frames an FPDU from the segment's length: on a segment that is not
      exactly one whole FPDU (packed, or cut by a retransmission) it frames wrongly; those
      are counted ('misframed'), any other disagreement fails.
    Returns the counts; raises CaptureError on a violation."""
    n = {'fpdus': 0, 'ulpdu_length': 0, 'ddp': 0, 'rdmap': 0, 'crc_checked': 0,
         'misframed': 0}
    for layer in layers:
        n['fpdus'] += sum(1 for _ in find(layer.get('iwarp_mpa'), 'iwarp_mpa.fpdu'))
        n['ulpdu_length'] += sum(1 for _ in find(layer.get('iwarp_mpa'),
                                                 'iwarp_mpa.ulpdulength'))
        n['crc_checked'] += sum(1 for _ in find(layer.get('iwarp_mpa'), 'iwarp_mpa.crc_check'))
        rdmap = layer.get('iwarp_ddp_rdmap')
        n['ddp'] += sum(1 for _ in find(rdmap, 'iwarp_ddp'))
        n['rdmap'] += sum(1 for _ in find(rdmap, 'iwarp_rdma'))
        for proto in ('iwarp_mpa', 'iwarp_ddp_rdmap'):
            for e in find(layer.get(proto), '_ws.expert'):
                if not isinstance(e, dict) or any(k in e for k in RFC6581_EXPERT):
                    continue
                if int(e.get('_ws.expert.severity', 0)) >= PI_WARN:
                    raise CaptureError('tshark expert %s: %s' % (
                        proto, e.get('_ws.expert.message')))
    if n['fpdus'] < min_fpdus:
        raise CaptureError('only %d FPDUs decoded, want %d or more' % (n['fpdus'], min_fpdus))
    for k in ('ulpdu_length', 'ddp', 'rdmap'):
        if n[k] != n['fpdus']:
            raise CaptureError('%d FPDUs but %d %s' % (n['fpdus'], n[k], k))
    if crc and n['crc_checked'] != n['fpdus']:
        raise CaptureError('%d CRCs checked for %d FPDUs' % (n['crc_checked'], n['fpdus']))
    if not crc and n['crc_checked']:
        raise CaptureError('CRC checked although CRC is off')
    for sid, s in walked.items():
        by_port = {d['port']: d for d in s['dirs'].values()}
        for seg in s['segments']:
            d = by_port.get(seg.src)
            if d is None or seg.payload_pos is None:
                continue
            for pos, ulen, fpdu, octets in wireshark_fpdus(layers[seg.frame - 1]):
                # relative Seq 1 is the stream's first octet; FPDU positions count from SeqStart
                at = seg.seq - 1 + pos - seg.payload_pos - d['startup_len']
                if at < 0:
                    continue
                read_crc = _one(fpdu, 'iwarp_mpa.crc_check', _one(fpdu, 'iwarp_mpa.crc', '0'))
                if d['headers'].get(at) == (ulen, int(read_crc, 16)):
                    # where the walk has this FPDU, whole: without Markers its octets are the
                    # FPDU's, and their CRC32c is the one sent
                    wire = bytes.fromhex(octets)
                    if not d['marked'] and crc and \
                            crc32c(wire[:-4]) != int.from_bytes(wire[-4:], 'little'):
                        raise CaptureError('frame %d: Wireshark\'s FPDU at %d fails its CRC' %
                                           (seg.frame, at))
                    continue
                if not d['marked']:
                    raise CaptureError('frame %d: Wireshark frames an FPDU at %d from the %s, '
                                       'which sends no Markers, where the walk has none' %
                                       (seg.frame, at, d['who']))
                lo = seg.seq - 1 - d['startup_len']
                hi = lo + seg.len
                inside = sorted(b for b in d['bounds'] if lo <= b <= hi)
                if inside == [lo, hi]:
                    raise CaptureError('frame %d: Wireshark misframes one whole FPDU from the %s '
                                       '(at %d)' % (seg.frame, d['who'], lo))
                n['misframed'] += 1
    return n
