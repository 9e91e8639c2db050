#!/usr/bin/env python3
"""Extracted pages opened as an attacker's mail would want them opened.

Builds an mbox of hostile HTML (the XSS cheat-sheet and OWASP filter-evasion vectors, each
spelled the ways HTML allows: character references with and without ';', NUL, case, tabs and
newlines inside javascript:, leading controls; SVG and MathML script, namespace-confusion
("mutation XSS") readings, srcdoc, refresh, base, frames, forms; and every way a page can load
from the network: pixels, srcset, backgrounds, @import, fonts, prefetch, ping), extracts it
with --cid=extract, and opens every page in headless Chromium (hostile_pages.mjs) with each
request that is not file: or data: aborted and counted. Checks, for every page:
  - no script ran (no global __xss set, no dialog), with the page's CSP and without it (the
    sanitiser alone: a copy of the page with mimeuri's CSP line cut);
  - no request left (with the CSP);
  - the DOM holds no script-like element, no on* attribute, no javascript:/vbscript: URL (as
    the browser parses it), no form, no refresh; the first element of <head> is the CSP;
and of the archive: no file a browser would run (.js, .svg, .xml...), the report's counts.
Usage: hostile_suite.py MIMEURI LOG_DIR   (exit 77 as browser_suite.py does)
"""
import base64, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, run_pages  # noqa: E402

J = "__xss=1"
JS_SPELLINGS = [
    "javascript:", "JaVaScRiPt:", "jav&#x09;ascript:", "jav&#9;ascript:", "jav&#x0A;ascript:", "jav&#10;ascript:",
    "jav\nascript:", "jav\tascript:", "jav\rascript:", " &#1;javascript:", "&#14;javascript:", "\x01javascript:",
    "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;",
    "&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A",
    "&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058",
    "javascript&colon;", "java&Tab;script:", "java&NewLine;script:", "j&#x61;v&#x61;script&#x3a;",
    "vbscript:", "VBScript:", "java\x00script:", "  javascript:", "javascript\t:",
]


