#!/usr/bin/env python3
"""The milter service as an admin operates it, over its socket with a milter client written here
(the protocol as Postfix speaks it, version 6): milter_ops.py MIMEURI MODE, MODE one of

  counters          --stats: the counts after messages of every outcome, read back with
                    prometheus_client's text parser (python3-prometheus-client) and checked
                    against the messages sent and the report's own lines; SIGUSR1 logs them
                    (and the service lives on); a reader never sees a partial file while it
                    is rewritten; the file is written at exit.
  logrotate-watch   the real logrotate renames the report file with no postrotate (no
                    systemd, no signal): the service notices and writes a new file.
  logrotate-signal  the packaged snippet's postrotate (debian/mimeuri.logrotate), its pidfile
                    branch (no systemd here), against a service started with --pidfile.
  pidfile           (root) --pidfile with --user=nobody in a folder it may not write: emptied
                    at the end, never left naming a pid that is gone.
  policy            [policy:NAME] groups chosen by envelope (client address IPv4 and IPv6,
                    {auth_authen}, recipient domains, mixed recipients): each message's report
                    line names the policy that matched (none when none did) and shows its
                    setting in effect; a SIGHUP re-reads them, a bad file keeps the old ones.

Either logrotate mode: every message sent before, during and after the rotation has its one
report line in report.jsonl.1 or report.jsonl, and those sent after the reopen in the new file."""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skip import skip  # noqa: E402

MIMEURI, MODE = sys.argv[1], sys.argv[2]
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMFIP_NOHDRS, SMFIP_NOEOH, SMFIP_NOBODY, SMFIP_NR_HDR = 0x20, 0x40, 0x10, 0x80
SMFIP_NOCONNECT, SMFIP_NOMAIL, SMFIP_NORCPT = 0x1, 0x4, 0x8
SMFIP_NR_CONN, SMFIP_NR_MAIL, SMFIP_NR_RCPT = 0x1000, 0x4000, 0x8000


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


class Client:
    """One MTA connection to a unix socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        for _ in range(200):
            try:
                self.s.connect(path)
                break
            except OSError:
                time.sleep(0.05)
        else:
            fail(f"cannot connect to {path}")
        self.send(b"O", struct.pack(">III", 6, 0x1FF, 0x1FFFFF))
        cmd, data = self.reply()
        assert cmd == b"O", cmd
        self.steps = struct.unpack(">III", data[:12])[2]

    def send(self, cmd, data=b""):
        self.s.sendall(struct.pack(">I", len(data) + 1) + cmd + data)

    def exact(self, n):
        buf = b""
        while len(buf) < n:
            got = self.s.recv(n - len(buf))
            if not got:
                fail("the service closed the connection")
            buf += got
        return buf

    def reply(self):
        n = struct.unpack(">I", self.exact(4))[0]
        data = self.exact(n)
        return data[:1], data[1:]

    def envelope(self, client, sender, rcpts, auth=None, daemon=None):
        """The connection's client address (this connection's first call only), with the
        listener's {daemon_name} and {daemon_port} macros when daemon (name, port) is given,
        MAIL FROM with the {auth_authen} macro when auth is given, each RCPT TO, as Postfix
        sends them."""
        if daemon is not None:
            self.send(b"D", b"C{daemon_name}\0" + daemon[0].encode() + b"\0{daemon_port}\0" + daemon[1].encode() + b"\0")
        if client is not None and not self.steps & SMFIP_NOCONNECT:
            family = b"6" if ":" in client else b"4"
            self.send(b"C", b"client.example\0" + family + struct.pack(">H", 25) + client.encode() + b"\0")
            if not self.steps & SMFIP_NR_CONN:
                self.reply()
        if auth is not None:
            self.send(b"D", b"M" + b"{auth_authen}\0" + auth.encode() + b"\0")
        if not self.steps & SMFIP_NOMAIL:
            self.send(b"M", f"<{sender}>".encode() + b"\0")
            if not self.steps & SMFIP_NR_MAIL:
                self.reply()
        for r in rcpts:
            if not self.steps & SMFIP_NORCPT:
                self.send(b"R", f"<{r}>".encode() + b"\0")
                if not self.steps & SMFIP_NR_RCPT:
                    self.reply()

    def message(self, fields, body):
        """Sends one message; the final answer's command byte (a accept, t tempfail, ...)."""
        if not self.steps & SMFIP_NOHDRS:
            for name, value in fields:
                self.send(b"L", name + b"\0" + value + b"\0")
                if not self.steps & SMFIP_NR_HDR:
                    self.reply()
        if not self.steps & SMFIP_NOEOH:
            self.send(b"N")
            self.reply()
        if not self.steps & SMFIP_NOBODY:
            self.send(b"B", body)
            self.reply()
        self.send(b"E")
        self.body = b""  # what the service replaced the body with (SMFIR_REPLBODY chunks)
        while True:
            cmd, self.said = self.reply()
            if cmd == b"b":
                self.body += self.said
            if cmd in b"acrtdy":
                return cmd

    def close(self):
        self.send(b"Q")
        self.s.close()


