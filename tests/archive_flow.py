#!/usr/bin/env python3
"""Archives beyond one run (issue 17), end to end with the real binary over corpus messages.

    archive_flow.py BIN CORPUS shards|parallel|maildir|notmuch

shards:   three mboxes of corpus messages, each with a message whose HTML refers (mid:,
          mid:msg/cid) to messages of the others. One run over all three is the reference;
          `mimeuri index` over them, then one run per shard with --mid-index, must give the
          same bytes and the same references (status, target, target message, where it
          lives); every report offset points at its message's "From " line, every target
          offset at the target's.
parallel: the same flow as GNU parallel runs it: one job per mbox (-k), and --pipepart over
          the concatenated archive (--recstart 'From ' --recend '\\n\\n', -k): one run's bytes
          either way.
maildir:  a second `mimeuri index` over a Maildir reads only what is new or changed (by name,
          size and mtime), moves what an IMAP server renamed, forgets what was deleted.
notmuch:  a notmuch database built with `notmuch new` resolves mid: and mid:msg/cid.

The expected resolutions are fixed by construction (which message carries which
Message-ID and Content-ID, read from the corpus files' own header fields), not taken from
mimeuri's output. Skipped (tests/skip.py) when GNU parallel, notmuch or the corpus is missing.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from skip import corpus_or_skip, skip  # noqa: E402  (tests/skip.py)

BIN, CORPUS, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
FROM_LINE = b"From archive@example.org Thu Jan  1 00:00:00 2026\n"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


SIMPLE_ID = re.compile(rb"^message-id:[ \t]*<([A-Za-z0-9._%+=$-]+@[A-Za-z0-9.-]+)>[ \t]*\r?$", re.I | re.M)
SIMPLE_CID = re.compile(rb"^content-id:[ \t]*<([A-Za-z0-9._%+=$-]+@[A-Za-z0-9.-]+)>[ \t]*\r?$", re.I | re.M)


def corpus_messages():
    """Single corpus messages with one plain Message-ID: (path, bytes, id, [content-ids])."""
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(CORPUS, "INDEX.tsv"))][1:]
    out, seen = [], set()
    for r in sorted(rows):
        path, size, is_mbox, malformed, rfc822, n_msgs = r[0], int(r[1]), r[7], r[8], r[14], r[16]
        if is_mbox != "0" or malformed != "0" or rfc822 != "0" or n_msgs != "1" or size > 200_000:
            continue
        data = open(os.path.join(CORPUS, path), "rb").read()
        head = data.split(b"\n\n", 1)[0].split(b"\r\n\r\n", 1)[0]
        ids = SIMPLE_ID.findall(head)
        if len(ids) != 1 or len(re.findall(rb"^message-id:", head, re.I | re.M)) != 1 or ids[0] in seen:
            continue
        if re.search(rb"^From ", data, re.M) or b"\r" in data.replace(b"\r\n", b""):
            continue  # no body line to quote, no bare CR: the mbox holds the file's bytes as they are
        cids = [c.decode() for c in SIMPLE_CID.findall(data)]
        if len(set(cids)) != len(cids):
            continue
        seen.add(ids[0])
        out.append((path, data if data.endswith(b"\n") else data + b"\n", ids[0].decode(), cids))
    return out


def mbox_entry(data):
    return FROM_LINE + data + b"\n"


def linker(mid, refs):
    """An HTML message whose links are the given mid: URLs."""
    body = "".join('<p><a href="%s">r%d</a></p>\n' % (u, i) for i, u in enumerate(refs))
    return ("Message-ID: <%s>\nSubject: links\nMIME-Version: 1.0\nContent-Type: text/html\n\n<html><body>\n%s</body></html>\n"
            % (mid, body)).encode()


def reports(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def message_id_at(path, offset):
    with open(path, "rb") as f:
        f.seek(offset)
        chunk = f.read(200_000)
    if not chunk.startswith(b"From "):
        return None
    head = re.split(rb"\r?\n\r?\n", chunk.split(b"\n", 1)[1], maxsplit=1)[0]
    m = SIMPLE_ID.search(head)
    return m.group(1).decode() if m else ""


def key(r):
    return [(x["url"], x["status"], x["target"], x["target_message"], x["target_source"], x["target_offset"])
            for x in r["refs"]]


def build_shards(d, msgs):
    """Three shards; message k of the selection goes to shard k % 3. Returns (paths, expectations)
    with expectations[url] = (status, target message id or None, wants a section)."""
    shards = [[], [], []]
    for k, m in enumerate(msgs):
        shards[k % 3].append(m)
    with_cid = [(s, m) for s in range(3) for m in shards[s] if m[3]]
    dup = shards[0][0]  # also in shard 2: ambiguous wherever it is looked up
    expect = {}
    paths = []
    for s in range(3):
        other = shards[(s + 1) % 3]
        refs = ["mid:%s" % other[0][2], "mid:%s" % other[1][2], "mid:%s" % shards[s][1][2],
                "mid:%s" % dup[2], "mid:nowhere-%d@archive.example.org" % s]
        # Written as RFC 2392 does not: --mid=repair rewrites them only where they resolve, so
        # the output bytes show whether another shard's message was found.
        loc, dom = other[2][2].split("@")
        refs += ["mid:%%3C%s%%3E" % other[2][2], "mid:%s@%s" % (loc, dom.upper())]
        expect.update({refs[5]: ("resolved", other[2][2], False), refs[6]: ("resolved", other[2][2], False)})
        expect.update({refs[0]: ("resolved", other[0][2], False), refs[1]: ("resolved", other[1][2], False),
                       refs[2]: ("resolved", shards[s][1][2], False), refs[3]: ("ambiguous", dup[2], False),
                       refs[4]: ("dangling", None, False)})
        for t, m in with_cid:
            if t != s and m is not dup:
                url = "mid:%s/%s" % (m[2], m[3][0])
                refs.append(url)
                expect[url] = ("resolved", m[2], True)
                break
        entries = [mbox_entry(m[1]) for m in shards[s]]
        entries.insert(len(entries) // 2, mbox_entry(linker("links-%d@archive.example.org" % s, refs)))
        if s == 2:
            entries.append(mbox_entry(dup[1]))
        p = os.path.join(d, "shard%d.mbox" % (s + 1))
        open(p, "wb").write(b"".join(entries))
        paths.append(p)
    return paths, expect


def check_refs(d, reps, expect, label):
    seen = 0
    for r in reps:
        for x in r["refs"]:
            if x["url"] not in expect:
                continue
            seen += 1
            status, target, section = expect[x["url"]]
            check(x["status"] == status, "%s: %s is %s, not %s" % (label, x["url"], x["status"], status))
            check(x["target_message"] == target, "%s: %s targets %s, not %s" % (label, x["url"], x["target_message"], target))
            if status == "resolved":
                check((x["target"] not in (None, "")) == section, "%s: %s target section %r" % (label, x["url"], x["target"]))
                found = message_id_at(os.path.join(d, x["target_source"]), x["target_offset"])
                check(found == target, "%s: %s: target_offset %s of %s holds %r, not the From line of %s"
                      % (label, x["url"], x["target_offset"], x["target_source"], found, target))
    check(seen >= 21, "%s: only %d of the constructed references reported" % (label, seen))


def shards_mode(d, msgs, parallel):
    paths, expect = build_shards(d, msgs)
    names = [os.path.basename(p) for p in paths]
    one = run([BIN, "--mid=repair", "--report=single.jsonl", "-o", "single.out"] + names, cwd=d)
    check(one.returncode == 0, "one run: exit %d %s" % (one.returncode, one.stderr))
    single = reports(os.path.join(d, "single.jsonl"))
    check_refs(d, single, expect, "one run")
    for r in single:  # every message's offset is its "From " line
        check(message_id_at(os.path.join(d, r["source"]), r["offset"]) is not None,
              "one run: message %d of %s: offset %d is no From line" % (r["index"], r["source"], r["offset"]))
    ix = run([BIN, "index", "-o", "archive.midx"] + names, cwd=d)
    check(ix.returncode == 0, "index: exit %d %s" % (ix.returncode, ix.stderr))
    if not parallel:
        # An index that cannot be read (missing, a file that is no index) is the run's
        # temporary condition: said at the start, and each message that needs it follows
        # --on-error (75 with tempfail, nothing written), never 64 or 66.
        for bad in ("missing.midx", names[1]):
            r = run([BIN, "--mid=repair", "--on-error=tempfail", "--mid-index=" + bad, names[0]], cwd=d)
            check(r.returncode == 75 and not r.stdout and r.stderr.startswith(b"mimeuri: --mid-index: " + bad.encode()),
                  "--mid-index=%s: exit %d, %r" % (bad, r.returncode, r.stderr[:300]))
        # What is refused, with one line naming the file: a file that is no index, for
        # writing; index usage errors (64); a folder that is no Maildir (66) while the other
        # inputs are still indexed.
        for args, status, name in (
                (["index", "-o", names[1], names[0]], 64, names[1].encode()),
                (["index", names[0]], 64, b"-o INDEX"),
                (["index", "-o", "x.midx", "-"], 64, b"standard input"),
                (["index", "-o", "x.midx", ".", names[0]], 66, b"not a Maildir")):
            r = run([BIN] + args, cwd=d)
            check(r.returncode == status and name in r.stderr and r.stderr.count(b"\n") <= 2,
                  "%s: exit %d, %r" % (" ".join(args), r.returncode, r.stderr))
        check(b"1 files" in run([BIN, "index", "-o", "y.midx", ".", names[0]], cwd=d).stderr,
              "index: the good input after a bad one was not indexed")
        # The same file under another name (./x, an absolute path, a link) would hold every
        # message twice and make each Message-ID ambiguous: refused, naming the name it has,
        # as is a second name for a file given earlier in the same run; the index unchanged.
        os.symlink(names[0], os.path.join(d, "link.mbox"))
        before = index_rows(os.path.join(d, "archive.midx"))
        for other in ("./" + names[0], os.path.join(d, names[0]), "link.mbox"):
            r = run([BIN, "index", "-o", "archive.midx", other, names[2]], cwd=d)
            check(r.returncode == 64 and b"as " + names[0].encode() in r.stderr and b"1 unchanged" in r.stderr,
                  "index under a second name %s: exit %d, %r" % (other, r.returncode, r.stderr))
        check(index_rows(os.path.join(d, "archive.midx")) == before, "a second name changed the index")
        r = run([BIN, "index", "-o", "z.midx", names[1], "./" + names[1]], cwd=d)
        check(r.returncode == 64 and b"as " + names[1].encode() in r.stderr, "two names in one run: %r" % r.stderr)
        check(open(os.path.join(d, names[1]), "rb").read().startswith(b"From "), "index -o MBOX wrote into the mbox")
        outs, reps = b"", []
        for k, n in enumerate(names):
            sh = run([BIN, "--mid=repair", "--mid-index=archive.midx", "--report=shard%d.jsonl" % k, n], cwd=d)
            check(sh.returncode == 0, "shard %s: exit %d %s" % (n, sh.returncode, sh.stderr))
            outs += sh.stdout
            reps += reports(os.path.join(d, "shard%d.jsonl" % k))
        label = "sharded"
    else:
        pj = run(["parallel", "-k", "-j3", BIN, "--mid=repair", "--mid-index=archive.midx", "--report=job{#}.jsonl", "{}", ":::"] + names, cwd=d)
        check(pj.returncode == 0, "parallel: exit %d %s" % (pj.returncode, pj.stderr))
        outs = pj.stdout
        reps = sum((reports(os.path.join(d, "job%d.jsonl" % k)) for k in (1, 2, 3)), [])
        label = "parallel -k, a job per mbox"
    check(outs == open(os.path.join(d, "single.out"), "rb").read(), "%s: output differs from one run's" % label)
    check(len(reps) == len(single), "%s: %d report lines, one run %d" % (label, len(reps), len(single)))
    for a, b in zip(single, reps):
        same = all(a[k] == b[k] for k in ("source", "index", "offset", "message_id", "changed")) and key(a) == key(b)
        check(same, "%s: message %s:%d reported differently:\n  one run %s\n  sharded %s" % (label, a["source"], a["index"], a, b))
    check_refs(d, reps, expect, label)
    check(sum(1 for r in single if r["changed"]) > 0, "no message changed: the byte comparison proves little")
    if not parallel:
        return
    # --pipepart over the whole archive: blocks on standard input. The bytes are one run's; the
    # references resolve the same (their positions are the block's, docs/scale.md). The one run
    # compared with is the one over the three shards (its index holds every message before
    # any is planned; one run over one input indexes as it goes, and a later copy of a
    # Message-ID does not make an earlier reference to it ambiguous there).
    archive = os.path.join(d, "archive.mbox")
    with open(archive, "wb") as out:
        for p in paths:
            out.write(open(p, "rb").read())
    run([BIN, "index", "-q", "-o", "whole.midx", "archive.mbox"], cwd=d)
    # --recend too: with --recstart alone GNU parallel also cuts at a "From " inside a line
    # (docs/scale.md); a message starts at a "From " line after an empty line.
    pp = run(["parallel", "--pipepart", "-a", "archive.mbox", "--recstart", "From ", "--recend", "\n\n", "--block", "40k", "-k", "-j2",
              BIN, "--mid=repair", "--mid-index=whole.midx", "--report=pp{#}.jsonl"], cwd=d)
    check(pp.returncode == 0, "--pipepart: exit %d %s" % (pp.returncode, pp.stderr))
    jobs = sorted((f for f in os.listdir(d) if f.startswith("pp") and f.endswith(".jsonl")), key=lambda f: int(f[2:-6]))
    check(len(jobs) > 2, "--pipepart made %d blocks; the test wants several" % len(jobs))
    check(pp.stdout == open(os.path.join(d, "single.out"), "rb").read(), "--pipepart: output differs from one run's")
    blocks = sum((reports(os.path.join(d, f)) for f in jobs), [])
    one_run = single
    check([r["message_id"] for r in blocks] == [r["message_id"] for r in one_run], "--pipepart: other messages reported")
    for a, b in zip(one_run, blocks):
        check([(x["url"], x["status"], x["target_message"]) for x in a["refs"]] ==
              [(x["url"], x["status"], x["target_message"]) for x in b["refs"]],
              "--pipepart: %s resolved differently:\n  one run %s\n  blocks  %s" % (a["message_id"], key(a), key(b)))


SUMMARY = re.compile(rb"(\d+) messages read \(\d+ Message-IDs\) from (\d+) files \((\d+) of them mboxes read from where "
                     rb"they had ended\); (\d+) unchanged, (\d+) moved, (\d+) gone")


def index_rows(path):
    """What an index holds, in a form two indexes of the same files compare equal in."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        files = db.execute("SELECT path, size, messages FROM files ORDER BY path").fetchall()
        msgs = db.execute("SELECT f.path, m.number, m.offset, m.section, m.message_id FROM messages m JOIN files f "
                          "ON f.id = m.file ORDER BY f.path, m.number, m.section").fetchall()
        cids = db.execute("SELECT m.message_id, m.section, c.content_id, c.section FROM cids c JOIN messages m "
                          "ON m.id = c.message ORDER BY 1, 2, 3").fetchall()
        return files, msgs, cids
    finally:
        db.close()


