#include "report.hh"

#include <algorithm>
#include <string_view>

namespace mimeuri {

const char *json_name(RefEntry::Kind k)
{
    switch (k) {
    case RefEntry::Kind::Cid: return "cid";
    case RefEntry::Kind::Mid: return "mid";
    case RefEntry::Kind::Location: return "location";
    }
    return "";
}

const char *json_name(RefEntry::Status s)
{
    switch (s) {
    case RefEntry::Status::Resolved: return "resolved";
    case RefEntry::Status::Dangling: return "dangling";
    case RefEntry::Status::Ambiguous: return "ambiguous";
    }
    return "";
}

const char *json_name(RefEntry::Action a)
{
    switch (a) {
    case RefEntry::Action::None: return "none";
    case RefEntry::Action::Repaired: return "repaired";
    case RefEntry::Action::Inlined: return "inlined";
    case RefEntry::Action::Extracted: return "extracted";
    case RefEntry::Action::Rewritten: return "rewritten";
    case RefEntry::Action::Kept: return "kept";
    }
    return "";
}

const char *json_name(SignatureEntry::State s)
{
    using S = SignatureEntry::State;
    static constexpr std::pair<S, const char *> kWords[] = {{S::Intact, "intact"}, {S::Broken, "broken"},
                                                            {S::Unverifiable, "unverifiable"}};
    for (const auto &[state, word] : kWords)
        if (state == s) return word;
    return "";
}

const char *json_name(ExternalBodyEntry::Status s)
{
    switch (s) {
    case ExternalBodyEntry::Status::Ok: return "ok";
    case ExternalBodyEntry::Status::Normalized: return "normalized";
    case ExternalBodyEntry::Status::Mapped: return "mapped";
    case ExternalBodyEntry::Status::Converted: return "converted";
    case ExternalBodyEntry::Status::Disallowed: return "disallowed";
    case ExternalBodyEntry::Status::Invalid: return "invalid";
    case ExternalBodyEntry::Status::Kept: return "kept";
    }
    return "";
}

void ExternalBodyEntry::set_field(Fields &fields, const std::string &name, const std::string &value)
{
    for (auto &[n, v] : fields)
        if (n == name) {
            v = value;
            return;
        }
    fields.emplace_back(name, value);
}

void MessageReport::add_error(const std::string &part, ErrorCode code, const std::string &message)
{
    errors.push_back({part, code, message});
}

void MessageReport::mark(Extra e)
{
    if (std::find(extras_.begin(), extras_.end(), e) == extras_.end()) extras_.push_back(e);
}

ReportSection &MessageReport::section(const ReportSectionType &t)
{
    if (ReportSection *s = sections_.find(t)) return *s;
    extras_.push_back(Extra::Section); // one for each: the next section in sections_ is written there
    return sections_.add(t);
}

void MessageReport::describe_sections(std::string &line) const
{
    for (const ReportSectionType *t : section_types())
        if (const ReportSection *s = sections_.find(*t)) s->describe(line);
}

void MessageReport::summary_words(std::string &value) const
{
    for (const ReportSectionType *t : section_types())
        if (const ReportSection *s = sections_.find(*t)) s->summary_words(value);
}

void MessageReport::add_kept(const std::string &part, const std::string &edit, const std::string &reason)
{
    mark(Extra::Kept);
    kept_.push_back({part, edit, reason});
}

void MessageReport::set_unreferenced(std::vector<UnreferencedEntry> entries)
{
    mark(Extra::Unreferenced);
    unreferenced_ = std::move(entries);
}

void MessageReport::set_signatures(std::vector<SignatureEntry> entries)
{
    mark(Extra::Signatures);
    signatures_ = std::move(entries);
}

void MessageReport::add_page(PageEntry entry)
{
    mark(Extra::Pages);
    pages_.push_back(std::move(entry));
}

// The pages are not written after all: no entry says they were.
void MessageReport::drop_pages()
{
    pages_.clear();
    extras_.erase(std::remove(extras_.begin(), extras_.end(), Extra::Pages), extras_.end());
}

std::size_t MessageReport::dangling() const
{
    return static_cast<std::size_t>(
        std::count_if(refs.begin(), refs.end(), [](const RefEntry &r) { return r.status == RefEntry::Status::Dangling; }));
}

std::size_t MessageReport::dangling_mid() const
{
    return static_cast<std::size_t>(std::count_if(refs.begin(), refs.end(), [](const RefEntry &r) {
        return r.status == RefEntry::Status::Dangling && r.kind == RefEntry::Kind::Mid;
    }));
}

std::size_t MessageReport::refs_rewritten() const
{
    using A = RefEntry::Action;
    return static_cast<std::size_t>(std::count_if(refs.begin(), refs.end(), [](const RefEntry &r) {
        return r.action == A::Repaired || r.action == A::Inlined || r.action == A::Extracted || r.action == A::Rewritten;
    }));
}

std::size_t MessageReport::external_bodies_rewritten() const
{
    using S = ExternalBodyEntry::Status;
    return static_cast<std::size_t>(std::count_if(external_bodies.begin(), external_bodies.end(), [](const ExternalBodyEntry &e) {
        return e.status == S::Normalized || e.status == S::Mapped || e.status == S::Converted;
    }));
}

void MessageReport::edits_dropped()
{
    changed = false;
    summary_header_set = false;
    drop_pages();
    for (RefEntry &r : refs)
        if (r.action != RefEntry::Action::Kept && r.action != RefEntry::Action::None) {
            r.action = RefEntry::Action::None;
            r.reason = "dropped"; // the message passes as it came; the error says why
        }
    for (const auto &s : sections_.all()) s->edits_dropped();
    for (ExternalBodyEntry &e : external_bodies) {
        using S = ExternalBodyEntry::Status;
        if (e.status != S::Normalized && e.status != S::Mapped && e.status != S::Converted) continue;
        e.status.reset();
        e.url = e.url_before; // what the output holds (none for a legacy access type)
    }
}

// --- JSON (json_writer.hh): the core's entries; each pass's section writes its own.

namespace {

void write_fields(JsonWriter &w, const ExternalBodyEntry::Fields &fields)
{
    w.begin_object();
    for (const auto &[n, v] : fields) w.key(n).string(v);
    w.end_object();
}

void write(JsonWriter &w, const RefEntry &r)
{
    w.begin_object();
    w.key("part").string(r.part);
    w.key("attr").string(r.attr);
    w.key("url").string(r.url);
    w.key("kind").string(json_name(r.kind));
    w.key("status").string(json_name(r.status));
    if (!r.matched.empty()) w.key("matched").string(r.matched);
    w.key("action").string(json_name(r.action));
    if (!r.reason.empty()) w.key("reason").string(r.reason);
    if (r.kept) w.key("kept").string(*r.kept);
    w.key("target").nullable(r.target);
    w.key("target_message").nullable(r.target_message);
    w.key("target_source").nullable(r.target_source);
    if (r.target_offset) w.key("target_offset").integer(*r.target_offset);
    else w.key("target_offset").null();
    w.end_object();
}

void write(JsonWriter &w, const ExternalBodyEntry &e)
{
    w.begin_object();
    w.key("part").string(e.part);
    w.key("access_type").nullable(e.access_type);
    w.key("url").nullable(e.url);
    w.key("url_before").nullable(e.url_before);
    if (e.inner) write_fields(w.key("inner"), *e.inner);
    if (e.original) write_fields(w.key("original"), *e.original);
    if (e.kept) w.key("kept").string(*e.kept);
    if (e.status) {
        w.key("status").string(json_name(*e.status));
        if (e.reason.empty()) w.key("reason").null();
        else w.key("reason").string(e.reason);
    }
    w.end_object();
}

void write(JsonWriter &w, const LabelEntry &l)
{
    w.begin_object();
    w.key("part").string(l.part);
    w.key("label").string(l.label);
    if (l.kept) w.key("kept").string(*l.kept);
    w.end_object();
}

void write(JsonWriter &w, const ErrorEntry &e)
{
    w.begin_object();
    w.key("part").string(e.part);
    w.key("code").string(json_name(e.code));
    w.key("message").string(e.message);
    w.end_object();
}

void write(JsonWriter &w, const KeptEntry &k)
{
    w.begin_object();
    w.key("part").string(k.part);
    w.key("edit").string(k.edit);
    w.key("kept").string(k.kept);
    w.end_object();
}

void write(JsonWriter &w, const UnreferencedEntry &u)
{
    w.begin_object();
    w.key("part").string(u.part);
    w.key("related").string(u.related);
    w.end_object();
}

void write(JsonWriter &w, const SignatureEntry &s)
{
    w.begin_object();
    w.key("kind").string(s.kind);
    w.key("part").string(s.part);
    w.key("state").string(json_name(s.state));
    w.key("kept").boolean(s.kept);
    if (!s.domain.empty()) w.key("domain").string(s.domain);
    if (!s.selector.empty()) w.key("selector").string(s.selector);
    if (!s.detail.empty()) w.key("detail").string(s.detail);
    w.end_object();
}

void write(JsonWriter &w, const PageEntry &p)
{
    w.begin_object();
    w.key("part").string(p.part);
    w.key("file").string(p.file);
    w.key("removed").begin_object();
    const std::pair<const char *, std::size_t> counts[] = {{"scripts", p.scripts}, {"handlers", p.handlers}, {"urls", p.urls},
                                                           {"refresh", p.refresh}, {"base", p.base},         {"frames", p.frames},
                                                           {"forms", p.forms},     {"remote", p.remote}};
    for (const auto &[name, n] : counts) w.key(name).integer(static_cast<std::int64_t>(n));
    w.end_object();
    w.end_object();
}

// The entries of one list written at most (list_max: MessageReport::kListMax); how many
// more each list has goes in "omitted".
using Omitted = std::vector<std::pair<std::string_view, std::size_t>>;

// A list of n entries, entry(k) writing the k-th.
template <class F>
void write_list(JsonWriter &w, std::string_view name, std::size_t n, F entry, Omitted &omitted, std::size_t list_max)
{
    w.key(name).begin_array();
    const std::size_t shown = std::min(n, list_max);
    for (std::size_t k = 0; k < shown; ++k) {
        entry(k);
        w.entry_done();
    }
    w.end_array();
    if (n > shown) omitted.emplace_back(name, n - shown);
}

template <class T>
void write_array(JsonWriter &w, const char *name, const std::vector<T> &entries, Omitted &omitted, std::size_t list_max)
{
    write_list(w, name, entries.size(), [&](std::size_t k) { write(w, entries[k]); }, omitted, list_max);
}

// A pass's section, as the core's lists are written.
void write_section(JsonWriter &w, const ReportSection &s, Omitted &omitted, std::size_t list_max)
{
    write_list(w, s.type().name, s.size(), [&](std::size_t k) { s.write_entry(w, k); }, omitted, list_max);
}

} // namespace

std::string MessageReport::to_json(std::size_t list_max) const
{
    std::string out;
    out.reserve(256 + std::min(refs.size(), list_max) * 200);
    (void)write_json(out, nullptr, list_max);
    return out;
}

Status MessageReport::write_json(std::string &out, const std::function<Status(std::string &)> *flush,
                                 std::size_t list_max) const
{
    JsonWriter w(out, flush);
    w.begin_object();
    w.key("index").integer(static_cast<std::int64_t>(number));
    w.key("source").string(source);
    if (!queue_id.empty()) w.key("queue_id").string(queue_id);
    if (!policy.empty()) w.key("policy").string(policy);
    w.key("offset").integer(offset);
    if (message_id.empty()) w.key("message_id").null();
    else w.key("message_id").string(message_id);
    w.key("changed").boolean(changed);
    Omitted omitted;
    write_array(w, "refs", refs, omitted, list_max);
    write_array(w, "external_bodies", external_bodies, omitted, list_max);
    write_array(w, "labels", labels, omitted, list_max);
    write_array(w, "errors", errors, omitted, list_max);
    std::size_t next_section = 0;
    for (Extra e : extras_) {
        switch (e) {
        case Extra::Kept: write_array(w, "kept", kept_, omitted, list_max); break;
        case Extra::Unreferenced: write_array(w, "unreferenced", unreferenced_, omitted, list_max); break;
        case Extra::Signatures: write_array(w, "signatures", signatures_, omitted, list_max); break;
        case Extra::Pages: write_array(w, "pages", pages_, omitted, list_max); break;
        case Extra::Section:
            if (next_section < sections().size()) write_section(w, *sections()[next_section++], omitted, list_max);
            break;
        }
    }
    if (!omitted.empty()) {
        w.key("omitted").begin_object();
        for (const auto &[name, n] : omitted) w.key(name).integer(static_cast<std::int64_t>(n));
        w.end_object();
    }
    w.end_object();
    return w.status();
}

} // namespace mimeuri
