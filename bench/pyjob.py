#!/usr/bin/env python3
"""Baseline for bench/compare.sh: mimeuri's default job on cid: references, written with
Python's email package: read an mbox, find cid: references in HTML parts with html.parser,
resolve them against the Content-IDs, repair malformed ones (cid:<x>, spaces) in place,
and write every message back (re-serialised, as Python's email does). Report-free."""
import mailbox, re, sys, urllib.parse
from html.parser import HTMLParser

ATTRS = {"src", "href", "background", "poster", "data", "longdesc", "lowsrc", "action"}

class Finder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls = []
    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and name in ATTRS and value.strip()[:4].lower() == "cid:":
                self.urls.append(value)

def fix(msg):
    ids = {str(p["Content-ID"]).strip().strip("<>") for p in msg.walk() if p["Content-ID"]}
    for part in msg.walk():
        if part.get_content_type() != "text/html" or part.is_multipart():
            continue
        raw = part.get_payload(decode=True) or b""
        charset = part.get_content_charset() or "utf-8"
        try:
            html = raw.decode(charset, "replace")
        except LookupError:
            html = raw.decode("latin-1")
        f = Finder()
        f.feed(html)
        changed = False
        for url in f.urls:
            addr = urllib.parse.unquote(url.strip()[4:]).strip().strip("<>").strip()
            canonical = "cid:" + urllib.parse.quote(addr, safe="!$&'()*+,;=:@")
            if addr in ids and url != canonical:
                html = html.replace(url, canonical)
                changed = True
        if changed:
            part.set_payload(html.encode(charset, "replace"), charset)
    return msg

box = mailbox.mbox(sys.argv[1], create=False)
out = sys.stdout.buffer
for msg in box:
    out.write(b"From " + (msg.get_from() or "MAILER-DAEMON").encode() + b"\n")
    out.write(fix(msg).as_bytes(unixfrom=False) + b"\n")