def mbox_append_mode(d, msgs):
    """An mbox that grows is read from where it ended, and the index is what a fresh one over
    the whole file would be; an mbox rewritten otherwise is read again whole."""
    box = os.path.join(d, "box.mbox")
    open(box, "wb").write(b"".join(mbox_entry(m[1]) for m in msgs[13:18]))

    def index(name="box.midx"):
        r = run([BIN, "index", "-o", name, "box.mbox"], cwd=d)
        check(r.returncode == 0, "index: exit %d %s" % (r.returncode, r.stderr))
        m = SUMMARY.search(r.stderr)
        return (int(m.group(1)), int(m.group(3))) if m else None  # messages read, mboxes appended to

    def fresh_equal(what):
        fresh = os.path.join(d, "fresh.midx")
        if os.path.exists(fresh):
            os.unlink(fresh)
        index("fresh.midx")
        check(index_rows(os.path.join(d, "box.midx")) == index_rows(fresh), what + ": the index differs from a fresh one")

    check(index() == (5, 0), "first index of the mbox")
    with open(box, "ab") as f:  # three messages delivered
        f.write(b"".join(mbox_entry(m[1]) for m in msgs[18:21]))
    check(index() == (3, 1), "an mbox with three messages appended: not only they read")
    fresh_equal("after an append")
    check(index() == (0, 0), "an unchanged mbox read again")
    # A mail client expunges the first message and writes the mbox back, then one arrives:
    # larger than before, but not what was indexed plus more. Read again whole.
    data = open(box, "rb").read()
    second = data.index(b"\nFrom ", 1) + 1
    open(box, "wb").write(data[second:] + b"".join(mbox_entry(m[1]) for m in msgs[21:24]))
    check(os.path.getsize(box) > len(data), "the test's rewritten mbox should be larger")
    check(index() == (10, 0), "a rewritten mbox not read again whole")
    fresh_equal("after a rewrite")
    # A message appended with no empty line before its "From " line is no new message to a
    # reader of the whole file: not taken as appended either.
    data = open(box, "rb").read().rstrip(b"\r\n") + b"\n"
    open(box, "wb").write(data)
    index()
    open(box, "ab").write(mbox_entry(msgs[24][1]))
    read, appended = index()
    check(appended == 0, "a \"From \" line after no empty line taken as an appended message")
    fresh_equal("after a glued append")


