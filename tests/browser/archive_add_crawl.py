#!/usr/bin/env python3
"""A reader's crawl of an archive `mimeuri archive` built, then added to (issue 50).

The messages of archive_crawl.py (three threads, out of date order) and hostile ones (a
Subject and a header field name with script, a body with script, handlers and a remote
image) go in in two runs: half, then the rest (each half of a thread in another run). The
archive is then crawled in headless Chromium from its index.html (check_pages.mjs, network
off), and every HTML file it holds is opened with JavaScript on (hostile_pages.mjs). Checks:
  - every message's page reached from the index, every link resolves inside the archive,
    every local image shown;
  - each page's previous/next in thread are its thread's neighbours in the reading order
    archive_crawl.py works out itself, and previous/next by date the neighbours by date;
  - no script runs (no dialog, __xss unset, nothing active in the DOM, no handler), no
    request leaves, each page's first head element is its Content-Security-Policy.
Usage: archive_add_crawl.py MIMEURI LOG_DIR   (exit 77 as browser_suite.py does)
"""
import email.utils, glob, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, crawl_problems, run_pages  # noqa: E402
import archive_crawl as ac  # noqa: E402

XSS = "<script>window.__xss=1;alert(1)</script><img src=x onerror=\"window.__xss=2\">"


def hostile():
    h1 = ac.msg("h1", "Subject " + XSS, ac.d(8, 9), ["Content-Type: text/html; charset=utf-8"],
                "<p onclick=\"window.__xss=3\">hi</p><script>window.__xss=4</script>"
                "<img src=\"https://tracker.example/p.gif\"><a href=\"javascript:window.__xss=5\">x</a>")
    # A header field whose name holds markup (a header is shown as text, its name never).
    h2 = ac.msg("h2", "Re: Subject", ac.d(8, 10), ["<script>window.__xss=6</script>: x",
                "Content-Type: text/plain; charset=utf-8"], "plain " + XSS + "\n", refs=["h1"], irt="h1")
    # A thread begun in December and last written to in January: December has messages and
    # no thread of its own last written to there (its page of threads is still linked).
    o1 = ac.msg("o1", "Old thread", "Mon, 15 Dec 2025 09:00:00 +0100", ["Content-Type: text/plain"], "old\n")
    o2 = ac.msg("o2", "Re: Old thread", ac.d(10, 9), ["Content-Type: text/plain"], "new\n", refs=["o1"], irt="o1")
    return [("h1", lambda: h1), ("h2", lambda: h2), ("o1", lambda: o1), ("o2", lambda: o2)]


def write_mbox(path, messages):
    with open(path, "w", encoding="latin-1", newline="\n") as f:
        for _, make in messages:
            f.write(make())


def main():
    mimeuri, logdir = sys.argv[1:3]
    chromium, mods = browser_tools(logdir)
    os.makedirs(logdir, exist_ok=True)
    problems = []
    messages = ac.MESSAGES + hostile()
    first, rest = messages[0::2], messages[1::2]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "archive")
        for n, part in enumerate((first, rest)):
            mbox = os.path.join(work, f"part{n}.mbox")
            write_mbox(mbox, part)
            r = subprocess.run([mimeuri, "archive", "--quiet", out, mbox], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL: mimeuri archive exit {r.returncode}: {r.stderr[-500:]}")
                return 1
        res = run_pages("check_pages.mjs", {"chromium": chromium, "pages": [], "archive": {"root": out}}, mods, work, 600)
        if res is None:
            return 1
        crawled = res["archive"]
        base = "file://" + out
        pages = {p["url"] for p in crawled["pages"]}
        images = crawl_problems(crawled, problems)
        addr = {mid: f"{mid}@t.example" for mid, _ in messages}
        mid_of = {v: k for k, v in addr.items()}
        for mid, a in addr.items():
            if f"{base}/{a}/index.html" not in pages:
                problems.append(f"{mid}: its page {a}/index.html not reached from the index")
        # Thread neighbours (archive_crawl's own reading of the threads) and date neighbours.
        ac.MESSAGES = messages
        want = {}
        for t in ac.expected_order():
            for i, m in enumerate(t):
                want[m] = (t[i - 1] if i else None, t[i + 1] if i + 1 < len(t) else None)
        dates = {mid: email.utils.parsedate_to_datetime(re.search(r"^Date: (.*)$", make(), re.M).group(1)).timestamp()
                 for mid, make in messages}
        by_date = sorted(dates, key=lambda m: (dates[m], addr[m]))
        for mid, a in addr.items():
            url = f"{base}/{a}/index.html"
            got = {"prev": None, "next": None, "previous by date": None, "next by date": None}
            for l in crawled["links"]:
                if l["from"] != url or not l["nav"]:
                    continue
                target = mid_of.get(l["url"].split("/")[-2])
                if l.get("rel") in ("prev", "next"):
                    got[l["rel"]] = target
            page = open(os.path.join(out, a, "index.html"), encoding="utf-8").read()
            for label in ("previous by date", "next by date"):
                m = re.search(r'<a href="\.\./([^"/]+)/index\.html">' + label + "</a>", page)
                got[label] = mid_of.get(m.group(1)) if m else None
            if (got["prev"], got["next"]) != want[mid]:
                problems.append(f"{mid}: previous/next in thread {got['prev']}/{got['next']}, the thread says {want[mid]}")
            k = by_date.index(mid)
            want_d = (by_date[k - 1] if k else None, by_date[k + 1] if k + 1 < len(by_date) else None)
            if (got["previous by date"], got["next by date"]) != want_d:
                problems.append(f"{mid}: by date {got['previous by date']}/{got['next by date']}, expected {want_d}")
            if f'href="../threads/' not in page:
                problems.append(f"{mid}: no link to its thread's page")
        # Every page the archive holds, opened with JavaScript on.
        every = sorted(p for p in glob.glob(os.path.join(out, "**", "*.html"), recursive=True) if "/.mimeuri/" not in p)
        seen = run_pages("hostile_pages.mjs", {"chromium": chromium, "pages": every, "shots": [
            (os.path.join(out, "index.html"), os.path.join(logdir, "archive-add-index.png")),
            (os.path.join(out, addr["h1"], "index.html"), os.path.join(logdir, "archive-add-h1.png"))]}, mods, work, 900)
        if seen is None:
            return 1
        for r in seen:
            dom = r.get("dom") or {}
            bad = [k for k in ("active", "handlers", "scriptUrls") if dom.get(k)]
            if r["error"] or r["requests"] or r["dialogs"] or dom.get("xss") is not None or bad or not dom.get("cspFirst"):
                problems.append(f"{r['path']}: error={r['error']} requests={r['requests']} dialogs={r['dialogs']} "
                                f"xss={dom.get('xss')} {bad} cspFirst={dom.get('cspFirst')}")
        print(f"archive add crawl: {len(messages)} messages in two runs, {len(pages)} pages reached, "
              f"{len(crawled['links'])} links followed, {images} images shown, {len(seen)} pages opened with script on")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
