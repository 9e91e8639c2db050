// The offload pass's options; configuration group [offload].
#include "offload.hh"

#include "offload_report.hh"
#include "offload_store.hh"

namespace mimeuri {

namespace {

OptionTable offload_option_table(OffloadOptions &o)
{
    using K = OptionKind;
    const std::string g = "offload";
    OptionTable t;
    t.options = {
        {.long_name = "offload-min", .group = g, .key = "min", .kind = K::Size, .default_text = "0 (off)",
         .help = "Store each attachment of at least BYTES (decoded) in --offload-dir and replace it with a note and a "
                 "message/external-body part pointing to it (RFC 2017); 0: off",
         .arg_name = "BYTES", .access = bind_size(o.min)},
        {.long_name = "offload-dir", .group = g, .key = "dir", .kind = K::Path, .default_text = "none",
         .help = "The folder offloaded attachments are stored in, each under a keyed hash of its bytes",
         .arg_name = "DIR", .access = bind_text(o.dir)},
        {.long_name = "offload-url", .group = g, .key = "url", .kind = K::String, .default_text = "none",
         .help = "The URL of a stored attachment: {name} is its file name in --offload-dir, {filename} the "
                 "attachment's own name made safe for a path",
         .arg_name = "TEMPLATE", .access = bind_text(o.url)},
        {.long_name = "offload-key", .group = g, .key = "key", .kind = K::Path, .default_text = "DIR/.key, made once",
         .help = "The file holding the key of the stored files' names (HMAC-SHA-256)", .arg_name = "FILE",
         .access = bind_text(o.key)},
        {.long_name = "offload-expire", .group = g, .key = "expire", .kind = K::String, .default_text = "none",
         .help = "Write expiration= (RFC 2046 5.2.3) this long after the run: N seconds, or Nm, Nh, Nd, Nw",
         .arg_name = "DURATION",
         .access = {[&o](const OptionValue &v) -> Status {
                        auto d = offload::parse_duration(v.text);
                        if (!d) return usage_error(v.name + ": '" + v.text + "' is not a duration (30d, 12h, 3600)");
                        o.expire = *d;
                        return ok();
                    },
                    [&o] { return o.expire ? std::to_string(o.expire) : std::string(); }}},
        {.long_name = "offload-restore", .group = g, .key = "restore", .kind = K::Flag, .default_text = "off",
         .help = "Put every offloaded part back from --offload-dir, byte for byte (implies --strict: exit 65 when a "
                 "stored file is missing or does not match)",
         .access = bind_flag(o.restore), .implies = OptionImplies{"strict", "true"}},
    };
    return t;
}

bool offload_off(const OffloadOptions &o) { return o.min == 0 && !o.restore; }

// The store must open (its folder there, its key readable or made) when the settings load.
Status offload_check(const PassOptions &p)
{
    const OffloadOptions &o = p.of<OffloadOptions>();
    if (offload_off(o)) return ok();
    if (o.dir.empty()) return usage_error(std::string(o.restore ? "--offload-restore" : "--offload-min") + " needs --offload-dir");
    if (!o.restore && o.url.find("{name}") == std::string::npos)
        return usage_error("--offload-min needs --offload-url with {name} in it");
    auto s = offload::Store::open(o.dir, o.key, !o.restore);
    if (!s) return s.error();
    return ok();
}

} // namespace

PassRow offload_row()
{
    PassRow row = pass_row<OffloadPass, OffloadOptions, offload_option_table, offload_off>("offload", offload_check);
    row.report = &OffloadReport::kind();
    return row;
}

} // namespace mimeuri
