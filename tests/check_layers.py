#!/usr/bin/env python3
"""The layers of src/ (docs/design.md, "The layers"), checked from the includes against the
build's own declarations.

Each layer is a static library whose meson.build names the layers it is built on
(`dependencies: [mime_dep, ...]`); the build lets a file include the headers of its own layer
and of every layer those reach. This check reads those declarations and holds the code to
them both ways:
- every include names a header of its own layer or of one the declarations reach (this covers
  what the build cannot see: a header no .cc file of its own layer happens to include, and an
  include that names a file no layer has);
- every layer a library declares is one its files include directly: a declared edge the code
  does not have would let the next include in unremarked (issue 49 item 2).
It prints one line a problem and exits 1 if there is any."""
import os
import re
import sys

LAYERS = ["util", "input", "html", "mime", "index", "run", "filters", "archive", "app"]


def folder_of(layer, top):
    return os.path.join(top, "filters") if layer == "filters" else os.path.join(top, "src", layer)


def declared(top):
    """Each layer's declared layers: the NAME_dep of its static_library's dependencies."""
    out = {}
    for layer in LAYERS:
        text = open(os.path.join(folder_of(layer, top), "meson.build"), encoding="utf-8").read()
        lib = re.search(r"static_library\((.*?)\n\S", text + "\n.", re.S)
        deps = re.search(r"dependencies:\s*\[(.*?)\]\)", lib.group(1) if lib else "", re.S)
        names = re.findall(r"\b(\w+)_dep\b", deps.group(1)) if deps else []
        out[layer] = {n for n in names if n in LAYERS}
    return out


def reach(direct):
    """Each layer and the layers its declarations reach."""
    out = {}
    for layer in LAYERS:
        seen, todo = {layer}, [layer]
        while todo:
            for d in direct[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        out[layer] = seen
    return out


def main(top):
    direct = declared(top)
    allowed = reach(direct)
    home = {}  # header name -> its layer
    for layer in LAYERS:
        for name in os.listdir(folder_of(layer, top)):
            if name.endswith((".hh", ".h")):
                if name in home:
                    print(f"{name}: in both {home[name]} and {layer}: an include names one file")
                    return 1
                home[name] = layer
    stray = [n for n in os.listdir(os.path.join(top, "src")) if os.path.isfile(os.path.join(top, "src", n)) and n != "meson.build"]
    problems = [f"src/{n}: a file outside every layer" for n in stray]
    files = 0
    for layer in LAYERS:
        folder = folder_of(layer, top)
        used = set()
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".cc", ".hh", ".c", ".h")):
                continue
            files += 1
            path = os.path.join(folder, name)
            for no, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = m.group(1)
                if target not in home:
                    problems.append(f"{os.path.relpath(path, top)}:{no}: includes \"{target}\", which no layer holds")
                elif home[target] not in allowed[layer]:
                    problems.append(f"{os.path.relpath(path, top)}:{no}: {layer} includes \"{target}\" of {home[target]}, "
                                    f"a layer its meson.build does not build on")
                else:
                    used.add(home[target])
        for d in sorted(direct[layer] - used):
            problems.append(f"{os.path.relpath(folder_of(layer, top), top)}/meson.build: {layer} declares {d}_dep, "
                            f"but none of its files includes a header of {d}")
    for layer in LAYERS:
        print(f"{layer}: on {', '.join(sorted(direct[layer])) or '(GLib and system libraries only)'}")
    print(f"{files} files in {len(LAYERS)} layers, {len(problems)} problems")
    for p in problems:
        print(p)
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
