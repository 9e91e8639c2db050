#!/usr/bin/env python3
"""The service front's memory against part size x connections (issue 43, item 12).

milter_memory.py BIN MB CONNECTIONS [--cte=7bit|quoted-printable|base64] [--lf] [--parts=N]
                 [--check] [--option=OPTION]...

Starts `BIN --milter` (--jobs=2) on a unix socket in a folder of its own, makes a message
whose N HTML parts (MB megabytes of HTML in all) each hold a cid: reference the references
pass repairs (RFC 2392: the Content-ID without its angle brackets; the HTML holds it escaped
and in upper case), and sends it on CONNECTIONS connections at once, speaking the milter
protocol as Postfix does (bench/milter_client.py). Then prints one line:

    front_hwm_kib=K supervisor_kib=S body_mib=B seconds=T

K is the peak resident set of the front process (VmHWM in /proc/PID/status): what the front
held while the messages went through it. With --check, each new body the service handed
back (SMFIR_REPLBODY) is compared with what `BIN` writes for the same message as a batch run
(the message rebuilt as the front rebuilds it); the script exits 1 if one differs.
--lf sends the body with LF line ends (an MTA that passes them as they came). Each --option
is passed to the service and to the batch run (--option=--cid=inline).
"""
import argparse, os, signal, socket, struct, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from milter_client import negotiate, send, send_message, final  # noqa: E402 (the protocol, as Postfix speaks it)


def html_part(size, cte, eol, k):
    """An HTML part of about `size` bytes of HTML with one reference to repair, encoded."""
    line = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 1 + "</p>\n"
    body = f'<html><body><p><img src="CID:&lt;img{k}@example.test&gt;"></p>\n'
    body += line * max(1, size // len(line)) + "</body></html>\n"
    raw = body.encode()
    if cte == "base64":
        import base64
        enc = base64.encodebytes(raw).decode()
    elif cte == "quoted-printable":
        import quopri
        enc = quopri.encodestring(raw).decode()
    else:
        enc = body
    head = f"Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: {cte}\n\n"
    return (head + enc).replace("\n", eol)


def make_message(mb, cte, eol, parts):
    per = mb * (1 << 20) // parts
    out = ""
    for k in range(parts):
        out += "--b" + eol + html_part(per, cte, eol, k) + eol
        out += (f"--b{eol}Content-Type: image/png{eol}Content-ID: <img{k}@example.test>{eol}"
                f"Content-Transfer-Encoding: base64{eol}{eol}iVBORw0KGgo={eol}")
    out += "--b--" + eol
    fields = [(b"From", b"a@example.test"), (b"Message-ID", b"<big@example.test>"),
              (b"MIME-Version", b"1.0"), (b"Content-Type", b'multipart/related; boundary="b"')]
    return fields, out.encode()


def one_message(path, fields, body, results, k):
    s = socket.socket(socket.AF_UNIX)
    for _ in range(200):
        try:
            s.connect(path)
            break
        except OSError:
            time.sleep(0.05)
    steps = negotiate(s)
    send_message(s, steps, fields, body)
    send(s, b"E")
    new_body = bytearray()
    results[k] = (final(s, new_body), bytes(new_body))
    send(s, b"Q")
    s.close()


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def front_of(supervisor):
    """The front: the supervisor's child with more than one thread (libmilter's)."""
    for _ in range(200):
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
                if int(st[1]) == supervisor and status_kib(d, "Threads") > 1:
                    return int(d)
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.05)
    sys.exit("no front process found")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("mb", type=int)
    ap.add_argument("connections", type=int)
    ap.add_argument("--cte", default="7bit")
    ap.add_argument("--lf", action="store_true")
    ap.add_argument("--parts", type=int, default=1)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--option", action="append", default=[])
    a = ap.parse_args()
    eol = "\n" if a.lf else "\r\n"
    fields, body = make_message(a.mb, a.cte, eol, a.parts)
    with tempfile.TemporaryDirectory(prefix="mimeuri-milter-memory.") as d:
        sock = os.path.join(d, "milter.sock")
        env = dict(os.environ, MIMEURI_SYSLOG_SOCKET=os.path.join(d, "none"))
        svc = subprocess.Popen([a.bin, "--milter=unix:" + sock, "--jobs=2"] + a.option, env=env,
                               stderr=subprocess.DEVNULL)
        try:
            front = front_of(svc.pid)
            while not os.path.exists(sock):
                time.sleep(0.05)
            results = [None] * a.connections
            t0 = time.monotonic()
            threads = [threading.Thread(target=one_message, args=(sock, fields, body, results, k))
                       for k in range(a.connections)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            seconds = time.monotonic() - t0
            hwm = status_kib(front, "VmHWM")
            sup = status_kib(svc.pid, "VmRSS")
        finally:
            svc.kill()  # libmilter takes 5 s to end on SIGTERM; nothing here to keep
            svc.wait()
        failed = 0
        for k, r in enumerate(results):
            if r is None or r[0] != b"a" or not r[1]:
                print(f"connection {k}: no new body ({r[0] if r else None})", file=sys.stderr)
                failed = 1
        if a.check and not failed:
            msg = b"".join(n + b": " + v + b"\r\n" for n, v in fields) + b"\r\n" + body
            path = os.path.join(d, "in.eml")
            with open(path, "wb") as f:
                f.write(msg)
            out = subprocess.run([a.bin] + a.option + [path], capture_output=True, check=True).stdout
            want = out.split(b"\r\n\r\n", 1)[1]
            for k, r in enumerate(results):
                if r[1] != want:
                    print(f"connection {k}: the new body differs from the batch run's", file=sys.stderr)
                    failed = 1
        print(f"front_hwm_kib={hwm} supervisor_kib={sup} body_mib={len(body) / (1 << 20):.1f} "
              f"seconds={seconds:.2f}")
        sys.exit(failed)


main()
