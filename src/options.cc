#include "options.hh"

#include "gobj.hh"

#include <cstring>
#include <memory>

#ifndef MIMEURI_VERSION
#define MIMEURI_VERSION "0"
#endif

namespace mimeuri {

namespace {

struct KeyFileDeleter {
    void operator()(GKeyFile *k) const { g_key_file_unref(k); }
};
struct OptionContextDeleter {
    void operator()(GOptionContext *c) const { g_option_context_free(c); }
};

Error usage(const std::string &msg) { return Error{Code::Usage, msg}; }

// One of a fixed set of words, e.g. --on-error=pass|tempfail.
template <typename E>
Status set_choice(E &out, const std::string &v, const char *option, std::initializer_list<std::pair<const char *, E>> choices)
{
    std::string names;
    std::size_t i = 0;
    for (const auto &[word, value] : choices) {
        if (v == word) {
            out = value;
            return ok();
        }
        if (i > 0) names += i + 1 == choices.size() ? " or " : ", ";
        names += word;
        ++i;
    }
    return usage(std::string(option) + " must be " + names + ", not '" + v + "'");
}

Status set_on_error(Options &o, const std::string &v)
{
    return set_choice(o.on_error, v, "--on-error", {{"pass", OnError::Pass}, {"tempfail", OnError::TempFail}});
}

Status set_signed(Options &o, const std::string &v)
{
    return set_choice(o.signed_mode, v, "--signed", {{"keep", SignedMode::Keep}, {"rewrite", SignedMode::Rewrite}});
}

Status set_format(Options &o, const std::string &v)
{
    return set_choice(o.format, v, "--format", {{"auto", Format::Auto}, {"message", Format::Message}, {"mbox", Format::Mbox}});
}

Status set_max_depth(Options &o, gint64 v)
{
    // GMime parses no deeper than 512 levels of message/rfc822 (1024 of multipart) and
    // silently treats what lies below as content: a deeper limit would let parts go
    // unvisited and unreported. At 500, the walk's own limit always binds first.
    if (v < 1 || v > kMaxDepth)
        return usage("--max-depth must be between 1 and " + std::to_string(kMaxDepth) +
                     " (GMime parses no deeper than 512 levels of message/rfc822)");
    o.limits.max_depth = static_cast<int>(v);
    return ok();
}

Status set_spool(Options &o, gint64 v)
{
    if (v < 0) return usage("--spool-threshold must not be negative");
    o.spool_threshold = static_cast<std::size_t>(v);
    return ok();
}

Status set_passes(Options &o, const std::string &v)
{
    o.passes.clear();
    char **parts = g_strsplit(v.c_str(), ",", -1);
    for (char **p = parts; *p; ++p) {
        std::string name = g_strstrip(*p);
        if (!name.empty()) o.passes.push_back(name);
    }
    g_strfreev(parts);
    if (o.passes.empty()) return usage("--passes needs at least one name (or none)");
    return ok();
}

Status set_labels(Options &o, const std::string &v)
{
    using M = LabelOptions::Mode;
    return set_choice(o.labels.mode, v, "--labels", {{"off", M::Off}, {"top", M::Top}, {"all", M::All}});
}

Status set_label_format(Options &o, const std::string &v)
{
    using F = LabelOptions::Format;
    return set_choice(o.labels.format, v, "--label-format", {{"uri", F::Uri}, {"urc", F::Urc}});
}

Status set_label_header(Options &o, const std::string &v)
{
    if (auto s = check_header_value(v, " x\n"); !s) return usage("--label-header '" + v + "' is not a header name");
    o.labels.header = v;
    return ok();
}

Status set_external_body(Options &o, const std::string &v)
{
    using M = ExternalBodyOptions::Mode;
    return set_choice(o.external_body.mode, v, "--external-body", {{"off", M::Off}, {"check", M::Check}, {"normalize", M::Normalize}});
}

Status add_url_map(Options &o, const std::string &v)
{
    auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return usage("--url-map needs FROM=TO, not '" + v + "'");
    o.external_body.url_map.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    return ok();
}

Status set_list(std::vector<std::string> &out, const std::string &v)
{
    out.clear();
    char **parts = g_strsplit(v.c_str(), ",", -1);
    for (char **p = parts; *p; ++p) {
        std::string name = g_strstrip(*p);
        for (char &c : name) c = static_cast<char>(g_ascii_tolower(c));
        if (!name.empty()) out.push_back(name);
    }
    g_strfreev(parts);
    return ok();
}

Status set_schemes(Options &o, const std::string &v) { return set_list(o.external_body.schemes, v); }

Status set_cid(Options &o, const std::string &v)
{
    using C = RefOptions::Cid;
    return set_choice(o.refs.cid, v, "--cid",
                      {{"off", C::Off}, {"check", C::Check}, {"repair", C::Repair}, {"inline", C::Inline}, {"extract", C::Extract}});
}

Status set_mid(Options &o, const std::string &v)
{
    using M = RefOptions::Mid;
    return set_choice(o.refs.mid, v, "--mid", {{"off", M::Off}, {"check", M::Check}, {"repair", M::Repair}});
}


Status set_size(std::size_t &out, gint64 v, const char *what)
{
    if (v < 0) return usage(std::string(what) + " must not be negative");
    out = static_cast<std::size_t>(v);
    return ok();
}

// The [mimeuri] group of the configuration file. Unknown keys are errors, so a typo in
// a filter's configuration does not silently change what it does.
Status load_config(Options &o, const std::string &path)
{
    std::unique_ptr<GKeyFile, KeyFileDeleter> kf(g_key_file_new());
    GError *err = nullptr;
    if (!g_key_file_load_from_file(kf.get(), path.c_str(), G_KEY_FILE_NONE, &err))
        return Error::from_gerror(Code::Usage, err, "cannot load configuration " + path);
    gsize ngroups = 0;
    char **groups = g_key_file_get_groups(kf.get(), &ngroups);
    std::unique_ptr<char *, void (*)(char **)> gguard(groups, g_strfreev);
    for (gsize g = 0; g < ngroups; ++g) {
        std::string group = groups[g];
        if (group != "mimeuri" && group != "labels" && group != "external-body" && group != "references")
            return usage(path + ": unknown group [" + group + "]");
        gsize nkeys = 0;
        char **keys = g_key_file_get_keys(kf.get(), groups[g], &nkeys, nullptr);
        std::unique_ptr<char *, void (*)(char **)> kguard(keys, g_strfreev);
        for (gsize k = 0; k < nkeys; ++k) {
            std::string key = keys[k];
            GError *e = nullptr;
            auto str = [&]() {
                GCharPtr v(g_key_file_get_string(kf.get(), groups[g], keys[k], &e));
                return std::string(v ? v.get() : "");
            };
            Status s = ok();
            if (group == "references") {
                auto i64 = [&]() { return g_key_file_get_int64(kf.get(), groups[g], keys[k], &e); };
                if (key == "cid") s = set_cid(o, str());
                else if (key == "mid") s = set_mid(o, str());
                else if (key == "mid-url") o.refs.mid_url = str();
                else if (key == "inline-types") s = set_list(o.refs.inline_types, str());
                else if (key == "inline-max") s = set_size(o.refs.inline_max, i64(), "inline-max");
                else if (key == "drop-inlined") o.refs.drop_inlined = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
                else if (key == "location-to-cid") o.refs.location_to_cid = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
                else if (key == "extract-dir") o.refs.extract_dir = str();
                else if (key == "summary-header") o.refs.summary_header = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
                else if (key == "html-max") s = set_size(o.refs.html_max, i64(), "html-max");
                else if (key == "max-refs") s = set_size(o.refs.max_refs, i64(), "max-refs");
                else return usage(path + ": unknown key '" + key + "' in [" + group + "]");
            } else if (group == "external-body") {
                if (key == "mode") s = set_external_body(o, str());
                else if (key == "schemes") s = set_schemes(o, str());
                else if (key == "legacy-to-url")
                    o.external_body.legacy_to_url = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
                else if (key == "url-map") {
                    gsize n = 0;
                    char **list = g_key_file_get_string_list(kf.get(), groups[g], keys[k], &n, &e);
                    for (gsize m = 0; list && m < n && s; ++m) s = add_url_map(o, list[m]);
                    g_strfreev(list);
                } else return usage(path + ": unknown key '" + key + "' in [" + group + "]");
            } else if (group == "labels") {
                if (key == "mode") s = set_labels(o, str());
                else if (key == "header") s = set_label_header(o, str());
                else if (key == "format") s = set_label_format(o, str());
                else return usage(path + ": unknown key '" + key + "' in [" + group + "]");
            } else if (key == "on-error") s = set_on_error(o, str());
            else if (key == "signed") s = set_signed(o, str());
            else if (key == "format") s = set_format(o, str());
            else if (key == "report") o.report_path = str();
            else if (key == "passes") s = set_passes(o, str());
            else if (key == "jobs") {
                gint64 j = g_key_file_get_int64(kf.get(), groups[g], keys[k], &e);
                if (!e && (j < 1 || j > 256)) return usage(path + ": jobs must be between 1 and 256");
                o.jobs = static_cast<int>(j);
            } else if (key == "syslog") o.syslog = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
            else if (key == "strict") o.strict = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
            else if (key == "max-depth") s = set_max_depth(o, g_key_file_get_int64(kf.get(), groups[g], keys[k], &e));
            else if (key == "max-parts") s = set_size(o.limits.max_parts, g_key_file_get_int64(kf.get(), groups[g], keys[k], &e), "max-parts");
            else if (key == "max-header-bytes")
                s = set_size(o.limits.max_header_bytes, g_key_file_get_int64(kf.get(), groups[g], keys[k], &e), "max-header-bytes");
            else if (key == "max-time") {
                o.limits.max_seconds = g_key_file_get_double(kf.get(), groups[g], keys[k], &e);
                if (!e && !(o.limits.max_seconds > 0)) return usage(path + ": max-time must be positive");
            }
            else if (key == "force-read-only")
                o.force_read_only = g_key_file_get_boolean(kf.get(), groups[g], keys[k], &e);
            else if (key == "lock-timeout") {
                o.lock_timeout = g_key_file_get_double(kf.get(), groups[g], keys[k], &e);
                if (!e && !(o.lock_timeout >= 0)) return usage(path + ": lock-timeout must not be negative");
            } else if (key == "changed-list") o.changed_list = str();
            else if (key == "spool-threshold")
                s = set_spool(o, g_key_file_get_int64(kf.get(), groups[g], keys[k], &e));
            else return usage(path + ": unknown key '" + key + "' in [" + group + "]");
            if (e) return Error::from_gerror(Code::Usage, e, path + ": [" + group + "] " + key);
            if (!s) return s;
        }
    }
    return ok();
}

} // namespace

Result<Options> parse_options(int argc, char **argv)
{
    Options o;

    // The configuration file is read first, so that the command line overrides it.
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") break;
        std::string path;
        if (a.rfind("--config=", 0) == 0) path = a.substr(9);
        else if (a == "--config" && i + 1 < argc) path = argv[i + 1];
        else continue;
        if (auto s = load_config(o, path); !s) return s.error();
    }

