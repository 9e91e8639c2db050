// The streaming tokenizer (html_tokenizer.hh). State names are the WHATWG tokenizer's
// (HTML Living Standard 13.2.5); gumbo (0.10) implements the same states for what is read here.
#include "html_tokenizer.hh"

#include "html_tags.hh"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <unordered_set>
#include <vector>

namespace mimeuri::html {

namespace {

using namespace tags;

struct Attr {
    std::string name;
    std::size_t off{0}, len{0}; // the raw value with its quotes; len 0: no value
    bool missing{false};        // "name=" and then '>'
};

class Tokenizer {
public:
    explicit Tokenizer(ScanBuilder &b) : b_(b) {}

    // The next piece of the text: h, which starts at byte `base` of the whole; `last` when the
    // text ends with it. A piece that is not the last may end inside a tag, a comment or
    // the text of a <style>: run() then stops at its start (consumed()), and the next piece
    // must begin there.
    void piece(std::string_view h, std::size_t base, bool last)
    {
        h_ = h;
        n_ = h.size();
        at_ = base;
        last_ = last;
        i_ = 0;
        short_ = false;
    }

    // False when gumbo is needed (why_ says why).
    bool run()
    {
        while (i_ < n_ && why_.empty()) {
            const std::size_t start = i_, work = work_;
            if (!raw_.empty()) {
                raw_text();
            } else {
                const void *lt = std::memchr(h_.data() + i_, '<', n_ - i_);
                const std::size_t at = lt ? static_cast<std::size_t>(static_cast<const char *>(lt) - h_.data()) : n_;
                if (!content_) text(i_, at);
                work_ += at - i_;
                i_ = at;
                if (i_ < n_) {
                    const std::size_t tag_start = i_, tag_work = work_;
                    tag_open();
                    if (short_) i_ = tag_start, work_ = tag_work;
                }
            }
            if (short_) { // the piece ends inside what starts at i_: read again with more
                if (!raw_.empty()) work_ = work + (raw_resume_ - start), i_ = raw_resume_;
                break;
            }
            if (b_.full()) fallback("more references than the limit"); // gumbo cuts them in tree order
        }
        return why_.empty();
    }
    // How much of the piece is read: the rest goes again at the start of the next one.
    std::size_t consumed() const { return short_ ? i_ : n_; }
    const std::string &why() const { return why_; }
    std::size_t work() const { return work_; }

private:
    void fallback(std::string why)
    {
        if (why_.empty()) why_ = std::move(why);
    }
    void fallback(std::initializer_list<std::string_view> why) // said in pieces (a tag's name among them)
    {
        if (why_.empty())
            for (std::string_view w : why) why_.append(w);
    }
    // At the end of a piece: true (and the construct being read is given up, to be read
    // again with the next piece) unless the piece is the last, whose end is the text's.
    bool more()
    {
        if (last_) return false;
        short_ = true;
        return true;
    }
    std::size_t find(char c, std::size_t from) const
    {
        if (from >= n_) return n_;
        const void *p = std::memchr(h_.data() + from, c, n_ - from);
        return p ? static_cast<std::size_t>(static_cast<const char *>(p) - h_.data()) : n_;
    }
    // Text seen before any element: it makes a <head> or a <body> of its own.
    void text(std::size_t b, std::size_t e)
    {
        for (std::size_t k = b; k < e && !content_; ++k) content_ = !ws(h_[k]);
    }
    // A bogus comment (13.2.5.41) from `from`: up to the first '>'.
    void bogus_comment(std::size_t from)
    {
        const std::size_t gt = find('>', from);
        if (gt >= n_ && more()) return;
        work_ += gt - i_;
        i_ = gt < n_ ? gt + 1 : n_;
    }

