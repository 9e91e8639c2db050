#!/usr/bin/env python3
"""--data=attach and --related=repair as the readers people use see it.

For each test message (testdata/data/*.eml with data: images, each also with CRLF line ends,
and the HTML quoted-printable), runs mimeuri --data=attach and checks:
  - Python's email (policy.default): every image the report says was attached is a part
    with that Content-ID, Content-Disposition inline, inside the multipart/related that holds
    the HTML, its bytes those of the data: URI (the Content-ID is their SHA-256); the HTML
    names it as cid: and holds no data: image any more; the parts that were there come out
    with the same bytes;
  - the round trip: --cid=inline on the result gives the original images back in the same
    places (an SVG stays data: as it was);
  - nodemailer's mailparser and postal-mime (npm, installed into BUILD/readers-npm as test
    tools only): each attached image is an inline, related attachment with its Content-ID;
    and mailparser, as the webmails built on it show the HTML, resolves every cid: written
    (testdata/data/style.eml: unquoted url() in <style> and style attributes, and an SVG,
    which --data=attach leaves as data: since mailparser resolves cid: only for image/\w+).
For testdata/related/*.eml (also with CRLF line ends), runs mimeuri --related=repair and checks
with the same three readers that every part the report says was moved or marked is an inline
part of the multipart/related that holds the HTML naming it, with its Content-ID and bytes,
and that every real attachment is still one (check_related_python, check_node_related).
Usage: data_readers.py MIMEURI TESTDATA_DIR BUILD_DIR
Exit 77 (skipped) without node or npm, or when the npm packages cannot be installed, unless
MIMEURI_STRICT_TESTS=1 (then 1).
"""
import base64, email, email.policy, hashlib, html.parser, json, os, quopri, re, shutil, subprocess, sys, tempfile
import urllib.parse

READERS = ["mailparser@3.14.2", "postal-mime@2.4.4"]
problems = []


def fail(msg):
    problems.append(msg)


