// remote_css: the places CSS makes a browser fetch (url() tokens, url() functions with a
// string, the strings of image-set() and of @import), read by the CSS Syntax Level 3
// tokenizer (section 4.3), as a browser reads them: escapes undone in every name
// ("\000075rl(" and "u\rl(" are url(), "@\69mport" is @import), comments anywhere between
// tokens, an unclosed url( ended by the end of the text (a parse error that still fetches),
// a "bad url" (a quote or a parenthesis inside) fetching nothing. Never a pattern: a
// pattern is what Roundcube's blocker was bypassed around, one CVE at a time.
//
// Cost: linear; every code point is looked at a bounded number of times, and the open
// functions are a stack of at most the text's parentheses.
#include "remote.hh"

#include "html_detail.hh"

#include <glib.h>

#include <cstring>

namespace mimeuri::remote {

namespace {

using html::detail::hexval;

bool newline(char c) { return c == '\n' || c == '\r' || c == '\f'; }
bool white(char c) { return c == ' ' || c == '\t' || newline(c); }
// 4.2: a name-start code point (non-ASCII included: every byte of a UTF-8 sequence is >= 0x80;
// a NUL is U+FFFD after preprocessing, 3.3).
bool name_start(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || u >= 0x80 || u == 0;
}
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9') || c == '-'; }
bool non_printable(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return (u <= 8 && u != 0) || u == 0x0B || (u >= 0x0E && u <= 0x1F) || u == 0x7F;
}

// 4.3.7: zero, a surrogate or past U+10FFFF is U+FFFD.
void append_code_point(std::string &out, unsigned long cp)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    char buf[6];
    out.append(buf, static_cast<std::size_t>(g_unichar_to_utf8(static_cast<gunichar>(cp), buf)));
}

bool iequal(std::string_view a, const char *b)
{
    return a.size() == std::strlen(b) && g_ascii_strncasecmp(a.data(), b, a.size()) == 0;
}

// A function or block open: where it starts, and whether it is an image-set() (whose strings
// are URLs).
struct Open {
    char close;          // ')', ']' or '}'
    std::size_t begin;   // of its name (a function) or its opening bracket
    bool image_set{false};
    std::size_t fetches; // the fetches found before it opened
    // A url( function with a string: whether it is one, and 1 + the fetch of its first good
    // string (what a block cuts to its ')'); each later string is cut alone. Kept with the
    // function, so that a function nested in it and closed leaves it a url( still (fuzz_remote_css:
    // `url('<CR>url("c:")"o:` blocked made the "o: a URL the first reading had missed).
    bool url{false};
    std::size_t url_fetch{0};
};

class Tokenizer {
public:
    explicit Tokenizer(std::string_view t) : t_(t), n_(t.size()) {}

    std::vector<CssFetch> run()
    {
        while (i_ < n_) token();
        // The end of the text closes whatever is open (5.4.8: EOF ends a function).
        while (!open_.empty()) close_top(n_);
        return std::move(out_);
    }

private:
    char at(std::size_t k) const { return k < n_ ? t_[k] : '\0'; }
    bool has(std::size_t k) const { return k < n_; }
    // 4.3.8: a backslash at k not followed by a newline (nor the end).
    bool valid_escape(std::size_t k) const { return has(k) && t_[k] == '\\' && has(k + 1) && !newline(t_[k + 1]); }
    // 4.3.9
    bool starts_ident(std::size_t k) const
    {
        if (!has(k)) return false;
        if (t_[k] == '-') return (has(k + 1) && (name_start(t_[k + 1]) || t_[k + 1] == '-')) || valid_escape(k + 1);
        if (name_start(t_[k])) return true;
        return valid_escape(k);
    }
    // 4.3.10
    bool starts_number(std::size_t k) const
    {
        auto digit = [&](std::size_t j) { return has(j) && g_ascii_isdigit(t_[j]); };
        if (!has(k)) return false;
        if (t_[k] == '+' || t_[k] == '-') return digit(k + 1) || (at(k + 1) == '.' && digit(k + 2));
        if (t_[k] == '.') return digit(k + 1);
        return digit(k);
    }
    // 4.3.7, after the backslash at k - 1: the new index.
    std::size_t escape(std::size_t k, std::string &out) const
    {
        if (!has(k)) {
            append_code_point(out, 0xFFFD);
            return k;
        }
        if (hexval(t_[k]) >= 0) {
            unsigned long cp = 0;
            for (int d = 0; d < 6 && has(k) && hexval(t_[k]) >= 0; ++d, ++k) cp = cp * 16 + static_cast<unsigned long>(hexval(t_[k]));
            if (has(k) && white(t_[k])) k += (t_[k] == '\r' && at(k + 1) == '\n') ? 2 : 1;
            append_code_point(out, cp);
            return k;
        }
        out += t_[k] == '\0' ? std::string("\xEF\xBF\xBD") : std::string(1, t_[k]);
        return k + 1;
    }
    // 4.3.11
    std::string name()
    {
        std::string out;
        while (has(i_)) {
            if (name_char(t_[i_])) out += t_[i_++];
            else if (valid_escape(i_)) i_ = escape(i_ + 1, out);
            else break;
        }
        return out;
    }
    void skip_white()
    {
        while (has(i_) && white(t_[i_])) ++i_;
    }

