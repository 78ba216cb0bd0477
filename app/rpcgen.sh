#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rpcgen.sh -h|-c IN.x OUT: run rpcgen on a copy of IN.x next to OUT, so that the generated
# XDR routines include "NAME.h" (rpcgen names the header after the path it was given).
set -e
mode=$1 in=$2 out=$3
dir=$(dirname "$out")
name=$(basename "$in")
cp "$in" "$dir/$name"
cd "$dir"
rm -f "$(basename "$out")"
rpcgen "$mode" -o "$(basename "$out")" "$name"