class Images(html.parser.HTMLParser):
    """The image URLs of an HTML text in document order: (where, url)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.in_style = [], False

    def css(self, where, text):
        for m in re.finditer(r"url\(\s*(['\"]?)(.*?)\1\s*\)", text, re.I):
            self.found.append((where, m.group(2)))

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if (tag, name) in (("img", "src"), ("input", "src"), ("video", "poster")) or name == "background":
                self.found.append((f"{tag}@{name}", value.strip()))
            elif name == "srcset":
                for cand in value.split(", "):
                    self.found.append((f"{tag}@srcset", cand.strip().split()[0]))
            elif tag in ("image", "feimage") and name in ("href", "xlink:href"):
                self.found.append((f"{tag}@{name}", value.strip()))
            elif name == "style":
                self.css(f"{tag}@style", value)
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css("style", data)


def images(text):
    p = Images()
    p.feed(text)
    return p.found


def decode_data(url):
    head, _, payload = url[5:].partition(",")
    raw = urllib.parse.unquote_to_bytes(payload)
    return base64.b64decode(raw) if head.lower().endswith(";base64") else raw


def html_of(msg):
    for part in msg.walk():
        if part.get_content_type() == "text/html":
            return part, part.get_content()
    return None, ""


def run(mimeuri, args, path):
    r = subprocess.run([mimeuri, *args, path], capture_output=True)
    if r.returncode != 0:
        fail(f"{path} {args}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def variants(testdata, tmp):
    out = []
    for name in ("lone.eml", "alternative.eml", "related.eml", "style.eml"):
        src = os.path.join(testdata, "data", name)
        b = open(src, "rb").read()
        out.append(src)
        crlf = os.path.join(tmp, name.replace(".eml", "-crlf.eml"))
        open(crlf, "wb").write(b.replace(b"\n", b"\r\n"))
        out.append(crlf)
    # The HTML quoted-printable: its long lines broken with soft line breaks.
    msg = email.message_from_bytes(open(os.path.join(testdata, "data", "alternative.eml"), "rb").read(),
                                   policy=email.policy.compat32)
    html_part = [p for p in msg.walk() if p.get_content_type() == "text/html"][0]
    text = html_part.get_payload(decode=True)
    del html_part["Content-Transfer-Encoding"]
    html_part["Content-Transfer-Encoding"] = "quoted-printable"
    html_part.set_payload(quopri.encodestring(text).decode())
    qp = os.path.join(tmp, "alternative-qp.eml")
    open(qp, "wb").write(msg.as_bytes())
    out.append(qp)
    return out


def check_python(path, before, after, report):
    orig = email.message_from_bytes(before, policy=email.policy.default)
    new = email.message_from_bytes(after, policy=email.policy.default)
    _, orig_html = html_of(orig)
    html_part, new_html = html_of(new)
    attached = [d for d in report.get("data", []) if d["action"] == "attached"]
    if not attached:
        fail(f"{path}: nothing attached")
    by_cid = {}
    for part in new.walk():
        if part["Content-ID"]:
            by_cid[part["Content-ID"].strip("<>")] = part
    # The multipart/related that holds the HTML.
    related = None
    for part in new.walk():
        if part.get_content_type() == "multipart/related" and any(p is html_part for p in part.walk()):
            related = part
    if related is None:
        fail(f"{path}: the HTML is in no multipart/related")
        return
    orig_urls = images(orig_html)
    for d in attached:
        cid = d["cid"]
        part = by_cid.get(cid)
        if part is None:
            fail(f"{path}: no part with Content-ID <{cid}>")
            continue
        if part.get_content_disposition() != "inline":
            fail(f"{path}: <{cid}> is {part.get_content_disposition()}, not inline")
        if not any(p is part for p in related.walk()):
            fail(f"{path}: <{cid}> is outside the HTML's multipart/related")
        b = part.get_content()
        if hashlib.sha256(b).hexdigest()[:32] != cid.split("@")[0].split(".")[0]:
            fail(f"{path}: <{cid}>'s bytes are not those its id names")
        if not any(u.startswith("data:") and decode_data(u) == b for _, u in orig_urls):
            fail(f"{path}: <{cid}> holds bytes no data: URI of the original had")
        if "cid:" + cid not in new_html:
            fail(f"{path}: the HTML does not name cid:{cid}")
    if any(CID_TYPE.match(u) for _, u in images(new_html)):
        fail(f"{path}: a data: image is left in the HTML")
    # An SVG stays data: (mailparser resolves no cid: for it): each the original had, still there.
    for _, u in orig_urls:
        if u.lower().startswith("data:image/svg+xml") and u not in new_html:
            fail(f"{path}: the SVG data: URI {u[:40]}... did not stay")
    # The parts that were there: the same bytes (Content-IDs the original had).
    for part in orig.walk():
        if part["Content-ID"] and not part.is_multipart():
            cid = part["Content-ID"].strip("<>")
            if cid not in by_cid or by_cid[cid].get_content() != part.get_content():
                fail(f"{path}: the part <{cid}> did not come out as it was")
    # Where the HTML was only text/html, the root of the new related set is that HTML.
    if related.get_param("type") != "text/html" and related.get_param("type") is not None:
        fail(f"{path}: the related set's type= is {related.get_param('type')}")
    if list(related.iter_parts())[0].get_content_type() not in ("text/html", "multipart/alternative"):
        fail(f"{path}: the related set's first part is {list(related.iter_parts())[0].get_content_type()}")


def check_round_trip(mimeuri, path, before, after, tmp):
    once = os.path.join(tmp, "once.eml")
    open(once, "wb").write(after)
    back = run(mimeuri, ["--cid=inline"], once)
    orig = images(html_of(email.message_from_bytes(before, policy=email.policy.default))[1])
    new_msg = email.message_from_bytes(back, policy=email.policy.default)
    new = images(html_of(new_msg)[1])
    parts = {p["Content-ID"].strip("<>"): p.get_content() for p in new_msg.walk() if p["Content-ID"]}
    if [w for w, _ in orig] != [w for w, _ in new]:
        fail(f"{path}: round trip: the images are not in the same places: {[w for w, _ in orig]} / {[w for w, _ in new]}")
        return
    orig_parts = {p["Content-ID"].strip("<>"): p.get_content()
                  for p in email.message_from_bytes(before, policy=email.policy.default).walk() if p["Content-ID"]}
    for (where, u), (_, v) in zip(orig, new):
        if u.startswith("cid:") and v.startswith("data:"):  # a cid: image the original had: inlined too
            if decode_data(v) != orig_parts.get(urllib.parse.unquote(u[4:])):
                fail(f"{path}: round trip: {where} {u} does not show its part")
            continue
        if not u.startswith("data:"):
            if u != v:
                fail(f"{path}: round trip: {where} {u} became {v}")
            continue
        want = decode_data(u)
        if v.startswith("data:"):
            got = decode_data(v)
        elif v.startswith("cid:") and u.lower().startswith("data:image/svg+xml"):
            got = parts.get(urllib.parse.unquote(v[4:]))  # --cid=inline never inlines SVG
        else:
            got = None
        if got != want:
            fail(f"{path}: round trip: {where} does not show the original image")


def node_readers(build, files, script="data_readers.mjs"):
    """What mailparser and postal-mime see of each file, as script prints it: (why skipped, the JSON lines)."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "no node or npm (Debian packages nodejs, npm)", []
    prefix = os.path.join(build, "readers-npm")
    mods = os.path.abspath(os.path.join(prefix, "node_modules"))
    if not all(os.path.isdir(os.path.join(mods, r.split("@")[0])) for r in READERS):
        os.makedirs(prefix, exist_ok=True)
        r = subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", *READERS],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return f"npm install failed: {r.stderr.strip()[-300:]}", []
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(["node", os.path.join(here, script), *files], capture_output=True, text=True,
                       env=dict(os.environ, NODE_PATH=mods))
    if r.returncode != 0:
        fail(f"node readers: {r.stderr.strip()[-500:]}")
        return None, []
    return None, [json.loads(line) for line in r.stdout.splitlines()]


