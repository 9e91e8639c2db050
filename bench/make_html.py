#!/usr/bin/env python3
"""make_html.py REFS OUT [MB]: a message whose text/html part is MB (default 10) megabytes
holding REFS cid: references (half resolve to a small image part, half dangle, one in ten
malformed as cid:<...> so that repair rewrites it), then filler paragraphs."""
import sys
n, path = int(sys.argv[1]), sys.argv[2]
size = int(sys.argv[3] if len(sys.argv) > 3 else 10) * 1024 * 1024
refs = []
for i in range(n):
    cid = "img@example.org" if i % 2 == 0 else f"missing{i}@example.org"
    url = f"cid:<{cid}>" if i % 10 == 0 else f"cid:{cid}"
    refs.append(f'<img src="{url}" alt="{i}">\n')
body = "".join(refs)
filler = "<p>" + "lorem ipsum dolor sit amet " * 36 + "</p>\n"
parts = [body]
total = len(body)
while total < size:
    parts.append(filler)
    total += len(filler)
with open(path, "w") as f:
    f.write('From: bench@example.org\nMessage-ID: <refs@example.org>\nMIME-Version: 1.0\n'
            'Content-Type: multipart/related; boundary="b"\n\n--b\n'
            'Content-Type: text/html; charset=utf-8\n\n' + "".join(parts) + '\n--b\n'
            'Content-Type: image/png\nContent-ID: <img@example.org>\nContent-Transfer-Encoding: base64\n\n'
            'iVBORw0KGgo=\n--b--\n')
