#!/usr/bin/env python3
"""--offload-min then --offload-restore over the whole corpus gives every message back byte for
byte (issue 51), and the store's faults leave no message pointing nowhere.

  - the corpus copied, offloaded in place at 1,000 and 100,000 bytes (--jobs=1 and 2), then
    restored in place: every file cmp-identical with the corpus; at 1,000 bytes parts must have
    been offloaded (the report says so) and every offloaded part's file is in the store, named
    by HMAC-SHA-256 under the store's key (checked here with Python's hmac, a second reader);
  - the same after --url-map moved the links (the external-body pass rewrites the URL);
  - `mimeuri offload-verify`: 0 when every reference has its file, 1 with an orphan file,
    65 with a dangling reference, each listed;
  - the stored files synced, renamed and their folder synced before the message is written
    (strace), with --jobs=1 and 2;
  - faults: a full disk (a 64 KiB tmpfs in a private mount namespace) is a temporary failure:
    exit 75, nothing written, no file left in the store; a file deleted and a file changed:
    that part is left as it is, the report says "missing"/"mismatch", the exit status is 65,
    and the message's other offloaded part is restored.
Usage: offload_roundtrip.py MIMEURI CORPUS_DIR
"""
import base64, filecmp, hashlib, hmac, json, os, shutil, subprocess, sys, tempfile

MIMEURI, CORPUS = sys.argv[1], sys.argv[2]
URL = "https://files.example.org/{name}/{filename}"
problems = []


def fail(msg):
    problems.append(msg)


def run(args, **kw):
    return subprocess.run([MIMEURI, *args], capture_output=True, **kw)


def reports(path):
    out = []
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            out.extend(json.loads(line).get("offload", []))
    return out


def corpus_files(root):
    files = []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            if os.path.relpath(p, root) in ("INDEX.tsv", "MANIFEST.tsv", "SOURCES.md"):
                continue
            if os.path.getsize(p) > 0:
                files.append(p)
    return sorted(files)


def in_place(files, args, report, allowed=(0,)):
    r = run(["--in-place", "--force-read-only", f"--report={report}", *args, *files])
    if r.returncode not in allowed:
        fail(f"{args}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-400:]}")


def round_trip(tmp, threshold, jobs, url_map=False):
    work, store = os.path.join(tmp, "c"), os.path.join(tmp, "store")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(CORPUS, work)
    os.mkdir(store)
    files = corpus_files(work)
    common = [f"--jobs={jobs}", "--passes=offload"]
    in_place(files, [*common, f"--offload-min={threshold}", f"--offload-dir={store}", f"--offload-url={URL}"],
             os.path.join(tmp, "r1.json"))
    made = [e for e in reports(os.path.join(tmp, "r1.json")) if e["action"] == "offloaded"]
    if threshold <= 1000 and len(made) < 50:
        fail(f"threshold {threshold}: only {len(made)} parts offloaded")
    key = open(os.path.join(store, ".key"), "rb").read()
    for e in made:
        p = os.path.join(store, e["name"])
        data = open(p, "rb").read() if os.path.exists(p) else None
        if data is None or hmac.new(key, data, hashlib.sha256).hexdigest() != e["name"] or len(data) != e["size"]:
            fail(f"threshold {threshold}: stored file {e['name']} missing or not named by its HMAC")
    changed = sum(1 for f in files if not filecmp.cmp(f, os.path.join(CORPUS, os.path.relpath(f, work)), shallow=False))
    if made and changed == 0:
        fail(f"threshold {threshold}: parts offloaded but no file changed")
    if url_map:
        in_place(files, ["--passes=external-body", "--url-map=https://files.example.org/=https://archive.example.net/"],
                 os.path.join(tmp, "rm.json"))
    # --offload-restore implies --strict: the corpus's unparseable messages make it exit 65.
    in_place(files, [*common, "--offload-restore", f"--offload-dir={store}"], os.path.join(tmp, "r2.json"), (0, 65))
    restored = [e for e in reports(os.path.join(tmp, "r2.json")) if e["action"] == "restored"]
    left = [e for e in reports(os.path.join(tmp, "r2.json")) if e["action"] != "restored"]
    if left:
        fail(f"threshold {threshold} jobs {jobs}: parts not restored: {left[:3]}")
    if len(restored) != len(made):
        fail(f"threshold {threshold} jobs {jobs}: {len(made)} offloaded, {len(restored)} restored")
    for f in files:
        orig = os.path.join(CORPUS, os.path.relpath(f, work))
        if not filecmp.cmp(f, orig, shallow=False):
            fail(f"threshold {threshold} jobs {jobs} url-map {url_map}: {os.path.relpath(f, work)} not restored byte for byte")
    print(f"threshold {threshold} jobs {jobs} url-map {url_map}: {len(made)} offloaded, {len(restored)} restored,"
          f" {changed} of {len(files)} files changed and given back")


