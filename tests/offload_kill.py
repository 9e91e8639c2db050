#!/usr/bin/env python3
"""The run killed between the store's file and the message (issue 51): SIGKILL delivered by
strace's fault injection (-e inject=CALL:signal=KILL:when=N) on the Nth fsync, rename, write,
close or openat of the run, for every N until the run gets through untouched, with --in-place
(a file, an mbox of three messages, --jobs=1 and 2) and as a pipe filter. After each kill:

  - the input is never lost: in place, it is either the message as it came (cmp) or the
    offloaded message, and then --offload-restore gives the original back byte for byte;
  - no message is ever left pointing to a file that is not in the store whole: every name
    the output or the rewritten input references is there, and its bytes have that name
    (HMAC-SHA-256 under the store's key, checked here with Python's hmac, a second reader).
    As a pipe, whatever the killed run wrote to its output is held to the same rule.

And a stored file changed after restore checked it and before the output copies it (strace
holds the run at its second openat of the file, -P, while the test appends to it): the copy
is checked against what the check read, so the run fails with a temporary error (75): the
input rewritten in place is left as it came, and a pipe's output stops where the file's
bytes would start (the caller, seeing 75, discards it).

Durability itself (the file and its folder synced before the message is written) is shown
by offload_roundtrip.py's durable_first (the order of the system calls); a kill cannot test
what a power cut would lose, so this test kills at each of those calls instead.
Usage: offload_kill.py MIMEURI
"""
import base64, hashlib, hmac, os, re, shutil, subprocess, sys, tempfile, time

MIMEURI = sys.argv[1]
URL = "https://files.example.org/{name}"
CALLS = ("fsync", "rename", "write", "close", "openat")
problems = []


def message(i, sizes=(5000, 7000)):
    parts = []
    for k, size in enumerate(sizes):
        body = base64.encodebytes(bytes((i * 31 + k * 7 + j) % 251 for j in range(size))).decode()
        parts.append(f"--B\nContent-Type: application/octet-stream; name=\"f{k}.bin\"\n"
                     f"Content-Disposition: attachment; filename=\"f{k}.bin\"\nContent-Transfer-Encoding: base64\n\n{body}")
    return ("From: a@example.org\nTo: b@example.org\nSubject: kill " + str(i) + "\nMIME-Version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nHello\n\n"
            + "".join(parts) + "--B--\n")


def mbox(n):
    return "".join(f"From a@example.org Sat Jan  1 00:00:00 2000\n{message(i)}\n" for i in range(n)).encode()


def names_in(data):
    return set(re.findall(rb'x-mimeuri-offload="1 ([0-9a-f]{64}) ', data))


def store_holds(store, names, what):
    """Every referenced name is a whole file in the store whose bytes have that name."""
    key = open(os.path.join(store, ".key"), "rb").read()
    for n in names:
        p = os.path.join(store, n.decode())
        if not os.path.exists(p):
            problems.append(f"{what}: references {n.decode()[:12]}..., which is not in the store")
        elif hmac.new(key, open(p, "rb").read(), hashlib.sha256).hexdigest() != n.decode():
            problems.append(f"{what}: references {n.decode()[:12]}..., whose file is not whole")


def killed_run(call, n, args, stdout, trace):
    """The run with SIGKILL injected at the nth `call` (counted in each process strace
    follows); whether a process was killed so (a worker killed may be replaced, its message
    planned again, and the run still end well)."""
    r = subprocess.run(["strace", "-f", "-o", trace, "-e", f"trace={call}",
                        "-e", f"inject={call}:signal=KILL:when={n}", MIMEURI, *args],
                       stdout=stdout, stderr=subprocess.PIPE)
    return "killed by SIGKILL" in open(trace, errors="replace").read(), r


