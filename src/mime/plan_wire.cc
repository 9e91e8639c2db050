// The plan on the wire (engine.hh: serialize, deserialize): what a worker process sends back
// for a message (--jobs, the milter service), every field of the Plan and of its report in
// order, as length-prefixed fields (record.hh).
#include "engine.hh"
#include "record.hh"
#include "streamed_body.hh"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace mimeuri {

namespace {

// --- The report on the wire: every entry field by field, in the order written. Each entry
// type lists its fields once (fields() below); a Writer puts them and a Reader gets them
// back in the same order, so the two directions cannot drift apart.

// Enum values read back are checked: bytes that are no value of the enum are refused.
template <class E> E get_enum(Record &r, E last)
{
    std::size_t v = r.get_size();
    if (v > static_cast<std::size_t>(last)) throw std::runtime_error("report: bad enum value");
    return static_cast<E>(v);
}

struct Writer {
    Record &r;
    void operator()(const std::string &v) { r.put(v); }
    void operator()(const bool &v) { r.put(static_cast<std::size_t>(v)); }
    void operator()(const std::optional<std::string> &v)
    {
        r.put(static_cast<std::size_t>(v.has_value()));
        if (v) r.put(*v);
    }
    void operator()(const std::optional<std::int64_t> &v) // 0 for none, else value + 1 (offsets are >= 0)
    {
        r.put(v ? static_cast<std::size_t>(*v) + 1 : 0);
    }
    void operator()(const std::optional<ExternalBodyEntry::Fields> &f)
    {
        r.put(static_cast<std::size_t>(f.has_value()));
        if (!f) return;
        r.put(f->size());
        for (const auto &[n, v] : *f) {
            r.put(n);
            r.put(v);
        }
    }
    template <class E> void operator()(const E &v, E) { r.put(static_cast<std::size_t>(v)); }
    template <class E> void operator()(const std::optional<E> &v, E) // 0 for none, else value + 1
    {
        r.put(v ? static_cast<std::size_t>(*v) + 1 : 0);
    }
};

struct Reader {
    Record &r;
    void operator()(std::string &v) { v = r.get(); }
    void operator()(bool &v) { v = r.get_size() != 0; }
    void operator()(std::optional<std::string> &v)
    {
        if (r.get_size() == 0) v.reset();
        else v = r.get();
    }
    void operator()(std::optional<std::int64_t> &v)
    {
        v.reset();
        if (std::size_t n = r.get_size()) v = static_cast<std::int64_t>(n - 1);
    }
    void operator()(std::optional<ExternalBodyEntry::Fields> &f)
    {
        f.reset();
        if (r.get_size() == 0) return;
        f.emplace();
        std::size_t n = r.get_size();
        for (std::size_t i = 0; i < n; ++i) {
            std::string name = r.get();
            f->emplace_back(std::move(name), r.get());
        }
    }
    template <class E> void operator()(E &v, E last) { v = get_enum(r, last); }
    template <class E> void operator()(std::optional<E> &v, E last)
    {
        v.reset();
        if (std::size_t n = r.get_size()) {
            if (n - 1 > static_cast<std::size_t>(last)) throw std::runtime_error("report: bad enum value");
            v = static_cast<E>(n - 1);
        }
    }
};

template <class E, class T> constexpr bool is = std::is_same_v<std::remove_const_t<E>, T>;

template <class Io, class E> void fields(Io &io, E &e)
{
    if constexpr (is<E, RefEntry>) {
        io(e.part), io(e.attr), io(e.url);
        io(e.kind, RefEntry::Kind::Location), io(e.status, RefEntry::Status::Ambiguous);
        io(e.matched), io(e.action, RefEntry::Action::Kept), io(e.reason);
        io(e.kept), io(e.target), io(e.target_message), io(e.target_source), io(e.target_offset);
    } else if constexpr (is<E, ExternalBodyEntry>) {
        io(e.part), io(e.access_type), io(e.url), io(e.url_before), io(e.inner), io(e.original), io(e.kept);
        io(e.status, ExternalBodyEntry::Status::Kept), io(e.reason);
    } else if constexpr (is<E, DataEntry>) {
        io(e.part), io(e.attr), io(e.type), io(e.size), io(e.sniffed), io(e.action, DataEntry::Action::Kept);
        io(e.reason), io(e.kept), io(e.cid);
    } else if constexpr (is<E, LabelEntry>) {
        io(e.part), io(e.label), io(e.kept);
    } else if constexpr (is<E, ErrorEntry>) {
        io(e.part), io(e.code, ErrorCode::Label), io(e.message);
    } else if constexpr (is<E, KeptEntry>) {
        io(e.part), io(e.edit), io(e.kept);
    } else if constexpr (is<E, UnreferencedEntry>) {
        io(e.part), io(e.related);
    } else {
        static_assert(is<E, SignatureEntry>, "an entry type with no field list");
        io(e.kind), io(e.part), io(e.state, SignatureEntry::State::Unverifiable), io(e.kept), io(e.domain), io(e.selector), io(e.detail);
    }
}

template <class T> void put_all(Record &r, const std::vector<T> &v)
{
    r.put(v.size());
    Writer w{r};
    for (const T &e : v) fields(w, e);
}

template <class T> std::vector<T> get_all(Record &r)
{
    std::vector<T> v(r.get_size());
    Reader rd{r};
    for (T &e : v) fields(rd, e);
    return v;
}

void put_report(Record &r, const MessageReport &rep)
{
    r.put(rep.index);
    r.put(rep.input_no);
    r.put(rep.source);
    r.put(static_cast<std::size_t>(rep.offset));
    r.put(rep.message_id);
    r.put(static_cast<std::size_t>(rep.changed));
    put_all(r, rep.refs);
    put_all(r, rep.external_bodies);
    put_all(r, rep.labels);
    put_all(r, rep.errors);
    r.put(rep.extras().size());
    for (MessageReport::Extra e : rep.extras()) r.put(static_cast<std::size_t>(e));
    put_all(r, rep.kept());
    put_all(r, rep.unreferenced());
    put_all(r, rep.signatures());
    put_all(r, rep.data());
}

MessageReport get_report(Record &r)
{
    MessageReport rep;
    rep.index = r.get_size();
    rep.input_no = r.get_size();
    rep.source = r.get();
    rep.offset = static_cast<std::int64_t>(r.get_size());
    rep.message_id = r.get();
    rep.changed = r.get_size() != 0;
    rep.refs = get_all<RefEntry>(r);
    rep.external_bodies = get_all<ExternalBodyEntry>(r);
    rep.labels = get_all<LabelEntry>(r);
    rep.errors = get_all<ErrorEntry>(r);
    std::vector<MessageReport::Extra> order(r.get_size());
    for (auto &e : order) e = get_enum(r, MessageReport::Extra::Data);
    auto kept = get_all<KeptEntry>(r);
    auto unref = get_all<UnreferencedEntry>(r);
    auto sigs = get_all<SignatureEntry>(r);
    rep.restore_extras(std::move(order), std::move(kept), std::move(unref), std::move(sigs));
    rep.restore_data(get_all<DataEntry>(r));
    return rep;
}

} // namespace

