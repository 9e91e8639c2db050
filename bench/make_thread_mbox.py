#!/usr/bin/env python3
"""make_thread_mbox.py CORPUS OUT [THREADS]: a threaded mbox for bench/mhonarc.sh.

Two kinds of messages, threaded by In-Reply-To and References (as list archives are):
  - real mail: every single corpus message with an HTML part, cid: references and a
    multipart/related (INDEX.tsv), its body kept byte for byte; its Message-ID,
    In-Reply-To and References replaced so that they form threads of four;
  - THREADS synthetic threads (default 20) of five messages each, written as a list's
    readers write them: multipart/related HTML with a cid: image, and mid: links
    (RFC 2392) to the message replied to and to the thread's first message's image
    (mid:msg/cid), so that an archive of them can be browsed by its links.
"""
import base64, os, re, struct, sys, zlib

corpus, out = sys.argv[1], sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 20
DROP = (b"message-id:", b"in-reply-to:", b"references:")


def png(w, h, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def threaded_headers(mid, parents):
    h = b"Message-ID: <%s>\n" % mid.encode()
    if parents:
        h += b"In-Reply-To: <%s>\nReferences: %s\n" % (parents[-1].encode(), b" ".join(b"<%s>" % p.encode() for p in parents))
    return h


def rethread(data, mid, parents):
    """The message with its threading fields replaced (the rest of its bytes as they were)."""
    eol = b"\r\n" if b"\r\n" in data[:2000] else b"\n"
    head, sep, body = data.partition(eol + eol)
    lines, keep, dropping = head.split(eol), [], False
    for line in lines:
        if line[:1] in (b" ", b"\t") and keep is not None:
            if not dropping:
                keep.append(line)
            continue
        dropping = line.lower().startswith(DROP)
        if not dropping:
            keep.append(line)
    new = threaded_headers(mid, parents).replace(b"\n", eol)
    return new + eol.join(keep) + sep + body


rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(corpus, "INDEX.tsv"), encoding="utf-8")]
head = rows[0]
real = sorted(f["path"] for f in (dict(zip(head, r)) for r in rows[1:])
              if f["is_mbox"] == "0" and f["has_html"] == "1" and f["has_cid_ref"] == "1" and f["has_related"] == "1")
with open(out, "wb") as o:
    def put(data):
        if not data.endswith(b"\n"):
            data += b"\n"
        o.write(b"From bench@example.org Mon Jan  1 00:00:00 2024\n")
        o.write(re.sub(rb"(?m)^From ", b">From ", data) + b"\n")

    for i, path in enumerate(real):
        n = i % 4
        parents = [f"real-{i - k}@bench.example" for k in range(n, 0, -1)]
        put(rethread(open(os.path.join(corpus, path), "rb").read(), f"real-{i}@bench.example", parents))
    for t in range(threads):
        ids = []
        for k in range(5):
            mid = f"t{t}-m{k}@bench.example"
            image = base64.encodebytes(png(24 + k, 12, (40 * k % 256, 90, 160))).decode()
            links = ""
            if ids:
                links = (f'<p>In reply to <a href="mid:{ids[-1]}">the previous message</a>; the thread began '
                         f'<a href="mid:{ids[0]}">here</a>, with <img src="mid:{ids[0]}/img-{t}-0@bench.example" alt="its image">.</p>')
            html = (f"<html><body><h1>Thread {t}, message {k}</h1><p><img src=\"cid:img-{t}-{k}@bench.example\" "
                    f"alt=\"image {k}\"></p>{links}</body></html>")
            msg = (f"From: Writer {k} <w{k}@bench.example>\nSubject: {'Re: ' if k else ''}Thread {t}\n"
                   f"Date: Mon, {1 + t % 28} Jan 2024 {10 + k}:00:00 +0000\n"
                   + threaded_headers(mid, ids).decode() +
                   f"MIME-Version: 1.0\nContent-Type: multipart/related; boundary=\"b{t}-{k}\"\n\n"
                   f"--b{t}-{k}\nContent-Type: text/html; charset=utf-8\n\n{html}\n"
                   f"--b{t}-{k}\nContent-Type: image/png; name=\"img{k}.png\"\nContent-ID: <img-{t}-{k}@bench.example>\n"
                   f"Content-Transfer-Encoding: base64\n\n{image}--b{t}-{k}--\n")
            put(msg.encode())
            ids.append(mid)
print(f"{out}: {len(real)} corpus messages, {threads * 5} synthetic ones")
