#!/usr/bin/env python3
"""`mimeuri archive` end to end (issue 50), with the real binary over corpus messages.

    archive_add.py BIN CORPUS SOURCE_ROOT flow|kill|attacks

flow:    bench/make_thread_mbox.py's mbox (corpus messages with cid: images, threaded, and
         synthetic threads linked by mid:) archived whole, and in two runs (every other
         message, then the rest: each thread gets messages in both). Both archives hold the
         same addresses (each plain Message-ID its folder), the same thread, month and top
         pages and the same navigation; the second run leaves every page whose navigation did
         not change untouched (bytes and mtime); every thread mbox holds its messages as the
         input had them, byte for byte; a message given again is not added (nothing touched);
         one with the same Message-ID and other bytes gets a page of its own (ID~HASH); the
         feed is well-formed Atom with RFC 4287's required elements (and feedparser, when
         installed, finds no fault); a second run waits for the lock of the first.
kill:    the second run killed (SIGKILL) at each step of its journal and at random moments,
         then run again: the archive is the one an uninterrupted run makes, no page of it
         is ever half written, and no temporary file is ever left in the published tree
         (one step kills the run between a thread file's write and its rename).
attacks: what archives have shipped, replayed: an .obj attachment of HTML (Mailman,
         CVE-2020-12137), a cid: part whose name says image and whose type says HTML, script
         in a header field's name, nesting past the limits, markup in a Subject on every
         index page and in the feed, a 300-byte attachment name, and a private message added
         by accident then removed with --remove (its page, its links, its bytes in the
         thread mbox and in the state file all gone).
"""
import base64
import fcntl
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from skip import corpus_or_skip  # noqa: E402  (tests/skip.py)

BIN, CORPUS, ROOT, MODE = sys.argv[1:5]
ATOM = "{http://www.w3.org/2005/Atom}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def chunks(data):
    """An mbox's messages, each with its From_ line and separator, as written."""
    return [p for p in re.split(rb"(?:(?<=\n\n)|^)(?=From )", data) if p]


def archive(out, *inputs, env=None, expect=0):
    r = subprocess.run([BIN, "archive", out, *inputs], capture_output=True, text=True, env=env)
    check(r.returncode == expect, f"archive {inputs}: exit {r.returncode}, expected {expect}: {r.stderr[-400:]}")
    check("CRITICAL" not in r.stderr and "assertion" not in r.stderr, f"archive {inputs}: GLib complained: {r.stderr[-400:]}")
    return r


def tree(top):
    """Every file outside .mimeuri: relative path -> (bytes, mtime_ns)."""
    out = {}
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x != ".mimeuri"]
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, top)] = (open(p, "rb").read(), os.stat(p).st_mtime_ns)
    return out


def nav(page):
    m = re.search(rb"<!--mimeuri-nav-->(.*?)<!--/mimeuri-nav-->", page, re.S)
    return m.group(1) if m else None


def without_nav(page):
    return re.sub(rb"<!--mimeuri-nav-->.*?<!--/mimeuri-nav-->", b"", page, flags=re.S)


def feed_id_free(b):
    return re.sub(rb"urn:uuid:[0-9a-f-]+", b"urn:uuid:X", b)


def thread_mbox(work):
    mbox = os.path.join(work, "all.mbox")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "make_thread_mbox.py"), CORPUS, mbox, "8"],
                   check=True, capture_output=True)
    return mbox


def ids_of(data):
    """The Message-ID of each message of an mbox (its own header block's)."""
    out = []
    for c in chunks(data):
        head = c.split(b"\n\n", 1)[0]
        m = re.search(rb"^Message-ID:[ \t]*<([^>]+)>", head, re.M | re.I)
        out.append(m.group(1).decode("latin-1") if m else "")
    return out


def address(mid):
    """docs/archives.md's rule, written out again: the id when plain, else id- and 32 hex
    digits of its SHA-256."""
    plain = (0 < len(mid) <= 96 and re.fullmatch(r"[A-Za-z0-9@._+=-]+", mid) and mid.count("@") == 1
             and not mid.startswith(("@", ".")) and not mid.endswith("@") and ".." not in mid)
    return mid if plain else "id-" + hashlib.sha256(mid.encode("latin-1")).hexdigest()[:32]


