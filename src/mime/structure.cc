// structure: a message's MIME structure read from its bytes, as GMime's parser reads it
// (gmime-parser.c), for plain messages only (structure.hh).
//
// SYNOPSIS  walk_structure(m, max_entities, max_depth): the entities of m in document order,
//           or nothing where the walk is not sure.
// What it follows of GMime's parser: a header block ends at its first empty line; a
// multipart's parts start after its delimiter lines, "--" and the boundary, then only linear
// white space ("--" more for the close delimiter; checked innermost boundary first, then its
// parents: a parent's delimiter ends the inner ones too); a leaf's content ends at the line
// break before a delimiter line (RFC 2046 5.1.1: the CRLF before a delimiter belongs to it);
// message/rfc822, rfc2822, news and global are embedded messages unless their
// Content-Transfer-Encoding is base64, quoted-printable or uuencode (then GMime reads them
// as application/octet-stream); the report types (message/delivery-status) are leaves; the
// end of the input or a parent's delimiter line ends a multipart not closed. Anything else GMime has a reading of (a header line that is
// not "name:", a header block ended by a delimiter line or the end, a boundary in RFC 2231
// or RFC 2047 form, a comment) is left to GMime: the walk says it is not sure.
#include "structure.hh"

#include "header_lines.hh"
#include "text.hh"

#include <glib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

