#!/usr/bin/env python3
"""make_inline.py OUT COUNT SIZE_KB [CTE [EOL [REFS]]]: one multipart/related message whose
HTML part refers by cid: to COUNT images of SIZE_KB KiB of random bytes each (base64), so that
--cid=inline makes an HTML part of about COUNT x SIZE_KB x 4/3 bytes. CTE: the HTML part's
transfer encoding, quoted-printable (default), base64 or 7bit (which inlining turns into
quoted-printable). EOL: lf (default) or crlf. REFS: how often each image is referred to
(default 1). Deterministic."""
import base64
import quopri
import random
import sys

out, count, size_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cte = sys.argv[4] if len(sys.argv) > 4 else "quoted-printable"
eol = "\r\n" if len(sys.argv) > 5 and sys.argv[5] == "crlf" else "\n"
refs = int(sys.argv[6]) if len(sys.argv) > 6 else 1
rng = random.Random(7)

html = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>Inline</title></head><body>\n']
for r in range(refs):
    for i in range(count):
        html.append(f'<p>Image {i}, reference {r}: <img src="cid:img{i}@bench.example" alt="image {i}"></p>\n')
html.append("<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>\n</body></html>\n")
text = "".join(html).encode()
if cte == "quoted-printable":
    body = quopri.encodestring(text).decode()
elif cte == "base64":
    s = base64.b64encode(text).decode()
    body = "\n".join(s[i:i + 76] for i in range(0, len(s), 76)) + "\n"
else:
    body = text.decode()

parts = ["From: bench@example.org\nTo: you@example.org\nSubject: inline\nMessage-ID: <inline@bench.example>\n"
         "MIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"bound\"; type=\"text/html\"\n\n"
         f"--bound\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: {cte}\n\n{body}"]
for i in range(count):
    data = base64.b64encode(rng.randbytes(size_kb * 1024)).decode()
    lines = "\n".join(data[k:k + 76] for k in range(0, len(data), 76))
    parts.append(f"\n--bound\nContent-Type: image/png\nContent-ID: <img{i}@bench.example>\n"
                 f"Content-Transfer-Encoding: base64\n\n{lines}\n")
parts.append("--bound--\n")
with open(out, "w", newline="") as f:
    f.write("".join(parts).replace("\n", eol))
