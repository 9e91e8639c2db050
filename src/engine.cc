#include "engine.hh"

#include "workers.hh"

#include <algorithm>
#include <exception>
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
    } else if constexpr (is<E, LabelEntry>) {
        io(e.part), io(e.label), io(e.kept);
    } else if constexpr (is<E, ErrorEntry>) {
        io(e.part), io(e.code), io(e.message);
    } else if constexpr (is<E, KeptEntry>) {
        io(e.part), io(e.edit), io(e.kept);
    } else if constexpr (is<E, UnreferencedEntry>) {
        io(e.part), io(e.related);
    } else {
        static_assert(is<E, SignatureEntry>, "an entry type with no field list");
        io(e.kind), io(e.part), io(e.state), io(e.kept), io(e.domain), io(e.selector), io(e.detail);
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
    for (auto &e : order) e = get_enum(r, MessageReport::Extra::Signatures);
    auto kept = get_all<KeptEntry>(r);
    auto unref = get_all<UnreferencedEntry>(r);
    auto sigs = get_all<SignatureEntry>(r);
    rep.restore_extras(std::move(order), std::move(kept), std::move(unref), std::move(sigs));
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
    }
    r.put(p.waits.size());
    for (const std::string &w : p.waits) r.put(w);
    r.put(p.output_dir);
    r.put(p.output_files.size());
    for (const OutputFile &f : p.output_files) {
        r.put(f.name);
        r.put(f.bytes);
    }
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
    return p;
}

namespace {

// The one-line summary of a message (--syslog).
std::string describe(const MessageReport &rep)
{
    using A = RefEntry::Action;
    using S = ExternalBodyEntry::Status;
    std::string out = rep.changed ? "changed" : "unchanged";
    auto refs = std::count_if(rep.refs.begin(), rep.refs.end(), [](const RefEntry &r) {
        return r.action == A::Repaired || r.action == A::Inlined || r.action == A::Extracted || r.action == A::Rewritten;
    });
    auto ext = std::count_if(rep.external_bodies.begin(), rep.external_bodies.end(), [](const ExternalBodyEntry &e) {
        return e.status == S::Normalized || e.status == S::Mapped || e.status == S::Converted;
    });
    std::size_t dangling = rep.dangling();
    if (refs) out += ", references rewritten=" + std::to_string(refs);
    if (dangling) out += ", dangling=" + std::to_string(dangling);
    if (ext) out += ", external bodies rewritten=" + std::to_string(ext);
    if (!rep.labels.empty()) out += ", labels=" + std::to_string(rep.labels.size());
    if (rep.error_count()) out += ", problems=" + std::to_string(rep.error_count());
    // The causes, in the command line's words: which limit, what could not be read, which
    // signature kept which edit out.
    for (const ErrorEntry &e : rep.errors) out += "; " + (e.part.empty() ? std::string() : "part " + e.part + ": ") + e.message;
    for (const SignatureEntry &s : rep.signatures()) {
        if (!s.kept) continue;
        out += "; kept under " + s.kind + " signature" + (s.domain.empty() ? std::string() : " d=" + s.domain) +
               (s.selector.empty() ? std::string() : " s=" + s.selector) + (s.part.empty() ? std::string() : " (part " + s.part + ")");
    }
    return out;
}

// Runs one pass; returns the cause when it failed. A limit (time) or input the pass finds
// invalid is not a failure: the message stays as it came, reported (a retry would meet the
// same input); `stop` is set. Other errors (I/O, a bug) are, handled per --on-error.
std::string apply_pass(Pass &p, MessageContext &ctx, bool inject_fault, bool &stop)
{
    try {
        if (inject_fault) throw std::runtime_error("injected fault (MIMEURI_FAULT=pass)");
        Status r = p.apply(ctx);
        if (!r && (r.error().kind == Kind::Limit || r.error().kind == Kind::Invalid)) {
            ctx.drop_edits();
            ctx.report().edits_dropped();
            ctx.report().add_error("", r.error().kind == Kind::Limit ? "limit" : "invalid",
                                   std::string(p.name()) + ": " + r.error().message);
            stop = true;
            return {};
        }
        if (!r) return std::string(p.name()) + ": " + r.error().message;
    } catch (const std::exception &ex) {
        return std::string(p.name()) + ": internal error: " + ex.what();
    } catch (...) {
        return std::string(p.name()) + ": internal error";
    }
    return {};
}

} // namespace

Engine::Engine(std::vector<std::unique_ptr<Pass>> &passes, EngineConfig cfg) : passes_(passes), cfg_(cfg)
{
    for (auto &p : passes_) {
        auto types = p->edited_types();
        edits_any_ = edits_any_ || types.empty();
        inert_.types.insert(inert_.types.end(), types.begin(), types.end());
    }
    // The scanned types: those that only passes editing where a reference may be edit (a type
    // another pass also edits stays a plain one), checked against the smallest of their limits.
    for (const std::string &t : inert_.types) {
        bool scanned = true;
        std::size_t most = SIZE_MAX;
        for (auto &p : passes_) {
            auto types = p->edited_types();
            if (std::find(types.begin(), types.end(), t) == types.end()) continue;
            const std::size_t up_to = p->edits_only_references_up_to();
            scanned = scanned && up_to > 0;
            most = std::min(most, up_to);
        }
        if (scanned && std::find(inert_.scanned_types.begin(), inert_.scanned_types.end(), t) == inert_.scanned_types.end()) {
            inert_.scanned_types.push_back(t);
            inert_.scan_max = inert_.scan_max ? std::min(inert_.scan_max, most) : most;
        }
    }
}

