#!/usr/bin/env python3
"""make_archive_mbox.py CORPUS COUNT OUT [FIRST]: an mbox of COUNT distinct messages for
bench/archive_add.sh: the corpus's single messages under 64 KB, repeated, each given a
Message-ID of its own (bench-K@archive.example, K from FIRST on), a Date (one a day-hour
step from 2020-01-01, so the archive spans months), and threads of five (In-Reply-To and
References to the thread's first). mboxo ">From " quoting."""
import email.utils, re, sys

corpus, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
lines = open(f"{corpus}/INDEX.tsv").read().splitlines()
col = {name: k for k, name in enumerate(lines[0].split("\t"))}
bodies = []
for r in (l.split("\t") for l in lines[1:]):
    size = int(r[col["size"]])
    if r[col["is_mbox"]] == "1" or size == 0 or size > 65536:
        continue
    data = open(f"{corpus}/{r[col['path']]}", "rb").read().replace(b"\r\n", b"\n")
    if b"\n\n" not in data:
        continue
    head, body = data.split(b"\n\n", 1)
    head = re.sub(rb"(?mi)^(message-id|date|in-reply-to|references):.*\n(?:[ \t].*\n)*", b"", head + b"\n")
    bodies.append((head, body if body.endswith(b"\n") else body + b"\n"))
with open(path, "wb") as out:
    for k in range(first, first + count):
        head, body = bodies[k % len(bodies)]
        root = k - k % 5
        h = b"Message-ID: <bench-%d@archive.example>\n" % k
        h += b"Date: " + email.utils.formatdate(1577836800 + k * 3600, usegmt=True).encode() + b"\n"
        if k != root:
            h += b"In-Reply-To: <bench-%d@archive.example>\nReferences: <bench-%d@archive.example>\n" % (root, root)
        msg = h + head + b"\n" + body
        out.write(b"From bench@archive.example Thu Jan  1 00:00:00 2026\n" + re.sub(rb"(?m)^From ", b">From ", msg) + b"\n")
