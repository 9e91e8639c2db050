#include "report.hh"

#include "gobj.hh"

#include <glib.h>

#include <algorithm>
#include <cstdlib>
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

const char *json_name(DataEntry::Action a)
{
    switch (a) {
    case DataEntry::Action::None: return "none";
    case DataEntry::Action::Attached: return "attached";
    case DataEntry::Action::Kept: return "kept";
    }
    return "";
}

const char *json_name(RelatedEntry::Action a)
{
    switch (a) {
    case RelatedEntry::Action::None: return "none";
    case RelatedEntry::Action::Moved: return "moved";
    case RelatedEntry::Action::Marked: return "marked";
    case RelatedEntry::Action::Kept: return "kept";
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

void MessageReport::add_related(RelatedEntry entry)
{
    mark(Extra::Related);
    related_.push_back(std::move(entry));
}

void MessageReport::add_data(DataEntry entry)
{
    mark(Extra::Data);
    data_.push_back(std::move(entry));
}

void MessageReport::add_page(PageEntry entry)
{
    mark(Extra::Pages);
    pages_.push_back(std::move(entry));
}

void MessageReport::add_pass_entry(const std::string &section, std::vector<PassField> entry)
{
    auto it = std::find_if(pass_sections_.begin(), pass_sections_.end(), [&](const PassSection &p) { return p.name == section; });
    if (it == pass_sections_.end()) it = pass_sections_.insert(pass_sections_.end(), PassSection{section, {}});
    it->entries.push_back(std::move(entry));
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

std::size_t MessageReport::data_attached() const
{
    return static_cast<std::size_t>(
        std::count_if(data_.begin(), data_.end(), [](const DataEntry &e) { return e.action == DataEntry::Action::Attached; }));
}

std::size_t MessageReport::related_moved() const
{
    return static_cast<std::size_t>(
        std::count_if(related_.begin(), related_.end(), [](const RelatedEntry &e) { return e.action == RelatedEntry::Action::Moved; }));
}

std::size_t MessageReport::related_marked() const
{
    return static_cast<std::size_t>(
        std::count_if(related_.begin(), related_.end(), [](const RelatedEntry &e) { return e.action == RelatedEntry::Action::Marked; }));
}

void MessageReport::extraction_failed(const std::string &cause)
{
    changed = false;
    for (RefEntry &r : refs)
        if (r.action == RefEntry::Action::Extracted) {
            r.action = RefEntry::Action::None;
            r.reason = "extract"; // the error says why
        }
    drop_pages();
    add_error("", ErrorCode::Extract, cause);
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
    for (RelatedEntry &r : related_)
        if (r.action == RelatedEntry::Action::Moved || r.action == RelatedEntry::Action::Marked) {
            r.action = RelatedEntry::Action::None;
            r.reason = "dropped";
        }
    for (ExternalBodyEntry &e : external_bodies) {
        using S = ExternalBodyEntry::Status;
        if (e.status != S::Normalized && e.status != S::Mapped && e.status != S::Converted) continue;
        e.status.reset();
        e.url = e.url_before; // what the output holds (none for a legacy access type)
    }
}

// --- JSON, written as it goes (no tree): a member at a time into one string, strings made
// valid UTF-8 first (header bytes from the wild may be anything) and escaped by table. The
// bytes are those json-glib's generator wrote before (tests/test_report.cc holds the two
// side by side), but for U+001F, which json-glib wrote raw (invalid JSON) and this escapes.

namespace {

// The escape of each ASCII octet: empty for the octets written as they are.
struct EscapeTable {
    char text[128][7]{};
    constexpr EscapeTable()
    {
        const char hex[] = "0123456789abcdef";
        for (int c = 0; c < 0x20; ++c) {
            const char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            for (int k = 0; k < 7; ++k) text[c][k] = u[k];
        }
        auto set = [this](int c, char e) {
            text[c][0] = '\\';
            text[c][1] = e;
            text[c][2] = 0;
        };
        set('\b', 'b');
        set('\f', 'f');
        set('\n', 'n');
        set('\r', 'r');
        set('\t', 't');
        set('"', '"');
        set('\\', '\\');
        const char del[7] = {'\\', 'u', '0', '0', '7', 'f', 0}; // as json-glib writes it
        for (int k = 0; k < 7; ++k) text[0x7f][k] = del[k];
    }
};
constexpr EscapeTable escapes;

// One JSON object or array after another, members separated by commas: begin and end what
// is open, name each member. Adding a field to an entry is one more call.
class JsonWriter {
public:
    explicit JsonWriter(std::string &out, const std::function<Status(std::string &)> *flush = nullptr)
        : out_(out), flush_(flush)
    {
    }
    // Between entries: what is written so far handed on once it is 64 KiB, so that a line
    // with many entries is never held whole. The first error sticks and stops the handing on.
    void entry_done()
    {
        if (flush_ && status_ && out_.size() >= (std::size_t{64} << 10)) status_ = (*flush_)(out_);
    }
    const Status &status() const { return status_; }

    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }
    // A member's name; the value follows.
    JsonWriter &key(std::string_view name)
    {
        separate();
        quoted(name);
        out_ += ':';
        pending_value_ = true;
        return *this;
    }
    void string(std::string_view v)
    {
        separate();
        quoted(v);
    }
    void null()
    {
        separate();
        out_ += "null";
    }
    void nullable(const std::optional<std::string> &v) { v ? string(*v) : null(); }
    void boolean(bool v)
    {
        separate();
        out_ += v ? "true" : "false";
    }
    void integer(std::int64_t v)
    {
        separate();
        out_ += std::to_string(v);
    }

private:
    void open(char c)
    {
        separate();
        out_ += c;
        first_ = true;
    }
    void close(char c)
    {
        out_ += c;
        first_ = false;
    }
    // A comma before every value in an object or array but its first; none after a key.
    void separate()
    {
        if (pending_value_) pending_value_ = false;
        else if (!first_) out_ += ',';
        first_ = false;
    }
    void quoted(std::string_view v)
    {
        out_ += '"';
        const std::size_t mark = out_.size();
        if (!escaped(v, true)) { // not ASCII text: made valid UTF-8 first (a NUL replaced too)
            out_.resize(mark);
            GCharPtr valid;
            if (!g_utf8_validate_len(v.data(), v.size(), nullptr)) {
                valid.reset(g_utf8_make_valid(v.data(), static_cast<gssize>(v.size())));
                v = valid.get();
            }
            escaped(v, false);
        }
        out_ += '"';
    }
    // Appends v escaped; with ascii, stops (false) at the first octet that is not ASCII or NUL.
    bool escaped(std::string_view v, bool ascii)
    {
        std::size_t run = 0; // octets since the last escape, appended at once
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto u = static_cast<unsigned char>(v[i]);
            if (ascii && (u >= 128 || u == 0)) return false;
            if (u >= 128 || !escapes.text[u][0]) continue;
            out_.append(v.data() + run, i - run).append(escapes.text[u]);
            run = i + 1;
        }
        out_.append(v.data() + run, v.size() - run);
        return true;
    }

    std::string &out_;
    const std::function<Status(std::string &)> *flush_;
    Status status_ = ok();
    bool first_{true};
    bool pending_value_{false};
};

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

void write(JsonWriter &w, const DataEntry &d)
{
    w.begin_object();
    w.key("part").string(d.part);
    w.key("attr").string(d.attr);
    w.key("type").string(d.type);
    if (d.size) w.key("size").integer(*d.size);
    else w.key("size").null();
    if (!d.sniffed.empty()) w.key("sniffed").string(d.sniffed);
    w.key("action").string(json_name(d.action));
    if (!d.reason.empty()) w.key("reason").string(d.reason);
    if (d.kept) w.key("kept").string(*d.kept);
    if (!d.cid.empty()) w.key("cid").string(d.cid);
    w.end_object();
}

void write(JsonWriter &w, const RelatedEntry &r)
{
    w.begin_object();
    w.key("part").string(r.part);
    w.key("url").string(r.url);
    w.key("target").string(r.target);
    if (r.related) w.key("related").string(*r.related);
    else w.key("related").null();
    w.key("outside").boolean(r.outside);
    if (r.disposition) w.key("disposition").string(*r.disposition);
    else w.key("disposition").null();
    w.key("action").string(json_name(r.action));
    if (!r.reason.empty()) w.key("reason").string(r.reason);
    if (r.kept) w.key("kept").string(*r.kept);
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

void write(JsonWriter &w, const std::vector<PassField> &e)
{
    w.begin_object();
    for (const PassField &f : e) {
        if (f.number) w.key(f.key).integer(std::strtoll(f.value.c_str(), nullptr, 10));
        else w.key(f.key).string(f.value);
    }
    w.end_object();
}

// The entries of one list written at most (list_max: MessageReport::kListMax); how many
// more each list has goes in "omitted".
using Omitted = std::vector<std::pair<const char *, std::size_t>>;

template <class T>
void write_array(JsonWriter &w, const char *name, const std::vector<T> &entries, Omitted &omitted, std::size_t list_max)
{
    w.key(name).begin_array();
    const std::size_t shown = std::min(entries.size(), list_max);
    for (std::size_t k = 0; k < shown; ++k) {
        write(w, entries[k]);
        w.entry_done();
    }
    w.end_array();
    if (entries.size() > shown) omitted.emplace_back(name, entries.size() - shown);
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
    for (Extra e : extras_) {
        switch (e) {
        case Extra::Kept: write_array(w, "kept", kept_, omitted, list_max); break;
        case Extra::Unreferenced: write_array(w, "unreferenced", unreferenced_, omitted, list_max); break;
        case Extra::Signatures: write_array(w, "signatures", signatures_, omitted, list_max); break;
        case Extra::Data: write_array(w, "data", data_, omitted, list_max); break;
        case Extra::Related: write_array(w, "related", related_, omitted, list_max); break;
        case Extra::Pages: write_array(w, "pages", pages_, omitted, list_max); break;
        }
    }
    for (const PassSection &p : pass_sections_) write_array(w, p.name.c_str(), p.entries, omitted, list_max);
    if (!omitted.empty()) {
        w.key("omitted").begin_object();
        for (const auto &[name, n] : omitted) w.key(name).integer(static_cast<std::int64_t>(n));
        w.end_object();
    }
    w.end_object();
    return w.status();
}

} // namespace mimeuri
