#!/usr/bin/env python3
"""What the reader sees (issue 34): mimeuri's pages opened in a real browser.

For the corpus's HTML messages with cid: or Content-Location references (INDEX.tsv), makes
the --cid=inline page (the HTML part of the output, decoded) and the --cid=extract page
(DIR/N/index.html and its files) of each HTML part that has something to extract, opens each
in headless Chromium as a file with the network off (check_pages.mjs: every request that is
not file: or data: is aborted), and checks:
  - every reference the report says was inlined or extracted loads: each <img> and
    stylesheet <link> holding one of mimeuri's URLs (a data: URL, or a file beside the
    extract page) is shown (complete && naturalWidth > 0; a parsed sheet), no fewer of them
    than the report claims, and each image a CSS url() or background attribute names loads;
  - the extract page shows every image and stylesheet the inline page shows.
On a failure it names the message, the page and the reference, and saves screenshots of up
to three failing pages in the test log folder.

Usage: browser_suite.py MIMEURI CORPUS_DIR LOG_DIR
Exit 77 (skipped, with the reason printed) when Chromium, node or npm is missing, or
puppeteer-core cannot be installed, unless MIMEURI_STRICT_TESTS=1 (then 1).
MIMEURI_BROWSER_MAX: how many messages (default 40; "all" for all).
"""
import email, email.policy, json, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from report_truth import part_at  # noqa: E402  (the tests' own IMAP-section reader)
from skip import skip  # noqa: E402  (tests/skip.py)

PUPPETEER = "puppeteer-core@24.10.0"  # engines: node >= 18 (Debian 12's nodejs is 18)
CLAIMED = {"inlined", "extracted"}




def node_modules(logdir):
    """puppeteer-core in a folder of its own (no browser download: the system's Chromium)."""
    prefix = os.environ.get("MIMEURI_BROWSER_NPM_DIR") or os.path.join(os.path.dirname(logdir), "browser-npm")
    mods = os.path.join(prefix, "node_modules")
    if not os.path.isdir(os.path.join(mods, "puppeteer-core")):
        os.makedirs(prefix, exist_ok=True)
        env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1")
        r = subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", PUPPETEER],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            skip(f"npm install {PUPPETEER} failed: {r.stderr.strip()[-300:]}")
    return mods


def browser_tools(logdir):
    """The system's Chromium and puppeteer-core's node_modules; a skip (tests/skip.py) when
    either cannot be had."""
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        skip("no chromium (Debian package chromium)")
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            skip(f"no {tool} (Debian package npm)")
    return chromium, node_modules(logdir)


def run_pages(script, manifest_data, mods, work, timeout):
    """Runs a page checker of this folder (check_pages.mjs, hostile_pages.mjs) over a
    manifest; returns its results, or None after saying why it failed. A Chromium that does
    not start is a skip."""
    manifest, results = os.path.join(work, "manifest.json"), os.path.join(work, "results.json")
    json.dump(manifest_data, open(manifest, "w"))
    env = dict(os.environ, MIMEURI_BROWSER_NODE_MODULES=mods)
    r = subprocess.run(["node", os.path.join(HERE, script), manifest, results], env=env,
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        if "Failed to launch" in r.stderr or "executablePath" in r.stderr:
            skip(f"Chromium did not start: {r.stderr.strip()[-300:]}")
        print(f"FAIL: {script} failed")
        return None
    return json.load(open(results))


def selected(corpus, cap):
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(corpus, "INDEX.tsv"), encoding="utf-8")]
    head, out = rows[0], []
    for row in rows[1:]:
        f = dict(zip(head, row))
        if f.get("is_mbox") == "0" and f.get("has_html") == "1" and "1" in (f.get("has_cid_ref"), f.get("has_content_location")):
            out.append(f["path"])
    out.sort()
    return out if cap is None else out[:cap]


def run(mimeuri, path, args, d):
    rep, out = os.path.join(d, "report"), os.path.join(d, "out.eml")
    with open(out, "wb") as o:
        rc = subprocess.run([mimeuri, "--format=message", "--report=" + rep, *args, path], stdout=o,
                            stderr=subprocess.DEVNULL).returncode
    lines = open(rep).read().splitlines() if os.path.exists(rep) else []
    return rc, (json.loads(lines[0]) if len(lines) == 1 else None), out


