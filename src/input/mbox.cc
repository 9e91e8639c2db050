// mbox: an input cut into messages (mbox.hh).
//
// SYNOPSIS  split(src, format): every Segment at once; Splitter::step(out, budget): the same
//           a piece at a time, as a piped input arrives; mboxcl2_length(src, at): a
//           Content-Length whose body ends at a From_ line (each Segment carries it);
//           looks_like_mbox(src).
#include "mbox.hh"

#include "header_lines.hh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include <glib.h>
#include <string>

namespace mimeuri {

Result<bool> looks_like_mbox(const Source &src)
{
    char head[5];
    auto n = src.read_at(0, head, sizeof head);
    if (!n) return n.error();
    return *n == 5 && std::memcmp(head, "From ", 5) == 0;
}

std::optional<ContentLength> mboxcl2_length(const Source &src, std::int64_t msg_begin)
{
    // Most header blocks fit in 4 KiB; read 64 KiB only for one that does not.
    // (A piped input still arriving: what has arrived of each, waited for as needed.)
    std::int64_t window = 4096;
    std::string h;
    auto read_head = [&]() -> bool { // the first `window` bytes of the message, or up to the end
        auto arrived = src.reach(msg_begin + window);
        if (!arrived) return false;
        auto head = src.slice(msg_begin, std::min(*arrived, msg_begin + window));
        if (!head) return false;
        h = std::move(*head);
        return true;
    };
    if (!read_head()) return std::nullopt;
    std::int64_t length = -1;
    std::size_t body = 0;
    for (;;) {
        HeaderFields fields(h);
        for (Field f; fields.next(f);) {
            // The field's first line, its CR kept: "Content-Length:\r" says 0 (strtoll reads no
            // digit and the CR is skipped), "Content-Length:" alone says nothing.
            const std::string_view line = f.first.text;
            if (line.size() > 15 && g_ascii_strncasecmp(line.data(), "Content-Length:", 15) == 0) {
                std::string v(line.substr(15));
                char *end = nullptr;
                long long n = std::strtoll(v.c_str(), &end, 10);
                while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
                if (end && *end == '\0' && n >= 0) length = n;
            }
        }
        body = fields.end();
        if (fields.ended_by_empty_line()) break;
        // The block goes on past what was read: read more once, else no length.
        if (const std::int64_t whole = src.known_size(); window < 65536 && (whole < 0 || msg_begin + window < whole)) {
            window = 65536;
            length = -1;
            if (!read_head()) return std::nullopt;
            continue;
        }
        return std::nullopt;
    }
    if (length < 0) return std::nullopt;
    std::int64_t end = msg_begin + static_cast<std::int64_t>(body) + length;
    ContentLength found{length, msg_begin + static_cast<std::int64_t>(body), end};
    auto at_end = src.reach(end + 7);
    if (!at_end) return std::nullopt;
    if (end == *at_end) return found;
    if (end > *at_end) return std::nullopt;
    char next[7] = {0};
    auto n = src.read_at(end, next, sizeof next);
    if (!n) return std::nullopt;
    std::string_view at(next, *n);
    if (at.substr(0, 5) == "From " || at.substr(0, 6) == "\nFrom " || at.substr(0, 7) == "\r\nFrom ") return found;
    return std::nullopt;
}

Result<std::vector<Segment>> split(const Source &src, Format format)
{
    std::vector<Segment> out;
    Splitter splitter(src, format);
    for (;;) {
        auto r = splitter.step(out, std::numeric_limits<std::int64_t>::max());
        if (!r) return r.error();
        if (*r) return out;
    }
}

// HeaderFields' reading, line by line (read_head): a field's first line is any line of the
// block that is not folded, and a folded one never starts "Content-Length:"; the block ends
// at an empty line (an LF or CRLF alone), or goes on past the buffer (which a last line of a
// lone CR, with no LF, also ends).
bool may_have_content_length(std::string_view b) { return read_head(b).content_length; }

// From the buffer alone, where it holds the start of the message at msg_begin; most
// messages are decided there, without mboxcl2_length's own read. The same reading says
// whether the block is plain, for the inert copy (Segment::head).
HeadRead Splitter::head_at(std::int64_t msg_begin) const
{
    const std::int64_t end = buf_off_ + static_cast<std::int64_t>(buf_.size());
    if (msg_begin < buf_off_ || msg_begin >= end) return {};
    HeadRead r = read_head(std::string_view(buf_.data() + (msg_begin - buf_off_), static_cast<std::size_t>(end - msg_begin)));
    if (r.plain) r.plain->at = msg_begin;
    return r;
}

// The mboxcl2 length of a message no From_ line opened (data before the first one, or an
// input with none), read as of any message in an mbox; it does not change the split.
std::optional<ContentLength> Splitter::length_at(std::int64_t msg_begin) const
{
    if (!head_at(msg_begin).content_length) return std::nullopt;
    return mboxcl2_length(src_, msg_begin);
}

int Splitter::byte_at(std::int64_t off) const
{
    if (off >= buf_off_ && off < buf_off_ + static_cast<std::int64_t>(buf_.size()))
        return static_cast<unsigned char>(buf_[static_cast<std::size_t>(off - buf_off_)]);
    return -1;
}

Result<bool> Splitter::fill(std::int64_t off)
{
    constexpr std::size_t chunk_size = 256 << 10;
    block_.reset(); // (its buffer to be read into again, when no window holds it)
    buf_ = {};
    auto b = src_.read_block(off, chunk_size);
    if (!b) return b.error();
    block_.reset(*b);
    gsize n = 0;
    const auto *data = static_cast<const char *>(g_bytes_get_data(*b, &n));
    buf_ = std::string_view(data ? data : "", n);
    buf_off_ = off;
    return true;
}

void Splitter::opened(Start s)
{
    if (!any_ && s.from_line != start_) // leading data that is not an mbox message: one of its own
        out_->push_back({start_, start_, s.separator, s.from_line, length_at(start_)});
    if (any_)
        out_->push_back({last_.from_line, last_.message, std::max(s.separator, last_.message), s.from_line, last_.length, last_.head});
    any_ = true;
    last_ = s;
}

// How far the input goes: a piped input still arriving is split as it comes (Source::reach).
// Once a message is found, the step ends rather than wait for more of the input: the message
// is filtered while the sender writes the next.
Result<Splitter::Next> Splitter::reach(std::int64_t want)
{
    if (src_.arrived() < want && end_step_here()) return Next::Pause;
    auto r = src_.reach(want);
    if (!r) return r.error();
    const std::int64_t whole = src_.known_size(); // (asked after: it may have ended since)
    complete_ = whole >= 0;
    size_ = complete_ ? whole : *r;
    return Next::On;
}

Result<bool> Splitter::step(std::vector<Segment> &out, std::int64_t budget)
{
    if (state_ == State::Done) return true;
    if (format_ != Format::Mbox) {
        auto size = src_.settle();
        if (!size) return size.error();
        out.push_back({0, 0, *size, *size});
        state_ = State::Done;
        return true;
    }
    out_ = &out;
    found_before_ = out.size();
    size_ = 0;
    complete_ = false;
    stop_ = budget > std::numeric_limits<std::int64_t>::max() - line_ ? std::numeric_limits<std::int64_t>::max()
                                                                      : line_ + budget;
    for (;;) {
        Result<Next> r = Next::On;
        switch (state_) {
        case State::Length: r = step_length(); break;
        case State::Line: r = step_line(); break;
        case State::End: r = step_end(); break;
        case State::Done: return true;
        }
        if (!r) return r.error();
        if (*r == Next::Pause) return false;
    }
}

// A message that has just begun may say its length (mboxcl2): if it does, the split goes on
// after its body. Reading its header may wait for a piped input: not with a message found in
// this step, which is filtered first.
Result<Splitter::Next> Splitter::step_length()
{
    if (end_step_here()) return Next::Pause;
    const std::int64_t from = std::exchange(cl_from_, -1);
    last_.length = mboxcl2_length(src_, from);
    if (last_.length) {
        if (census_)
            if (auto s = census_range(from, last_.length->end); !s) return s.error();
        // Its body is N bytes: continue after it, as if after an empty line (an empty
        // separator line right at `end` is the next line read).
        prev_empty_ = true;
        prev_line_ = last_.length->end;
        line_ = last_.length->end;
    }
    state_ = State::Line;
    return Next::On;
}

// One line: whether it opens a message (a "From " line after an empty one); the budget, the
// end of the input, or the input still arriving may end the step first.
Result<Splitter::Next> Splitter::step_line()
{
    if (line_ < stop_ && line_ + 5 > size_ && !complete_) {
        auto r = reach(line_ + 5);
        if (!r || *r == Next::Pause) return r;
    }
    if (line_ >= stop_ || line_ >= size_) { // the budget is spent, or the input (as far as known)
        if (!complete_ || line_ < size_) return Next::Pause;
        state_ = State::End;
        return Next::On;
    }
    // Make sure the buffer holds [line, line + 5) or up to end of input.
    if (line_ + 5 > buf_off_ + static_cast<std::int64_t>(buf_.size()) &&
        buf_off_ + static_cast<std::int64_t>(buf_.size()) < size_)
        if (auto f = fill(line_); !f) return f.error();
    bool from = line_ + 5 <= size_ && byte_at(line_) == 'F' && byte_at(line_ + 1) == 'r' &&
                byte_at(line_ + 2) == 'o' && byte_at(line_ + 3) == 'm' && byte_at(line_ + 4) == ' ';
    if (!from && !census_ && skip_lines()) return Next::On;
    bool opens = from && prev_empty_;
    std::int64_t nl = -1;
    if (auto r = find_line_end(nl); !r || *r == Next::Pause) return r;
    std::int64_t next = nl < 0 ? size_ : nl + 1;
    std::int64_t len = next - line_;
    bool empty = (len == 1) || (len == 2 && byte_at(line_) == '\r');
    // byte_at(line) may have left the buffer; an empty line is at most 2 bytes, so
    // re-check with a direct read when needed.
    if (len == 2 && byte_at(line_) < 0) {
        char c;
        auto n = src_.read_at(line_, &c, 1);
        if (!n) return n.error();
        empty = (c == '\r');
    }
    if (census_)
        if (auto s = tell_census(next); !s) return s.error();
    // (the separator is the empty previous line, absent at the start of input)
    HeadRead head;
    if (opens) {
        head = head_at(next);
        opened({line_, prev_line_ >= 0 ? prev_line_ : line_, next, std::nullopt, head.plain});
    }
    prev_empty_ = empty;
    prev_line_ = line_;
    line_ = next;
    if (opens && head.content_length) { // decided first thing next
        cl_from_ = next;
        state_ = State::Length;
    }
    return Next::On;
}

namespace {

// The first "\nFrom " in [p, p + n), or p + n: each 'F' found by glibc's memchr (vector
// compares) and looked back from. A capital F is rarer than a line end in text and one
// byte in 64 of base64, so this reads about a third of an instruction a byte, where a
// memchr a line read 0.8 and Horspool's search 1.5 (callgrind on the corpus mbox, issue 53).
const char *find_from_line(const char *p, std::size_t n)
{
    const char *const end = p + n;
    for (const char *f = p + 1; end - f >= 5;) {
        const void *hit = std::memchr(f, 'F', static_cast<std::size_t>(end - f) - 4);
        if (!hit) break;
        f = static_cast<const char *>(hit);
        if (f[-1] == '\n' && std::memcmp(f + 1, "rom ", 4) == 0) return f - 1;
        ++f;
    }
    return end;
}

} // namespace

// Where no census reads every line, the lines of the buffer that cannot open a message are
// skipped in one search (issue 53: a line at a time was 4 instructions a byte): up to the
// next line starting "From " (find_from_line), or the last line that starts within the
// buffer and the budget. The line before the one it stops at is read as step_line would
// have read it (prev_line_, prev_empty_); the lines skipped open nothing, since none starts
// "From " (the one at line_ does not either). False: nothing to skip.
bool Splitter::skip_lines()
{
    const std::int64_t end = std::min(buf_off_ + static_cast<std::int64_t>(buf_.size()), stop_);
    if (line_ < buf_off_ || end - line_ < 8) return false;
    const char *base = buf_.data() - buf_off_; // base[off] is the byte at source offset off
    const char *from = base + line_;
    const auto n = static_cast<std::size_t>(end - line_);
    const char *hit = find_from_line(from, n);
    std::int64_t target;
    if (hit != from + n) {
        target = hit - base + 1;
    } else {
        // The last line that starts inside [line_, end), its start not the buffer's last byte.
        const void *nl = memrchr(from, '\n', n - 1);
        if (!nl) return false;
        target = static_cast<const char *>(nl) - base + 1;
    }
    if (target <= line_) return false;
    const void *before = target - 1 > line_ ? memrchr(from, '\n', static_cast<std::size_t>(target - 1 - line_)) : nullptr;
    const std::int64_t prev = before ? static_cast<const char *>(before) - base + 1 : line_;
    prev_line_ = prev;
    prev_empty_ = target - prev == 1 || (target - prev == 2 && base[prev] == '\r');
    line_ = target;
    return true;
}

// The LF that ends the line at line_ (nl), or -1 when the input ends in this line. Ending
// the step here (Pause) reads this line again from its start.
Result<Splitter::Next> Splitter::find_line_end(std::int64_t &nl)
{
    for (;;) {
        std::int64_t end = buf_off_ + static_cast<std::int64_t>(buf_.size());
        std::int64_t from_off = std::max(line_, buf_off_);
        if (from_off < end) {
            const char *p = static_cast<const char *>(
                std::memchr(buf_.data() + (from_off - buf_off_), '\n', static_cast<std::size_t>(end - from_off)));
            if (p) {
                nl = buf_off_ + (p - buf_.data());
                return Next::On;
            }
        }
        if (end >= size_ && !complete_) {
            auto r = reach(end + 1);
            if (!r || *r == Next::Pause) return r;
        }
        if (end >= size_) return Next::On; // the input ends in this line
        if (auto f = fill(end); !f) return f.error();
    }
}

// The line [line_, next) to the census, when it wants it: from the buffer, or read again
// when the line began in the block before.
Status Splitter::tell_census(std::int64_t next)
{
    const std::int64_t len = std::min<std::int64_t>(next - line_, IdCensus::kMaxField + 1);
    const int first = byte_at(line_);
    if (first >= 0 && !census_->wants(static_cast<unsigned char>(first))) return ok();
    if (first >= 0 && byte_at(line_ + len - 1) >= 0) {
        census_->line(buf_.substr(static_cast<std::size_t>(line_ - buf_off_), static_cast<std::size_t>(len)));
        return ok();
    }
    auto text = src_.slice(line_, line_ + len);
    if (!text) return text.error();
    if (!text->empty() && census_->wants(static_cast<unsigned char>((*text)[0]))) census_->line(*text);
    return ok();
}

// The lines an mboxcl2 length lets the split pass over, to the census: read again, a block
// at a time. A range that ends inside a line (the split reads the rest as a line of its own)
// leaves the census unsure.
Status Splitter::census_range(std::int64_t from, std::int64_t end)
{
    constexpr std::size_t cap = IdCensus::kMaxField + 1; // what the census needs of a line
    std::string carry; // a line begun in the block before: its first `cap` bytes
    bool carrying = false;
    for (std::int64_t off = from; off < end;) {
        const std::int64_t n = std::min<std::int64_t>(end - off, 256 << 10);
        auto block = src_.slice(off, off + n);
        if (!block) return block.error();
        const std::string_view b = *block;
        for (std::size_t pos = 0; pos < b.size();) {
            const std::size_t nl = b.find('\n', pos);
            const std::size_t stop = nl == std::string_view::npos ? b.size() : nl + 1;
            const std::string_view piece = b.substr(pos, stop - pos);
            pos = stop;
            if (!carrying && nl != std::string_view::npos) {
                census_->line(piece.substr(0, cap));
                continue;
            }
            carry.append(piece.substr(0, cap - std::min(cap, carry.size())));
            carrying = nl == std::string_view::npos;
            if (!carrying) {
                census_->line(carry);
                carry.clear();
            }
        }
        off += n;
    }
    if (carrying) {
        if (end == src_.known_size()) census_->line(carry); // the input's last line
        else census_->skipped();
    }
    return ok();
}

Result<Splitter::Next> Splitter::step_end()
{
    if (census_) census_->end();
    if (!any_) out_->push_back({start_, start_, size_, size_, length_at(start_)});
    else out_->push_back({last_.from_line, last_.message, std::max(size_, last_.message), size_, last_.length, last_.head});
    block_.reset();
    buf_ = {};
    state_ = State::Done;
    return Next::On;
}

} // namespace mimeuri
