#!/usr/bin/env python3
"""HTML with data: images, as editors and webmails write it, for bench/data.sh.

Writes DIR/NNN.html (the HTML alone, what PHPMailer's msgHTML and nodemailer's
attachDataUrls take) and DIR/all.mbox (the same HTML, each a text/html message, what mimeuri
takes). Each page has data: images in the places the issue lists: img src (PNG, JPEG, GIF;
base64, one %-encoded SVG), a srcset, a background attribute, a CSS url() in a style
attribute and in a <style> element, an SVG <image href>, a <video poster>; some images
repeated; and one data:text/html link (not an image).
Usage: make_data.py DIR [COUNT]
"""
import base64, os, struct, sys, zlib


def png(w, h, seed):
    raw = b"".join(b"\x00" + bytes(v for x in range(w) for v in ((x * 7 + y * 13 + seed) % 256, (x * seed) % 256, (y * 3 + seed) % 256))
                   for y in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


GIF = base64.b64decode("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")
# A JPEG's signature and markers are what a sniffer reads; the rest is filler for the size.
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + bytes(range(256)) * 8 + b"\xff\xd9"
SVG = "%3Csvg%20xmlns%3D%22http%3A//www.w3.org/2000/svg%22%20width%3D%228%22%20height%3D%228%22%3E%3Crect%20width%3D%228%22%20height%3D%228%22%20fill%3D%22teal%22/%3E%3C/svg%3E"


def uri(t, b):
    return f"data:{t};base64," + base64.b64encode(b).decode()


def page(i):
    a, b, c = uri("image/png", png(40, 30, i)), uri("image/png", png(24, 24, i + 1)), uri("image/png", png(64, 16, i + 2))
    j, g = uri("image/jpeg", JPEG + bytes([i % 256])), uri("image/gif", GIF)
    return f"""<html><head><style>.hero {{ background-image: url('{c}'); }}</style></head>
<body>
<p>Hello #{i}, <img src="{a}" alt="logo"> and again <img src="{a}" alt="logo again"></p>
<p><img src="{j}" width="20"> <img src="{g}"></p>
<picture><source srcset="{b} 2x"><img srcset="{b} 1x, {c} 2x" src="{b}"></picture>
<table background="{c}"><tr><td style="background: url({b}) no-repeat">cell</td></tr></table>
<div class="hero">hero</div>
<svg width="8" height="8"><image href="data:image/svg+xml,{SVG}" width="8" height="8"/></svg>
<video poster="{a}"></video>
<a href="data:text/html,%3Ch1%3Ehi%3C/h1%3E">a data: link</a>
</body></html>
"""


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "all.mbox"), "w") as mbox:
        for i in range(n):
            html = page(i)
            open(os.path.join(d, f"{i:03d}.html"), "w").write(html)
            mbox.write(f"From bench@example.org Fri Nov 27 01:00:00 2026\nFrom: Bench <bench@example.org>\n"
                       f"To: you@example.net\nSubject: page {i}\nMessage-ID: <{i}@example.org>\nMIME-Version: 1.0\n"
                       f"Content-Type: text/html; charset=utf-8\n\n{html}\n")


if __name__ == "__main__":
    main()
