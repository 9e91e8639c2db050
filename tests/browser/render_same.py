#!/usr/bin/env python3
"""The converted message looks as the original: screenshots compared in headless Chromium.

Two conversions, each followed by --cid=inline (whose page a browser opens alone):
  - --data=attach (testdata/data's alternative.eml, related.eml: data: images made cid: parts;
    SVG is left out, as --cid=inline never inlines it): its HTML page against the original's
    (the original through --cid=inline too, for the cid: image it had);
  - --related=repair (testdata/related's repairable messages): against the original through
    --cid=inline, which resolves a cid: wherever the part sits.
Each page is the HTML part of the result, written to a file, opened with the network off at
one viewport (render_same.mjs); the two screenshots must be the same bytes, and no image of
either page may fail to load (two broken pages would look alike). Screenshots of a pair that
differs go to the log folder.
Usage: render_same.py MIMEURI TESTDATA_DIR LOG_DIR
Exit 77 (skipped, the reason printed) without Chromium, node, npm or puppeteer-core, unless
MIMEURI_STRICT_TESTS=1 (then 1).
"""
import email, email.policy, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from browser_suite import browser_tools, run_pages  # noqa: E402

CASES = [("data", "alternative.eml", ["--data=attach"]), ("data", "related.eml", ["--data=attach"])] + [
    ("related", name, ["--related=repair"]) for name in ("mixed.eml", "in_related.eml", "alternative.eml", "outside.eml")]


def mimeuri(binary, args, data):
    r = subprocess.run([binary, *args], input=data, capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: mimeuri {args}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def html_page(msg_bytes, path):
    msg = email.message_from_bytes(msg_bytes, policy=email.policy.default)
    for part in msg.walk():
        if part.get_content_type() == "text/html":
            open(path, "w", encoding="utf-8").write(part.get_content())
            return
    raise SystemExit(f"FAIL: no HTML part for {path}")


def main():
    binary, testdata, logdir = (os.path.abspath(a) for a in sys.argv[1:4])
    chromium, mods = browser_tools(logdir)
    work = tempfile.mkdtemp(prefix="mimeuri-render-")
    try:
        pairs = []
        for folder, name, args in CASES:
            orig = open(os.path.join(testdata, folder, name), "rb").read()
            pid = f"{folder}-{name[:-4]}"
            converted = mimeuri(binary, ["--cid=inline"], mimeuri(binary, args, orig))
            if converted == mimeuri(binary, ["--cid=inline"], orig):
                print(f"FAIL: {pid}: {args} changed nothing")
                return 1
            a, b = os.path.join(work, pid + "-orig.html"), os.path.join(work, pid + "-conv.html")
            html_page(mimeuri(binary, ["--cid=inline"], orig), a)
            html_page(converted, b)
            pairs.append({"id": pid, "a": a, "b": b})
        os.makedirs(logdir, exist_ok=True)
        results = run_pages("render_same.mjs", {"chromium": chromium, "pairs": pairs, "shots": logdir}, mods, work, 120)
        if results is None:
            return 1
        bad = [r for r in results if not r["same"] or r["broken_a"] or r["broken_b"]]
        for r in bad:
            print(f"FAIL: {r['id']}: same={r['same']} broken images: original {r['broken_a']}, converted {r['broken_b']}")
        if bad:
            return 1
        print(f"ok: {len(results)} pages render the same as the original")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
