// The data: pass's options; configuration group [data].
#include "data.hh"
#include "data_report.hh"

namespace mimeuri {

namespace {

OptionTable data_option_table(DataOptions &o)
{
    using K = OptionKind;
    using M = DataOptions::Mode;
    const std::string g = "data";
    OptionTable t;
    t.options = {
        {.long_name = "data", .group = g, .key = "mode", .kind = K::Choice, .default_text = "check",
         .help = "data: URIs in HTML and CSS parts: off, check (report them) or attach (each data: image becomes a "
                 "cid: reference to an inline part of a multipart/related, made if need be)",
         .access = bind_choice(o.mode, {{"off", M::Off}, {"check", M::Check}, {"attach", M::Attach}})},
        {.long_name = "data-max", .group = g, .key = "max", .kind = K::Size, .default_text = "10485760",
         .help = "Largest data: image (decoded bytes) --data=attach attaches; larger ones are left and reported",
         .arg_name = "BYTES", .access = bind_size(o.max)},
        {.long_name = "data-domain", .group = g, .key = "domain", .kind = K::String,
         .default_text = "the From address's domain",
         .help = "Domain of the Content-IDs --data=attach makes (HASH@DOMAIN)", .arg_name = "DOMAIN",
         .access = {[&o](const OptionValue &v) -> Status {
                        bool good = !v.text.empty() && v.text.size() <= 253 && v.text.front() != '.' &&
                                    v.text.back() != '.' && v.text.find("..") == std::string::npos;
                        for (char c : v.text) good = good && (g_ascii_isalnum(c) || c == '-' || c == '.');
                        if (!good) return usage_error(v.name + " '" + v.text + "' is not a domain");
                        o.domain = v.text;
                        return ok();
                    },
                    [&o] { return o.domain; }}},
    };
    return t;
}

bool data_off(const DataOptions &o) { return o.mode == DataOptions::Mode::Off; }

} // namespace

PassRow data_row()
{
    PassRow row = pass_row<DataPass, DataOptions, data_option_table, data_off>("data");
    row.report = &DataReport::kind();
    return row;
}

} // namespace mimeuri
