// The service's policies by envelope (milter_policy.hh).
#include "milter_policy.hh"

#include "option_table.hh"

#include <glib.h>

#include <algorithm>
#include <functional>

namespace mimeuri {
namespace {

// A list as admins write it: items separated by commas, semicolons (GKeyFile's own
// separator) or blanks.
std::vector<std::string> split_list(const std::string &raw)
{
    std::vector<std::string> items;
    std::string item;
    for (char c : raw + ",") {
        if (c == ',' || c == ';' || c == ' ' || c == '\t') {
            if (!item.empty()) items.push_back(item);
            item.clear();
        } else {
            item += c;
        }
    }
    return items;
}

std::string lower(std::string s)
{
    for (char &c : s) c = static_cast<char>(g_ascii_tolower(c));
    return s;
}

// Whether `domain` is `pattern` ("example.org"), or, for ".example.org", it or one of its
// subdomains.
bool domain_matches(const std::string &domain, const std::string &pattern)
{
    if (domain.empty()) return false;
    if (pattern[0] != '.') return domain == pattern;
    if (domain == pattern.substr(1)) return true;
    return domain.size() > pattern.size() && domain.compare(domain.size() - pattern.size(), pattern.size(), pattern) == 0;
}

bool any_domain_matches(const std::string &domain, const std::vector<std::string> &patterns)
{
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string &p) { return domain_matches(domain, p); });
}

// A domain as a key writes it: letters, digits, '-', '.', '_' (no address, no wildcard
// but the leading dot).
bool valid_domain(const std::string &d)
{
    if (d.empty() || d == "." || d.find("..") != std::string::npos) return false;
    return std::all_of(d.begin(), d.end(),
                       [](char c) { return g_ascii_isalnum(c) || c == '-' || c == '.' || c == '_'; });
}

} // namespace

std::string Envelope::serialize() const
{
    std::string out = std::string(known ? "1" : "0") + client + '\0' + sender + '\0' + auth_authen + '\0' + daemon_name +
                      '\0' + daemon_port;
    for (const auto &r : recipients) out += '\0' + r;
    return out;
}

Envelope Envelope::deserialize(const std::string &bytes)
{
    Envelope env;
    env.known = !bytes.empty() && bytes[0] == '1';
    std::vector<std::string> fields{""};
    for (char c : bytes.substr(bytes.empty() ? 0 : 1)) {
        if (c == '\0') fields.emplace_back();
        else fields.back() += c;
    }
    fields.resize(std::max<std::size_t>(fields.size(), 5));
    env.client = fields[0];
    env.sender = fields[1];
    env.auth_authen = fields[2];
    env.daemon_name = fields[3];
    env.daemon_port = fields[4];
    env.recipients.assign(fields.begin() + 5, fields.end());
    return env;
}

std::string envelope_domain(const std::string &address)
{
    std::string a = address;
    if (!a.empty() && a.front() == '<') a.erase(0, 1);
    if (!a.empty() && a.back() == '>') a.pop_back();
    const auto at = a.rfind('@');
    if (at == std::string::npos) return {};
    std::string d = lower(a.substr(at + 1));
    while (!d.empty() && d.back() == '.') d.pop_back();
    return d;
}

bool PolicyMatch::matches(const Envelope &env) const
{
    if (!env.known) return false;
    if (!clients.empty()) {
        std::string addr = env.client;
        if (addr.rfind("::ffff:", 0) == 0 && addr.find('.') != std::string::npos) addr.erase(0, 7); // v4-mapped
        GPtr<GInetAddress> a = GPtr<GInetAddress>::adopt(g_inet_address_new_from_string(addr.c_str()));
        if (!a) return false; // unknown: neither in a range nor known to be outside it
        const bool in = std::any_of(clients.begin(), clients.end(), [&](const GPtr<GInetAddressMask> &m) {
            return g_inet_address_mask_matches(m.get(), a.get());
        });
        if (in == not_client) return false;
    }
    if (!sender_domains.empty() && any_domain_matches(envelope_domain(env.sender), sender_domains) == not_sender)
        return false;
    if (!recipient_domains.empty()) {
        // Every recipient: the message is one copy for all of them.
        if (env.recipients.empty()) return false;
        for (const auto &r : env.recipients)
            if (any_domain_matches(envelope_domain(r), recipient_domains) == not_recipient) return false;
    }
    if (authenticated && *authenticated != !env.auth_authen.empty()) return false;
    // The listener: a key given matches no message whose MTA did not send the macro.
    for (auto [list, value, negated] : {std::tuple{&daemon_names, &env.daemon_name, not_daemon_name},
                                        std::tuple{&daemon_ports, &env.daemon_port, not_daemon_port}}) {
        if (list->empty()) continue;
        if (value->empty()) return false;
        if ((std::find(list->begin(), list->end(), *value) != list->end()) == negated) return false;
    }
    return true;
}

