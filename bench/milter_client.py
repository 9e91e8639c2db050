#!/usr/bin/env python3
"""A milter client for bench/milter_index.sh: milter_client.py SOCKET FILE COUNT.
FILE may be @LIST, a file of paths one a line: each message in turn, COUNT times over the list
(bench/milter_signed.sh); a file with no header block is left out.

Speaks the milter protocol (version 6) to SOCKET (unix:PATH or inet:PORT@HOST) as an MTA
does, on one connection: negotiation, then COUNT times the message in FILE (header fields,
end of header, body chunks of 64 KiB, end of message), honouring the steps the filter asked
to skip and the headers it asked not to answer. Each command is written as Postfix writes it
(length and command, then the data). Prints the median and the mean time of a message, in
microseconds, from its first header to the filter's final answer.
"""
import re, socket, statistics, struct, sys, time

SMFIP_NOHDRS, SMFIP_NOEOH, SMFIP_NOBODY, SMFIP_NR_HDR = 0x20, 0x40, 0x10, 0x80


def connect(spec):
    if spec.startswith("inet:"):
        port, host = spec[5:].split("@")
        s = socket.create_connection((host, int(port)))
    else:
        s = socket.socket(socket.AF_UNIX)
        s.connect(spec.split(":", 1)[1])
    return s


def send(s, cmd, data=b""):
    s.sendall(struct.pack(">I", len(data) + 1) + cmd)
    if data:
        s.sendall(data)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        got = s.recv(n - len(buf))
        if not got:
            sys.exit("the filter closed the connection")
        buf += got
    return buf


def reply(s):
    n = struct.unpack(">I", recv_exact(s, 4))[0]
    data = recv_exact(s, n)
    return data[:1], data[1:]


def final(s, new_body=None):
    """Reads modification requests until the answer that ends the message; the replaced
    body's chunks are appended to new_body when one is given."""
    while True:
        cmd, data = reply(s)
        if cmd == b"b" and new_body is not None:
            new_body += data
        elif cmd in (b"a", b"c", b"r", b"t", b"d", b"y"):
            return cmd


def negotiate(s):
    """Option negotiation (version 6, every action): the steps the filter asks to skip."""
    send(s, b"O", struct.pack(">III", 6, 0x1FF, 0x1FFFFF))
    cmd, data = reply(s)
    assert cmd == b"O", cmd
    return struct.unpack(">III", data[:12])[2]


def send_message(s, steps, fields, body):
    """One message up to its end (header fields, end of header, body in 65,535-byte chunks),
    honouring the steps the filter asked to skip; the end-of-message command is the caller's."""
    if not steps & SMFIP_NOHDRS:
        for name, value in fields:
            send(s, b"L", name + b"\0" + value + b"\0")
            if not steps & SMFIP_NR_HDR:
                reply(s)
    if not steps & SMFIP_NOEOH:
        send(s, b"N")
        reply(s)
    if not steps & SMFIP_NOBODY:
        for i in range(0, len(body), 65535):
            send(s, b"B", body[i:i + 65535])
            reply(s)


def message(path):
    """(header fields, body) of the message in path, as an MTA hands them on; None without a
    header block."""
    text = open(path, "rb").read().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if b"\r\n\r\n" not in text:
        return None
    head, body = text.split(b"\r\n\r\n", 1)
    fields = []
    lines = head.split(b"\r\n")
    for i, line in enumerate(lines):
        name, colon, value = line.partition(b":")
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1][1] += b"\r\n" + line
        elif colon and name and not re.search(rb"[\x00-\x20\x7f-\xff]", name):
            fields.append([name, value.lstrip(b" ")])
        else: # not a header field: Postfix's cleanup ends the header here, the rest is body
            body = b"\r\n".join(lines[i:]) + b"\r\n\r\n" + body
            break
    return fields, body


def main():
    spec, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    paths = open(path[1:]).read().splitlines() if path.startswith("@") else [path]
    messages = [m for m in map(message, paths) if m is not None]
    s = connect(spec)
    steps = negotiate(s)
    times = []
    for _, (fields, body) in ((i, m) for i in range(count) for m in messages):
        t0 = time.perf_counter()
        send_message(s, steps, fields, body)
        send(s, b"E")
        answer = final(s)
        times.append((time.perf_counter() - t0) * 1e6)
        if answer not in b"ac":
            sys.exit(f"the filter answered {answer!r}")
    send(s, b"Q")
    print(f"{statistics.median(times):.0f} {statistics.mean(times):.0f}")


if __name__ == "__main__":
    main()
