# SPDX-License-Identifier: BSD-3-Clause
"""Programs on one instance of a pair, through scripts/warpnic-run (the shims first on
LD_LIBRARY_PATH, WARPNIC_CTL set), each bounded in time, output kept in a file."""
import os
import signal
import subprocess

from .pair import WN_RUN


def shim_dirs(build):
    return '%s/drivers/verbs:%s/drivers/rdmacm' % (build, build)


def argv(pair, node, args):
    return [WN_RUN, '--shim', shim_dirs(pair.build), '--ctl', pair.ctl(node)] + list(args)


def start(pair, node, args, out, env=None):
    """A program on NODE in the background (warpnic-run execs it: the Popen is the program)."""
    f = open(out, 'w')
    try:
        return subprocess.Popen(argv(pair, node, args), stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
    finally:
        f.close()


def run(pair, node, args, out, secs, env=None):
    """A program on NODE in the foreground: its exit status, -SIGKILL when it ran out of
    time (then it is killed)."""
    p = start(pair, node, args, out, env)
    return wait(p, secs)


def wait(p, secs):
    try:
        return p.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return -signal.SIGKILL


def stop(p, secs=10):
    """SIGTERM, then SIGKILL after secs; the exit status."""
    if p.poll() is None:
        p.terminate()
    return wait(p, secs)


def tail(path, lines=40):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError:
        return ''


def tails(d, lines=40, suffixes=('.out', '.json')):
    """The tail of every output file in directory d (for a failure's report)."""
    out = []
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        p = os.path.join(d, n)
        if n.endswith(suffixes) and os.path.getsize(p):
            out.append('----- %s (last %d lines)\n%s' % (n, lines, tail(p, lines)))
    return '\n'.join(out)
