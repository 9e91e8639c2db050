#!/usr/bin/env python3
"""Independent cross-check of mimeuri's cid: counts over the corpus.

Python's email package and html.parser (a different MIME parser and HTML tokenizer)
find cid: references in HTML parts and decide whether a part with that Content-ID exists.
For every file it compares, per message, the number of cid: references and how many of
them resolve (resolved or ambiguous: a target exists) with `mimeuri --check`. It prints
each difference and exits 1 if there is one that is not explained in KNOWN below.
Usage: crosscheck_refs.py MIMEURI CORPUS_DIR
"""
import email, email.policy, json, re, subprocess, sys, urllib.parse
from html.parser import HTMLParser
from skip import corpus_or_skip  # tests/skip.py

URL_ATTRS = {"src", "href", "background", "poster", "data", "longdesc", "lowsrc", "action",
             "cite", "formaction", "icon", "manifest", "codebase", "usemap", "dynsrc", "xlink:href"}
CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s'"]*))\s*\)""", re.I)

class Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls, self.in_style = [], False
    def css(self, text):
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in CSS_URL.finditer(text):
            self.urls.append(next(g for g in m.groups() if g is not None))
    def handle_starttag(self, tag, attrs):
        if tag == "style": self.in_style = True
        for name, value in attrs:
            if value is None: continue
            if name in URL_ATTRS: self.urls.append(value.strip())
            elif name in ("srcset", "imagesrcset"):
                for cand in value.split(","):
                    if cand.strip(): self.urls.append(cand.split()[0])
            elif name == "style": self.css(value)
    handle_startendtag = handle_starttag
    def handle_endtag(self, tag):
        if tag == "style": self.in_style = False
    def handle_data(self, data):
        if self.in_style: self.css(data)

def clean(cid):
    return cid.strip().strip("<>").strip()

def messages(raw):
    if not raw.startswith(b"From "):
        return [raw]
    parts = re.split(rb"(?:^|(?<=\n\n)|(?<=\n\r\n))From [^\n]*\n", raw)
    return [p for p in parts if p]

def count(raw):
    out = []
    for m in messages(raw):
        msg = email.message_from_bytes(m, policy=email.policy.compat32)
        ids = set()
        for part in msg.walk():
            if part.get("Content-ID"): ids.add(clean(str(part.get("Content-ID"))))
            # RFC 2557: a Content-Location that is itself a cid: URL names the part too.
            loc = str(part.get("Content-Location") or "").strip()
            if loc[:4].lower() == "cid:": ids.add(clean(urllib.parse.unquote(loc[4:])))
        total = present = 0
        for part in msg.walk():
            if part.get_content_type() != "text/html" or part.is_multipart(): continue
            payload = part.get_payload(decode=True) or b""
            p = Refs()
            try:
                p.feed(payload.decode(part.get_content_charset() or "utf-8", "replace"))
            except LookupError:
                p.feed(payload.decode("latin-1"))
            for u in p.urls:
                if u[:4].lower() != "cid:": continue
                total += 1
                addr = clean(urllib.parse.unquote(u[4:]))
                low = {i.lower() for i in ids}
                present += addr in ids or addr.lower() in low
        out.append((total, present))
    return out

def mimeuri_counts(binary, path):
    run = subprocess.run([binary, "--check", "--passes=references", path], capture_output=True)
    out = []
    for line in run.stdout.decode().splitlines():
        refs = [r for r in json.loads(line)["refs"] if r["kind"] == "cid"]
        # A target exists: resolved (a part's "Content-Location: cid:..." included, Blink's
        # MHTML, which Python counts too) or ambiguous.
        out.append((len(refs), sum(r["status"] != "dangling" for r in refs)))
    return out

# Differences looked at by hand, each explained.
KNOWN = {
    "sisimai-set-of-emails/maildir/mac/lhost-googleworkspace-01.eml":
        "CR-only line endings: GMime cannot parse them, mimeuri passes the message through (its LF and CRLF copies agree)",
    "sisimai-set-of-emails/maildir/mac/lhost-gsuite-01.eml":
        "CR-only line endings: GMime cannot parse them, mimeuri passes the message through (its LF and CRLF copies agree)",
    "stalwartlabs-mail-parser/malformed/020.eml":
        "a part with two Content-Type headers: GMime takes the last (text/plain), Python the first",
    "stalwartlabs-mail-parser/malformed/021.eml":
        "a part with two Content-Type headers: GMime takes the last (text/plain), Python the first",
}

def main():
    binary, corpus = sys.argv[1], corpus_or_skip(sys.argv[2])
    rows = [l.split("\t") for l in open(f"{corpus}/INDEX.tsv").read().splitlines()[1:]]
    files = [r[0] for r in rows if r[3] == "1"]
    diffs = unexplained = 0
    totals = [0, 0, 0, 0]
    for f in files:
        path = f"{corpus}/{f}"
        ours, theirs = mimeuri_counts(binary, path), count(open(path, "rb").read())
        # Message by message where both split the same way, else file totals.
        a = (sum(t for t, _ in ours), sum(p for _, p in ours))
        b = (sum(t for t, _ in theirs), sum(p for _, p in theirs))
        totals[0] += a[0]; totals[1] += a[1]; totals[2] += b[0]; totals[3] += b[1]
        if a != b:
            diffs += 1
            note = KNOWN.get(f)
            if not note: unexplained += 1
            print(f"{f}: mimeuri {a[0]} refs, {a[1]} with a target; python {b[0]} refs, {b[1]} with a target"
                  + (f" (known: {note})" if note else ""))
    print(f"cid: references: mimeuri {totals[0]} ({totals[1]} with a target), "
          f"python {totals[2]} ({totals[3]} with a target); {diffs} files differ, {unexplained} unexplained")
    return 1 if unexplained else 0

if __name__ == "__main__":
    sys.exit(main())