def vectors():
    v = {}
    for i, s in enumerate(JS_SPELLINGS):
        v[f"href-{i}"] = f'<a href="{s}{J}">link</a><a href={s.replace(" ", "&#32;")}{J}>unquoted</a>'
        v[f"iframe-src-{i}"] = f'<iframe src="{s}{J}"></iframe>'
        v[f"form-{i}"] = f'<form action="{s}{J}"><button formaction="{s}{J}">go</button></form>'
        v[f"svg-a-{i}"] = f'<svg><a xlink:href="{s}{J}"><text y="20">x</text></a></svg>'
        v[f"area-{i}"] = f'<map name=m><area shape=rect coords=0,0,9,9 href="{s}{J}"></map><img usemap=#m src=data:,>'
    v.update({
        "script": f"<script>{J}</script>", "script-case": f"<ScRiPt>{J}</sCrIpT>",
        "script-src": '<script src="http://beacon.test/x.js"></script>',
        "script-split": f"<scr<script>ipt>{J}</script>", "script-slash": f"<script/x>{J}</script>",
        "script-quotes": f'<IMG """><SCRIPT>{J}</SCRIPT>">',
        "onerror": f"<img src=x onerror={J}>", "onerror-case": f"<img src=x OnErRoR={J}>",
        "onerror-entities": '<img src=x onerror="&#95;&#95;xss=1">',
        "onerror-slash": f"<img/src=x/onerror={J}>", "onerror-nul": f"<img src=x on\x00error={J}>",
        "svg-onload": f"<svg onload={J}></svg>", "svg-script": f"<svg><script>{J}</script></svg>",
        "svg-script-href": '<svg><script href="data:,__xss=1"/></svg>',
        "svg-animate": f'<svg><a><animate attributeName=href values="javascript:{J}"/><text y=20>x</text></a></svg>',
        "svg-set": f'<svg><set attributeName=onmouseover to="{J}"/></svg>',
        "svg-foreign": f"<svg><foreignObject><img src=x onerror={J}></foreignObject></svg>",
        "math-script": f"<math><script>{J}</script></math>", "math-href": f'<math href="javascript:{J}">x</math>',
        "mxss-math": f"<math><mtext><table><mglyph><style><img src=x onerror={J}>",
        "mxss-svg-style": f'<svg></p><style><a id="</style><img src=1 onerror={J}>">',
        "mxss-noscript": f'<noscript><p title="</noscript><img src=x onerror={J}>">',
        "template": f"<template><script>{J}</script><img src=x onerror={J}></template>",
        "plaintext": f"<plaintext><script>{J}</script>",
        "iframe-srcdoc": '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
        "iframe-srcdoc-ref": '<iframe srcdoc="&lt;script&gt;parent.__xss=1&lt;/script&gt;"></iframe>',
        "iframe-remote": '<iframe src="http://beacon.test/frame"></iframe>',
        "iframe-data": '<iframe src="data:text/html,<script>parent.__xss=1</script>"></iframe>',
        "object": '<object data="http://beacon.test/o"></object><object data="javascript:__xss=1"></object>',
        "embed": '<embed src="http://beacon.test/e"><embed src="data:text/html,<script>__xss=1</script>">',
        "applet": '<applet code=x codebase="http://beacon.test/"></applet>',
        "frameset": f"<frameset onload={J}><frame src=http://beacon.test/f></frameset>",
        "refresh-js": f'<meta http-equiv="refresh" content="0;url=javascript:{J}">',
        "refresh-remote": '<meta http-equiv="Refresh" content="0; url=http://beacon.test/r">',
        "base": '<base href="http://beacon.test/"><img src="rel.png"><a href="rel.html">x</a>',
        "form-remote": '<form action="http://beacon.test/f" method=post><input name=q value=1><button>go</button></form>',
        "isindex": f'<isindex action="javascript:{J}" type=image>',
        "handlers": (f"<input autofocus onfocus={J}><details open ontoggle={J}><summary>s</summary></details>"
                     f"<marquee onstart={J}>m</marquee><video><source onerror={J}></video><style onload={J}></style>"
                     f"<x onclick={J}>x</x><div onmouseover={J}>hover</div><body onload={J}>"
                     f"<svg><animate onbegin={J} attributeName=x dur=1s /></svg>"),
        "sender-csp": ("<html><head><meta http-equiv=Content-Security-Policy content=\"script-src 'unsafe-inline'\">"
                       f"</head><body><script>{J}</script></body></html>"),
        "link-import": '<link rel=import href="http://beacon.test/i.html"><link rel=preload as=script href="http://beacon.test/p.js">',
        # Requests: none may leave when the page opens.
        "pixel": '<img src="http://beacon.test/pixel.gif" width=1 height=1><img src="//beacon.test/p2.gif">',
        "srcset": '<img srcset="http://beacon.test/a.png 1x, http://beacon.test/b.png 2x"><picture><source srcset=http://beacon.test/p.png><img alt=p></picture>',
        "backgrounds": ('<table background="http://beacon.test/bg.png"><tr><td background="http://beacon.test/td.png">x</td></tr></table>'
                        '<body background="http://beacon.test/body.png">'),
        "css": ('<style>@import url(http://beacon.test/i.css); body{background:url(http://beacon.test/b.png)}'
                "@font-face{font-family:f;src:url(http://beacon.test/f.woff)} p{font-family:f}</style><p>text</p>"
                '<div style="background:url(http://beacon.test/inline.png)">x</div>'),
        "stylesheet": '<link rel=stylesheet href="http://beacon.test/s.css"><link rel=prefetch href="http://beacon.test/pf"><link rel=dns-prefetch href="//beacon.test">',
        "media": '<video poster="http://beacon.test/p.png" src="http://beacon.test/v.mp4" autoplay></video><audio src="http://beacon.test/a.mp3" autoplay></audio>',
        "ping": '<a ping="http://beacon.test/ping" href="#x">x</a>',
        "svg-image": '<svg><image href="http://beacon.test/s.png" width=9 height=9 /><use href="http://beacon.test/u.svg#x"/></svg>',
    })
    return v


def message(n, name, html):
    return (f"From mimeuri@example Thu Jan  1 00:00:00 2026\nFrom: attacker <a@evil.example>\nTo: list@example\n"
            f"Subject: vector {name}\nDate: Thu, 1 Jan 2026 00:{n // 60:02d}:{n % 60:02d} +0000\n"
            f"Message-ID: <v{n}@evil.example>\nMIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n"
            f"Content-Transfer-Encoding: base64\n\n{base64.encodebytes(html.encode('utf-8', 'surrogateescape')).decode()}\n")


def related_message(n):
    """A page whose parts are themselves active: a script part, an HTML part (linked and
    framed), an SVG image with a script."""
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{J}"><script>{J}</script><rect width="9" height="9"/></svg>'
    inner = f"<html><body><script>{J}</script><img src=x onerror={J}><p>attached page</p></body></html>"
    b64 = lambda s: base64.encodebytes(s.encode()).decode()
    return (f"From mimeuri@example Thu Jan  1 00:00:00 2026\nFrom: attacker <a@evil.example>\nSubject: active parts\n"
            f"Date: Thu, 1 Jan 2026 01:00:00 +0000\nMessage-ID: <parts{n}@evil.example>\nMIME-Version: 1.0\n"
            'Content-Type: multipart/related; boundary="b"\n\n--b\nContent-Type: text/html; charset=utf-8\n\n'
            '<p><script src="cid:js@x"></script><a href="cid:page@x">attached page</a>'
            '<iframe src="cid:page@x"></iframe><img src="cid:svg@x"><object data="cid:svg@x"></object>'
            '<embed src="cid:svg@x"></p>\n'
            f"--b\nContent-Type: text/javascript\nContent-ID: <js@x>\nContent-Disposition: inline; filename=run.js\n\n{J}\n"
            f"--b\nContent-Type: text/html; charset=utf-8\nContent-ID: <page@x>\nContent-Transfer-Encoding: base64\n\n{b64(inner)}"
            f"--b\nContent-Type: image/svg+xml\nContent-ID: <svg@x>\nContent-Transfer-Encoding: base64\n\n{b64(svg)}"
            "--b--\n")


