// A leaf's new content made while the output is written (see streamed_body.hh).
#include "streamed_body.hh"

#include "base64.hh"
#include "decode.hh"
#include "record.hh"
#include "sha256.hh"
#include "transfer.hh"

#include <fcntl.h>
#include <gmime/gmime.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

namespace mimeuri {

namespace {

constexpr std::size_t kPiece = std::size_t{64} << 10; // what is made before it is passed on

// A blob's decoded bytes, a piece at a time: held, or read from the input and decoded as
// MessageContext::decoded_pieces decodes them (decode_span).
Status blob_bytes(const StreamedBody::Blob &b, const SpanReader &read, const ByteSink &sink)
{
    if (b.held) return b.bytes.empty() ? ok() : sink(b.bytes);
    std::size_t total = 0;
    Status s = decode_span(read, b.begin, b.end, static_cast<GMimeContentEncoding>(b.encoding), kPiece,
                           [&](std::string_view piece) -> Result<bool> {
                               total += piece.size();
                               if (Status t = sink(piece); !t) return t.error();
                               return true;
                           });
    if (!s) return s;
    // Planned from these bytes: others now mean the input changed under the run.
    if (total != b.size) return Error{Code::TempFail, "the input changed while being read (an inlined part)"};
    return ok();
}

// A copied blob's base64 text (its line breaks removed), a piece at a time: planned from
// canonical text of this size; anything else now means the input changed under the run.
Status blob_text(const StreamedBody::Blob &b, const SpanReader &read, const ByteSink &sink)
{
    base64::Unbroken text;
    std::string buf, piece;
    piece.reserve(kPiece);
    for (std::int64_t at = b.begin; at < b.end;) {
        const std::int64_t stop = std::min<std::int64_t>(b.end, at + static_cast<std::int64_t>(kPiece));
        auto raw = read(at, stop, buf);
        if (!raw) return raw.error();
        at = stop;
        piece.clear();
        if (!text.feed(*raw, &piece)) break;
        if (!piece.empty())
            if (Status s = sink(piece); !s) return s;
    }
    if (!text.canonical() || text.decoded_size() != b.size)
        return Error{Code::TempFail, "the input changed while being read (an inlined part)"};
    return ok();
}

// The encoded content's last steps, as replace_body takes them on text held whole: the
// trailing line breaks kept or dropped (had_nl), LF made CRLF; passed on in pieces.
class Tail {
public:
    Tail(const StreamedBody &b, const ByteSink &sink) : b_(b), sink_(sink) { out_.reserve(kPiece + 1024); }
    Status put(std::string_view e)
    {
        std::size_t last = e.find_last_not_of('\n');
        if (last == std::string_view::npos) {
            newlines_ += e.size();
            return ok();
        }
        for (; newlines_ > 0; --newlines_) eol();
        append(e.substr(0, last + 1));
        newlines_ = e.size() - last - 1;
        return out_.size() >= kPiece ? flush() : ok();
    }
    Status finish()
    {
        // replace_body: a line break added where the content had one and the text has none,
        // all of them dropped where it had none.
        if (b_.had_nl)
            for (std::size_t k = std::max<std::size_t>(newlines_, 1); k > 0; --k) eol();
        newlines_ = 0;
        return flush();
    }

private:
    void eol() { b_.crlf ? out_.append("\r\n", 2) : out_.append(1, '\n'); }
    void append(std::string_view s)
    {
        if (!b_.crlf) {
            out_.append(s);
            return;
        }
        for (std::size_t at = 0; at < s.size();) {
            const void *nl = std::memchr(s.data() + at, '\n', s.size() - at);
            const std::size_t e = nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - s.data()) : s.size();
            out_.append(s.substr(at, e - at));
            if (!nl) break;
            out_.append("\r\n", 2);
            at = e + 1;
        }
    }
    Status flush()
    {
        if (out_.empty()) return ok();
        Status s = sink_(out_);
        out_.clear();
        return s;
    }
    const StreamedBody &b_;
    const ByteSink &sink_;
    std::string out_;
    std::size_t newlines_{0}; // line breaks at the end so far: kept only if more follows
};

} // namespace