# A data: image of a type mailparser resolves a cid: for (image/ and a word): what --data=attach
# attaches; an SVG (image/svg+xml) stays data:.
CID_TYPE = re.compile(r"data:image/\w+[;,]", re.I)


def check_node_data(seen_lines, reports):
    for seen in seen_lines:
        if seen["file"] not in reports:
            continue
        attached = [d for d in reports[seen["file"]].get("data", []) if d["action"] == "attached"]
        by_cid = {a["cid"].strip("<>"): a for a in seen["attachments"]}
        for d in attached:
            a = by_cid.get(d["cid"])
            if a is None:
                fail(f"{seen['reader']}: {seen['file']}: no attachment with Content-ID <{d['cid']}>")
            elif a["disposition"] != "inline" or not a["related"]:
                fail(f"{seen['reader']}: {seen['file']}: <{d['cid']}> is {a['disposition']}, related={a['related']}")
            elif a["sha256"][:32] != d["cid"].split("@")[0].split(".")[0]:
                fail(f"{seen['reader']}: {seen['file']}: <{d['cid']}> has other bytes")
        if re.search(r"(src|background|href)=[\"']?data:image/\w+[;,]", seen["html"], re.I):
            fail(f"{seen['reader']}: {seen['file']}: a data: image in the HTML")
        # What the webmails built on mailparser show: every attached image resolved (its cid:
        # made a data: URL by mailparser itself), none left a cid: link (issue 48, 9: an
        # unquoted url(cid:...) was read to its ')', an SVG part never resolved).
        if seen["reader"] == "mailparser":
            for d in attached:
                if "cid:" + d["cid"] in seen["shown"]:
                    fail(f"mailparser: {seen['file']}: cid:{d['cid']} left unresolved in the HTML it shows")
            if "cid:" in seen["shown"]:
                fail(f"mailparser: {seen['file']}: a cid: link left unresolved in the HTML it shows")


# --- --related=repair (testdata/related/): every part the report says was moved or marked is,
# for each reader, an inline part of the multipart/related that holds the HTML naming it,
# with its Content-ID and its bytes as they were; every real attachment (a part no HTML
# names) is still an attachment, with its bytes.

RELATED = ("mixed.eml", "in_related.eml", "alternative.eml", "outside.eml", "nested.eml")


def related_variants(testdata, tmp):
    out = []
    for name in RELATED:
        src = os.path.join(testdata, "related", name)
        out.append(src)
        crlf = os.path.join(tmp, "related-" + name.replace(".eml", "-crlf.eml"))
        open(crlf, "wb").write(open(src, "rb").read().replace(b"\n", b"\r\n"))
        out.append(crlf)
    return out


def fixed_cids(report):
    return [urllib.parse.unquote(e["url"][4:]) for e in report.get("related", [])
            if e["action"] in ("moved", "marked") and e["url"].lower().startswith("cid:")]


