#!/usr/bin/env python3
"""A second writer for the --data=attach golden cases: builds expected.eml from input.eml by
the rules of RFC 2387 (multipart/related, type= the root's type, root first), RFC 2392 (cid:
URLs name Content-IDs) and RFC 2045 (base64 in lines of at most 76 characters), as issue 40
states them, without mimeuri's code:

  - every data:image/... URL of the HTML (the case inputs hold none outside an image
    context) whose type is image/ and a word (what mailparser resolves a cid: for: not
    image/svg+xml, which stays as it is) becomes cid:HASH@DOMAIN, HASH the first 32 hex digits of the SHA-256 of its
    decoded bytes, DOMAIN the From address's;
  - one part per distinct image, in the order first named: Content-Type (the type the bytes
    have where a PNG or GIF signature says so, else the URL's), base64, inline with a file
    name image-HASH8.EXT, the Content-ID;
  - a lone text/html entity becomes multipart/related; boundary="=_mimeuri_" + the first 24
    hex digits of the SHA-256 of the rewritten HTML; type="text/html"; its own Content-Type
    and Content-Transfer-Encoding lines move into the first part;
  - in a multipart/related, the HTML is rewritten in place and the parts go before the
    closing delimiter.

Usage: data_expected.py [--crlf] INPUT.eml > expected.eml
(LF input; --crlf: the message is read and written with CRLF line ends, so the HTML hashed
for the boundary has them)
"""
import base64, hashlib, re, sys, urllib.parse

EXT = {"image/png": "png", "image/gif": "gif", "image/jpeg": "jpg", "image/svg+xml": "svg"}


def decode(url):
    head, _, payload = url[5:].partition(",")
    if head.lower().endswith(";base64"):
        return head[:-7].lower(), base64.b64decode(urllib.parse.unquote_to_bytes(payload))
    return head.lower(), urllib.parse.unquote_to_bytes(payload)


def sniff(b, declared):
    if b.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if b[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return declared


def rewrite(html, domain):
    parts, seen = [], {}
    def sub(m):
        typ, b = decode(m.group(0))
        if not re.fullmatch(r"image/\w+", sniff(b, typ)):
            return m.group(0)  # mailparser resolves cid: only for image/\w+: SVG stays data: (issue 48)
        h = hashlib.sha256(b).hexdigest()[:32]
        cid = f"{h}@{domain}"
        if h not in seen:
            seen[h] = True
            parts.append((sniff(b, typ), b, cid))
        return "cid:" + cid
    return re.sub(r"data:image/[^\"')\s]+", sub, html), parts


def part_text(typ, b, cid):
    return (f"Content-Type: {typ}\nContent-Transfer-Encoding: base64\n"
            f"Content-Disposition: inline; filename=\"image-{cid[:8]}.{EXT[typ]}\"\n"
            f"Content-ID: <{cid}>\n\n" + base64.encodebytes(b).decode())


EOL = "\n"


def main():
    global EOL
    args = sys.argv[1:]
    if args[0] == "--crlf":
        EOL = "\r\n"
        args = args[1:]
    msg = open(args[0], encoding="utf-8").read()
    real_write = sys.stdout.write
    sys.stdout.write = lambda t: real_write(t.replace("\n", EOL))
    domain = re.search(r"^From:.*@([a-z0-9.-]+)>?$", msg, re.M).group(1)
    head, _, body = msg.partition("\n\n")
    top_ct = re.search(r"^Content-Type: (.*)$", head, re.M).group(1)
    if top_ct.startswith("text/html"):  # a lone HTML body
        html, parts = rewrite(body, domain)
        b = "=_mimeuri_" + hashlib.sha256(html.replace("\n", EOL).encode()).hexdigest()[:24]
        head = head.replace("Content-Type: " + top_ct,
                            f'Content-Type: multipart/related; boundary="{b}"; type="text/html"')
        out = f"--{b}\nContent-Type: {top_ct}\nContent-Transfer-Encoding: 7bit\n\n{html}\n"
        out += "".join(f"--{b}\n" + part_text(*p) for p in parts) + f"--{b}--\n"
        sys.stdout.write(head + "\n\n" + out)
        return
    # A base64 HTML part of a multipart/alternative: the part becomes the related set.
    m = re.search(r"Content-Type: (text/html[^\n]*)\nContent-Transfer-Encoding: base64\n\n(.*?)\n(--[^\n]*)", msg, re.S)
    if m and "multipart/related" not in msg:
        html, parts = rewrite(base64.b64decode(m.group(2)).decode(), domain)
        b = "=_mimeuri_" + hashlib.sha256(html.encode()).hexdigest()[:24]
        new = (f'Content-Type: multipart/related; boundary="{b}"; type="text/html"\nContent-Transfer-Encoding: 7bit\n\n'
               f"--{b}\nContent-Type: {m.group(1)}\nContent-Transfer-Encoding: base64\n\n"
               + base64.encodebytes(html.encode()).decode()
               + "".join(f"--{b}\n" + part_text(*p) for p in parts) + f"--{b}--")
        # The part's content ended with a line break (base64's last line): so does the new one.
        sys.stdout.write(msg[:m.start()] + new + "\n" + m.group(3) + msg[m.end():])
        return
    # An HTML part in a multipart/related: rewritten in place, the parts before "--rel-b--".
    m = re.search(r"(Content-Type: text/html[^\n]*\n\n)(.*?)(\n--rel-b\n)", msg, re.S)
    html, parts = rewrite(m.group(2), domain)
    msg = msg[:m.start(2)] + html + msg[m.end(2):]
    close = msg.index("--rel-b--\n")
    msg = msg[:close] + "".join("--rel-b\n" + part_text(*p) for p in parts) + msg[close:]
    sys.stdout.write(msg)


if __name__ == "__main__":
    main()
