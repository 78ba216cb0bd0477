#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""CPU time and context switches of processes over a measured interval (conn_bench.sh): what
one connection costs, thread by thread, beside what kernel TCP's costs.

  proc_cost.py snap NAME=PID ...          every thread's CPU ns and context switches (JSON)
  proc_cost.py run OUT -- CMD ARGS...     run CMD; its CPU and context switches (and those of
                                          every descendant it waited for) to OUT; CMD's status
  proc_cost.py diff BEFORE AFTER          per NAME/thread: CPU ns and switches between two snaps

CPU is the scheduler's run time (/proc/PID/task/TID/schedstat; utime + stime where the kernel
has no schedstat); switches are voluntary + involuntary context switches (a thread that
blocks and is woken again counts one), as getrusage() counts them for a waited command.
"""
import json
import os
import resource
import subprocess
import sys

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def thread(path):
    try:
        with open(os.path.join(path, "comm")) as f:
            comm = f.read().strip()
        try:
            with open(os.path.join(path, "schedstat")) as f:
                cpu = int(f.read().split()[0])
        except OSError:
            with open(os.path.join(path, "stat")) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = int((int(fields[11]) + int(fields[12])) * TICK_NS)
        sw = 0
        with open(os.path.join(path, "status")) as f:
            for line in f:
                if line.split(":")[0].endswith("ctxt_switches"):
                    sw += int(line.split()[1])
        return comm, cpu, sw
    except (OSError, ValueError, IndexError):
        return None  # the thread ended meanwhile


def snap(args):
    out = {}
    for a in args:
        name, pid = a.split("=", 1)
        base = "/proc/%s/task" % pid
        threads = {}
        for tid in os.listdir(base) if os.path.isdir(base) else []:
            t = thread(os.path.join(base, tid))
            if t:
                threads[tid] = t
        out[name] = threads
    json.dump(out, sys.stdout)


def run(out, cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = subprocess.call(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"cpu_ns": int(((after.ru_utime + after.ru_stime) -
                                  (before.ru_utime + before.ru_stime)) * 1e9),
                   "switches": (after.ru_nvcsw + after.ru_nivcsw) -
                   (before.ru_nvcsw + before.ru_nivcsw)}, f)
    return status


def diff(before, after):
    with open(before) as f:
        b = json.load(f)
    with open(after) as f:
        a = json.load(f)
    res = {}
    for name, threads in a.items():
        for tid, (comm, cpu, sw) in threads.items():
            c0, s0 = b.get(name, {}).get(tid, [comm, 0, 0])[1:]
            key = "%s/%s" % (name, comm)
            r = res.setdefault(key, {"cpu_ns": 0, "switches": 0})
            r["cpu_ns"] += cpu - c0
            r["switches"] += sw - s0
    json.dump(res, sys.stdout)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "snap":
        snap(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "run" and sys.argv[3] == "--":
        sys.exit(run(sys.argv[2], sys.argv[4:]))
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