def maildir_mode(d, msgs):
    md = os.path.join(d, "Maildir")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(md, sub))
    files = []
    for k, m in enumerate(msgs[:12]):
        p = os.path.join(md, "new", "1700000%03d.M%dP1.host" % (k, k))
        open(p, "wb").write(m[1])
        files.append(p)

    def index():
        r = run([BIN, "index", "-o", "md.midx", "Maildir"], cwd=d)
        check(r.returncode == 0, "index: exit %d %s" % (r.returncode, r.stderr))
        m = SUMMARY.search(r.stderr)
        return (int(m.group(2)), int(m.group(4)), int(m.group(5)), int(m.group(6))) if m else None

    def resolves(mid):
        q = os.path.join(d, "q.eml")
        open(q, "wb").write(linker("q@archive.example.org", ["mid:" + mid]))
        r = run([BIN, "--check", "--mid-index=md.midx", "q.eml"], cwd=d)
        x = json.loads(r.stdout)["refs"][0]
        return x["target_source"] if x["status"] == "resolved" else None

    check(index() == (12, 0, 0, 0), "first index: not every file read once")
    check(index() == (0, 12, 0, 0), "second index with nothing new: files read again")
    # Same size and mtime: not read again, so the index still holds what the file had.
    victim, old_id = files[0], msgs[0][2]
    st = os.stat(victim)
    data = open(victim, "rb").read()
    new_id = "x" * len(old_id.split("@")[0]) + "@" + old_id.split("@")[1]
    open(victim, "wb").write(data.replace(old_id.encode(), new_id.encode()))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    check(index() == (0, 12, 0, 0), "a file with its size and mtime unchanged was read again")
    check(resolves(old_id) is not None and resolves(new_id) is None, "the index changed without the file being read")
    # A new file: only it is read.
    extra = os.path.join(md, "new", "1800000000.M99P1.host")
    open(extra, "wb").write(msgs[12][1])
    check(index() == (1, 12, 0, 0), "a new message: not only it read")
    check(resolves(msgs[12][2]) == "Maildir/new/1800000000.M99P1.host", "the new message not found where it is")
    # The IMAP server marks it seen: new/ -> cur/ with flags. Moved, not read.
    seen = os.path.join(md, "cur", "1800000000.M99P1.host:2,S")
    os.rename(extra, seen)
    check(index() == (0, 12, 1, 0), "a renamed file: not moved")
    check(resolves(msgs[12][2]) == "Maildir/cur/1800000000.M99P1.host:2,S", "the moved message not found at its new name")
    # Expunged: forgotten. Touched: read again.
    os.unlink(files[1])
    os.utime(victim, None)
    check(index() == (1, 11, 0, 1), "a deleted file not forgotten, or a touched one not read again")
    check(resolves(msgs[1][2]) is None, "a deleted message still resolves")
    check(resolves(new_id) is not None and resolves(old_id) is None, "the touched file was not read again")
    # The Maildir under a second name: refused, the index left as it was.
    r = run([BIN, "index", "-o", "md.midx", "./Maildir/"], cwd=d)
    check(r.returncode == 64 and b"Maildir already, as Maildir" in r.stderr, "a Maildir under a second name: %r" % r.stderr)
    check(index() == (0, 12, 0, 0), "a Maildir under a second name changed the index")


