// entity_insert: new lines spliced between existing ones (MessageContext::insert_lines),
// for passes that add parts to a multipart (--data=attach adds images to a
// multipart/related before its closing delimiter). Like every edit, a splice on the
// original bytes (docs/design.md): nothing around the insertion is re-serialised.
#include "message.hh"

namespace mimeuri {

Status MessageContext::insert_lines(std::int64_t at, std::string_view lf_text)
{
    if (lf_text.empty()) return ok();
    if (lf_text.back() != '\n') return Error{Code::Software, "insert_lines: text that does not end a line"};
    if (at <= seg_.msg_begin || at > seg_.msg_end) return Error{Code::Software, "insert_lines: outside the message"};
    char before = '\0';
    if (auto r = src_->read_at(at - 1, &before, 1); !r) return r.error();
    if (before != '\n') return Error{Code::Software, "insert_lines: not at the start of a line"};
    std::string text;
    text.reserve(lf_text.size() + 16);
    // In an mbox that quotes From_ lines, a new line starting "From " is quoted as
    // replace_body quotes it (a reader would split the message there).
    const bool quote = in_mbox_ && !length_split_;
    for (std::size_t b = 0; b < lf_text.size();) {
        std::size_t nl = lf_text.find('\n', b);
        if (quote && lf_text.compare(b, 5, "From ") == 0) text += '>';
        text.append(lf_text, b, nl + 1 - b);
        b = nl + 1;
    }
    return add_edit(at, at, to_eol(text));
}

} // namespace mimeuri
