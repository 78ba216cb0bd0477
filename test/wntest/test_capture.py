# SPDX-License-Identifier: BSD-3-Clause
"""wntest.capture on synthetic input (no capture, no tshark): a TCP stream built as rnic_it's
captures carry it (MPA Request and Reply, RFC 6581 Rev 2, CRC on, Markers from the initiator
only; FPDUs with Markers every 512 octets from SeqStart, RFC 5044 §4.3, and their CRC32c),
written as the layers tshark -T json -x gives, with Wireshark's FPDUs where it frames them."""
import pytest

from wntest import capture as c

INI, RES = 32768, 7471
PAYLOAD_POS = 66  # a frame's TCP payload starts at octet 66 (Ethernet, IPv4, TCP + options)


def startup(key, m, crc=True, pd=b''):
    return key + bytes([(0x80 if m else 0) | (0x40 if crc else 0), 2]) + \
        len(pd).to_bytes(2, 'big') + pd


def fpdus(payloads, markers):
    """The octets after SeqStart, each FPDU's (start, end) and header position."""
    out = bytearray()
    spans = []
    for ulpdu in payloads:
        fstart = len(out)
        if markers and len(out) % 512 == 0:
            out += bytes(4)
        hdr = len(out)
        body = len(ulpdu).to_bytes(2, 'big') + ulpdu
        body += bytes(-len(body) % 4)
        for i in range(0, len(body) + 4, 4):
            if markers and len(out) % 512 == 0 and len(out) != fstart:
                out += (len(out) - hdr).to_bytes(4, 'big')
            if i < len(body):
                out += body[i:i + 4]
        out += c.crc32c(out[fstart:]).to_bytes(4, 'little')
        spans.append((fstart, len(out), hdr, len(ulpdu)))
    return out, spans


def layer(src, dst, seq, payload, fpdu_list=(), stream=0, syn=False):
    """One frame's layers. fpdu_list: (offset in the payload, ULPDU_Length, octets)."""
    tcp = {'tcp.srcport': str(src), 'tcp.dstport': str(dst), 'tcp.stream': str(stream),
           'tcp.seq': str(seq), 'tcp.len': str(len(payload)),
           'tcp.flags': '0x0002' if syn else '0x0018'}
    if payload:
        tcp['tcp.payload_raw'] = [payload.hex(), PAYLOAD_POS, len(payload), 0, 30]
    out = {'tcp': tcp}
    mpas = []
    for off, ulen, octets in fpdu_list:
        mpas.append({'iwarp_mpa.fpdu_raw': [octets.hex(), PAYLOAD_POS + off, len(octets), 0, 0],
                     'iwarp_mpa.fpdu': {'iwarp_mpa.ulpdulength': str(ulen),
                                        'iwarp_mpa.crc_check': '0x' + octets[-4:].hex()}})
    if mpas:
        out['iwarp_mpa'] = mpas if len(mpas) > 1 else mpas[0]
        ddp = [{'iwarp_ddp': {}, 'iwarp_rdma': {}} for _ in mpas]
        out['iwarp_ddp_rdmap'] = ddp if len(ddp) > 1 else ddp[0]
    return out


class Stream:
    """Request/Reply and FPDUs both ways, one segment per FPDU except the initiator's FPDUs
    1 and 2, packed into one segment."""

    def __init__(self, req_pd=b'', rep_pd=b''):
        self.req = startup(c.KEY_REQ, False, pd=req_pd)  # the responder sends no Markers
        self.rep = startup(c.KEY_REP, True, pd=rep_pd)   # the initiator sends Markers
        sizes = [1430, 28, 28, 700, 1430, 12, 300, 1430, 1430, 64]
        self.i_body, self.i_spans = fpdus([bytes((k * 7 + j) & 0xFF for j in range(s))
                                           for k, s in enumerate(sizes)], True)
        self.r_body, self.r_spans = fpdus([bytes(range(40)), bytes(range(200))], False)
        h = len(self.req)
        self.i_segs = [(0, h)] + [(h + a, b - a) for a, b, _, _ in self.i_spans]
        self.i_segs[2:4] = [(self.i_segs[2][0], self.i_segs[2][1] + self.i_segs[3][1])]
        self.r_segs = [(0, len(self.rep))] + [(len(self.rep) + a, b - a)
                                              for a, b, _, _ in self.r_spans]

    def layers(self, ini=None, i_segs=None, wrong=()):
        """Frames of both directions; Wireshark frames every FPDU where the walk has it,
        except in segments listed in wrong (offsets), where it frames one FPDU from the
        segment's start over the segment's length, as Wireshark 4.0 does with Markers."""
        ini = ini if ini is not None else self.req + self.i_body
        res = self.rep + self.r_body
        out = [layer(INI, RES, 0, b'', syn=True)]
        for src, dst, data, segs, spans, h in (
                (INI, RES, ini, i_segs or self.i_segs, self.i_spans, len(self.req)),
                (RES, INI, res, self.r_segs, self.r_spans, len(self.rep))):
            for off, ln in segs:
                payload = data[off:off + ln]
                fl = []
                if off in wrong:
                    hdr = 4 if (off - h) % 512 == 0 else 0
                    fl.append((hdr, int.from_bytes(payload[hdr:hdr + 2], 'big'),
                               payload[hdr:]))
                else:
                    for a, b, hdr, ulen in spans:
                        if off <= h + hdr and h + b <= off + ln:
                            fl.append((h + hdr - off, ulen, data[h + hdr:h + b]))
                out.append(layer(src, dst, off + 1, payload, fl))
        return out