def repair_message(mid):
    """A message whose one reference the references pass repairs (RFC 2392: the HTML holds
    the Content-ID escaped and in angle brackets)."""
    fields = [(b"From", b"a@example.test"), (b"Message-ID", f"<{mid}>".encode()), (b"MIME-Version", b"1.0"),
              (b"Content-Type", b'multipart/related; boundary="b"')]
    body = (b'--b\r\nContent-Type: text/html\r\n\r\n<p><img src="CID:&lt;x@example.test&gt;"></p>\r\n'
            b"--b\r\nContent-Type: image/png\r\nContent-ID: <x@example.test>\r\n"
            b"Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--b--\r\n")
    return fields, body


def filed_message(mid):
    """A message whose HTML names an image filed as an attachment beside it in a
    multipart/mixed: --related=repair moves it into a multipart/related (RFC 2387), inline."""
    fields = [(b"From", b"a@example.test"), (b"Message-ID", f"<{mid}>".encode()), (b"MIME-Version", b"1.0"),
              (b"Content-Type", b'multipart/mixed; boundary="m"')]
    body = (b'--m\r\nContent-Type: text/html\r\n\r\n<p><img src="cid:y@example.test"></p>\r\n'
            b"--m\r\nContent-Type: image/png\r\nContent-ID: <y@example.test>\r\n"
            b'Content-Disposition: attachment; filename="y.png"\r\n'
            b"Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--m--\r\n")
    return fields, body


def plain_message(mid):
    return [(b"From", b"a@example.test"), (b"Message-ID", f"<{mid}>".encode()), (b"Subject", b"plain")], \
        b"Nothing to change.\r\n"


class Service:
    """mimeuri --milter in a folder of its own; its standard error in self.log()."""

    def __init__(self, folder, args, env=None):
        self.folder = folder
        self.sock = os.path.join(folder, "milter.sock")
        self.err = open(os.path.join(folder, "service.err"), "w+")
        e = dict(os.environ, **(env or {}))
        self.p = subprocess.Popen([MIMEURI, "--no-config", "--milter=unix:" + self.sock, "--jobs=1"] + args,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err, env=e)
        self.wait_log("milter listening")

    def log(self):
        with open(self.err.name) as f:
            return f.read()

    def wait_log(self, pattern, seconds=20, count=1):
        until = time.time() + seconds
        while time.time() < until:
            if len(re.findall(pattern, self.log())) >= count:
                return
            if self.p.poll() is not None:
                fail(f"the service ended ({self.p.returncode}) waiting for {pattern!r}:\n{self.log()}")
            time.sleep(0.05)
        fail(f"no {pattern!r} in the service's log within {seconds} s:\n{self.log()}")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(30)
        if rc != 0:
            fail(f"the service ended with {rc}:\n{self.log()}")


def parse(text):
    from prometheus_client.parser import text_string_to_metric_families
    return {f.name: f for f in text_string_to_metric_families(text)}


def sample(families, family, name, **labels):
    for s in families[family].samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    fail(f"no sample {name}{labels}")


