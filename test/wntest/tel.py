# SPDX-License-Identifier: BSD-3-Clause
"""DPDK telemetry of a running warpnicd (the v2 socket; scripts/wn-tel.py is the client).

A pair is shared by the cases of one configuration, so a case judges the counters it caused:
Counters.value() is a counter's growth since the case began (Counters.begin), and a gauge's
or a string's present value. GAUGES names the values that are states, not counts.
"""
import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'wn_tel', os.path.join(_HERE, '..', '..', 'scripts', 'wn-tel.py'))
_wn_tel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wn_tel)

# present values, never deltas: objects held (/warpnic/ctl), work in flight, link state
GAUGES = frozenset([
    'clients', 'pds', 'mrs', 'cqs', 'srqs', 'qps', 'cm_channels', 'cm_ids', 'mws', 'ahs',
    'zc_inflight', 'mr_dereg_waiting', 'rnr_held', 'link', 'gate', 'lcores', 'active_qps',
    'connections', 'addrs', 'neighbours', 'addrs_tentative', 'addrs_duplicate',
])


def query(sock, cmd):
    """The reply's value of one telemetry command (OSError, ValueError when unreachable)."""
    return _wn_tel.query(sock, cmd)


class Counters:
    """One instance's telemetry read as this case's deltas."""

    def __init__(self, sock):
        self.sock = sock
        self.base = {}

    def begin(self, cmds, fresh):
        """Start a case: a fresh instance counts from zero, a reused one from now."""
        self.base = {}
        if fresh:
            return
        for c in cmds:
            try:
                v = query(self.sock, c)
            except (OSError, ValueError, KeyError):
                continue
            if isinstance(v, dict):
                self.base[c] = v

    def raw(self, cmd):
        return query(self.sock, cmd)

    def value(self, cmd, key):
        """KEY of COMMAND's dictionary for this case (KeyError when the reply has no KEY)."""
        d = query(self.sock, cmd)
        v = d[key]
        if key in GAUGES or not isinstance(v, int):
            return v
        return v - self.base.get(cmd, {}).get(key, 0)

    def values(self, cmd, keys):
        d = query(self.sock, cmd)
        out = {}
        for k in keys:
            v = d[k]
            if k not in GAUGES and isinstance(v, int):
                v -= self.base.get(cmd, {}).get(k, 0)
            out[k] = v
        return out