def notmuch_mode(d, msgs):
    mail = os.path.join(d, "mail")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(mail, sub))
    chosen = [m for m in msgs if m[3]][:3] + [m for m in msgs if not m[3]][:3]
    for k, m in enumerate(chosen):
        open(os.path.join(mail, "cur", "%d.M%d.host:2,S" % (k, k)), "wb").write(m[1])
    cfg = os.path.join(d, "notmuch-config")
    open(cfg, "w").write("[database]\npath=%s\n[new]\ntags=new\n" % mail)
    env = dict(os.environ, NOTMUCH_CONFIG=cfg, HOME=d)
    new = run(["notmuch", "new"], env=env)
    check(new.returncode == 0, "notmuch new: %s" % new.stderr)
    refs = ["mid:" + m[2] for m in chosen] + ["mid:%s/%s" % (m[2], m[3][0]) for m in chosen if m[3]]
    refs += ["mid:%s/no-such-part@archive.example.org" % chosen[0][2], "mid:nowhere@archive.example.org"]
    open(os.path.join(d, "q.eml"), "wb").write(linker("q@archive.example.org", refs))
    # HOME elsewhere: what mimeuri resolves does not depend on the user's notmuch configuration.
    r = run([BIN, "--check", "--notmuch=mail", "q.eml"], cwd=d, env=dict(os.environ, HOME="/nonexistent"))
    check(r.returncode == 0, "--notmuch: exit %d %s" % (r.returncode, r.stderr))
    got = {x["url"]: x for x in json.loads(r.stdout)["refs"]}
    for k, m in enumerate(chosen):
        x = got["mid:" + m[2]]
        check(x["status"] == "resolved" and x["target_source"] == os.path.join(mail, "cur", "%d.M%d.host:2,S" % (k, k)),
              "--notmuch: mid:%s %s at %s" % (m[2], x["status"], x["target_source"]))
        if m[3]:
            y = got["mid:%s/%s" % (m[2], m[3][0])]
            check(y["status"] == "resolved" and y["target"] not in (None, ""), "--notmuch: mid:msg/cid %s" % y)
    check(got["mid:%s/no-such-part@archive.example.org" % chosen[0][2]]["status"] == "dangling", "--notmuch: a missing part")
    check(got["mid:nowhere@archive.example.org"]["status"] == "dangling", "--notmuch: a missing message")
    # A database that cannot be opened is the run's temporary condition, as an --mid-index
    # that cannot be read: said at the start, and a message that needs it follows --on-error
    # (75 with tempfail, nothing written), never 66.
    bad = run([BIN, "--mid=repair", "--on-error=tempfail", "--notmuch=no-such-db", "q.eml"], cwd=d)
    check(bad.returncode == 75 and not bad.stdout and bad.stderr.startswith(b"mimeuri: --notmuch: no-such-db"),
          "--notmuch on a missing database: exit %d, %r" % (bad.returncode, bad.stderr[:300]))