def check_counts(text, sent, report_lines):
    """The file against what was sent and against the report's lines (a second reader)."""
    fam = parse(text)
    for outcome, n in sent.items():
        got = sample(fam, "mimeuri_messages", "mimeuri_messages_total", outcome=outcome)
        if got != n:
            fail(f"mimeuri_messages_total{{outcome={outcome}}} is {got}, {n} were sent:\n{text}")
    total = sum(sent.values())
    if sample(fam, "mimeuri_message_seconds", "mimeuri_message_seconds_count") != total:
        fail(f"the latency histogram counts other than {total} messages:\n{text}")
    buckets = [(float(s.labels["le"]), s.value) for s in fam["mimeuri_message_seconds"].samples
               if s.name == "mimeuri_message_seconds_bucket"]
    if buckets[-1] != (float("inf"), total) or any(a[1] > b[1] for a, b in zip(buckets, buckets[1:])):
        fail(f"the histogram's buckets are not cumulative up to +Inf = {total}: {buckets}")
    if not 0 < sample(fam, "mimeuri_message_seconds", "mimeuri_message_seconds_sum") < total * 10:
        fail("the latency sum is not between 0 and 10 s a message")
    # Each repaired message has one reference repaired; the report says the same.
    repaired = sum(1 for r in report_lines if r["changed"] for ref in r["refs"] if ref["action"] == "repaired")
    if repaired != sent.get("changed", 0):
        fail(f"the report has {repaired} repaired references for {sent.get('changed', 0)} changed messages")
    if sample(fam, "mimeuri_edits", "mimeuri_edits_total", **{"pass": "references"}) != repaired:
        fail(f"mimeuri_edits_total{{pass=references}} is not {repaired}:\n{text}")
    codes = {}
    for r in report_lines:
        for e in r["errors"]:
            codes[e["code"]] = codes.get(e["code"], 0) + 1
    for s in fam["mimeuri_report_errors"].samples:
        if s.value != codes.get(s.labels["code"], 0):
            fail(f"mimeuri_report_errors_total{{code={s.labels['code']}}} is {s.value}, the report has "
                 f"{codes.get(s.labels['code'], 0)}")
    if sum(codes.values()) == 0 and sent.get("passed-on-error", 0) + sent.get("tempfailed", 0):
        fail("failed messages and no error in the report")
    return fam


def report(path):
    lines = []
    for name in (path + ".1", path):
        if os.path.exists(name):
            with open(name) as f:
                lines += [json.loads(line) for line in f]
    return lines