def check_related_python(path, before, after, report):
    orig = email.message_from_bytes(before, policy=email.policy.default)
    new = email.message_from_bytes(after, policy=email.policy.default)
    cids = fixed_cids(report)
    if not cids:
        fail(f"{path}: --related=repair moved or marked nothing")
    parts = {p["Content-ID"].strip("<>"): p for p in new.walk() if p["Content-ID"] and not p.is_multipart()}
    old = {p["Content-ID"].strip("<>"): p for p in orig.walk() if p["Content-ID"] and not p.is_multipart()}
    for cid in cids:
        part = parts.get(cid)
        if part is None:
            fail(f"{path}: no part with Content-ID <{cid}>")
            continue
        if part.get_content_disposition() != "inline" or part.is_attachment():
            fail(f"{path}: <{cid}> is {part.get_content_disposition()}, not inline")
        if part.get_content() != old[cid].get_content():
            fail(f"{path}: <{cid}> has other bytes")
        holders = [r for r in new.walk() if r.get_content_type() == "multipart/related" and
                   any(h.get_content_type() == "text/html" and "cid:" + cid in h.get_content() for h in r.walk())
                   and any(p is part for p in r.walk())]
        if not holders:
            fail(f"{path}: <{cid}> is in no multipart/related with the HTML that names it")
        for r in holders:
            first = next(r.iter_parts()).get_content_type()
            if r.get_param("type") not in (None, first) or first not in ("text/html", "multipart/alternative"):
                fail(f"{path}: the related set's root is {first}, type={r.get_param('type')}")
    named = set(re.findall(r"cid:([^\"'> ]+)", "".join(p.get_content() for p in orig.walk()
                                                      if p.get_content_type() == "text/html")))
    for p in orig.walk():
        if p.is_attachment() and (p["Content-ID"] or "").strip("<>") not in named:
            same = [q for q in new.walk() if q.is_attachment() and q.get_filename() == p.get_filename()]
            if not same or same[0].get_content() != p.get_content():
                fail(f"{path}: the real attachment {p.get_filename()} did not stay an attachment with its bytes")


def check_node_related(seen_lines, reports):
    for seen in seen_lines:
        if seen["file"] not in reports or "nested" in seen["file"]:  # neither reader opens an embedded message
            continue
        by_cid = {a["cid"].strip("<>"): a for a in seen["attachments"]}
        for cid in fixed_cids(reports[seen["file"]]):
            a = by_cid.get(cid)
            if a is None:
                fail(f"{seen['reader']}: {seen['file']}: no part with Content-ID <{cid}>")
            elif a.get("disposition") != "inline" or not a.get("related"):
                fail(f"{seen['reader']}: {seen['file']}: <{cid}> is {a.get('disposition')}, related={a.get('related')}")
        real = [a for a in seen["attachments"] if a["cid"].strip("<>") not in fixed_cids(reports[seen["file"]])]
        for a in real:
            if a["type"] in ("application/pdf", "text/plain") and a.get("disposition") != "attachment":
                fail(f"{seen['reader']}: {seen['file']}: the real attachment {a['type']} is {a.get('disposition')}")


def main():
    mimeuri, testdata, build = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="mimeuri-data-readers-")
    try:
        outs, reports = [], {}
        for path in variants(testdata, tmp):
            before = open(path, "rb").read()
            rep = os.path.join(tmp, "report")
            after = run(mimeuri, ["--data=attach", "--report=" + rep], path)
            report = json.loads(open(rep).read().splitlines()[0])
            out = os.path.join(tmp, "out-" + os.path.basename(path))
            open(out, "wb").write(after)
            outs.append(out)
            reports[out] = report
            check_python(path, before, after, report)
            check_round_trip(mimeuri, path, before, after, tmp)
        related_reports = {}
        for path in related_variants(testdata, tmp):
            before = open(path, "rb").read()
            rep = os.path.join(tmp, "report")
            after = run(mimeuri, ["--related=repair", "--report=" + rep], path)
            report = json.loads(open(rep).read().splitlines()[0])
            out = os.path.join(tmp, "related-out-" + os.path.basename(path))
            open(out, "wb").write(after)
            related_reports[out] = report
            if "nested" in path:  # inside an attached message: reported, never edited (issue 48, 7)
                if after != before or not any(e.get("reason") == "attached-message" for e in report.get("related", [])):
                    fail(f"{path}: --related=repair edited inside the attached message, or did not say why not")
                continue
            check_related_python(path, before, after, report)
        why, seen = node_readers(build, outs + list(related_reports))
        check_node_data(seen, reports)
        check_node_related(seen, related_reports)
        for p in problems:
            print("FAIL", p)
        if problems:
            return 1
        if why:
            print(f"node readers skipped: {why}")
            if os.environ.get("MIMEURI_STRICT_TESTS") == "1":
                return 1
            return 77
        print(f"ok: {len(outs)} messages (--data=attach), {len(related_reports)} (--related=repair); Python's email, "
              "the round trip, mailparser and postal-mime")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
