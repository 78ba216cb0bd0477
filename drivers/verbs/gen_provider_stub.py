#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate a stand-in for an rdma-core provider library (libmlx5.so.1, libefa.so.1, ...).

Programs that link a provider's direct verbs (perftest, pyverbs, UCX, libfabric) load it at
start-up, BIND_NOW, so the stand-in must export every symbol under every version node of the
real library. warpnic's device belongs to no such provider, and each entry answers what the
real library answers for a device of another provider: nothing done, EOPNOTSUPP.

Everything comes from the build machine: the version nodes (with their parents) and the
exported symbols from `objdump -p` / `objdump -T` of the installed library, each function's
return type from the provider's installed header run through the C preprocessor. A symbol the
header does not declare, a return type this script has no answer for, or an exported data
object stops the build rather than guess.

  gen_provider_stub.py --lib libmlx5.so.1 --header infiniband/mlx5dv.h \\
      --cc 'cc' --out-c mlx5_stub.c --out-map libmlx5.map
"""
import argparse
import os
import re
import shlex
import subprocess
import sys


def find_library(soname, libdirs):
    for d in libdirs:
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return p
    out = subprocess.run(['ldconfig', '-p'], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == soname and f[-1].startswith('/'):
            return f[-1]
    sys.exit(f'gen_provider_stub: {soname} not found (ibverbs-providers not installed?)')


def version_nodes(lib):
    """[(node, parent or None)] in definition order, the BASE entry left out."""
    out = subprocess.run(['objdump', '-p', lib], capture_output=True, text=True,
                         check=True).stdout
    nodes = []
    inside = False
    for line in out.splitlines():
        if line.startswith('Version definitions:'):
            inside = True
            continue
        if not inside:
            continue
        if not line.strip():
            break
        f = line.split()
        if line[0].isdigit():
            flags = int(f[1], 16)
            if flags & 1:  # VER_FLG_BASE: the soname itself
                continue
            nodes.append([f[3], None])
        elif nodes:
            nodes[-1][1] = f[0]
    return [tuple(n) for n in nodes]


def exports(lib):
    """[(name, node, default, kind)]: kind 'F' function, 'O' object (node symbols left out)."""
    out = subprocess.run(['objdump', '-T', lib], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 7 or '*UND*' in line or not re.match(r'^[0-9a-f]{16}$', f[0]):
            continue
        name, ver = f[-1], f[-2]
        if '*ABS*' in line and name == ver:
            continue  # the version node's own definition
        default = not ver.startswith('(')
        ver = ver.strip('()')
        kind = 'F' if 'DF' in f[1:4] else 'O'
        syms.append((name, ver, default, kind))
    return syms


def return_types(cc, header, names):
    """{name: return type text} for each name the preprocessed header declares."""
    src = f'#include <{header}>\n'
    pp = subprocess.run(shlex.split(cc) + ['-E', '-P', '-D_GNU_SOURCE', '-'], input=src,
                        capture_output=True, text=True, check=True).stdout
    pp = re.sub(r'__attribute__\s*\(\(.*?\)\)', ' ', pp)
    # declarations end at ';', bodies and aggregates at braces
    chunks = re.split(r'[;{}]', pp)
    found = {}
    for c in chunks:
        c = ' '.join(c.split())
        for n in names:
            if n in found:
                continue
            m = re.match(r'^(?:extern\s+)?(.*?)\b' + re.escape(n) + r'\s*\(', c)
            if m and 'static' not in m.group(1) and 'typedef' not in m.group(1):
                found[n] = m.group(1).strip()
    return found


# return type → (C return type of the stub, body)
def stub_of(name, rtype):
    t = rtype.replace('const ', '').replace('struct ', '').replace('enum ', 'enum ').strip()
    if rtype.endswith('*'):
        return 'void *', '\terrno = EOPNOTSUPP;\n\treturn NULL;\n'
    if t == 'void':
        return 'void', ''
    if t == 'bool' or t == '_Bool':
        return 'bool', '\treturn false;\n'
    if t == 'int' and re.search(r'get_\w*fd$', name):
        return 'int', '\terrno = EOPNOTSUPP;\n\treturn -1;\n'  # a file descriptor
    if t in ('int',):
        # rdma-core's direct verbs return an errno for a device of another provider
        return 'int', '\terrno = EOPNOTSUPP;\n\treturn EOPNOTSUPP;\n'
    if t in ('ssize_t', 'long'):
        return 'long', '\terrno = EOPNOTSUPP;\n\treturn -1;\n'
    if t in ('uint8_t', 'uint16_t', 'uint32_t', 'uint64_t', 'size_t', 'unsigned int',
             '__be32', '__be64', '__u32', '__u64') or t.startswith('enum '):
        return 'unsigned long', '\terrno = EOPNOTSUPP;\n\treturn 0;\n'
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', required=True, help='soname of the real library')
    ap.add_argument('--libdir', action='append', default=[])
    ap.add_argument('--header', required=True, action='append')
    ap.add_argument('--cc', required=True)
    ap.add_argument('--out-c', required=True)
    ap.add_argument('--out-map', required=True)
    a = ap.parse_args()

    lib = find_library(a.lib, a.libdir)
    nodes = version_nodes(lib)
    syms = exports(lib)
    objs = [s for s in syms if s[3] != 'F']
    if objs:
        sys.exit(f'gen_provider_stub: {a.lib} exports data objects {objs}: not handled')
    names = sorted({s[0] for s in syms})
    rt = {}
    for h in a.header:
        rt.update(return_types(a.cc, h, [n for n in names if n not in rt]))
    missing = [n for n in names if n not in rt]
    if missing:
        sys.exit(f'gen_provider_stub: {a.lib}: not declared in {a.header}: {missing}')

    c = [f'/* SPDX-License-Identifier: BSD-3-Clause */',
         f'/* Generated by gen_provider_stub.py from {lib}: do not edit. */',
         '#include <errno.h>', '#include <stdbool.h>', '#include <stddef.h>', '']
    by_node = {}
    for i, (name, ver, default, _) in enumerate(sorted(syms)):
        ctype, body = stub_of(name, rt[name])
        if ctype is None:
            sys.exit(f'gen_provider_stub: {name} returns {rt[name]!r}: no stub for that')
        impl = f'wn_stub_{i}'
        c.append(f'/* {rt[name]} {name}@{"@" if default else ""}{ver} */')
        c.append(f'__attribute__((visibility("default"))) {ctype}\n{impl}(void)\n{{\n{body}}}')
        c.append(f'__asm__(".symver {impl}, {name}@{"@" if default else ""}{ver}");\n')
        by_node.setdefault(ver, []).append(name)

    m = ['/* SPDX-License-Identifier: BSD-3-Clause */',
         f'/* Generated by gen_provider_stub.py from {lib}: do not edit. */']
    for i, (node, parent) in enumerate(nodes):
        m.append(node + ' {')
        if by_node.get(node):
            m.append('\tglobal:')
            m.extend('\t\t' + n + ';' for n in by_node[node])
        if i == 0:
            m.append('\tlocal: *;')
        m.append('}' + (f' {parent};' if parent else ';'))
    with open(a.out_c, 'w') as f:
        f.write('\n'.join(c) + '\n')
    with open(a.out_map, 'w') as f:
        f.write('\n'.join(m) + '\n')


if __name__ == '__main__':
    main()