def counters(folder):
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError:
        skip("no prometheus_client (Debian: python3-prometheus-client) to read the counters with")
    stats = os.path.join(folder, "mimeuri.prom")
    rep = os.path.join(folder, "report.jsonl")
    svc = Service(folder, ["--stats=" + stats, "--report=" + rep])
    c = Client(svc.sock)
    for k in range(5):
        if c.message(*repair_message(f"r{k}@example.test")) != b"a":
            fail("a repaired message was not accepted")
    for k in range(7):
        if c.message(*plain_message(f"p{k}@example.test")) != b"a":
            fail("a plain message was not accepted")
    c.close()
    sent = {"changed": 5, "unchanged": 7, "passed-on-error": 0, "tempfailed": 0}
    # SIGUSR1 to the process started (the supervisor): one log line, the file written now.
    svc.p.send_signal(signal.SIGUSR1)
    svc.wait_log(r"counters: messages 12 \(unchanged 7, changed 5, passed-on-error 0, tempfailed 0\); "
                 r"edits references=5 ")
    until = time.time() + 5
    while not os.path.exists(stats) and time.time() < until:
        time.sleep(0.05)
    with open(stats) as f:
        check_counts(f.read(), sent, report(rep))
    # A reader never sees a partial file: read it in a loop while SIGUSR1 has it rewritten.
    seen, bad, stop = set(), [], threading.Event()

    def reader():
        while not stop.is_set():
            with open(stats) as f:
                seen.add(os.fstat(f.fileno()).st_ino)
                text = f.read()
            if not text.endswith("\n") or "mimeuri_front_start_time_seconds " not in text:
                bad.append(text)
            try:
                parse(text)
            except Exception as e:  # noqa: BLE001 (any parse error is the failure)
                bad.append(f"{e}: {text}")

    t = threading.Thread(target=reader)
    t.start()
    began = time.time()
    until = time.time() + 30
    while len(seen) < 20 and time.time() < until:
        svc.p.send_signal(signal.SIGUSR1)
        time.sleep(0.005)
    stop.set()
    t.join()
    if bad:
        fail(f"a reader saw a partial or unreadable file: {bad[0][:300]!r}")
    print(f"a reader saw {len(seen)} versions of the file in {time.time() - began:.1f} s, all whole")
    if len(seen) < 20:
        fail(f"the reader saw {len(seen)} versions of the file only: the test proved nothing")
    if svc.p.poll() is not None:
        fail("SIGUSR1 ended the service")
    # At exit: the last counts, after one more message, with no rewrite for 10 s.
    os.unlink(stats)
    c = Client(svc.sock)
    c.message(*plain_message("last@example.test"))
    c.close()
    stopped = time.time()
    svc.stop()
    sent["unchanged"] += 1
    if not os.path.exists(stats):
        fail("no --stats file written at exit")
    if os.stat(stats).st_mtime < stopped - 0.05:
        fail("the --stats file was last written before SIGTERM, not at exit")
    with open(stats) as f:
        check_counts(f.read(), sent, report(rep))
    if [n for n in os.listdir(folder) if ".tmp." in n]:
        fail(f"temporary files left: {os.listdir(folder)}")
    # Failures: the worker crashes on each message (MIMEURI_FAULT=milter and a header that
    # asks for it, docs/testing.md); passed on, then answered 451.
    # (451 with a text of its own: SMFIR_REPLYCODE, 'y'.)
    for policy, outcome, answer in (("pass", "passed-on-error", b"a"), ("tempfail", "tempfailed", b"y")):
        os.unlink(rep)
        svc = Service(folder, ["--stats=" + stats, "--report=" + rep, "--on-error=" + policy],
                      env={"MIMEURI_FAULT": "milter"})
        c = Client(svc.sock)
        for k in range(3):
            fields, body = repair_message(f"f{k}@example.test")
            if c.message(fields + [(b"X-Fault", b"mimeuri-fault:crash")], body) != answer:
                fail(f"--on-error={policy}: not answered {answer}")
            if answer == b"y" and not c.said.startswith(b"451 4.3.0 "):
                fail(f"--on-error=tempfail: answered {c.said!r}")
        c.close()
        svc.stop()
        with open(stats) as f:
            fam = check_counts(f.read(), {outcome: 3, "changed": 0, "unchanged": 0}, report(rep))
        if sample(fam, "mimeuri_report_errors", "mimeuri_report_errors_total", code="failed") != 3:
            fail(f"--on-error={policy}: not 3 errors 'failed'")
    # The related pass's edits: each filed image moved is one edit, as the report's "related"
    # entries say (a second reader), and no other pass's.
    os.unlink(rep)
    svc = Service(folder, ["--stats=" + stats, "--report=" + rep, "--related=repair"])
    c = Client(svc.sock)
    for k in range(2):
        if c.message(*filed_message(f"m{k}@example.test")) != b"a":
            fail("a message with a filed image was not accepted")
    c.close()
    svc.stop()
    lines = report(rep)
    moved = sum(1 for r in lines for e in r.get("related", []) if e["action"] in ("moved", "marked"))
    if moved != 2:
        fail(f"--related=repair: the report says {moved} parts moved or marked in 2 messages, one each")
    with open(stats) as f:
        fam = parse(f.read())
    for name, n in (("related", 2), ("references", 0), ("data", 0)):
        if sample(fam, "mimeuri_edits", "mimeuri_edits_total", **{"pass": name}) != n:
            fail(f"--related=repair: mimeuri_edits_total{{pass={name}}} is not {n}")
    print("counters: checked")


