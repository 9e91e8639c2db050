// Pages made inert (html_sanitize.hh): the text read once by the streaming tokenizer's
// states (HTML Living Standard 13.2.5, as in html_tokenizer.cc), each token kept written
// again in one canonical spelling, what runs or fetches left out and counted.
#include "html_sanitize.hh"
#include "body_colours.hh"

#include "html_tags.hh"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <vector>

namespace mimeuri::html {

namespace {

using namespace tags;

bool plain_name(std::string_view name)
{
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
              c == '.' || c == '-'))
            return false;
    return true;
}

// Elements taken out with everything in them.
const char *const kScriptTags[] = {"script", "noscript", "template", "math"};
// SVG: the HTML integration points (a namespace change inside the tree) and the animation
// elements (which can set an href to a javascript: URL), by lower-case name.
const char *const kSvgDropped[] = {"script", "foreignobject", "desc", "title", "animate", "set", "animatemotion",
                                   "animatetransform", "discard", "handler", "listener"};
const char *const kFrameTags[] = {"iframe", "frame", "frameset", "object", "embed", "applet", "portal", "param",
                                  "noembed", "noframes"};
const char *const kVoid[] = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                             "source", "track", "wbr", "basefont", "bgsound", "frame", "keygen"};
// End tags never written: of elements whose start tag is not written either.
const char *const kNoEnd[] = {"html", "head", "title", "base", "meta", "link", "svg", "script", "noscript",
                              "template", "math", "iframe", "frame", "frameset", "object", "embed", "applet",
                              "portal", "param", "noembed", "noframes"};
// 13.2.6.5: the start tags that leave foreign content (<font> too, with color, face or size).
const char *const kBreakout[] = {"b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt",
                                 "em", "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li",
                                 "listing", "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span",
                                 "strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var"};
// Attributes a page loads from when it opens.
const char *const kLoading[] = {"src", "srcset", "background", "poster", "lowsrc", "dynsrc"};
// Attributes whose URL a page navigates to or frames: no data: there.
const char *const kNavigating[] = {"href", "xlink:href", "action", "formaction"};

void append_escaped(std::string &out, std::string_view text, bool attribute)
{
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"':
            if (attribute) out += "&quot;";
            else out += c;
            break;
        default: out += c;
        }
    }
}

// <style> text with no '<', so that it holds no markup in either reading a browser may give
// it (HTML's RAWTEXT, or SVG's, where it is markup): "<!--" and "-->" (which CSS ignores)
// taken out, any other '<' as the CSS escape \3c.
void append_css(std::string &out, std::string_view css)
{
    for (std::size_t k = 0; k < css.size(); ++k) {
        if (css.compare(k, 4, "<!--") == 0) k += 3;
        else if (css.compare(k, 3, "-->") == 0) k += 2;
        else if (css[k] == '<') out += "\\3c ";
        else out += css[k];
    }
}

bool srcset_remote(std::string_view v)
{
    // Candidates are split at commas followed by white space or at the URL's end; a URL with
    // a scheme anywhere in the value is remote enough to drop the whole list.
    for (std::size_t at = 0; at < v.size();) {
        while (at < v.size() && (ws(v[at]) || v[at] == ',')) ++at;
        std::size_t end = at;
        while (end < v.size() && !ws(v[end])) ++end;
        std::string_view url = v.substr(at, end - at);
        const bool no_descriptors = !url.empty() && url.back() == ','; // the next candidate follows
        while (!url.empty() && url.back() == ',') url.remove_suffix(1);
        if (is_remote_url(url)) return true;
        if (no_descriptors) {
            at = end;
            continue;
        }
        at = v.find(',', end);
        if (at == std::string_view::npos) break;
    }
    return false;
}

struct Attr {
    std::string name;     // lower case, as the tokenizer reads it
    std::string_view raw; // the value, without its quotes
    char quote{0};
    bool has_value{false};
};

// What is written of an element's text read in a RAWTEXT, RCDATA or script data state.
enum class RawOut { Drop, Css, Rcdata, Escaped };

