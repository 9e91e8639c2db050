#include "mbox.hh"

#include <cstring>
#include <string>

namespace mimeuri {

Result<bool> looks_like_mbox(const Source &src)
{
    char head[5];
    auto n = src.read_at(0, head, sizeof head);
    if (!n) return n.error();
    return *n == 5 && std::memcmp(head, "From ", 5) == 0;
}

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
        if (opens) // the separator is the empty previous line (absent at the start of input)
            starts.push_back({line, prev_line >= 0 ? prev_line : line, next});
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