SpanReader reader_of(const Source &src)
{
    return [&src](std::int64_t begin, std::int64_t end, std::string &buf) -> Result<std::string_view> {
        const auto len = static_cast<std::size_t>(end - begin);
        if (std::string_view v = src.view(begin, end); v.size() == len && len > 0) return v;
        buf.resize(len);
        auto n = src.read_at(begin, buf.data(), len);
        if (!n) return n.error();
        if (*n != len) return Error{Code::TempFail, src.name() + " changed while being read"};
        return std::string_view(buf);
    };
}

SpanReader reader_of(std::string_view bytes)
{
    return [bytes](std::int64_t begin, std::int64_t end, std::string &) -> Result<std::string_view> {
        if (begin < 0 || end < begin || end > static_cast<std::int64_t>(bytes.size()))
            return Error{Code::Software, "a read outside the message"};
        return bytes.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
    };
}

Status decode_span(const SpanReader &read, std::int64_t begin, std::int64_t end, GMimeContentEncoding enc,
                   std::size_t block, const std::function<Result<bool>(std::string_view)> &piece)
{
    const bool encoded = enc == GMIME_CONTENT_ENCODING_BASE64 || enc == GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE;
    GMimeEncoding st;
    if (encoded) g_mime_encoding_init_decode(&st, enc);
    std::string buf, out;
    for (std::int64_t at = begin; at < end;) {
        const std::int64_t stop = std::min<std::int64_t>(end, at + static_cast<std::int64_t>(block));
        auto raw = read(at, stop, buf);
        if (!raw) return raw.error();
        at = stop;
        std::string_view decoded = *raw;
        if (encoded) {
            out.resize(g_mime_encoding_outlen(&st, raw->size()) + 16);
            const std::size_t len = at == end ? decode::flush(&st, raw->data(), raw->size(), out.data())
                                              : decode::step(&st, raw->data(), raw->size(), out.data());
            decoded = std::string_view(out.data(), len);
        }
        if (decoded.empty()) continue;
        auto go_on = piece(decoded);
        if (!go_on) return go_on.error();
        if (!*go_on) return ok();
    }
    return ok();
}

namespace {

// The body's text [from, to): held, or read from the input a piece at a time.
Status text_span(const StreamedBody &b, const SpanReader &read, std::size_t from, std::size_t to, const ByteSink &sink)
{
    if (b.text_size == 0) return sink(std::string_view(b.text).substr(from, to - from));
    std::string buf;
    for (std::size_t at = from; at < to; at += kPiece) {
        const auto begin = b.text_at + static_cast<std::int64_t>(at);
        auto piece = read(begin, begin + static_cast<std::int64_t>(std::min(kPiece, to - at)), buf);
        if (!piece) return piece.error();
        if (Status s = sink(*piece); !s) return s;
    }
    return ok();
}

} // namespace

Status StreamedBody::content(const SpanReader &read, const ByteSink &sink) const
{
    const std::size_t text_end = text_size > 0 ? text_size : text.size();
    std::size_t at = 0;
    std::string b64;
    b64.reserve(kPiece / 3 * 4 + 16);
    for (const Piece &p : pieces) {
        if (p.text_end > at)
            if (Status s = text_span(*this, read, at, p.text_end, sink); !s) return s;
        at = p.text_end;
        if (p.blob < 0) continue;
        const Blob &blob = blobs.at(static_cast<std::size_t>(p.blob));
        if (blob.copied) {
            if (Status s = blob_text(blob, read, sink); !s) return s;
            continue;
        }
        // base64 in one line, as transfer::append_base64 writes it whole: whole triplets
        // encoded as they come (base64::encode), the one or two octets after them carried.
        std::string carry;
        Status s = blob_bytes(blob, read, [&](std::string_view d) -> Status {
            for (std::size_t k = 0; k < d.size();) {
                const std::size_t n = std::min(kPiece - carry.size(), d.size() - k);
                carry.append(d.data() + k, n);
                k += n;
                const std::size_t whole = carry.size() / 3 * 3;
                b64.resize(whole / 3 * 4);
                base64::encode(reinterpret_cast<const unsigned char *>(carry.data()), whole, b64.data());
                carry.erase(0, whole);
                if (Status t = sink(b64); !t) return t;
            }
            return ok();
        });
        if (!s) return s;
        b64.resize(4);
        b64.resize(base64::encode(reinterpret_cast<const unsigned char *>(carry.data()), carry.size(), b64.data()));
        if (Status t = sink(b64); !t) return t;
    }
    return at < text_end ? text_span(*this, read, at, text_end, sink) : ok();
}

