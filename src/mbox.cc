#include "mbox.hh"

#include <cstdlib>
#include <cstring>

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

namespace {

// mboxcl2 (Dovecot, some MUAs): a message whose header block gives Content-Length: N, and
// whose body of N bytes ends exactly where the input does or where the next From_ line
// (after an optional empty line) starts, ends there; "From " lines inside it are body.
// Returns that end, or -1 when there is no such header or it does not land right.
std::int64_t content_length_end(const Source &src, std::int64_t msg_begin)
{
    // Most header blocks fit in 4 KiB; read 64 KiB only for one that does not.
    std::int64_t window = 4096;
    auto head = src.slice(msg_begin, std::min(src.size(), msg_begin + window));
    if (!head) return -1;
    std::string h = std::move(*head);
    std::int64_t length = -1;
    std::size_t pos = 0, body = std::string::npos;
    for (;;) {
        auto nl = h.find('\n', pos);
        if (nl == std::string::npos && window < 65536 && msg_begin + window < src.size()) {
            window = 65536;
            auto more = src.slice(msg_begin, std::min(src.size(), msg_begin + window));
            if (!more) return -1;
            h = std::move(*more);
            continue;
        }
        if (nl == std::string::npos) return -1;
        std::size_t len = nl - pos;
        if (len == 0 || (len == 1 && h[pos] == '\r')) {
            body = nl + 1;
            break;
        }
        if (len > 15 && g_ascii_strncasecmp(h.data() + pos, "Content-Length:", 15) == 0) {
            std::string v = h.substr(pos + 15, len - 15);
            char *end = nullptr;
            long long n = std::strtoll(v.c_str(), &end, 10);
            while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
            if (end && *end == '\0' && n >= 0) length = n;
        }
        pos = nl + 1;
    }
    if (length < 0 || body == std::string::npos) return -1;
    std::int64_t end = msg_begin + static_cast<std::int64_t>(body) + length;
    if (end == src.size()) return end;
    if (end > src.size()) return -1;
    char next[7] = {0};
    auto n = src.read_at(end, next, sizeof next);
    if (!n) return -1;
    std::string_view at(next, *n);
    if (at.substr(0, 5) == "From " || at.substr(0, 6) == "\nFrom " || at.substr(0, 7) == "\r\nFrom ") return end;
    return -1;
}

} // namespace

Result<std::vector<Segment>> split(const Source &src, Format format)
{
    std::vector<Segment> out;
    const std::int64_t size = src.size();
    if (format != Format::Mbox) {
        out.push_back({0, 0, size});
        return out;
    }

    // Lines that open a message: the "From " line, the separator before it, the message.
    struct Start {
        std::int64_t from_line, separator, message;
    };
    std::vector<Start> starts;
    constexpr std::size_t chunk_size = 1 << 20;
    std::string buf;
    std::int64_t buf_off = 0;    // source offset of buf[0]
    std::int64_t line = 0;       // start of the current line
    std::int64_t prev_line = -1; // start of the previous line
    bool prev_empty = true;      // the start of input counts as "after an empty line"

    auto byte_at = [&](std::int64_t off) -> int {
        if (off >= buf_off && off < buf_off + static_cast<std::int64_t>(buf.size()))
            return static_cast<unsigned char>(buf[static_cast<std::size_t>(off - buf_off)]);
        return -1;
    };

    while (line < size) {
        // Make sure the buffer holds [line, line + 5) or up to end of input.
        if (line + 5 > buf_off + static_cast<std::int64_t>(buf.size()) &&
            buf_off + static_cast<std::int64_t>(buf.size()) < size) {
            buf.resize(chunk_size);
            auto n = src.read_at(line, buf.data(), chunk_size);
            if (!n) return n.error();
            buf.resize(*n);
            buf_off = line;
        }
        bool from = line + 5 <= size && byte_at(line) == 'F' && byte_at(line + 1) == 'r' &&
                    byte_at(line + 2) == 'o' && byte_at(line + 3) == 'm' && byte_at(line + 4) == ' ';
        bool opens = from && prev_empty;
        // Find the end of this line.
        std::int64_t nl = -1;
        for (;;) {
            std::int64_t end = buf_off + static_cast<std::int64_t>(buf.size());
            std::int64_t from_off = std::max(line, buf_off);
            if (from_off < end) {
                const char *p = static_cast<const char *>(
                    std::memchr(buf.data() + (from_off - buf_off), '\n', static_cast<std::size_t>(end - from_off)));
                if (p) {
                    nl = buf_off + (p - buf.data());
                    break;
                }
            }
            if (end >= size) break;
            buf.resize(chunk_size);
            auto n = src.read_at(end, buf.data(), chunk_size);
            if (!n) return n.error();
            buf.resize(*n);
            buf_off = end;
        }
        std::int64_t next = nl < 0 ? size : nl + 1;
        std::int64_t len = next - line;
        bool empty = (len == 1) || (len == 2 && byte_at(line) == '\r');
        // byte_at(line) may have left the buffer; an empty line is at most 2 bytes, so
        // re-check with a direct read when needed.
        if (len == 2 && byte_at(line) < 0) {
            char c;
            auto n = src.read_at(line, &c, 1);
            if (!n) return n.error();
            empty = (c == '\r');
        }
        if (opens) { // the separator is the empty previous line (absent at the start of input)
            starts.push_back({line, prev_line >= 0 ? prev_line : line, next});
            if (std::int64_t end = content_length_end(src, next); end > next) {
                // Its body is N bytes: continue after it, as if after an empty line.
                prev_empty = true;
                prev_line = end;
                line = end;
                // An empty separator line right at `end` is the next line to read.
                continue;
            }
        }
        prev_empty = empty;
        prev_line = line;
        line = next;
    }

    if (starts.empty() || starts.front().from_line != 0) {
        // Leading data that is not an mbox message: carried as a message of its own.
        out.push_back({0, 0, starts.empty() ? size : starts.front().separator});
    }
    for (std::size_t i = 0; i < starts.size(); ++i) {
        std::int64_t end = i + 1 < starts.size() ? starts[i + 1].separator : size;
        out.push_back({starts[i].from_line, starts[i].message, std::max(end, starts[i].message)});
    }
    return out;
}

} // namespace mimeuri
