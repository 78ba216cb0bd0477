#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tshark's reading of a capture of DDP over SCTP between warpnic and another SCTP stack.

  sctp_pcap_check.py CAPTURE WARPNIC_IP PORT:KIND...

Decodes CAPTURE with tshark (CRC32c verification on) and checks, for the SCTP packets:
  - no malformed packet and no expert error or warning;
  - every packet's CRC32c good (sctp.checksum.status 1);
  - one association per PORT:KIND (PORT: warpnic's or the peer's well-known port), each with
    an INIT and an INIT-ACK (sent again when lost), all carrying the Adaptation Layer Indication parameter (0xC006)
    with DDP's value 0x00000001 (RFC 5043 §5.1);
  - warpnic's INIT or INIT-ACK asks for as many streams in as out (RFC 5043 §8);
  - every DATA chunk unordered (U=1, §10), unfragmented (B=E=1, §9), on stream 0, with PPID 16
    (DDP Segment) or 17 (DDP Stream Session Control); KIND "full": both PPIDs both ways;
    "reject": PPID 17 both ways (Initiate, Reject) and no DDP segment (§6.3);
  - no ABORT and no ERROR chunk; each association ends by SHUTDOWN, SHUTDOWN ACK and
    SHUTDOWN COMPLETE.
Prints one summary line per association; exit status 1 with the failures listed otherwise.
"""
import collections
import subprocess
import sys

FIELDS = ["frame.number", "ip.src", "ip.dst", "sctp.srcport", "sctp.dstport",
          "sctp.checksum.status", "sctp.chunk_type", "sctp.parameter_type",
          "sctp.adaptation_layer_indication", "sctp.init_nr_out_streams",
          "sctp.init_nr_in_streams", "sctp.initack_nr_out_streams",
          "sctp.initack_nr_in_streams", "sctp.data_payload_proto_id", "sctp.data_u_bit",
          "sctp.data_b_bit", "sctp.data_e_bit", "sctp.data_sid", "_ws.malformed",
          "_ws.expert.severity", "_ws.expert.message"]
CHUNK = {0: "DATA", 1: "INIT", 2: "INIT-ACK", 3: "SACK", 6: "ABORT", 7: "SHUTDOWN",
         8: "SHUTDOWN-ACK", 9: "ERROR", 10: "COOKIE-ECHO", 11: "COOKIE-ACK",
         14: "SHUTDOWN-COMPLETE"}
# tshark's severities: chat 0x200000, note 0x400000, warn 0x600000, error 0x800000
WARN = 0x600000


def main():
    cap, wn_ip = sys.argv[1], sys.argv[2]
    kinds = dict(a.split(":") for a in sys.argv[3:])
    cmd = ["tshark", "-r", cap, "-o", "sctp.checksum:crc-32c", "-Y", "sctp or _ws.malformed",
           "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    err = []
    assocs = collections.OrderedDict()
    pkts = 0
    for line in out.splitlines():
        v = dict(zip(FIELDS, (line.split("\t") + [""] * len(FIELDS))[:len(FIELDS)]))
        lst = {k: [x for x in v[k].split("|") if x != ""] for k in FIELDS}
        num = v["frame.number"]
        if lst["_ws.malformed"]:
            err.append("frame %s: malformed" % num)
        for sev, msg in zip(lst["_ws.expert.severity"], lst["_ws.expert.message"] + [""] * 9):
            if int(sev, 0) >= WARN:
                err.append("frame %s: expert %s: %s" % (num, sev, msg))
        if not v["sctp.srcport"]:
            continue
        pkts += 1
        if lst["sctp.checksum.status"] != ["1"]:
            err.append("frame %s: CRC32c status %s (1 = good)" % (num,
                                                                  v["sctp.checksum.status"]))
        from_wn = v["ip.src"] == wn_ip
        wn_port = v["sctp.srcport"] if from_wn else v["sctp.dstport"]
        other_port = v["sctp.dstport"] if from_wn else v["sctp.srcport"]
        a = assocs.setdefault((wn_port, other_port), {
            "chunks": collections.Counter(), "ppid": collections.Counter(), "init": [],
            "data": 0})
        types = [int(t) for t in lst["sctp.chunk_type"]]
        for t in types:
            a["chunks"][(from_wn, CHUNK.get(t, str(t)))] += 1
        if 1 in types or 2 in types:
            kind = "INIT" if 1 in types else "INIT-ACK"
            ali = "0xc006" in [p.lower() for p in lst["sctp.parameter_type"]]
            ind = [int(x, 0) for x in lst["sctp.adaptation_layer_indication"]]
            if kind == "INIT":
                out_s, in_s = v["sctp.init_nr_out_streams"], v["sctp.init_nr_in_streams"]
            else:
                out_s, in_s = v["sctp.initack_nr_out_streams"], v["sctp.initack_nr_in_streams"]
            who = "warpnic" if from_wn else "peer"
            a["init"].append("%s %s ALI %s streams %s/%s" % (who, kind,
                                                              ",".join(hex(i) for i in ind)
                                                              or "none", out_s, in_s))
            if not ali or ind != [1]:
                err.append("frame %s: %s's %s without DDP's Adaptation Layer Indication "
                           "(indication %s)" % (num, who, kind, ind))
            if from_wn and out_s != in_s:
                err.append("frame %s: warpnic's %s asks %s streams out, %s in (RFC 5043 §8)"
                           % (num, kind, out_s, in_s))
        ppids = lst["sctp.data_payload_proto_id"]
        for i, ppid in enumerate(ppids):
            a["data"] += 1
            a["ppid"][(from_wn, ppid)] += 1
            flags = [lst[k][i] if i < len(lst[k]) else "?" for k in
                     ("sctp.data_u_bit", "sctp.data_b_bit", "sctp.data_e_bit")]
            if flags != ["1", "1", "1"]:
                err.append("frame %s: DATA (%s) with U/B/E %s (RFC 5043 §9, §10: 1/1/1)" %
                           (num, "warpnic" if from_wn else "peer", "/".join(flags)))
            if ppid not in ("16", "17"):
                err.append("frame %s: DATA with PPID %s" % (num, ppid))
            sid = lst["sctp.data_sid"][i] if i < len(lst["sctp.data_sid"]) else "?"
            if int(sid, 0) != 0:
                err.append("frame %s: DATA on stream %s" % (num, sid))
    if len(assocs) != len(kinds):
        err.append("%d associations in the capture, want %d" % (len(assocs), len(kinds)))
    for (wp, op), a in assocs.items():
        kind = kinds.get(wp, kinds.get(op))
        if kind is None:
            err.append("an association between ports %s and %s" % (wp, op))
            continue
        c = a["chunks"]
        n_init = sum(n for (w, t), n in c.items() if t == "INIT")
        n_ack = sum(n for (w, t), n in c.items() if t == "INIT-ACK")
        name = "association warpnic:%s - peer:%s" % (wp, op)
        if n_init < 1 or n_ack < 1:
            err.append("%s: %d INIT and %d INIT-ACK" % (name, n_init, n_ack))
        for bad in ("ABORT", "ERROR"):
            n = c[(True, bad)] + c[(False, bad)]
            if n:
                err.append("%s: %d %s chunks" % (name, n, bad))
        for t in ("SHUTDOWN", "SHUTDOWN-ACK", "SHUTDOWN-COMPLETE"):
            if c[(True, t)] + c[(False, t)] == 0:
                err.append("%s: no %s" % (name, t))
        for side in (True, False):
            for ppid in ("16", "17"):
                n = a["ppid"][(side, ppid)]
                if (n == 0) == (kind == "full" or ppid == "17"):
                    err.append("%s (%s): %d DATA with PPID %s from %s" %
                               (name, kind, n, ppid, "warpnic" if side else "the peer"))
        shut = [("warpnic" if w else "peer") + " " + t for (w, t) in c
                if t.startswith("SHUTDOWN")]
        print("%s (%s): %s; DATA from warpnic PPID 16 x%d, 17 x%d; from the peer PPID 16 x%d, "
              "17 x%d; %s" % (name, kind, "; ".join(a["init"]), a["ppid"][(True, "16")],
                              a["ppid"][(True, "17")], a["ppid"][(False, "16")],
                              a["ppid"][(False, "17")], ", ".join(sorted(shut))))
    if pkts == 0:
        err.append("no SCTP packet in the capture")
    if err:
        print("FAIL: " + "; ".join(err[:20]) + (" (and %d more)" % (len(err) - 20)
                                                 if len(err) > 20 else ""))
        return 1
    print("ok: %d SCTP packets, every CRC32c good, no malformed packet, no expert warning"
          % pkts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