namespace {

// What make hands its sink, end to end.
Result<std::string> gathered(const std::function<Status(const ByteSink &)> &make)
{
    std::string out;
    Status s = make([&](std::string_view v) {
        out.append(v);
        return ok();
    });
    if (!s) return s.error();
    return out;
}

} // namespace

Result<std::string> StreamedBody::content_text(const SpanReader &read) const
{
    return gathered([&](const ByteSink &sink) { return content(read, sink); });
}

bool StreamedBody::line_over(std::size_t limit) const
{
    std::size_t len = 0, at = 0;
    auto text_to = [&](std::size_t end) {
        for (; at < end; ++at) {
            if (text[at] == '\n') len = 0;
            else if (++len > limit) return true;
        }
        return false;
    };
    for (const Piece &p : pieces) {
        if (text_to(p.text_end)) return true;
        if (p.blob >= 0) len += (blobs.at(static_cast<std::size_t>(p.blob)).size + 2) / 3 * 4;
        if (len > limit) return true;
    }
    return text_to(text.size());
}

void Base64InLines::put(std::string_view text, std::string &out)
{
    for (std::size_t at = 0; at < text.size();) {
        if (col_ == line_) {
            out += eol_;
            col_ = 0;
        }
        const std::size_t n = std::min(text.size() - at, line_ - col_);
        out.append(text.substr(at, n));
        col_ += n;
        at += n;
    }
}

void Base64InLines::feed(std::string_view piece, std::string &out)
{
    carry_.append(piece);
    const std::size_t whole = carry_.size() / 3 * 3;
    std::string b64(whole / 3 * 4, '\0');
    base64::encode(reinterpret_cast<const unsigned char *>(carry_.data()), whole, b64.data());
    carry_.erase(0, whole);
    put(b64, out);
}

void Base64InLines::end(std::string &out)
{
    std::string b64((carry_.size() + 2) / 3 * 4, '\0');
    b64.resize(base64::encode(reinterpret_cast<const unsigned char *>(carry_.data()), carry_.size(), b64.data()));
    carry_.clear();
    put(b64, out);
    for (std::size_t i = 0; i < trail_; ++i) out += eol_;
}

namespace {

// A File body's bytes after its text (StreamedBody::File): read from one descriptor, checked
// against the size and digest the pass took as they are read.
Status write_file(const StreamedBody &b, const ByteSink &sink)
{
    const StreamedBody::File &f = b.file;
    const Error changed{Code::TempFail, "stored file " + f.path + " changed after it was checked; not written"};
    int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{Code::TempFail, "cannot open " + f.path + ": " + g_strerror(errno)};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != f.size) {
        ::close(fd);
        return changed;
    }
    std::optional<Base64InLines> lines;
    if (f.b64_line > 0) lines.emplace(f.b64_line, f.b64_trail, b.crlf ? "\r\n" : "\n");
    Sha256 sha;
    std::size_t total = 0;
    std::string buf(kPiece, '\0'), out;
    Status s = ok();
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) s = Error{Code::TempFail, "cannot read " + f.path + ": " + g_strerror(errno)};
        if (n <= 0) break;
        const std::string_view v(buf.data(), static_cast<std::size_t>(n));
        sha.update(v.data(), v.size());
        total += v.size();
        if (total > f.size) break;
        if (!lines) s = sink(v);
        else {
            out.clear();
            lines->feed(v, out);
            s = sink(out);
        }
        if (!s) break;
    }
    ::close(fd);
    if (!s) return s;
    if (total != f.size || sha.digest() != f.sha256) return changed;
    if (!lines) return ok();
    out.clear();
    lines->end(out);
    return sink(out);
}

} // namespace