class Sanitizer {
public:
    Sanitizer(std::string_view h, const SanitizeOptions &o, SanitizeCounts &c) : h_(h), n_(h.size()), opts_(o), n_of_(c) {}

    std::string out;

    // 13.2.5.1 data state, and the text states an element switches to.
    void run()
    {
        while (i_ < n_) {
            if (!raw_.empty()) {
                raw_text();
                continue;
            }
            const void *lt = std::memchr(h_.data() + i_, '<', n_ - i_);
            const std::size_t at = lt ? static_cast<std::size_t>(static_cast<const char *>(lt) - h_.data()) : n_;
            if (skip_.empty()) out.append(h_.data() + i_, at - i_); // no '<' in it: text as it is
            i_ = at;
            if (i_ < n_) tag_open();
        }
    }

private:
    void text(std::string_view s)
    {
        if (skip_.empty()) out += s;
    }
    std::size_t find(char c, std::size_t from) const
    {
        const std::size_t at = h_.find(c, from);
        return at == std::string_view::npos ? n_ : at;
    }
    // 13.2.5.41 bogus comment state: up to the first '>'.
    void bogus_comment(std::size_t from)
    {
        const std::size_t gt = find('>', from);
        i_ = gt < n_ ? gt + 1 : n_;
    }

    // 13.2.5.6 tag open and 13.2.5.7 end tag open states, at a '<'.
    void tag_open()
    {
        const char c = i_ + 1 < n_ ? h_[i_ + 1] : '\0';
        const char d = i_ + 2 < n_ ? h_[i_ + 2] : '\0';
        if (c == '!') return markup_declaration();
        if (c == '/' && alpha(d)) return void(tag(i_ + 2, false));
        if (c == '/' && d == '>') { // "</>": no token
            i_ += 3;
            return;
        }
        if (c == '/' && i_ + 2 < n_) return bogus_comment(i_ + 2);
        if (alpha(c)) return void(tag(i_ + 1, true));
        if (c == '?') return bogus_comment(i_ + 1);
        text("&lt;"); // a '<' that is text
        ++i_;
    }

    // 13.2.5.42 markup declaration open state, at "<!".
    void markup_declaration()
    {
        if (h_.compare(i_ + 2, 2, "--") == 0) return comment(i_ + 4);
        if (!svg_.empty() && h_.compare(i_ + 2, 7, "[CDATA[") == 0) { // 13.2.5.69: text up to "]]>"
            const std::size_t end = std::min(h_.find("]]>", i_ + 9), n_);
            if (skip_.empty()) append_escaped(out, h_.substr(i_ + 9, end - (i_ + 9)), false);
            i_ = end < n_ ? end + 3 : n_;
            return;
        }
        bogus_comment(i_ + 2); // DOCTYPE too: each of its states ends at '>'
    }

    // 13.2.5.43 to 13.2.5.52, the comment states, from after "<!--": where it ends.
    void comment(std::size_t j)
    {
        enum { Start, StartDash, Body, EndDash, End, EndBang } st = Start;
        while (j < n_) {
            const char c = h_[j];
            switch (st) {
            case Start:
            case StartDash:
            case EndBang: // '>' ends it ("<!-->", "<!--->", "--!>"), '-' moves on, else text
                if (c == '>') {
                    i_ = j + 1;
                    return;
                }
                if (c == '-') st = st == Start ? StartDash : st == StartDash ? End : EndDash, ++j;
                else st = Body;
                break;
            case Body: {
                const std::size_t dash = find('-', j);
                if (dash >= n_) j = n_;
                else j = dash + 1, st = EndDash;
                break;
            }
            case EndDash:
                if (c == '-') st = End, ++j;
                else st = Body;
                break;
            case End:
                if (c == '>') {
                    i_ = j + 1;
                    return;
                }
                if (c == '!') st = EndBang, ++j;
                else if (c == '-') ++j;
                else st = Body;
                break;
            }
        }
        i_ = n_;
    }

