#!/usr/bin/env python3
"""A stand-in for /dev/log: syslog-listen.py SOCKET FILE appends each datagram as a line."""
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
with open(out, "a") as f:
    while True:
        f.write(s.recv(65536).decode("utf-8", "replace") + "\n")
        f.flush()
