// The message/external-body pass's options; configuration group [external-body].
#include "external_body.hh"

namespace mimeuri {

namespace {

OptionTable external_body_option_table(ExternalBodyOptions &o)
{
    using K = OptionKind;
    using M = ExternalBodyOptions::Mode;
    const std::string g = "external-body";
    OptionTable t;
    t.options = {
        {.long_name = "external-body", .group = g, .key = "mode", .kind = K::Choice,
         .default_text = "normalize",
         .help = "message/external-body parts: off, check (report only) or normalize (write access-type=URL the "
                 "RFC 2017 way)",
         .access = bind_choice(o.mode, {{"off", M::Off}, {"check", M::Check}, {"normalize", M::Normalize}})},
        {.long_name = "url-map", .group = g, .key = "url-map", .kind = K::Repeated, .default_text = "none",
         .help = "Rewrite external-body URLs starting with FROM to start with TO; repeatable, first match wins "
                 "(in the configuration file a list separated by ;)",
         .arg_name = "FROM=TO",
         .access = {[&o](const OptionValue &v) -> Status {
                        // One source's list replaces another's: the command line's the file's.
                        std::vector<std::pair<std::string, std::string>> map;
                        for (const auto &m : v.list) {
                            auto eq = m.find('=');
                            if (eq == std::string::npos || eq == 0)
                                return usage_error(v.name + " needs FROM=TO, not '" + m + "'");
                            map.emplace_back(m.substr(0, eq), m.substr(eq + 1));
                        }
                        o.url_map = std::move(map);
                        return ok();
                    },
                    [&o] {
                        std::vector<std::string> items;
                        for (const auto &[from, to] : o.url_map) items.push_back(from + "=" + to);
                        return keyfile_list(items);
                    }}},
        {.long_name = "external-body-schemes", .group = g, .key = "schemes", .kind = K::List,
         .default_text = "http,https,ftp,ftps,sftp,tftp",
         .help = "URL schemes an external body may use; others (mailto, file, ...) are reported as disallowed",
         .arg_name = "LIST", .access = bind_lower_list(o.schemes)},
        {.long_name = "legacy-to-url", .group = g, .key = "legacy-to-url", .kind = K::Flag, .default_text = "off",
         .help = "Convert anon-ftp, ftp and tftp access types to access-type=URL",
         .access = bind_flag(o.legacy_to_url)},
    };
    return t;
}

bool external_body_off(const ExternalBodyOptions &o) { return o.mode == ExternalBodyOptions::Mode::Off; }

} // namespace

PassRow external_body_row()
{
    PassRow row = pass_row<ExternalBodyPass, ExternalBodyOptions, external_body_option_table, external_body_off>("external-body");
    row.edits = [](const MessageReport &r) { return r.external_bodies_rewritten(); };
    return row;
}

} // namespace mimeuri