def judge(layers, crc=True, min_fpdus=1):
    walked = c.mpa_streams(layers)
    return walked, c.iwarp_check(layers, walked, min_fpdus, crc)


def test_clean_stream():
    s = Stream()
    walked, n = judge(s.layers())
    w = walked[0]
    assert w['request'] == (0, 1, 2) and w['reply'] == (1, 1, 2)
    assert w['dirs']['initiator']['marked'] and not w['dirs']['responder']['marked']
    assert w['dirs']['initiator']['fpdus'] == 10 and w['dirs']['responder']['fpdus'] == 2
    assert n['fpdus'] == 12 and n['misframed'] == 0


def test_private_data():
    """Each startup frame's Private Data, the FPDUs walked after it."""
    s = Stream(req_pd=bytes(range(20)), rep_pd=b'\x00\x04\x00\x04WNIB')
    walked, n = judge(s.layers())
    w = walked[0]
    assert w['request_pd'] == bytes(range(20)) and w['reply_pd'] == b'\x00\x04\x00\x04WNIB'
    assert w['dirs']['initiator']['fpdus'] == 10 and n['fpdus'] == 12
    assert Stream().layers() and judge(Stream().layers())[0][0]['request_pd'] == b''


def test_misframed_whole_fpdu_fails():
    s = Stream()
    whole = s.i_segs[1][0]  # FPDU 0, alone in its segment, framed 4 octets early
    layers = s.layers()
    l1 = layers[2]
    l1['iwarp_mpa']['iwarp_mpa.fpdu_raw'][1] -= 4
    with pytest.raises(c.CaptureError, match='one whole FPDU from the initiator'):
        judge(layers)
    assert whole == len(s.req)


def test_misframed_packed_segment_counted():
    s = Stream()
    _, n = judge(s.layers(wrong={s.i_segs[2][0]}))
    assert n['misframed'] == 1


def test_misframed_cut_segment_counted():
    s = Stream()
    a, ln = s.i_segs[4]  # FPDU 3 (700 octets) retransmitted as two segments cut inside it
    cut = s.i_segs[:4] + [(a, 300), (a + 300, ln - 300)] + s.i_segs[5:]
    _, n = judge(s.layers(i_segs=cut, wrong={a + 300}))
    assert n['misframed'] == 1


def test_misframed_without_markers_fails():
    s = Stream()
    layers = s.layers()
    res = [l for l in layers if l['tcp']['tcp.srcport'] == str(RES) and 'iwarp_mpa' in l][0]
    res['iwarp_mpa']['iwarp_mpa.fpdu']['iwarp_mpa.ulpdulength'] = '41'
    with pytest.raises(c.CaptureError, match='which sends no Markers'):
        judge(layers)


def test_wrong_crc_in_stream_fails():
    s = Stream()
    ini = bytearray(s.req + s.i_body)
    ini[len(s.req) + s.i_spans[4][0] + 10] ^= 1
    with pytest.raises(c.CaptureError, match='initiator: FPDU 4 at'):
        judge(s.layers(ini=bytes(ini)))


def test_lost_segment_fails():
    s = Stream()
    layers = s.layers()
    del layers[3]
    with pytest.raises(c.CaptureError, match='lacks octets'):
        judge(layers)


def test_retransmission_dropped():
    s = Stream()
    layers = s.layers()
    layers.insert(4, layers[3])
    _, n = judge(layers)
    assert n['misframed'] == 0


def test_crc_counts():
    s = Stream()
    layers = s.layers()
    del layers[2]['iwarp_mpa']['iwarp_mpa.fpdu']['iwarp_mpa.crc_check']
    with pytest.raises(c.CaptureError, match='CRCs checked'):
        judge(layers)
    with pytest.raises(c.CaptureError, match='CRC checked although CRC is off'):
        judge(s.layers(), crc=False)


def test_expert_info():
    s = Stream()
    layers = s.layers()
    layers[2]['iwarp_mpa']['_ws.expert'] = {'iwarp_mpa.res.not_set0': '',
                                            '_ws.expert.severity': str(0x00800000)}
    judge(layers)
    layers[2]['iwarp_mpa']['_ws.expert'] = {'iwarp_mpa.bad_length': '',
                                            '_ws.expert.message': 'bad length',
                                            '_ws.expert.severity': str(0x00600000)}
    with pytest.raises(c.CaptureError, match='bad length'):
        judge(layers)


def test_reply_none():
    s = Stream()
    layers = [layer(INI, RES, 0, b'', syn=True), layer(INI, RES, 1, s.req)]
    walked = c.mpa_streams(layers)
    assert walked[0]['reply'] is None and walked[0]['first'] is None
    layers.append(layer(INI, RES, 1 + len(s.req), s.i_body[:64]))
    with pytest.raises(c.CaptureError, match='without a Reply'):
        c.mpa_streams(layers)


def test_other_stream_not_mpa():
    s = Stream()
    layers = s.layers() + [layer(40000, 22, 1, b'SSH-2.0-x', stream=1)]
    walked, _ = judge(layers)
    assert list(walked) == [0]


def test_min_fpdus():
    with pytest.raises(c.CaptureError, match='only 12 FPDUs'):
        judge(Stream().layers(), min_fpdus=13)
