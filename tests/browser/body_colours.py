#!/usr/bin/env python3
"""A mail's body colours and background survive --cid=extract (issue 50: a page wrote the body
as <div bgcolor=...>, which no browser paints).

For each legacy colour value below (named colours, #rgb, digits without '#', the spec's
mangled forms, "transparent", whitespace, non-ASCII, long values) a message whose HTML body
has bgcolor=V and text=V, and in some a background image by cid: (PNG, or SVG: issue 50, an
SVG named by CSS was not shown), is extracted; headless
Chromium reads the original HTML's <body> and the page's <div> in its place
(body_colours.mjs): the same background colour, the same text colour, and a background image
on the page, shown, wherever the original has one.
Usage: body_colours.py MIMEURI LOG_DIR   (exit 77 as browser_suite.py does)
"""
import base64, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, run_pages  # noqa: E402

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#0a0"/></svg>'
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
VALUES = ["red", "ReD", " navy ", "#abc", "#ABCDEF", "abc", "ffcc00", "#ffcc0", "chucknorris", "ninjaturtle",
          "crap", "transparent", "", "#", "rgb(1,2,3)", "#12345678901234567890", "0" * 40 + "ff",
          "caf\u00e9", "\U0001F600abc", "x" * 200, "lightgoldenrodyellow", "#1 2 3", "grey", "#ff00ff00"]


def message(i, value, image):
    """image: None, "png" or "svg" (an SVG background: the page shows it by a data: URL, its
    file beside the page being .svg.txt, which no browser shows as an image)."""
    html = (f'<html><head><title>t</title></head><body bgcolor="{value}" text="{value}"'
            + (f' background="cid:bg{i}@t"' if image else "") + '><p id="m">text</p></body></html>')
    ctype, data = ("image/svg+xml", SVG) if image == "svg" else ("image/png", PNG)
    if not image:
        return ("From: a@example.org\nMessage-ID: <c%d@t>\nMIME-Version: 1.0\n"
                "Content-Type: text/html; charset=utf-8\n\n%s\n" % (i, html)).encode(), html
    return ("From: a@example.org\nMessage-ID: <c%d@t>\nMIME-Version: 1.0\n"
            'Content-Type: multipart/related; boundary="r"\n\n--r\nContent-Type: text/html; charset=utf-8\n\n%s\n'
            "--r\nContent-Type: %s\nContent-ID: <bg%d@t>\nContent-Transfer-Encoding: base64\n\n%s--r--\n"
            % (i, html, ctype, i, base64.encodebytes(data).decode())).encode(), html


def main():
    binary, logdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    chromium, mods = browser_tools(logdir)
    work = tempfile.mkdtemp(prefix="mimeuri-body-")
    try:
        cases = []
        for i, v in enumerate(VALUES):
            image = {0: "png", 1: "svg"}.get(i % 3)
            msg, html = message(i, v, image)
            d = os.path.join(work, str(i))
            os.makedirs(d)
            orig = os.path.join(d, "orig.html")
            open(orig, "w", encoding="utf-8").write(html.replace(f"cid:bg{i}@t", f"bg.{image}"))
            if image:
                open(os.path.join(d, f"bg.{image}"), "wb").write(SVG if image == "svg" else PNG)
            src = os.path.join(d, "msg.eml")
            open(src, "wb").write(msg)
            out = os.path.join(d, "archive")
            r = subprocess.run([binary, "--cid=extract", "--extract-dir=" + out, src], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
            if r.returncode != 0:
                print(f"FAIL: case {i} ({v!r}): mimeuri exit {r.returncode}: {r.stderr.decode().strip()}")
                return 1
            cases.append({"id": f"{i} {v!r}", "orig": orig, "page": os.path.join(out, "1", "index.html")})
        results = run_pages("body_colours.mjs", {"chromium": chromium, "cases": cases}, mods, work, 180)
        if results is None:
            return 1
        bad = 0
        for r in results:
            o, p = r["orig"], r["page"]
            if (o["background"], o["color"], o["image"]) != (p["background"], p["color"], p["image"]) or \
                    (o["image"] and not (o["loads"] and p["loads"])):
                print(f"FAIL: {r['id']}: original {o}, page {p}")
                bad += 1
        if bad:
            return 1
        print(f"ok: {len(results)} bodies: the page paints the original's background, text colour and image")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
