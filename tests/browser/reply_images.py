#!/usr/bin/env python3
"""Replies whose images come back (issue 50), in a browser: testdata/threads/reply_images.mbox
(a root with a logo, a reply with a chart quoting the logo, a reply to it quoting both and an
image no message has) is extracted with --cid=extract and served over HTTP (python3's
http.server on 127.0.0.1); headless Chromium opens each reply's page (reply_images.mjs).
Checks: the quoted images are shown from the answered messages' folders at their sizes (the
PNGs' own widths, read from their IHDR here: the logo 16, the chart 8), the image no message
has is not, and no request leaves the archive.
Usage: reply_images.py MIMEURI TESTDATA LOG_DIR   (exit 77 as browser_suite.py does)
"""
import base64, functools, http.server, os, re, shutil, struct, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, run_pages  # noqa: E402


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def png_widths(mbox):
    """Each Content-ID's PNG width, from the mbox's own base64 (not from mimeuri's files)."""
    text = open(mbox).read()
    return {m.group(1): struct.unpack(">I", base64.b64decode(m.group(2))[16:20])[0]
            for m in re.finditer(r"Content-ID: <([^>]+)>\nContent-Transfer-Encoding: base64\n\n(\S+)", text)}


def main():
    binary, testdata, logdir = (os.path.abspath(a) for a in sys.argv[1:4])
    chromium, mods = browser_tools(logdir)
    mbox = os.path.join(testdata, "threads", "reply_images.mbox")
    widths = png_widths(mbox)
    work = tempfile.mkdtemp(prefix="mimeuri-replies-")
    try:
        out = os.path.join(work, "archive")
        r = subprocess.run([binary, "--cid=extract", "--extract-dir=" + out, mbox], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if r.returncode != 0:
            print(f"FAIL: mimeuri exit {r.returncode}: {r.stderr.decode().strip()}")
            return 1
        handler = functools.partial(Quiet, directory=out)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            results = run_pages("reply_images.mjs", {"chromium": chromium, "origin": origin,
                                                     "pages": [f"{origin}/2/index.html", f"{origin}/3/index.html"]},
                                mods, work, 120)
        finally:
            server.shutdown()
        if results is None:
            return 1
        want = {  # alt text -> the Content-ID whose image it shows (None: none)
            "2/index.html": {"chart": "chart@reply.example", "logo, quoted": "logo@reply.example"},
            "3/index.html": {"chart, quoted": "chart@reply.example", "logo, quoted twice": "logo@reply.example",
                             "an image no message has": None},
        }
        bad = 0
        for res in results:
            page = res["url"].split("/", 3)[3]
            got = {i["alt"]: i for i in res["images"]}
            if res["outside"]:
                print(f"FAIL: {page}: requests left the archive: {res['outside']}")
                bad += 1
            if set(got) != set(want[page]):
                print(f"FAIL: {page}: images {sorted(got)}, expected {sorted(want[page])}")
                bad += 1
                continue
            for alt, cid in want[page].items():
                i = got[alt]
                shown = i["loads"] and i["width"] > 0
                if (cid is None and shown) or (cid is not None and (not shown or i["width"] != widths[cid])):
                    print(f"FAIL: {page}: {alt!r} ({i['src']}): loads {i['loads']}, width {i['width']}, "
                          f"expected {'not shown' if cid is None else widths[cid]}")
                    bad += 1
        if bad:
            return 1
        print(f"ok: {len(results)} reply pages show the images of the messages they answer, from their folders")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
