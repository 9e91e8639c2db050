#!/usr/bin/env python3
"""Every offline mimeuri command the README shows, run as pasted (issue 48 item 10: the
README's --data recipe wrote a file named '-').

Each line of a shell block (```sh, or a fence with no language) whose command is `mimeuri ...` (or `parallel -k mimeuri ...`), with
its `$ ` prompt and trailing `  # comment` taken off, runs under bash in a folder holding the
inputs the README names (in.eml is the bundled sample, testdata/sample/newsletter.eml; the
mboxes, msg1.eml, msg2.eml and a Maildir are made from it), with the build's mimeuri first on
PATH. It must exit 0; where the README shows what a `$ ` command prints (the lines after it),
standard output must hold each of those lines. The service's lines (--milter, the usage
synopsis) are left to the walk-through, which runs them on a fresh root with the package.
Prints one line a command and "N passed, N failed". Usage: readme_commands.py README BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def blocks(readme):
    """The lines of each fenced block that is shell (```sh, or no language), fences read in order."""
    out, lang, cur = [], None, None
    for line in open(readme, encoding="utf-8").read().split("\n"):
        if line.startswith("```"):
            if cur is None:
                lang, cur = line[3:].strip(), []
            else:
                if lang in ("", "sh"):
                    out.append(cur)
                cur = None
        elif cur is not None:
            cur.append(line)
    return out


def commands(readme):
    """(command, expected output lines) for each mimeuri line of the shell blocks, in order."""
    out = []
    for lines in blocks(readme):
        for i, line in enumerate(lines):
            prompt = line.startswith("$ ")
            cmd = line[2:] if prompt else line
            cmd = re.sub(r"\s{2,}#.*$", "", cmd).strip()
            if not re.match(r"(parallel -k )?mimeuri\s", cmd) or "--milter" in cmd or "[OPTION" in cmd:
                continue
            expect = []
            if prompt:
                for more in lines[i + 1:]:
                    if more.startswith("$ "):
                        break
                    expect.append(more)
            out.append((cmd, expect))
    return out


def fixtures(d):
    sample = os.path.join(ROOT, "testdata", "sample", "newsletter.eml")
    body = open(sample, "rb").read()
    shutil.copy(sample, os.path.join(d, "in.eml"))
    for name in ("msg1.eml", "msg2.eml"):
        shutil.copy(sample, os.path.join(d, name))
    second = body.replace(b"Message-ID: <", b"Message-ID: <second.", 1)
    mbox = b"From a@example.org Mon Jan  1 00:00:00 2024\n" + body + b"\nFrom b@example.org Mon Jan  1 00:00:00 2024\n" + second + b"\n"
    for name in ("archive.mbox", "in.mbox", "2024-01.mbox", "2024-02.mbox"):
        open(os.path.join(d, name), "wb").write(mbox.replace(b"<second.", ("<" + name + ".").encode()))
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(d, "Maildir", sub))
    shutil.copy(sample, os.path.join(d, "Maildir", "cur", "1700000000.1.host:2,S"))


def main(readme, build):
    found = commands(readme)
    env = dict(os.environ, PATH=os.path.abspath(build) + os.pathsep + os.environ.get("PATH", ""))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        fixtures(d)
        for cmd, expect in found:
            r = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], cwd=d, env=env, capture_output=True, timeout=120)
            out = r.stdout.decode(errors="replace")
            missing = [e for e in expect if e not in out.split("\n")]
            dash = os.path.join(d, "-")  # a report option that took "-" for a file name
            made_dash = os.path.exists(dash)
            if made_dash:
                os.unlink(dash)
            ok = r.returncode == 0 and not missing and not made_dash
            print(("ok    " if ok else "FAIL  ") + cmd)
            if not ok:
                print(f"      exit {r.returncode}; {r.stderr.decode(errors='replace').strip()[:300]}"
                      + ("; wrote a file named '-'" if made_dash else ""))
                for e in missing:
                    print(f"      not printed: {e}")
            passed += ok
            failed += not ok
    if len(found) < 10:  # the README lost its examples, or this reader lost them
        print(f"only {len(found)} commands found in {readme}")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
