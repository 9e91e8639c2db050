#!/usr/bin/env python3
"""make_mhtml.py DIR COUNT [SEED [IMAGES]]: COUNT MHTML-like messages, as a browser saves a page
(multipart/related, the HTML quoted-printable, images base64, style sheets
quoted-printable), into DIR/mhtml-N.eml. Each page's HTML (20-200 KB of text and markup)
refers to each of its 5-40 images (1-60 KB of random bytes) once by cid: (the images also
carry a Content-Location, as a browser writes them), so that --cid=inline and mailparser's
simpleParser (which inlines cid: only) make the same data: URIs; and to one style sheet by
its Content-Location. Deterministic for a SEED. IMAGES: that many images on every page instead."""
import base64
import os
import quopri
import random
import sys

out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
os.makedirs(out, exist_ok=True)
words = ("the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet consectetur adipiscing "
         "elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua").split()


def qp(text):
    return quopri.encodestring(text.encode()).decode()


def b64(data):
    s = base64.b64encode(data).decode()
    return "\n".join(s[i:i + 76] for i in range(0, len(s), 76))


for n in range(count):
    boundary = f"----MultipartBoundary--bench{n:04d}xYz----"
    images = []
    for i in range(int(sys.argv[4]) if len(sys.argv) > 4 else rng.randint(5, 40)):
        size = rng.randint(1024, 60 * 1024)
        images.append((f"https://example.org/img/{n}/{i}.png", f"img{i}.{n}@bench.example", rng.randbytes(size)))
    html = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>Page %d</title>' % n,
            '<link rel="stylesheet" href="https://example.org/style.css">',
            '<style>body { font-family: sans-serif; } .x { color: #333; }</style></head><body>']
    target = rng.randint(20, 200) * 1024
    size = 0
    i = 0
    while size < target or i < len(images):
        para = "<p class=\"x\">" + " ".join(rng.choice(words) for _ in range(rng.randint(20, 120))) + "</p>\n"
        if i < len(images):
            para += f'<div><img src="cid:{images[i][1]}" alt="image {i}" width="100" height="80"></div>\n'
        html.append(para)
        size += len(para)
        i += 1
    html.append("</body></html>\n")
    parts = [f"Content-Type: text/html\nContent-ID: <frame-{n}@mhtml.blink>\n"
             f"Content-Transfer-Encoding: quoted-printable\nContent-Location: https://example.org/page/{n}\n\n"
             + qp("".join(html))]
    parts.append("Content-Type: text/css\nContent-Transfer-Encoding: quoted-printable\n"
                 "Content-Location: https://example.org/style.css\n\n" + qp("body { margin: 0; }\n" * 200))
    for url, cid, data in images:
        parts.append(f"Content-Type: image/png\nContent-ID: <{cid}>\nContent-Transfer-Encoding: base64\n"
                     f"Content-Location: {url}\n\n" + b64(data) + "\n")
    with open(os.path.join(out, f"mhtml-{n:04d}.eml"), "w") as f:
        f.write("From: <Saved by Blink>\nSnapshot-Content-Location: https://example.org/page/%d\n"
                "Subject: page %d\nDate: Mon, 17 Dec 2018 11:19:57 -0000\nMIME-Version: 1.0\n"
                'Content-Type: multipart/related;\n\ttype="text/html";\n\tboundary="%s"\n\n\n' % (n, n, boundary))
        for p in parts:
            f.write(f"--{boundary}\n{p}\n")
        f.write(f"--{boundary}--\n")
