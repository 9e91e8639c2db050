// Replies whose images come back (issue 50): a cid: that names no part of its message is
// looked for in the messages it answers (In-Reply-To, then References from the last, RFC
// 5322 3.6.4), reported "matched":"thread", and with --cid=extract the reply's page shows the
// image from that message's folder.
//
// testdata/threads/reply_images.mbox, written for this test:
//   1 <root@>    related HTML, cid:logo (its own part 2)
//   2 <parent@>  answers root: related HTML, cid:chart (its own part 2), cid:logo (root's)
//   3 <reply@>   answers parent (References: root, parent, and itself: a loop), text/html
//                alone: cid:chart (parent's), cid:logo (root's: parent has none), cid:gone
#include "helpers.hh"

#include <doctest/doctest.h>

using testing::quote;

namespace {

const std::string kReplies = std::string(MIMEURI_TESTDATA) + "/threads/reply_images.mbox";

// Each reference of the report as "MESSAGE URL STATUS MATCHED ACTION REASON TARGET_MESSAGE
// TARGET TARGET_OFFSET" (python3 reads the JSON: an independent reader); the offset as
// "From-N" when it is where the mbox's Nth From_ line starts, so that it is checked against
// the bytes, not against what the program said.
std::string report_lines(const std::string &report_path, const std::string &mbox)
{
    return testing::sh("python3 -c 'import json,sys,re\n"
                       "starts=[m.start() for m in re.finditer(rb\"(?m)^From \", open(sys.argv[2],\"rb\").read())]\n"
                       "for l in open(sys.argv[1]):\n"
                       "  o=json.loads(l)\n"
                       "  for r in o[\"refs\"]:\n"
                       "    off=r.get(\"target_offset\")\n"
                       "    off=\"From-%d\" % (starts.index(off)+1) if off in starts else str(off)\n"
                       "    print(o[\"index\"], r[\"url\"], r[\"status\"], r.get(\"matched\") or \"-\", r[\"action\"],"
                       " r.get(\"reason\") or \"-\", r.get(\"target_message\") or \"-\", r.get(\"target\") or \"-\", off)' " +
                       quote(report_path) + " " + quote(mbox))
        .out;
}

} // namespace

TEST_CASE("thread cids: the report says where a reply's image came from")
{
    testing::TempDir d;
    const std::string report = d / "r.jsonl";
    auto r = testing::mimeuri("--check --report=" + quote(report) + " " + quote(kReplies));
    REQUIRE(r.status == 0);
    CHECK(report_lines(report, kReplies) ==
          "1 cid:logo@reply.example resolved - none - - 2 None\n"
          "2 cid:chart@reply.example resolved - none - - 2 None\n"
          "2 cid:logo@reply.example resolved thread none - root@reply.example 2 From-1\n"
          "3 cid:chart@reply.example resolved thread none - parent@reply.example 2 From-2\n"
          "3 cid:logo@reply.example resolved thread none - root@reply.example 2 From-1\n"
          "3 cid:gone@reply.example dangling - none - - - None\n");
    // The same answers whatever --jobs says: a worker that has not indexed the message a
    // reply answers plans it again once the input is indexed.
    const std::string report2 = d / "r2.jsonl";
    REQUIRE(testing::mimeuri("--jobs=2 --check --report=" + quote(report2) + " " + quote(kReplies)).status == 0);
    CHECK(report_lines(report2, kReplies) == report_lines(report, kReplies));
    // --summary-header counts them resolved (the reply: chart and logo; gone dangles); the
    // message is otherwise unchanged (repair rewrites no cid: to another message: RFC 2392
    // lets a cid: name a part of its own message only).
    auto s = testing::mimeuri("--summary-header " + quote(kReplies));
    REQUIRE(s.status == 0);
    CHECK(s.out.find("Mimeuri-Refs: resolved=2 dangling=1 ambiguous=0") != std::string::npos);
    CHECK(s.out.find("cid:chart@reply.example\" alt=\"chart, quoted\"") != std::string::npos);
    auto repaired = testing::mimeuri(quote(kReplies)); // the default, --cid=repair
    REQUIRE(repaired.status == 0);
    CHECK(repaired.out == testing::read_file(kReplies));
    // --cid=inline reads this message's parts only: a thread's part is not inlined, and says so.
    const std::string inlined = d / "i.jsonl";
    REQUIRE(testing::mimeuri("--cid=inline --report=" + quote(inlined) + " " + quote(kReplies)).status == 0);
    CHECK(report_lines(inlined, kReplies).find("3 cid:chart@reply.example resolved thread none other-message "
                                               "parent@reply.example 2 From-2\n") != std::string::npos);
}

