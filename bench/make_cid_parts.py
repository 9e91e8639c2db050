#!/usr/bin/env python3
"""One message: a multipart/related whose HTML names each of N small image parts by cid:
(an MHTML page with all its images, a digest), for the resolver's time against size
(bench/resolver.sh). Usage: make_cid_parts.py N OUT"""
import base64
import sys

n, out = int(sys.argv[1]), sys.argv[2]
b = "cidparts-boundary"
html = "<html><body>\n" + "".join(f'<img src="cid:img{i}@parts.example">\n' for i in range(n)) + "</body></html>\n"
parts = [f"--{b}\nContent-Type: text/html; charset=utf-8\n\n{html}"]
for i in range(n):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + str(i).encode()).decode()
    parts.append(f"--{b}\nContent-Type: image/png\nContent-ID: <img{i}@parts.example>\n"
                 f"Content-Transfer-Encoding: base64\n\n{png}\n")
with open(out, "w") as f:
    f.write("From: a@parts.example\nMessage-ID: <cidparts@parts.example>\nMIME-Version: 1.0\n"
            f'Content-Type: multipart/related; boundary="{b}"; type="text/html"\n\n'
            + "".join(parts) + f"--{b}--\n")