    void fetch(std::size_t b, std::size_t e, std::size_t url_b, std::size_t url_e, std::string url, const char *kind)
    {
        CssFetch f{b, e, url_b, url_e, std::move(url), kind};
        if (import_pending_) f.kind = "import";
        import_pending_ = false;
        out_.push_back(std::move(f));
    }

    // 4.3.5: a string token from the quote at i_; returns its value (bad: no fetch).
    bool string(std::string &value)
    {
        const char q = t_[i_++];
        while (has(i_)) {
            const char c = t_[i_];
            if (c == q) {
                ++i_;
                return true;
            }
            if (newline(c)) return false; // a bad string: the newline is the next token
            if (c == '\\') {
                if (!has(i_ + 1)) {
                    ++i_;
                    continue;
                }
                if (newline(t_[i_ + 1])) {
                    i_ += (t_[i_ + 1] == '\r' && at(i_ + 2) == '\n') ? 3 : 2;
                    continue;
                }
                i_ = escape(i_ + 1, value);
                continue;
            }
            value += c;
            ++i_;
        }
        return true; // EOF ends it (a parse error, still a string)
    }

    // 4.3.6: a url token, after "url(" and its white space; b: where the token began.
    void url_token(std::size_t b)
    {
        const std::size_t ub = i_;
        std::string value;
        std::size_t ue = i_;
        while (true) {
            if (!has(i_)) break; // EOF: still a url token
            const char c = t_[i_];
            if (c == ')') {
                ++i_;
                break;
            }
            if (white(c)) {
                skip_white();
                if (!has(i_) || t_[i_] == ')') {
                    if (has(i_)) ++i_;
                    break;
                }
                return bad_url();
            }
            if (c == '"' || c == '\'' || c == '(' || non_printable(c)) return bad_url();
            if (c == '\\') {
                if (!valid_escape(i_)) return bad_url();
                i_ = escape(i_ + 1, value);
                ue = i_;
                continue;
            }
            value += c;
            ue = ++i_;
        }
        fetch(b, i_, ub, ue, std::move(value), "url");
    }
    // 4.3.14
    void bad_url()
    {
        import_pending_ = false;
        while (has(i_)) {
            if (t_[i_] == ')') {
                ++i_;
                return;
            }
            if (valid_escape(i_)) {
                std::string ignored;
                i_ = escape(i_ + 1, ignored);
                continue;
            }
            ++i_;
        }
    }

    // 4.3.4: an ident-like token from i_ (b: its start).
    void ident_like(std::size_t b)
    {
        const std::string n = name();
        if (iequal(n, "url") && at(i_) == '(') {
            ++i_;
            std::size_t k = i_;
            while (has(k) && white(t_[k])) ++k;
            if (has(k) && (t_[k] == '"' || t_[k] == '\'')) {
                i_ = k; // a function token "url(" whose string is the URL
                open_.push_back({')', b, false, out_.size(), true});
                return;
            }
            i_ = k;
            return url_token(b);
        }
        if (at(i_) == '(') {
            ++i_;
            const bool set = iequal(n, "image-set") || iequal(n, "-webkit-image-set") || iequal(n, "image") ||
                             iequal(n, "src") || iequal(n, "cross-fade") || iequal(n, "-webkit-cross-fade");
            open_.push_back({')', b, set, out_.size()});
            return;
        }
        import_pending_ = false; // "@import screen" names nothing
    }