TEST_CASE("thread cids: with --cid=extract the reply's page shows the image of the message it answers")
{
    testing::TempDir d;
    const std::string dir = d / "out", report = d / "r.jsonl";
    auto r = testing::mimeuri("--cid=extract --extract-dir=" + quote(dir) + " --report=" + quote(report) + " " + quote(kReplies));
    REQUIRE(r.status == 0);
    const std::string lines = report_lines(report, kReplies);
    CHECK(lines.find("3 cid:chart@reply.example resolved thread extracted - parent@reply.example 2") != std::string::npos);
    CHECK(lines.find("3 cid:logo@reply.example resolved thread extracted - root@reply.example 2") != std::string::npos);
    CHECK(lines.find("2 cid:logo@reply.example resolved thread extracted - root@reply.example 2") != std::string::npos);
    CHECK(lines.find("3 cid:gone@reply.example dangling - none dangling") != std::string::npos);
    // Each <img> of the reply's page: its src, and whether it names a file whose bytes are the
    // image the message it answers holds (python3 decodes the mbox's base64 on its own).
    auto imgs = testing::sh(
        "python3 -c 'import sys,re,os,base64,html,urllib.parse\n"
        "mbox=open(sys.argv[2]).read()\n"
        "pngs={m.group(1):base64.b64decode(m.group(2)) for m in re.finditer(r\"Content-ID: <([^>]+)>\\n\"\n"
        "      r\"Content-Transfer-Encoding: base64\\n\\n(\\S+)\", mbox)}\n"
        "page=open(os.path.join(sys.argv[1],\"3\",\"index.html\")).read()\n"
        "for alt_src in re.findall(r\"<img [^>]*>\", page):\n"
        "  src=html.unescape(re.search(r\"src=\\\"([^\\\"]*)\\\"\", alt_src).group(1))\n"
        "  f=os.path.normpath(os.path.join(sys.argv[1],\"3\",urllib.parse.unquote(src)))\n"
        "  got=open(f,\"rb\").read() if src.startswith(\"../\") and os.path.isfile(f) else None\n"
        "  same=[c for c,b in pngs.items() if b==got]\n"
        "  print(src, same[0] if same else \"-\")' " +
        quote(dir) + " " + quote(kReplies));
    CHECK(imgs.out == "../2/chart.png chart@reply.example\n"
                      "../1/logo.png logo@reply.example\n"
                      "cid:gone@reply.example -\n");
}

TEST_CASE("thread cids: the message answered found in an index on disk (--mid-index)")
{
    testing::TempDir d;
    // The archive's first two messages indexed; the reply comes alone, in a run of its own.
    const std::string older = d / "older.mbox", reply = d / "reply.eml", index = d / "ix.sqlite";
    const std::string all = testing::read_file(kReplies);
    const auto third = all.find("From carol@");
    REQUIRE(third != std::string::npos);
    testing::write_file(older, all.substr(0, third));
    testing::write_file(reply, all.substr(all.find('\n', third) + 1));
    REQUIRE(testing::sh(testing::bin() + " index -o " + quote(index) + " " + quote(older)).status == 0);
    const std::string report = d / "r.jsonl";
    // Without the index: nothing to find.
    REQUIRE(testing::mimeuri("--check --report=" + quote(report) + " " + quote(reply)).status == 0);
    CHECK(report_lines(report, older) == "1 cid:chart@reply.example dangling - none - - - None\n"
                                         "1 cid:logo@reply.example dangling - none - - - None\n"
                                         "1 cid:gone@reply.example dangling - none - - - None\n");
    REQUIRE(testing::mimeuri("--check --mid-index=" + quote(index) + " --report=" + quote(report) + " " + quote(reply))
                .status == 0);
    CHECK(report_lines(report, older) ==
          "1 cid:chart@reply.example resolved thread none - parent@reply.example 2 From-2\n"
          "1 cid:logo@reply.example resolved thread none - root@reply.example 2 From-1\n"
          "1 cid:gone@reply.example dangling - none - - - None\n");
}
