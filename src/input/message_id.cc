// message_id: the Message-ID GMime gives a message, read from its bytes alone where its header
// block is plain (the inert copy, src/mime/inert.cc; the census of Message-IDs, id_census.cc).
//
// SYNOPSIS  plain_message_id(m): the Message-ID GMime would give m, when its header block is
//           plain; message_id_of_value(raw): the id GMime makes of one field's raw value.
#include "message_id.hh"

#include "gobj.hh"
#include "header_lines.hh"
#include "text.hh"

#include <gmime/gmime.h>

#include <cstring>

namespace mimeuri {

// The Message-ID GMime gives a message whose header block is plain, read without building
// its objects; nullopt when the block is not plain (then GMime reads it). Plain: lines ending
// in LF (a CR only right before it), no NUL, ended by an empty line; each line a field
// ("name:", the name of printable ASCII other than ':', no blank before the colon) or a
// folded continuation (starting with a space or tab) of one. In such a block GMime's parser
// (gmime-parser.c, step_headers and header_buffer_parse) takes each field's raw value as the
// bytes after the colon through the end of its last line; its message keeps the last
// Message-ID field's g_mime_utils_decode_message_id(decode_text(unfold(raw value)))
// (gmime-message.c, process_header; gmime-header.c, g_mime_header_get_value): the same
// functions are called here on the same bytes. tests/test_inert.cc and fuzz_filter compare
// the two on every input they have.
namespace {

// A message of one line, its only LF its last byte: GMime reads it as one header field, bare
// CRs and all (old Mac mail's line ends, which detect_eol takes for CRLF when the input
// ends in one; 66 of the corpus mbox's messages), and the block as ended by the input. Its
// name read as plain_message_id reads a name: a field other than Message-ID gives the
// message no Message-ID (""); a Message-ID field's reading is GMime's (nothing).
std::optional<std::string> one_line_message_id(std::string_view m)
{
    if (m.empty() || m.back() != '\n' || std::memchr(m.data(), '\n', m.size() - 1) || std::memchr(m.data(), '\0', m.size()))
        return std::nullopt;
    std::size_t k = 0;
    for (; k < m.size() && k <= 998 && m[k] != ':'; ++k)
        if (static_cast<unsigned char>(m[k]) <= 32 || static_cast<unsigned char>(m[k]) >= 127) return std::nullopt;
    if (k == 0 || k > 998 || k == m.size() || m[k] != ':' || (k == 10 && text::ci_at(m, 0, "message-id")))
        return std::nullopt;
    return std::string();
}

} // namespace

namespace {

// A line of a plain block (plain_message_id's rules, but for its bytes: plain_bytes);
// false when it makes the block not plain. field: a field was read before it; in_id: the line
// continues a Message-ID field.
bool plain_line(std::string_view line, std::size_t at, std::size_t next, bool &field, bool &in_id, PlainHead &h)
{
    if (line[0] == ' ' || line[0] == '\t') {
        if (!field) return false; // a folded line with no field before it
        if (in_id) h.id_end = static_cast<std::int64_t>(next);
        return true;
    }
    // "name:" (GMime fails a message whose field name does not fit its 4 KiB read buffer,
    // from 4,224 bytes here: a name past 998 goes to GMime).
    const std::size_t k = field_name_length(line);
    if (k == 0) return false;
    field = true;
    in_id = k == 10 && text::ci_at(line, 0, "message-id");
    if (in_id) {
        h.id_begin = static_cast<std::int64_t>(at + k + 1);
        h.id_end = static_cast<std::int64_t>(next);
    }
    return true;
}

std::string id_of(std::string_view m, const PlainHead &h)
{
    if (h.id_begin < 0) return std::string();
    return message_id_of_value(m.substr(static_cast<std::size_t>(h.id_begin), static_cast<std::size_t>(h.id_end - h.id_begin)));
}

} // namespace

HeadRead read_head(std::string_view b)
{
    // One memchr a line (and one for a CR inside it), not HeaderFields' fields: the same
    // reading of a plain block, at a third of the instructions (issue 53). The lines as
    // header_lines.hh's Lines reads them: an LF or a CRLF alone is empty, and a last line
    // without an LF ends no block.
    HeadRead r;
    PlainHead h;
    bool plain = true, field = false, in_id = false, content_length = false;
    for (std::size_t at = 0;;) {
        const void *nl = at < b.size() ? std::memchr(b.data() + at, '\n', b.size() - at) : nullptr;
        if (!nl) return r; // the block goes on past b
        const std::size_t next = static_cast<std::size_t>(static_cast<const char *>(nl) - b.data()) + 1;
        const std::string_view line = b.substr(at, next - 1 - at);
        if (line.empty() || line == "\r") {
            r.content_length = content_length;
            if (plain && plain_bytes(b.substr(0, at))) {
                h.end = static_cast<std::int64_t>(next);
                r.plain = h;
            }
            return r;
        }
        if (!content_length && line.size() > 15 && (line[0] | 0x20) == 'c' && text::ci_at(line, 0, "content-length:"))
            content_length = true;
        plain = plain && plain_line(line, at, next, field, in_id, h);
        if (!plain && content_length) return r;
        at = next;
    }
}

std::optional<std::string> plain_message_id(std::string_view m)
{
    if (auto id = one_line_message_id(m)) return id;
    const HeadRead r = read_head(m);
    if (!r.plain) return std::nullopt;
    return id_of(m, *r.plain);
}

std::optional<std::string> plain_message_id(std::string_view m, std::int64_t at, const std::optional<PlainHead> &read)
{
    // A block ended by an empty line inside m: m has two LFs at least, so one_line_message_id
    // has nothing to say of it.
    if (read && read->at == at && read->end <= static_cast<std::int64_t>(m.size())) return id_of(m, *read);
    return plain_message_id(m);
}

bool plain_bytes(std::string_view v)
{
    if (v.find('\0') != std::string_view::npos) return false;
    for (std::size_t cr = v.find('\r'); cr != std::string_view::npos; cr = v.find('\r', cr + 1))
        if (cr + 1 == v.size() || v[cr + 1] != '\n') return false;
    return true;
}

std::optional<std::string> plain_angle_id(std::string_view v)
{
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
    if (v.size() < 3 || v.front() != '<' || v.back() != '>') return std::nullopt;
    v = v.substr(1, v.size() - 2);
    for (char c : v)
        if (!g_ascii_isalnum(c) && !std::strchr("!#$%&'*+-/=?^_`{|}~.@", c)) return std::nullopt;
    const std::size_t at = v.find('@');
    if (at == std::string_view::npos) return std::string(v);
    if (at == 0 || at + 1 == v.size() || v.find('@', at + 1) != std::string_view::npos) return std::nullopt;
    for (std::string_view side : {v.substr(0, at), v.substr(at + 1)})
        if (side.front() == '.' || side.back() == '.' || side.find("..") != std::string_view::npos) return std::nullopt;
    return std::string(v);
}

std::string message_id_of_value(std::string_view raw_value)
{
    // Most ids are plain: no GMime call (three of them, and their strings, were 40% of the
    // inert copy's reading of a header block: callgrind, issue 53).
    if (auto id = plain_angle_id(raw_value)) return std::move(*id);
    const std::string raw(raw_value);
    GCharPtr unfolded(g_mime_utils_header_unfold(raw.c_str()));
    GCharPtr decoded(g_mime_utils_header_decode_text(nullptr, unfolded.get()));
    GCharPtr id(g_mime_utils_decode_message_id(decoded.get()));
    return std::string(id ? id.get() : "");
}

} // namespace mimeuri
