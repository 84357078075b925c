#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Replays proto/examples/*.json, in name order, against a timensd that
has just started, over one connection, and checks each reply.

Rules (proto/examples/README.md): every key of the expected reply must be
in the actual one with an equal value; "<any>" matches any value; arrays
match element by element and have the same length; an error's "message"
is prose, so it only has to be a non-empty string (the "code" is the
contract). Keys the server adds are allowed.

Usage: proto-replay.py SOCKET EXAMPLES_DIR"""
import glob
import json
import os
import socket
import sys


def match(want, got, path):
    if want == "<any>":
        return []
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: expected an object, got {got!r}"]
        errors = []
        for key, value in want.items():
            if key not in got:
                errors.append(f"{path}.{key}: missing")
            elif key == "message" and path.endswith(".error"):
                if not isinstance(got[key], str) or not got[key]:
                    errors.append(f"{path}.message: expected a non-empty string")
            else:
                errors += match(value, got[key], f"{path}.{key}")
        return errors
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: expected {want!r}, got {got!r}"]
        return [e for i, (w, g) in enumerate(zip(want, got)) for e in match(w, g, f"{path}[{i}]")]
    if type(want) is not type(got) or want != got:
        return [f"{path}: expected {want!r}, got {got!r}"]
    return []


def main():
    sock_path, examples = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(sock_path)
    stream = sock.makefile("rwb")
    failed = 0
    files = sorted(glob.glob(os.path.join(examples, "*.json")))
    if not files:
        print(f"no examples in {examples}", file=sys.stderr)
        return 1
    for path in files:
        doc = json.load(open(path, encoding="utf-8"))
        line = doc["request_text"] if "request_text" in doc else json.dumps(doc["request"])
        stream.write(line.encode() + b"\n")
        stream.flush()
        reply = json.loads(stream.readline())
        errors = match(doc["response"], reply, "reply")
        for e in errors:
            print(f"{os.path.basename(path)}: {e}", file=sys.stderr)
        failed += bool(errors)
    print(f"{len(files) - failed} of {len(files)} examples replayed as documented")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
