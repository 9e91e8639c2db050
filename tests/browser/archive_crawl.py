#!/usr/bin/env python3
"""A reader's crawl of an extracted, threaded archive.

Writes an mbox of three threads (out of date order in the file; HTML with an image, two HTML
parts in one message, text/plain with format=flowed, a message with only an attachment, a
reply whose parent is missing), extracts it with --cid=extract, and crawls it in headless
Chromium from its index.html (check_pages.mjs, network off). Checks:
  - every message reached from the index, no dead link, nothing outside the archive, every
    local image shown;
  - each page's previous/next links are the neighbours in its thread, in the reading order
    this script works out itself (References then In-Reply-To; a missing parent starts a
    thread; threads newest first, replies nested in date order);
  - the index lists the messages in that order; every HTML part of a message is linked from
    its page; the flowed text is joined.
Screenshots of the index and two pages go to the test log.
Usage: archive_crawl.py MIMEURI LOG_DIR   (exit 77 as browser_suite.py does)
"""
import base64, email.utils, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, crawl_problems, run_pages  # noqa: E402

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def msg(mid, subject, date, body_headers, body, refs=None, irt=None):
    h = [f"From x@example Thu Jan  1 00:00:00 2026", f"From: Person {mid} <{mid}@example>", f"Subject: {subject}",
         f"Date: {date}", f"Message-ID: <{mid}@t.example>", "MIME-Version: 1.0"]
    if refs:
        h.append("References: " + " ".join(f"<{r}@t.example>" for r in refs))
    if irt:
        h.append(f"In-Reply-To: <{irt}@t.example>")
    return "\n".join(h + body_headers) + "\n\n" + body + "\n\n"


def related(mid, subject, date, **kw):
    b = ("--r\nContent-Type: text/html; charset=utf-8\n\n"
         f'<p>{subject}</p><img src="cid:img-{mid}@t" alt=logo>\n'
         f"--r\nContent-Type: image/png\nContent-ID: <img-{mid}@t>\nContent-Transfer-Encoding: base64\n\n"
         f"{base64.encodebytes(PNG).decode()}--r--")
    return msg(mid, subject, date, ['Content-Type: multipart/related; boundary="r"'], b, **kw)


def text(mid, subject, date, body, flowed=False, **kw):
    ct = "text/plain; charset=utf-8" + ("; format=flowed" if flowed else "")
    return msg(mid, subject, date, [f"Content-Type: {ct}"], body, **kw)


def two_html(mid, subject, date, **kw):
    b = ("--m\nContent-Type: text/html; charset=utf-8\n\n<p>first HTML part</p>\n"
         "--m\nContent-Type: text/html; charset=iso-8859-1\nContent-Disposition: inline\n\n<p>second HTML part caf\xe9</p>\n--m--")
    return msg(mid, subject, date, ['Content-Type: multipart/mixed; boundary="m"'], b, **kw)


def attachment_only(mid, subject, date, **kw):
    b = ("--a\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=report.pdf\n"
         "Content-Transfer-Encoding: base64\n\nJVBERi0xLjQK\n--a--")
    return msg(mid, subject, date, ['Content-Type: multipart/mixed; boundary="a"'], b, **kw)


def d(day, hour):
    return f"Mon, {day} Jan 2026 {hour:02d}:00:00 +0100"


# (mbox order is not date order; ids are what the script threads by)
MESSAGES = [
    ("b1", lambda: text("b1", "Second thread", d(5, 9), "start of b\n")),
    ("a2", lambda: text("a2", "Re: First thread", d(3, 10), "a flowed \nline joined\n> quoted \n> also\n", flowed=True,
                        refs=["a1"], irt="a1")),
    ("a1", lambda: related("a1", "First thread", d(2, 8))),
    ("c1", lambda: two_html("c1", "Third thread", d(9, 7))),
    ("a3", lambda: related("a3", "Re: First thread", d(4, 11), refs=["a1"], irt="a1")),
    ("a4", lambda: attachment_only("a4", "Re: Re: First thread", d(3, 12), refs=["a1", "a2"], irt="a2")),
    ("b2", lambda: text("b2", "Re: Second thread", d(6, 9), "reply\n", refs=["b1"], irt="b1")),
    ("x1", lambda: text("x1", "Re: lost parent", d(7, 9), "my parent is not here\n", refs=["gone"], irt="gone")),
]


def expected_order():
    """Thread the messages as the issue says (an independent reading of References)."""
    info = {}
    for mid, make in MESSAGES:
        m = make()
        refs = re.findall(r"<([^>]+)@t\.example>", (re.search(r"^References: (.*)$", m, re.M) or [None, ""])[1])
        irt = re.findall(r"<([^>]+)@t\.example>", (re.search(r"^In-Reply-To: (.*)$", m, re.M) or [None, ""])[1])
        date = email.utils.parsedate_to_datetime(re.search(r"^Date: (.*)$", m, re.M).group(1)).timestamp()
        info[mid] = (list(reversed(refs)) + irt, date)
    parent = {}
    for mid, (cands, _) in info.items():
        parent[mid] = next((c for c in cands if c in info and c != mid), None)
    kids = {m: sorted([k for k in info if parent[k] == m], key=lambda k: info[k][1]) for m in info}
    roots = [m for m in info if parent[m] is None]

    def walk(m):
        yield m
        for k in kids[m]:
            yield from walk(k)

    threads = [list(walk(r)) for r in roots]
    threads.sort(key=lambda t: max(info[m][1] for m in t), reverse=True)
    return threads


