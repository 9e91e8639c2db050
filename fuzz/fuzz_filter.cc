// The whole filter: bytes in, every pass in a mode chosen by the first byte, bytes out.
// Invariants: with the passes off the output is the input; every message that parsed still
// parses; no edit touches the body of a leaf that is not text/html, nor of an HTML leaf
// plainly in an encoding that is not ASCII-compatible; every URL-word written is at most 40
// characters.
// Structure (read by tests/mime_structure, which does not use GMime): every message that
// parsed has the same tree after the edits (types, boundaries, number and nesting of parts,
// close delimiters); every leaf whose body no edit touches is byte-identical; every header
// field no edit touches is still there byte for byte, and each added field is a field of its
// own; no header line is invalid that was not invalid in the input; a rewritten base64 or
// quoted-printable body is well-formed. In extract mode (cid mode 3) files land only inside
// the extract folder: a symlink planted at DIR/1 (or at DIR/1/index.html) points to a trap
// folder that must stay empty. The census of Message-IDs rules out no id the index learns.
// --data=attach (run apart: it builds structure): every message that parsed still parses,
// and no Content-ID is in the output more times than in the input, or twice where it was once
// (issue 48: one message never holds one id twice), embedded messages' ids counted in.
#include "data.hh"
#include "engine.hh"
#include "extract.hh"
#include "extract_write.hh"
#include "external_body.hh"
#include "labels.hh"
#include "mbox.hh"
#include "message.hh"
#include "mid_store.hh"
#include "mime_structure.hh"
#include "references.hh"
#include "streamed_body.hh"

#include <gmime/gmime.h>

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

using namespace mimeuri;

