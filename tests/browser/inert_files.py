#!/usr/bin/env python3
"""Files written beside the pages never run (issue 48, item 1).

For every extension of /etc/mime.types (what Apache, nginx and Python's http.server serve
by), of Python's own table (.xpdl) and of Chromium's (testdata/extensions/chromium.types), a
page references a part named f.EXT, once as application/octet-stream and once as
application/x-anything, each an XHTML document whose script sets top.__xss and asks the server for /ran. The message is
extracted with --cid=extract; then every file written is opened in headless Chromium
(inert_files.mjs) over HTTP (python3's http.server on 127.0.0.1, which types a file by its
extension from /etc/mime.types) and as a file. Checks: no script ran (no __xss, no dialog,
no request for /ran), and every file's last extension is one the tables map to an image
(not SVG), font, audio, video, CSS, PDF or plain text.
Every file's name is checked; Chromium opens every file of an extension that some table maps
to a document or a script (HTML, XML, XHTML, SVG, XSL, JavaScript: what a browser runs), and of
the others one file per final extension and part type (a server and a browser type a file by
its last extension alone, so the rest are the same page to them): about a fifth of the pages,
for CI's time. MIMEURI_INERT_ALL=1 opens every file (6,236 pages, about 9 minutes at load 13).
Usage: inert_files.py MIMEURI TESTDATA LOG_DIR   (exit 77 as browser_suite.py does)
MIMEURI_INERT_EXTS=xhtm,svg,...: those extensions only.
"""
import functools, http.server, mimetypes, os, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from browser_suite import browser_tools, run_pages  # noqa: E402
from skip import skip  # noqa: E402

PAYLOAD = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><script>top.__xss=1;'
           "fetch('/ran').catch(function(){});alert(1)</script></body></html>")


def read_types(path, by_ext):
    for line in open(path, encoding="utf-8"):
        words = line.split()
        if words and not words[0].startswith("#"):
            for ext in words[1:]:
                by_ext.setdefault(ext.lower(), set()).add(words[0])


def inert_type(t):
    if t in ("text/css", "application/pdf", "text/plain"):
        return True
    if t.startswith("image/"):
        return "svg" not in t
    return t.startswith(("font/", "audio/", "video/"))


def runs_in_a_browser(t):
    return any(w in t for w in ("html", "xml", "svg", "xsl", "javascript", "ecmascript"))


def to_open(names, by_ext, parts_ext):
    """The files Chromium opens: those of an extension some table maps to what a browser runs,
    and one per (final extension, part type) of the others."""
    seen, out = set(), []
    for n in names:
        ext = parts_ext.get(n.split(".", 1)[0])
        last = n.rsplit(".", 1)[-1].lower()
        kind = n.split(".", 1)[0][1:]  # f<number>: even numbers octet-stream, odd x-anything
        key = (last, int(kind) % 2 if kind.isdigit() else kind)
        if os.environ.get("MIMEURI_INERT_ALL") == "1" or ext is None or \
                any(runs_in_a_browser(t) for t in by_ext.get(ext, ())) or key not in seen:
            seen.add(key)
            out.append(n)
    return out


def message(exts):
    html, body, n = "--b\nContent-Type: text/html\n\n<p>", "", 0
    for ext in exts:
        for ctype in ("application/octet-stream", "application/x-anything"):
            html += f'<img src="cid:p{n}@x">'
            body += (f"--b\nContent-Type: {ctype}\nContent-ID: <p{n}@x>\n"
                     f'Content-Disposition: inline; filename="f{n}.{ext}"\n\n{PAYLOAD}\n')
            n += 1
    return ("From: a@x\nSubject: parts\nMessage-ID: <parts@x>\nMIME-Version: 1.0\n"
            f"Content-Type: multipart/related; boundary=b\n\n{html}\n{body}--b--\n"), n


def serve(root, ran):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/ran"):
                ran.append(self.headers.get("Referer") or "?")
            return super().do_GET()

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    mimeuri, testdata, logdir = sys.argv[1:4]
    if not os.path.isfile("/etc/mime.types"):
        skip("no /etc/mime.types (Debian package media-types)")
    chromium, mods = browser_tools(logdir)
    by_ext = {}
    read_types("/etc/mime.types", by_ext)
    read_types(os.path.join(testdata, "extensions", "chromium.types"), by_ext)
    for strict in (True, False):  # http.server's own table (.xpdl: XML) and the files it read
        for ext, t in mimetypes.MimeTypes().types_map[strict].items():
            by_ext.setdefault(ext[1:].lower(), set()).add(t)
    problems = []
    with tempfile.TemporaryDirectory() as work:
        only = os.environ.get("MIMEURI_INERT_EXTS")  # a few, to see the check fail on an old build
        exts = sorted(only.split(",") if only else by_ext)
        text, parts = message(exts)
        parts_ext = {f"f{2 * k + j}": e for k, e in enumerate(exts) for j in (0, 1)}
        mail, out = os.path.join(work, "m.eml"), os.path.join(work, "archive")
        open(mail, "w", encoding="utf-8").write(text)
        r = subprocess.run([mimeuri, "--cid=extract", "--extract-dir=" + out, mail],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print(f"FAIL: mimeuri exit {r.returncode}: {r.stderr[-500:]}")
            return 1
        names = sorted(n for n in os.listdir(os.path.join(out, "1")) if n != "index.html")
        if len(names) != parts:
            problems.append(f"{len(names)} files for {parts} parts")
        for n in names:
            types = by_ext.get(n.rsplit(".", 1)[-1].lower(), set())
            if not types or not all(inert_type(t) for t in types):
                problems.append(f"written as {n}: typed {sorted(types) or 'by nobody'}")
        ran = []
        server = serve(out, ran)
        port = server.server_address[1]
        opened = to_open(names, by_ext, parts_ext)
        urls = [f"http://127.0.0.1:{port}/1/{n}" for n in opened] + ["file://" + os.path.join(out, "1", n) for n in opened]
        res = run_pages("inert_files.mjs", {"chromium": chromium, "urls": urls}, mods, work, 1500)
        server.shutdown()
        if res is None:
            return 1
        for o in res:
            if o["xss"] or o["dialogs"]:
                problems.append(f"{o['url']}: a script ran (__xss={o['xss']}, dialogs {o['dialogs'][:2]})")
        if ran:
            problems.append(f"{len(ran)} requests for /ran, from {ran[:5]}")
        print(f"{len(by_ext)} extensions, {parts} parts, {len(names)} names checked, {len(urls)} pages opened: "
              f"{len(problems)} problems")
    for p in problems[:40]:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
