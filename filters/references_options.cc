// The reference pass's options: --cid, --mid and their limits; configuration group
// [references].
#include "ref_external.hh"
#include "references.hh"

namespace mimeuri {

namespace {

OptionTable references_option_table(RefOptions &o)
{
    using K = OptionKind;
    using C = RefOptions::Cid;
    using M = RefOptions::Mid;
    const std::string g = "references";
    OptionTable t;
    t.options = {
        {.long_name = "cid", .group = g, .key = "cid", .kind = K::Choice,
         .default_text = "repair",
         .help = "cid: and Content-Location references in HTML: off, check (report), repair (fix malformed ones, "
                 "turn location references into cid:), inline (data: URIs), extract (to --extract-dir)",
         .access = bind_choice(o.cid, {{"off", C::Off},
                                       {"check", C::Check},
                                       {"repair", C::Repair},
                                       {"inline", C::Inline},
                                       {"extract", C::Extract}})},
        {.long_name = "mid", .group = g, .key = "mid", .kind = K::Choice, .default_text = "check; repair with --mid-url", .help = "mid: references: off, check or repair",
         .access = bind_choice(o.mid, {{"off", M::Off}, {"check", M::Check}, {"repair", M::Repair}})},
        {.long_name = "mid-url", .group = g, .key = "mid-url", .kind = K::String, .default_text = "none",
         .help = "Rewrite mid: links to a web archive; {id} is the %-encoded Message-ID; implies --mid=repair",
         .arg_name = "TEMPLATE", .access = bind_text(o.mid_url), .implies = OptionImplies{"mid", "repair"}},
        {.long_name = "mid-index", .group = g, .key = "mid-index", .kind = K::Repeated, .default_text = "none",
         .help = "Also resolve mid: references against this index (made by mimeuri index -o INDEX); repeatable, "
                 "looked up in order after the run's own messages (in the configuration file a list separated by ;)",
         .arg_name = "INDEX",
         .access = {[&o](const OptionValue &v) -> Status {
                        o.mid_indexes = v.list; // one source's list replaces another's
                        return ok();
                    },
                    [&o] { return keyfile_list(o.mid_indexes); }}},
        {.long_name = "notmuch", .group = g, .key = "notmuch", .kind = K::Path, .default_text = "none",
         .help = std::string("Also resolve mid: references against this notmuch database (its mail root), read-only, "
                             "after the run's own messages and the --mid-index indexes") +
                 (refs::notmuch_available() ? "" : " (not available in this build: no libnotmuch)"),
         .arg_name = "DATABASE", .access = bind_text(o.notmuch)},
        {.long_name = "inline-types", .group = g, .key = "inline-types", .kind = K::List,
         .default_text = "image/*,font/*,audio/*,video/*,text/css",
         .help = "Types --cid=inline may turn into data: URIs; text/html, SVG and scripts never", .arg_name = "LIST",
         .access = bind_lower_list(o.inline_types)},
        {.long_name = "inline-max", .group = g, .key = "inline-max", .kind = K::Size, .default_text = "1048576",
         .help = "Largest part (decoded bytes) --cid=inline inlines", .arg_name = "BYTES",
         .access = bind_size(o.inline_max)},
        {.long_name = "drop-inlined", .group = g, .key = "drop-inlined", .kind = K::Flag, .default_text = "off",
         .help = "Remove parts whose every reference was inlined", .access = bind_flag(o.drop_inlined)},
        {.long_name = "location-to-cid", .group = g, .key = "location-to-cid", .kind = K::Flag,
         .default_text = "off: repair leaves them as written",
         .help = "Also rewrite valid Content-Location references (RFC 2557) to cid: URLs",
         .access = bind_flag(o.location_to_cid)},
        {.long_name = "extract-dir", .group = g, .key = "extract-dir", .kind = K::Path, .default_text = "none",
         .help = "With --cid=extract: write each message's HTML as DIR/N/index.html and its referenced parts "
                 "beside it",
         .arg_name = "DIR", .access = bind_text(o.extract_dir)},
        {.long_name = "extract-remote-images", .group = g, .key = "extract-remote-images", .kind = K::Flag,
         .default_text = "off: no page loads anything from the network",
         .help = "With --cid=extract: let the pages load remote images (http: and https:)",
         .access = bind_flag(o.extract_remote_images)},
        {.long_name = "summary-header", .group = g, .key = "summary-header", .kind = K::Flag, .default_text = "off",
         .help = "Add a Mimeuri-Refs: resolved=N dangling=N ambiguous=N header to each message (and attached=N, moved=N, marked=N where --data, --related changed parts)",
         .access = bind_flag(o.summary_header)},
        {.long_name = "html-max", .group = g, .key = "html-max", .kind = K::Size, .default_text = "33554432",
         .help = "Largest HTML part (decoded bytes) searched for references; larger ones are reported",
         .arg_name = "BYTES", .access = bind_size(o.html_max)},
        {.long_name = "max-refs", .group = g, .key = "max-refs", .kind = K::Size, .default_text = "1000000",
         .help = "References looked at per HTML part; beyond, reported", .arg_name = "N",
         .access = bind_size(o.max_refs)},
    };
    t.checks.push_back([&o]() -> Status {
        if (o.cid == C::Extract && o.extract_dir.empty()) return usage_error("--cid=extract needs --extract-dir=DIR");
        if (!o.mid_url.empty() && o.mid_url.find("{id}") == std::string::npos)
            return usage_error("--mid-url needs {id} in its template");
        return ok();
    });
    return t;
}

bool references_off(const RefOptions &o) { return o.cid == RefOptions::Cid::Off && o.mid == RefOptions::Mid::Off; }

// An index that cannot be read now (missing while a nightly one is renamed into place, a copy
// cut short, not SQLite, not mimeuri's) is a condition of the moment, not of the
// configuration: the command line and the service (at its start and on SIGHUP) say so in one
// line and go on. Each message whose mid: references need it then fails as --on-error says
// (passed as it came, or 75 / 451), and the next such message opens it again: never a usage
// error (64) or a missing input (66) that a pipe transport bounces. A notmuch this mimeuri
// cannot load at all (built without it) stays an error.
Status references_check(const PassOptions &p)
{
    const RefOptions &o = p.of<RefOptions>();
    if (o.mid == RefOptions::Mid::Off) return ok();
    const char *then = "; messages whose mid: references need it are handled as --on-error says until it can be read";
    for (const std::string &path : o.mid_indexes)
        if (Status s = refs::check_mid_index(path); !s)
            g_warning("--mid-index: %s%s", s.error().message.c_str(), then);
    if (!o.notmuch.empty())
        if (Status s = refs::check_notmuch(o.notmuch); !s) {
            if (!refs::notmuch_available() || s.error().code != Code::NoInput)
                return Error{s.error().code, "--notmuch: " + s.error().message};
            g_warning("--notmuch: %s%s", s.error().message.c_str(), then);
        }
    return ok();
}

} // namespace

PassRow references_row()
{
    PassRow row = pass_row<ReferencesPass, RefOptions, references_option_table, references_off>("references", references_check);
    row.edits = [](const MessageReport &r) { return r.refs_rewritten(); };
    row.files_beside = [](const PassOptions &p) {
        const RefOptions &o = p.of<RefOptions>();
        const bool extract = o.cid == RefOptions::Cid::Extract;
        return FilesBeside{extract ? "--cid=extract" : "", "--extract-dir", o.extract_dir, extract};
    };
    return row;
}

} // namespace mimeuri
