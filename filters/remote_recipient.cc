// The "one URL per recipient" tracker rule of the remote pass (issue 52): a mass mailer that
// sends each recipient a copy whose image (or stylesheet) URL carries the recipient's
// address learns, from the fetch, who opened it. A fetch whose URL's path or query carries
// one of the message's recipients is a tracker ("recipient"):
//   - the address itself (lower case, after percent-decoding), anywhere in them;
//   - its MD5, SHA-1 or SHA-256 in hex (of the address in lower case: what list managers and
//     ad networks hash, e.g. Google's and Meta's "hashed email" matching), anywhere;
//   - its base64 (standard or URL-safe alphabet, padding or not), anywhere, case kept;
//   - its local part, as a whole token between / ? & = ; , : (at least 3 characters: a
//     shorter one would be a path's word too often).
// The fragment (after '#') is never sent, so never counts; the host neither (a per-recipient
// host would need a DNS server of the sender's, and is not a URL path).
#include "remote.hh"

#include "gobj.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstring>

namespace mimeuri::remote {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out) c = static_cast<char>(g_ascii_tolower(c));
    return out;
}

// An address as an envelope or a header gives it: angle brackets and white space off.
std::string bare(std::string_view a)
{
    while (!a.empty() && (a.front() == '<' || g_ascii_isspace(a.front()))) a.remove_prefix(1);
    while (!a.empty() && (a.back() == '>' || g_ascii_isspace(a.back()))) a.remove_suffix(1);
    return lower(a);
}

std::string checksum(GChecksumType type, const std::string &s)
{
    GCharPtr hex(g_compute_checksum_for_string(type, s.c_str(), static_cast<gssize>(s.size())));
    return hex ? std::string(hex.get()) : std::string();
}

// The path and query of url (the part a server sees), percent-decoded; "" when none.
std::string path_and_query(std::string_view url)
{
    std::size_t at = 0;
    if (auto scheme_end = url.find("://"); scheme_end != std::string_view::npos) at = scheme_end + 3;
    else if (url.substr(0, 2) == "//") at = 2;
    const std::size_t start = url.find_first_of("/?", at);
    if (start == std::string_view::npos) return "";
    std::string_view pq = url.substr(start, url.find('#', start) - start);
    std::string out;
    for (std::size_t i = 0; i < pq.size(); ++i) {
        if (pq[i] == '%' && i + 2 < pq.size() && g_ascii_isxdigit(pq[i + 1]) && g_ascii_isxdigit(pq[i + 2])) {
            out += static_cast<char>(g_ascii_xdigit_value(pq[i + 1]) * 16 + g_ascii_xdigit_value(pq[i + 2]));
            i += 2;
        } else {
            out += pq[i];
        }
    }
    return out;
}

void add_list(InternetAddressList *list, std::vector<std::string> &out)
{
    if (!list) return;
    for (int i = 0; i < internet_address_list_length(list); ++i) {
        InternetAddress *ia = internet_address_list_get_address(list, i);
        if (INTERNET_ADDRESS_IS_MAILBOX(ia)) out.push_back(bare(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia))));
        else if (INTERNET_ADDRESS_IS_GROUP(ia)) add_list(internet_address_group_get_members(INTERNET_ADDRESS_GROUP(ia)), out);
    }
}

} // namespace

RecipientForms recipient_forms(const std::vector<std::string> &addresses)
{
    RecipientForms f;
    for (const std::string &given : addresses) {
        const std::string a = bare(given);
        const auto at = a.rfind('@');
        if (at == std::string::npos || at == 0 || at + 1 == a.size()) continue;
        if (std::find(f.anywhere.begin(), f.anywhere.end(), a) != f.anywhere.end()) continue;
        f.anywhere.push_back(a);
        for (GChecksumType t : {G_CHECKSUM_MD5, G_CHECKSUM_SHA1, G_CHECKSUM_SHA256}) f.anywhere.push_back(checksum(t, a));
        GCharPtr b64(g_base64_encode(reinterpret_cast<const guchar *>(a.data()), a.size()));
        std::string std64(b64.get());
        while (!std64.empty() && std64.back() == '=') std64.pop_back();
        std::string url64 = std64;
        std::replace(url64.begin(), url64.end(), '+', '-');
        std::replace(url64.begin(), url64.end(), '/', '_');
        f.exact.push_back(std64);
        if (url64 != std64) f.exact.push_back(url64);
        if (at >= 3) f.tokens.push_back(a.substr(0, at));
    }
    return f;
}

bool names_recipient(std::string_view url, const RecipientForms &f)
{
    if (f.anywhere.empty()) return false;
    const std::string pq = path_and_query(url);
    if (pq.empty()) return false;
    for (const std::string &e : f.exact)
        if (pq.find(e) != std::string::npos) return true;
    const std::string low = lower(pq);
    for (const std::string &a : f.anywhere)
        if (low.find(a) != std::string::npos) return true;
    static const char kSep[] = "/?&=;,:";
    for (std::size_t b = 0; b < low.size();) {
        const std::size_t e = std::min(low.find_first_of(kSep, b), low.size());
        const std::string_view token = std::string_view(low).substr(b, e - b);
        for (const std::string &t : f.tokens)
            if (token == t) return true;
        b = e + 1;
    }
    return false;
}

std::vector<std::string> header_recipients(GMimeMessage *m)
{
    std::vector<std::string> out;
    if (!m) return out;
    GMimeHeaderList *headers = g_mime_object_get_header_list(GMIME_OBJECT(m));
    for (int i = 0; headers && i < g_mime_header_list_get_count(headers); ++i) {
        GMimeHeader *h = g_mime_header_list_get_header_at(headers, i);
        const char *name = g_mime_header_get_name(h);
        const char *value = g_mime_header_get_value(h);
        if (!name || !value) continue;
        static const char *const kFields[] = {"to", "cc", "delivered-to", "x-original-to"};
        if (std::none_of(std::begin(kFields), std::end(kFields), [&](const char *f) { return g_ascii_strcasecmp(name, f) == 0; }))
            continue;
        GPtr<InternetAddressList> list = GPtr<InternetAddressList>::adopt(internet_address_list_parse(nullptr, value));
        add_list(list.get(), out);
    }
    return out;
}

} // namespace mimeuri::remote