    void close_top(std::size_t end)
    {
        const Open o = open_.back();
        open_.pop_back();
        if (o.url_fetch) out_[o.url_fetch - 1].end = end; // url("x" ...): to its ')'
        // Every fetch inside an image-set() is cut with the whole function.
        if (o.image_set)
            for (std::size_t k = o.fetches; k < out_.size(); ++k) {
                out_[k].begin = std::min(out_[k].begin, o.begin);
                out_[k].end = std::max(out_[k].end, end);
            }
    }

    void string_token()
    {
        const std::size_t b = i_;
        std::string value;
        const bool good = string(value);
        const bool in_url = !open_.empty() && open_.back().url;
        const bool in_set = !open_.empty() && open_.back().image_set;
        if (good && (in_url || in_set || import_pending_)) {
            // url("x"): the whole function is what a block replaces (its ')' comes later).
            const bool first = in_url && !open_.back().url_fetch;
            const std::size_t fb = first ? open_.back().begin : b;
            fetch(fb, i_, b + 1, i_ > b + 1 && t_[i_ - 1] == t_[b] ? i_ - 1 : i_, std::move(value),
                  in_url ? "url" : in_set ? "image-set" : "import");
            if (first) open_.back().url_fetch = out_.size();
        } else {
            import_pending_ = false;
        }
    }

    void token()
    {
        const std::size_t b = i_;
        const char c = t_[i_];
        if (c == '/' && at(i_ + 1) == '*') { // 4.3.2: comments are not tokens
            const std::size_t close = t_.find("*/", i_ + 2);
            i_ = close == std::string_view::npos ? n_ : close + 2;
            return;
        }
        if (white(c)) return skip_white();
        if (c == '"' || c == '\'') return string_token();
        if (c == '@' && starts_ident(i_ + 1)) {
            ++i_;
            import_pending_ = iequal(name(), "import");
            return;
        }
        if (starts_number(i_)) { // 4.3.3: a number, then a unit that is a name ("10url(" is no url)
            if (c == '+' || c == '-') ++i_;
            while (has(i_) && (g_ascii_isdigit(t_[i_]) || t_[i_] == '.')) ++i_;
            if ((at(i_) == 'e' || at(i_) == 'E') &&
                (g_ascii_isdigit(at(i_ + 1)) || ((at(i_ + 1) == '+' || at(i_ + 1) == '-') && g_ascii_isdigit(at(i_ + 2))))) {
                i_ += 2;
                while (has(i_) && g_ascii_isdigit(t_[i_])) ++i_;
            }
            if (starts_ident(i_)) name();
            import_pending_ = false;
            return;
        }
        if (c == '#' && has(i_ + 1) && (name_char(t_[i_ + 1]) || valid_escape(i_ + 1))) {
            ++i_;
            name();
            return;
        }
        if (starts_ident(i_)) return ident_like(b);
        if (c == '<' && t_.compare(i_, 4, "<!--") == 0) {
            i_ += 4;
            return;
        }
        if (c == '-' && t_.compare(i_, 3, "-->") == 0) {
            i_ += 3;
            return;
        }
        ++i_;
        if (c == '(' || c == '[' || c == '{') {
            open_.push_back({c == '(' ? ')' : c == '[' ? ']' : '}', b, false, out_.size()});
            return;
        }
        if ((c == ')' || c == ']' || c == '}') && !open_.empty() && open_.back().close == c) {
            close_top(i_);
            return;
        }
        if (c == ';' || c == '{' || c == '}') import_pending_ = false;
    }

    std::string_view t_;
    std::size_t n_;
    std::size_t i_{0};
    std::vector<Open> open_;
    std::vector<CssFetch> out_;
    bool import_pending_{false};  // after @import, before its first component
};

} // namespace

std::vector<CssFetch> css_fetches(std::string_view css)
{
    Tokenizer t(css);
    return t.run();
}

} // namespace mimeuri::remote