def check_atom(path):
    root = ET.parse(path).getroot()
    check(root.tag == ATOM + "feed", "feed.atom: not an Atom feed")
    for el in ("id", "title", "updated", "author"):
        check(root.find(ATOM + el) is not None, f"feed.atom: no feed {el}")
    entries = root.findall(ATOM + "entry")
    check(entries, "feed.atom: no entry")
    for e in entries:
        for el in ("id", "title", "updated", "link"):
            check(e.find(ATOM + el) is not None, f"feed.atom: an entry without {el}")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e.find(ATOM + "updated").text or ""),
              "feed.atom: an updated that is not RFC 3339")
    # Debian's python3-feedparser, a second reader, where it is installed (for /usr/bin/python3,
    # which may not be the python3 running this).
    for py in (sys.executable, "/usr/bin/python3"):
        r = subprocess.run([py, "-c", "import feedparser, sys; d = feedparser.parse(sys.argv[1]); "
                            "print(d.version, int(d.bozo), len(d.entries), d.get('bozo_exception'))", path],
                           capture_output=True, text=True) if os.path.exists(py) else None
        if r is not None and r.returncode == 0:
            check(r.stdout.split()[:3] == ["atom10", "0", str(len(entries))], f"feedparser: {r.stdout.strip()}")
            break
    return len(entries)


