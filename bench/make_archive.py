#!/usr/bin/env python3
"""Mboxes for bench/archive.sh (a persistent Message-ID index, --mid-index).

make_archive.py corpus CORPUS COUNT OUT PREFIX
    An mbox of COUNT messages from the corpus's single messages (repeated, in INDEX.tsv
    order; mboxo ">From " quoting), each with its own Message-ID <PREFIX.N@archive.example>
    (N = 0..COUNT-1) in place of the one it had. The same messages as bench/make_mbox.py
    takes, but for the line-end filter, which reads INDEX.tsv's eol column here (CR-only and
    mixed-line-end messages are left out).

make_archive.py refs CORPUS COUNT OUT PREFIX TARGET TARGETS PER SCHEME [BROKEN]
    An mbox of COUNT text/html messages <PREFIX.N@archive.example>, each with PER links to
    messages of the archive made by "corpus ... TARGET" with TARGETS messages, spread over
    all of it. SCHEME "mid": the links are mid:TARGET.J@archive.example, and one in four
    mid:TARGET.J@archive.example/CID (RFC 2392), J moved on to the next message with a
    Content-ID of its own (the corpus has few).
    SCHEME "tag": the same links, byte for byte as long, with tag: (RFC 4151) in place of
    mid: (an ordinary link, no reference: the same HTML to read, nothing to look up), the
    baseline that the mid: run's extra cost is measured against.
    BROKEN N (default 0: none): every Nth link has its domain in capitals
    (mid:TARGET.J@ARCHIVE.EXAMPLE), which resolves but is malformed: --mid=repair rewrites it
    when, and only when, it resolves, so the output's bytes depend on what was found.
"""
import re
import sys
from urllib.parse import quote

FROM_LINE = b"From bench@example.org Sat Nov 21 00:00:00 2026\n"
DOMAIN = "archive.example"


def corpus_messages(corpus):
    """[(head, tail, eol, cid)] where a message is head + Message-ID field + tail."""
    rows = [l.split("\t") for l in open(f"{corpus}/INDEX.tsv").read().splitlines()[1:]]
    out = []
    for r in rows:
        # path size has_html ... is_mbox(7) ... has_content_id(10) ... has_message_rfc822(14) ... eol(17)
        if r[7] == "1" or r[17] in ("cr", "mixed") or int(r[1]) == 0 or int(r[1]) > 1_000_000:
            continue
        data = open(f"{corpus}/{r[0]}", "rb").read()
        eol = b"\r\n" if r[17] == "crlf" else b"\n"
        if not data.endswith(b"\n"):
            data += eol
        data = re.sub(rb"(?m)^From ", b">From ", data)
        m = re.search(rb"\r?\n\r?\n", data)
        if m and m.start() > 0:  # the Message-ID goes last in the header block; any old one (and its folds) goes
            first = 2 if m.group().startswith(b"\r\n") else 1
            lines = re.split(rb"(?<=\n)", data[: m.start()] + eol)
            kept, skipping = [], False
            for line in lines:
                if skipping and line[:1] in (b" ", b"\t"):
                    continue
                skipping = re.match(rb"(?i)message-id[ \t]*:", line) is not None
                if not skipping:
                    kept.append(line)
            head, tail = b"".join(kept), data[m.start() + first:]  # tail: the blank line on
        else:  # no header block: the field goes first
            head, tail = b"", data
        cid = None
        if r[10] == "1" and r[14] == "0":  # a Content-ID of the message's own parts
            c = re.search(rb"(?im)^Content-ID:[ \t]*<([^<>\r\n]+)>", data)
            if c:
                cid = c.group(1).decode("latin-1")
        out.append((head, tail, eol, cid))
    return out


def write_corpus(corpus, count, path, prefix):
    msgs = corpus_messages(corpus)
    with open(path, "wb") as f:
        for i in range(count):
            head, tail, eol, _ = msgs[i % len(msgs)]
            field = f"Message-ID: <{prefix}.{i}@{DOMAIN}>".encode() + eol
            f.write(FROM_LINE + head + field + tail + b"\n")


def write_refs(corpus, count, path, prefix, target, targets, per, scheme, broken=0):
    msgs = corpus_messages(corpus)
    step = 7919  # a prime: consecutive links land far apart in the target archive
    with open(path, "w") as f:
        k = 0
        for i in range(count):
            links = []
            for r in range(per):
                j = (k * step) % targets
                k += 1
                if r % 4 == 3:  # the next message from J on that has a Content-ID
                    n = next((n for n in range(j, min(targets, j + len(msgs))) if msgs[n % len(msgs)][3]), None)
                    j = j if n is None else n
                cid = msgs[j % len(msgs)][3] if r % 4 == 3 else None
                url = f"{target}.{j}@{DOMAIN.upper() if broken and k % broken == 0 else DOMAIN}"
                if cid is not None:
                    url += "/" + quote(cid, safe="@!$&'()*+,;=:-._~")
                link = scheme + ":" + url
                links.append(f'<li><a href="{link}">message {j}</a></li>\n')
            f.write(f"From bench@example.org Sat Nov 21 00:00:00 2026\nMessage-ID: <{prefix}.{i}@{DOMAIN}>\n"
                    "MIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n"
                    "<html><body><p>Earlier in this thread:</p>\n<ul>\n" + "".join(links) +
                    "</ul></body></html>\n\n")


def main():
    mode = sys.argv[1]
    if mode == "corpus":
        write_corpus(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif mode == "refs":
        a = sys.argv[2:]
        if a[7] not in ("mid", "tag"):
            sys.exit("SCHEME is mid or tag")
        write_refs(a[0], int(a[1]), a[2], a[3], a[4], int(a[5]), int(a[6]), a[7], int(a[8]) if len(a) > 8 else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