PolicyMatch read_policy_match(const std::string &path, const std::string &group, std::vector<std::string> &problems)
{
    PolicyMatch m;
    // Each problem names its file and line (config_place), as the file reader's do.
    auto where = [&](const std::string &key) { return config_place(path, group, key) + ": [" + group + "] "; };
    GKeyFile *kf = g_key_file_new();
    if (!g_key_file_load_from_file(kf, path.c_str(), G_KEY_FILE_NONE, nullptr)) { // the settings' load says why
        g_key_file_free(kf);
        return m;
    }
    auto raw = [&](const char *key) -> std::optional<std::string> {
        gchar *v = g_key_file_get_value(kf, group.c_str(), key, nullptr);
        if (!v) return std::nullopt;
        std::string s = v;
        g_free(v);
        return s;
    };
    bool any = false;
    // "!LIST": the key negated (PolicyMatch's not_*); the list after it read as any list.
    auto negated = [](std::optional<std::string> &v, bool &flag) {
        if (!v) return;
        std::string s = g_strstrip(v->data());
        if (!s.empty() && s[0] == '!') {
            flag = true;
            s.erase(0, 1);
        }
        *v = s;
    };
    if (auto v = raw("client")) {
        any = true;
        negated(v, m.not_client);
        for (const auto &item : split_list(*v)) {
            GError *err = nullptr;
            GInetAddressMask *mask = g_inet_address_mask_new_from_string(item.c_str(), &err);
            if (!mask) {
                problems.push_back(where("client") + "client: '" + item +
                                   "' is not an address or a CIDR range (10.0.0.0/8, 2001:db8::/32)");
                g_clear_error(&err);
            } else {
                m.clients.push_back(GPtr<GInetAddressMask>::adopt(mask));
            }
        }
        if (split_list(*v).empty()) problems.push_back(where("client") + "client is empty: it would match no message");
    }
    // The list keys but client: each item normalised, or what is wrong with it.
    using Item = std::optional<std::string>; // nullopt: not a valid item
    auto domain = [](const std::string &item) -> Item {
        std::string d = lower(item);
        return valid_domain(d) ? Item(d) : std::nullopt;
    };
    auto name = [](const std::string &item) -> Item {
        return std::all_of(item.begin(), item.end(), [](char c) { return g_ascii_isgraph(c); }) ? Item(item) : std::nullopt;
    };
    auto port = [](const std::string &item) -> Item {
        const bool digits = !item.empty() && item.size() <= 5 &&
                            std::all_of(item.begin(), item.end(), [](char c) { return g_ascii_isdigit(c); });
        return digits && std::stoul(item) >= 1 && std::stoul(item) <= 65535 ? Item(item) : std::nullopt;
    };
    struct ListKey {
        const char *key;
        std::vector<std::string> *list;
        bool *negated;
        std::function<Item(const std::string &)> read;
        const char *not_one; // what an item that does not read is not
    };
    const std::string not_domain = "a domain (example.org, or .example.org for it and its subdomains)";
    for (const ListKey &k : {ListKey{"sender-domain", &m.sender_domains, &m.not_sender, domain, not_domain.c_str()},
                             ListKey{"recipient-domain", &m.recipient_domains, &m.not_recipient, domain, not_domain.c_str()},
                             ListKey{"daemon-name", &m.daemon_names, &m.not_daemon_name, name, "a listener's name (smtp, submission)"},
                             ListKey{"daemon-port", &m.daemon_ports, &m.not_daemon_port, port, "a port (1 to 65535)"}}) {
        auto v = raw(k.key);
        if (!v) continue;
        any = true;
        negated(v, *k.negated);
        for (const auto &item : split_list(*v)) {
            if (Item read = k.read(item)) k.list->push_back(*read);
            else problems.push_back(where(k.key) + k.key + ": '" + item + "' is not " + k.not_one);
        }
        if (split_list(*v).empty()) problems.push_back(where(k.key) + k.key + " is empty: it would match no message");
    }
    if (auto v = raw("authenticated")) {
        any = true;
        const std::string b = lower(g_strstrip(v->data()));
        if (b == "yes" || b == "true" || b == "on" || b == "1") m.authenticated = true;
        else if (b == "no" || b == "false" || b == "off" || b == "0") m.authenticated = false;
        else problems.push_back(where("authenticated") + "authenticated: '" + *v + "' is not yes or no");
    }
    gsize nkeys = 0;
    gchar **keys = g_key_file_get_keys(kf, group.c_str(), &nkeys, nullptr);
    for (gsize k = 0; k < nkeys; ++k)
        if (std::count(policy_denied_keys().begin(), policy_denied_keys().end(), keys[k]))
            problems.push_back(where(keys[k]) + keys[k] + ": the service's as a whole, not a message's: set it in [milter]");
    g_strfreev(keys);
    if (!any)
        problems.push_back(where({}) + "has no match key (client, sender-domain, recipient-domain, authenticated, "
                                   "daemon-name, daemon-port): it would match every message; the service's own "
                                   "settings go in [milter]");
    g_key_file_free(kf);
    return m;
}

const std::vector<std::string> &policy_denied_keys()
{
    static const std::vector<std::string> keys{"report", "stats", "syslog", "jobs", "spool-threshold",
                                               "milter-timeout", "milter-client-connections", "verbose",
                                               "format", "changed-list", "lock-timeout", "force-read-only"};
    return keys;
}

} // namespace mimeuri