def flow(work):
    mbox = thread_mbox(work)
    data = open(mbox, "rb").read()
    msgs = chunks(data)
    # The second run: the last eight messages (replies to threads of the first, new threads).
    half = [os.path.join(work, "a.mbox"), os.path.join(work, "b.mbox")]
    open(half[0], "wb").write(b"".join(msgs[:-8]))
    open(half[1], "wb").write(b"".join(msgs[-8:]))
    full, inc = os.path.join(work, "full"), os.path.join(work, "inc")
    archive(full, mbox)
    archive(inc, half[0])
    before = tree(inc)
    time.sleep(0.05)
    archive(inc, half[1])
    after, whole = tree(inc), tree(full)
    ids = ids_of(data)
    for i in ids:
        check(os.path.exists(os.path.join(inc, address(i), "index.html")), f"{i}: no page at its address {address(i)}")

    check(sorted(k for k in after if k.endswith("/index.html")) == sorted(k for k in whole if k.endswith("/index.html")),
          "the archive added to and the whole one hold different pages")
    derived = [k for k in whole if k.startswith(("threads/", "by-date/", "by-thread/")) or k == "index.html"]
    check(len(derived) > 10, "too few thread and month files")
    for k in derived:
        check(after.get(k, (None,))[0] == whole[k][0], f"{k}: differs between the archive added to and the whole one")
    check(feed_id_free(after["feed.atom"][0]) == feed_id_free(whole["feed.atom"][0]), "feed.atom differs")
    for k in whole:
        if k.endswith("/index.html"):
            check(nav(after[k][0]) == nav(whole[k][0]), f"{k}: navigation differs from the whole archive's")
    # The first run's pages: the same page but for its navigation; untouched unless that changed.
    untouched = changed = 0
    for k, (b, t) in before.items():
        if not k.endswith("/index.html") or "/" in k[:-len("/index.html")]:
            continue
        check(without_nav(after[k][0]) == without_nav(b), f"{k}: its page changed beyond its navigation")
        if nav(after[k][0]) == nav(b):
            check(after[k] == (b, t), f"{k}: rewritten though nothing on it changed")
            untouched += 1
        else:
            changed += 1
    check(untouched > 0, "no page of the first run was left untouched")
    # The second run's pages are the whole archive's: a mid: naming a message of the first
    # run goes to its page and files, as in one run.
    later = [k for k in after if k.endswith("/index.html") and k not in before and "/" not in k[:-len("/index.html")]]
    check(later, "the second run wrote no page")
    page_links = sum(without_nav(whole[k][0]).count(b'href="../') for k in later)
    for k in later:
        check(without_nav(after[k][0]) == without_nav(whole[k][0]), f"{k}: its page differs from the whole archive's")
    # One run in batches of five messages (each its own transaction): the whole archive.
    batched = os.path.join(work, "batched")
    archive(batched, "--batch=5", mbox)
    got_b = tree(batched)
    check(sorted(got_b) == sorted(whole), "the archive made in batches holds other files than the whole one")
    for k in whole:
        a, b = got_b.get(k, (b"",))[0], whole[k][0]
        check((feed_id_free(a), k) == (feed_id_free(b), k), f"{k}: differs between the batched and the whole archive")
    # The thread mboxes hold the input's messages, byte for byte.
    got = []
    for k, (b, _) in after.items():
        if k.endswith(".mbox"):
            got += chunks(b)
    check(sorted(got) == sorted(msgs), "the thread mboxes do not hold the input's messages byte for byte")
    # A message again: nothing added, nothing touched.
    same = os.path.join(work, "same.mbox")
    open(same, "wb").write(msgs[-3])
    r = archive(inc, same)
    check(" 0 added, 1 already there" in r.stderr, f"a message given again was added: {r.stderr}")
    check(tree(inc) == after, "giving a message again touched the archive")
    # The same Message-ID, other bytes: a page of its own.
    other = re.sub(rb"^Subject: ", b"Subject: [changed] ", msgs[-3], count=1, flags=re.M)
    open(same, "wb").write(other)
    r = archive(inc, same)
    check(" 1 added" in r.stderr, f"the same id with other bytes was not added: {r.stderr}")
    mid = ids_of(msgs[-3])[0]
    dups = [d for d in os.listdir(inc) if d.startswith(mid + "~")]
    check(len(dups) == 1 and re.fullmatch(re.escape(mid) + r"~[0-9a-f]{16}", dups[0] if dups else ""),
          f"the second copy of {mid}: folders {dups}")
    check(os.path.exists(os.path.join(inc, mid, "index.html")), "the first copy lost its page")
    n = check_atom(os.path.join(inc, "feed.atom"))
    # One run at a time: a second one waits for the lock.
    lock = open(os.path.join(inc, ".mimeuri", "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    p = subprocess.Popen([BIN, "archive", inc, same], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    check(p.poll() is None, "a run went on while another held the lock")
    fcntl.flock(lock, fcntl.LOCK_UN)
    err = p.communicate(timeout=60)[1]
    check(p.returncode == 0 and "waiting for another run" in err, f"the waiting run: {p.returncode} {err}")
    replies = reply_images(work)
    named = mid_links(work)
    print(f"flow: {len(msgs)} messages; {changed} pages of the first run got new navigation, {untouched} untouched; "
          f"{len(derived)} thread and month files the same as the whole archive's; the second run's {len(later)} pages "
          f"({page_links} links to other pages) and an archive made in batches of 5 the same as the whole one; feed of {n} entries; "
          f"a reply added the night after its thread shows its {replies} quoted images; "
          f"a message naming one of an earlier run by mid: links it {named} times")


def reply_images(work):
    """A reply added by a later run than the messages it answers: its cid: images come back
    from their folders ("matched":"thread"), as when all three are added at once; its page
    is the one-run archive's."""
    msgs = chunks(open(os.path.join(ROOT, "testdata", "threads", "reply_images.mbox"), "rb").read())
    check(len(msgs) == 3, "reply_images.mbox: not three messages")
    parts = [os.path.join(work, f"r{k}.mbox") for k in range(2)]
    open(parts[0], "wb").write(b"".join(msgs[:2]))
    open(parts[1], "wb").write(msgs[2])
    once, nightly = os.path.join(work, "r-once"), os.path.join(work, "r-nightly")
    archive(once, *parts)
    archive(nightly, parts[0])
    archive(nightly, parts[1])
    page = open(os.path.join(nightly, "reply@reply.example", "index.html"), "rb").read()
    srcs = re.findall(rb'<img src="([^"]*)"', page)
    shown = 0
    for src, folder, name in ((srcs[0] if srcs else b"", "parent@reply.example", "chart.png"),
                              (srcs[1] if len(srcs) > 1 else b"", "root@reply.example", "logo.png")):
        check(src == f"../{folder}/{name}".encode(), f"the reply's quoted image: src {src!r}, not ../{folder}/{name}")
        shown += os.path.isfile(os.path.join(nightly, folder, name))
    check(shown == 2, "the answered messages' image files are not there")
    check(without_nav(page) == without_nav(open(os.path.join(once, "reply@reply.example", "index.html"), "rb").read()),
          "the reply's page differs from the one-run archive's")
    return shown


def mid_links(work):
    """A message that names one of an earlier run by mid: (not a reply: nothing in its
    References): its link and image go to that message's page and file, as in one run."""
    png = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                         "1f15c4890000000d49444154789c6360000002000185d3a7e50000000049454e44ae426082")).decode()
    a = mail("first@mid.example", "the first", ['Content-Type: multipart/related; boundary="r"'],
             '--r\nContent-Type: text/html\n\n<p>A logo: <img src="cid:logo@mid.example"></p>\n'
             f'--r\nContent-Type: image/png\nContent-ID: <logo@mid.example>\nContent-Transfer-Encoding: base64\n\n{png}\n--r--')
    b = mail("second@mid.example", "the second", ["Content-Type: text/html"],
             '<p>See <a href="mid:first%40mid.example">the first message</a> and its '
             '<img src="mid:first@mid.example/logo@mid.example" alt="logo">.</p>')
    parts = [os.path.join(work, f"m{k}.eml") for k in range(2)]
    open(parts[0], "wb").write(a)
    open(parts[1], "wb").write(b)
    once, nightly = os.path.join(work, "m-once"), os.path.join(work, "m-nightly")
    archive(once, *parts)
    archive(nightly, parts[0])
    archive(nightly, parts[1])
    page = without_nav(open(os.path.join(nightly, "second@mid.example", "index.html"), "rb").read())
    check(b"../first@mid.example/" in page and b"mid:" not in page.split(b"<body", 1)[-1],
          "a mid: naming a message of an earlier run is not linked to its page")
    check(page == without_nav(open(os.path.join(once, "second@mid.example", "index.html"), "rb").read()),
          "the page naming an earlier run's message differs from the one-run archive's")
    return page.count(b"../first@mid.example/")