    // 13.2.5.6 tag open state, at a '<'.
    void tag_open()
    {
        if (i_ + 1 >= n_) { // '<' at the end: text
            if (more()) return;
            content_ = true;
            i_ = n_;
            return;
        }
        const char c = h_[i_ + 1];
        if (c == '!') return markup_declaration();
        if (c == '/') return end_tag_open();
        if (alpha(c)) return tag(i_ + 1, true);
        if (c == '?') return bogus_comment(i_ + 1);
        content_ = true; // a '<' that is text
        ++i_;
        ++work_;
    }

    // 13.2.5.7 end tag open state.
    void end_tag_open()
    {
        content_ = true; // an end tag before <head> implies one (13.2.6.4.2)
        if (i_ + 2 >= n_) { // "</" at the end: text
            if (more()) return;
            i_ = n_;
            return;
        }
        const char c = h_[i_ + 2];
        if (alpha(c)) return tag(i_ + 2, false);
        if (c == '>') // "</>": no token; gumbo then names an unknown tag after it by text from here
            return fallback("</>");
        bogus_comment(i_ + 2);
    }

    // 13.2.5.42 markup declaration open state, at "<!".
    void markup_declaration()
    {
        if (i_ + 9 > n_ && more()) return; // "<!" and "[CDATA[" or "DOCTYPE" decide
        if (h_.compare(i_ + 2, 2, "--") == 0) return comment(i_ + 4);
        if (iequal_at(h_, i_ + 2, "doctype")) return bogus_comment(i_ + 9); // every DOCTYPE state ends at '>'
        if (!svg_.empty() && h_.compare(i_ + 2, 7, "[CDATA[") == 0) { // 13.2.5.69: text up to "]]>"
            const std::size_t end = h_.find("]]>", i_ + 9);
            if (end == std::string_view::npos && more()) return;
            const std::size_t next = end == std::string_view::npos ? n_ : end + 3;
            work_ += next - i_;
            i_ = next;
            return;
        }
        // "[CDATA[" outside foreign content, and anything else: a bogus comment.
        bogus_comment(i_ + 2);
    }

    // 13.2.5.43 to 13.2.5.52, the comment states, from after "<!--". Only where the comment
    // ends matters: the less-than-sign states change its text, never its end.
    void comment(std::size_t j)
    {
        enum { Start, StartDash, Body, EndDash, End, EndBang } st = Start;
        auto done = [&](std::size_t end) {
            work_ += end - i_;
            i_ = end;
        };
        while (j < n_) {
            const char c = h_[j];
            switch (st) {
            case Start:
            case StartDash:
            case EndBang: // '>' ends it ("<!-->", "<!--->", "--!>"), '-' moves on, else text
                if (c == '>') return done(j + 1);
                if (c == '-') st = st == Start ? StartDash : st == StartDash ? End : EndDash, ++j;
                else st = Body;
                break;
            case Body: {
                const std::size_t d = find('-', j);
                if (d >= n_) return more() ? void() : done(n_);
                j = d + 1;
                st = EndDash;
                break;
            }
            case EndDash:
                if (c == '-') st = End, ++j;
                else st = Body;
                break;
            case End:
                if (c == '>') return done(j + 1);
                if (c == '!') st = EndBang, ++j;
                else if (c == '-') ++j;
                else st = Body;
                break;
            }
        }
        if (!more()) done(n_);
    }

    // The bytes of a tag's name from j (none of white space, '/', '>'; of an attribute's, nor
    // '=' or NUL) onto name, lower case; returns where they end.
    std::size_t name_run(std::size_t j, std::string &name, bool attribute = true) const
    {
        std::size_t e = j;
        while (e < n_ && !ws(h_[e]) && h_[e] != '/' && h_[e] != '>' && !(attribute && (h_[e] == '=' || h_[e] == '\0'))) ++e;
        const std::size_t had = name.size();
        name.append(h_.substr(j, e - j));
        for (std::size_t k = had; k < name.size(); ++k) name[k] = lower(name[k]);
        return e;
    }