def logrotate(folder, signalled):
    lr = shutil.which("logrotate") or ("/usr/sbin/logrotate" if os.path.exists("/usr/sbin/logrotate") else None)
    if not lr:
        skip("no logrotate (Debian: logrotate)")
    logs = os.path.join(folder, "log")
    os.mkdir(logs)
    rep = os.path.join(logs, "report.jsonl")
    pidfile = os.path.join(folder, "mimeuri.pid")
    conf = os.path.join(folder, "logrotate.conf")
    with open(os.path.join(SOURCE, "debian", "mimeuri.logrotate")) as f:
        snippet = f.read()
    post = re.search(r"postrotate\n(.*?)\n\s*endscript", snippet, re.S)
    if not post or "/run/mimeuri.pid" not in post.group(1):
        fail("the packaged snippet has no postrotate that signals through /run/mimeuri.pid")
    script = post.group(1).replace("/run/mimeuri.pid", pidfile) if signalled else "        true"
    with open(conf, "w") as f:
        f.write(f"{logs}/*.jsonl {{\n    rotate 3\n    missingok\n    notifempty\n    create 0640\n"
                f"    sharedscripts\n    postrotate\n{script}\n    endscript\n}}\n")
    svc = Service(folder, ["--report=" + rep, "--pidfile=" + pidfile])
    sent, lock, stop = [], threading.Lock(), threading.Event()

    def sender():
        c = Client(svc.sock)
        k = 0
        while not stop.is_set():
            mid = f"m{k}@example.test"
            if c.message(*plain_message(mid)) != b"a":
                fail("a message was not accepted")
            with lock:
                sent.append((mid, time.time()))
            k += 1
            time.sleep(0.01)
        c.close()

    t = threading.Thread(target=sender)
    t.start()
    time.sleep(1)
    r = subprocess.run([lr, "-f", "-s", os.path.join(folder, "state"), conf], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"logrotate failed: {r.stderr}")
    if not os.path.exists(rep + ".1"):
        fail("logrotate did not rotate the report")
    rotated = time.time()
    svc.wait_log("configuration reloaded" if signalled else "the file was renamed or removed; writing to a new one",
                 seconds=10)
    reopened = time.time()
    time.sleep(1)
    stop.set()
    t.join()
    svc.stop()
    old = [json.loads(line)["message_id"] for line in open(rep + ".1")]
    new = [json.loads(line)["message_id"] for line in open(rep)]
    ids = [m for m, _ in sent]
    if sorted(old + new) != sorted(ids):
        fail(f"{len(ids)} messages sent, {len(old)} + {len(new)} report lines, not the same ones")
    after = [m for m, at in sent if at > reopened + 0.1]
    if not after or any(m not in new for m in after):
        fail("a message sent after the reopen is not in the new report file")
    if not new:
        fail("nothing was written to the new report file")
    print(f"logrotate ({'signalled' if signalled else 'watched'}): {len(ids)} messages, {len(old)} lines before "
          f"the reopen, {len(new)} after; reopened {reopened - rotated:.2f} s after logrotate returned")


def pidfile(folder):
    """--pidfile in a folder --user may not write (as /run): emptied at the end, not left
    naming a pid that is gone."""
    if os.geteuid() != 0:
        skip("not root: the service cannot switch to --user=nobody")
    os.chmod(folder, 0o755)
    pid = os.path.join(folder, "mimeuri.pid")
    svc = Service(folder, ["--user=nobody", "--pidfile=" + pid])
    with open(pid) as f:
        if f.read() != f"{svc.p.pid}\n":
            fail("the pidfile does not hold the service's pid")
    svc.stop()
    if os.path.exists(pid) and os.path.getsize(pid) != 0:
        fail("the pidfile is left behind with a pid in it")
    # Where --user may remove it, it is removed.
    os.chmod(folder, 0o777)
    svc = Service(folder, ["--user=nobody", "--pidfile=" + pid])
    svc.stop()
    if os.path.exists(pid):
        fail("the pidfile is left behind in a folder --user may write")
    print("pidfile: emptied, or removed where it may be")


def data_message(mid):
    """A message with one data: image, which --data=attach attaches and --data=check reports."""
    return [(b"From", b"a@example.org"), (b"Message-ID", f"<{mid}>".encode()), (b"MIME-Version", b"1.0"),
            (b"Content-Type", b"text/html")], b'<p><img src="data:image/png;base64,iVBORw0KGgo="></p>\r\n'


POLICIES = """[milter]
report = {report}
stats = {stats}
[policy:internal]
client = 10.0.0.0/8, 2001:db8::/32
passes = none
[policy:submission]
authenticated = yes
data = attach
[policy:port587]
daemon-port = 587
daemon-name = !smtp
passes = none
[policy:lists]
recipient-domain = .example.net
data = off
"""


def counters_now(svc, stats):
    """The counters file as SIGUSR1 has the service write it now."""
    if os.path.exists(stats):
        os.unlink(stats)
    svc.p.send_signal(signal.SIGUSR1)
    until = time.time() + 10
    while not os.path.exists(stats) and time.time() < until:
        time.sleep(0.05)
    with open(stats) as f:
        return f.read()