std::string serialize(const Plan &p)
{
    Record r;
    r.put(p.cause);
    r.put(p.message_id);
    r.put(static_cast<std::size_t>(p.unprocessed));
    r.put(p.dangling);
    r.put(p.dangling_mid);
    r.put(static_cast<std::size_t>(p.report.has_value()));
    if (p.report) put_report(r, *p.report);
    r.put(p.log_line);
    r.put(p.edits.size());
    for (const Edit &e : p.edits) {
        r.put(static_cast<std::size_t>(e.begin));
        r.put(static_cast<std::size_t>(e.end));
        r.put(e.text);
        r.put(e.streamed ? e.streamed->serialize() : std::string());
    }
    r.put(p.waits.size());
    for (const std::string &w : p.waits) r.put(w);
    r.put(p.output_dir);
    r.put(p.output_files.size());
    for (const OutputFile &f : p.output_files) {
        r.put(f.name);
        r.put(f.bytes);
    }
    r.put(p.output_number);
    r.put(p.output_row);
    return r.take();
}

Plan deserialize(std::string bytes)
{
    Record r(std::move(bytes));
    Plan p;
    p.cause = r.get();
    p.message_id = r.get();
    p.unprocessed = r.get_size() != 0;
    p.dangling = r.get_size();
    p.dangling_mid = r.get_size();
    if (r.get_size() != 0) p.report = get_report(r);
    p.log_line = r.get();
    std::size_t n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        Edit e;
        e.begin = static_cast<std::int64_t>(r.get_size());
        e.end = static_cast<std::int64_t>(r.get_size());
        e.text = r.get();
        if (std::string body = r.get(); !body.empty())
            e.streamed = std::make_shared<const StreamedBody>(StreamedBody::deserialize(std::move(body)));
        p.edits.push_back(std::move(e));
    }
    n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) p.waits.push_back(r.get());
    p.output_dir = r.get();
    n = r.get_size();
    for (std::size_t i = 0; i < n; ++i) {
        OutputFile f;
        f.name = r.get();
        f.bytes = r.get();
        p.output_files.push_back(std::move(f));
    }
    p.output_number = r.get_size();
    p.output_row = r.get();
    return p;
}

} // namespace mimeuri
