// Lines and header fields (header_lines.hh).
#include "header_lines.hh"

#include <cstring>

namespace mimeuri {

bool Lines::next(Line &l)
{
    if (at_ >= m_.size()) return false;
    const void *nl = std::memchr(m_.data() + at_, '\n', m_.size() - at_);
    const std::size_t stop = nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - m_.data()) : m_.size();
    l.begin = at_;
    l.lf = nl != nullptr;
    l.next = l.lf ? stop + 1 : stop;
    l.text = m_.substr(at_, stop - at_);
    at_ = l.next;
    return true;
}

bool HeaderFields::next(Field &f)
{
    if (done_) return false;
    Line l;
    if (have_pending_) {
        l = pending_;
        have_pending_ = false;
    } else if (!lines_.next(l)) {
        done_ = true;
        end_ = m_.size();
        return false;
    }
    if (l.empty() && l.lf) {
        done_ = by_empty_line_ = true;
        end_ = l.next;
        return false;
    }
    if (l.empty()) { // a lone CR ends the input: no line break, so no empty line either
        done_ = true;
        end_ = m_.size();
        return false;
    }
    f.first = l;
    f.begin = l.begin;
    f.end = l.next;
    for (Line c; lines_.next(c);) {
        if (!c.folded()) {
            pending_ = c;
            have_pending_ = true;
            break;
        }
        f.end = c.next;
    }
    f.raw = m_.substr(f.begin, f.end - f.begin);
    f.colon = l.text.find(':');
    if (f.has_colon()) {
        f.name = l.text.substr(0, f.colon);
        f.value = f.raw.substr(f.colon + 1);
    } else {
        f.name = f.value = {};
    }
    return true;
}

std::size_t HeaderFields::skip()
{
    for (Field f; next(f);) {
    }
    return end_;
}

std::size_t field_end(std::string_view m, std::size_t at)
{
    Lines lines(m, at);
    Line l;
    if (!lines.next(l)) return m.size();
    std::size_t end = l.next;
    while (lines.next(l) && l.folded()) end = l.next;
    return end;
}

} // namespace mimeuri
