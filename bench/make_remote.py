#!/usr/bin/env python3
"""A message whose HTML holds N remote fetches of every kind --remote finds (images, srcset,
backgrounds, style url()s, SVG FuncIRI, a <style> with N/10 url()s), for bench/remote.sh's
linear-time check. Usage: make_remote.py OUT.eml N"""
import sys

out, n = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(n):
    k = i % 5
    if k == 0:
        rows.append(f'<p>row {i} <img src="https://t{i % 97}.example/o/{i}.gif" alt="a{i}" width="1" height="1"></p>')
    elif k == 1:
        rows.append(f'<img srcset="https://cdn.example/{i}.png 1x, https://cdn.example/{i}@2x.png 2x" alt="b">')
    elif k == 2:
        rows.append(f'<td background="https://cdn.example/bg{i}.png">cell {i}</td>')
    elif k == 3:
        rows.append(f'<div style="color:red;background:\\000075rl(https://cdn.example/s{i}.png)">t</div>')
    else:
        rows.append(f'<svg width="9" height="9"><rect fill="url(https://cdn.example/f{i}.svg#p)" width="9" height="9"/></svg>')
style = "".join(f".c{i}{{background:url(https://cdn.example/c{i}.png)}}" for i in range(n // 10))
html = f"<html><head><style>{style}</style></head><body>{''.join(rows)}</body></html>"
with open(out, "w") as f:
    f.write("From: a@example\nTo: b@example\nSubject: remote bench\nMIME-Version: 1.0\n"
            "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n")
    # Lines under 998 octets (RFC 5322 2.1.1): one row a line.
    f.write(html.replace("><", ">\n<"))
    f.write("\n")