    // A tag from its name at j: 13.2.5.8 tag name state to 13.2.5.40 self-closing start tag
    // state. A tag that the end of the text cuts is not emitted (eof-in-tag).
    void tag(std::size_t j, bool start)
    {
        const std::size_t begin = i_;
        std::string name;
        j = name_run(j, name, false);
        attrs_.clear();
        enum { BeforeName, Name, AfterName, BeforeValue, AfterQuoted, SelfClosing } st = BeforeName;
        Attr *cur = nullptr;
        auto new_attr = [&] {
            attrs_.emplace_back();
            cur = &attrs_.back();
        };
        bool emitted = false;
        self_closing_ = false;
        while (j < n_ && !emitted) {
            const char c = h_[j];
            switch (st) {
            case BeforeName: // 13.2.5.32
                if (ws(c)) ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '>') emitted = true;
                // A NUL starts a name of U+FFFD (13.2.5.33), as browsers and html5lib read it;
                // gumbo 0.10 drops it, and find_refs mends its input for that.
                else if (c == '\0') new_attr(), cur->name += "\xEF\xBF\xBD", st = Name, ++j;
                else new_attr(), cur->name += lower(c), st = Name, ++j; // '=' too, as gumbo
                break;
            case Name: // 13.2.5.33
                if (ws(c)) st = AfterName, ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '=') st = BeforeValue, ++j;
                else if (c == '>') emitted = true;
                else if (c == '\0') cur->name += "\xEF\xBF\xBD", ++j;
                else j = name_run(j, cur->name);
                break;
            case AfterName: // 13.2.5.34
                if (ws(c)) ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '=') st = BeforeValue, ++j;
                else if (c == '>') emitted = true;
                else new_attr(), st = Name; // reconsume (a NUL too: U+FFFD in the name state)
                break;
            case BeforeValue: // 13.2.5.35
                if (ws(c)) {
                    ++j;
                } else if (c == '"' || c == '\'') { // 13.2.5.36/37: up to the same quote
                    const std::size_t close = find(c, j + 1);
                    if (close >= n_) {
                        j = n_;
                        break;
                    }
                    cur->off = j;
                    cur->len = close + 1 - j;
                    j = close + 1;
                    st = AfterQuoted;
                } else if (c == '>') {
                    emitted = true; // missing value: gumbo gives such a value a span of its own
                    cur->missing = true;
                } else { // 13.2.5.38 unquoted: up to white space or '>'
                    std::size_t e = j;
                    while (e < n_ && !ws(h_[e]) && h_[e] != '>') ++e;
                    cur->off = j;
                    cur->len = e - j;
                    j = e;
                    st = BeforeName;
                }
                break;
            case AfterQuoted: // 13.2.5.39
                if (ws(c)) st = BeforeName, ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '>') emitted = true;
                else st = BeforeName; // reconsume
                break;
            case SelfClosing: // 13.2.5.40
                if (c == '>') emitted = self_closing_ = true;
                else st = BeforeName; // reconsume
                break;
            }
        }
        tag_end(begin, j, start, emitted, name);
    }

    // A tag read from begin to j (its '>' when emitted): the work counted, the token handed
    // on, or none where the end of the text cut it (eof-in-tag).
    void tag_end(std::size_t begin, std::size_t j, bool start, bool emitted, const std::string &name)
    {
        work_ += j - begin;
        if (!emitted) { // eof-in-tag: no token
            if (why_.empty() && more()) return;
            i_ = n_;
            return;
        }
        i_ = j + 1;
        // The tag's name as gumbo reads it from the tag's text to match an end tag in foreign
        // content (gumbo_tag_from_original_text): of a start tag, up to white space other than
        // CR, '/' or '>'; of an end tag, everything between "</" and '>'.
        std::size_t name_end = begin + (start ? 1 : 2);
        if (start)
            while (name_end < j && !one_of_chars(h_[name_end], "\t\n\f /")) ++name_end;
        else
            name_end = j;
        raw_name_ = h_.substr(begin + (start ? 1 : 2), name_end - (begin + (start ? 1 : 2)));
        tag_text_ = h_.substr(begin, j + 1 - begin);
        if (!svg_.empty()) {
            if (start) foreign_start_tag(name);
            else foreign_end_tag();
        } else if (start) {
            start_tag(name);
        } else {
            end_tag(name);
        }
    }

    // What tree construction does with a start tag that matters here (13.2.6.4).
    void start_tag(std::string_view name) // (views: compared by their lengths first)
    {
        // A name with bytes other than ASCII letters (an address in angle brackets in HTML
        // mail, "<Dörte@example.org>"; binary data labelled text/html) names an element no
        // rule here knows, as an unknown ASCII name does: gumbo's input stream makes a control
        // character (and its tag name state a NUL) U+FFFD, keeps UTF-8 as it is, and makes bytes that are not UTF-8
        // U+FFFD, never taking an ASCII byte into one (its decoder stops before a byte that
        // cannot continue a sequence, and every ASCII byte is one); it lowers ASCII letters
        // only. So the tag ends where the tokenizer ends it, and names no element the rules
        // know. gumbo's tree names an unknown element by its text up to isspace() (find_refs,
        // gumbo_tag_from_original_text), which takes a vertical tab where its tokenizer does
        // not: the element's name then ends there (below). A NUL in the name is U+FFFD to the
        // tag name state (13.2.5.8) and stays a NUL in that text, but the text is find_refs'
        // copy, whose NULs it mends in the start tag of an element holding a NUL-started
        // attribute name (nuls_to_mend): the name is then read with its NULs made \x01. A
        // NUL-started name always has its NUL in the tag after the tag name; a tag whose name
        // and rest both hold a NUL goes to gumbo, and one with NULs in its name only is an
        // unknown element named as the tree names it.
        if (name.find('\0') != std::string_view::npos && tag_text_.find('\0', 1 + name.size()) != std::string_view::npos)
            return fallback("a tag name with a NUL, and a NUL after it in the tag");
        if (select_ && !in_select(name)) return;
        if (one_of(name, kFallbackTags)) return fallback({"<", name, ">"});
        if (name == "select") {
            // In a table, "in select in table" (13.2.6.4.17) closes it on table tags: gumbo then.
            if (!tables_.empty()) return fallback("<select> in a table");
            content_ = true;
            emit(name);
            select_ = true; // "in select" from here (13.2.6.4.16)
            return;
        }
        if (name == "svg") {
            // Foster parenting (13.2.6.1) would put it and what it holds before the table.
            if (!tables_.empty() && tables_.back() == 0) return fallback("<svg> in a table");
            content_ = true;
            emit(name);
            if (!self_closing_) open_svg(name); // foreign content from here
            return;
        }
        if (name == "html" || name == "body" || name == "form" || name == "head" || name == "base") {
            // The first <html> or <body> gives its element its attributes (an element made
            // earlier has none to keep); a later one only adds those it lacks, or is ignored,
            // as a second <form> is, and a <head> after anything that made one.
            // A second <base>: which comes first in gumbo's tree (base_href) is the tree's to say.
            // A second <html>, <body> or <head> (or a <head> after content) with no attribute
            // read here changes nothing read here: gumbo merges into <html> and <body> only
            // the attributes they lack, and ignores the <head>; the tag is then passed over.
            // A <form> while the form element pointer is set (13.2.6.4.7: from a <form> to the
            // next </form>) is ignored.
            int &count = name == "html" ? html_ : name == "body" ? body_ : name == "form" ? form_ : name == "head" ? head_ : base_;
            if (name == "form" && count == 1 && !form_open_) count = 0;
            if (name == "form") form_open_ = true;
            if (++count > 1 || (name == "head" && content_)) {
                const bool bare = name != "form" && name != "base" &&
                                  std::none_of(attrs_.begin(), attrs_.end(),
                                               [](const Attr &a) { return ScanBuilder::wanted(a.name); });
                if (!bare) return fallback({"a second <", name, ">"});
            }
        }
        if (name != "html" && name != "head") content_ = true;
        if (!tables(name)) return;
        if (name == "base" && !tables_.empty()) return fallback("<base> in a table (it may be moved before it)");
        // The name gumbo's tree gives an element of this tag name: up to a vertical tab, the
        // one byte isspace() takes that the tag name state does not (any other white space
        // ends the tag name); such a name is no element the rules know (VT is U+FFFD to
        // gumbo's tokenizer). One so named "base" gives a base URL where the tree puts it:
        // gumbo then.
        if (const std::size_t vt = name.find('\v'); vt != std::string_view::npos) {
            const std::string_view named = name.substr(0, vt);
            if (named == "base") return fallback("an unknown element named <base>");
            emit(named);
        } else {
            emit(name);
        }
        if (one_of(name, kRawText) || one_of(name, kRcdata) || name == "script") raw_ = name; // run() reads its text next
        script_ = Script::Data;
    }

    // 13.2.6.4.16, "in select" (gumbo's handle_in_select): <option> and <optgroup> reach the
    // tree; <select> closes the select and is ignored; <input>, <keygen> and <textarea> close
    // it and are read "in body"; <html> is read "in body"; <script> and <template>: gumbo. Any
    // other start tag is ignored, its attributes with it, and switches no tokenizer state
    // (a <style>, <title> or <svg> there is not RAWTEXT, RCDATA or foreign content).
    // True: the tag is to be read "in body" now.
    bool in_select(std::string_view name)
    {
        if (name == "option" || name == "optgroup") {
            emit(name);
            return false;
        }
        if (name == "script" || name == "template") {
            fallback({"<", name, "> in a <select>"});
            return false;
        }
        if (name == "select" || name == "input" || name == "keygen" || name == "textarea") {
            // The select is always in select scope here (only <option> and <optgroup> are
            // opened above it), and the insertion mode it resets to is "in body" (no table,
            // template or frameset is open).
            select_ = false;
            return name != "select";
        }
        return name == "html";
    }

    // The open tables, enough to know when a table tag reaches the tree: each is the byte
    // 0 (in the table, a row or a row group), 'd' or 'h' (in a td or th), 'c' (in a caption).
    bool tables(std::string_view name)
    {
        const bool cell = one_of(name, kCellTags), row = one_of(name, kRowTags);
        if ((cell || row) && tables_.empty()) {
            // Ignored by the tree "in body" (13.2.6.4.7), where every insertion mode that
            // reaches a table tag with no table open but those of kFallbackTags sends it; its
            // attributes with it.
            return false;
        }
        if (name == "table") {
            // In a cell or caption: a table inside it; else it closes the open one first.
            if (tables_.empty() || tables_.back() != 0) tables_.push_back(0);
            else tables_.back() = 0;
        } else if (cell) {
            tables_.back() = name == "td" ? 'd' : name == "th" ? 'h' : 'c';
        } else if (row) {
            tables_.back() = 0;
        }
        return true;
    }

    // Inside <svg> (13.2.6.5): an SVG element, closed by its end tag or by "/>".
    void foreign_start_tag(std::string_view name)
    {
        for (char c : name) {
            auto u = static_cast<unsigned char>(c);
            if (u >= 0x80 || u < 0x20) return fallback("a tag name that is not ASCII");
        }
        if (svg_.back().integration) return fallback({"<", name, "> in an SVG <", svg_.back().name, ">"});
        if (!one_of(name, kSvgTags)) return fallback({"<", name, "> in <svg>"});
        emit(name);
        if (!self_closing_) open_svg(name);
    }
    void open_svg(std::string_view name)
    {
        // Bounded memory: deeper SVG than any drawing needs goes to gumbo (and its limits).
        if (svg_.size() >= kMaxSvgDepth) return fallback("SVG nested deeper than " + std::to_string(kMaxSvgDepth));
        const bool integration = name == "foreignobject" || name == "desc" || name == "title";
        // The name is kept (the text it is in may be gone by its end tag): a long one goes to gumbo.
        if (raw_name_.size() > kMaxSvgName) return fallback("an SVG tag name over " + std::to_string(kMaxSvgName) + " bytes");
        svg_.push_back({std::string(raw_name_), integration ? std::string(name) : std::string(), integration});
    }
    // An end tag inside <svg> closes the nearest open SVG element of its name and those above
    // it; one that names none reaches the HTML element under the <svg>, and the HTML rules:
    // gumbo then.
    void foreign_end_tag()
    {
        for (std::size_t k = svg_.size(); k > 0; --k)
            if (iequal(svg_[k - 1].raw, raw_name_)) {
                svg_.resize(k - 1);
                return;
            }
        fallback("</" + std::string(raw_name_) + "> closing no open SVG element");
    }

    void end_tag(std::string_view name)
    {
        if (select_) { // "in select", every end tag but </select> is passed over here
            if (name == "select") select_ = false;
            return;
        }
        if (name == "form") form_open_ = false; // 13.2.6.4.7: the pointer is null after any </form>
        if (tables_.empty()) return;
        char &top = tables_.back();
        if (name == "table") tables_.pop_back();
        else if ((name == "td" && top == 'd') || (name == "th" && top == 'h') || (name == "caption" && top == 'c')) top = 0;
        // </tr> in a cell closes the cell and its row (13.2.6.4.15, 13.2.6.4.14): a cell always
        // has a row above it in table scope, made by the tree if the markup has none.
        else if (name == "tr" && (top == 'd' || top == 'h')) top = 0;
        // A row group's end tag closes the cell or not, by which group the scope holds.
        else if ((name == "tbody" || name == "thead" || name == "tfoot") && (top == 'd' || top == 'h'))
            fallback({"</", name, "> in a cell"});
    }

    // The start tag's attributes, the first of each name (later ones are dropped, 13.2.5.33).
    void emit(std::string_view tag)
    {
        // gumbo drops the attribute after a repeated name that has no value (it waits for that
        // value to drop, and, with no error recorded, keeps the repeated name to prefix the
        // next): the tag goes to gumbo, unless what that changes is read by no rule here (the
        // repeated name has a byte no wanted name has, so no name it prefixes is wanted, and
        // no wanted attribute follows it: binary data labelled text/html). Names compared as
        // gumbo compares them (name_key): "\x04" and "\x07" are one name, U+FFFD, to it.
        // Linear in the tag: a few names each compared with those before it, more in a hash set.
        if (attrs_.empty()) return;
        keys_.clear();
        key_store_.clear();
        key_store_.reserve(attrs_.size()); // keys_ may point into it: it never moves
        for (const Attr &at : attrs_) {
            if (std::all_of(at.name.begin(), at.name.end(), [](char c) { return c >= 0x20 && c < 0x7F; })) {
                keys_.push_back(at.name); // printable ASCII: its own key
            } else {
                key_store_.push_back(name_key(at.name));
                keys_.push_back(key_store_.back());
            }
        }
        std::unordered_set<std::string_view> many;
        auto repeated = [&](std::size_t a) {
            if (keys_.size() > kFewAttributes) return !many.insert(keys_[a]).second;
            for (std::size_t b = 0; b < a; ++b)
                if (keys_[b] == keys_[a]) return true;
            return false;
        };
        for (std::size_t a = 0; a < attrs_.size(); ++a)
            if (repeated(a) && attrs_[a].len == 0 && a + 1 < attrs_.size()) {
                const bool may_prefix_wanted = std::all_of(attrs_[a].name.begin(), attrs_[a].name.end(),
                                                           [](char c) { return (c >= 'a' && c <= 'z') || c == ':' || c == '-'; });
                const bool wanted_after = std::any_of(attrs_.begin() + static_cast<std::ptrdiff_t>(a) + 1, attrs_.end(),
                                                      [](const Attr &at) { return ScanBuilder::wanted(at.name); });
                if (may_prefix_wanted || wanted_after) return fallback("a repeated attribute with no value");
                break; // the rest is no concern of the scan
            }
        // Names already given, wanted ones only (a few).
        std::vector<std::string_view> &taken = keys_;
        taken.clear();
        for (std::size_t a = 0; a < attrs_.size(); ++a) {
            const Attr &at = attrs_[a];
            if (!ScanBuilder::wanted(at.name)) continue;
            bool dup = false;
            for (std::string_view t : taken) dup = dup || t == at.name;
            if (dup) continue;
            taken.push_back(at.name);
            if (at.missing) return fallback("an attribute whose value is missing after '='");
            // A <base href> with no value: gumbo gives it a span, and the base an empty URL.
            if (at.len == 0 && tag == "base") return fallback("a <base> attribute with no value");
            if (at.len == 0) continue; // no value: no reference (gumbo's holder would be empty)
            const char q = h_[at.off] == '"' || h_[at.off] == '\'' ? h_[at.off] : 0;
            std::string_view raw = q ? h_.substr(at.off + 1, at.len - 2) : h_.substr(at.off, at.len);
            // gumbo starts the raw span of an unquoted value that opens with a character
            // reference after that reference: its spans are not the tokenizer's to give.
            if (!q && raw[0] == '&') return fallback("an unquoted value that starts with '&'");
            auto decoded = plain_decoded(raw);
            if (!decoded) decoded = decode_attribute(raw, q);
            if (!decoded) return fallback("an attribute value gumbo could not decode alone");
            b_.attribute(std::string(tag), at.name, at_ + at.off, h_.substr(at.off, at.len), std::move(*decoded));
        }
    }

    // RCDATA and RAWTEXT (13.2.5.2/3 and their end tag states) of the element raw_: text up to
    // "</name" followed by white space, '/' or '>'; the end tag itself is read as a tag (it
    // may hold quotes).
    void raw_text()
    {
        if (raw_ == "script") return script_text();
        const std::string &name = raw_;
        const std::size_t begin = i_;
        // Where a piece that ends in the text makes it read on: <style> text is kept (a
        // holder), so from its start; other raw text matters only where it ends, so from where
        // an end tag may start.
        auto resume_at = [&](std::size_t at) { raw_resume_ = name == "style" ? begin : at; };
        std::size_t j = i_;
        for (;;) {
            const std::size_t lt = find('<', j);
            if (lt >= n_) {
                if (more()) return resume_at(n_);
                j = n_;
                break;
            }
            const std::size_t after = lt + 2 + name.size();
            if (after >= n_ && more()) return resume_at(lt); // what follows "</" decides
            if (lt + 1 < n_ && h_[lt + 1] == '/' && iequal_at(h_, lt + 2, name) && after < n_ &&
                (ws(h_[after]) || h_[after] == '/' || h_[after] == '>')) {
                j = lt;
                break;
            }
            j = lt + 1;
        }
        // gumbo's text node starts at its first character: of a CR LF, the LF (13.2.3.5).
        const std::size_t text = h_.compare(begin, 2, "\r\n") == 0 && j > begin + 1 ? begin + 1 : begin;
        work_ += j - begin;
        i_ = j;
        if (j < n_) tag(j + 2, false); // the end tag
        if (short_) return resume_at(j);
        if (name == "style" && j > text) b_.style_text(at_ + text, h_.substr(text, j - text));
        raw_.clear();
    }

    // Script data (html_tags.hh): read on in script_ to the end tag, or to where the piece
    // cuts what decides the state.
    void script_text()
    {
        const std::size_t begin = i_;
        const auto [j, end_tag] = script_data(h_, i_, script_, !last_);
        work_ += j - begin;
        i_ = j;
        if (!end_tag) { // read on with the next piece, or the text ends in the script
            if (more()) raw_resume_ = j;
            else raw_.clear();
            return;
        }
        tag(j + 2, false); // the end tag
        if (short_) {
            raw_resume_ = j;
            return;
        }
        raw_.clear();
    }

    std::string_view h_;
    std::size_t n_{0};
    std::size_t at_{0};   // where h_ starts in the whole text
    bool last_{true};
    bool short_{false};   // the piece ended inside what starts at i_
    std::string raw_;     // the RCDATA or RAWTEXT element whose text comes next
    std::size_t raw_resume_{0}; // where its text is read on, when a piece ends in it
    ScanBuilder &b_;
    std::size_t i_{0};
    std::size_t work_{0};
    std::string why_;
    std::vector<Attr> attrs_;
    std::vector<std::string_view> keys_; // emit's: the attributes' name keys, then the wanted names taken
    std::vector<std::string> key_store_; // the keys that are not the names themselves
    static constexpr std::size_t kFewAttributes = 16;
    std::vector<char> tables_;
    struct OpenSvg {
        std::string raw;      // the name as gumbo matches end tags by it
        std::string name;     // an integration point's (else empty)
        bool integration{false};
    };
    std::vector<OpenSvg> svg_; // the open SVG elements
    std::string_view raw_name_;         // the last tag's name as gumbo matches end tags by it
    std::string_view tag_text_;         // the last tag's text, '<' to '>'
    bool self_closing_{false};
    Script script_{Script::Data}; // the script data state where the text of a <script> is read on
    int html_{0}, body_{0}, form_{0}, head_{0}, base_{0};
    bool form_open_{false}; // the form element pointer is set
    bool select_{false};    // the insertion mode is "in select"
    bool content_{false}; // something that makes the head and body elements was seen
};

} // namespace