def main():
    mimeuri, logdir = sys.argv[1:3]
    chromium, mods = browser_tools(logdir)
    os.makedirs(logdir, exist_ok=True)
    problems = []
    with tempfile.TemporaryDirectory() as work:
        mbox = os.path.join(work, "threads.mbox")
        with open(mbox, "w", encoding="latin-1", newline="\n") as f:
            for _, make in MESSAGES:
                f.write(make())
        out = os.path.join(work, "archive")
        r = subprocess.run([mimeuri, "--cid=extract", "--extract-dir=" + out, mbox], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print(f"FAIL: mimeuri exit {r.returncode}: {r.stderr[-500:]}")
            return 1
        folder_of = {mid: str(i + 1) for i, (mid, _) in enumerate(MESSAGES)}
        mid_of = {v: k for k, v in folder_of.items()}
        res = run_pages("check_pages.mjs", {"chromium": chromium, "pages": [], "archive": {"root": out}}, mods, work, 600)
        if res is None:
            return 1
        crawled = res["archive"]
        pages = {p["url"]: p for p in crawled["pages"]}
        images = crawl_problems(crawled, problems)
        base = "file://" + out
        for mid, n in folder_of.items():
            if f"{base}/{n}/index.html" not in pages:
                problems.append(f"message {mid} (folder {n}): not reached from the index")
        # Thread navigation.
        threads = expected_order()
        want = {}
        for t in threads:
            for i, m in enumerate(t):
                want[m] = (t[i - 1] if i else None, t[i + 1] if i + 1 < len(t) else None)
        for mid, n in folder_of.items():
            url = f"{base}/{n}/index.html"
            got = {"prev": None, "next": None}
            for l in crawled["links"]:
                if l["from"] == url and l.get("rel") in got:
                    got[l["rel"]] = mid_of.get(l["url"].split("/")[-2])
            if (got["prev"], got["next"]) != want[mid]:
                problems.append(f"{mid}: previous/next {got['prev']}/{got['next']}, the thread says {want[mid]}")
            if not any(l["from"] == url and l["url"] == base + "/index.html" for l in crawled["links"]):
                problems.append(f"{mid}: no link back to the index")
        # The index's order: the threads, newest first, replies nested in date order.
        index = open(os.path.join(out, "index.html"), encoding="utf-8").read()
        listed = [mid_of[n] for n in re.findall(r'<a href="(\d+)/index\.html">', index)]
        flat = [m for t in threads for m in t]
        if listed != flat:
            problems.append(f"index order {listed}, expected {flat}")
        nested = index.count('<ul class="mimeuri-thread">')
        if nested != len(threads):
            problems.append(f"index: {nested} thread lists, expected {len(threads)}")
        if "UTC" not in index:
            problems.append("index: dates not marked UTC")
        # Every HTML part reachable: c1's second part has its page, linked from c1's page.
        c1 = f"{base}/{folder_of['c1']}/"
        second = [l for l in crawled["links"] if l["from"] == c1 + "index.html" and l["url"].startswith(c1 + "part-")]
        if not second:
            problems.append("c1: its second HTML part is not linked from its page")
        elif "caf\u00e9" not in open(second[0]["url"][len("file://"):], encoding="utf-8").read():
            problems.append("c1: the second HTML part's page lost its ISO-8859-1 text")
        def page(mid):
            path = os.path.join(out, folder_of[mid], "index.html")
            return open(path, encoding="utf-8").read() if os.path.exists(path) else ""

        a2 = page("a2")
        if "a flowed line joined" not in a2 or "&gt; quoted also" not in a2:
            problems.append("a2: format=flowed lines not joined")
        a4 = page("a4")
        if "report.pdf" not in a4:
            problems.append("a4: the attachment is not listed on its page")
        # Screenshots for the log.
        shots = [(os.path.join(out, "index.html"), os.path.join(logdir, "archive-index.png")),
                 (os.path.join(out, folder_of["a1"], "index.html"), os.path.join(logdir, "archive-page-a1.png")),
                 (os.path.join(out, folder_of["a2"], "index.html"), os.path.join(logdir, "archive-page-a2.png"))]
        run_pages("hostile_pages.mjs", {"chromium": chromium, "pages": [], "shots": shots}, mods, work, 300)
        for _, png in shots:
            if not os.path.exists(png):
                problems.append(f"no screenshot {png}")
        print(f"archive crawl: {len(MESSAGES)} messages in {len(threads)} threads, {len(pages)} pages reached, "
              f"{len(crawled['links'])} links followed, {images} images shown; screenshots: "
              + ", ".join(png for _, png in shots))
    for p in problems:
        print("FAIL: " + p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
