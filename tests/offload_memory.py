#!/usr/bin/env python3
"""Memory bounded by the piece size, not the attachment (issue 51): a message with one 64 MiB
attachment (base64, 88 MiB of text) is offloaded and restored as a pipe filter, and each run's
peak RSS (wait4's ru_maxrss, the kernel's count) must stay under 48 MiB, well below the part
itself. Before restore streamed the stored file into the output it held the restored part
whole (about 2.8 times the part: 180 MiB here, 1.43 GB for a 512 MiB part). The restored
message must still be the input byte for byte (compared by SHA-256, not held twice).
In /dev/shm when it is there, so that a slow disk does not make the test slow.
Usage: offload_memory.py MIMEURI
"""
import base64, hashlib, os, subprocess, sys, tempfile

MIMEURI = sys.argv[1]
PART_MIB = 64
BOUND_KB = 48 << 10


def write_message(path):
    h = hashlib.sha256()
    with open(path, "wb") as f:
        def put(b):
            h.update(b)
            f.write(b)
        put(b"From: a@example.org\nTo: b@example.org\nSubject: big\nMIME-Version: 1.0\n"
            b"Content-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nHello\n\n"
            b"--B\nContent-Type: application/octet-stream; name=\"big.bin\"\n"
            b"Content-Disposition: attachment; filename=\"big.bin\"\nContent-Transfer-Encoding: base64\n\n")
        block = bytes(range(256)) * (57 * 64)  # 57 * 16 KiB: whole base64 lines
        for i in range((PART_MIB << 20) // len(block)):
            put(base64.encodebytes(block[i % 251:] + block[:i % 251]))
        put(b"--B--\n")
    return h.hexdigest()


def peak_kb(args, out_path):
    """The run's exit status and peak RSS in KiB (Linux: ru_maxrss is in KiB)."""
    with open(out_path, "wb") as out:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.execv(MIMEURI, [MIMEURI, *args])
        _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def main():
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    problems = []
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        src, off, back, store = (os.path.join(tmp, x) for x in ("big.eml", "off.eml", "back.eml", "store"))
        os.makedirs(store)
        digest = write_message(src)
        rc, kb = peak_kb(["--offload-min=1000000", f"--offload-dir={store}", "--offload-url=https://f.example/{name}", src],
                         off)
        print(f"offload of a {PART_MIB} MiB part: exit {rc}, peak RSS {kb} KiB")
        if rc != 0 or os.path.getsize(off) > 4096:
            problems.append(f"the part was not offloaded (exit {rc}, {os.path.getsize(off)} bytes out)")
        if kb > BOUND_KB:
            problems.append(f"offload's peak RSS {kb} KiB is over {BOUND_KB} KiB")
        rc, kb = peak_kb(["--offload-restore", f"--offload-dir={store}", off], back)
        print(f"restore of a {PART_MIB} MiB part: exit {rc}, peak RSS {kb} KiB")
        if rc != 0 or sha256_of(back) != digest:
            problems.append(f"the restored message is not the input (exit {rc})")
        if kb > BOUND_KB:
            problems.append(f"restore's peak RSS {kb} KiB is over {BOUND_KB} KiB")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


sys.exit(main())
