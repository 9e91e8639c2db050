// prescan: the limits that hold while parsing, checked before GMime reads a message.
//
// SYNOPSIS  MessageContext::prescan(): a LimitHit when a header block anywhere in the message
//           is larger than --max-header-bytes or holds more than --max-header-fields fields,
//           the message holds more than 10 x --max-header-fields fields in all, or it has
//           more delimiter lines than --max-parts allows; the message is then passed
//           through, never handed to GMime.
// One pass over the message's bytes (a window in memory, else 64 KiB reads), called by
// MessageContext::parse (src/mime/message.cc). An explicit state machine, as GMime's parser
// (parser_step_*): a state for the line being read (Line: its name, a Content-Type value, or
// bytes that no longer count) and one for the run of lines that may be a header block (Run),
// each with its own method.
#include "message.hh"

#include <glib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mimeuri {

namespace {

// A header block may start at the top, after an empty line (an embedded message, or a body
// GMime might read as one) or after a "--" line (a part). It goes on while lines read as
// fields ("name:") or their continuations, as GMime reads them.
// A body is a header block only where a message/ type makes it one (RFC 2046 5.2.1:
// message/rfc822, news, global; GMime's parser): after a block that ended cleanly and whose
// Content-Type fields never say "message" (a part in a multipart/digest with no Content-Type
// is message/rfc822, RFC 2046 5.1.5), its body is Body up to the next "--" line: a 1 MiB
// first line of minified HTML is no header. Anything less clear stays Open.
class Prescanner {
public:
    enum class Hit { None, HeaderLimit, PartLimit, BlockFields, MessageFields };
    Prescanner(std::size_t max_header_bytes, std::size_t max_delimiters, std::size_t max_block_fields,
               std::size_t max_message_fields)
        : max_header_bytes_(max_header_bytes), max_delimiters_(max_delimiters), max_block_fields_(max_block_fields),
          max_message_fields_(max_message_fields)
    {
    }
    // The next bytes of the message.
    Hit feed(std::string_view chunk);
    // The end of the message: a last line with no line break.
    Hit finish() const;

private:
    enum class Run { Open, In, Closed, Body };
    enum class Line { Name, CtValue, Skip }; // what the line's next byte is read as
    enum class Field { Name, Yes, No };      // whether the line is "name:" (so far)
    static constexpr std::string_view ct_name = "content-type", message_word = "message";

    void first_bytes(char c); // every state: the line's first two bytes and its length
    void byte_name(char c);
    void byte_ct_value(char c);
    std::size_t skip(std::string_view chunk, std::size_t i);
    Hit end_line();
    // A line that is not a delimiter line nor empty, by the run it comes in.
    Hit line_open();
    Hit line_in();
    Hit take_field_line(); // a field or continuation line that the run goes on with
    void blank_line();
    void open_run(bool dashes);
    Line line_start() const { return run_ == Run::Closed || run_ == Run::Body ? Line::Skip : Line::Name; }

    const std::size_t max_header_bytes_, max_delimiters_, max_block_fields_, max_message_fields_;
    std::size_t delimiters_{0};
    std::size_t fields_{0}; // field lines ("name:") of every header block so far
    // The run of lines that may be a header block.
    Run run_{Run::Open};
    std::size_t run_bytes_{0};
    std::size_t run_fields_{0};
    bool after_dashes_{false};                // the run started after a "--" line
    bool ct_seen_{false}, ct_message_{false}; // the run's Content-Type fields
    bool in_ct_{false};                       // the field being read is a Content-Type
    // The current line: its length, first two bytes, and whether it is "name:" so far.
    Line line_{Line::Name};
    std::size_t len_{0};
    char first_{0}, second_{0};
    Field field_{Field::Name};
    std::size_t ct_at_{0};  // how much of ct_name the line's name has matched
    bool line_ct_{false};   // this line is a Content-Type field or a continuation of one
    std::size_t word_at_{0}; // how much of "message" the value has matched
};

Prescanner::Hit Prescanner::feed(std::string_view chunk)
{
    for (std::size_t i = 0; i < chunk.size(); ++i) {
        const char c = chunk[i];
        if (c == '\n') {
            if (Hit h = end_line(); h != Hit::None) return h;
            continue;
        }
        switch (line_) {
        case Line::Name: byte_name(c); break;
        case Line::CtValue: byte_ct_value(c); break;
        case Line::Skip: i = skip(chunk, i); break;
        }
    }
    return Hit::None;
}

void Prescanner::first_bytes(char c)
{
    if (len_ == 0) first_ = c;
    else if (len_ == 1) second_ = c;
    ++len_;
}

// The line's name so far: "content-type", then ':' (a Content-Type field), or not a name.
void Prescanner::byte_name(char c)
{
    const std::size_t at = len_;
    first_bytes(c);
    const auto u = static_cast<unsigned char>(c);
    if (c == ':' && at > 0) {
        field_ = Field::Yes;
        line_ct_ = ct_at_ == ct_name.size() && at == ct_name.size() && run_ != Run::Body;
    } else if (u <= 32 || u >= 127) {
        field_ = Field::No;
        // A fold of a Content-Type field: its value goes on.
        line_ct_ = at == 0 && run_ == Run::In && in_ct_ && (c == ' ' || c == '\t');
    } else if (ct_at_ == at && ct_at_ < ct_name.size() && g_ascii_tolower(c) == ct_name[ct_at_]) {
        ++ct_at_;
    }
    if (field_ != Field::Name) line_ = line_ct_ ? Line::CtValue : Line::Skip;
}

// A Content-Type value: does it say "message"? ("message" has no border: a mismatch
// restarts the match at this byte.)
void Prescanner::byte_ct_value(char c)
{
    if (word_at_ < message_word.size()) {
        const char l = g_ascii_tolower(c);
        word_at_ = l == message_word[word_at_] ? word_at_ + 1 : l == message_word[0] ? 1 : 0;
    }
    first_bytes(c);
}

// Nothing more of this line counts but its length (and its first two bytes): on to its end.
// Returns the index of the byte before the LF (or of the chunk's last byte).
std::size_t Prescanner::skip(std::string_view chunk, std::size_t i)
{
    if (len_ < 2) {
        first_bytes(chunk[i]);
        return i;
    }
    const void *nl = std::memchr(chunk.data() + i, '\n', chunk.size() - i);
    const std::size_t stop = nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - chunk.data()) : chunk.size();
    len_ += stop - i;
    return stop - 1;
}

