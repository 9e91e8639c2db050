#!/usr/bin/env python3
"""Every command the documentation shows is run by a test (issue 49 item 4, issue 54 item 1).

The documents: README.md, docs/*.md and the man pages (docs/man/). A command block is a
fenced ```sh block of a Markdown file, or an .EX/.EE block of a man page whose first word is
a command (mimeuri, postconf, a #! script). Each is run by one of:

- the walk-through (tests/integration/readme-walkthrough.sh), on a fresh Debian 12 root as
  root: the blocks WALK names, each found by a predicate in one file. `--extract TOP DIR`
  writes each to DIR/readme-NAME.sh, exactly as the document shows it (a man page's escapes
  read as groff prints them); the walk-through runs those files.
- CI itself: the README's test command (.ci/run runs it).
- this script, offline: every other command block, in a fresh folder holding the inputs the
  documents name (in.eml is the bundled sample, testdata/sample/newsletter.eml; the mboxes,
  messages, a Maildir in $HOME and mimeuri.conf.new, mimeuri.conf(5)'s EXAMPLE, are made from
  them), with the build's mimeuri first on PATH. A block runs whole under bash -e -o pipefail
  and must exit 0 and write no file named "-" (a report option that took "-" for a name,
  issue 48 item 10); where a line starts with a `$ ` prompt, the block is run a line at a
  time and standard output must hold each line shown after the command.

Offline it also checks that each WALK block is found exactly once, so that the walk-through
cannot lose a block that moved. A command block none of them runs fails, but for NOT_RUN
(each with why). Prints one line a block and "N passed, N failed".
Usage: readme_commands.py README.md BUILD_DIR | readme_commands.py --extract TOP DIR"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def starts(prefix):
    return lambda text: text.startswith(prefix)


# The walk-through's blocks: name, file, which block (run in this order there).
WALK = [
    ("setup", "README.md", starts("apt-get update")),
    ("install", "docs/mta.md", starts("install -m 0755 build/mimeuri")),
    ("procmail", "docs/mta.md", starts("apt-get install -y procmail")),
    ("dovecot", "docs/mta.md", starts("apt-get install -y dovecot")),
    ("postfix", "docs/mta.md", starts("apt-get install -y postfix")),
    ("exim", "docs/mta.md", starts("apt-get install -y exim4")),
    ("package", "docs/mta.md", starts("apt-get build-dep")),
    ("milter", "docs/mta.md", starts("usermod -aG mimeuri postfix")),
    ("counters", "docs/mta.md", starts("sed -i '/^\\[milter\\]/a stats=")),
    ("man-macros", "docs/man/mimeuri.conf.5", starts("postconf -e 'milter_connect_macros")),
    ("man-conf", "docs/man/mimeuri.conf.5", starts("# Delivery")),
    ("man-conf-print", "docs/man/mimeuri.conf.5", starts("mimeuri --config=mimeuri.conf.new --print-config")),
    ("man-conf-check", "docs/man/mimeuri.conf.5",
     lambda t: t.startswith("mimeuri --config=mimeuri.conf.new") and "--check-config" in t),
    ("man-milter-unix", "docs/man/mimeuri-milter.8", starts("mimeuri --milter=unix:")),
    ("man-main-cf", "docs/man/mimeuri-milter.8", starts("smtpd_milters =")),
    ("man-milter-inet", "docs/man/mimeuri-milter.8", starts("mimeuri --milter=inet:")),
    ("man-runit", "docs/man/mimeuri-milter.8", starts("#!/bin/sh\ninstall -d")),
]
# Run by CI as shown: the block, and the file that must hold it.
ELSEWHERE = [(starts("bash tests/run.sh"), ".ci/run")]
# Shown and not run, with why.
NOT_RUN = [(lambda t: "--sshlogin" in t, "needs the machines it names (bench/shards.sh runs its one-machine form)")]


class Block:
    def __init__(self, path, line, lang, text):
        self.path, self.line, self.lang, self.text = path, line, lang, text

    def where(self):
        return f"{self.path}:{self.line}"


def documents(top):
    docs = ["README.md"] + sorted(os.path.relpath(p, top) for p in glob.glob(os.path.join(top, "docs", "*.md")))
    return docs + ["docs/man/mimeuri.1", "docs/man/mimeuri.conf.5", "docs/man/mimeuri-milter.8"]


def md_blocks(top, rel):
    """Every fenced block of a Markdown file, with its language and first line."""
    out, cur = [], None
    for n, line in enumerate(open(os.path.join(top, rel), encoding="utf-8").read().split("\n"), 1):
        if line.startswith("```"):
            if cur is None:
                cur = (n, line[3:].strip().split(" ")[0], [])
            else:
                out.append(Block(rel, cur[0] + 1, cur[1], "\n".join(cur[2]) + "\n"))
                cur = None
        elif cur is not None:
            cur[2].append(line)
    return out


def unescape_man(line):
    """A line of an .EX block as groff prints it."""
    for esc, char in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\&", ""), ("\\e", "\\")):
        line = line.replace(esc, char)
    return line


def man_blocks(top, rel):
    """Every .EX/.EE block of a man page; a command when its first word is one."""
    out, cur = [], None
    for n, line in enumerate(open(os.path.join(top, rel), encoding="utf-8").read().split("\n"), 1):
        if line.startswith(".EX"):
            cur = (n + 1, [])
        elif line.startswith(".EE") and cur is not None:
            text = "\n".join(cur[1]) + "\n"
            lang = "sh" if re.match(r"(mimeuri|postconf) |#!/bin/sh\n", text) else "man"
            out.append(Block(rel, cur[0], lang, text))
            cur = None
        elif cur is not None:
            cur[1].append(unescape_man(line))
    return out


def all_blocks(top):
    out = []
    for rel in documents(top):
        out += man_blocks(top, rel) if rel.startswith("docs/man/") else md_blocks(top, rel)
    return out


def walk_blocks(top):
    """name -> the one block WALK names; and the problems (none found, or several)."""
    found, problems = {}, []
    blocks = all_blocks(top)
    for name, rel, match in WALK:
        hits = [b for b in blocks if b.path == rel and match(b.text)]
        if len(hits) != 1:
            problems.append(f"{rel}: expected one {name} block for the walk-through, found {len(hits)}")
        else:
            found[name] = hits[0]
    return found, problems


def fixtures(d, top):
    sample = os.path.join(top, "testdata", "sample", "newsletter.eml")
    body = open(sample, "rb").read()
    for name in ("in.eml", "msg1.eml", "msg2.eml"):
        shutil.copy(sample, os.path.join(d, name))
    second = body.replace(b"Message-ID: <", b"Message-ID: <second.", 1)
    mbox = b"From a@example.org Mon Jan  1 00:00:00 2024\n" + body + b"\nFrom b@example.org Mon Jan  1 00:00:00 2024\n" + second + b"\n"
    os.makedirs(os.path.join(d, "archive"))
    os.makedirs(os.path.join(d, "out"))
    for name in ("archive.mbox", "in.mbox", "2024-01.mbox", "2024-02.mbox", "archive/2026-10.mbox", "archive/2026-11.mbox"):
        open(os.path.join(d, name), "wb").write(mbox.replace(b"<second.", ("<" + name + ".").encode()))
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(d, "Maildir", sub))
    shutil.copy(sample, os.path.join(d, "Maildir", "cur", "1700000000.1.host:2,S"))
    open(os.path.join(d, "stamp"), "w").close()
    os.utime(os.path.join(d, "stamp"), (1600000000, 1600000000))
    # mimeuri.conf(5)'s EXAMPLE, the file its own examples and mimeuri(1)'s check.
    conf = [b for b in man_blocks(top, "docs/man/mimeuri.conf.5") if b.text.startswith("# Delivery")]
    if len(conf) == 1:
        open(os.path.join(d, "mimeuri.conf.new"), "w").write(conf[0].text)


def run(cmd, d, env):
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=d, env=env, capture_output=True, timeout=300)
    dash = os.path.join(d, "-")
    made_dash = os.path.exists(dash)
    if made_dash:
        os.unlink(dash)
    problems = [] if r.returncode == 0 else [f"exit {r.returncode}; " + r.stderr.decode(errors="replace").strip()[-400:]]
    if made_dash:
        problems.append("wrote a file named '-'")
    return r.stdout.decode(errors="replace"), problems


def prompt_lines(text):
    """(command, lines shown after it) for each `$ ` line; a trailing `  # comment` is not run."""
    lines, out = text.rstrip("\n").split("\n"), []
    for i, line in enumerate(lines):
        if line.startswith("$ "):
            expect = []
            for more in lines[i + 1:]:
                if more.startswith("$ "):
                    break
                expect.append(more)
            out.append((re.sub(r"\s{2,}#.*$", "", line[2:]).strip(), expect))
    return out


def run_offline(block, top, env):
    """The problems of one block run offline (empty: it worked)."""
    with tempfile.TemporaryDirectory() as d:
        fixtures(d, top)
        env = dict(env, HOME=d)
        if "\n$ " not in "\n" + block.text:
            return run(block.text, d, env)[1]
        problems = []
        for cmd, expect in prompt_lines(block.text):
            out, p = run(cmd, d, env)
            problems += [f"{cmd}: {x}" for x in p]
            problems += [f"{cmd}: not printed: {e}" for e in expect if e not in out.split("\n")]
        return problems


# What only the walk-through's fresh root may run: a block that holds one of these is never
# run here, whatever else decides (it would install, configure or start things on this machine).
MACHINE = re.compile(r"\b(apt-get|dpkg|dpkg-buildpackage|systemctl|useradd|usermod|adduser|postconf|postfix|"
                     r"newaliases|sievec|doveadm|update-exim4\.conf|exim4|procmail|sendmail)\b|--milter|/etc/|^install ",
                     re.M)


def who_runs(block, walk):
    if any((b.path, b.line) == (block.path, block.line) for b in walk.values()):
        return "walk-through"
    for match, ci in ELSEWHERE:
        if match(block.text):
            return "ci" if block.text.strip() in open(os.path.join(ROOT, ci)).read() else None
    for match, why in NOT_RUN:
        if match(block.text):
            return "not run: " + why
    return "offline"


def main(readme, build):
    top = os.path.dirname(os.path.abspath(readme))
    env = dict(os.environ, PATH=os.path.abspath(build) + os.pathsep + os.environ.get("PATH", ""))
    walk, problems = walk_blocks(top)
    passed = failed = ran = 0
    for p in problems:
        print("FAIL  " + p)
        failed += 1
    for block in all_blocks(top):
        if block.lang != "sh":
            continue
        first = block.text.split("\n")[0]
        runner = who_runs(block, walk)
        if runner is None:
            print(f"FAIL  {block.where()}: {first}\n      run by CI, but .ci/run does not hold it as shown")
            failed += 1
        elif runner != "offline":
            print(f"{runner:<12}  {block.where()}: {first}")
        elif MACHINE.search(block.text):
            print(f"FAIL  {block.where()}: {first}\n      changes the machine, and no WALK entry claims it for the walk-through")
            failed += 1
        else:
            found = run_offline(block, top, env)
            ran += 1
            print(("ok    " if not found else "FAIL  ") + f"{block.where()}: {first}")
            for p in found:
                print("      " + p)
            passed += not found
            failed += bool(found)
    if ran < 10:  # the documents lost their examples, or this reader lost them
        print(f"only {ran} blocks run offline")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def extract(top, dest):
    walk, problems = walk_blocks(top)
    for p in problems:
        print(p, file=sys.stderr)
    for name, block in walk.items():
        open(os.path.join(dest, f"readme-{name}.sh"), "w").write(block.text)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1] == "--extract":
        sys.exit(extract(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
