// prescan: the limits that hold while parsing, checked before GMime reads a message.
//
// SYNOPSIS  MessageContext::prescan(): a LimitHit when a header block anywhere in the message
//           is larger than --max-header-bytes, or it has more delimiter lines than
//           --max-parts allows; the message is then passed through, never handed to GMime.
// One pass over the message's bytes (a window in memory, else 64 KiB reads), called by
// MessageContext::parse (src/message.cc).
#include "message.hh"

#include <cstring>

namespace mimeuri {

Result<std::optional<MessageContext::LimitHit>> MessageContext::prescan() const
{
    const auto header_limit = [&] {
        return std::optional<LimitHit>{LimitHit{"header-limit", "header block larger than --max-header-bytes (" +
                                            std::to_string(limits_.max_header_bytes) + ")"}};
    };
    // GMime holds every part it finds (about 1.4 KB each): bound them before it parses. A
    // part needs at least one delimiter line; past --max-parts the walk stops anyway, so
    // this only has to be generous enough never to cut a message the walk would finish.
    const std::size_t max_delimiters = 4 * limits_.max_parts + 16;
    const auto size = static_cast<std::size_t>(seg_.msg_end - seg_.msg_begin);
    // A message this small can hold neither (a delimiter line is at least 3 bytes).
    if (size <= limits_.max_header_bytes && size < 3 * max_delimiters) return std::optional<LimitHit>{};
    std::size_t delimiters = 0;
    // A header block may start at the top, after an empty line (an embedded message, or a
    // body GMime might read as one) or after a "--" line (a part). It goes on while lines
    // read as fields ("name:") or their continuations, as GMime reads them.
    // A body is a header block only where a message/ type makes it one (RFC 2046 5.2.1:
    // message/rfc822, news, global; GMime's parser): after a block that ended cleanly and
    // whose Content-Type fields never say "message" (a part in a multipart/digest with no
    // Content-Type is message/rfc822, RFC 2046 5.1.5), its body is Body up to the next "--"
    // line: a 1 MiB first line of minified HTML is no header. Anything less clear stays Open.
    enum class Run { Open, In, Closed, Body } run = Run::Open;
    std::size_t run_bytes = 0;
    bool after_dashes = false;                    // the run started after a "--" line
    bool ct_seen = false, ct_message = false;     // the run's Content-Type fields
    bool in_ct = false;                           // the field being read is a Content-Type
    // The current line: its length, first two bytes, and whether it is "name:" so far.
    std::size_t len = 0;
    char first = 0, second = 0;
    enum class Field { Name, Yes, No } field = Field::Name;
    static constexpr std::string_view ct_name = "content-type", message_word = "message";
    std::size_t ct_at = 0;      // how much of ct_name the line's name has matched
    bool line_ct = false;       // this line is a Content-Type field or a continuation of one
    std::size_t word_at = 0;    // how much of "message" the value has matched
    const auto open_run = [&](bool dashes) {
        run = Run::Open;
        run_bytes = 0;
        after_dashes = dashes;
        ct_seen = ct_message = in_ct = false;
    };
    std::int64_t pos = seg_.msg_begin;
    // The message where it is (a window, or an input in memory), else read 64 KiB at a time.
    const std::string_view whole = src_->view(seg_.msg_begin, seg_.msg_end);
    std::string buf;
    while (pos < seg_.msg_end) {
        std::string_view chunk;
        if (!whole.empty()) {
            chunk = whole;
        } else {
            auto read = src_->slice(pos, std::min(seg_.msg_end, pos + 65536));
            if (!read) return read.error();
            buf = std::move(*read);
            chunk = buf;
        }
        if (chunk.empty()) break;
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            char c = chunk[i];
            if (len == 1 && run == Run::In && in_ct && (first == ' ' || first == '\t')) line_ct = true; // its fold
            if (len >= 1 && c != '\n' && line_ct) {
                // A Content-Type value: does it say "message"? ("message" has no border:
                // a mismatch restarts the match at this byte.)
                if (word_at < message_word.size()) {
                    const char l = g_ascii_tolower(c);
                    word_at = l == message_word[word_at] ? word_at + 1 : l == message_word[0] ? 1 : 0;
                }
                if (len == 1) second = c;
                ++len;
                continue;
            }
            if (len >= 2 && c != '\n' && (run == Run::Closed || run == Run::Body || field != Field::Name)) {
                // Nothing more of this line counts but its length: on to its end.
                const void *nl = std::memchr(chunk.data() + i, '\n', chunk.size() - i);
                const std::size_t stop = nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - chunk.data()) : chunk.size();
                len += stop - i;
                i = stop;
                if (i == chunk.size()) break;
                c = '\n';
            }
            if (c != '\n') {
                if (len == 0) first = c;
                else if (len == 1) second = c;
                if (field == Field::Name) {
                    auto u = static_cast<unsigned char>(c);
                    if (c == ':' && len > 0) {
                        field = Field::Yes;
                        line_ct = ct_at == ct_name.size() && len == ct_name.size() && run != Run::Body;
                    } else if (u <= 32 || u >= 127) {
                        field = Field::No;
                    } else if (ct_at == len && ct_at < ct_name.size() && g_ascii_tolower(c) == ct_name[ct_at]) {
                        ++ct_at;
                    }
                }
                ++len;
                continue;
            }
            const bool blank = len == 0 || (len == 1 && first == '\r');
            const bool dashes = len >= 2 && first == '-' && second == '-';
            if (dashes && ++delimiters > max_delimiters)
                return std::optional<LimitHit>{LimitHit{"part-limit", "more than " + std::to_string(max_delimiters) +
                                                                          " delimiter lines (4 x --max-parts + 16): not parsed"}};
            const bool continuation = len > 0 && (first == ' ' || first == '\t');
            if (dashes) {
                open_run(true);
            } else if (blank) {
                // A block that ended cleanly and made its body no header block: Body. A run
                // already Open (no field yet: a digest's part with no header block), Closed
                // (a line GMime may read otherwise) or Body stays as conservative as before.
                const bool embeds = ct_message || (!ct_seen && after_dashes);
                if (run == Run::In && !embeds) run = Run::Body;
                else if (run != Run::Body) open_run(false);
            } else if (run == Run::Body) {
                // content up to the next "--" line
            } else if ((run == Run::Open && field == Field::Yes) || (run == Run::In && (field == Field::Yes || continuation))) {
                run = Run::In;
                run_bytes += len + 1;
                if (run_bytes > limits_.max_header_bytes) return header_limit();
                if (field == Field::Yes) in_ct = line_ct;
                if (field == Field::Yes && line_ct) ct_seen = true;
                if (line_ct && word_at == message_word.size()) ct_message = true;
            } else {
                run = Run::Closed;
            }
            len = 0;
            field = Field::Name;
            ct_at = 0;
            line_ct = false;
            word_at = 0;
        }
        pos += static_cast<std::int64_t>(chunk.size());
    }
    // A last line with no line break.
    if ((run == Run::In || (run == Run::Open && field == Field::Yes)) && run_bytes + len > limits_.max_header_bytes)
        return header_limit();
    return std::optional<LimitHit>{};
}

} // namespace mimeuri