def two_attachments(crlf, sizes=(5000, 7000)):
    parts = []
    for i, size in enumerate(sizes):
        body = base64.encodebytes(bytes((i * 7 + k) % 251 for k in range(size))).decode()
        parts.append(f"--B\nContent-Type: application/octet-stream; name=\"f{i}.bin\"\nContent-Disposition: attachment;"
                     f" filename=\"f{i}.bin\"\nContent-Transfer-Encoding: base64\n\n{body}")
    text = ("From: a@example.org\nTo: b@example.org\nSubject: two\nMIME-Version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nHello\n\n"
            + "".join(parts) + "--B--\n")
    return text.replace("\n", "\r\n").encode() if crlf else text.encode()


def verify(store, path, status, lines):
    """`mimeuri offload-verify`: its exit status and what it lists."""
    r = subprocess.run([MIMEURI, "offload-verify", store, path], capture_output=True, text=True)
    if r.returncode != status or r.stdout.splitlines() != lines:
        fail(f"offload-verify: exit {r.returncode} (want {status}), listed {r.stdout.splitlines()} (want {lines})")


def faults(tmp):
    src = os.path.join(tmp, "two.eml")
    open(src, "wb").write(two_attachments(False))
    # A full disk: the first attachment fits, the second does not: exit 75, no output, no
    # temporary file left (the first file stays, referenced by nothing: offload-verify lists it).
    open(src, "wb").write(two_attachments(False, (30000, 60000)))
    full = os.path.join(tmp, "full")
    os.makedirs(full, exist_ok=True)
    script = (f"mount -t tmpfs -o size=64k tmpfs {full} && {MIMEURI} --offload-min=1000 --offload-dir={full} "
              f"--offload-url='{URL}' --on-error=tempfail {src} > {tmp}/full.out; echo $? > {tmp}/full.rc; "
              f"ls -A {full} > {tmp}/full.ls")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], capture_output=True)
    if r.returncode != 0 or not os.path.exists(f"{tmp}/full.rc"):
        fail(f"full-disk fault could not be set up: {r.stderr.decode(errors='replace')[-200:]}")
    else:
        rc = open(f"{tmp}/full.rc").read().strip()
        left = open(f"{tmp}/full.ls").read().split()
        if rc != "75" or os.path.getsize(f"{tmp}/full.out") != 0 or any(n.startswith(".tmp") for n in left):
            fail(f"full disk: exit {rc}, output {os.path.getsize(f'{tmp}/full.out')} bytes, store holds {left}")
    # Deleted and changed files.
    for crlf in (False, True):
        open(src, "wb").write(two_attachments(crlf))
        store = os.path.join(tmp, f"s{int(crlf)}")
        os.makedirs(store, exist_ok=True)
        off = run([f"--offload-min=1000", f"--offload-dir={store}", f"--offload-url={URL}", src]).stdout
        open(os.path.join(tmp, "off.eml"), "wb").write(off)
        names = [n for n in os.listdir(store) if not n.startswith(".")]
        if len(names) != 2:
            fail(f"two attachments, {len(names)} files stored")
            continue
        verify(store, f"{tmp}/off.eml", 0, [])
        orphan = os.path.join(store, "0" * 64)
        open(orphan, "wb").write(b"")
        verify(store, f"{tmp}/off.eml", 1, [f"orphan {'0' * 64}"])
        os.unlink(orphan)
        for how in ("missing", "mismatch"):
            victim = os.path.join(store, sorted(names)[0])
            keep = open(victim, "rb").read()
            if how == "missing":
                os.unlink(victim)
                verify(store, f"{tmp}/off.eml", 65, [f"dangling {sorted(names)[0]} {tmp}/off.eml"])
            else:
                open(victim, "ab").write(b"x")
            r = run(["--offload-restore", f"--offload-dir={store}", f"--report={tmp}/f.json", f"{tmp}/off.eml"])
            entries = reports(f"{tmp}/f.json")
            left = [e for e in entries if e["action"] == "left"]
            if r.returncode != 65 or len(left) != 1 or left[0].get("reason") != how or left[0]["name"] != sorted(names)[0]:
                fail(f"{how} (crlf {crlf}): exit {r.returncode}, entries {entries}")
            if b"x-mimeuri-offload=\"1 " + sorted(names)[0].encode() not in r.stdout:
                fail(f"{how}: the part whose file is {how} was not left as it was")
            if sum(1 for e in entries if e["action"] == "restored") != 1 or b"f1.bin" not in r.stdout:
                fail(f"{how}: the other part was not restored")
            open(victim, "wb").write(keep)
        r = run(["--offload-restore", f"--offload-dir={store}", f"{tmp}/off.eml"])
        if r.returncode != 0 or r.stdout != open(src, "rb").read():
            fail(f"crlf {crlf}: with both files back the message is not restored byte for byte")


def b64(data):
    return base64.encodebytes(data).decode()