RUNNABLE = re.compile(r"\.(js|mjs|cjs|svg|svgz|xml|xsl|xslt|xhtml|xht|shtml|mht|mhtml|hta)$", re.I)


def main():
    mimeuri, logdir = sys.argv[1:3]
    chromium, mods = browser_tools(logdir)
    os.makedirs(logdir, exist_ok=True)
    problems = []
    with tempfile.TemporaryDirectory() as work:
        vs = vectors()
        mbox = os.path.join(work, "hostile.mbox")
        with open(mbox, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
            for n, (name, html) in enumerate(vs.items()):
                f.write(message(n, name, html))
            f.write(related_message(len(vs)))
        out, report = os.path.join(work, "archive"), os.path.join(work, "report.jsonl")
        r = subprocess.run([mimeuri, "--cid=extract", "--extract-dir=" + out, "--report=" + report, mbox],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print(f"FAIL: mimeuri exit {r.returncode}: {r.stderr[-500:]}")
            return 1
        pages, files = [], []
        for root, _, names in os.walk(out):
            for name in names:
                path = os.path.join(root, name)
                files.append(os.path.relpath(path, out))
                if name.endswith(".html"):
                    pages.append(path)
        pages.sort()
        runnable = [f for f in files if RUNNABLE.search(f)]
        if runnable:
            problems.append(f"files a browser would run or render as a document: {runnable}")
        folders = [n for n in os.listdir(out) if n.isdigit()]
        if len(folders) != len(vs) + 1:
            problems.append(f"{len(folders)} message folders for {len(vs) + 1} messages")
        # The sanitiser alone: the same pages with mimeuri's CSP line cut.
        bare = []
        for p in pages:
            text = open(p, encoding="utf-8").read()
            cut = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", text, count=1)
            if cut == text:
                problems.append(f"{p}: no CSP line to cut")
            q = p[:-5] + "-nocsp.html"
            open(q, "w", encoding="utf-8").write(cut)
            bare.append(q)
        res = run_pages("hostile_pages.mjs", {"chromium": chromium, "pages": pages + bare}, mods, work, 1500)
        if res is None:
            return 1
        ran = ran_bare = requests = requests_bare = refused = 0
        for o in res:
            is_bare = o["path"].endswith("-nocsp.html")
            where = os.path.relpath(o["path"], out)
            if o["error"]:
                problems.append(f"{where}: {o['error']}")
                continue
            d = o["dom"]
            scripts_ran = bool(d["xss"]) or bool(o["dialogs"])
            if is_bare:
                ran_bare += scripts_ran
                requests_bare += len(o["requests"])
            else:
                ran += scripts_ran
                requests += len(o["requests"])
                refused += o["refused"]
                if o["requests"]:
                    problems.append(f"{where}: requests left: {o['requests'][:5]}")
                is_top = os.path.dirname(o["path"]) == out
                if not d["cspFirst"] and not is_top:
                    problems.append(f"{where}: the first element of <head> is not mimeuri's CSP")
            if scripts_ran:
                problems.append(f"{where}: a script ran (__xss={d['xss']}, dialogs {o['dialogs'][:3]})")
            for k in ("active", "handlers", "scriptUrls"):
                if d[k]:
                    problems.append(f"{where}: {k}: {d[k][:5]}")
            if d["forms"]:
                problems.append(f"{where}: {d['forms']} forms")
        # What the sanitiser took out, as each page's header says it.
        removed = {}
        for p in pages:
            m = re.search(r'<p class="mimeuri-removed">Removed from this page: ([^<]*)</p>', open(p, encoding="utf-8").read())
            for kv in (m.group(1).split() if m else []):
                k, _, n = kv.partition("=")
                removed[k] = removed.get(k, 0) + int(n)
        print(f"hostile pages: {len(vs)} vectors in {len(vs) + 1} messages, {len(pages)} pages "
              f"({len(JS_SPELLINGS)} spellings of javascript:); with mimeuri's CSP: {ran} pages ran a script, "
              f"{requests} requests left, {refused} console lines of the CSP refusing something; "
              f"the sanitiser alone (CSP cut): {ran_bare} pages ran a script, {requests_bare} requests "
              f"(CSS url()s are the CSP's to block)")
        print(f"removed from the pages: {removed}; {len(files)} files written, none a browser would run: {not runnable}")
    for p in problems:
        print("FAIL: " + p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
