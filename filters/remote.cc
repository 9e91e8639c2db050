// The remote pass (see remote.hh): each HTML and CSS part's network fetches found
// (remote_sites.cc, remote_css.cc), reported in the "remote" list, and with --remote=block
// or proxy made inert or sent through camo, by splices.
#include "remote.hh"

#include "charsets.hh"
#include "gobj.hh"
#include "html_sanitize.hh"
#include "remote_report.hh"
#include "text.hh"
#include "transfer.hh"

#include <gmime/gmime.h>
#include <nettle/hmac.h>

#include <algorithm>
#include <set>

namespace mimeuri {

namespace remote {

bool network_url(std::string_view url)
{
    if (!html::is_remote_url(url)) return false;
    const std::string s = html::url_scheme(url);
    static const char *const local[] = {"javascript", "vbscript", "livescript", "about", "blob", "mailto", "tel",
                                        "sms",        "callto",   "data",       "cid",  "mid"};
    for (const char *l : local)
        if (s == l) return false;
    return true;
}

std::string host_of(std::string_view url)
{
    const std::string u = html::url_as_parsed(url);
    std::size_t i = 0;
    const std::string scheme = html::url_scheme(u);
    if (!scheme.empty()) i = u.find(':') + 1;
    std::size_t slashes = 0;
    while (i < u.size() && (u[i] == '/' || u[i] == '\\')) ++i, ++slashes;
    if (slashes < 2 && !(slashes == 0 && (scheme == "http" || scheme == "https"))) return "";
    std::size_t e = u.find_first_of("/\\?#", i);
    std::string auth = u.substr(i, e == std::string::npos ? std::string::npos : e - i);
    if (auto at = auth.rfind('@'); at != std::string::npos) auth.erase(0, at + 1);
    if (!auth.empty() && auth.front() == '[') { // an IPv6 literal keeps its colons
        if (auto close = auth.find(']'); close != std::string::npos) auth.erase(close + 1);
    } else if (auto colon = auth.find(':'); colon != std::string::npos) {
        auth.erase(colon);
    }
    while (!auth.empty() && auth.back() == '.') auth.pop_back();
    for (char &c : auth) c = static_cast<char>(g_ascii_tolower(c));
    return auth;
}

bool host_in(std::string_view host, const std::vector<std::string> &hosts)
{
    for (const std::string &h : hosts) {
        if (host == h) return true;
        if (host.size() > h.size() && host.compare(host.size() - h.size(), h.size(), h) == 0 &&
            host[host.size() - h.size() - 1] == '.')
            return true;
    }
    return false;
}

std::string camo_url(std::string_view base, std::string_view key, std::string_view url)
{
    struct hmac_sha1_ctx ctx;
    hmac_sha1_set_key(&ctx, key.size(), reinterpret_cast<const uint8_t *>(key.data()));
    hmac_sha1_update(&ctx, url.size(), reinterpret_cast<const uint8_t *>(url.data()));
    uint8_t digest[SHA1_DIGEST_SIZE];
    hmac_sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
    std::string out(base);
    while (!out.empty() && out.back() == '/') out.pop_back();
    out += '/';
    out += text::lower_hex({reinterpret_cast<const char *>(digest), sizeof digest});
    out += '/';
    out += text::lower_hex(url);
    return out;
}

namespace {

struct Cut {
    std::size_t begin, end;
    std::string text;
};

// An attribute value's text inside `quote`: '&' and that quote escaped, line ends too.
std::string escape_value(std::string_view v, char quote)
{
    std::string out;
    for (char c : v) {
        if (c == '&') out += "&amp;";
        else if (c == quote) out += quote == '"' ? "&quot;" : "&#39;";
        else if (c == '\n') out += "&#10;";
        else if (c == '\r') out += "&#13;";
        else out += c;
    }
    return out;
}

// Text edits (begin, end, text) on s, in order, none overlapping (a later one that overlaps
// an earlier is left: the earlier covers it).
std::string edited(std::string_view s, std::vector<Cut> cuts, char escape_quote, bool escaped)
{
    std::sort(cuts.begin(), cuts.end(), [](const Cut &a, const Cut &b) { return a.begin < b.begin; });
    std::string out;
    std::size_t at = 0;
    for (const Cut &c : cuts) {
        if (c.begin < at) continue;
        out.append(s.substr(at, c.begin - at));
        out += escaped ? escape_value(c.text, escape_quote) : c.text;
        at = c.end;
    }
    out.append(s.substr(at));
    return out;
}

// Text as SVG <style> text: '&' and '<' escaped (the element's text is read as markup).
std::string escape_text(std::string_view v)
{
    std::string out;
    for (char c : v) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else out += c;
    }
    return out;
}

// The splices of one holder's cuts (in its decoded text).
void holder_splices(std::string_view text, const Holder &h, const std::vector<Cut> &cuts, std::vector<Cut> &out)
{
    if (!h.attribute) {
        if (!h.escaped && h.pieces.size() == 1) {
            for (const Cut &c : cuts) out.push_back({h.raw_begin + c.begin, h.raw_begin + c.end, c.text});
            return;
        }
        // The whole sheet in the first piece, the others emptied: SVG text escaped (it is
        // read as markup), HTML's RAWTEXT as it is.
        const std::string css = edited(h.decoded, cuts, 0, false);
        for (std::size_t k = 0; k < h.pieces.size(); ++k)
            out.push_back({h.pieces[k].first, h.pieces[k].second, k ? std::string() : h.escaped ? escape_text(css) : css});
        return;
    }
    std::string_view raw = text.substr(h.raw_begin, h.raw_end - h.raw_begin);
    char q = 0;
    if (raw.size() >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw.back() == raw[0]) {
        q = raw[0];
        raw = raw.substr(1, raw.size() - 2);
    }
    std::string value;
    if (q && raw == h.decoded) {
        value = edited(raw, cuts, q, true); // the value's own bytes kept, the new text escaped
    } else {
        q = '"';
        value = escape_value(edited(h.decoded, cuts, 0, false), q);
    }
    out.push_back({h.raw_begin, h.raw_end, std::string(1, q) + value + q});
}

} // namespace

std::string apply_actions(std::string_view text, const Sites &s, const std::vector<Action> &actions)
{
    std::vector<std::vector<Cut>> per_holder(s.holders.size());
    std::vector<bool> emptied(s.holders.size());
    std::vector<Cut> splices;
    std::vector<bool> dropped(s.drops.size());
    for (std::size_t k = 0; k < s.sites.size(); ++k) {
        const Site &site = s.sites[k];
        const Action &a = actions[k];
        if (a.kind == Action::Kind::Keep) continue;
        if (a.kind == Action::Kind::Drop && site.element) {
            dropped[site.element - 1] = true;
            continue;
        }
        if (a.kind == Action::Kind::Proxy) {
            per_holder[site.holder].push_back({site.url_begin, site.url_end, a.url});
        } else if (site.whole || !site.css) {
            emptied[site.holder] = true;
        } else {
            per_holder[site.holder].push_back({site.begin, site.end, "none"});
        }
    }
    for (std::size_t d = 0; d < s.drops.size(); ++d)
        if (dropped[d]) splices.push_back({s.drops[d].first, s.drops[d].second, ""});
    for (std::size_t h = 0; h < s.holders.size(); ++h) {
        if (emptied[h]) per_holder[h] = {{0, s.holders[h].decoded.size(), ""}};
        if (!per_holder[h].empty()) holder_splices(text, s.holders[h], per_holder[h], splices);
    }
    // In order; a splice inside a dropped start tag goes with it.
    std::sort(splices.begin(), splices.end(), [](const Cut &a, const Cut &b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const Cut &c : splices) {
        if (c.begin < at) continue;
        out.append(text.substr(at, c.begin - at));
        out += c.text;
        at = c.end;
    }
    out.append(text.substr(at));
    return out;
}

} // namespace remote

namespace {

using remote::Action;
using remote::Site;

bool is_type(const Node &n, const char *type, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(n.object);
    return ct && g_mime_content_type_is_type(ct, type, subtype);
}

RemoteEntry::Kind entry_kind(Site::Kind k)
{
    switch (k) {
    case Site::Kind::Image: return RemoteEntry::Kind::Image;
    case Site::Kind::Style: return RemoteEntry::Kind::Style;
    case Site::Kind::Other: break;
    }
    return RemoteEntry::Kind::Other;
}

class PartRun {
public:
    PartRun(MessageContext &ctx, const RemoteOptions &o, const remote::RecipientForms &forms, const Node &n)
        : ctx_(ctx), o_(o), forms_(forms), n_(n)
    {
    }
    Status run();

private:
    bool on_list(const Site &s) const
    {
        if (remote::host_in(s.host, o_.tracker_hosts)) return true;
        for (const std::string &u : o_.tracker_urls)
            if (s.url.compare(0, u.size(), u) == 0) return true;
        return false;
    }
    Action action_for(Site &s) const;
    void report(const Site &s, RemoteEntry::Action action, const std::string &reason);