    // A tag from its name at j: 13.2.5.8 tag name state to 13.2.5.40 self-closing start tag
    // state. A tag that the end of the text cuts is no token (eof-in-tag).
    bool tag(std::size_t j, bool start) // false: eof-in-tag
    {
        std::string name;
        for (; j < n_ && !ws(h_[j]) && h_[j] != '/' && h_[j] != '>'; ++j) {
            if (h_[j] == '\0') name += "\xEF\xBF\xBD";
            else name += lower(h_[j]);
        }
        attrs_.clear();
        enum { BeforeName, Name, AfterName, BeforeValue, AfterQuoted, SelfClosing } st = BeforeName;
        bool emitted = false;
        self_closing_ = false;
        auto name_char = [&](char c) {
            if (c == '\0') attrs_.back().name += "\xEF\xBF\xBD";
            else attrs_.back().name += lower(c);
        };
        while (j < n_ && !emitted) {
            const char c = h_[j];
            switch (st) {
            case BeforeName: // 13.2.5.32 ('=' starts a name)
                if (ws(c)) ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '>') emitted = true;
                else attrs_.emplace_back(), name_char(c), st = Name, ++j;
                break;
            case Name: // 13.2.5.33
                if (ws(c)) st = AfterName, ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '=') st = BeforeValue, ++j;
                else if (c == '>') emitted = true;
                else name_char(c), ++j;
                break;
            case AfterName: // 13.2.5.34
                if (ws(c)) ++j;
                else if (c == '/') st = SelfClosing, ++j;
                else if (c == '=') st = BeforeValue, ++j;
                else if (c == '>') emitted = true;
                else attrs_.emplace_back(), st = Name; // reconsume
                break;
            case BeforeValue: // 13.2.5.35
                if (ws(c)) {
                    ++j;
                } else if (c == '"' || c == '\'') { // 13.2.5.36/37: up to the same quote
                    const std::size_t close = find(c, j + 1);
                    attrs_.back().raw = h_.substr(j + 1, close - (j + 1));
                    attrs_.back().quote = c;
                    attrs_.back().has_value = true;
                    j = close < n_ ? close + 1 : n_;
                    st = AfterQuoted;
                } else if (c == '>') {
                    emitted = true; // missing value: empty
                } else { // 13.2.5.38 unquoted: up to white space or '>'
                    std::size_t e = j;
                    while (e < n_ && !ws(h_[e]) && h_[e] != '>') ++e;
                    attrs_.back().raw = h_.substr(j, e - j);
                    attrs_.back().has_value = true;
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
        if (!emitted) { // eof-in-tag: no token, and nothing after it
            i_ = n_;
            return false;
        }
        i_ = j + 1;
        if (start) start_tag(name);
        else end_tag(name);
        return true;
    }

    // RCDATA, RAWTEXT and script data (13.2.5.2-4 and their end tag states) of the element
    // raw_: text up to "</name" followed by white space, '/' or '>' (script data's escaped
    // states are not followed: a script ended early leaves the rest to be read as markup,
    // which is then sanitised as any other). The end tag is read as a tag.
    void raw_text()
    {
        const std::string name = std::move(raw_);
        raw_.clear();
        std::size_t end = n_;
        for (std::size_t j = i_;;) {
            const std::size_t lt = h_.find("</", j);
            if (lt == std::string_view::npos) break;
            const std::size_t after = lt + 2 + name.size();
            if (after < n_ && iequal_at(h_, lt + 2, name) && (ws(h_[after]) || h_[after] == '/' || h_[after] == '>')) {
                end = lt;
                break;
            }
            j = lt + 2;
        }
        const std::string_view text = h_.substr(i_, end - i_);
        i_ = end;
        if (skip_.empty()) {
            switch (raw_out_) {
            case RawOut::Drop: break;
            case RawOut::Css: append_css(out, text); break;
            case RawOut::Escaped: append_escaped(out, text, false); break;
            case RawOut::Rcdata: // references are read in RCDATA: only '<' is escaped
                for (char c : text) {
                    if (c == '<') out += "&lt;";
                    else out += c;
                }
                break;
            }
        }
        // The end tag, or the end of the text in the element or its end tag: then it is
        // closed here, as a second reading of the output would close it.
        if (!(end < n_ && tag(end + 2, false)) && skip_.empty()) end_tag(name);
    }

    // The element's text from here is read in a text state (RawOut says what is written).
    void enter_raw(const std::string &name, RawOut what)
    {
        raw_ = name;
        raw_out_ = what;
    }

    // What tree construction does with a start tag, as far as what is written goes.
    void start_tag(const std::string &name)
    {
        const bool leaves = one_of(name, kBreakout) ||
                            (name == "font" && std::any_of(attrs_.begin(), attrs_.end(), [](const Attr &a) {
                                 return a.name == "color" || a.name == "face" || a.name == "size";
                             }));
        if (!skip_.empty()) return skipped_start(name);
        // svg_ is what the output has open: a tag that leaves foreign content and is not
        // written (a second <body>, an <embed>) leaves nothing there.
        const bool svg = (!svg_.empty() && !leaves) || name == "svg";
        if (dropped_with_content(name, svg)) return;
        if (kept(name)) write_start(name, svg);
    }

    // Inside an element taken out: only where it ends matters, and the text states that
    // hide an end tag (in HTML content).
    void skipped_start(const std::string &name)
    {
        if (name == skip_ && !(self_closing_ && skip_foreign_)) ++skip_depth_;
        if (skip_foreign_) return;
        if (name == "script") enter_raw(name, RawOut::Drop);
        else if (name == "style" || name == "xmp" || name == "iframe" || name == "noembed" || name == "noframes")
            enter_raw(name, RawOut::Drop);
        else if (name == "title" || name == "textarea") enter_raw(name, RawOut::Drop);
        else if (name == "plaintext") i_ = n_;
    }

    void skip(const std::string &name, bool foreign)
    {
        skip_ = name;
        skip_depth_ = 1;
        skip_foreign_ = foreign;
    }

    // Scripts and frames, taken out with their content; true when name is one. In either
    // namespace: where a browser's reading of the output could differ from this one (an
    // <svg> that "in select" ignores), each element is still one this pass has looked at.
    bool dropped_with_content(const std::string &name, bool svg)
    {
        const bool foreign = svg || name == "math";
        // An element's content, by how it is read here: a text state in HTML, else markup.
        auto drop = [&](RawOut raw_state) {
            if (!foreign && raw_state == RawOut::Drop) return enter_raw(name, RawOut::Drop);
            if (!(self_closing_ && foreign)) skip(name, foreign);
        };
        const RawOut text_state = name == "script" || name == "title" || name == "iframe" || name == "noembed" ||
                                          name == "noframes"
                                      ? RawOut::Drop
                                      : RawOut::Escaped; // (Escaped: markup, skipped)
        if (name == "title") { // the page has its own; SVG's is an integration point
            if (svg) ++n_of_.scripts;
            drop(text_state);
            return true;
        }
        if (one_of(name, kScriptTags) || one_of(name, kSvgDropped)) {
            // <noscript> is read as markup (scripting off, as gumbo reads it): either reading
            // ends it at the same place or later, and nothing of it is written.
            ++n_of_.scripts;
            drop(text_state);
            return true;
        }
        if (one_of(name, kFrameTags)) {
            ++n_of_.frames;
            if (!one_of(name, kVoid)) drop(text_state);
            return true;
        }
        return false;
    }

    // Elements whose tag is not written (their content is); false for those.
    bool kept(const std::string &name)
    {
        if (name == "html" || name == "head") return false;
        if (name == "base") {
            ++n_of_.base;
            return false;
        }
        if (name == "meta") {
            for (const Attr &a : attrs_)
                if (a.name == "http-equiv" && a.has_value) {
                    const auto v = value(a);
                    std::string lv = v ? *v : std::string();
                    for (char &c : lv) c = lower(c);
                    if (lv.find("refresh") != std::string::npos) ++n_of_.refresh;
                }
            return false;
        }
        if (name == "link") return local_stylesheet();
        return true;
    }

    // svg: the tag is read in foreign content here (its text states follow from that).
    void write_start(const std::string &name, bool svg)
    {
        std::string tag = name;
        if (name == "body") { // a <div> where it has attributes (its colours: body_style), else its content only
            const bool first = !body_seen_;
            body_seen_ = true;
            if (attrs_.empty() || !first) return;
            tag = "div";
            body_div_ = true;
        } else if (name == "form") {
            tag = "div";
            ++n_of_.forms;
            ++forms_open_;
        } else if (name == "xmp" || name == "plaintext" || name == "listing") {
            tag = "pre";
        }
        // A tag written as one that leaves foreign content leaves it in the output.
        const bool written_svg = svg && !one_of(tag, kBreakout);
        // Memory bounded by the open SVG elements kept (kMaxSvgDepth): one deeper is not
        // written (its content is), so that each SVG element written is one svg_ holds.
        const bool too_deep = written_svg && !self_closing_ && svg_.size() >= kMaxSvgDepth;
        if (plain_name(tag) && !too_deep) {
            if (!written_svg) svg_.clear();
            out += '<';
            out += tag;
            attributes(name);
            out += written_svg && self_closing_ ? "/>" : ">";
            if (written_svg && !self_closing_) svg_.push_back(tag);
        }
        if (svg) return;
        if (name == "style") enter_raw(name, RawOut::Css);
        else if (name == "textarea") enter_raw(name, RawOut::Rcdata);
        else if (name == "xmp") enter_raw(name, RawOut::Escaped);
        else if (name == "plaintext") { // 13.2.5.5: the rest is text
            append_escaped(out, h_.substr(i_), false);
            out += "</pre>";
            i_ = n_;
        }
    }

    void end_tag(std::string name)
    {
        if (!skip_.empty()) {
            if (name == skip_ && --skip_depth_ == 0) skip_.clear();
            return;
        }
        if (!svg_.empty()) { // closes the nearest open SVG element of its name, else nothing
            for (std::size_t k = svg_.size(); k > 0; --k)
                if (svg_[k - 1] == name) {
                    svg_.resize(k - 1);
                    out += "</" + name + ">";
                    return;
                }
            return;
        }
        if (name == "body") {
            if (body_div_) out += "</div>", body_div_ = false;
            return;
        }
        if (name == "form") {
            if (forms_open_) out += "</div>", --forms_open_;
            return;
        }
        if (one_of(name, kNoEnd) || !plain_name(name)) return;
        if (name == "xmp" || name == "listing" || name == "plaintext") name = "pre";
        out += "</" + name + ">";
    }

    // The value as a browser reads it (character references decoded as gumbo decodes them).
    static std::optional<std::string> value(const Attr &a)
    {
        if (!a.has_value) return std::string();
        if (a.raw.find_first_of(std::string_view("&\r\0", 3)) == std::string_view::npos) return std::string(a.raw);
        if (auto d = plain_decoded(a.raw)) return d;
        return decode_attribute(a.raw, a.quote);
    }

    // The value as it is to be written: where it is written with a reference (a byte escaped)
    // and holds bytes gumbo's input stream changes (controls, 8-bit ones), those as gumbo
    // reads them once written (U+FFFD), so that a second reading, which decodes the
    // references with gumbo, finds the same value.
    static std::optional<std::string> written(std::optional<std::string> v)
    {
        if (!v) return v;
        // A CR (a decoded &#13;) is an LF once read again (13.2.3.5).
        for (std::size_t cr = v->find('\r'); cr != std::string::npos; cr = v->find('\r', cr)) {
            if (cr + 1 < v->size() && (*v)[cr + 1] == '\n') v->erase(cr, 1);
            else (*v)[cr] = '\n';
        }
        if (v->find_first_of("&<>\"") == std::string::npos) return v;
        const bool changes = std::any_of(v->begin(), v->end(), [](char c) {
            const auto u = static_cast<unsigned char>(c);
            return u >= 0x7F || (u < 0x20 && c != '\t' && c != '\n' && c != '\f');
        });
        if (!changes) return v;
        std::string escaped;
        append_escaped(escaped, *v, true);
        return decode_attribute(escaped, '"');
    }
    static std::optional<std::string> written_value(const Attr &a) { return written(value(a)); }

    const Attr *attribute(std::string_view name) const
    {
        for (const Attr &a : attrs_)
            if (a.name == name) return &a; // the first of a name is the one
        return nullptr;
    }

    // <link rel=stylesheet> to a file of the archive: kept. Any other <link> (a prefetch, a
    // DNS prefetch, an import, a remote stylesheet) is not.
    bool local_stylesheet()
    {
        const Attr *rel = attribute("rel"), *href = attribute("href");
        if (!rel || !href) return false;
        const auto r = value(*rel), h = value(*href);
        if (!r || !h || !iequal(*r, "stylesheet")) return false;
        if (is_script_url(*h) || url_scheme(*h) == "data") return false; // its href would go (dropped())
        if (is_remote_url(*h) && !opts_.allow_remote_images) {
            ++n_of_.remote;
            return false;
        }
        return true;
    }

    static bool counted(std::size_t &n)
    {
        ++n;
        return true;
    }

    // Whether the attribute is left out (and counted).
    bool dropped(const std::string &name, std::string_view value, const std::string &tag)
    {
        if (name.size() >= 2 && name[0] == 'o' && name[1] == 'n') return counted(n_of_.handlers);
        if (is_script_url(value)) return counted(n_of_.urls);
        if (name == "srcdoc") return counted(n_of_.frames);
        if (name == "action" || name == "formaction") return counted(n_of_.forms);
        // A browser fetches a file: image or stylesheet named with crossorigin in CORS mode
        // from a file: page, and checks integrity only on a CORS response: both refuse the
        // archive's own files. Neither matters to a page that loads nothing remote.
        if (name == "crossorigin" || name == "integrity") return true;
        if (name == "ping") return counted(n_of_.remote);
        if (url_scheme(value) == "data" && (one_of(name, kNavigating) || (name == "src" && tag != "img" && tag != "source")))
            return counted(n_of_.urls);
        if (opts_.allow_remote_images) return false;
        // An href loads in SVG (<use>, <image>, <feImage>...); in HTML only <a> and <area>
        // have one, which navigates (<link>'s is looked at apart).
        const bool loads = one_of(name, kLoading) || ((name == "href" || name == "xlink:href") && tag != "a" && tag != "area");
        if (loads && (name == "srcset" ? srcset_remote(value) : is_remote_url(value))) return counted(n_of_.remote);
        return false;
    }

    // A <body>'s presentational colours as the CSS a <div> needs to show them (body_colours.hh);
    // a remote or script background, or style, left out as the attribute would be (dropped).
    std::string body_style()
    {
        auto read = [&](const char *name) -> std::optional<std::string> {
            const Attr *a = attribute(name);
            auto v = a ? written_value(*a) : std::nullopt;
            if (v && dropped(name, *v, "body")) return std::nullopt;
            return v;
        };
        return body_css(read("bgcolor"), read("text"), read("background"), read("style"));
    }

    void attributes(const std::string &tag)
    {
        // An image not loaded shows its URL in place of its alt text.
        std::string remote_image;
        bool has_title = false;
        if (tag == "img" && !opts_.allow_remote_images)
            if (const Attr *src = attribute("src"))
                if (auto v = written_value(*src); v && is_remote_url(*v) && !is_script_url(*v)) remote_image = *v;
        const std::string body_css = tag == "body" ? body_style() : std::string();
        for (const Attr &a : attrs_) {
            if (!plain_name(a.name) || attribute(a.name) != &a) continue; // a later one of a name is dropped
            if (tag == "body" && (a.name == "bgcolor" || a.name == "background" || a.name == "text" || a.name == "style"))
                continue; // in body_css
            const auto v = written_value(a);
            if (!v || dropped(a.name, *v, tag)) continue;
            if (a.name == "alt" && !remote_image.empty()) continue;
            has_title = has_title || a.name == "title";
            out += ' ';
            out += a.name;
            out += "=\"";
            append_escaped(out, *v, true);
            out += '"';
        }
        if (!body_css.empty()) {
            out += " style=\"";
            append_escaped(out, body_css, true);
            out += '"';
        }
        if (!remote_image.empty()) {
            const auto alt = written("[remote image not loaded: " + remote_image + "]");
            out += " alt=\"";
            append_escaped(out, alt ? *alt : std::string("[remote image not loaded]"), true);
            out += '"';
            if (!has_title) out += " title=\"remote image not loaded\"";
        }
    }

    std::string_view h_;
    std::size_t n_{0};
    std::size_t i_{0};
    const SanitizeOptions &opts_;
    SanitizeCounts &n_of_;
    std::vector<Attr> attrs_;   // the current tag's
    bool self_closing_{false};  // the current tag's
    std::string raw_;           // the element whose text comes next, read in a text state
    RawOut raw_out_{RawOut::Drop};
    std::string skip_;          // the element being taken out with its content ("" for none)
    std::size_t skip_depth_{0}; // its open elements of its name
    bool skip_foreign_{false};  // it is SVG or MathML: no text states in it
    std::vector<std::string> svg_; // the open SVG elements (foreign content while not empty)
    bool body_div_{false};      // a <body> was written as a <div>
    bool body_seen_{false};
    std::size_t forms_open_{0}; // <form>s written as <div>s and not closed
};

} // namespace