Prescanner::Hit Prescanner::end_line()
{
    const bool blank = len_ == 0 || (len_ == 1 && first_ == '\r');
    const bool dashes = len_ >= 2 && first_ == '-' && second_ == '-';
    Hit h = Hit::None;
    if (dashes && ++delimiters_ > max_delimiters_) return Hit::PartLimit;
    if (dashes) open_run(true);
    else if (blank) blank_line();
    else if (run_ == Run::Open) h = line_open();
    else if (run_ == Run::In) h = line_in();
    // Run::Closed stays so (a line GMime may read otherwise); Run::Body is content up to the
    // next "--" line.
    len_ = 0;
    field_ = Field::Name;
    ct_at_ = 0;
    line_ct_ = false;
    word_at_ = 0;
    line_ = line_start();
    return h;
}

void Prescanner::open_run(bool dashes)
{
    run_ = Run::Open;
    run_bytes_ = 0;
    run_fields_ = 0;
    after_dashes_ = dashes;
    ct_seen_ = ct_message_ = in_ct_ = false;
}

// A block that ended cleanly and made its body no header block: Body. A run already Open (no
// field yet: a digest's part with no header block), Closed (a line GMime may read
// otherwise) or Body stays as conservative as before.
void Prescanner::blank_line()
{
    const bool embeds = ct_message_ || (!ct_seen_ && after_dashes_);
    if (run_ == Run::In && !embeds) run_ = Run::Body;
    else if (run_ != Run::Body) open_run(false);
}

Prescanner::Hit Prescanner::line_open()
{
    if (field_ == Field::Yes) return take_field_line();
    run_ = Run::Closed;
    return Hit::None;
}

Prescanner::Hit Prescanner::line_in()
{
    const bool continuation = first_ == ' ' || first_ == '\t';
    if (field_ == Field::Yes || continuation) return take_field_line();
    run_ = Run::Closed;
    return Hit::None;
}

Prescanner::Hit Prescanner::take_field_line()
{
    run_ = Run::In;
    run_bytes_ += len_ + 1;
    if (run_bytes_ > max_header_bytes_) return Hit::HeaderLimit;
    // Each field costs GMime a header object (about 360 bytes with its list entry: 2.5
    // million four-byte fields took 0.9 GB and 4 s), whatever its size.
    if (field_ == Field::Yes && ++run_fields_ > max_block_fields_) return Hit::BlockFields;
    if (field_ == Field::Yes && ++fields_ > max_message_fields_) return Hit::MessageFields;
    if (field_ == Field::Yes) in_ct_ = line_ct_;
    if (field_ == Field::Yes && line_ct_) ct_seen_ = true;
    if (line_ct_ && word_at_ == message_word.size()) ct_message_ = true;
    return Hit::None;
}

Prescanner::Hit Prescanner::finish() const
{
    const bool last_field = (run_ == Run::In || run_ == Run::Open) && field_ == Field::Yes;
    if ((run_ == Run::In || (run_ == Run::Open && field_ == Field::Yes)) && run_bytes_ + len_ > max_header_bytes_)
        return Hit::HeaderLimit;
    if (last_field && run_fields_ + 1 > max_block_fields_) return Hit::BlockFields;
    if (last_field && fields_ + 1 > max_message_fields_) return Hit::MessageFields;
    return Hit::None;
}

