#!/usr/bin/env python3
"""Idle connections against the service while real mail flows (issue 43 item 11).

milter_idle.py SOCKET MESSAGE IDLE COUNT

Opens IDLE connections to SOCKET (inet:PORT@127.0.0.1) that never send a byte, as an
attacker that reaches the service's TCP port would, then sends COUNT messages on one fresh
connection as an MTA does (bench/milter_client.py), each message's answer waited for. Prints
one line: the messages answered, the median and the worst time of a message (ms), how many
of the idle connections the service had closed by then (it closes the oldest ones of a
client at --milter-client-connections) and how many it refused at connect.
A message not answered, or a connection the service would not take for the real mail, is a
failure (exit 1).
"""
import os, resource, select, socket, statistics, subprocess, sys, time

spec, msg, idle, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
port, host = spec[5:].split("@")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, idle + 256)), hard))

held, refused = [], 0
for _ in range(idle):
    s = socket.socket()
    try:
        s.connect((host, int(port)))
        held.append(s)
    except OSError:
        refused += 1
        s.close()
time.sleep(0.5)
client = os.path.join(os.path.dirname(os.path.abspath(__file__)), "milter_client.py")
t0 = time.perf_counter()
# One message a connection, as Postfix's smtpd processes connect: each a new connection
# that must be taken while the idle ones are held.
times = []
for k in range(count):
    s0 = time.perf_counter()
    r = subprocess.run([sys.executable, client, spec, msg, "1"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"message {k}: {r.stderr.strip() or r.stdout.strip()}")
    times.append((time.perf_counter() - s0) * 1000)
closed = 0
for s in held:
    p = select.poll()
    p.register(s, select.POLLIN)
    if p.poll(0):
        try:
            if s.recv(1) == b"":
                closed += 1
        except OSError:
            closed += 1
print(f"answered {len(times)} median {statistics.median(times):.1f} ms worst {max(times):.1f} ms "
      f"idle {idle} closed-by-service {closed} refused-at-connect {refused}")