    gchar *on_error = nullptr, *format = nullptr, *output = nullptr, *report = nullptr, *passes = nullptr,
          *config = nullptr, *labels = nullptr, *label_header = nullptr, *label_format = nullptr,
          *external_body = nullptr, *schemes = nullptr, *cid = nullptr, *mid = nullptr, *mid_url = nullptr,
          *inline_types = nullptr, *extract_dir = nullptr, *signed_mode = nullptr, *changed_list = nullptr;
    gint64 inline_max = -1, html_max = -1, max_refs = -1, jobs = -1, max_parts = -1, max_header = -1;
    gdouble max_time = -1, lock_timeout = -1;
    gboolean force_read_only = FALSE;
    gboolean use_syslog = FALSE;
    gboolean drop_inlined = FALSE, summary_header = FALSE, location_to_cid = FALSE;
    gchar **url_maps = nullptr;
    gboolean legacy = FALSE;
    gint64 max_depth = -1, spool = -1;
    gboolean in_place = FALSE, check = FALSE, strict = FALSE, version = FALSE, verbose = FALSE;
    gchar **rest = nullptr;

    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
         "Write the result to PATH (atomically: temporary file, fsync, rename) (default: standard output)", "PATH"},
        {"in-place", 'i', 0, G_OPTION_ARG_NONE, &in_place,
         "Rewrite each FILE atomically; files with nothing to change are not touched (default: off)", nullptr},
        {"force-read-only", 0, 0, G_OPTION_ARG_NONE, &force_read_only,
         "With --in-place, also rewrite files whose owner has no write permission (0444) (default: off: left "
         "as they were)",
         nullptr},
        {"lock-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &lock_timeout,
         "With --in-place, seconds to wait for an mbox's locks (FILE.lock and fcntl, as procmail, Postfix and "
         "Dovecot take them); then exit 75, the file untouched (default: 30)",
         "SECONDS"},
        {"changed-list", 0, 0, G_OPTION_ARG_FILENAME, &changed_list,
         "With --in-place, write the paths rewritten to FILE, one a line (for notmuch reindex, mu index) "
         "(default: none)",
         "FILE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format,
         "Input format: auto (mbox when the input starts with a \"From \" line), message or mbox (default: auto)",
         "auto|message|mbox"},
        {"report", 'r', 0, G_OPTION_ARG_FILENAME, &report,
         "Write one JSON object per message (JSON Lines) to PATH (default: no report)", "PATH"},
        {"check", 'c', 0, G_OPTION_ARG_NONE, &check,
         "Write no messages, only the report, to standard output (or to --report) (default: off)", nullptr},
        {"on-error", 0, 0, G_OPTION_ARG_STRING, &on_error,
         "On an internal error: pass (write the message's original bytes) or tempfail (exit 75, write nothing "
         "for that input) (default: pass)",
         "pass|tempfail"},
        {"signed", 0, 0, G_OPTION_ARG_STRING, &signed_mode,
         "Signed content (multipart/signed, S/MIME, multipart/encrypted, and what an intact DKIM or ARC body "
         "hash covers): keep it unchanged, or rewrite it for a re-signing downstream, the report naming every "
         "signature broken (default: keep)",
         "keep|rewrite"},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
         "Exit 65 when a message could not be parsed or was left partly unprocessed (default: off)", nullptr},
        {"passes", 'p', 0, G_OPTION_ARG_STRING, &passes,
         "Comma-separated passes to run, \"all\" or \"none\" (default: all)", "LIST"},
        {"max-depth", 0, 0, G_OPTION_ARG_INT64, &max_depth,
         "Deepest MIME nesting visited; deeper parts are left untouched and reported (default: 64)", "N"},
        {"max-parts", 0, 0, G_OPTION_ARG_INT64, &max_parts,
         "Most MIME entities visited per message; the rest are left untouched and reported (default: 10000)", "N"},
        {"max-header-bytes", 0, 0, G_OPTION_ARG_INT64, &max_header,
         "Largest header block; a message with a larger one is passed through and reported (default: 1048576)",
         "BYTES"},
        {"max-time", 0, 0, G_OPTION_ARG_DOUBLE, &max_time,
         "Seconds the passes may spend on one message; past that it is passed through and reported "
         "(default: 60)",
         "SECONDS"},
        {"spool-threshold", 0, 0, G_OPTION_ARG_INT64, &spool,
         "Bytes of piped input held in memory before spooling to a temporary file (default: 8388608)", "BYTES"},
        {"config", 0, 0, G_OPTION_ARG_FILENAME, &config,
         "Read settings from a key file ([mimeuri] group; keys named as the long options) (default: none)", "FILE"},
        {"labels", 0, 0, G_OPTION_ARG_STRING, &labels,
         "Type labels: off, top (the top-level entity only; adding a header there keeps a DKIM body hash valid) "
         "or all (every part: this changes the body) (default: off)",
         "off|top|all"},
        {"label-header", 0, 0, G_OPTION_ARG_STRING, &label_header,
         "Header that carries the label (default: Content-Type-URI)", "NAME"},
        {"label-format", 0, 0, G_OPTION_ARG_STRING, &label_format,
         "Label form: a ContentType: URI (draft-eastlake-cturi) or a URC tag /type/subtype/attr:value "
         "(default: uri)",
         "uri|urc"},
        {"cid", 0, 0, G_OPTION_ARG_STRING, &cid,
         "cid: and Content-Location references in HTML: off, check (report), repair (fix malformed ones, "
         "turn location references into cid:), inline (data: URIs), extract (to --extract-dir) (default: repair)",
         "off|check|repair|inline|extract"},
        {"mid", 0, 0, G_OPTION_ARG_STRING, &mid,
         "mid: references: off, check or repair (default: check; repair with --mid-url)", "off|check|repair"},
        {"mid-url", 0, 0, G_OPTION_ARG_STRING, &mid_url,
         "Rewrite mid: links to a web archive; {id} is the %-encoded Message-ID; implies --mid=repair "
         "(default: none)",
         "TEMPLATE"},
        {"inline-types", 0, 0, G_OPTION_ARG_STRING, &inline_types,
         "Types --cid=inline may turn into data: URIs; text/html, SVG and scripts never "
         "(default: image/*,font/*,audio/*,video/*,text/css)",
         "LIST"},
        {"inline-max", 0, 0, G_OPTION_ARG_INT64, &inline_max,
         "Largest part (decoded bytes) --cid=inline inlines (default: 1048576)", "BYTES"},
        {"drop-inlined", 0, 0, G_OPTION_ARG_NONE, &drop_inlined,
         "Remove parts whose every reference was inlined (default: off)", nullptr},
        {"location-to-cid", 0, 0, G_OPTION_ARG_NONE, &location_to_cid,
         "Also rewrite valid Content-Location references (RFC 2557) to cid: URLs (repair leaves them as written)", nullptr},
        {"extract-dir", 0, 0, G_OPTION_ARG_FILENAME, &extract_dir,
         "With --cid=extract: write each message's HTML as DIR/N/index.html and its referenced parts beside "
         "it (default: none)",
         "DIR"},
        {"summary-header", 0, 0, G_OPTION_ARG_NONE, &summary_header,
         "Add a Mimeuri-Refs: resolved=N dangling=N ambiguous=N header to each message (default: off)", nullptr},
        {"html-max", 0, 0, G_OPTION_ARG_INT64, &html_max,
         "Largest HTML part (decoded bytes) searched for references; larger ones are reported (default: 33554432)",
         "BYTES"},
        {"max-refs", 0, 0, G_OPTION_ARG_INT64, &max_refs,
         "References looked at per HTML part; beyond, reported (default: 1000000)", "N"},
        {"external-body", 0, 0, G_OPTION_ARG_STRING, &external_body,
         "message/external-body parts: off, check (report only) or normalize (write access-type=URL the "
         "RFC 2017 way) (default: normalize)",
         "off|check|normalize"},
        {"url-map", 0, 0, G_OPTION_ARG_STRING_ARRAY, &url_maps,
         "Rewrite external-body URLs starting with FROM to start with TO; repeatable, first match wins "
         "(default: none)",
         "FROM=TO"},
        {"external-body-schemes", 0, 0, G_OPTION_ARG_STRING, &schemes,
         "URL schemes an external body may use; others (mailto, file, ...) are reported as disallowed "
         "(default: http,https,ftp,ftps,sftp,tftp)",
         "LIST"},
        {"legacy-to-url", 0, 0, G_OPTION_ARG_NONE, &legacy,
         "Convert anon-ftp, ftp and tftp access types to access-type=URL (default: off)", nullptr},
        {"jobs", 'j', 0, G_OPTION_ARG_INT64, &jobs,
         "Messages processed in parallel; output keeps input order (default: 1)", "N"},
        {"syslog", 0, 0, G_OPTION_ARG_NONE, &use_syslog,
         "Log one line per message (Message-ID, what changed) to syslog or journald, facility mail "
         "(default: off)",
         nullptr},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Log what each message went through (default: off)",
         nullptr},
        {"version", 'V', 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", nullptr},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, nullptr, "[FILE...]"},
        {nullptr, 0, 0, G_OPTION_ARG_NONE, nullptr, nullptr, nullptr},
    };
    std::unique_ptr<GOptionContext, OptionContextDeleter> ctx(
        g_option_context_new("[FILE...] - resolve cid:/mid: references, rewrite message/external-body URLs and "
                             "label MIME parts, losslessly"));
    g_option_context_add_main_entries(ctx.get(), entries, nullptr);
    g_option_context_set_description(
        ctx.get(), "With no FILE, or when FILE is -, read standard input.\n"
                   "Subcommands: mimeuri ct2uri [--label-format=urc] ARG..., mimeuri uri2ct ARG...\n"
                   "  map Content-Types and URIs (draft-eastlake-cturi); - reads one per line from stdin.\n"
                   "Exit status (sysexits.h): 0 ok, 64 usage, 65 data error (--strict, or empty input),\n"
                   "66 missing input, 70 internal error, 73 cannot create output, 74 I/O error,\n"
                   "75 temporary failure (--on-error=tempfail, full disk).");
    GError *err = nullptr;
    bool parsed = g_option_context_parse(ctx.get(), &argc, &argv, &err);
    auto cleanup = [&]() {
        g_free(on_error);
        g_free(signed_mode);
        g_free(format);
        g_free(output);
        g_free(report);
        g_free(passes);
        g_free(config);
        g_free(labels);
        g_free(label_header);
        g_free(label_format);
        g_free(external_body);
        g_free(cid);
        g_free(mid);
        g_free(mid_url);
        g_free(inline_types);
        g_free(extract_dir);
        g_free(changed_list);
        g_free(schemes);
        g_strfreev(url_maps);
        g_strfreev(rest);
    };
    if (!parsed) {
        cleanup();
        return Error::from_gerror(Code::Usage, err);
    }
    if (version) {
        cleanup();
        return Error{Code::Ok, "mimeuri " MIMEURI_VERSION};
    }
    Status s = ok();
    if (on_error && s) s = set_on_error(o, on_error);
    if (format && s) s = set_format(o, format);
    if (signed_mode && s) s = set_signed(o, signed_mode);
    if (passes && s) s = set_passes(o, passes);
    if (max_depth != -1 && s) s = set_max_depth(o, max_depth);
    if (max_parts != -1 && s) s = set_size(o.limits.max_parts, max_parts, "--max-parts");
    if (max_header != -1 && s) s = set_size(o.limits.max_header_bytes, max_header, "--max-header-bytes");
    if (max_time != -1 && s) {
        if (!(max_time > 0)) s = usage("--max-time must be positive");
        else o.limits.max_seconds = max_time;
    }
    if (spool != -1 && s) s = set_spool(o, spool);
    if (lock_timeout != -1 && s) {
        if (!(lock_timeout >= 0)) s = usage("--lock-timeout must not be negative");
        else o.lock_timeout = lock_timeout;
    }
    if (force_read_only) o.force_read_only = true;
    if (changed_list) o.changed_list = changed_list;
    if (labels && s) s = set_labels(o, labels);
    if (label_header && s) s = set_label_header(o, label_header);
    if (label_format && s) s = set_label_format(o, label_format);
    if (cid && s) s = set_cid(o, cid);
    if (mid && s) s = set_mid(o, mid);
    if (mid_url) {
        o.refs.mid_url = mid_url;
        if (!mid) o.refs.mid = RefOptions::Mid::Repair;
    }
    if (inline_types && s) s = set_list(o.refs.inline_types, inline_types);
    if (inline_max != -1 && s) s = set_size(o.refs.inline_max, inline_max, "--inline-max");
    if (html_max != -1 && s) s = set_size(o.refs.html_max, html_max, "--html-max");
    if (max_refs != -1 && s) s = set_size(o.refs.max_refs, max_refs, "--max-refs");
    if (jobs != -1) {
        if (jobs < 1 || jobs > 256) s = usage("--jobs must be between 1 and 256");
        else o.jobs = static_cast<int>(jobs);
    }
    if (use_syslog) o.syslog = true;
    if (drop_inlined) o.refs.drop_inlined = true;
    if (location_to_cid) o.refs.location_to_cid = true;
    if (summary_header) o.refs.summary_header = true;
    if (extract_dir) o.refs.extract_dir = extract_dir;
    if (external_body && s) s = set_external_body(o, external_body);
    if (schemes && s) s = set_schemes(o, schemes);
    if (url_maps && s) {
        o.external_body.url_map.clear(); // the command line replaces the configuration's list
        for (char **m = url_maps; *m && s; ++m) s = add_url_map(o, *m);
    }
    if (legacy) o.external_body.legacy_to_url = true;
    if (output) o.output = output;
    if (report) o.report_path = report;
    if (in_place) o.in_place = true;
    if (check) o.check = true;
    if (strict) o.strict = true;
    if (verbose) o.verbose = true;
    for (char **r = rest; r && *r; ++r) o.inputs.emplace_back(*r);
    cleanup();
    if (!s) return s.error();

    if (o.in_place && !o.output.empty()) return usage("--in-place and --output exclude each other");
    if (o.in_place && o.inputs.empty()) return usage("--in-place needs FILE arguments");
    for (const auto &in : o.inputs)
        if (o.in_place && in == "-") return usage("--in-place cannot rewrite standard input");
    if (!o.changed_list.empty() && !o.in_place) return usage("--changed-list needs --in-place");
    if (o.check && (o.in_place || !o.output.empty())) return usage("--check writes no messages; drop -o/--in-place");
    if (o.refs.cid == RefOptions::Cid::Extract && o.refs.extract_dir.empty())
        return usage("--cid=extract needs --extract-dir=DIR");
    if (!o.refs.mid_url.empty() && o.refs.mid_url.find("{id}") == std::string::npos)
        return usage("--mid-url needs {id} in its template");
    return o;
}

} // namespace mimeuri