def kill(work):
    mbox = thread_mbox(work)
    msgs = chunks(open(mbox, "rb").read())
    a, b = os.path.join(work, "a.mbox"), os.path.join(work, "b.mbox")
    open(a, "wb").write(b"".join(msgs[0::2]))
    open(b, "wb").write(b"".join(msgs[1::2]))
    base, ref = os.path.join(work, "base"), os.path.join(work, "ref")
    archive(base, a)
    shutil.copytree(base, ref)
    archive(ref, b)
    want = {k: v[0] for k, v in tree(ref).items()}
    cases = [("step", s) for s in ("after-commit", "mid-move", "mid-put", "mid-derived")] + [("time", None)] * 4
    rnd = random.Random(50)
    for n, (how, step) in enumerate(cases):
        d = os.path.join(work, f"k{n}")
        shutil.copytree(base, d)
        if how == "step":
            r = archive(d, b, env=dict(os.environ, MIMEURI_ARCHIVE_KILL=step), expect=-9)
        else:
            p = subprocess.Popen([BIN, "archive", "--quiet", d, b])
            time.sleep(rnd.uniform(0.05, 1.5))
            p.kill()
            p.wait()
        for k, (bytes_, _) in tree(d).items():
            # A temporary lives under .mimeuri/tmp, never beside the file it becomes: a run
            # killed between a write and its rename leaves nothing a web server would serve.
            check(".tmp-" not in k,
                  f"{how} {step}: the temporary {k} left in the published tree")
            if k.endswith(".html"):
                check(bytes_.rstrip().endswith(b"</html>"), f"{how} {step}: {k} half written")
        archive(d, b)
        got = {k: v[0] for k, v in tree(d).items()}
        check(got == want, f"killed ({how} {step}), then run again: differs from the uninterrupted run in "
              f"{sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))[:5]}")
    print(f"kill: {len(cases)} runs killed and finished by the next; each the uninterrupted run's archive")


def mail(mid, subject, headers, body, parent=None):
    h = [f"From: Sender <s@x.example>", f"Subject: {subject}", "Date: Tue, 3 Feb 2026 10:00:00 +0000",
         f"Message-ID: <{mid}>", "MIME-Version: 1.0"] + headers
    if parent:
        h += [f"In-Reply-To: <{parent}>", f"References: <{parent}>"]
    return ("\n".join(h) + "\n\n" + body + "\n").encode()