def mbox_moved_mode(d, msgs):
    """An mbox moved away from its indexed name (mv: same size, mtime and bytes) is renamed in
    the index, not read again: each of its Message-IDs stays in the index once. A file of the
    same size and mtime whose bytes differ is read as a new one."""
    d = os.path.join(d, "moved")
    os.mkdir(d)

    def index(name):
        r = run([BIN, "index", "-o", "box.midx", name], cwd=d)
        check(r.returncode == 0, "index %s: exit %d %s" % (name, r.returncode, r.stderr))
        m = SUMMARY.search(r.stderr)
        return (int(m.group(1)), int(m.group(5))) if m else None  # messages read, files moved

    def fresh_rows(name):
        fresh = os.path.join(d, "fresh.midx")
        if os.path.exists(fresh):
            os.unlink(fresh)
        check(run([BIN, "index", "-o", "fresh.midx", name], cwd=d).returncode == 0, "fresh index of " + name)
        return index_rows(fresh)

    data = b"".join(mbox_entry(m[1]) for m in msgs[25:29])
    open(os.path.join(d, "old.mbox"), "wb").write(data)
    check(index("old.mbox") == (4, 0), "first index of old.mbox")
    os.rename(os.path.join(d, "old.mbox"), os.path.join(d, "new.mbox"))
    check(index("new.mbox") == (0, 1), "a moved mbox read again, or not taken as moved")
    check(index_rows(os.path.join(d, "box.midx")) == fresh_rows("new.mbox"),
          "after a move, the index is not what a fresh index of new.mbox is (each Message-ID once, under its new name)")
    check(index("new.mbox") == (0, 0), "the moved mbox read again on the next run")
    # Gone, and another file of the same size and mtime whose last bytes differ: read.
    st = os.stat(os.path.join(d, "new.mbox"))
    other = data[:-3] + (b"X" if data[-3:-2] != b"X" else b"Y") + data[-2:]
    os.unlink(os.path.join(d, "new.mbox"))
    open(os.path.join(d, "other.mbox"), "wb").write(other)
    os.utime(os.path.join(d, "other.mbox"), ns=(st.st_atime_ns, st.st_mtime_ns))
    check(index("other.mbox") == (4, 0), "a different file of the same size and mtime taken as the moved one")


def main():
    if MODE == "parallel" and not shutil.which("parallel"):
        skip("GNU parallel not installed")
    if MODE == "notmuch":
        if not shutil.which("notmuch"):
            skip("notmuch not installed")
        if b"not available" in run([BIN, "--help"]).stdout.split(b"--notmuch", 1)[-1].split(b"\n", 1)[0]:
            skip("built without libnotmuch")
    corpus_or_skip(CORPUS)
    msgs = corpus_messages()
    if len(msgs) < 30:
        skip("the corpus has fewer than 30 single messages with a plain Message-ID")
    with tempfile.TemporaryDirectory(prefix="mimeuri-archive-") as d:
        if MODE in ("shards", "parallel"):
            shards_mode(d, msgs[:45], MODE == "parallel")
        elif MODE == "maildir":
            maildir_mode(d, msgs)
            mbox_append_mode(d, msgs)
            mbox_moved_mode(d, msgs)
        elif MODE == "notmuch":
            notmuch_mode(d, msgs)
        else:
            print("unknown mode", MODE)
            return 2
    print("%s: %d failures" % (MODE, len(failures)))
    return 1 if failures else 0


sys.exit(main())
