#!/usr/bin/env python3
"""Roundcube's HTML washer and mimeuri --remote=block side by side (issue 52), on the same
messages: the HTML messages of the corpus --remote=check finds remote content in, and the 29
vectors of tests/browser/remote_suite.py. Each message's HTML is opened three ways in headless
Chromium, images on, every network request aborted and counted (tests/browser/remote_pages.mjs):
as sent, after mimeuri --remote=block (--signed=rewrite: the signed newsletters change too),
and after Roundcube's rcube_washtml with remote blocked (bench/roundcube_wash.php, as its
message view runs it). For each: requests left; text kept (the words of the page's
innerText, as a multiset, against the page as sent); images that keep a box (an <img> with a
rendered width and height above 0; the washer's own blocked.gif counts); the page's height
against the page as sent (a page as sent that navigated away, a meta refresh, is left out of
text and height); time: CPU seconds (user + system: the machine is shared) of mimeuri, one
process a message, and of the one PHP process that washes them all, and the wall time
Roundcube's wash() calls took inside it.
Usage: remote_peers.py MIMEURI OUT_DIR [CORPUS]"""
import collections, email, email.policy, json, os, re, resource, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
from browser_suite import browser_tools, run_pages  # noqa: E402
from remote_suite import VECTORS, message  # noqa: E402


def html_parts(raw):
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    out = []
    for p in msg.walk():
        if p.get_content_type() == "text/html":
            try:
                out.append(p.get_content())
            except Exception:  # noqa: BLE001 - a part Python cannot decode is left out of both
                out.append(None)
    return out


def corpus_messages(mimeuri, corpus):
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(corpus, "INDEX.tsv"), encoding="utf-8")]
    head, out = rows[0], []
    for row in rows[1:]:
        f = dict(zip(head, row))
        if f.get("is_mbox") == "0" and f.get("has_html") == "1":
            p = os.path.join(corpus, f["path"])
            r = subprocess.run([mimeuri, "--check", "--passes=remote", "--remote=check", "--report=/dev/stdout", p],
                               capture_output=True, text=True)
            if '"remote":[{' in r.stdout:
                out.append(p)
    return sorted(out)


def words(text):
    return collections.Counter(re.findall(r"\w+", text or ""))


def summarise(pages, by):
    """Per kind (vector, corpus, all) and tool: requests, text, boxes, height."""
    table = {}
    for kind in ("vector", "corpus", "all"):
        rows = [(k, b) for k, b in pages if kind in ("all", k)]
        t = table[kind] = {}
        for tool in ("sent", "mimeuri", "roundcube"):
            req = pages_req = errors = 0
            kept = total_words = 0
            boxes = boxes_sent = 0
            height = []
            for _, b in rows:
                s, x = by[f"{b}.sent.html"], by[f"{b}.{tool}.html"]
                if x["error"]:
                    errors += 1
                req += len(x["requests"])
                pages_req += bool(x["requests"])
                if not s.get("href", "file:").startswith("file:"):
                    continue
                ws, wx = words(s.get("text")), words(x.get("text"))
                total_words += sum(ws.values())
                kept += sum((ws & wx).values())
                boxes += x.get("boxes", 0)
                boxes_sent += s.get("boxes", 0)
                if s.get("height"):
                    height.append(min(x.get("height", 0) / s["height"], 2.0))
            t[tool] = {"pages": len(rows), "requests": req, "pages_with_requests": pages_req, "errors": errors,
                       "text_kept": kept / total_words if total_words else 1.0, "boxes": boxes, "boxes_sent": boxes_sent,
                       "height": sum(height) / len(height) if height else 1.0}
    return table


def main():
    mimeuri, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    corpus = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "..", "shared", "corpus")
    os.makedirs(out, exist_ok=True)
    # puppeteer-core where the browser suites keep it (BUILD/browser-npm).
    chromium, mods = browser_tools(os.path.join(os.path.dirname(mimeuri), "meson-logs"))
    msgs = []
    for name, html in VECTORS.items():
        p = os.path.join(out, f"vector-{name}.eml")
        open(p, "w").write(message(name, html, "7bit"))
        msgs.append(("vector", p))
    msgs += [("corpus", p) for p in corpus_messages(mimeuri, corpus)]
    pages, manifest, mimeuri_secs = [], [], 0.0
    cpu = lambda: (lambda u: u.ru_utime + u.ru_stime)(resource.getrusage(resource.RUSAGE_CHILDREN))  # noqa: E731
    cpu0 = cpu()
    for k, (kind, path) in enumerate(msgs):
        raw = open(path, "rb").read()
        r = subprocess.run([mimeuri, "--format=message", "--remote=block", "--signed=rewrite", path], capture_output=True)
        sent, ours = html_parts(raw), html_parts(r.stdout) if r.returncode == 0 else []
        for i, h in enumerate(sent):
            if h is None or i >= len(ours) or ours[i] is None:
                continue
            base = os.path.join(out, f"{k}-{i}")
            # With a byte-order mark: read as UTF-8 (Python decoded the part), as Roundcube's
            # page says with its <meta charset>, without a byte of markup added.
            open(base + ".sent.html", "w", encoding="utf-8-sig", errors="replace").write(h)
            open(base + ".mimeuri.html", "w", encoding="utf-8-sig", errors="replace").write(ours[i])
            manifest.append(f"{base}.sent.html\t{base}.roundcube.html")
            pages.append((kind, base))
    mimeuri_secs = cpu() - cpu0
    open(os.path.join(out, "rc-manifest"), "w").write("\n".join(manifest) + "\n")
    t = cpu()
    r = subprocess.run(["php", os.path.join(ROOT, "bench", "roundcube_wash.php"), os.path.join(out, "rc-manifest")],
                       capture_output=True, text=True, check=True)
    rc_process = cpu() - t
    rc_wash, rc_flagged = r.stdout.split()
    todo = [{"path": f"{b}.{tool}.html", "allow": None} for _, b in pages for tool in ("sent", "mimeuri", "roundcube")]
    res = run_pages("remote_pages.mjs", {"chromium": chromium, "pages": todo, "layout": True}, mods, out, 7200)
    if res is None:
        return 1
    by = {r["path"]: r for r in res}
    table = summarise(pages, by)
    table["time"] = {"messages": len(msgs), "mimeuri_cpu": mimeuri_secs, "roundcube_wash_wall": float(rc_wash),
                     "roundcube_cpu": rc_process, "roundcube_flagged": int(rc_flagged)}
    # Pages Roundcube leaves requests in: which hosts, for the README.
    left = collections.Counter()
    for _, b in pages:
        for u in by[f"{b}.roundcube.html"]["requests"]:
            left[u.split("/")[2] if "//" in u else u[:40]] += 1
    table["roundcube_left"] = left.most_common(10)
    table["roundcube_left_pages"] = [os.path.basename(b) for _, b in pages if by[f"{b}.roundcube.html"]["requests"]][:20]
    json.dump(table, open(os.path.join(out, "peers.json"), "w"), indent=1)
    print(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
