// The remote pass (--remote, issue 52): every place the HTML and CSS of a message make a
// reader fetch from the network, found, reported, made inert or sent through an image
// proxy. A remote image tells its sender when, where and how often the message was opened.
//
//   check   each fetch reported (the "remote" list of the report): where (element@attribute,
//           "style", "css" for a text/css part), the URL, its host, its kind (image, style,
//           other) and whether it looks like a tracker (a 1x1 or hidden image, or a host or
//           URL on --remote-trackers=FILE);
//   block   each fetch made inert where the reader shows it: an attribute's URL emptied (an
//           image keeps its alt, width and height: its box), a CSS url() made `none`, a
//           remote <link> or <meta http-equiv=refresh> dropped; --remote-keep-hosts exempts
//           hosts; a tracker image is removed;
//   proxy   images rewritten to camo's URLs (--remote-proxy=BASE, HMAC-SHA1 with the key of
//           --remote-key=FILE: BASE/DIGEST/HEXURL), every other fetch blocked as above.
// Only text/html and text/css parts change; each edit is a splice, every other byte kept;
// signed content is kept unless --signed=rewrite.
#pragma once

#include "html_refs.hh"
#include "pass_options.hh"

#include <gmime/gmime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

struct RemoteOptions {
    enum class Mode { Keep, Check, Block, Proxy } mode{Mode::Keep};
    std::vector<std::string> keep_hosts; // lower case; a host and its subdomains
    std::string trackers_file;           // --remote-trackers: its path, and what it lists
    std::vector<std::string> tracker_hosts, tracker_urls;
    std::string proxy_base;              // --remote-proxy, without a trailing '/'
    std::string key_file;                // --remote-key: its path, and the key (its first line)
    std::string key;
    // The message's recipients for the per-recipient tracker rule (remote_recipient.cc):
    // --remote-recipient's addresses, and, in the service, the envelope's RCPT TOs
    // (EnvelopeRecipients, set on the worker's copy of the settings); the pass adds the
    // message's To, Cc, Delivered-To and X-Original-To.
    std::vector<std::string> recipients;
};

// Reads the files of --remote-key and --remote-trackers into o (key, tracker_hosts, tracker_urls).
Status load_remote_files(RemoteOptions &o);

class RemotePass final : public Pass {
public:
    explicit RemotePass(RemoteOptions opts) : opts_(std::move(opts)) { loaded_ = load_remote_files(opts_); }
    std::string_view name() const override { return "remote"; }
    Status apply(MessageContext &ctx) override;
    InertHint inert_hint() const override;

private:
    RemoteOptions opts_;
    Status loaded_ = ok();
};

PassRow remote_row();

namespace remote {

// A fetch CSS makes (remote_css.cc), at offsets in the text it was read from.
struct CssFetch {
    std::size_t begin, end;         // what a block replaces: the url token, url("...") to its ')',
                                    // the whole image-set(), @import's string or url
    std::size_t url_begin, url_end; // the URL's own bytes
    std::string url;                // escapes undone
    const char *kind;               // "url", "image-set", "import"
};
std::vector<CssFetch> css_fetches(std::string_view css);

// Whether a browser reaching url (as written: url_as_parsed first) asks the network: http,
// https, ftp, ws(s), protocol-relative ("//host", "\\host"), file://host (SMB) and any other
// scheme but data:, cid:, mid:, javascript:, about:, blob:, mailto:, tel:; relative: no.
bool network_url(std::string_view url);
// The host (lower case, no user, no port) of such a URL; "" when it names none.
std::string host_of(std::string_view url);
// Whether host is one of hosts or a subdomain of one.
bool host_in(std::string_view host, const std::vector<std::string> &hosts);
// camo's URL for url (server.js, "path" form): BASE/HMAC-SHA1(key, url) in hex/url in hex.
std::string camo_url(std::string_view base, std::string_view key, std::string_view url);

// The forms a URL made for one recipient carries the address in (remote_recipient.cc):
// anywhere (lower case): the address, its MD5, SHA-1 and SHA-256 in hex; exact (case kept):
// its base64, standard and URL-safe, unpadded; tokens: its local part (3 characters or more).
struct RecipientForms {
    std::vector<std::string> anywhere, exact, tokens;
};
RecipientForms recipient_forms(const std::vector<std::string> &addresses);
// Whether url's path or query (percent-decoded; the fragment is never sent) carries one.
bool names_recipient(std::string_view url, const RecipientForms &f);
// The addresses of m's To, Cc, Delivered-To and X-Original-To fields, lower case.
std::vector<std::string> header_recipients(GMimeMessage *m);

// Where a fetch is found in an HTML part (remote_sites.cc).
struct Holder {
    std::size_t raw_begin{0}, raw_end{0}; // attribute: its value's bytes with their quotes;
                                          // style text: its first text's start to its last's end
    bool attribute{true};
    std::string decoded;                  // the value (or the style text) as a browser reads it
    bool escaped{false};                  // style text in SVG: character references decoded, '<' markup
    std::vector<std::pair<std::size_t, std::size_t>> pieces; // style text: each text node's bytes
};

struct Site {
    enum class Kind { Image, Style, Other };
    std::size_t holder{0};
    std::string where; // "img@src", "style" (an attribute), "style@text", "iframe@srcdoc>img@src"
    std::string url;   // as a browser's URL parser reads it
    std::string host;
    Kind kind{Kind::Other};
    bool css{false};
    std::size_t begin{0}, end{0};         // in the holder's decoded text: what a block replaces
    std::size_t url_begin{0}, url_end{0}; // the URL's own span there (what a proxy replaces)
    bool whole{false};                    // a block empties the whole value (srcset, srcdoc, SMIL...)
    std::size_t element{0};               // 1 + the index in Sites::drops of the start tag a block
                                          // drops (link, meta, base, a tracker image); 0: none
    std::size_t img{0};                   // 1 + the index in Sites::drops of the <img> start tag
                                          // whose src/srcset/lowsrc this is: a tracker found by
                                          // its URL (list, recipient) drops it; 0: none
    std::string tracker;                  // "shape", "hidden", "list", "recipient"; "" when none
};

struct Sites {
    std::vector<Holder> holders;
    std::vector<std::pair<std::size_t, std::size_t>> drops; // start tags a block may drop
    std::vector<Site> sites;
    html::Stop stop{html::Stop::None};
    std::string stop_message;
};

// Every network fetch of the HTML (bytes in an ASCII-compatible charset), gumbo's reading,
// under the limits. Trackers by shape are marked; by list, by the caller.
Result<Sites> find_sites(std::string_view html, const html::ParseLimits &limits);
// The fetches of a text/css part.
Sites css_sites(std::string_view css);

// What a block or a proxy does to a site.
struct Action {
    enum class Kind { Keep, Block, Proxy, Drop } kind{Kind::Keep};
    std::string url; // Proxy: the new URL
};
// The text with each site's action spliced in; every byte no action touches kept.
std::string apply_actions(std::string_view text, const Sites &s, const std::vector<Action> &actions);

} // namespace remote

} // namespace mimeuri
