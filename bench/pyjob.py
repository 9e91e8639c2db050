#!/usr/bin/env python3
"""Baseline for bench/compare.sh: mimeuri's default job on references, written with
Python's email package and a real HTML parser (html.parser, no regular expressions): read an
mbox, find cid: and mid: references in HTML parts, resolve cid: against the message's
Content-IDs and repair malformed ones (cid:<x>, spaces) in place, look mid: ones up in the
mbox's Message-IDs (as mimeuri's index does), and write every message back (re-serialised,
as Python's email does). Report-free; external-body parts are left alone."""
import mailbox, os, sys, urllib.parse
from html.parser import HTMLParser

ATTRS = {"src", "href", "background", "poster", "data", "longdesc", "lowsrc", "action"}

class Finder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls = []
    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and name in ATTRS and value.strip()[:4].lower() in ("cid:", "mid:"):
                self.urls.append(value)

def fix(msg, message_ids):
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
            if url.strip()[:4].lower() == "mid:":
                mid = urllib.parse.unquote(url.strip()[4:]).split("/")[0].strip("<> ")
                fix.dangling_mid += mid not in message_ids
                continue
            addr = urllib.parse.unquote(url.strip()[4:]).strip().strip("<>").strip()
            canonical = "cid:" + urllib.parse.quote(addr, safe="!$&'()*+,;=:@")
            if addr in ids and url != canonical:
                html = html.replace(url, canonical)
                changed = True
        if changed:
            part.set_payload(html.encode(charset, "replace"), charset)
    return msg

fix.dangling_mid = 0
# An mbox, or a Maildir (bench/ratios.sh), whose messages are written as one mbox.
box = (mailbox.Maildir(sys.argv[1], factory=None, create=False) if os.path.isdir(sys.argv[1])
       else mailbox.mbox(sys.argv[1], create=False))
messages = list(box)
message_ids = {str(m["Message-ID"]).strip().strip("<>") for m in messages if m["Message-ID"]}
out = sys.stdout.buffer
for msg in messages:
    out.write(b"From " + ((msg.get_from() if hasattr(msg, "get_from") else None) or "MAILER-DAEMON").encode() + b"\n")
    out.write(fix(msg, message_ids).as_bytes(unixfrom=False) + b"\n")