def policy_counters(svc, stats, cases):
    """The counters by policy (issue 54 item 5) against the cases sent, read with
    prometheus_client's parser: each policy's messages by outcome, its data edits, and the
    build's info; a message no policy matched is counted in the totals only."""
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError:
        skip("no prometheus_client (Debian: python3-prometheus-client) to read the counters with")
    fam = parse(counters_now(svc, stats))
    want = {}
    # submission: the data: image attached; internal, port587: passes=none; lists: data=off.
    for c in cases:
        if c[4]:
            counts = want.setdefault(c[4], {"unchanged": 0, "changed": 0})
            counts["changed" if c[4] == "submission" else "unchanged"] += 1
    for name, outcomes in want.items():
        for outcome, n in outcomes.items():
            got = sample(fam, "mimeuri_policy_messages", "mimeuri_policy_messages_total", policy=name, outcome=outcome)
            if got != n:
                fail(f"mimeuri_policy_messages_total{{policy={name},outcome={outcome}}} is {got}, {n} were sent")
    if sample(fam, "mimeuri_policy_edits", "mimeuri_policy_edits_total", policy="submission", **{"pass": "data"}) != 1:
        fail("mimeuri_policy_edits_total{policy=submission,pass=data} is not 1")
    if sum(s.value for s in fam["mimeuri_policy_messages"].samples) != sum(1 for c in cases if c[4]):
        fail("messages no policy matched are counted under a policy")
    if sample(fam, "mimeuri_build_info", "mimeuri_build_info") != 1:
        fail("mimeuri_build_info is not 1")