def case(tmp, original, mode, jobs):
    """Kills at every call of every kind; returns how many kills were checked."""
    checked = 0
    for call in CALLS:
        for n in range(1, 400):
            store, src, out = (os.path.join(tmp, x) for x in ("store", "in", "out"))
            shutil.rmtree(store, ignore_errors=True)
            os.makedirs(store)
            open(os.path.join(store, ".key"), "wb").write(b"k" * 32)
            open(src, "wb").write(original)
            common = [f"--jobs={jobs}", "--offload-min=1000", f"--offload-dir={store}", f"--offload-url={URL}"]
            what = f"{mode} --jobs={jobs}, killed at {call} #{n}"
            with open(out, "wb") as o:
                args = common + (["--in-place", src] if mode != "pipe" else [src])
                killed, r = killed_run(call, n, args, o, os.path.join(tmp, "trace"))
            result = open(src if mode != "pipe" else out, "rb").read()
            if not killed:
                if r.returncode != 0 or names_in(result) == set():
                    problems.append(f"{what}: the run ended but offloaded nothing")
                store_holds(store, names_in(result), what)
                break
            checked += 1
            store_holds(store, names_in(result), what)
            if mode == "pipe":
                continue
            if result == original:
                continue
            back = subprocess.run([MIMEURI, "--offload-restore", f"--offload-dir={store}", src], capture_output=True)
            if back.returncode != 0 or back.stdout != original:
                problems.append(f"{what}: the input is neither as it came nor restorable (exit {back.returncode})")
        else:
            problems.append(f"{mode}: the run never got past {call} #400")
    return checked


def changed_between(tmp):
    """The file changed between restore's check and its copy: exit 75, nothing of it used."""
    store, src, off = (os.path.join(tmp, x) for x in ("cstore", "c.eml", "c-off.eml"))
    os.makedirs(store)
    open(src, "wb").write(message(0).encode())
    r = subprocess.run([MIMEURI, "--offload-min=1000", f"--offload-dir={store}", f"--offload-url={URL}", src],
                       capture_output=True)
    open(off, "wb").write(r.stdout)
    victim = os.path.join(store, sorted(n for n in os.listdir(store) if not n.startswith("."))[0])
    for mode in ("in-place", "pipe"):
        target = os.path.join(tmp, "c-target.eml")
        shutil.copy(off, target)
        trace, out = os.path.join(tmp, "c-trace"), os.path.join(tmp, "c-out")
        keep = open(victim, "rb").read()
        args = ["--in-place", target] if mode == "in-place" else [target]
        with open(out, "wb") as o:
            p = subprocess.Popen(["strace", "-f", "-o", trace, "-P", victim, "-e", "trace=openat", "-e",
                                  "inject=openat:delay_enter=4000000:when=2", MIMEURI, "--offload-restore",
                                  f"--offload-dir={store}", *args], stdout=o, stderr=subprocess.PIPE)
            # The check's openat done (its line ends "= FD"): the check reads 12 KB at once.
            for _ in range(400):
                if os.path.exists(trace) and re.search(r"openat\(.*\) = \d+", open(trace).read()):
                    break
                time.sleep(0.02)
            time.sleep(0.5)
            open(victim, "ab").write(b"x")
            _, err = p.communicate(timeout=60)
        open(victim, "wb").write(keep)
        what = f"a file changed between check and copy ({mode})"
        if p.returncode != 75 or b"changed after it was checked" not in err:
            problems.append(f"{what}: exit {p.returncode}, {err.decode(errors='replace')[-300:]}")
        if mode == "in-place" and open(target, "rb").read() != r.stdout:
            problems.append(f"{what}: the input was changed")
        if mode == "pipe" and open(out, "rb").read().endswith(b"--B--\n"):
            problems.append(f"{what}: the output was written to its end")


def main():
    if not shutil.which("strace"):
        print("FAIL: no strace (Debian package strace)")
        return 1
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode, original, jobs in (("file", message(0).encode(), 1), ("mbox", mbox(3), 1), ("mbox", mbox(3), 2),
                                     ("pipe", message(0).encode(), 1)):
            total += case(tmp, original, mode, jobs)
        changed_between(tmp)
    for p in problems[:40]:
        print("FAIL:", p)
    print(f"{total} kills checked")
    if total < 20:
        print("FAIL: too few kills were injected: strace's injection did not work")
        return 1
    return 1 if problems else 0


sys.exit(main())