    MessageContext &ctx_;
    const RemoteOptions &o_;
    const remote::RecipientForms &forms_;
    const Node &n_;
};

Action PartRun::action_for(Site &s) const
{
    using M = RemoteOptions::Mode;
    // Trackers are named in every mode: --remote=check says which block and proxy would remove.
    if (s.tracker.empty() && on_list(s)) s.tracker = "list";
    if (s.tracker.empty() && remote::names_recipient(s.url, forms_)) s.tracker = "recipient";
    if (o_.mode == M::Check || o_.mode == M::Keep) return {};
    if (!s.tracker.empty()) {
        if (!s.element) s.element = s.img; // an <img> tracker goes whole, whatever found it
        return {s.element ? Action::Kind::Drop : Action::Kind::Block, {}};
    }
    if (remote::host_in(s.host, o_.keep_hosts)) return {};
    if (o_.mode == M::Proxy && s.kind == Site::Kind::Image) {
        std::string url = s.url;
        if (url.rfind("//", 0) == 0) url = "https:" + url; // protocol-relative: what a TLS reader asks
        const std::string scheme = html::url_scheme(url);
        if ((scheme == "http" || scheme == "https") && url.find("://") == scheme.size())
            return {Action::Kind::Proxy, remote::camo_url(o_.proxy_base, o_.key, url)};
    }
    return {s.element ? Action::Kind::Drop : Action::Kind::Block, {}};
}

void PartRun::report(const Site &s, RemoteEntry::Action action, const std::string &reason)
{
    RemoteEntry e;
    e.part = n_.section;
    e.attr = s.where;
    e.url = s.url;
    e.host = s.host;
    e.kind = entry_kind(s.kind);
    if (!s.tracker.empty()) e.tracker = s.tracker;
    e.action = action;
    e.reason = reason;
    ctx_.report().section<RemoteReport>().entries.push_back(std::move(e));
}

Status PartRun::run()
{
    const bool css = is_type(n_, "text", "css");
    auto content = ctx_.decoded_content(n_, html::kDefaultHtmlMax);
    if (!content) {
        ctx_.report().add_error(n_.section, ErrorCode::HtmlLimit, content.error().message + "; remote content not looked at");
        return ok();
    }
    std::string_view text = content->view();
    std::string converted;
    const char *cs = g_mime_object_get_content_type_parameter(n_.object, "charset");
    bool rewritable = true;
    if (css) {
        rewritable = ascii_compatibility(cs ? cs : "") != AsciiCompat::No;
    } else {
        const HtmlEncoding enc = sniff_html_encoding(cs ? cs : "", text.substr(0, 1024));
        rewritable = enc.ascii_compatible;
        if (!rewritable && !enc.convert_from.empty()) {
            gsize written = 0;
            GCharPtr conv(g_convert(text.data(), static_cast<gssize>(text.size()), "UTF-8", enc.convert_from.c_str(),
                                    nullptr, &written, nullptr));
            if (conv) converted.assign(conv.get(), written);
            text = converted;
        }
    }
    remote::Sites sites;
    if (css) {
        sites = remote::css_sites(text);
    } else {
        html::ParseLimits limits;
        limits.out_of_time = [this] { return ctx_.out_of_time(); };
        auto r = remote::find_sites(text, limits);
        if (!r) return r.error();
        if (r->stop != html::Stop::None) {
            ctx_.report().add_error(n_.section, html::stop_kind(r->stop), r->stop_message);
            return Error::limit(r->stop_message);
        }
        sites = std::move(*r);
    }
    std::vector<Action> actions;
    bool edits = false;
    for (Site &s : sites.sites) {
        actions.push_back(action_for(s));
        edits = edits || actions.back().kind != Action::Kind::Keep;
    }
    // An <img> that a tracker removes takes its other URLs with it: each says removed, as
    // the reader sees it (and no splice is left inside a dropped tag).
    std::set<std::size_t> gone;
    for (std::size_t k = 0; k < sites.sites.size(); ++k)
        if (actions[k].kind == Action::Kind::Drop && sites.sites[k].img && sites.sites[k].element == sites.sites[k].img)
            gone.insert(sites.sites[k].img);
    for (std::size_t k = 0; k < sites.sites.size(); ++k)
        if (gone.count(sites.sites[k].img) && actions[k].kind != Action::Kind::Drop) {
            sites.sites[k].element = sites.sites[k].img;
            actions[k] = {Action::Kind::Drop, {}};
        }
    // Why nothing can be changed, when something was to be.
    std::string leave;
    std::optional<std::string> kept;
    if (edits) {
        auto span = ctx_.content_span(n_);
        if (!span) leave = "structure";
        else
            for (const Edit &ed : ctx_.edits())
                if (ed.begin < span->second && span->first < ed.end) leave = "edited";
        if (leave.empty() && !rewritable) leave = "charset";
        if (leave.empty() && !transfer::can_write_back(g_mime_part_get_content_encoding(GMIME_PART(n_.object))))
            leave = "encoding";
        if (leave.empty()) kept = ctx_.kept(n_);
    }
    auto word = [](const Action &a) {
        using R = RemoteEntry::Action;
        switch (a.kind) {
        case Action::Kind::Keep: return R::None;
        case Action::Kind::Block: return R::Blocked;
        case Action::Kind::Proxy: return R::Proxied;
        case Action::Kind::Drop: return R::Removed;
        }
        return R::None;
    };
    for (std::size_t k = 0; k < sites.sites.size(); ++k) {
        const bool acts = actions[k].kind != Action::Kind::Keep;
        const bool exempt = !acts && (o_.mode == RemoteOptions::Mode::Block || o_.mode == RemoteOptions::Mode::Proxy);
        if (acts && kept) report(sites.sites[k], RemoteEntry::Action::Kept, *kept);
        else if (acts && !leave.empty()) report(sites.sites[k], RemoteEntry::Action::None, leave);
        else report(sites.sites[k], word(actions[k]), exempt ? "keep-host" : "");
    }
    if (!edits || kept || !leave.empty()) return ok();
    const std::string out = remote::apply_actions(text, sites, actions);
    if (out == text) return ok();
    return transfer::write_back(ctx_, n_, out);
}

} // namespace

InertHint RemotePass::inert_hint() const
{
    InertHint h;
    h.edited_types = {"text/html", "text/css"};
    h.reports_only = opts_.mode == RemoteOptions::Mode::Check;
    return h;
}

Status RemotePass::apply(MessageContext &ctx)
{
    if (opts_.mode == RemoteOptions::Mode::Keep || !ctx.message()) return ok();
    if (!loaded_) return loaded_;
    const auto &nodes = ctx.nodes();
    std::optional<remote::RecipientForms> forms; // made at the first HTML or CSS part
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (n.kind != Node::Kind::Leaf || !GMIME_IS_PART(n.object)) continue;
        if (!is_type(n, "text", "html") && !is_type(n, "text", "css")) continue;
        if (Status t = ctx.check_time(); !t) return t;
        if (!forms) {
            std::vector<std::string> recipients = opts_.recipients;
            for (std::string &a : remote::header_recipients(ctx.message())) recipients.push_back(std::move(a));
            forms = remote::recipient_forms(recipients);
        }
        PartRun run(ctx, opts_, *forms, n);
        if (Status s = run.run(); !s) return s;
    }
    return ok();
}

} // namespace mimeuri