Status StreamedBody::write(const SpanReader &read, const ByteSink &sink) const
{
    if (!file.path.empty()) {
        const std::size_t text_end = text_size > 0 ? text_size : text.size();
        if (Status s = text_span(*this, read, 0, text_end, sink); !s) return s;
        return write_file(*this, sink);
    }
    Tail tail(*this, sink);
    std::string enc;
    enc.reserve(kPiece + kPiece / 2);
    transfer::QuotedPrintable qp(crlf);
    transfer::Base64Lines b64;
    auto pass_on = [&]() -> Status {
        Status s = tail.put(enc);
        enc.clear();
        return s;
    };
    Status s = content(read, [&](std::string_view v) -> Status {
        if (cte == Cte::Base64) b64.feed(v, enc);
        else qp.feed(v, enc);
        return enc.size() >= kPiece ? pass_on() : ok();
    });
    if (!s) return s;
    if (cte == Cte::Base64) b64.finish(enc);
    else qp.finish(enc);
    if (Status t = pass_on(); !t) return t;
    return tail.finish();
}

std::string StreamedBody::serialize() const
{
    Record r;
    r.put(text);
    r.put(pieces.size());
    for (const Piece &p : pieces) {
        r.put(p.text_end);
        r.put(static_cast<std::size_t>(p.blob + 1));
    }
    r.put(blobs.size());
    for (const Blob &b : blobs) {
        r.put(static_cast<std::size_t>(b.held) | static_cast<std::size_t>(b.copied) << 1);
        r.put(b.bytes);
        r.put(static_cast<std::size_t>(b.begin));
        r.put(static_cast<std::size_t>(b.end));
        r.put(static_cast<std::size_t>(b.encoding));
        r.put(b.size);
    }
    r.put(static_cast<std::size_t>(cte));
    r.put(static_cast<std::size_t>(crlf) | static_cast<std::size_t>(had_nl) << 1);
    r.put(static_cast<std::size_t>(text_at));
    r.put(text_size);
    r.put(file.path);
    r.put(file.size);
    r.put(file.sha256);
    r.put(file.b64_line);
    r.put(file.b64_trail);
    return r.take();
}

StreamedBody StreamedBody::deserialize(std::string bytes)
{
    Record r(std::move(bytes));
    StreamedBody b;
    b.text = r.get();
    std::size_t n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        Piece p;
        p.text_end = r.get_size();
        p.blob = static_cast<int>(r.get_size()) - 1;
        b.pieces.push_back(p);
    }
    n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        Blob x;
        const std::size_t how = r.get_size();
        x.held = how & 1;
        x.copied = how & 2;
        x.bytes = r.get();
        x.begin = static_cast<std::int64_t>(r.get_size());
        x.end = static_cast<std::int64_t>(r.get_size());
        x.encoding = static_cast<int>(r.get_size());
        x.size = r.get_size();
        b.blobs.push_back(std::move(x));
    }
    b.cte = static_cast<Cte>(r.get_size());
    const std::size_t flags = r.get_size();
    b.crlf = flags & 1;
    b.had_nl = flags & 2;
    b.text_at = static_cast<std::int64_t>(r.get_size());
    b.text_size = r.get_size();
    b.file.path = r.get();
    b.file.size = r.get_size();
    b.file.sha256 = r.get();
    b.file.b64_line = r.get_size();
    b.file.b64_trail = r.get_size();
    return b;
}

Status write_edit(const Edit &e, const SpanReader &read, const ByteSink &sink)
{
    if (e.streamed) return e.streamed->write(read, sink);
    return e.text.empty() ? ok() : sink(e.text);
}

Result<std::string> edit_text(const Edit &e, const SpanReader &read)
{
    if (!e.streamed) return e.text;
    return gathered([&](const ByteSink &sink) { return e.streamed->write(read, sink); });
}

} // namespace mimeuri