TokenizerResult tokenize_refs(std::string_view html, std::size_t max_refs)
{
    return PieceTokenizer(max_refs).finish(html); // one piece, read in place
}

struct PieceTokenizer::Impl {
    explicit Impl(std::size_t max_refs) : builder(max_refs), t(builder) {}
    ScanBuilder builder;
    Tokenizer t;
    std::string carry;    // the unfinished construct the last piece ended in
    std::size_t base{0};  // where carry starts in the whole text
    std::string why;
};

PieceTokenizer::PieceTokenizer(std::size_t max_refs, std::size_t max_carry)
    : impl_(std::make_unique<Impl>(max_refs)), max_carry_(max_carry)
{
}

PieceTokenizer::~PieceTokenizer() = default;

bool PieceTokenizer::step(std::string_view piece, bool last)
{
    Impl &m = *impl_;
    if (!m.why.empty()) return false;
    const bool carried = !m.carry.empty();
    if (carried) m.carry.append(piece);
    const std::string_view h = carried ? std::string_view(m.carry) : piece;
    m.t.piece(h, m.base, last);
    if (!m.t.run()) {
        m.why = m.t.why();
        return false;
    }
    const std::size_t used = m.t.consumed();
    m.base += used;
    if (carried) m.carry.erase(0, used);
    else m.carry.assign(h.substr(used));
    if (m.carry.size() > max_carry_) {
        m.why = "a tag, comment or element text over " + std::to_string(max_carry_) + " bytes";
        return false;
    }
    return true;
}

bool PieceTokenizer::feed(std::string_view piece) { return step(piece, false); }

TokenizerResult PieceTokenizer::finish(std::string_view last)
{
    TokenizerResult r;
    if (step(last, true)) r.scan = impl_->builder.finish();
    else r.fallback = impl_->why;
    r.work = impl_->t.work();
    return r;
}

Result<Scan> scan_refs(std::string_view html, const ParseLimits &limits)
{
    if (html.size() < 0xFFFFFFFFu) // beyond, find_refs says it is too large
        if (auto r = tokenize_refs(html, limits.max_refs); r.scan) return std::move(*r.scan);
    return find_refs(html, limits);
}

} // namespace mimeuri::html