std::string SanitizeCounts::describe() const
{
    std::string out;
    auto add = [&](const char *name, std::size_t n) {
        if (!n) return;
        if (!out.empty()) out += ' ';
        out += name;
        out += '=';
        out += std::to_string(n);
    };
    add("scripts", scripts);
    add("handlers", handlers);
    add("urls", urls);
    add("refresh", refresh);
    add("base", base);
    add("frames", frames);
    add("forms", forms);
    add("remote", remote);
    return out;
}

std::string url_scheme(std::string_view url)
{
    // WHATWG URL: strip leading and trailing C0 control or space; remove ASCII tab or newline.
    std::size_t b = 0, e = url.size();
    while (b < e && static_cast<unsigned char>(url[b]) <= 0x20) ++b;
    while (e > b && static_cast<unsigned char>(url[e - 1]) <= 0x20) --e;
    std::string scheme;
    for (std::size_t k = b; k < e; ++k) {
        const char c = url[k];
        if (c == '\t' || c == '\n' || c == '\r') continue;
        if (c == ':') return scheme;
        const bool first = scheme.empty();
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')))
            scheme += lower(c);
        else
            return {};
        if (scheme.size() > 32) return {};
    }
    return {};
}

bool is_script_url(std::string_view url)
{
    const std::string s = url_scheme(url);
    return s == "javascript" || s == "vbscript" || s == "livescript";
}

bool is_remote_url(std::string_view url)
{
    const std::string s = url_scheme(url);
    if (!s.empty()) return s != "data" && s != "cid" && s != "mid";
    // A scheme-relative URL ("//host/x") leaves too.
    std::size_t b = 0;
    while (b < url.size() && static_cast<unsigned char>(url[b]) <= 0x20) ++b;
    std::string slashes;
    for (std::size_t k = b; k < url.size() && slashes.size() < 2; ++k) {
        if (url[k] == '\t' || url[k] == '\n' || url[k] == '\r') continue;
        if (url[k] != '/' && url[k] != '\\') break;
        slashes += url[k];
    }
    return slashes.size() == 2;
}

std::string escape_text(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    append_escaped(out, text, true);
    return out;
}


Result<Sanitized> sanitize(std::string_view utf8, const SanitizeOptions &opts)
{
    Sanitized s;
    try {
        Sanitizer z(utf8, opts, s.removed);
        z.out.reserve(utf8.size() + utf8.size() / 8);
        z.run();
        s.html = std::move(z.out);
    } catch (const std::bad_alloc &) {
        return Error{Code::TempFail, "out of memory sanitising HTML"};
    }
    return s;
}

} // namespace mimeuri::html
