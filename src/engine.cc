#include "engine.hh"

#include "workers.hh"

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <stdexcept>

namespace mimeuri {

std::string serialize(const Plan &p)
{
    Record r;
    r.put(p.cause);
    r.put(p.message_id);
    r.put(static_cast<std::size_t>(p.unprocessed));
    r.put(p.dangling);
    r.put(p.dangling_mid);
    r.put(p.report_line);
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
    p.report_line = r.get();
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

// How many entries of a report array have member equal to one of values.
std::size_t count(JsonArray *a, const char *member, std::initializer_list<const char *> values)
{
    std::size_t n = 0;
    for (guint i = 0; i < json_array_get_length(a); ++i) {
        JsonObject *o = json_array_get_object_element(a, i);
        if (!json_object_has_member(o, member) || json_object_get_null_member(o, member)) continue;
        std::string v = json_object_get_string_member(o, member);
        for (const char *want : values) n += v == want;
    }
    return n;
}

// The one-line summary of a message (--syslog).
std::string describe(const MessageReport &rep)
{
    std::string out = rep.changed ? "changed" : "unchanged";
    std::size_t refs = count(rep.refs.get(), "action", {"repaired", "inlined", "extracted", "rewritten"});
    std::size_t ext = count(rep.external_bodies.get(), "status", {"normalized", "mapped", "converted"});
    std::size_t dangling = count(rep.refs.get(), "status", {"dangling"});
    if (refs) out += ", references rewritten=" + std::to_string(refs);
    if (dangling) out += ", dangling=" + std::to_string(dangling);
    if (ext) out += ", external bodies rewritten=" + std::to_string(ext);
    if (json_array_get_length(rep.labels.get())) out += ", labels=" + std::to_string(json_array_get_length(rep.labels.get()));
    if (rep.error_count()) out += ", problems=" + std::to_string(rep.error_count());
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

Engine::Engine(std::vector<std::unique_ptr<Pass>> &passes, EngineConfig cfg) : passes_(passes), cfg_(cfg) {}

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
    auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits);
    ctx->report().input_no = m.input_no;
    if (!ctx->message()) return;
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
        auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits);
        ctx->report().input_no = m.input_no;
        if (index_first && ctx->message())
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
    MessageReport &rep = ctx.report();
    protect_conflicting_types(ctx);                                         // before any pass,
    const Signatures signatures = Signatures::analyse(ctx, cfg_.signed_mode); // as signatures
    if (ctx.message()) {
        bool stop = false;
        for (auto &p : passes_) {
            plan.cause = apply_pass(*p, ctx, cfg_.inject_fault, stop);
            if (stop || plan.failed()) break;
        }
        if (!plan.failed())
            if (Status f = ctx.finish(); !f) {
                ctx.drop_edits();
                rep.add_error("", "content-length", f.error().message + "; message left untouched");
            }
    }
    signatures.report(ctx);
    plan.message_id = rep.message_id;
    if (plan.failed()) {
        rep.add_error("", "internal", plan.cause);
        rep.changed = false; // its original bytes are written (pass) or nothing (tempfail)
    } else {
        plan.edits = ctx.edits();
        plan.unprocessed = rep.error_count() > 0;
        plan.output_dir = ctx.output_dir;
        plan.output_files = ctx.output_files();
        plan.waits = ctx.waits();
    }
    for (guint k = 0; k < json_array_get_length(rep.refs.get()); ++k) {
        JsonObject *ref = json_array_get_object_element(rep.refs.get(), k);
        bool dangling = g_strcmp0(json_object_get_string_member(ref, "status"), "dangling") == 0;
        plan.dangling += dangling;
        plan.dangling_mid += dangling && g_strcmp0(json_object_get_string_member(ref, "kind"), "mid") == 0;
    }
    if (cfg_.report) plan.report_line = rep.to_json() + "\n";
    if (cfg_.summary) plan.log_line = describe(rep);
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