// Whether s holds fewer than `limit` LFs, counted sixteen bytes at a time where SSE2 is there
// (a third of an instruction a byte, against the state machine's one and a half).
bool fewer_lfs_than(std::string_view s, std::size_t limit)
{
    std::size_t n = 0, i = 0;
#if defined(__SSE2__)
    const __m128i lf = _mm_set1_epi8('\n');
    while (s.size() - i >= 16 && n < limit) {
        // Up to 255 blocks of 16 bytes per round: each byte counter's compares (-1 each) stay
        // within a byte; _mm_sad_epu8 adds them up.
        const std::size_t blocks = std::min<std::size_t>((s.size() - i) / 16, 255);
        __m128i acc = _mm_setzero_si128();
        for (std::size_t b = 0; b < blocks; ++b, i += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s.data() + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, lf));
        }
        const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
        n += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) + static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
    }
#endif
    for (; i < s.size() && n < limit; ++i) n += s[i] == '\n';
    return n < limit;
}

} // namespace

Result<std::optional<MessageContext::LimitHit>> MessageContext::prescan() const
{
    // GMime holds every part it finds (about 1.4 KB each): bound them before it parses. A
    // part needs at least one delimiter line; past --max-parts the walk stops anyway, so
    // this only has to be generous enough never to cut a message the walk would finish.
    const std::size_t max_delimiters = 4 * limits_.max_parts + 16;
    // Header fields: GMime's parse of them cannot be interrupted (--max-time is asked only
    // once it returns), so it is bounded here instead: at most --max-header-fields in a block
    // and ten times that in the message (docs/design.md: the parse is then short).
    const std::size_t max_block_fields = limits_.max_header_fields;
    const std::size_t max_message_fields =
        max_block_fields > SIZE_MAX / 10 ? SIZE_MAX : 10 * max_block_fields;
    const auto size = static_cast<std::size_t>(seg_.msg_end - seg_.msg_begin);
    // A message this small can hold none of them (a delimiter line is at least 3 bytes, and
    // so is a field line, "a:" and its LF).
    if (size <= limits_.max_header_bytes && size / 3 < max_delimiters && size / 3 < max_block_fields)
        return std::optional<LimitHit>{};
    // The message where it is (a window, or an input in memory), else read 64 KiB at a time.
    const std::string_view whole = src_->view(seg_.msg_begin, seg_.msg_end);
    // Nor can one with fewer lines than either count allows: a delimiter line ends in an LF
    // (counted at end_line), and a field line does but for the last (finish), so delimiters
    // are at most the LFs and fields one more; the header bytes are at most the message's.
    if (!whole.empty() && size <= limits_.max_header_bytes && max_block_fields > 0 &&
        fewer_lfs_than(whole, std::min(max_delimiters + 1, max_block_fields)))
        return std::optional<LimitHit>{};
    Prescanner scan(limits_.max_header_bytes, max_delimiters, max_block_fields, max_message_fields);
    Prescanner::Hit hit = Prescanner::Hit::None;
    std::string buf;
    for (std::int64_t pos = seg_.msg_begin; pos < seg_.msg_end && hit == Prescanner::Hit::None;) {
        std::string_view chunk = whole;
        if (whole.empty()) {
            auto read = src_->slice(pos, std::min(seg_.msg_end, pos + 65536));
            if (!read) return read.error();
            buf = std::move(*read);
            chunk = buf;
        }
        if (chunk.empty()) break;
        hit = scan.feed(chunk);
        pos += static_cast<std::int64_t>(chunk.size());
    }
    if (hit == Prescanner::Hit::None) hit = scan.finish();
    switch (hit) {
    case Prescanner::Hit::None: return std::optional<LimitHit>{};
    case Prescanner::Hit::HeaderLimit:
        return std::optional<LimitHit>{LimitHit{ErrorCode::HeaderLimit, "header block larger than --max-header-bytes (" +
                                                                    std::to_string(limits_.max_header_bytes) + ")"}};
    case Prescanner::Hit::BlockFields:
        return std::optional<LimitHit>{LimitHit{ErrorCode::HeaderLimit, "more than " + std::to_string(max_block_fields) +
                                                                      " fields in one header block (--max-header-fields)"}};
    case Prescanner::Hit::MessageFields:
        return std::optional<LimitHit>{
            LimitHit{ErrorCode::HeaderLimit, "more than " + std::to_string(max_message_fields) +
                                                 " header fields in the message (10 x --max-header-fields)"}};
    case Prescanner::Hit::PartLimit:
        return std::optional<LimitHit>{LimitHit{ErrorCode::PartLimit, "more than " + std::to_string(max_delimiters) +
                                                                  " delimiter lines (4 x --max-parts + 16): not parsed"}};
    }
    return std::optional<LimitHit>{};
}

} // namespace mimeuri
