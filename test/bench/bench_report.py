#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench.sh's report: reads the runs' outputs in DIR, prints issue 11's goals table
with this run's ratios and every figure, issue 27's (instructions per message, from cost.txt,
beside two of this run's rates), issue 12's (DDP over SCTP against MPA/TCP, from
sctp.json), then issue 26's (the QP curve, each QP's share, connections against kernel TCP,
memory per idle connection: rtc_qps_*.json, daemons.json, conn.json), writes DIR/bench.json
and the gnuplot script DIR/bench.gp (DIR/bench.png: bandwidth and latency against message
size, aggregate bandwidth against QPs).

    bench_report.py DIR QUICK(0|1)
"""
import datetime
import json
import os
import re
import statistics
import subprocess
import sys


def load(d, name):
    with open(os.path.join(d, name + ".json")) as f:
        return json.load(f)


def rows(d, name):
    return {r["size"]: r for r in load(d, name)["results"]}


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, nd=3):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return ("%." + str(nd) + "f") % v


def sctp_table(d, quick, cost):
    """Issue 12's goals from sctp.json (test/bench/sctp_bench.sh): DDP over SCTP against
    MPA/TCP, medians of the alternating rounds. Prints the table; returns the figures and
    the goal rows for bench.json."""
    sc = load(d, "sctp")
    bw, lat, fault = sc["write_bw_65536"], sc["write_lat_8"], sc["fault"]
    med = {k: {llp: statistics.median(v) for llp, v in x.items()}
           for k, x in (("bw", bw), ("lat", lat))}
    rows = []

    def row(fig, unit, s, m, r, text, holds, **extra):
        rows.append(dict(figure=fig, unit=unit, sctp=s, mpa_tcp=m, ratio=r, goal=text,
                         holds=bool(holds) if holds is not None else None, **extra))

    r = ratio(med["bw"]["sctp"], med["bw"]["mpa"])
    row("RDMA Write 64 KiB (unmodified ib_write_bw -s 65536)", "Gbit/s", med["bw"]["sctp"],
        med["bw"]["mpa"], r, ">= 0.7 x MPA/TCP", r is not None and r >= 0.7)
    r = ratio(med["lat"]["sctp"], med["lat"]["mpa"])
    row("8 B write ping-pong p50 (unmodified ib_write_lat -s 8)", "us", med["lat"]["sctp"],
        med["lat"]["mpa"], r, "<= 1.3 x MPA/TCP", r is not None and r <= 1.3)
    if fault is not None:
        row("Write/Read/Send %d MiB, 1 %% drop + 1 %% reorder" % fault["mib"],
            "s", [fault["ops"].get(k) for k in ("write", "read", "send")], None, None,
            "byte-exact" + (" (smoke size; the goal is 64 MiB)" if fault["mib"] < 64 else ""),
            fault["pass"], mib=fault["mib"], dropped=fault["dropped"],
            reordered=fault["reordered"], frames=fault["frames"], retrans=fault["retrans"])
    print()
    print("issue 12: DDP over SCTP against MPA/TCP, two warpnicd, the client's WARPNIC_LLP, "
          "medians of %d alternating round(s)" % sc["rounds"])
    print("%-58s %10s %10s %-7s %6s  %s" % ("figure", "SCTP", "MPA/TCP", "unit", "ratio",
                                            "goal (met?)"))
    for x in rows:
        if isinstance(x["sctp"], list):
            print("%-58s %21s %-7s %6s  %s (%s)" % (
                x["figure"], "/".join(fmt(v, 1) for v in x["sctp"]), "s", "",
                x["goal"], "yes" if x["holds"] else "no"))
            print("%-58s %s dropped, %s reordered of %s frames; DATA chunks sent again "
                  "A / B: %s" % ("  ... faults", x["dropped"], x["reordered"], x["frames"],
                                 " / ".join(str(v) for v in x["retrans"])))
            continue
        print("%-58s %10s %10s %-7s %6s  %s (%s)" % (
            x["figure"], fmt(x["sctp"]), fmt(x["mpa_tcp"]), x["unit"], fmt(x["ratio"], 2),
            x["goal"], "yes" if x["holds"] else "no"))
    ir = {c["mode"]: c["ir_per_msg"] for c in cost if c["size"] == 65536}
    if "swrite" in ir and "write" in ir:
        print("%-58s %10s %10s %-7s %6s  %s" % (
            "instructions per 64 KiB Write, both sides (callgrind)", fmt(ir["swrite"]),
            fmt(ir["write"]), "Ir", fmt(ratio(ir["swrite"], ir["write"]), 2),
            "(what a CPU-bound path pays)"))
    figures = {"rounds": sc["rounds"], "sctp_sessions": sc["sctp_sessions"],
               "write_bw_65536_gbps": dict(bw, median=med["bw"]),
               "write_lat_8_p50_us": dict(lat, median=med["lat"]), "fault": fault}
    return figures, rows


def conn_cost(cost, n):
    """conn_bench.sh's per-thread CPU and switches of one cmtime run -> ({who: (us, switches)}
    per connection, switches per connection in all): A's and B's lcores (the main lcore runs
    a shard) and control threads, the cmtime server and client."""
    who = {}
    for key, v in cost.items():
        side, _, comm = key.partition("/")
        if side in ("a", "b"):
            role = {"wn-ctl": "control"}.get(comm, "lcore" if comm == "warpnicd" or
                                              comm.startswith("lcore") else "other")
            name = "%s %s" % (side.upper(), role)
        else:
            name = side
        u, s = who.get(name, (0.0, 0.0))
        who[name] = (u + v["cpu_ns"] / 1e3 / n, s + v["switches"] / n)
    return who, sum(s for _, s in who.values())


def scale_table(d, qps_rows, dae, one_buf, cost):
    """Issue 26's goals: the QP curve (run to completion and through two warpnicd, each
    against 1 QP of this run), each QP's share at 256 QPs, cmtime through two warpnicd
    against kernel TCP (wn-conn-rate) at each N, memory per idle connection (conn.json,
    test/bench/conn_bench.sh). @one_buf: the run-to-completion curve again with every QP
    sending from and placing into one buffer (warpnic-perf --buffers 1), which tells what
    the data's own footprint costs from what the QP count does; @cost: rdma_cost.sh's rows,
    whose write/qN rows count the instructions per message at N QPs. Prints the tables;
    returns the figures and goal rows."""
    rows = []

    def row(fig, val, unit, text, holds, **extra):
        rows.append(dict(figure=fig, value=val, unit=unit, goal=text,
                         holds=bool(holds) if holds is not None else None, **extra))

    rtc = {q: r["Gbit/s"] for q, r in qps_rows.items()}
    dq = {r["qps"]: r["Gbit/s"] for r in dae.get("write_bw_qps", [])}
    print()
    print("issue 26: aggregate RDMA Write 64 KiB against QPs (each against 1 QP of this run)")
    print("%8s %12s %8s %14s %8s %16s %8s" % ("QPs", "rtc Gbit/s", "vs 1 QP", "daemons Gbit/s",
                                              "vs 1 QP", "rtc, 1 buffer", "vs 1 QP"))
    curve = {}
    for q in sorted(set(rtc) | set(dq)):
        a, b = ratio(rtc.get(q), rtc.get(1)), ratio(dq.get(q), dq.get(1))
        o = one_buf.get(q, rtc.get(1) if q == 1 else None)
        c = ratio(o, rtc.get(1))
        curve[str(q)] = {"rtc_gbps": rtc.get(q), "rtc_vs_1qp": a, "daemons_gbps": dq.get(q),
                         "daemons_vs_1qp": b, "rtc_one_buffer_gbps": o,
                         "rtc_one_buffer_vs_1qp": c}
        print("%8d %12s %8s %14s %8s %16s %8s" % (q, fmt(rtc.get(q)), fmt(a, 2), fmt(dq.get(q)),
                                                  fmt(b, 2), fmt(o), fmt(c, 2)))
    for who, key in (("run-to-completion (warpnic-perf --rtc)", "rtc_vs_1qp"),
                     ("two warpnicd (ib_write_bw -q N)", "daemons_vs_1qp")):
        pts = {q: c[key] for q, c in curve.items() if c[key] is not None}
        worst = min(pts.values(), default=None)
        row("QPs %s, %s, worst vs 1 QP" % (" -> ".join(pts), who), worst, "x 1 QP",
            "within 15 %% of 1 QP up to %s QPs" % max(map(int, pts), default=0),
            worst is not None and worst >= 0.85)
    pts = {q: c["rtc_one_buffer_vs_1qp"] for q, c in curve.items()
           if c["rtc_one_buffer_vs_1qp"] is not None}
    if len(pts) > 1:
        row("QPs %s, run-to-completion, one buffer for all QPs (--buffers 1), worst vs 1 QP"
            % " -> ".join(pts), min(pts.values()), "x 1 QP",
            "(information: the QP count's own cost, the data's footprint aside)", None)
    qir = {int(c["mode"].split("/q")[1]): c["ir_per_msg"] for c in cost
           if c["mode"].startswith("write/q") and c["size"] == 65536}
    if 1 in qir and len(qir) > 1:
        pts = {q: ratio(v, qir[1]) for q, v in sorted(qir.items())}
        print("%-58s %s instructions (%s x 1 QP; callgrind, both sides)" % (
            "64 KiB Write per message at %s QPs" % " / ".join(map(str, pts)),
            " / ".join(fmt(qir[q]) for q in pts), " / ".join(fmt(v, 2) for v in pts.values())))
        row("QPs %s, instructions per 64 KiB Write, worst vs 1 QP"
            % " -> ".join(map(str, pts)), max(pts.values()), "x 1 QP",
            "(information: CPU work each QP adds, without the machine's noise)", None,
            ir_per_msg=qir)
    fair = qps_rows.get(256)
    if fair is not None and fair.get("qp_min_Gbit/s") is not None:
        mean = fair["Gbit/s"] / 256
        lo, mid, hi = fair["qp_min_Gbit/s"], fair["qp_p50_Gbit/s"], fair["qp_max_Gbit/s"]
        print("%-58s min %s / median %s / max %s Gbit/s, mean %s (min %s x, max %s x mean)"
              % ("each QP's goodput, 256 QPs (run-to-completion)", fmt(lo, 4), fmt(mid, 4),
                 fmt(hi, 4), fmt(mean, 4), fmt(ratio(lo, mean), 2), fmt(ratio(hi, mean), 2)))
        row("each QP's goodput at 256 QPs, min / median / max (run-to-completion)",
            [lo, mid, hi], "Gbit/s", "each within 2 x of the mean (%s)" % fmt(mean, 4),
            lo >= mean / 2 and hi <= 2 * mean, mean=mean)
    path = os.path.join(d, "conn.json")
    conn = None
    if os.path.exists(path):
        conn = load(d, "conn")
        print()
        print("issue 26: connections at once, rdma-core's cmtime through two warpnicd against "
              "kernel TCP over loopback (wn-conn-rate), the same N")
        print("%7s %-9s %10s %10s %10s %10s %10s %10s" % (
            "N", "", "connect ms", "conn/s", "close ms", "close/s", "max us", "us/conn"))
        for c, k in zip(conn["cmtime"], conn["kernel"]):
            n, st = c["n"], c["steps"]
            con, dis = st.get("connect", {}), st.get("disconnect", {})
            cps = ratio(n, con.get("total_ms", 0) / 1e3)
            dps = ratio(n, dis.get("total_ms", 0) / 1e3)
            print("%7d %-9s %10s %10s %10s %10s %10s %10s" % (
                n, "warpnic", fmt(con.get("total_ms")), fmt(cps), fmt(dis.get("total_ms")),
                fmt(dps), fmt(con.get("max_ms", 0) * 1e3), fmt(con.get("us_per_conn"))))
            print("%7s %-9s %10s %10s %10s %10s %10s %10s" % (
                "", "kernel", fmt(k["connect_ms"]), fmt(k["setup_per_s"]),
                fmt(k["close_ms"]), fmt(k["teardown_per_s"]), fmt(k["connect_us_max"]),
                fmt(ratio(k["connect_ms"] * 1e3, n))))
            steps = ", ".join("%s %s" % (s, fmt(v["us_per_conn"])) for s, v in st.items())
            print("%7s %-9s %s" % ("", "  steps", steps + " (us per connection)"))
            if "cost" in c and "cost" in k:
                cpu, sw = conn_cost(c["cost"], n)
                kc = k["cost"]
                parts = ", ".join("%s %s/%s" % (w, fmt(u), fmt(s, 3))
                                  for w, (u, s) in sorted(cpu.items(), key=lambda x: -x[1][0]))
                tot_u = sum(u for u, _ in cpu.values())
                print("%7s %-9s %s us CPU, %s thread switches per connection (%s); kernel TCP "
                      "%s us, %s" % ("", "  cost", fmt(tot_u), fmt(sw, 3), parts,
                                     fmt(kc["cpu_ns"] / 1e3 / n), fmt(kc["switches"] / n, 3)))
                c["cost_per_conn"] = {"cpu_us": tot_u, "switches": sw,
                                      "kernel_cpu_us": kc["cpu_ns"] / 1e3 / n,
                                      "kernel_switches": kc["switches"] / n}
                if n > 1:  # at 1 the programs' start-up is most of it
                    row("CPU / thread switches per connection at %d, warpnic against kernel"
                        % n, [tot_u, sw, kc["cpu_ns"] / 1e3 / n, kc["switches"] / n],
                        "us/sw", "reported: why the rate is what it is", None, n=n)
            r = ratio(cps, k["setup_per_s"])
            c.update(conn_per_s=cps, disconnect_per_s=dps, vs_kernel_setup=r,
                     vs_kernel_teardown=ratio(dps, k["teardown_per_s"]))
            row("connect + accept + establish, %d at once, warpnic / kernel TCP rate" % n, r,
                "x kernel", ">= 1 x kernel TCP (%s against %s conn/s)"
                % (fmt(cps), fmt(k["setup_per_s"])), r is not None and r >= 1, n=n)
        last = conn["cmtime"][-1]
        row("cmtime -c %d through two warpnicd" % last["n"], last["n"], "connections",
            "completes: every connection established and torn down",
            "destroy" in last["steps"])
        if len(conn["cmtime"]) > 1:
            # the largest N against the one before it (1 connection is a latency, not a rate)
            a, b = conn["cmtime"][-2], conn["cmtime"][-1]
            grow = {s: ratio(b["steps"][s]["us_per_conn"], a["steps"][s]["us_per_conn"])
                    for s in b["steps"] if s in a["steps"]}
            print("%7s %-9s %s" % ("", "growth", ", ".join(
                "%s %s" % (s, fmt(v, 2)) for s, v in grow.items()) +
                " (us per connection at %d / at %d)" % (b["n"], a["n"])))
            worst = max((v for v in grow.values() if v is not None), default=None)
            row("per-step time per connection, %d against %d connections" % (b["n"], a["n"]),
                worst, "x", "does not grow (<= 1.15 x, worst step)",
                worst is not None and worst <= 1.15, growth=grow)
        h = conn["hold"]
        print("%-58s A %s KiB, B %s KiB (%d held; RSS before/while: A %s, B %s KiB)" % (
            "warpnicd memory per idle established connection", fmt(h["per_conn_kb"]["a"]),
            fmt(h["per_conn_kb"]["b"]), h["n"], "/".join(map(str, h["a_kb"])),
            "/".join(map(str, h["b_kb"]))))
        row("warpnicd memory per idle connection (%d held), A / B" % h["n"],
            [h["per_conn_kb"]["a"], h["per_conn_kb"]["b"]], "KiB", "reported (small)", None)
        q = conn.get("requests")
        if q:
            print("%-58s pd %s, cq %s, qp %s, mr %s, cm id %s us (%d pairs each, "
                  "wn-ctl-cost)" % ("one control request through the shim (make or drop)",
                                    fmt(q["pd_us"]), fmt(q["cq_us"]), fmt(q["qp_us"]),
                                    fmt(q["mr_us"]), fmt(q["id_us"]), q["n"]))
    print()
    print("%-70s %16s %-12s  %s" % ("issue 26 goal figure", "value", "unit", "goal (met?)"))
    for x in rows:
        v = x["value"]
        v = "/".join(fmt(y, 3) for y in v) if isinstance(v, list) else fmt(v, 2)
        met = "" if x["holds"] is None else " (%s)" % ("yes" if x["holds"] else "no")
        print("%-70s %16s %-12s  %s%s" % (x["figure"], v, x["unit"], x["goal"], met))
    return {"qp_curve": curve, "conn": conn}, rows


def cost_table(cost, goals):
    """Issue 27's goals: instructions per message both sides (callgrind, rdma_cost.sh) and
    the two wall-clock ratios of this run beside them. Prints the table; returns its rows."""
    ir = {(c["mode"], c["size"]): c for c in cost}
    rows = []

    def row(fig, val, raw, r, text, holds):
        rows.append(dict(figure=fig, value=val, raw=raw, ratio=r, goal=text,
                         holds=bool(holds) if holds is not None else None))

    for mode, size, name, lim in (("write", 65536, "RDMA Write 64 KiB", 100000),
                                  ("write", 4096, "RDMA Write 4 KiB", None),
                                  ("write", 64, "RDMA Write 64 B", None),
                                  ("send", 64, "RDMA Send 64 B", 1200)):
        c = ir.get((mode, size))
        v = c["ir_per_msg"] if c else None
        raw = c["raw_ir_per_msg"] if c else None
        row("%s, instructions per message" % name, v, raw, ratio(v, raw),
            "<= %d" % lim if lim else "(per frame: %s)" % fmt(c["ir_per_frame"]) if c else "",
            v <= lim if v is not None and lim else None)
    w, m = ir.get(("write", 65536)), ir.get(("mwrite", 65536))
    r = ratio(m["ir_per_msg"], w["ir_per_msg"]) if w and m else None
    row("RDMA Write 64 KiB with Markers, instructions per message",
        m["ir_per_msg"] if m else None, m["raw_ir_per_msg"] if m else None, r,
        "<= 1.3 x without Markers (%s)" % fmt(r, 2), r is not None and r <= 1.3)
    by = {g["figure"]: g for g in goals}
    g = by.get("run-to-completion RDMA Write 64 KiB goodput")
    if g is not None:
        row("run-to-completion RDMA Write 64 KiB, Gbit/s", g["value"], None, g["vs_raw"],
            ">= 0.5 x raw memif", g["vs_raw"] is not None and g["vs_raw"] >= 0.5)
    g = by.get("64 B RDMA Send message rate, run-to-completion")
    if g is not None:
        row("run-to-completion 64 B RDMA Send, Mmsg/s", g["value"], None, g["vs_raw"],
            ">= 0.4 x raw packet rate", g["vs_raw"] is not None and g["vs_raw"] >= 0.4)
    print()
    print("issue 27: one pass over every byte (instructions: both sides per message, callgrind;"
          " rates: this run)")
    print("%-58s %10s %10s %8s  %s" % ("figure", "warpnic", "raw", "ratio", "goal (met?)"))
    for x in rows:
        met = "" if x["holds"] is None else " (%s)" % ("yes" if x["holds"] else "no")
        print("%-58s %10s %10s %8s  %s%s" % (x["figure"], fmt(x["value"]), fmt(x["raw"]),
                                             fmt(x["ratio"], 2), x["goal"], met))
    return rows


def main():
    d, quick = sys.argv[1], sys.argv[2] == "1"
    raw_bw, raw_lat = rows(d, "raw_bw"), rows(d, "raw_lat")
    rtc_lat, rtc_bw = rows(d, "rtc_write_lat"), rows(d, "rtc_write_bw")
    rtc_send = rows(d, "rtc_send_bw")[64]
    qps, qps_rows, one_buf = {}, {}, {}
    for fn in os.listdir(d):
        m = re.fullmatch(r"rtc_qps1buf_(\d+)\.json", fn)
        if m:
            one_buf[int(m.group(1))] = rows(d, fn[:-5])[65536]["Gbit/s"]
        m = re.fullmatch(r"rtc_qps_(\d+)\.json", fn)
        if m:
            qps_rows[int(m.group(1))] = rows(d, fn[:-5])[65536]
            qps[int(m.group(1))] = qps_rows[int(m.group(1))]["Gbit/s"]
    dae = load(d, "daemons")
    dae_lat = {r["size"]: r for r in dae["write_lat"]}
    dae_bw = {r["size"]: r for r in dae["write_bw"]}
    with open(os.path.join(d, "pp.cli")) as f:
        m = re.search(r"^pingpong: path .* p50_us ([0-9.]+) p99_us ([0-9.]+)", f.read(), re.M)
    wn_tcp = float(m.group(1)) / 2 if m else None       # half the round trip
    with open(os.path.join(d, "iperf3.json")) as f:
        iperf = json.load(f)["end"]["sum_received"]["bits_per_second"] / 1e9
    with open(os.path.join(d, "sockperf.out")) as f:
        sp = f.read()
    sp50 = float(re.search(r"percentile 50\.000 =\s*([0-9.]+)", sp).group(1))
    sp99 = float(re.search(r"percentile 99\.000 =\s*([0-9.]+)", sp).group(1))

    def g(r, k):
        return r[k] if r is not None else None

    raw8, raw64k, raw4k = g(raw_lat.get(8), "p50_us"), g(raw_bw.get(65536), "Gbit/s"), \
        g(raw_bw.get(4096), "Gbit/s")
    raw64_pps = g(raw_bw.get(64), "Mpps")
    r8 = g(rtc_lat.get(8), "p50_us")
    d8, d8_99 = g(dae_lat.get(8), "p50_us"), g(dae_lat.get(8), "p99_us")
    q1 = qps.get(1)
    goals = []

    def goal(fig, unit, val, vs_raw, vs_kernel, text, holds, **extra):
        goals.append(dict(figure=fig, unit=unit, value=val, vs_raw=vs_raw,
                          vs_kernel_tcp=vs_kernel, goal=text,
                          holds=bool(holds) if holds is not None else None, **extra))

    a, b = ratio(r8, raw8), ratio(r8, wn_tcp)
    goal("run-to-completion 8 B RDMA Write ping-pong p50", "us", r8, a, ratio(r8, sp50),
         "<= 2 x raw memif p50, <= 1.5 x wn-tcp ping-pong p50",
         a is not None and b is not None and a <= 2 and b <= 1.5, vs_wn_tcp=b)
    a, p = ratio(d8, sp50), ratio(d8_99, d8)
    goal("daemons + unmodified ib_write_lat -s 8 p50", "us", d8, ratio(d8, raw8), a,
         "<= 0.5 x kernel TCP (sockperf) p50; p99 <= 3 x p50",
         a is not None and p is not None and a <= 0.5 and p <= 3, p99_us=d8_99, p99_vs_p50=p)
    v = g(rtc_bw.get(65536), "Gbit/s")
    a = ratio(v, raw64k)
    goal("run-to-completion RDMA Write 64 KiB goodput", "Gbit/s", v, a, ratio(v, iperf),
         ">= 0.8 x raw memif", a is not None and a >= 0.8)
    v = g(dae_bw.get(65536), "Gbit/s")
    a, k = ratio(v, raw64k), ratio(v, iperf)
    goal("daemons + unmodified ib_write_bw -s 65536", "Gbit/s", v, a, k,
         ">= 0.6 x raw, >= 1.5 x iperf3 loopback", a is not None and a >= 0.6 and k >= 1.5)
    for who, v in (("run-to-completion", g(rtc_bw.get(4096), "Gbit/s")),
                   ("daemons + ib_write_bw", g(dae_bw.get(4096), "Gbit/s"))):
        a = ratio(v, raw4k)
        goal("4 KiB RDMA Write, " + who, "Gbit/s", v, a, ratio(v, iperf), ">= 0.5 x raw",
             a is not None and a >= 0.5)
    v = rtc_send["Mmsg/s"]
    a = ratio(v, raw64_pps)
    goal("64 B RDMA Send message rate, run-to-completion", "Mmsg/s", v, a, None,
         ">= 0.5 x raw memif 64 B packet rate", a is not None and a >= 0.5)
    curve = {q: (qps[q], ratio(qps[q], q1)) for q in sorted(qps)}
    worst = min((r for _, r in curve.values() if r is not None), default=None)
    goal("QPs " + " -> ".join(str(q) for q in sorted(qps)) +
         ", aggregate Write 64 KiB (run-to-completion)", "Gbit/s",
         qps[max(qps)] if qps else None, ratio(qps[max(qps)], raw64k) if qps else None, None,
         "within 15 % of 1 QP", worst is not None and abs(1 - worst) <= 0.15,
         curve={str(q): {"Gbit/s": c[0], "vs_1qp": c[1]} for q, c in curve.items()})

    # ---- print
    print("%-58s %10s %-7s %8s %9s  %s" % ("figure", "warpnic", "unit", "vs raw", "vs kernel",
                                            "goal (met?)"))
    for r in goals:
        print("%-58s %10s %-7s %8s %9s  %s (%s)" % (
            r["figure"], fmt(r["value"]), r["unit"], fmt(r["vs_raw"], 2),
            fmt(r["vs_kernel_tcp"], 2), r["goal"], "yes" if r["holds"] else "no"))
        if "vs_wn_tcp" in r:
            print("%-58s %10s %-7s %8s" % ("  ... vs wn-tcp ping-pong p50 (half round trip)",
                                           fmt(wn_tcp), "us", fmt(r["vs_wn_tcp"], 2)))
        if "p99_us" in r:
            print("%-58s %10s %-7s %8s" % ("  ... p99 (p99 / p50)", fmt(r["p99_us"]), "us",
                                           fmt(r["p99_vs_p50"], 2)))
        if "curve" in r:
            for q, c in r["curve"].items():
                print("%-58s %10s %-7s %8s" % ("  ... %s QP(s) (vs 1 QP)" % q,
                                               fmt(c["Gbit/s"]), "Gbit/s", fmt(c["vs_1qp"], 2)))
    print()
    print("baselines: raw memif 8 B p50 %s us, 4 KiB %s / 64 KiB %s Gbit/s, 64 B %s Mpps; "
          "kernel TCP: sockperf p50 %s us (p99 %s), iperf3 %s Gbit/s; wn-tcp 8 B p50 %s us"
          % (fmt(raw8), fmt(raw4k), fmt(raw64k), fmt(raw64_pps), fmt(sp50), fmt(sp99),
             fmt(iperf), fmt(wn_tcp)))
    print()
    print("%-8s %10s %10s %10s %10s   %10s %10s %10s" % (
        "size", "raw Gb/s", "rtc Gb/s", "dmn Gb/s", "rtc/raw", "raw p50us", "rtc p50us",
        "dmn p50us"))
    sizes = sorted(set(raw_bw) | set(rtc_bw) | set(raw_lat) | set(rtc_lat) | set(dae_bw) |
                   set(dae_lat))
    for s in sizes:
        rb, tb = g(raw_bw.get(s), "Gbit/s"), g(rtc_bw.get(s), "Gbit/s")
        print("%-8d %10s %10s %10s %10s   %10s %10s %10s" % (
            s, fmt(rb), fmt(tb), fmt(g(dae_bw.get(s), "Gbit/s")), fmt(ratio(tb, rb), 2),
            fmt(g(raw_lat.get(s), "p50_us")), fmt(g(rtc_lat.get(s), "p50_us")),
            fmt(g(dae_lat.get(s), "p50_us"))))

    cost = []
    cpath = os.path.join(d, "cost.txt")
    if os.path.exists(cpath):
        with open(cpath) as f:
            lines = f.read().splitlines()
        print()
        print("instructions per message, both sides, callgrind (repeatable):")
        for line in lines:
            print("  " + line)
            fl = line.split()
            if len(fl) == 8 and fl[1].isdigit():
                cost.append({"mode": fl[0], "size": int(fl[1]), "ir_per_msg": float(fl[3]),
                             "raw_ir_per_msg": float(fl[4]), "frames": int(fl[5]),
                             "ir_per_frame": float(fl[6]), "vs_raw": float(fl[7])})

    cost_goals = cost_table(cost, goals) if cost else []
    sctp, sctp_goals = sctp_table(d, quick, cost)
    scale, scale_goals = scale_table(d, qps_rows, dae, one_buf, cost)

    # ---- JSON
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False,
                             cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or None
    except OSError:
        rev = None
    doc = {
        "bench": "warpnic issues 11, 12, 26 and 27", "quick": quick, "commit": rev,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(), "loadavg": os.getloadavg()[0],
        "latency": "half round trip (us)",
        "raw": {"bw": list(raw_bw.values()), "lat": list(raw_lat.values())},
        "rtc": {"write_bw": list(rtc_bw.values()), "write_lat": list(rtc_lat.values()),
                "send_bw_64": rtc_send, "qps_write_bw_64k": {str(q): v for q, v in
                                                              sorted(qps.items())}},
        "daemons": dae,
        "wn_tcp": {"p50_us": wn_tcp, "size": 8},
        "kernel_tcp": {"iperf3_gbps": iperf, "sockperf_p50_us": sp50, "sockperf_p99_us": sp99,
                       "sockperf_size": 14},
        "goals": goals,
        "instructions": cost,
        "cost_goals": cost_goals,
        "sctp": sctp,
        "sctp_goals": sctp_goals,
        "scale": scale,
        "scale_goals": scale_goals,
    }
    with open(os.path.join(d, "bench.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # ---- chart
    def dat(name, pts):
        path = os.path.join(d, name + ".dat")
        with open(path, "w") as f:
            for x, y in pts:
                if y is not None:
                    f.write("%d %g\n" % (x, y))
        return path

    bw = [("raw memif", dat("c_raw_bw", [(s, r["Gbit/s"]) for s, r in sorted(raw_bw.items())])),
          ("warpnic run-to-completion Write",
           dat("c_rtc_bw", [(s, r["Gbit/s"]) for s, r in sorted(rtc_bw.items())])),
          ("warpnicd + ib_write_bw",
           dat("c_dae_bw", [(s, r["Gbit/s"]) for s, r in sorted(dae_bw.items())]))]
    lat = [("raw memif", dat("c_raw_lat", [(s, r["p50_us"]) for s, r in sorted(raw_lat.items())])),
           ("warpnic run-to-completion Write",
            dat("c_rtc_lat", [(s, r["p50_us"]) for s, r in sorted(rtc_lat.items())])),
           ("warpnicd + ib_write_lat",
            dat("c_dae_lat", [(s, r["p50_us"]) for s, r in sorted(dae_lat.items())])),
           ("wn-tcp ping-pong", dat("c_wntcp_lat", [(8, wn_tcp)])),
           ("kernel TCP (sockperf)", dat("c_sock_lat", [(14, sp50)]))]
    def lbl(n):
        return "%d KiB" % (n >> 10) if n >= 1024 and n % 1024 == 0 else "%d B" % n

    tics = "set xtics (" + ", ".join('"%s" %d' % (lbl(s), s) for s in sizes + [14]) + ")"
    qc = scale["qp_curve"]
    qp_rtc = dat("c_qps_rtc", [(int(q), c["rtc_gbps"]) for q, c in qc.items()])
    qp_dae = dat("c_qps_dae", [(int(q), c["daemons_gbps"]) for q, c in qc.items()])
    qp_one = dat("c_qps_one", [(int(q), c["rtc_one_buffer_gbps"]) for q, c in qc.items()
                               if c.get("rtc_one_buffer_gbps") is not None])
    gp = ['set terminal pngcairo size 1800,480 font "sans,10" noenhanced',
          'set output "%s"' % os.path.join(d, "bench.png"),
          'set multiplot layout 1,3 title "warpnic vs raw memif and kernel TCP (one run, %s)"'
          % ("quick" if quick else "full"),
          'set logscale x 2', tics, 'set xrange [%g:%g]' % (min(sizes) / 1.4, max(sizes) * 1.4),
          'set xlabel "message size"',
          'set key top left', 'set grid',
          'set ylabel "Gbit/s"', 'set title "bandwidth"', 'set yrange [0:*]',
          'plot ' + ", ".join('"%s" using 1:2 with linespoints title "%s"' % (p, t)
                              for t, p in bw) +
          ', %g with lines dashtype 2 title "kernel TCP iperf3 (stream)"' % iperf,
          'set logscale y', 'set yrange [*:*]', 'set ylabel "p50 us (half round trip)"',
          'set title "latency"',
          'plot ' + ", ".join('"%s" using 1:2 with linespoints title "%s"' % (p, t)
                              for t, p in lat),
          'set logscale x 4', 'unset logscale y', 'set yrange [0:*]',
          'set xtics (%s)' % ", ".join('"%s" %s' % (q, q) for q in qc),
          'set xrange [0.7:%g]' % (max(map(int, qc), default=1) * 1.4),
          'set xlabel "QPs (aggregate RDMA Write 64 KiB)"', 'set ylabel "Gbit/s"',
          'set title "QPs"', 'set key top right',
          'plot "%s" using 1:2 with linespoints title "run-to-completion (--rtc --qps N)", '
          '"%s" using 1:2 with linespoints title "... one buffer for all QPs (--buffers 1)", '
          '"%s" using 1:2 with linespoints title "warpnicd + ib_write_bw -q N"'
          % (qp_rtc, qp_one, qp_dae),
          'unset multiplot']
    with open(os.path.join(d, "bench.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")


if __name__ == "__main__":
    main()