def left_alone(tmp):
    """Parts that are left, each with its reason, and no file stored for any of them: an
    attachment the HTML names as cid: with its '@' %-encoded (RFC 2392), the message's own
    text, a quoted-printable attachment; and a base64 part that looked large enough but decodes
    to 4,999 bytes with --offload-min=5000 (left silently, no orphan file)."""
    qp = "".join(f"line {k} =3D caf=C3=A9\n" for k in range(400))
    text = ("From: a@example.org\nTo: b@example.org\nSubject: left\nMIME-Version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=\"B\"\n\n"
            "--B\nContent-Type: text/html\n\n<p><img src=\"cid:img%40example.org\"></p>\n\n"
            "--B\nContent-Type: image/png\nContent-ID: <img@example.org>\nContent-Disposition: attachment;"
            " filename=\"i.png\"\nContent-Transfer-Encoding: base64\n\n" + b64(bytes(6000)) +
            "--B\nContent-Type: text/plain\n\n" + "words " * 1200 + "\n\n"
            "--B\nContent-Type: text/csv\nContent-Disposition: attachment; filename=\"q.csv\"\n"
            "Content-Transfer-Encoding: quoted-printable\n\n" + qp + "\n"
            "--B\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename=\"s.bin\"\n"
            "Content-Transfer-Encoding: base64\n\n" + b64(bytes(range(256)) * 19 + bytes(135)) + "--B--\n")
    src, store = os.path.join(tmp, "left.eml"), os.path.join(tmp, "left-store")
    open(src, "w").write(text)
    os.makedirs(store)
    r = run(["--offload-min=5000", f"--offload-dir={store}", f"--offload-url={URL}", f"--report={tmp}/l.json", src])
    got = [(e["part"], e["action"], e.get("reason")) for e in reports(f"{tmp}/l.json")]
    want = [("2", "left", "html-target"), ("3", "left", "message-text"), ("4", "left", "encoding")]
    if r.returncode != 0 or got != want or r.stdout != text.encode():
        fail(f"parts left: exit {r.returncode}, entries {got} (want {want}), output changed: {r.stdout != text.encode()}")
    stored = [n for n in os.listdir(store) if not n.startswith(".")]
    if stored:
        fail(f"parts left, yet files stored: {stored}")


def durable_first(tmp):
    """The order of the system calls (strace -f, --in-place, --jobs=1 and 2): the stored file
    is synced, renamed to its name and its folder synced before the message's new file is
    opened, so a run killed at any point never leaves a message pointing to a file that was
    not durably there."""
    import re
    if not shutil.which("strace"):
        fail("no strace (Debian package strace)")
        return
    for jobs in (1, 2):
        src, store, trace = os.path.join(tmp, f"d{jobs}.eml"), os.path.join(tmp, f"d{jobs}"), os.path.join(tmp, "st")
        open(src, "wb").write(two_attachments(False))
        os.makedirs(store)
        open(os.path.join(store, ".key"), "wb").write(os.urandom(32))  # made before: its own sync aside
        subprocess.run(["strace", "-f", "-e", "trace=openat,rename,fsync", "-e", "signal=none", "-o", trace, MIMEURI,
                        "--in-place", f"--jobs={jobs}", "--offload-min=1000", f"--offload-dir={store}",
                        f"--offload-url={URL}", src], capture_output=True)
        calls = [line.split(None, 1)[1] for line in open(trace) if " " in line]
        fd_of = lambda c: c.rsplit("= ", 1)[-1].strip()
        steps, tmpfd, dirfd = [], None, None
        for c in calls:
            if re.match(r'openat\(.*"' + re.escape(store) + r'/\.tmp-', c):
                tmpfd = fd_of(c)
            elif tmpfd and c.startswith(f"fsync({tmpfd})"):
                steps.append("sync file")
                tmpfd = None
            elif c.startswith("rename(") and re.search(r'/[0-9a-f]{64}"', c):
                steps.append("rename")
            elif re.match(r'openat\(AT_FDCWD, "' + re.escape(store) + r'", .*O_DIRECTORY', c):
                dirfd = fd_of(c)
            elif dirfd and c.startswith(f"fsync({dirfd})"):
                steps.append("sync folder")
                dirfd = None
            elif ".mimeuri-" in c and "O_CREAT" in c:
                steps.append("message")
        if steps != ["sync file", "rename", "sync folder"] * 2 + ["message"]:
            fail(f"--jobs={jobs}: the order of the writes is {steps}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        durable_first(tmp)
        left_alone(tmp)
        faults(tmp)
        for threshold, jobs in ((1000, 1), (1000, 2), (100000, 1)):
            round_trip(tmp, threshold, jobs)
        round_trip(tmp, 1000, 1, url_map=True)
    for p in problems[:40]:
        print("FAIL:", p)
    return 1 if problems else 0


sys.exit(main())
