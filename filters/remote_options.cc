// The remote pass's options; configuration group [remote]. The files --remote-trackers and
// --remote-key name are checked at load (a file that cannot be read stops the settings
// loading) and read when the pass is made.
#include "remote.hh"
#include "remote_report.hh"

#include "gobj.hh"

#include <glib.h>

#include <cstring>

namespace mimeuri {

namespace {

Result<std::string> read_file(const std::string &path, const char *option)
{
    gchar *bytes = nullptr;
    gsize size = 0;
    GError *err = nullptr;
    if (!g_file_get_contents(path.c_str(), &bytes, &size, &err)) {
        std::string why = err ? err->message : "unreadable";
        g_clear_error(&err);
        return usage_error(std::string(option) + ": " + why);
    }
    std::string out(bytes, size);
    g_free(bytes);
    return out;
}

} // namespace

// One host ("tracker.example") or URL prefix ("https://x.example/open/") a line; '#' starts
// a comment. The key: the first line of its file.
Status load_remote_files(RemoteOptions &o)
{
    if (!o.key_file.empty()) {
        auto text = read_file(o.key_file, "--remote-key");
        if (!text) return text.error();
        std::string key = text->substr(0, text->find('\n'));
        if (!key.empty() && key.back() == '\r') key.pop_back();
        if (key.empty()) return usage_error("--remote-key: no key on the first line of " + o.key_file);
        o.key = key;
    }
    if (o.trackers_file.empty()) return ok();
    auto text = read_file(o.trackers_file, "--remote-trackers");
    if (!text) return text.error();
    o.tracker_hosts.clear();
    o.tracker_urls.clear();
    std::size_t at = 0;
    while (at < text->size()) {
        std::size_t nl = text->find('\n', at);
        if (nl == std::string::npos) nl = text->size();
        std::string line = text->substr(at, nl - at);
        at = nl + 1;
        if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        g_strstrip(line.data());
        line.resize(std::strlen(line.c_str()));
        if (line.empty()) continue;
        if (line.find('/') != std::string::npos) o.tracker_urls.push_back(line);
        else o.tracker_hosts.push_back(remote::host_of("//" + line));
    }
    return ok();
}

namespace {

OptionTable remote_option_table(RemoteOptions &o)
{
    using K = OptionKind;
    using M = RemoteOptions::Mode;
    const std::string g = "remote";
    OptionTable t;
    t.options = {
        {.long_name = "remote", .group = g, .key = "mode", .kind = K::Choice, .default_text = "keep",
         .help = "Remote content in HTML and CSS parts (images, stylesheets, every network fetch): keep, check "
                 "(report each), block (make each inert; tracker images removed) or proxy (images through camo, "
                 "--remote-proxy; the rest blocked)",
         .access = bind_choice(o.mode, {{"keep", M::Keep}, {"check", M::Check}, {"block", M::Block}, {"proxy", M::Proxy}})},
        {.long_name = "remote-keep-hosts", .group = g, .key = "keep-hosts", .kind = K::List, .default_text = "none",
         .help = "Hosts (and their subdomains) whose content --remote=block and proxy leave as it is", .arg_name = "HOSTS",
         .access = bind_lower_list(o.keep_hosts)},
        {.long_name = "remote-trackers", .group = g, .key = "trackers", .kind = K::Path, .default_text = "none",
         .help = "File of tracker hosts and URL prefixes, one a line: what they name is removed (block, proxy) and "
                 "reported as a tracker",
         .arg_name = "FILE",
         .access = bind_text(o.trackers_file)},
        {.long_name = "remote-recipient", .group = g, .key = "recipient", .kind = K::List, .default_text = "none",
         .help = "Recipient addresses a fetch's URL is a tracker for carrying (itself, its local part, its MD5, "
                 "SHA-1 or SHA-256 hex, its base64), beside the message's To, Cc, Delivered-To and X-Original-To "
                 "(and the envelope's RCPT TO in the milter)",
         .arg_name = "ADDRS",
         .access = bind_lower_list(o.recipients)},
        {.long_name = "remote-proxy", .group = g, .key = "proxy", .kind = K::String, .default_text = "none",
         .help = "Base URL of the camo image proxy --remote=proxy sends images through (https://camo.example)",
         .arg_name = "BASE",
         .access = {[&o](const OptionValue &v) -> Status {
                        if (v.text.rfind("https://", 0) != 0 && v.text.rfind("http://", 0) != 0)
                            return usage_error(v.name + " '" + v.text + "' is not an http(s) URL");
                        o.proxy_base = v.text;
                        while (!o.proxy_base.empty() && o.proxy_base.back() == '/') o.proxy_base.pop_back();
                        return ok();
                    },
                    [&o] { return o.proxy_base; }}},
        {.long_name = "remote-key", .group = g, .key = "key", .kind = K::Path, .default_text = "none",
         .help = "File holding camo's shared key (its CAMO_KEY), on its first line", .arg_name = "FILE",
         .access = bind_text(o.key_file)},
    };
    t.checks.push_back([&o]() -> Status {
        if (o.mode == RemoteOptions::Mode::Proxy && (o.proxy_base.empty() || o.key_file.empty()))
            return usage_error("--remote=proxy needs --remote-proxy and --remote-key");
        return ok();
    });
    return t;
}

bool remote_off(const RemoteOptions &o) { return o.mode == RemoteOptions::Mode::Keep; }

// At load (a run's start, the service's start and each reload): the files can be read.
Status check_remote(const PassOptions &p)
{
    RemoteOptions o = p.of<RemoteOptions>();
    return o.mode == RemoteOptions::Mode::Keep ? ok() : load_remote_files(o);
}

} // namespace

PassRow remote_row()
{
    PassRow row = pass_row<RemotePass, RemoteOptions, remote_option_table, remote_off>("remote", check_remote);
    // Made with the envelope's recipients, where the service set them.
    row.make = [](const PassOptions &p) -> std::unique_ptr<Pass> {
        RemoteOptions o = p.of<RemoteOptions>();
        if (remote_off(o)) return nullptr;
        for (const std::string &a : p.of<EnvelopeRecipients>().addresses) o.recipients.push_back(a);
        return std::make_unique<RemotePass>(std::move(o));
    };
    row.report = &RemoteReport::kind();
    return row;
}

} // namespace mimeuri
