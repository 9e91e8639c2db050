#!/usr/bin/env python3
"""archive_browser.py NODE_MODULES ROOT START: an archive of HTML pages (mimeuri --cid=extract,
MHonArc) crawled in headless Chromium from ROOT/START by tests/browser/check_pages.mjs (files
only, network off): every page reached through links, every link, image and stylesheet
naming a file followed. Prints one line of counts:
  pages LINKS_WORK LINKS_BROKEN IMAGES_SHOWN IMAGES MID_LEFT
a link works when its file exists inside ROOT and, for a page, loads; an image when it shows
(naturalWidth > 0); MID_LEFT: mid: URLs still in the pages (no browser follows them)."""
import json, os, shutil, subprocess, sys, tempfile

mods, root, start = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
with tempfile.TemporaryDirectory() as work:
    manifest, results = os.path.join(work, "m.json"), os.path.join(work, "r.json")
    json.dump({"chromium": chromium, "pages": [], "shots": None, "archive": {"root": os.path.abspath(root), "start": start}},
              open(manifest, "w"))
    subprocess.run(["node", os.path.join(here, "..", "tests", "browser", "check_pages.mjs"), manifest, results], check=True,
                   env=dict(os.environ, MIMEURI_BROWSER_NODE_MODULES=mods))
    crawl = json.load(open(results))["archive"]
pages = {p["url"]: p for p in crawl["pages"]}
work = broken = shown = images = 0
for l in crawl["links"]:
    if l["tag"] == "img":
        images += 1
        shown += bool(l.get("shown"))
        continue
    ok = l["inside"] and l["exists"] and not (l["url"].endswith(".html") and pages.get(l["url"], {}).get("error"))
    ok = ok and l.get("shown") is not False
    work += ok
    broken += not ok
print(len(crawl["pages"]), work, broken, shown, images, sum(len(p["mids"]) for p in crawl["pages"]))