def policy(folder):
    """Envelopes that hit each policy and none; the report's policy member and the setting in
    effect (passes=none: nothing repaired; data=attach: the data: image attached; data=off: no
    data member) checked per message; then reloads."""
    rep = os.path.join(folder, "report.jsonl")
    stats = os.path.join(folder, "policy.prom")
    conf = os.path.join(folder, "mimeuri.conf")
    with open(conf, "w") as f:
        f.write(POLICIES.format(report=rep, stats=stats))
    logsock = os.path.join(folder, "log.sock")  # the per-message syslog lines (src/run/syslog.hh)
    log = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    log.bind(logsock)
    log.settimeout(0.2)
    # Read as the lines come: a datagram socket holds only a few unread (net.unix.max_dgram_qlen),
    # and a service whose log reader does not read waits for it, as with a stuck syslog daemon.
    said, reading = [], [True]

    def read_log():
        while reading[0]:
            try:
                said.append(log.recv(65536).decode(errors="replace"))
            except socket.timeout:
                pass
    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    svc = Service(folder, ["--config=" + conf], env={"MIMEURI_SYSLOG_SOCKET": logsock})
    cases = [  # (client, auth, recipients, message, expected policy, check of the report line)
        ("10.1.2.3", None, ["b@example.com"], repair_message, "internal", lambda r: not r["changed"]),
        ("2001:db8::25", None, ["b@example.com"], repair_message, "internal", lambda r: not r["changed"]),
        ("192.0.2.1", None, ["b@example.com"], repair_message, None, lambda r: r["changed"]),
        ("192.0.2.1", "alice", ["b@example.com"], data_message, "submission",
         lambda r: r["changed"] and [d["action"] for d in r["data"]] == ["attached"]),
        ("192.0.2.1", None, ["x@lists.example.net", "y@example.net"], data_message, "lists",
         lambda r: "data" not in r and not r["changed"]),
        # Mixed recipients: the lists policy needs every one of them; the service's own settings.
        ("192.0.2.1", None, ["x@lists.example.net", "y@example.com"], data_message, None,
         lambda r: [d["action"] for d in r["data"]] == ["none"] and not r["changed"]),
        # The first match wins: internal before submission.
        ("10.9.9.9", "bob", ["b@example.com"], data_message, "internal", lambda r: "data" not in r),
        # By listener (Postfix's {daemon_name}, {daemon_port}): the submission port, passes=none;
        # the same port under a listener named smtp is not it (daemon-name = !smtp), nor a
        # connection whose MTA sent no macro.
        ("192.0.2.1", None, ["b@example.com"], repair_message, "port587", lambda r: not r["changed"],
         ("submission", "587")),
        ("192.0.2.1", None, ["b@example.com"], repair_message, None, lambda r: r["changed"], ("smtp", "587")),
        ("192.0.2.1", None, ["b@example.com"], repair_message, None, lambda r: r["changed"], ("submission", "25")),
    ]

    def send_all(cases, tag):
        for k, (client, auth, rcpts, make, _, _, *daemon) in enumerate(cases):
            c = Client(svc.sock)
            c.envelope(client, "a@example.org", rcpts, auth, daemon[0] if daemon else None)
            if c.message(*make(f"{tag}{k}@example.test")) != b"a":
                fail(f"message {tag}{k} was not accepted")
            c.close()

    def check(cases, tag):
        until = time.time() + 10
        ids = {f"{tag}{k}@example.test" for k in range(len(cases))}
        while time.time() < until and not ids <= {r["message_id"] for r in report(rep)}:
            time.sleep(0.05)
        lines = {r["message_id"]: r for r in report(rep)}
        for k, (client, auth, rcpts, _, want, ok, *_) in enumerate(cases):
            r = lines.get(f"{tag}{k}@example.test")
            if r is None:
                fail(f"no report line for {tag}{k}")
            if r.get("policy") != want:
                fail(f"{tag}{k} ({client}, auth {auth}, {rcpts}): policy {r.get('policy')!r}, expected {want!r}")
            if not ok(r):
                fail(f"{tag}{k}: the policy {want!r}'s setting is not in effect: {json.dumps(r)}")

    send_all(cases, "a")
    check(cases, "a")
    time.sleep(0.5)  # the last lines reach the reader
    for mid, line in (("a0", "policy=internal: unchanged"), ("a3", "policy=submission: changed, data: images attached=1")):
        if not any(f"message-id=<{mid}@example.test>: {line}" in x for x in said):
            fail(f"no syslog line with 'message-id=<{mid}@example.test>: {line}':\n" + "\n".join(said))
    if any("a2@example.test>: policy=" in x for x in said):
        fail("a message no policy matched is logged with one")
    policy_counters(svc, stats, cases)
    # A reload: internal now covers 172.16.0.0/12 only; 10.x goes by the service's settings.
    with open(conf, "w") as f:
        f.write(POLICIES.format(report=rep, stats=stats).replace("10.0.0.0/8, 2001:db8::/32", "172.16.0.0/12"))
    svc.p.send_signal(signal.SIGHUP)
    svc.wait_log("configuration reloaded")
    after = [("10.1.2.3", None, ["b@example.com"], repair_message, None, lambda r: r["changed"]),
             ("172.16.5.5", None, ["b@example.com"], repair_message, "internal", lambda r: not r["changed"])]
    send_all(after, "b")
    check(after, "b")
    # A bad range: the reload is refused with the line that says why; the policies stay.
    with open(conf, "w") as f:
        f.write(POLICIES.format(report=rep, stats=stats).replace("10.0.0.0/8, 2001:db8::/32", "10.0.0.0/33"))
    svc.p.send_signal(signal.SIGHUP)
    svc.wait_log(r"SIGHUP: the configuration was not reloaded, the old one stays: .*\[policy:internal\] client: "
                 r"'10.0.0.0/33' is not an address or a CIDR range")
    send_all(after, "c")
    check(after, "c")
    svc.stop()
    reading[0] = False
    reader.join()
    print(f"policy: {len(cases) + 2 * len(after)} envelopes, each report line names its policy; reloads checked")


def children(pid):
    """The service's processes under its supervisor: (the front, [workers]). The front is the
    one with threads (libmilter's and the counters'); a worker has one."""
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            kids += [int(k) for k in f.read().split()]
    front, workers = None, []
    for k in kids:
        try:
            with open(f"/proc/{k}/status") as f:
                threads = int(re.search(r"^Threads:\s+(\d+)", f.read(), re.M).group(1))
        except (OSError, AttributeError):
            continue
        if threads > 1:
            front = k
        else:
            workers.append(k)
    return front, workers