namespace {

// An edit's bytes, a streamed body's made from the input (src/mime/streamed_body.cc).
std::string made(const Edit &e, const Source &src)
{
    auto t = edit_text(e, reader_of(src));
    if (!t) std::abort(); // the input is in memory: nothing to fail
    return *t;
}

std::string splice(const std::string &in, std::vector<Edit> edits)
{
    std::sort(edits.begin(), edits.end(), [](const Edit &a, const Edit &b) { return a.begin < b.begin; });
    std::string out;
    std::size_t pos = 0;
    for (const Edit &e : edits) {
        if (static_cast<std::size_t>(e.begin) < pos) std::abort(); // overlapping edits
        out.append(in, pos, static_cast<std::size_t>(e.begin) - pos);
        out += e.text;
        pos = static_cast<std::size_t>(e.end);
    }
    out.append(in, pos, std::string::npos);
    return out;
}

// The URL-words of an edit that replaces the Content-Type header of an external-body part.
void check_words(const std::string &text)
{
    for (std::size_t at = text.find("URL=\""); at != std::string::npos; at = text.find("URL=\"", at + 1)) {
        std::size_t word = 0;
        for (std::size_t i = at + 5; i < text.size() && text[i] != '"'; ++i) {
            char c = text[i];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') word = 0;
            else if (++word > 40) {
                std::fprintf(stderr, "URL-word over 40 in: %.300s\n", text.c_str());
                std::abort();
            }
        }
    }
}

// Whether an HTML leaf is, by a reading that needs no sniffing code of mimeuri's, in an
// encoding that is not ASCII-compatible (issue 31 item 2): a byte-order mark of UTF-16 at
// the start of its decoded content, or a charset label that names UTF-16/32, UCS-2/4, UTF-7
// or ISO-2022 under its usual aliases. Such a part may be checked, never edited in its bytes.
// A subset only (no <meta>, no other aliases): the oracle must never be wrong.
bool plainly_not_ascii_compatible(GMimeObject *leaf)
{
    if (const char *cs = g_mime_object_get_content_type_parameter(leaf, "charset")) {
        std::string label;
        for (const char *c = cs; *c; ++c) label += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
        static const char *const labels[] = {"utf-16", "utf-16le", "utf-16be", "utf16", "csunicode", "iso-10646-ucs-2",
                                             "ucs-2", "utf-32", "utf-32le", "utf-32be", "ucs-4", "utf-7", "utf7",
                                             "iso-2022-jp", "csiso2022jp", "iso-2022-kr", "iso-2022-cn", "unicode"};
        for (const char *l : labels)
            if (label == l) return true;
    }
    GMimeDataWrapper *w = GMIME_IS_PART(leaf) ? g_mime_part_get_content(GMIME_PART(leaf)) : nullptr;
    if (!w) return false;
    GMimeStream *mem = g_mime_stream_mem_new();
    (void)g_mime_data_wrapper_write_to_stream(w, mem);
    GByteArray *bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
    bool bom = bytes->len >= 2 && ((bytes->data[0] == 0xFF && bytes->data[1] == 0xFE) ||
                                   (bytes->data[0] == 0xFE && bytes->data[1] == 0xFF));
    g_object_unref(mem);
    return bom;
}

// The extract folder of the current run, removed also when a check aborts.
std::string g_extract_base;

void remove_tree(const std::string &base)
{
    if (base.empty()) return;
    ::nftw(base.c_str(), [](const char *p, const struct stat *, int, FTW *) { return ::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
}

[[noreturn]] void fail(const std::string &what, const std::string &detail = {})
{
    std::fprintf(stderr, "fuzz_filter: invariant broken: %s\n%.2000s\n", what.c_str(), detail.c_str());
    remove_tree(g_extract_base);
    std::abort();
}

std::string show(std::string_view s, std::size_t max = 300)
{
    std::string out;
    for (char c : s.substr(0, max)) {
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (static_cast<unsigned char>(c) < 32 || c == 127) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned char>(c));
            out += b;
        } else out += c;
    }
    if (s.size() > max) out += "...";
    return out;
}

// Does an edit touch [b, e)? Conservative for bodies: an edit meeting either end counts.
bool touches_body(const std::vector<Edit> &edits, std::size_t b, std::size_t e)
{
    for (const Edit &ed : edits) {
        auto eb = static_cast<std::size_t>(ed.begin), ee = static_cast<std::size_t>(ed.end);
        if (eb <= e && ee >= b) return true;
    }
    return false;
}

// A header field [b, e) (line end excluded; eol_end past it): touched when an edit replaces
// any of it, or inserts strictly inside it. An insertion right after its last character when
// it has no line end (the end of the input) is not "inside": what lands there is glued on.
bool touches_field(const std::vector<Edit> &edits, std::size_t b, std::size_t eol_end)
{
    for (const Edit &ed : edits) {
        auto eb = static_cast<std::size_t>(ed.begin), ee = static_cast<std::size_t>(ed.end);
        if (eb == ee ? (b < eb && eb < eol_end) : (eb < eol_end && ee > b)) return true;
    }
    return false;
}

std::size_t past_eol(const std::string &m, std::size_t e)
{
    if (e < m.size() && m[e] == '\r' && e + 1 < m.size() && m[e + 1] == '\n') return e + 2;
    if (e < m.size() && m[e] == '\n') return e + 1;
    // A CR last in the input is the field's line end to the reader (tests/mime_structure.cc):
    // a removed last field takes it along.
    if (e + 1 == m.size() && m[e] == '\r') return e + 1;
    return e;
}

// Header fields in an inserted text: lines that are not empty and do not start with SP/HT.
std::size_t fields_in(const std::string &text)
{
    std::size_t n = 0, pos = 0;
    while (pos < text.size()) {
        std::size_t lf = text.find('\n', pos);
        std::size_t end = lf == std::string::npos ? text.size() : lf;
        std::string_view line(text.data() + pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!line.empty() && line[0] != ' ' && line[0] != '\t') ++n;
        pos = end + 1;
    }
    return n;
}

std::string lower(std::string s)
{
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The transfer encoding named by an entity's last Content-Transfer-Encoding field.
std::string cte_of(const std::string &m, const mimestructure::Entity &e)
{
    std::string v;
    for (const auto &f : e.fields)
        if (f.valid && lower(f.name) == "content-transfer-encoding") v = m.substr(f.colon + 1, f.end - f.colon - 1);
    std::string t;
    for (char c : v)
        if (!std::isspace(static_cast<unsigned char>(c))) t += c;
    return lower(t);
}

// A body mimeuri wrote as base64: alphabet and line ends only, a multiple of 4, '=' at the end.
std::string bad_base64(std::string_view body)
{
    std::size_t n = 0, pad = 0;
    for (char c : body) {
        if (c == '\r' || c == '\n') continue;
        if (c == '=') { ++pad; ++n; continue; }
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) return "a byte outside the base64 alphabet";
        if (pad) return "base64 data after '='";
        ++n;
    }
    if (n % 4) return "base64 length " + std::to_string(n) + " is not a multiple of 4";
    if (pad > 2) return "more than two '=' of base64 padding";
    return {};
}

// A body mimeuri wrote as quoted-printable: '=' is followed by two hex digits or a line end.
std::string bad_qp(std::string_view body)
{
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '=') continue;
        if (i + 1 == body.size() || body[i + 1] == '\n' || (body[i + 1] == '\r' && i + 2 < body.size() && body[i + 2] == '\n')) continue;
        if (i + 2 < body.size() && std::isxdigit(static_cast<unsigned char>(body[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(body[i + 2])))
            continue;
        return "'=' not followed by two hex digits or a line end";
    }
    return {};
}

// The structure of one message: in (the input bytes) against out (after the edits, which
// are given relative to in).
void check_structure(const std::string &in, const std::string &out, const std::vector<Edit> &edits)
{
    using namespace mimestructure;
    Entity ti = read(in), to = read(out);
    std::vector<const Entity *> ei, eo;
    flatten(ti, ei);
    flatten(to, eo);
    if (std::getenv("FUZZ_DEBUG")) {
        for (const Edit &ed : edits) std::fprintf(stderr, "edit [%lld,%lld) %s\n", (long long)ed.begin, (long long)ed.end, show(ed.text, 80).c_str());
        for (std::size_t k = 0; k < ei.size(); ++k) std::fprintf(stderr, "entity %zu %s header [%zu,%zu] body [%zu,%zu)\n", k, ei[k]->type.c_str(), ei[k]->header_begin, ei[k]->header_end, ei[k]->body_begin, ei[k]->body_end);
    }
    std::string diff = compare(ti, to);
    if (!diff.empty())
        fail("the output's MIME structure differs from the input's: " + diff,
             "input:\n" + outline(ti) + "output:\n" + outline(to));
    if (ei.size() != eo.size()) fail("flattened trees of different sizes");
    std::multimap<std::string, int> bad_in;
    for (const BadLine &b : bad_header_lines(ti)) bad_in.emplace(b.text, 0);
    for (const BadLine &b : bad_header_lines(to)) {
        auto it = bad_in.find(b.text);
        if (it == bad_in.end()) fail(std::string("invalid header line in the output (") + b.why + ")", "\"" + show(b.text) + "\"");
        bad_in.erase(it);
    }
    // Insertions into a header block (the first entity in document order whose block holds
    // the point): the fields they add. A block with no empty line after it (it runs to the
    // end of its entity) also holds the point past the line break that follows it: that
    // break belongs to the next delimiter, and what is inserted after it still lands in the
    // block, before the delimiter's "--".
    std::vector<std::size_t> added_to(ei.size(), 0);
    for (const Edit &ed : edits) {
        if (ed.begin != ed.end) continue;
        auto p = static_cast<std::size_t>(ed.begin);
        for (std::size_t k = 0; k < ei.size(); ++k)
            if (p >= ei[k]->header_begin &&
                p <= (ei[k]->body_begin == ei[k]->header_end ? past_eol(in, ei[k]->header_end) : ei[k]->header_end)) {
                added_to[k] += fields_in(ed.text);
                break;
            }
    }
    for (std::size_t k = 0; k < ei.size(); ++k) {
        const Entity &a = *ei[k], &b = *eo[k];
        // Untouched leaves, byte for byte.
        bool body_touched = touches_body(edits, a.body_begin, a.body_end);
        if (a.leaf() && !a.truncated && !body_touched) {
            std::string_view x(in.data() + a.body_begin, a.body_end - a.body_begin);
            std::string_view y(out.data() + b.body_begin, b.body_end - b.body_begin);
            if (x != y) fail("a leaf no edit touches changed (" + a.type + ", entity " + std::to_string(k) + ")",
                             "was: " + show(x) + "\nnow: " + show(y));
        }
        // A rewritten body is well-formed in its encoding where the input's was (a part that
        // GMime reads as a multipart and this reader as a leaf, under a garbled Content-Type,
        // was never that encoding to begin with).
        if (a.leaf() && body_touched && b.body_end > b.body_begin) {
            std::string_view x(in.data() + a.body_begin, a.body_end - a.body_begin);
            std::string_view y(out.data() + b.body_begin, b.body_end - b.body_begin);
            std::string cte = cte_of(out, b), why;
            if (cte == "base64" && bad_base64(x).empty()) why = bad_base64(y);
            else if (cte == "quoted-printable" && bad_qp(x).empty()) why = bad_qp(y);
            if (!why.empty()) fail("a rewritten " + cte + " body is malformed: " + why, show(y, 2000));
        }
        // Header fields: the untouched ones unchanged, added ones each a field of its own.
        std::multimap<std::string, int> have;
        for (const auto &f : b.fields) have.emplace(out.substr(f.begin, f.end - f.begin), 0);
        std::size_t added = added_to[k], removed = 0;
        for (const auto &f : a.fields) {
            // A whole field cut out (a planted copy of a result header, set_sole_header).
            for (const Edit &ed : edits)
                if (ed.text.empty() && static_cast<std::size_t>(ed.begin) == f.begin &&
                    static_cast<std::size_t>(ed.end) == past_eol(in, f.end))
                    ++removed;
            if (touches_field(edits, f.begin, past_eol(in, f.end))) continue;
            auto it = have.find(in.substr(f.begin, f.end - f.begin));
            if (it == have.end())
                fail("a header field no edit touches changed or went missing", "\"" + show(in.substr(f.begin, f.end - f.begin)) + "\"");
            have.erase(it);
        }
        if (b.fields.size() + removed != a.fields.size() + added)
            fail("the output has " + std::to_string(b.fields.size()) + " header fields in entity " + std::to_string(k) +
                     ", expected " + std::to_string(a.fields.size()) + " + " + std::to_string(added) + " added - " +
                     std::to_string(removed) + " removed",
                 "output header block: " + show(std::string_view(out).substr(b.header_begin, b.header_end - b.header_begin), 2000));
    }
}

// --- Extract mode: a fresh folder per run, with a symlink planted where mimeuri writes.
struct ExtractTrap {
    std::string base, dir, trap;
    bool ok{false};
    explicit ExtractTrap(bool at_file)
    {
        const char *tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/fuzz-extract-XXXXXX";
        if (!mkdtemp(tmpl.data())) return;
        base = tmpl;
        g_extract_base = base;
        dir = base + "/out";
        trap = base + "/trap";
        if (::mkdir(dir.c_str(), 0755) != 0 || ::mkdir(trap.c_str(), 0755) != 0) return;
        if (at_file) {
            if (::mkdir((dir + "/1").c_str(), 0755) != 0) return;
            if (::symlink((trap + "/index.html").c_str(), (dir + "/1/index.html").c_str()) != 0) return;
        } else if (::symlink(trap.c_str(), (dir + "/1").c_str()) != 0) {
            return;
        }
        ok = true;
    }
    static std::vector<std::string> entries(const std::string &d)
    {
        std::vector<std::string> out;
        if (DIR *h = ::opendir(d.c_str())) {
            while (dirent *e = ::readdir(h))
                if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
            ::closedir(h);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
    void check() const
    {
        if (!ok) return;
        auto t = entries(trap);
        if (!t.empty()) fail("extract wrote outside its folder: through a planted symlink into " + trap, "found: " + t[0]);
        auto b = entries(base);
        if (b != std::vector<std::string>{"out", "trap"}) fail("extract wrote outside its folder, beside it in " + base);
    }
    ~ExtractTrap()
    {
        remove_tree(base);
        g_extract_base.clear();
    }
};

} // namespace

// The engine's copy of a message no pass can change (MessageContext::parse, InertCheck):
// the references and external-body passes (those with edited_types), planned with and
// without it, give the same plans (and the same index, where the run keeps one).
void check_inert_copy(const Source &src, const std::vector<Segment> &segs, bool in_mbox, const RefOptions &ro,
                      const ExternalBodyOptions &eo, const Limits &limits)
{
    auto passes = [&] {
        std::vector<std::unique_ptr<Pass>> v;
        v.push_back(std::make_unique<ReferencesPass>(ro));
        v.push_back(std::make_unique<ExternalBodyPass>(eo));
        return v;
    };
    auto fast_passes = passes(), full_passes = passes();
    EngineConfig cfg;
    cfg.limits = limits;
    Engine fast(fast_passes, cfg);
    cfg.copy_inert = false;
    Engine full(full_passes, cfg);
    for (std::size_t i = 0; i < segs.size(); ++i) {
        MessageAt at{src, segs[i], i + 1, in_mbox, 0};
        Plan a = fast.plan(at, true), b = full.plan(at, true);
        bool same = a.cause == b.cause && a.message_id == b.message_id && a.unprocessed == b.unprocessed &&
                    a.dangling == b.dangling && a.dangling_mid == b.dangling_mid && a.waits == b.waits &&
                    a.edits.size() == b.edits.size();
        for (std::size_t k = 0; same && k < a.edits.size(); ++k)
            same = a.edits[k].begin == b.edits[k].begin && a.edits[k].end == b.edits[k].end &&
                   made(a.edits[k], src) == made(b.edits[k], src);
        if (!same) fail("the inert copy planned message " + std::to_string(i + 1) + " otherwise than the full engine");
    }
    if (fast.save_index() != full.save_index()) fail("the inert copy indexed otherwise than the full engine");
}

// GMime parses msg (an output that parsed as an input), or the harness fails with why.
void still_parses(const std::string &msg, const char *why)
{
    GMimeStream *ms = g_mime_stream_mem_new_with_buffer(msg.data(), msg.size());
    GMimeParser *parser = g_mime_parser_new_with_stream(ms);
    GMimeMessage *m = g_mime_parser_construct_message(parser, nullptr);
    if (!m) fail(why);
    g_object_unref(m);
    g_object_unref(parser);
    g_object_unref(ms);
}

// Each Content-ID field's value in a message as mime_structure reads it (every entity,
// embedded messages too): brackets and white space dropped, lower case, as the data pass
// compares ids.
std::map<std::string, int> content_ids(const std::string &msg)
{
    using namespace mimestructure;
    Entity root = read(msg);
    std::vector<const Entity *> all;
    flatten(root, all);
    std::map<std::string, int> ids;
    for (const Entity *e : all)
        for (const Field &f : e->fields) {
            if (f.name.size() != 10 || g_ascii_strncasecmp(f.name.c_str(), "Content-ID", 10) != 0 || !f.valid) continue;
            std::string v;
            for (std::size_t i = f.colon + 1; i < f.end; ++i) {
                const char c = msg[i];
                if (c != ' ' && c != '\t' && c != '\r' && c != '\n') v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            }
            if (!v.empty() && v.front() == '<') v.erase(0, 1);
            if (!v.empty() && v.back() == '>') v.pop_back();
            if (!v.empty()) ++ids[v];
        }
    return ids;
}

// --data=attach alone on every message: the ids it gives are the message's own.
void check_data_attach(const Source &src, const std::vector<Segment> &segs, bool in_mbox, const Limits &limits,
                       const std::string &input)
{
    DataOptions d;
    d.mode = DataOptions::Mode::Attach;
    d.max = 4096;
    DataPass data(d);
    for (std::size_t i = 0; i < segs.size(); ++i) {
        auto ctx = MessageContext::parse(src, segs[i], i + 1, in_mbox, limits);
        if (!ctx->message()) continue;
        if (!data.apply(*ctx) || !ctx->finish()) continue;
        if (ctx->edits().empty()) continue;
        const Segment &read = ctx->segment();
        std::string msg_in = input.substr(static_cast<std::size_t>(read.msg_begin),
                                          static_cast<std::size_t>(read.msg_end - read.msg_begin));
        std::vector<Edit> local;
        for (const Edit &e : ctx->edits()) local.push_back({e.begin - read.msg_begin, e.end - read.msg_begin, made(e, src)});
        std::string msg_out = splice(msg_in, local);
        still_parses(msg_out, "--data=attach: a message that parsed no longer parses");
        const auto before = content_ids(msg_in);
        for (const auto &[id, n] : content_ids(msg_out)) {
            auto was = before.find(id);
            const int had = was == before.end() ? 0 : was->second;
            if (n > 1 && n > had) fail("--data=attach: a Content-ID the output holds " + std::to_string(n) + " times, the input " +
                                       std::to_string(had), "<" + show(id) + ">\n" + show(msg_out, 4000));
        }
    }
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    g_mime_init();
    g_log_set_default_handler([](const gchar *, GLogLevelFlags, const gchar *, gpointer) {}, nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const unsigned mode = data[0];
    std::string input(reinterpret_cast<const char *>(data) + 1, size - 1);
    Source src = Source::from_bytes(input, "fuzz");
    auto mbox = looks_like_mbox(src);
    auto segs = split(src, mbox.ok() && *mbox ? Format::Mbox : Format::Message);
    if (!segs) return 0;

    RefOptions ro;
    // Every HTML part of 1 KiB or more is scanned in pieces of 61 bytes: the fuzzer's inputs
    // are small.
    ro.piece_min = 1024;
    ro.piece_carry = 512;
    ro.piece_block = 61;
    ro.cid = static_cast<RefOptions::Cid>(1 + mode % 4); // check, repair, inline, extract
    std::unique_ptr<ExtractTrap> trap;
    if (ro.cid == RefOptions::Cid::Extract) {
        trap = std::make_unique<ExtractTrap>(mode & 4); // the symlink at DIR/1/index.html, or at DIR/1
        if (!trap->ok) return 0;
        ro.extract_dir = trap->dir;
        ro.pages = &archive::extract_pages;
    }
    ro.mid = RefOptions::Mid::Repair;
    ro.summary_header = mode & 8;
    ExternalBodyOptions eo;
    eo.legacy_to_url = mode & 16;
    eo.url_map = {{"http:", "https:"}};
    LabelOptions lo;
    lo.mode = (mode & 32) ? LabelOptions::Mode::All : LabelOptions::Mode::Top;
    lo.format = (mode & 64) ? LabelOptions::Format::Urc : LabelOptions::Format::Uri;
    ReferencesPass refs(ro);
    ExternalBodyPass ext(eo);
    LabelsPass labels(lo);
    Limits limits;
    limits.max_seconds = 5;
    // Mode bit 7: a small header limit, so that inputs within -max_len reach it (a long
    // first body line is no header block unless a message/ type makes it one: issue 31).
    if (mode & 128) limits.max_header_bytes = 1024;
    // The same bit: at most 4 fields in a block and 40 in a message (--max-header-fields),
    // so that generated inputs cross the field limits too; a message past them is passed as
    // it came, which the invariants below check like any other.
    if (mode & 128) limits.max_header_fields = 4;

    // The census of Message-IDs (src/input/id_census.hh), the input split as an mbox: no id the
    // index learns from a message may be ruled out.
    IdCensus census;
    {
        Splitter sp(src, Format::Mbox);
        sp.census(&census);
        std::vector<Segment> all_segs;
        for (;;) {
            auto r = sp.step(all_segs, 1 << 16);
            if (!r || *r) break;
        }
    }

    std::vector<Edit> all;
    std::size_t extract_folders = 0;
    for (std::size_t i = 0; i < segs->size(); ++i) {
        auto ctx = MessageContext::parse(src, (*segs)[i], i + 1, mbox.ok() && *mbox, limits);
        for (const StoredMessage &m : messages_of(*ctx))
            if (census.rules_out({m.message_id})) fail("the census of Message-IDs rules out one the index learns", show(m.message_id));
        if (!ctx->message()) continue;
        if (CrossMessageIndex *ix = refs.cross_message()) (void)ix->add(*ctx);
        for (Pass *p : std::initializer_list<Pass *>{&refs, &ext, &labels})
            if (!p->apply(*ctx)) break;
        if (!ctx->finish()) ctx->drop_edits(); // as the run does (an mboxcl2 Content-Length)
        std::vector<Edit> edits; // streamed bodies made text
        for (const Edit &e : ctx->edits()) edits.push_back({e.begin, e.end, made(e, src)});
        // Extraction is written when the run takes the message: as the taker does.
        if (!ctx->at_take().empty()) {
            const archive::FolderFiles x = archive::folder_of(ctx->at_take());
            (void)write_extraction(x.top, ++extract_folders, x.files);
        }
        // Where the Content-Type headers of external-body parts start.
        std::vector<std::int64_t> ext_headers;
        for (const Node &n : ctx->nodes()) {
            GMimeContentType *ct = g_mime_object_get_content_type(n.object);
            if (!ct || !g_mime_content_type_is_type(ct, "message", "external-body")) continue;
            if (GMimeHeader *h = g_mime_header_list_get_header(MessageContext::headers_of(n), "Content-Type"))
                ext_headers.push_back(g_mime_header_get_offset(h));
        }
        for (const Edit &e : edits) {
            // No edit inside the body of a leaf that is not HTML or a stylesheet (the references
            // pass edits a text/css part of a multipart/related, filters/ref_part.cc).
            for (const Node &n : ctx->nodes()) {
                if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object)) continue;
                GMimeContentType *ct = g_mime_object_get_content_type(n.object);
                const bool editable = ct && (g_mime_content_type_is_type(ct, "text", "html") ||
                                         g_mime_content_type_is_type(ct, "text", "css"));
                GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(n.object));
                GMimeStream *s = w ? g_mime_data_wrapper_get_stream(w) : nullptr;
                if (!s || s->bound_end < 0) continue;
                if (!(e.begin < s->bound_end && e.end > s->bound_start && e.begin != e.end)) continue;
                if (!editable) fail("an edit touches the body of a leaf that is not text/html or text/css");
                if (plainly_not_ascii_compatible(n.object))
                    fail("an edit touches an HTML or CSS part whose encoding is not ASCII-compatible (its label or BOM)");
            }
            if (std::find(ext_headers.begin(), ext_headers.end(), e.begin) != ext_headers.end()) check_words(e.text);
            all.push_back(e);
        }
        // Output of this message still parses: from where the context read it (past any lines
        // of white space only before the header block, which it keeps as they came).
        const Segment &read = ctx->segment();
        std::string msg_in = input.substr(static_cast<std::size_t>(read.msg_begin),
                                          static_cast<std::size_t>(read.msg_end - read.msg_begin));
        std::vector<Edit> local;
        for (const Edit &e : edits) {
            if (e.begin < read.msg_begin) fail("an edit touches the white-space lines before the header block");
            local.push_back({e.begin - read.msg_begin, e.end - read.msg_begin, e.text});
        }
        std::string msg_out = splice(msg_in, local);
        still_parses(msg_out, "a message that parsed no longer parses after the edits");
        check_structure(msg_in, msg_out, local);
    }
    if (trap) trap->check();
    check_data_attach(src, *segs, mbox.ok() && *mbox, limits, input);
    check_inert_copy(src, *segs, mbox.ok() && *mbox, ro, eo, limits);
    // And where the run keeps no mid: index (--mid=check, nothing reported: embedded messages
    // and Content-IDs are copied too), unless the mode's options need one all the same.
    RefOptions check = ro;
    check.mid = RefOptions::Mid::Check;
    check_inert_copy(src, *segs, mbox.ok() && *mbox, check, eo, limits);
    // Passes off: the input itself.
    if (splice(input, {}) != input) fail("with no edits the output is not the input");
    (void)splice(input, all);
    return 0;
}
