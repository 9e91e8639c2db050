#!/usr/bin/env python3
"""--remote as a reader and as a tracker see it (issue 52), in headless Chromium, images on.

Every way a message's HTML can make a reader fetch (the hostile suite's remote vectors, and
the bypasses of Roundcube's, DOMPurify's and MailScanner's blockers: an unclosed url() in an
SVG FuncIRI, CSS escapes such as \\000075rl(, SMIL by/values/from/to, feImage, comments in
CSS, an SVG <style> split by a comment, character references and tabs in URLs, image-set(),
@import spelled with escapes, srcdoc, a remote <base>, mutation-XSS readings) is a message;
each page is opened as the HTML part as sent and as mimeuri writes it, every request that is
not file: or data: aborted and counted (remote_pages.mjs):
  - as sent, the vectors make requests (the test can fail), and every host Chromium asks is
    one --remote=check reports (a differential: the browser's request log against the report);
  - after --remote=block: zero requests, every page;
  - after --remote=proxy: every request goes to the camo base;
  - a real camo (Debian's, /usr/share/camo/server.js, on 127.0.0.1) with the key serves an
    image of an origin on 127.0.0.1, byte-identical, to the page and to a client; a digest
    made with another key is refused.
Corpus: the HTML messages of the corpus --remote=check finds remote content in (at most
MIMEURI_REMOTE_CORPUS_MAX, 60), after block with --signed=rewrite (DKIM-signed newsletters
change too): zero requests.
Usage: remote_suite.py MIMEURI LOG_DIR [CORPUS]   (exit 77 as browser_suite.py does)
"""
import email, email.policy, json, os, socket, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, run_pages  # noqa: E402
from skip import skip  # noqa: E402

B = "http://beacon.test"
VECTORS = {
    "pixel": f'<img src="{B}/pixel.gif" width=1 height=1><img src="{B}/p.gif" alt="Sale" width=300 height=50>',
    "img-case": f'<IMG\nSRC = "{B}/case.gif">',
    "img-tab": f'<img src="ht&#x09;tp://beacon.test/tab.gif"><img src="&#104;ttp://beacon.test/ref.gif">',
    "srcset": f'<img srcset="{B}/a.png 1x, {B}/b.png 2x"><picture><source srcset={B}/p.png><img alt=p></picture>',
    "backgrounds": f'<table background="{B}/bg.png"><tr><td background="{B}/td.png">x</td></tr></table><body background="{B}/body.png">',
    "css": (f"<style>@import url({B}/i.css); body{{background:url({B}/b.png)}}"
            f"@font-face{{font-family:f;src:url({B}/f.woff)}} p{{font-family:f}}</style><p>text</p>"
            f'<div style="background:url({B}/inline.png)">x</div>'),
    "css-escape": f'<div style="background:\\000075rl({B}/esc.png)">x</div><div style="background:u\\rl({B}/esc2.png)">y</div>',
    "css-escape-url": '<div style="background:url(\\68ttp://beacon.test/esc3.png)">x</div>',
    "css-comment": f'<div style="background:/**/url({B}/cm.png)/**/">x</div>',
    "css-import-escape": f"<style>@\\69mport '{B}/esc.css';</style><p>x</p>",
    "css-unclosed": f"<p>x</p><style>p{{background:url({B}/unclosed.png",
    "image-set": f"<div style=\"width:9px;height:9px;background-image:image-set('{B}/is.png' 1x)\">x</div>",
    "stylesheet": f'<link rel=stylesheet href="{B}/s.css"><link rel=prefetch href="{B}/pf"><link rel=preload as=image href="{B}/pl.png"><link rel=icon href="{B}/i.ico">',
    "media": f'<video poster="{B}/p.png" src="{B}/v.mp4" autoplay></video><audio src="{B}/a.mp3" autoplay></audio>',
    "input-image": f'<input type=image src="{B}/in.png" alt=go>',
    "svg-image": f'<svg><image href="{B}/s.png" width=9 height=9 /><image xlink:href="{B}/x.png" width=9 height=9 /><use href="{B}/u.svg#x"/></svg>',
    "svg-feimage": f'<svg width=9 height=9><filter id=f><feImage href="{B}/fe.png"/></filter><rect filter="url(#f)" width=9 height=9/></svg>',
    "svg-funciri": f'<svg width=9 height=9><rect width=9 height=9 fill="url({B}/fill.svg#p)" filter="url({B}/filt.svg#f"/></svg>',
    "svg-funciri-style": f'<svg width=9 height=9><rect width=9 height=9 style="fill:url({B}/sf.svg#p" /></svg>',
    "smil": (f'<svg width=9 height=9><image width=9 height=9><set attributeName=href to="{B}/set.png"/></image>'
             f'<image width=9 height=9><animate attributeName=href values="{B}/v1.png;{B}/v2.png" dur=1s/></image>'
             f'<image width=9 height=9><animate attributeName=href from="{B}/from.png" to="{B}/to.png" dur=1s/></image>'
             f'<image width=9 height=9 href="{B}/"><animate attributeName=href by="by.png" dur=1s/></image></svg>'),
    "svg-style-split": f"<svg><style>@import url(ht<!---->tp://beacon.test/split.css);</style></svg><p>x</p>",
    "svg-style-ref": "<svg><style>@import url(&#104;ttp://beacon.test/ref.css);</style></svg><p>x</p>",
    "mxss-svg-style": f'<svg></p><style><a id="</style><img src={B}/mx.png>">',
    "mxss-noscript": f'<noscript><p title="</noscript><img src={B}/ns.png>">',
    "iframe": f'<iframe src="{B}/frame"></iframe><iframe srcdoc="<img src={B}/sd.png>"></iframe>',
    "object": f'<object data="{B}/o"></object><embed src="{B}/e">',
    "refresh": f'<meta http-equiv="Refresh" content="0; url={B}/r">',
    "base": f'<base href="{B}/"><img src="rel.png"><a href="rel.html">x</a>',
    "script": f'<script src="{B}/x.js"></script>',
}