def titles(svc, used):
    """Each process says what it is (issue 54 item 3): in ps (its command line) and top (its
    name); the supervisor keeps its command line, as systemd and pkill -f find it."""
    def read(pid, what):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as f:
                return f.read().decode(errors="replace").rstrip("\0\n").replace("\0", " ").strip()
        except OSError:
            return None  # ended meanwhile (a worker a reload retired)

    def wanted():
        front, workers = children(svc.p.pid)
        want = {front: ("mimeuri-front", f"mimeuri: milter front unix:{svc.sock}")}
        for w in workers:
            want[w] = ("mimeuri-worker", f"mimeuri: milter worker unix:{svc.sock} (idle, {used} of 1000)")
        return want
    until = time.time() + 5
    want = wanted()
    while time.time() < until and any((read(p, "comm"), read(p, "cmdline")) != t for p, t in want.items()):
        time.sleep(0.05)
        want = wanted()
    for p, t in want.items():
        if (read(p, "comm"), read(p, "cmdline")) != t:
            fail(f"process {p} shows {read(p, 'comm')!r} {read(p, 'cmdline')!r}, not {t}")
    if read(svc.p.pid, "comm") != "mimeuri" or f"--milter=unix:{svc.sock}" not in read(svc.p.pid, "cmdline"):
        fail(f"the supervisor shows {read(svc.p.pid, 'comm')!r} {read(svc.p.pid, 'cmdline')!r}")


def restarts(folder):
    """A worker killed is logged as a death with its signal and replaced; the front killed is
    started again and its counters' start time is the new front's (issue 54 item 4)."""
    stats = os.path.join(folder, "mimeuri.prom")
    svc = Service(folder, ["--stats=" + stats])
    until = time.time() + 10  # the front's threads start as it does
    front, workers = children(svc.p.pid)
    while (not front or not workers) and time.time() < until:
        time.sleep(0.05)
        front, workers = children(svc.p.pid)
    if not front or not workers:
        fail(f"no front and worker under the supervisor: {front}, {workers}")
    titles(svc, 0)
    os.kill(workers[0], signal.SIGKILL)
    svc.wait_log(rf"worker {workers[0]} died \(signal 9\), peak RSS \d+ KiB; starting another")
    fam = parse(counters_now(svc, stats))
    if sample(fam, "mimeuri_worker_ends", "mimeuri_worker_ends_total", cause="died") != 1:
        fail("mimeuri_worker_ends_total{cause=died} is not 1 after a worker was killed")
    svc.p.send_signal(signal.SIGHUP)  # the same settings: a reload done
    svc.wait_log("configuration reloaded")
    until = time.time() + 10
    while time.time() < until:
        if sample(parse(counters_now(svc, stats)), "mimeuri_reloads", "mimeuri_reloads_total", outcome="done") == 1:
            break
        time.sleep(0.1)
    else:
        fail("mimeuri_reloads_total{outcome=done} is not 1 after a reload")
    c = Client(svc.sock)  # the service still answers, with the worker started in its place
    if c.message(*plain_message("after-worker@example.test")) != b"a":
        fail("no answer after a worker was killed")
    c.close()
    titles(svc, 1)
    killed = time.time()
    os.kill(front, signal.SIGKILL)
    svc.wait_log(r"the front process ended \(signal 9\); starting it again")
    until = time.time() + 20  # the new front answers (it is started again after a second)
    while True:
        try:
            c = Client(svc.sock)
            answered = c.message(*plain_message("after-front@example.test")) == b"a"
            c.close()
            if answered:
                break
        except OSError:
            pass
        if time.time() > until:
            fail("the front started again answers no message")
        time.sleep(0.2)
    text = counters_now(svc, stats)
    fam = parse(text)
    for name, labels, want in (("mimeuri_worker_ends", {"cause": "died"}, 0), ("mimeuri_front_restarts", {}, 1)):
        # The front's counters start with it: the worker killed before counted in the old one.
        got = sample(fam, name, name + "_total", **labels)
        if got != want:
            fail(f"{name}_total{labels} is {got} in the new front's counters, not {want}:\n{text}")
    started = float(re.search(r"^mimeuri_front_start_time_seconds (\S+)$", text, re.M).group(1))
    if started < killed:
        fail(f"mimeuri_front_start_time_seconds is {started}, before the front was killed at {killed:.3f}")
    svc.stop()
    print("restarts: titles by role and state; a worker's death logged with its signal, the front's start "
          "time its own after a restart")


def main():
    folder = tempfile.mkdtemp(prefix="mimeuri-ops-")
    try:
        if MODE == "counters":
            counters(folder)
        elif MODE == "pidfile":
            pidfile(folder)
        elif MODE == "policy":
            policy(folder)
        elif MODE == "restarts":
            restarts(folder)
        elif MODE in ("logrotate-watch", "logrotate-signal"):
            logrotate(folder, MODE == "logrotate-signal")
        else:
            fail(f"unknown mode {MODE}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