def locations(path):
    """The Content-Location of every part of the message at path, unfolded (RFC 2557 4.4.2:
    white space in a folded URL is not part of it)."""
    text = open(path, "rb").read().decode("latin-1")
    return {re.sub(r"\s+", "", m.group(1)) for m in re.finditer(r"(?im)^Content-Location:[ \t]*(.*(?:\r?\n[ \t].*)*)", text)}


def names_a_part(url, locs):
    """Whether a stylesheet's image URL (as check_pages.mjs gives it: at most 100 characters)
    names a part of the message: by its Content-Location, or, a file: URL (a relative one left
    as it was), by its file name at the end of one."""
    base = url.split("#")[0]
    if base.startswith("file:"):
        name = base.split("?")[0].rsplit("/", 1)[-1]
        return any(l.split("#")[0].split("?")[0].endswith("/" + name) for l in locs)
    return any(l.startswith(base) for l in locs)


def claims(report, part, action):
    return [r for r in report["refs"] if r["part"] == part and r["action"] == action]


THREAD = os.path.join(os.path.dirname(os.path.dirname(HERE)), "testdata", "threads", "thread.mbox")


def crawl_problems(crawled, problems):
    """A page that did not open, a link leading outside the archive or to no file or to a page
    that does not load, an image not shown: each added to problems. Returns the images shown."""
    pages = {p["url"]: p for p in crawled["pages"]}
    for p in crawled["pages"]:
        if p["error"]:
            problems.append(f"archive page {p['url']}: {p['error']}")
    images = 0
    for link in crawled["links"]:
        where = f"archive page {link['from']}: {link['tag']} {link['raw']}"
        if not link["inside"]:
            problems.append(f"{where}: leads outside the archive ({link['url']})")
        elif not link["exists"]:
            problems.append(f"{where}: leads to no file ({link['url']})")
        elif link["url"].endswith(".html") and pages.get(link["url"], {}).get("error"):
            problems.append(f"{where}: the page does not load")
        elif link.get("shown") is False:
            problems.append(f"{where}: the image does not show")
        images += link["tag"] == "img" and bool(link.get("shown"))
    return images


def check_archive(root, crawled, report):
    """The extracted thread (tests/test_extract_archive.cc describes it), crawled from its
    index.html: every link, image and page reached exists inside the folder and loads; each
    message page shows the mid: URLs the report left ("action": "none") and no other, and as
    many links to files of the archive as the report says were extracted; the top page holds
    no element a header could have put there."""
    problems = []
    if not crawled:
        return [f"{root}: the archive was not crawled"]
    pages = {p["url"]: p for p in crawled["pages"]}
    crawl_problems(crawled, problems)
    top = "file://" + os.path.join(root, "index.html")
    folders = sorted(int(n) for n in os.listdir(root) if n.isdigit()) if os.path.isdir(root) else []
    if top in pages and pages[top]["elements"]:
        problems.append(f"{top}: {pages[top]['elements']} script, iframe, img, object or embed elements")
    from_top = [l for l in crawled["links"] if l["from"] == top and not l.get("nav")]
    if len(from_top) != len(folders):
        problems.append(f"{top}: {len(from_top)} links for {len(folders)} pages")
    mids_followed = 0
    for n in folders:
        url = "file://" + os.path.join(root, str(n), "index.html")
        if url not in pages:
            problems.append(f"{url}: not reached from the archive's index.html")
            continue
        refs = [r for m in report if m["index"] == n for r in m["refs"]]
        left = sorted(r["url"] for r in refs if r["kind"] == "mid" and r["action"] == "none")
        if sorted(pages[url]["mids"]) != left:
            problems.append(f"{url}: mid: URLs left {sorted(pages[url]['mids'])}, the report says {left}")
        extracted = [r for r in refs if r["action"] == "extracted"]
        links = [l for l in crawled["links"] if l["from"] == url and not l.get("nav")]
        if len(links) != len(extracted):
            problems.append(f"{url}: {len(links)} links to files, the report says {len(extracted)} extracted")
        mids_followed += sum(1 for r in extracted if r["kind"] == "mid")
    print(f"archive: {len(folders)} message pages, {len(crawled['links'])} links followed "
          f"({mids_followed} rewritten mid: links), "
          f"{sum(len(p['mids']) for p in crawled['pages'])} mid: links left")
    return problems