namespace mimeuri {

namespace {

bool lwsp(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The first line start at or after `at` (itself a line start) whose line starts with "--",
// or m's size: each '-' found by memchr, and looked back from. Base64 has none, so most of
// a message's bytes are passed over at memchr's speed (a memchr and a compare a line were
// most of the walk's instructions, issue 53).
std::size_t next_dash_line(std::string_view m, std::size_t at)
{
    for (std::size_t i = at; i + 1 < m.size();) {
        const void *hit = std::memchr(m.data() + i, '-', m.size() - i - 1);
        if (!hit) break;
        i = static_cast<std::size_t>(static_cast<const char *>(hit) - m.data());
        if (m[i + 1] == '-' && (i == at || m[i - 1] == '\n')) return i;
        i += m[i + 1] == '-' ? 2 : 1;
    }
    return m.size();
}

// RFC 2045 5.1 token characters: a table (a strchr a byte was a fifth of the walk's reading
// of Content-Type fields).
constexpr auto kTokenChars = [] {
    std::array<bool, 256> t{};
    for (int c = 33; c < 127; ++c) t[static_cast<std::size_t>(c)] = true;
    for (char c : std::string_view("()<>@,;:\\\"/[]?=")) t[static_cast<unsigned char>(c)] = false;
    return t;
}();

bool token_char(char c) { return kTokenChars[static_cast<unsigned char>(c)]; }

struct ParsedType {
    std::string type, subtype, boundary, charset;
    bool has_boundary{false}, has_charset{false};
};

// A Content-Type value in the plain form "type/subtype *(; name=token-or-quoted-string)",
// else nothing: comments, escapes, a boundary in RFC 2231 or 2047 form, repeated boundaries
// are GMime's. Other parameters in those forms (a file name) change neither the type nor the
// boundary; where a scanned part's charset may be one, the inert check asks GMime.
std::optional<ParsedType> parse_content_type(std::string_view v)
{
    std::size_t i = 0;
    auto blanks = [&] {
        while (i < v.size() && lwsp(v[i])) ++i;
    };
    auto token = [&] {
        const std::size_t b = i;
        while (i < v.size() && token_char(v[i])) ++i;
        return v.substr(b, i - b);
    };
    ParsedType t;
    blanks();
    t.type = text::ascii_lower(token());
    blanks();
    if (t.type.empty() || i >= v.size() || v[i] != '/') return std::nullopt;
    ++i;
    blanks();
    t.subtype = text::ascii_lower(token());
    blanks();
    if (t.subtype.empty()) return std::nullopt;
    while (i < v.size()) {
        if (v[i] != ';') return std::nullopt;
        ++i;
        blanks();
        if (i == v.size()) break; // a trailing ';'
        const std::string name = text::ascii_lower(token());
        blanks();
        if (name.empty() || (name != "boundary" && name.rfind("boundary", 0) == 0)) return std::nullopt;
        if (i >= v.size() || v[i] != '=') return std::nullopt;
        ++i;
        blanks();
        std::string_view value;
        if (i < v.size() && v[i] == '"') {
            const std::size_t close = v.find('"', i + 1);
            if (close == std::string_view::npos) return std::nullopt;
            value = v.substr(i + 1, close - i - 1);
            // (a loop: find_first_of calls memchr on its set for each byte, 1.4 M instructions
            // on the corpus mbox's boundaries, issue 53)
            for (char c : value)
                if (c == '\\' || c == '\r' || c == '\n') return std::nullopt;
            i = close + 1;
        } else {
            value = token();
        }
        blanks();
        if (name == "boundary") {
            if (t.has_boundary || value.empty() || lwsp(value.back()) || value.find("=?") != std::string_view::npos)
                return std::nullopt;
            t.has_boundary = true;
            t.boundary = value;
        } else if (name == "charset") { // two, which GMime may read either way: not plain
            if (t.has_charset) return std::nullopt;
            t.has_charset = true;
            t.charset = value;
        }
    }
    return t;
}

// Where the walk stands after an entity: the delimiter line that ended it (its start, the
// boundary's depth in the stack, a close delimiter or not), or the end of the message.
struct Found {
    std::size_t line{0};
    std::size_t level{0};
    bool close{false};
    bool eos{true};
};

class Walker {
public:
    Walker(std::string_view m, std::size_t max_entities, int max_depth, std::vector<WalkEntity> &out)
        : entities(out), m_(m), max_entities_(max_entities), max_depth_(max_depth)
    {
    }
    // The entity whose header block starts at `at`; false when not sure.
    bool entity(std::size_t at, int depth, Found &found);
    std::vector<WalkEntity> &entities;

private:
    bool header_block(std::size_t at, WalkEntity &e, std::string_view &ct);
    bool scan(std::size_t at, Found &found) const; // to the next delimiter line of a boundary
    bool multipart(std::size_t index, const std::string &boundary, int depth, Found &found);
    bool content_end(std::size_t d, WalkEntity &e) const;
    std::size_t line_end(std::size_t at) const
    {
        const void *nl = std::memchr(m_.data() + at, '\n', m_.size() - at);
        return nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - m_.data()) : m_.size();
    }

    std::string_view m_;
    std::size_t max_entities_;
    int max_depth_;
    std::vector<std::string> bounds_; // "--" and each open multipart's boundary, outermost first
};

// A plain header block: every line a field ("name:", the name printable ASCII with no
// white space) or the fold of one, ended by an empty line.
bool Walker::header_block(std::size_t at, WalkEntity &e, std::string_view &ct)
{
    bool field = false, in_ct = false, cte_seen = false;
    std::size_t ct_begin = 0;
    e.header_begin = at;
    for (;;) {
        if (at >= m_.size()) return false; // no empty line: GMime's reading
        const std::size_t end = line_end(at);
        if (end == m_.size()) return false;
        std::string_view line = m_.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            if (in_ct) ct = m_.substr(ct_begin, at - ct_begin);
            e.content_begin = end + 1;
            return true;
        }
        if (line[0] == ' ' || line[0] == '\t') {
            if (!field) return false;
        } else {
            const std::size_t k = field_name_length(line);
            if (k == 0 || line.substr(0, 2) == "--") return false;
            if (in_ct) ct = m_.substr(ct_begin, at - ct_begin);
            field = true;
            in_ct = false;
            auto named = [&](std::string_view lower) { return k == lower.size() && text::ci_at(line, 0, lower); };
            if (named("content-type")) {
                if (!ct.empty()) return false; // two fields, which could disagree: GMime's
                in_ct = true;
                ct_begin = at;
            } else if (named("content-transfer-encoding")) {
                if (cte_seen || field_end(m_, at) > end + 1) return false;
                cte_seen = true;
                for (char c : line.substr(k + 1))
                    if (!lwsp(c)) e.encoding += static_cast<char>(g_ascii_tolower(c));
            } else if (named("content-id")) {
                if (e.content_id) e.content_ids = true;
                else e.content_id_field = m_.substr(at, field_end(m_, at) - at);
                e.content_id = true;
            } else if (named("content-location") || named("content-base")) {
                e.location = true;
            }
        }
        at = end + 1;
    }
}

// From the line at `at`, the first delimiter line of an open boundary (innermost first), or
// the end; false at a line that starts like a delimiter and is not one (GMime would go on
// to the parents' boundaries with it: not followed here).
bool Walker::scan(std::size_t at, Found &found) const
{
    found = Found{};
    if (bounds_.empty()) return true;
    while ((at = next_dash_line(m_, at)) < m_.size()) {
        const std::size_t end = line_end(at);
        const std::string_view line = m_.substr(at, end - at);
        for (std::size_t level = bounds_.size(); level-- > 0;) {
            const std::string &b = bounds_[level];
            if (line.compare(0, b.size(), b) != 0) continue;
            std::string_view rest = line.substr(b.size());
            const bool close = rest.compare(0, 2, "--") == 0;
            if (close) rest.remove_prefix(2);
            for (char c : rest)
                if (!lwsp(c)) return false;
            found = Found{at, level, close, false};
            return true;
        }
        at = end + 1;
    }
    return true;
}

// A multipart's body from after its header block: the preamble, then each part, then the
// epilogue up to a parent's delimiter line (or the end).
bool Walker::multipart(std::size_t index, const std::string &boundary, int depth, Found &found)
{
    bounds_.push_back("--" + boundary);
    const std::size_t level = bounds_.size() - 1;
    // The end of the input, or a parent's delimiter line, ends an unclosed multipart (and the
    // part it was in); a multipart whose preamble runs to the end has no parts.
    auto unclosed = [&] {
        bounds_.pop_back();
        return true;
    };
    if (!scan(entities[index].content_begin, found)) return false;
    if (found.eos) return unclosed();
    if (found.level != level || found.close) return false;
    for (;;) {
        const std::size_t next = line_end(found.line) + 1;
        if (!entity(next, depth + 1, found)) return false;
        if (found.eos || found.level < level) return unclosed();
        if (found.close) break;
    }
    const std::size_t after = line_end(found.line) + 1;
    bounds_.pop_back();
    return scan(after, found);
}

bool Walker::entity(std::size_t at, int depth, Found &found)
{
    if (depth > max_depth_ || entities.size() >= max_entities_) return false;
    const std::size_t index = entities.size();
    entities.emplace_back();
    entities[index].depth = depth;
    std::string_view ct;
    if (!header_block(at, entities[index], ct)) return false;
    WalkEntity &e = entities[index];
    e.content_type = ct;
    ParsedType t{"text", "plain", {}, {}, false, false};
    if (!ct.empty()) {
        auto parsed = parse_content_type(ct.substr(ct.find(':') + 1));
        if (!parsed) return false;
        t = std::move(*parsed);
    }
    e.type = std::move(t.type);
    e.subtype = std::move(t.subtype);
    e.charset = std::move(t.charset);
    const bool plain_encoding = e.encoding.empty() || e.encoding == "7bit" || e.encoding == "8bit" || e.encoding == "binary";
    if (e.type == "multipart") {
        // A digest's parts default to message/rfc822; a multipart with no boundary is GMime's.
        // GMime 3.2 reads a multipart's parts whatever its Content-Transfer-Encoding says
        // (checked on this machine, base64 and quoted-printable alike): so does the walk.
        if (e.subtype == "digest" || !t.has_boundary) return false;
        e.kind = WalkEntity::Kind::Multipart;
        return multipart(index, t.boundary, depth, found);
    }
    if (e.type == "message" && (e.subtype == "rfc822" || e.subtype == "rfc2822" || e.subtype == "news" || e.subtype == "global")) {
        if (!plain_encoding) return false;
        e.kind = WalkEntity::Kind::Message;
        const std::size_t body = e.content_begin;
        // An empty embedded message (a delimiter line right away) is GMime's.
        if (m_.compare(body, 2, "--") == 0) return false;
        return entity(body, depth + 1, found);
    }
    // GMime reads the report types below as leaves; any other message/ subtype it does not
    // know as an embedded message, message/partial as a part of its own kind: GMime's.
    if (e.type == "message") {
        static constexpr std::string_view leaves[] = {"delivery-status", "disposition-notification", "feedback-report",
                                                      "rfc822-headers", "global-headers", "global-delivery-status",
                                                      "global-disposition-notification", "tracking-status"};
        if (std::find(std::begin(leaves), std::end(leaves), e.subtype) == std::end(leaves)) return false;
    }
    if (!scan(e.content_begin, found)) return false;
    e.content_end = m_.size();
    return found.eos || content_end(found.line, e);
}

// Where GMime ends a leaf's content before the delimiter line at d, as
// MessageContext::content_span reads it: GMime drops two bytes when the delimiter line ends
// in CR LF (or in a CR at the end of the input), one otherwise; where the line break before
// the delimiter was shorter than that, content_span finds the real one.
bool Walker::content_end(std::size_t d, WalkEntity &e) const
{
    const std::size_t end = line_end(d);
    const std::size_t drop = end > d && m_[end - 1] == '\r' ? 2 : 1;
    if (d == e.content_begin) {
        e.content_end = d; // empty
        return true;
    }
    if (d < e.content_begin + drop) return false;
    std::size_t at = d - drop;
    if (m_.compare(at, 3, "\n--") != 0 && m_.compare(at, 4, "\r\n--") != 0) {
        std::size_t i = at; // at + 2 <= d + 1, and d, d + 1 hold the delimiter's "--"
        while (i < at + 3 && m_[i] != '\n') ++i;
        if (i == at + 3 || m_.compare(i + 1, 2, "--") != 0) return false;
        at = i > at && m_[i - 1] == '\r' ? i - 1 : i;
    }
    e.content_end = at;
    return true;
}

} // namespace

bool walk_structure(std::string_view m, std::size_t max_entities, int max_depth, std::vector<WalkEntity> &out)
{
    out.clear();
    Walker w(m, max_entities, max_depth, out);
    Found found;
    return w.entity(0, 0, found) && found.eos;
}

std::optional<std::vector<WalkEntity>> walk_structure(std::string_view m, std::size_t max_entities, int max_depth)
{
    std::vector<WalkEntity> out;
    if (!walk_structure(m, max_entities, max_depth, out)) return std::nullopt;
    return out;
}

} // namespace mimeuri
