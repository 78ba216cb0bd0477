# SPDX-License-Identifier: BSD-3-Clause
"""Comparisons and polling shared by the checks of every case."""
import operator
import time

OPS = {'=': operator.eq, '!=': operator.ne, '>': operator.gt, '>=': operator.ge,
       '<': operator.lt, '<=': operator.le}


def compare(got, op, want):
    """got OP want: numbers as numbers (hex allowed), anything else as strings (= and !=)."""
    try:
        g = got if isinstance(got, int) else int(str(got), 0)
        w = want if isinstance(want, int) else int(str(want), 0)
    except ValueError:
        if op not in ('=', '!='):
            return False
        g, w = str(got), str(want)
    return OPS[op](g, w)


def poll(fn, secs=10.0, step=0.2):
    """Call fn() until it returns (True, detail) or secs pass; return the last (ok, detail).
    Telemetry snapshots refresh every 100 ms and a loaded machine answers late."""
    end = time.monotonic() + secs
    while True:
        ok, detail = fn()
        if ok or time.monotonic() >= end:
            return ok, detail
        time.sleep(step)