def main():
    mimeuri, corpus, logdir = sys.argv[1:4]
    if not os.path.exists(os.path.join(corpus, "INDEX.tsv")):
        skip(f"no corpus at {corpus}")
    chromium, mods = browser_tools(logdir)
    cap_env = os.environ.get("MIMEURI_BROWSER_MAX", "40")
    files = selected(corpus, None if cap_env == "all" else int(cap_env))
    os.makedirs(logdir, exist_ok=True)
    problems, pages, plan = [], [], []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        for i, rel in enumerate(files):
            path = os.path.join(corpus, rel)
            d = os.path.join(work, str(i))
            di, dx = os.path.join(d, "inline"), os.path.join(d, "extract")
            os.makedirs(di)
            os.makedirs(dx)
            rc_i, rep_i, out_i = run(mimeuri, path, ["--cid=inline"], di)
            rc_x, rep_x, _ = run(mimeuri, path, ["--cid=extract", "--extract-dir=" + os.path.join(dx, "x")], dx)
            if rc_i != 0 or rc_x != 0 or rep_i is None or rep_x is None:
                problems.append(f"{rel}: mimeuri exit {rc_i}/{rc_x} or no report")
                continue
            # References inside stylesheet parts ("attr":"css") are not pages: their sheet is
            # loaded by the HTML page that links it.
            parts = []
            for r in rep_x["refs"]:
                if r["action"] == "extracted" and r["attr"] != "css" and r["part"] not in parts:
                    parts.append(r["part"])
            if not parts:
                continue
            folder = os.path.join(dx, "x", "1")
            extracted = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            msg_out = email.message_from_bytes(open(out_i, "rb").read(), policy=email.policy.compat32)
            for part in parts:
                # The message's page is index.html, made of its first HTML part; another HTML
                # part with something extracted is part-SECTION.html (src/archive/folder_plan.hh).
                xpage = os.path.join(folder, f"part-{part}.html")
                if not os.path.exists(xpage):
                    xpage = os.path.join(folder, "index.html")
                html = part_at(msg_out, part)
                body = html.get_payload(decode=True) if html is not None else None
                if not os.path.exists(xpage) or body is None:
                    problems.append(f"{rel}: part {part}: no page ({xpage} or the inline output's part)")
                    continue
                ipage = os.path.join(di, f"page-{part}.html")
                with open(ipage, "wb") as f:
                    f.write(body)
                for mode, page, report, fl in (("inline", ipage, rep_i, None), ("extract", xpage, rep_x, extracted)):
                    pages.append({"id": len(pages), "path": page, "files": fl})
                    plan.append((rel, part, mode, report))
        # The threaded mbox extracted as an archive: its pages are crawled from DIR/index.html.
        archive_dir, archive_report = os.path.join(work, "archive"), os.path.join(work, "archive.jsonl")
        rc = subprocess.run([mimeuri, "--cid=extract", "--extract-dir=" + archive_dir, "--report=" + archive_report,
                             THREAD], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if rc.returncode != 0:
            problems.append(f"{THREAD}: mimeuri --cid=extract exit {rc.returncode}: {rc.stderr.strip()[-300:]}")
        both = run_pages("check_pages.mjs", {"chromium": chromium, "pages": pages, "shots": logdir,
                                              "archive": {"root": archive_dir}}, mods, work, 1500)
        if both is None:
            return 1
        res, crawled = both["pages"], both["archive"]
        archive_refs = [json.loads(l) for l in open(archive_report)] if os.path.exists(archive_report) else []
        problems += check_archive(archive_dir, crawled, archive_refs)

    totals = {m: {"pages": 0, "imgs": 0, "sheets": 0, "bg": 0, "sheetimg": 0, "sheetimg_all": 0, "sheetimg_absent": 0, "opaque": 0,
                  "claimed": 0, "loaded": 0} for m in ("inline", "extract")}
    by_part = {}
    for (rel, part, mode, report), out in zip(plan, res):
        t = totals[mode]
        t["pages"] += 1
        where = f"{rel} part {part} ({mode} page {out['path']})"
        if out["error"]:
            problems.append(f"{where}: {out['error']}")
            continue
        s = out["shown"]
        shown_imgs = sum(x["ok"] for x in s["imgs"])
        shown_sheets = sum(x["ok"] for x in s["sheets"])
        t["imgs"] += shown_imgs
        t["sheets"] += shown_sheets
        t["bg"] += sum(x["ok"] for x in s["backgrounds"])
        shown_sheet_imgs = sum(x["ok"] for x in s["sheetImages"])
        # A stylesheet part's image that does not load names no part of the message: a remote
        # URL the message does not hold (mhtml-to-html would fetch it; no request leaves the
        # archive), never one of its parts left unlinked.
        for x in s["sheetImages"]:
            if x["ok"] or x["ours"]:
                continue
            if names_a_part(x["url"], locations(os.path.join(corpus, rel))):
                problems.append(f"{where}: a stylesheet's image {x['url']} names a part of the message and does not load")
            else:
                t["sheetimg_absent"] += 1
        t["sheetimg"] += shown_sheet_imgs
        t["sheetimg_all"] += len(s["sheetImages"])
        t["opaque"] += s["opaqueSheets"]
        by_part.setdefault((rel, part), {})[mode] = (shown_imgs, shown_sheets, sum(x["ok"] for x in s["backgrounds"]),
                                                     shown_sheet_imgs)
        pages_of = by_part[(rel, part)].setdefault("where", {})
        pages_of[mode] = where
        action = "inlined" if mode == "inline" else "extracted"
        mine = claims(report, part, action)
        t["claimed"] += len(mine)
        # A data: image that does not show on the inline page is the part's own bytes: nothing
        # else stands between a data: URL and the browser. Said, not failed; the extract page
        # may fail as many (the same parts), no more.
        failed = by_part.setdefault((rel, part), {}).setdefault(mode + "-failed", [])
        for kind, items in (("image", s["imgs"]), ("stylesheet", s["sheets"]), ("background image", s["backgrounds"]),
                            ("linked stylesheet's image", s["sheetImages"])):
            for x in items:
                if x["ours"] and x["ok"]:
                    t["loaded"] += 1
                elif x["ours"]:
                    failed.append((kind, x["url"], [c["url"] for c in mine][:5]))
        # No fewer <img src> shown than the report claims (a <link href> is a stylesheet only by
        # its rel, an icon otherwise: those are checked one by one above).
        want = [c for c in mine if c["attr"] == "img@src"]
        got = sum(1 for x in s["imgs"] if x["ours"])
        if got < len(want):
            problems.append(f"{where}: {len(want)} images claimed {action}, {got} on the page: "
                            f"{[c['url'] for c in want][:5]}")
    broken = 0
    for (rel, part), m in by_part.items():
        inline_failed, extract_failed = m.get("inline-failed", []), m.get("extract-failed", [])
        for kind, url, refs in inline_failed:
            if not url.startswith("data:"):
                problems.append(f"{m['where']['inline']}: {kind} {url} does not load (claimed inlined: {refs})")
            else:
                broken += 1
                print(f"note: {rel} part {part}: {kind} {url[:60]} is not an image a browser can show (the part's own bytes)")
        if len(extract_failed) > len([f for f in inline_failed if f[1].startswith("data:")]):
            for kind, url, refs in extract_failed:
                problems.append(f"{m['where']['extract']}: {kind} {url} does not load (claimed extracted: {refs})")
    for (rel, part), m in by_part.items():
        if "inline" in m and "extract" in m:
            # (images the part's own bytes cannot show fail on both pages alike)
            names = ("images", "stylesheets", "background images", "linked stylesheets' images")
            for n, a, b in zip(names, m["inline"], m["extract"]):
                if b < a:
                    problems.append(f"{rel} part {part}: the extract page shows {b} {n}, the inline page {a}")
    elapsed = time.monotonic() - started
    print(f"browser: {len(files)} messages, {len(pages)} pages in {elapsed:.0f} s")
    for mode, t in totals.items():
        print(f"  {mode}: {t['pages']} pages; {t['loaded']} of mimeuri's references load ({t['claimed']} claimed "
              f"{'inlined' if mode == 'inline' else 'extracted'}); shown: {t['imgs']} images, {t['sheets']} stylesheets, "
              f"{t['bg']} CSS/background images; linked stylesheets' images: {t['sheetimg']} of {t['sheetimg_all']} load, "
              f"{t['sheetimg_absent']} others name no part of the message (remote: not fetched)"
              f" ({t['opaque']} sheets read from their files: a file: page cannot read a file: sheet's rules)")
    print(f"  {broken} inlined parts are not images a browser can show (their own bytes); the extract pages fail no more")
    shots = [o["shot"] for o in res + (crawled["pages"] if crawled else []) if o.get("shot") and problems]
    if shots:
        print("screenshots: " + ", ".join(shots))
    for p in problems:
        print("FAIL: " + p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
