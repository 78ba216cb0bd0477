#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check tshark's decode (PDML on stdin) of an RPC-over-RDMA capture made by warpnic.

  rpcordma_check.py [--need TYPES] < capture.pdml

Walks every frame's protocols in order (one iwarp_mpa/iwarp_ddp_rdmap per FPDU, followed by
rpcordma and what it carries for a Send) and checks:
  - every RPC-over-RDMA message (the first FPDU of every Send, Send with Invalidate, Send
    with Solicited Event) is decoded by the rpcordma dissector;
  - nothing is malformed, except what tshark 4.0 flags on NFS READ replies whose data went
    by write chunk (it puts RDMA-written data back only for InfiniBand): those are counted
    apart, and for each the RDMA Writes to the write chunk's STag before it must add up to
    the length the reply returned;
  - every call XID is answered (a message with that XID goes the other way);
  - the message types listed in --need (default 0,1: RDMA_MSG, RDMA_NOMSG) all occur.
Prints one summary line; exit status 1 on a failed check.
"""
import sys
import xml.etree.ElementTree as ET

need = {0, 1}
if len(sys.argv) > 2 and sys.argv[1] == "--need":
    need = {int(x) for x in sys.argv[2].split(",")}

sends = rpcs = malformed_read = 0
errors = []
types = {}
xids = {}            # xid -> set of directions seen
writes = {}          # (src, stag) -> octets RDMA-Written so far
read_replies = []    # (src, [(handle, length)]) of malformed NFS READ replies


def fields(proto):
    out = {}
    for f in proto.iter("field"):
        out.setdefault(f.get("name"), []).append(f.get("show"))
    return out


def num(v):
    return int(v, 0)


for _, pkt in ET.iterparse(sys.stdin, events=("end",)):
    if pkt.tag != "packet":
        continue
    protos = pkt.findall("proto")
    src = None
    ulpdu = 0
    msg = None  # the RPC-over-RDMA message of the current Send FPDU
    for p in protos:
        name = p.get("name")
        f = fields(p)
        if name == "ip":
            src = f.get("ip.src", [None])[0]
        elif name == "iwarp_mpa":
            ulpdu = num(f["iwarp_mpa.ulpdulength"][0]) if "iwarp_mpa.ulpdulength" in f else 0
            msg = None
        elif name == "iwarp_ddp_rdmap":
            op = num(f.get("iwarp_rdma.opcode", ["-1"])[0])
            if op == 0 and "iwarp_ddp.stag" in f:  # RDMA Write: tagged, 14-octet header
                key = (src, num(f["iwarp_ddp.stag"][0]))
                writes[key] = writes.get(key, 0) + ulpdu - 14
            if op in (3, 4, 5, 6) and num(f.get("iwarp_ddp.mo", ["0"])[0]) == 0:
                sends += 1
                msg = {"decoded": False, "src": src}
        elif name == "rpcordma" and msg is not None and not msg["decoded"]:
            msg["decoded"] = True
            rpcs += 1
            xid = num(f["rpcordma.xid"][0])
            t = num(f["rpcordma.msg_type"][0])
            types[t] = types.get(t, 0) + 1
            xids.setdefault(xid, set()).add(src)
            msg["writes"] = num(f.get("rpcordma.writes_count", ["0"])[0])
            msg["segs"] = list(zip([num(h) for h in f.get("rpcordma.rdma_handle", [])],
                                   [num(n) for n in f.get("rpcordma.rdma_length", [])]))
        elif name == "nfs" and msg is not None:
            msg["nfs_proc"] = f.get("nfs.procedure_v3", [None])[0]
        elif name == "rpc" and msg is not None:
            msg["rpc_type"] = f.get("rpc.msgtyp", [None])[0]
        elif name == "_ws.malformed":
            if (msg is not None and msg.get("nfs_proc") == "6" and msg.get("rpc_type") == "1"
                    and msg.get("writes", 0) >= 1):
                if not msg.get("counted"):
                    msg["counted"] = True
                    malformed_read += 1
                    read_replies.append((msg["src"], dict(writes), msg["segs"]))
            else:
                errors.append("frame %s: malformed: %s" % (
                    pkt.find("proto/field[@name='frame.number']").get("show"),
                    p.get("showname")))
    pkt.clear()

if sends == 0:
    errors.append("no RPC-over-RDMA message in the capture")
if rpcs != sends:
    errors.append("%d Send messages, %d decoded as rpcordma" % (sends, rpcs))
for t in sorted(need):
    if t not in types:
        errors.append("no message of type %d (have %s)" % (t, sorted(types)))
unanswered = [x for x, d in xids.items() if len(d) < 2]
if unanswered:
    errors.append("%d XIDs seen in one direction only, e.g. %#x" % (len(unanswered),
                                                                   unanswered[0]))
# each malformed READ reply: its write chunk was filled by RDMA Writes from the replier
for src, w, segs in read_replies:
    for handle, length in segs:
        if length > 0 and w.get((src, handle), 0) < length:
            errors.append("READ reply from %s: write chunk %#x of %d octets, %d RDMA-Written"
                          % (src, handle, length, w.get((src, handle), 0)))
print("%s: %d messages, all decoded; types %s; %d NFS READ replies with write chunks "
      "(tshark 4.0 flags them malformed over iWARP; their RDMA Writes checked); %d XIDs" % (
          "FAIL" if errors else "ok", rpcs,
          ", ".join("%d:%d" % kv for kv in sorted(types.items())), malformed_read, len(xids)))
for e in errors[:20]:
    print("  " + e)
sys.exit(1 if errors else 0)