def message(name, html, encoding):
    body = html
    if encoding == "base64":
        import base64
        body = base64.encodebytes(html.encode()).decode()
    elif encoding == "quoted-printable":
        import quopri
        body = quopri.encodestring(html.encode()).decode()
    return (f"From: tracker <t@beacon.test>\nTo: r@example\nSubject: {name}\nMessage-ID: <{name}@beacon.test>\n"
            f"MIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: {encoding}\n\n{body}\n")


def html_parts(raw):
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    return [p.get_content() for p in msg.walk() if p.get_content_type() == "text/html"]


def run(mimeuri, path, args):
    r = subprocess.run([mimeuri, "--format=message", *args, path], capture_output=True)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc):
    for _ in range(100):
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def real_camo(mimeuri, chromium, mods, work, problems):
    """camo on 127.0.0.1 with the key, an origin on 127.0.0.1: the image through camo."""
    server = "/usr/share/camo/server.js"
    if not os.path.exists(server):
        skip("no camo (Debian package camo)")
    key = "k3y-for-the-test"
    keyfile = os.path.join(work, "camo.key")
    open(keyfile, "w").write(key + "\n")
    origin_dir = os.path.join(work, "origin")
    os.makedirs(origin_dir)
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000002000000020806000000"
                        "72b60d240000001649444154789c63f8cfc0f09f8181e13f030303c3ff"
                        "000021fc04fd7c6cba3e0000000049454e44ae426082")
    open(os.path.join(origin_dir, "pic.png"), "wb").write(png)
    oport, cport = free_port(), free_port()
    origin = subprocess.Popen([sys.executable, "-m", "http.server", str(oport), "--bind", "127.0.0.1"], cwd=origin_dir,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    camo = subprocess.Popen(["node", server], env=dict(os.environ, PORT=str(cport), CAMO_KEY=key),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_port(oport, origin) or not wait_port(cport, camo):
            problems.append("camo or the origin did not start")
            return
        base = f"http://127.0.0.1:{cport}"
        src = f"http://127.0.0.1:{oport}/pic.png"
        path = os.path.join(work, "camo.eml")
        open(path, "w").write(message("camo", f'<p>x</p><img src="{src}" alt="pic">', "7bit"))
        rc, out, err = run(mimeuri, path, ["--remote=proxy", "--remote-proxy=" + base, "--remote-key=" + keyfile])
        parts = html_parts(out) if rc == 0 else []
        if len(parts) != 1 or base not in parts[0]:
            problems.append(f"camo: no proxied URL (exit {rc}, {err[-200:]})")
            return
        page = os.path.join(work, "camo.html")
        open(page, "w").write(parts[0])
        res = run_pages("remote_pages.mjs", {"chromium": chromium, "pages": [{"path": page, "allow": base + "/"}]}, mods, work, 300)
        if res is None:
            problems.append("camo: the browser run failed")
            return
        r = res[0]
        if r["requests"] or not r["allowed"] or not r["images"] or r["images"][0]["w"] != 2:
            problems.append(f"camo: the page's image did not come through camo: {r}")
        url = r["allowed"][0] if r["allowed"] else ""
        body = urllib.request.urlopen(url, timeout=10).read() if url else b""
        if body != png:
            problems.append(f"camo: {len(body)} bytes, not the origin's {len(png)}")
        digest, hexurl = url[len(base) + 1:].split("/", 1)
        bad = f"{base}/{'0' * len(digest)}/{hexurl}"
        try:
            urllib.request.urlopen(bad, timeout=10).read()
            problems.append("camo: an invalid HMAC was served")
        except urllib.error.HTTPError as e:
            if e.code != 404:
                problems.append(f"camo: an invalid HMAC gave {e.code}, not 404")
        print(f"camo: served {len(body)} bytes byte-identical through {base}; invalid HMAC refused")
    finally:
        for p in (camo, origin):
            p.terminate()
            p.wait()


def corpus_pages(mimeuri, corpus, work, cap):
    """The corpus's HTML messages, after --remote=block, as pages."""
    idx = os.path.join(corpus, "INDEX.tsv")
    if not corpus or not os.path.exists(idx):
        return [], 0
    rows = [l.rstrip("\n").split("\t") for l in open(idx, encoding="utf-8")]
    head, paths = rows[0], []
    for row in rows[1:]:
        f = dict(zip(head, row))
        if f.get("is_mbox") == "0" and f.get("has_html") == "1":
            paths.append(os.path.join(corpus, f["path"]))
    # Those --remote=check finds remote content in (the others would show nothing), at most cap.
    with_remote = []
    for p in sorted(paths):
        r = subprocess.run([mimeuri, "--check", "--passes=remote", "--remote=check", "--report=/dev/stdout", p],
                           capture_output=True, text=True)
        if '"remote":[{' in r.stdout:
            with_remote.append(p)
    paths = with_remote[:cap]
    pages = []
    for i, p in enumerate(paths):
        rc, out, _ = run(mimeuri, p, ["--remote=block", "--signed=rewrite"])
        if rc != 0:
            continue
        try:
            parts = html_parts(out)
        except Exception:  # noqa: BLE001 - a message Python cannot read is not this test's
            continue
        for k, h in enumerate(parts):
            page = os.path.join(work, f"corpus-{i}-{k}.html")
            open(page, "w", encoding="utf-8", errors="replace").write(h)
            pages.append({"path": page, "allow": None, "source": p})
    return pages, len(paths)


def main():
    mimeuri, logdir = sys.argv[1:3]
    corpus = sys.argv[3] if len(sys.argv) > 3 else ""
    cap = int(os.environ.get("MIMEURI_REMOTE_CORPUS_MAX", "60"))
    chromium, mods = browser_tools(logdir)
    problems = []
    with tempfile.TemporaryDirectory() as work:
        keyfile = os.path.join(work, "key")
        open(keyfile, "w").write("0x24FEEDFACEDEADBEEFCAFE\n")
        camo_base = "http://camo.test"
        pages = []
        for n, (name, html) in enumerate(VECTORS.items()):
            enc = ("7bit", "base64", "quoted-printable")[n % 3]
            path = os.path.join(work, f"{name}.eml")
            open(path, "w").write(message(name, html, enc))
            before = os.path.join(work, f"{name}-sent.html")
            open(before, "w").write(html)
            # What --remote=check reports of it: the hosts, for the differential below.
            r = subprocess.run([mimeuri, "--check", "--remote=check", "--report=/dev/stdout", path], capture_output=True, text=True)
            lines = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
            hosts = {e["host"] for l in lines for e in l.get("remote", [])}
            pages.append({"path": before, "allow": None, "name": name, "mode": "sent", "hosts": sorted(hosts)})
            for mode, args in (("block", ["--remote=block"]),
                               ("proxy", ["--remote=proxy", "--remote-proxy=" + camo_base, "--remote-key=" + keyfile])):
                rc, out, err = run(mimeuri, path, args)
                parts = html_parts(out) if rc == 0 else []
                if len(parts) != 1:
                    problems.append(f"{name} {mode}: exit {rc}, {len(parts)} HTML parts: {err[-300:]}")
                    continue
                page = os.path.join(work, f"{name}-{mode}.html")
                open(page, "w").write(parts[0])
                pages.append({"path": page, "allow": None, "name": name, "mode": mode})
        cpages, ccount = corpus_pages(mimeuri, corpus, work, cap)
        res = run_pages("remote_pages.mjs", {"chromium": chromium, "pages": pages + cpages}, mods, work, 3600)
        if res is None:
            return 1
        sent_requests = 0
        by_path = {p["path"]: p for p in pages + cpages}
        for r in res:
            p = by_path[r["path"]]
            where = p.get("name") or p.get("source")
            mode = p.get("mode", "block")
            if r["error"]:
                problems.append(f"{where} {mode}: {r['error']}")
            if mode == "sent":
                sent_requests += len(r["requests"])
                print(f"{where}: {len(r['requests'])} requests as sent")
                # The differential: every host Chromium asked, --remote=check reported.
                missed = [u for u in r["requests"] if urllib.parse.urlsplit(u).hostname not in p["hosts"]]
                if missed:
                    problems.append(f"{where}: Chromium asked what --remote=check did not report: {missed[:5]}")
            elif mode == "block" and r["requests"]:
                problems.append(f"{where} block: requests left: {r['requests'][:5]}")
            elif mode == "proxy":
                off = [u for u in r["requests"] if not u.startswith(camo_base + "/")]
                if off:
                    problems.append(f"{where} proxy: requests not to camo: {off[:5]}")
        if sent_requests == 0:
            problems.append("the vectors as sent made no request: the test sees nothing")
        print(f"{len(VECTORS)} vectors: {sent_requests} requests as sent; corpus: {ccount} messages, "
              f"{len(cpages)} HTML parts opened after block")
        real_camo(mimeuri, chromium, mods, work, problems)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
