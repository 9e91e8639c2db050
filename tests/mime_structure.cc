#include "mime_structure.hh"

#include <cstring>

namespace mimestructure {

namespace {

bool wsp(char c) { return c == ' ' || c == '\t'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequal(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

struct Reader {
    std::string_view m;
    Limits limits;
    std::size_t parts{0};

    // The end of the line starting at pos within [pos, end): the LF's position, or end.
    std::size_t line_end(std::size_t pos, std::size_t end) const
    {
        const void *lf = std::memchr(m.data() + pos, '\n', end - pos);
        return lf ? static_cast<std::size_t>(static_cast<const char *>(lf) - m.data()) : end;
    }

    // RFC 5322 2.2: fields until the empty line; sets header_begin/end and body_begin.
    void headers(Entity &e, std::size_t begin, std::size_t end)
    {
        e.header_begin = begin;
        std::size_t pos = begin;
        Field *current = nullptr;
        while (pos < end) {
            std::size_t lf = line_end(pos, end);
            std::size_t ce = lf; // content end: the line without its line end
            // A CR before the LF, or last in the span, is (part of) the line end: a block that
            // ends the input with "\r" reads the same once a line end is written after it.
            if (ce > pos && m[ce - 1] == '\r') --ce;
            if (ce == pos) { // the empty line
                e.header_end = pos;
                e.body_begin = lf < end ? lf + 1 : end;
                return;
            }
            std::string_view line = m.substr(pos, ce - pos);
            auto bad = [&](const char *why) { e.bad_lines.push_back({pos, std::string(line), why}); };
            if (wsp(m[pos])) {
                bool only_space = true;
                for (char c : line) only_space = only_space && (wsp(c) || c == '\r');
                if (!current) bad("continuation line with no field before it");
                else if (only_space) bad("white-space-only continuation line");
                if (current) current->end = ce;
            } else {
                std::size_t i = 0;
                while (i < line.size() && static_cast<unsigned char>(line[i]) >= 33 &&
                       static_cast<unsigned char>(line[i]) <= 126 && line[i] != ':')
                    ++i;
                Field f;
                f.begin = pos;
                f.end = ce;
                f.name = std::string(line.substr(0, i));
                // RFC 5322 4.5.8 (obs-optional, read by every reader: GMime, Dovecot, Python):
                // white space may stand between the name and the ':' ("Content-Type :").
                std::size_t c = i;
                while (c < line.size() && wsp(line[c])) ++c;
                f.valid = i > 0 && c < line.size() && line[c] == ':';
                f.colon = pos + c;
                if (!f.valid) bad("not a field: no name of printable ASCII followed by ':'");
                e.fields.push_back(std::move(f));
                current = &e.fields.back();
            }
            if (line.find('\0') != std::string_view::npos) bad("NUL in a header line");
            if (line.find('\r') != std::string_view::npos) bad("bare CR in a header line");
            pos = lf < end ? lf + 1 : end;
        }
        e.header_end = end;
        e.body_begin = end;
    }

    // The field's value, unfolded (CR and LF removed).
    std::string value(const Field &f) const
    {
        std::string v;
        for (std::size_t i = f.colon + 1; i < f.end; ++i)
            if (m[i] != '\r' && m[i] != '\n') v += m[i];
        return v;
    }

    static void skip_cfws(std::string_view v, std::size_t &i)
    {
        while (i < v.size()) {
            if (wsp(v[i])) {
                ++i;
            } else if (v[i] == '(') { // a comment, nested, with quoted-pairs
                int depth = 0;
                while (i < v.size()) {
                    if (v[i] == '\\') i += 2;
                    else {
                        if (v[i] == '(') ++depth;
                        else if (v[i] == ')' && --depth == 0) { ++i; break; }
                        ++i;
                    }
                }
            } else {
                break;
            }
        }
        if (i > v.size()) i = v.size();
    }

    static std::string token(std::string_view v, std::size_t &i)
    {
        std::string t;
        while (i < v.size()) {
            char c = v[i];
            auto u = static_cast<unsigned char>(c);
            if (u <= 32 || u >= 127 || std::strchr("()<>@,;:\\\"/[]?=", c)) break;
            t += lower(c);
            ++i;
        }
        return t;
    }

    // RFC 2045 5.1: type "/" subtype *(";" parameter); the boundary parameter kept.
    static void content_type(std::string_view v, Entity &e)
    {
        std::size_t i = 0;
        skip_cfws(v, i);
        std::string type = token(v, i);
        skip_cfws(v, i);
        if (type.empty() || i >= v.size() || v[i] != '/') return; // invalid: the default stays
        ++i;
        skip_cfws(v, i);
        std::string sub = token(v, i);
        if (sub.empty()) return;
        e.type = type + "/" + sub;
        for (;;) {
            skip_cfws(v, i);
            if (i >= v.size() || v[i] != ';') return;
            ++i;
            skip_cfws(v, i);
            std::string name = token(v, i);
            skip_cfws(v, i);
            if (i >= v.size() || v[i] != '=') {
                if (name.empty()) continue;
                return;
            }
            ++i;
            skip_cfws(v, i);
            std::string val;
            if (i < v.size() && v[i] == '"') {
                for (++i; i < v.size() && v[i] != '"'; ++i) {
                    if (v[i] == '\\' && i + 1 < v.size()) ++i;
                    val += v[i];
                }
                if (i < v.size()) ++i;
            } else {
                while (i < v.size() && !wsp(v[i]) && v[i] != ';' && v[i] != '(') val += v[i++];
            }
            if (name == "boundary" && e.boundary.empty()) e.boundary = val;
        }
    }

    // A delimiter line of boundary b at [pos, ce): 0 no, 1 delimiter, 2 close delimiter.
    int delimiter(std::size_t pos, std::size_t ce, const std::string &b) const
    {
        if (ce - pos < 2 + b.size() || m[pos] != '-' || m[pos + 1] != '-' ||
            m.compare(pos + 2, b.size(), b) != 0)
            return 0;
        std::size_t r = pos + 2 + b.size();
        int kind = 1;
        if (r + 2 <= ce && m[r] == '-' && m[r + 1] == '-') {
            kind = 2;
            r += 2;
        }
        while (r < ce && wsp(m[r])) ++r;
        if (r < ce && m[r] == '\r' && r + 1 == ce) ++r; // the CR of a CRLF line end
        return r == ce ? kind : 0;
    }

    void entity(Entity &e, std::size_t begin, std::size_t end, int depth, const char *default_type)
    {
        ++parts;
        e.type = default_type;
        headers(e, begin, end);
        e.body_end = end;
        // The last Content-Type field counts, as in GMime (mimeuri's parser).
        const Field *ct = nullptr;
        for (const Field &f : e.fields)
            if (f.valid && iequal(f.name, "content-type")) ct = &f;
        if (ct) content_type(value(*ct), e);
        const bool is_multipart = e.type.compare(0, 10, "multipart/") == 0 && !e.boundary.empty();
        const bool is_message = e.type == "message/rfc822" || e.type == "message/global" || e.type == "message/news";
        if (!is_multipart && !is_message) return;
        if (depth >= limits.max_depth || parts >= limits.max_parts) {
            e.truncated = true;
            return;
        }
        if (is_message) {
            e.message = true;
            e.children.emplace_back();
            entity(e.children.back(), e.body_begin, end, depth + 1, "text/plain");
            return;
        }
        e.multipart = true;
        const char *child_type = e.type == "multipart/digest" ? "message/rfc822" : "text/plain";
        // RFC 2046 5.1.1: a delimiter is CRLF (here also LF) "--" boundary, at the start of
        // the body or of a line; the line break before it belongs to the delimiter.
        std::size_t pos = e.body_begin;
        std::size_t part_start = std::string::npos; // the current part's first byte
        while (pos < end) {
            std::size_t lf = line_end(pos, end);
            std::size_t ce = lf;
            int kind = delimiter(pos, ce, e.boundary);
            std::size_t next = lf < end ? lf + 1 : end;
            if (kind) {
                if (part_start != std::string::npos) {
                    std::size_t pe = pos;
                    if (pe > part_start && m[pe - 1] == '\n') --pe;
                    if (pe > part_start && m[pe - 1] == '\r') --pe;
                    if (parts >= limits.max_parts) {
                        e.truncated = true;
                        return;
                    }
                    e.children.emplace_back();
                    entity(e.children.back(), part_start, pe, depth + 1, child_type);
                }
                if (kind == 2) {
                    e.closed = true;
                    return;
                }
                part_start = next;
            }
            pos = next;
        }
        if (part_start != std::string::npos) {
            if (parts >= limits.max_parts) {
                e.truncated = true;
                return;
            }
            e.children.emplace_back();
            entity(e.children.back(), part_start, end, depth + 1, child_type);
        }
    }
};

void flatten_into(const Entity &e, std::vector<const Entity *> &out)
{
    out.push_back(&e);
    for (const Entity &c : e.children) flatten_into(c, out);
}

std::string describe(const Entity &e)
{
    std::string d = e.type;
    if (e.multipart) d += " boundary=\"" + e.boundary + "\"" + (e.closed ? " closed" : " unclosed");
    if (e.truncated) d += " (truncated)";
    d += " " + std::to_string(e.children.size()) + " children";
    return d;
}

std::string compare_at(const Entity &a, const Entity &b, const std::string &path)
{
    if (a.type != b.type || a.boundary != b.boundary || a.multipart != b.multipart || a.message != b.message ||
        a.closed != b.closed || a.truncated != b.truncated || a.children.size() != b.children.size())
        return "at " + path + ": " + describe(a) + " became " + describe(b);
    for (std::size_t i = 0; i < a.children.size(); ++i) {
        std::string d = compare_at(a.children[i], b.children[i], path + "." + std::to_string(i + 1));
        if (!d.empty()) return d;
    }
    return {};
}

void outline_into(const Entity &e, int depth, std::string &out)
{
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += describe(e) + " body [" + std::to_string(e.body_begin) + "," + std::to_string(e.body_end) + ")\n";
    for (const Entity &c : e.children) outline_into(c, depth + 1, out);
}

} // namespace

Entity read(std::string_view msg, const Limits &limits)
{
    Reader r{msg, limits};
    Entity root;
    r.entity(root, 0, msg.size(), 0, "text/plain");
    return root;
}

void flatten(const Entity &root, std::vector<const Entity *> &out) { flatten_into(root, out); }

std::string compare(const Entity &a, const Entity &b) { return compare_at(a, b, "top"); }

std::string outline(const Entity &root)
{
    std::string out;
    outline_into(root, 0, out);
    return out;
}

std::vector<BadLine> bad_header_lines(const Entity &root)
{
    std::vector<const Entity *> all;
    flatten(root, all);
    std::vector<BadLine> out;
    for (const Entity *e : all) out.insert(out.end(), e->bad_lines.begin(), e->bad_lines.end());
    return out;
}

} // namespace mimestructure