const InertCheck *Engine::inert_check() const
{
    if (!cfg_.copy_inert || cfg_.report || cfg_.summary || cfg_.inject_fault || edits_any_) return nullptr;
    return &inert_;
}

bool Engine::wants_index() const
{
    return std::any_of(passes_.begin(), passes_.end(), [](const auto &p) { return p->wants_index(); });
}

bool Engine::ordered() const
{
    return std::any_of(passes_.begin(), passes_.end(), [](const auto &p) { return p->ordered(); });
}

void Engine::index(const MessageAt &m)
{
    auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits, inert_check());
    ctx->report().input_no = m.input_no;
    if (!ctx->message() && !ctx->headers_only()) return;
    for (auto &p : passes_)
        if (p->wants_index()) (void)p->index(*ctx);
}

std::string Engine::save_index() const
{
    Record r;
    for (auto &p : passes_) r.put(p->save_index());
    return r.take();
}

void Engine::merge_index(std::string bytes)
{
    if (bytes.empty()) return; // a worker with nothing to share
    Record r(std::move(bytes));
    for (auto &p : passes_)
        if (std::string part = r.get(); !part.empty()) p->merge_index(part);
}

Plan Engine::plan(const MessageAt &m, bool index_first)
{
    try {
        auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits, inert_check());
        ctx->report().input_no = m.input_no;
        if (index_first && (ctx->message() || ctx->headers_only()))
            for (auto &p : passes_)
                if (p->wants_index()) (void)p->index(*ctx);
        return plan_parsed(*ctx);
    } catch (const std::exception &ex) {
        Plan plan;
        plan.cause = std::string("internal error: ") + ex.what();
        return plan;
    }
}

// The passes over a parsed message, then what the run keeps of it.
Plan Engine::plan_parsed(MessageContext &ctx)
{
    Plan plan;
    if (ctx.headers_only()) { // no pass can change it, nothing to report: copied as it came
        plan.message_id = ctx.report().message_id;
        return plan;
    }
    MessageReport &rep = ctx.report();
    protect_conflicting_types(ctx); // before any pass, as signatures
    // The signatures are analysed before any pass asks about or edits what they cover; with
    // no report to list them, only then (MessageContext::defer_protections): a message no
    // pass edits skips the analysis (a DKIM body hash reads the whole body).
    std::optional<Signatures> signatures;
    const SignedMode mode = cfg_.signed_mode;
    if (cfg_.report) signatures = Signatures::analyse(ctx, mode);
    else ctx.defer_protections([&signatures, &ctx, mode] { signatures = Signatures::analyse(ctx, mode); });
    if (ctx.message()) {
        bool stop = false;
        for (auto &p : passes_) {
            plan.cause = apply_pass(*p, ctx, cfg_.inject_fault, stop);
            if (stop || plan.failed()) break;
        }
        if (!plan.failed())
            if (Status f = ctx.finish(); !f) {
                ctx.drop_edits();
                rep.edits_dropped();
                rep.add_error("", "content-length", f.error().message + "; message left untouched");
            }
    }
    ctx.defer_protections(nullptr); // the analysis is no longer needed (nor its captures alive)
    if (signatures) signatures->report(ctx);
    plan.message_id = rep.message_id;
    if (plan.failed()) {
        rep.add_error("", "internal", plan.cause);
        rep.edits_dropped(); // its original bytes are written (pass) or nothing (tempfail)
    } else {
        plan.edits = ctx.edits();
        plan.unprocessed = rep.error_count() > 0;
        plan.output_dir = ctx.output_dir;
        plan.output_files = ctx.output_files();
        plan.waits = ctx.waits();
    }
    plan.dangling = rep.dangling();
    plan.dangling_mid = rep.dangling_mid();
    if (cfg_.summary) plan.log_line = describe(rep);
    if (cfg_.report) plan.report = std::move(rep); // the context is done with it
    return plan;
}

bool Engine::worth_replanning(const Plan &p) const
{
    if (p.dangling_mid == 0) return false;
    if (p.waits.empty()) return true; // nothing said what it waits for
    for (const std::string &key : p.waits)
        for (auto &pass : passes_)
            if (pass->wants_index() && pass->now_known(key)) return true;
    return false;
}

Plan plan_message(Engine &engine, std::string_view bytes, const std::string &name)
{
    Source src = Source::from_bytes(bytes, name);
    Segment seg;
    seg.msg_end = seg.next = static_cast<std::int64_t>(bytes.size());
    if (engine.wants_index()) engine.index({src, seg, 1, false, 0});
    return engine.plan({src, seg, 1, false, 0});
}

std::string apply_edits(std::string_view bytes, const std::vector<Edit> &edits)
{
    std::vector<const Edit *> sorted;
    for (const Edit &e : edits) sorted.push_back(&e);
    std::sort(sorted.begin(), sorted.end(), [](const Edit *a, const Edit *b) { return a->begin < b->begin; });
    std::string out;
    std::int64_t at = 0;
    for (const Edit *e : sorted) {
        if (e->begin < at || e->end < e->begin || e->end > static_cast<std::int64_t>(bytes.size()))
            throw std::invalid_argument("edits overlap or lie outside the message");
        out.append(bytes.substr(static_cast<std::size_t>(at), static_cast<std::size_t>(e->begin - at)));
        out += e->text;
        at = e->end;
    }
    out.append(bytes.substr(static_cast<std::size_t>(at)));
    return out;
}

} // namespace mimeuri
