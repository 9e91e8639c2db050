#!/usr/bin/env python3
"""A second writer for the --related=repair golden cases (testdata/cases/related-*): builds
expected.eml from input.eml by the edits RFC 2387 and RFC 2183 call for, spelled out per case
without mimeuri's code:

  - mixed: the multipart/mixed of the HTML part and the image it names becomes the
    multipart/related (type="text/html" added, its boundary kept); the image's disposition
    attachment becomes inline;
  - in-related: inside the related set, attachment becomes inline, and a part with no
    Content-Disposition gets "Content-Disposition: inline" first in its header block;
  - outside: the image the HTML names from the outer mixed is cut with its delimiter line
    and put before the related set's closing delimiter, marked inline; the real attachment
    stays;
  - nested: the same structure as mixed, inside a forwarded message: an attached message is a
    document the user received, never edited (issue 48, 7), so the whole message is unchanged.

Usage: related_expected.py CASE INPUT.eml [--crlf] > expected.eml
"""
import sys


def edit(s, old, new):
    assert s.count(old) == 1, old
    return s.replace(old, new)


def main():
    case, path = sys.argv[1:3]
    eol = "\r\n" if "--crlf" in sys.argv else "\n"
    s = open(path, "rb").read().decode()
    if case == "mixed":
        s = edit(s, "multipart/mixed;" + eol + "\tboundary=\"outer\"",
                 "multipart/related;" + eol + "\tboundary=\"outer\"; type=\"text/html\"")
        s = edit(s, "attachment; filename=\"logo.png\"", "inline; filename=\"logo.png\"")
    elif case == "in-related":
        s = edit(s, "Content-Disposition: attachment;", "Content-Disposition: inline;")
        s = edit(s, "--rel" + eol + "Content-Type: image/png" + eol + "Content-ID: <two@",
                 "--rel" + eol + "Content-Disposition: inline" + eol + "Content-Type: image/png" + eol + "Content-ID: <two@")
    elif case == "outside":
        start = s.index(eol + "--mix" + eol + "Content-Type: image/png; name=\"out.png\"")
        end = s.index(eol + "--mix", start + 1)
        part = s[start + len(eol + "--mix" + eol):end]
        s = s[:start] + s[end:]
        s = edit(s, "--rel--", "--rel" + eol + edit(part, "attachment;", "inline;") + eol + "--rel--")
    elif case == "nested":
        pass  # the related set to make is inside message/rfc822: left as received
    else:
        raise SystemExit(f"unknown case {case}")
    sys.stdout.buffer.write(s.encode())


if __name__ == "__main__":
    main()
