#!/usr/bin/env python3
"""Chromium opens an offloaded attachment's link (issue 51). A message with a PDF attachment is
offloaded with --offload-url=http://127.0.0.1:PORT/{name}/{filename}, the store is served over
HTTP on 127.0.0.1 (python3's http.server: /NAME/FILENAME is the store's file NAME, sent as
a download named FILENAME, as a web server in front of a store would), the
offloaded message is extracted with --cid=extract, and headless Chromium (offload_link.mjs):

  - opens the extracted page: it must list the external body (the user sees the part is
    stored elsewhere) and load nothing but its own files; it links the stored file: the
    link is clicked and the file Chromium saves must be the attachment, byte for byte
    (the page's CSP, default-src 'none', stops loads, not a link the user follows);
  - opens the link the note gives (the Link: line every mail reader shows, from the
    message as offloaded): the file Chromium saves must be the attachment, byte for byte.

The extracted page lists the external body with its URL as a link (an http or https
access-type=URL; src/archive/folder_plan.cc external_url): it must be there and work. Usage: offload_link.py MIMEURI LOG_DIR   (exit 77 as browser_suite.py does)
"""
import base64, email, email.policy, functools, http.server, os, re, shutil, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from browser_suite import browser_tools, run_pages  # noqa: E402


class Store(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.split("/")
        name = parts[1] if len(parts) >= 2 else ""
        path = os.path.join(self.directory, name)
        if not re.fullmatch(r"[0-9a-f]{64}", name) or not os.path.isfile(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Content-Disposition", f"attachment; filename=\"{parts[2] if len(parts) > 2 else name}\"")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    binary, logdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    chromium, mods = browser_tools(logdir)
    work = tempfile.mkdtemp(prefix="mimeuri-offload-link-")
    try:
        store = os.path.join(work, "store")
        os.makedirs(store)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Store, directory=store))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        pdf = b"%PDF-1.4\n" + bytes((k * 37) % 256 for k in range(20000)) + b"\n%%EOF\n"
        msg = ("From: a@example.org\nTo: b@example.org\nSubject: the report\nMessage-ID: <offload-link@t>\n"
               "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\n"
               "The report is attached.\n\n--B\nContent-Type: application/pdf; name=\"report 2026.pdf\"\n"
               "Content-Disposition: attachment; filename=\"report 2026.pdf\"\nContent-Transfer-Encoding: base64\n\n"
               + base64.encodebytes(pdf).decode() + "--B--\n")
        src, off, arch = (os.path.join(work, x) for x in ("m.eml", "off.eml", "archive"))
        open(src, "w").write(msg)
        r = subprocess.run([binary, "--offload-min=1000", f"--offload-dir={store}",
                            f"--offload-url=http://127.0.0.1:{port}/{{name}}/{{filename}}", src], capture_output=True)
        open(off, "wb").write(r.stdout)
        note = email.message_from_bytes(r.stdout, policy=email.policy.default)
        links = [m.group(1) for p in note.walk() if p.get_content_type() == "text/plain"
                 for m in [re.search(r"^Link: (\S+)$", p.get_content(), re.M)] if m]
        if r.returncode != 0 or len(links) != 1:
            print(f"FAIL: offload: exit {r.returncode}, links in the note {links}: {r.stderr.decode()[-300:]}")
            return 1
        url = links[0]
        r = subprocess.run([binary, "--cid=extract", f"--extract-dir={arch}", off], capture_output=True)
        page = os.path.join(arch, "1", "index.html")
        if r.returncode != 0 or not os.path.exists(page):
            print(f"FAIL: extract: exit {r.returncode}: {r.stderr.decode()[-300:]}")
            return 1
        dirs = {k: os.path.join(work, k) for k in ("clicked", "opened")}
        for d in dirs.values():
            os.makedirs(d)
        res = run_pages("offload_link.mjs", {"chromium": chromium, "page": page, "url": url, **dirs}, mods, work, 120)
        server.shutdown()
        if res is None:
            return 1
        bad = []
        offered, clicked, opened = res["offered"], res["clicked"], res["opened"]
        print(f"the extracted page lists {offered['parts']}; links {offered['links']}; "
              f"the URL as text: {offered['urlAsText']}")
        if not any("message/external-body" in p for p in offered["parts"]):
            bad.append(f"the page does not list the external body: {offered['parts']}")
        if res["others"]:
            bad.append(f"the page loaded {res['others']}")
        def saved(how):
            files = os.listdir(dirs[how])
            return files, (open(os.path.join(dirs[how], files[0]), "rb").read() if len(files) == 1 else None)
        if clicked is None:
            bad.append("the extracted page has no link to the stored file")
        else:
            files, data = saved("clicked")
            if clicked != "completed" or data != pdf:
                bad.append(f"the page's link, clicked: download {clicked}, saved {files}, not the attachment")
            else:
                print(f"the page's link, clicked, saves {files[0]}: the attachment, byte for byte")
        files, data = saved("opened")
        if opened != "completed" or data != pdf:
            bad.append(f"the note's link: download {opened}, saved {files}, not the attachment")
        else:
            print(f"the note's link ({url}) in Chromium saves {files[0]}: the attachment's {len(pdf)} bytes, byte for byte")
        for b in bad:
            print("FAIL:", b)
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