def attacks(work):
    xss = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    m = {
        "obj@x.example": mail("obj@x.example", "obj", ['Content-Type: multipart/mixed; boundary="b"'],
                              "--b\nContent-Type: text/plain\n\nsee attached\n--b\nContent-Type: application/octet-stream\n"
                              "Content-Disposition: attachment; filename=\"evil.obj\"\n\n<html><script>alert(1)</script></html>\n--b--"),
        "cid@x.example": mail("cid@x.example", "cid", ['Content-Type: multipart/related; boundary="b"'],
                              "--b\nContent-Type: text/html\n\n<img src=\"cid:p@x\">\n--b\nContent-Type: text/html\n"
                              "Content-ID: <p@x>\nContent-Disposition: inline; filename=\"image.png\"\n\n"
                              "<script>alert(1)</script>\n--b--"),
        "hdr@x.example": mail("hdr@x.example", "hdr", ["<script>alert(1)</script>: x", "Content-Type: text/plain"], "hi"),
        "nocolon@x.example": mail("nocolon@x.example", "a header line with no colon",
                                  ["Doesnt matter", "Content-Type: text/plain"], "x", parent="root@x.example"),
        "deep@x.example": mail("deep@x.example", "deep", ['Content-Type: multipart/mixed; boundary="d0"'],
                               "".join(f"--d{k}\nContent-Type: multipart/mixed; boundary=\"d{k + 1}\"\n\n" for k in range(200))
                               + "--d200\nContent-Type: text/plain\n\ndeep\n"),
        "xss@x.example": mail("xss@x.example", "Subject " + xss, ["Content-Type: text/plain"], "x"),
        "long@x.example": mail("long@x.example", "long", ['Content-Type: multipart/mixed; boundary="b"'],
                               "--b\nContent-Type: text/plain\n\nx\n--b\nContent-Type: image/png\nContent-Disposition: attachment; "
                               f"filename=\"{'a' * 300}.png\"\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n--b--"),
        "we/ird$%1@x.example": mail("we/ird$%1@x.example", "an id no path may hold", ["Content-Type: text/plain"], "w"),
        "root@x.example": mail("root@x.example", "thread", ["Content-Type: text/plain"], "root"),
        "private@x.example": mail("private@x.example", "secret", ["Content-Type: text/plain"],
                                  "PRIVATE-MARKER-7f3a9 do not publish", parent="root@x.example"),
        "after@x.example": mail("after@x.example", "Re: thread", ["Content-Type: text/plain"], "later",
                                parent="private@x.example"),
    }
    md = os.path.join(work, "Maildir")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(md, sub))
    for n, (mid, b) in enumerate(m.items()):
        open(os.path.join(md, "new", f"{1000 + n}.M{n}P1.host"), "wb").write(b)
    out = os.path.join(work, "arch")
    archive(out, md)
    files = tree(out)
    names = [k for k in files if not k.startswith(".mimeuri")]
    for k in names:
        base = os.path.basename(k)
        ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
        # Served by a web server by its name: only what never runs, or a page mimeuri wrote.
        check(ext in ("html", "txt", "png", "css", "atom", "mbox"), f"{k}: a file a server may serve as it likes")
        check(len(base.encode()) <= 110, f"{k}: a name of {len(base.encode())} bytes")
        if ext == "html" and not k.startswith(("threads/", "by-")) and k != "index.html":
            check(b"<script" not in files[k][0].lower(), f"{k}: holds a script")
    check(not [k for k in names if k.startswith("obj@x.example/") and k.endswith(".obj")], "the .obj kept its name")
    check([k for k in names if k.startswith("cid@x.example/image.png")] and
          not [k for k in names if k == "cid@x.example/image.png"], "the cid: HTML part named image.png kept its name")
    check(os.path.exists(os.path.join(out, "deep@x.example", "index.html")), "the deep message has no page")
    check(os.path.exists(os.path.join(out, address("we/ird$%1@x.example"), "index.html")),
          "the id with '/', '$' and '%' has no page at its hashed address")
    check(address("we/ird$%1@x.example").startswith("id-"), "the test's own rule took we/ird$%1@x.example as plain")
    for k in names:
        if k.endswith((".html", ".atom")) and "xss@x.example" not in k:
            b = files[k][0]
            check(b"<script>alert" not in b and b"<img src=x" not in b, f"{k}: the Subject's markup is markup")
            if k in ("index.html", "feed.atom") or k.startswith("by-"):
                check(b"&lt;script&gt;alert(1)&lt;/script&gt;" in b, f"{k}: the Subject is not shown as text")
    check_atom(os.path.join(out, "feed.atom"))
    # The private message: removed, and every trace of it.
    thread_of = lambda: open(os.path.join(out, "threads", "root@x.example.mbox"), "rb").read()
    check(b"PRIVATE-MARKER-7f3a9" in thread_of(), "the private message is not in its thread mbox to begin with")
    r = subprocess.run([BIN, "archive", "--remove=<private@x.example>", out], capture_output=True, text=True)
    check(r.returncode == 0, f"--remove: exit {r.returncode} {r.stderr}")
    check(not os.path.exists(os.path.join(out, "private@x.example")), "the private message's folder is still there")
    # (its reply's own bytes, in the thread mbox, still name it in In-Reply-To: they are the reply's)
    for k, (b, _) in tree(out).items():
        check(b"PRIVATE-MARKER-7f3a9" not in b, f"{k}: holds the removed message")
        if not k.endswith(".mbox"):
            check(b"private@x.example" not in b and b"secret" not in b, f"{k}: names the removed message")
    state = open(os.path.join(out, ".mimeuri", "state.sqlite"), "rb").read()
    check(b"PRIVATE-MARKER-7f3a9" not in state, "the state file still holds the removed message's bytes")
    check(os.path.exists(os.path.join(out, "after@x.example", "index.html")), "its reply lost its page")
    print(f"attacks: {len(m)} messages, {len(names)} files; the private one removed without a trace")


def main():
    corpus_or_skip(CORPUS)
    with tempfile.TemporaryDirectory() as work:
        {"flow": flow, "kill": kill, "attacks": attacks}[MODE](work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
