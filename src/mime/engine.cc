// engine: one message in, a Plan out (engine.hh).
//
// SYNOPSIS  Engine::plan(m): parse (MessageContext), signatures, the passes, finish;
//           Engine::inert_check(): what parse may copy without a full parse; plan_message(
//           engine, bytes): a message held in memory (a service); apply_edits(bytes, edits).
// The plan's wire format is src/mime/plan_wire.cc's.
#include "engine.hh"

#include "record.hh"
#include "streamed_body.hh"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <type_traits>

namespace mimeuri {

namespace {

// The one-line summary of a message (--syslog).
std::string describe(const MessageReport &rep)
{
    std::string out = rep.changed ? "changed" : "unchanged";
    const std::size_t refs = rep.refs_rewritten(), ext = rep.external_bodies_rewritten();
    std::size_t dangling = rep.dangling();
    if (refs) out += ", references rewritten=" + std::to_string(refs);
    if (dangling) out += ", dangling=" + std::to_string(dangling);
    if (ext) out += ", external bodies rewritten=" + std::to_string(ext);
    if (!rep.labels.empty()) out += ", labels=" + std::to_string(rep.labels.size());
    rep.describe_sections(out); // each pass's own section: what it says it did
    if (rep.changed && rep.summary_header_set) out += ", Mimeuri-Refs field set (--summary-header)";
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
            ctx.report().add_error("", r.error().kind == Kind::Limit ? ErrorCode::Limit : ErrorCode::Invalid,
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
    std::vector<InertHint> hints;
    for (auto &p : passes_) {
        hints.push_back(p->inert_hint());
        skipped_.push_back(hints.back().reports_only && !cfg_.report && !cfg_.summary);
        const auto &types = hints.back().edited_types;
        edits_any_ = edits_any_ || types.empty();
        inert_.types.insert(inert_.types.end(), types.begin(), types.end());
        CrossMessageIndex *ix = p->cross_message();
        index_wanted_ = index_wanted_ || (ix && (cfg_.report || cfg_.summary || ix->edits_from_index()));
    }
    inert_.index = index_wanted_;
    // The scanned types: those that only passes editing where a reference may be edit (a type
    // another pass also edits stays a plain one), checked against the smallest of their limits.
    for (const std::string &t : inert_.types) {
        bool scanned = true;
        std::size_t most = SIZE_MAX;
        for (const InertHint &h : hints) {
            if (std::find(h.edited_types.begin(), h.edited_types.end(), t) == h.edited_types.end()) continue;
            scanned = scanned && h.references_up_to > 0;
            most = std::min(most, h.references_up_to);
        }
        if (scanned && std::find(inert_.scanned_types.begin(), inert_.scanned_types.end(), t) == inert_.scanned_types.end()) {
            inert_.scanned_types.push_back(t);
            inert_.scan_max = inert_.scan_max ? std::min(inert_.scan_max, most) : most;
        }
    }
    // The scanning passes say what may hold a reference (the core knows no pass's format).
    std::vector<std::function<bool(std::string_view)>> scanners;
    for (const InertHint &h : hints)
        if (h.references_up_to > 0 && h.may_hold_reference) scanners.push_back(h.may_hold_reference);
    inert_.may_hold_reference = [scanners](std::string_view bytes) {
        return std::any_of(scanners.begin(), scanners.end(), [&](const auto &may_hold) { return may_hold(bytes); });
    };
    // The HTML part each pass that may edit proves it leaves alone (the check runs only where
    // nothing is reported: Engine::inert_check, so a reports_only pass is not run then); a
    // pass that cannot prove it, only where its prefilter clears the part and no Content-ID
    // inside a multipart/related lets any URL name a part.
    struct Prover {
        std::function<bool(std::string_view)> may_hold;
        std::function<bool(std::string_view, std::string_view, const InertIds &)> proves;
    };
    std::vector<Prover> provers;
    for (std::size_t i = 0; i < hints.size(); ++i)
        if (hints[i].references_up_to > 0 && hints[i].may_hold_reference && !hints[i].reports_only)
            provers.push_back({hints[i].may_hold_reference, hints[i].nothing_to_edit});
    inert_.nothing_to_edit = [provers](std::string_view html, std::string_view charset, const InertIds &ids) {
        return std::all_of(provers.begin(), provers.end(), [&](const Prover &p) {
            if (p.proves) return p.proves(html, charset, ids);
            return !ids.related && !p.may_hold(html);
        });
    };
}

const InertCheck *Engine::inert_check() const
{
    if (!cfg_.copy_inert || cfg_.report || cfg_.summary || cfg_.inject_fault || edits_any_) return nullptr;
    return &inert_;
}

void Engine::index_parsed(const MessageContext &ctx)
{
    for (auto &p : passes_)
        if (CrossMessageIndex *ix = p->cross_message()) ix->add(ctx);
}

void Engine::index(const MessageAt &m)
{
    if (!index_wanted_) return;
    auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits, inert_check(), m.input_no);
    if (!ctx->message() && !ctx->headers_only()) return;
    index_parsed(*ctx);
}

std::string Engine::save_index() const
{
    Record r;
    for (auto &p : passes_) {
        const CrossMessageIndex *ix = p->cross_message();
        r.put(ix ? ix->save() : std::string());
    }
    return r.take();
}

void Engine::merge_index(std::string bytes)
{
    if (bytes.empty()) return; // a worker with nothing to share
    Record r(std::move(bytes));
    for (auto &p : passes_)
        if (std::string part = r.get(); !part.empty())
            if (CrossMessageIndex *ix = p->cross_message()) ix->merge(part);
}

Plan Engine::plan(const MessageAt &m, bool index_first)
{
    try {
        auto ctx = MessageContext::parse(m.src, m.seg, m.number, m.in_mbox, cfg_.limits, inert_check(), m.input_no);
        if (index_first && index_wanted_ && (ctx->message() || ctx->headers_only())) index_parsed(*ctx);
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
        for (std::size_t i = 0; i < passes_.size() && !stop && !plan.failed(); ++i)
            if (!skipped_[i]) plan.cause = apply_pass(*passes_[i], ctx, cfg_.inject_fault, stop);
        for (auto &step : ctx.take_after_passes())
            if (!stop && !plan.failed())
                if (Status s = step(); !s) plan.cause = s.error().message;
        if (!plan.failed())
            if (Status f = ctx.finish(); !f) {
                ctx.drop_edits();
                rep.edits_dropped();
                rep.add_error("", ErrorCode::ContentLength, f.error().message + "; message left untouched");
            }
    }
    ctx.defer_protections(nullptr); // the analysis is no longer needed (nor its captures alive)
    if (signatures) signatures->report(ctx);
    plan.message_id = rep.message_id;
    if (plan.failed()) {
        rep.add_error("", ErrorCode::Internal, plan.cause);
        rep.edits_dropped(); // its original bytes are written (pass) or nothing (tempfail)
    } else {
        plan.edits = ctx.edits();
        plan.unprocessed = rep.error_count() > 0;
        plan.at_take = ctx.at_take();
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
            if (const CrossMessageIndex *ix = pass->cross_message(); ix && ix->now_known(key)) return true;
    return false;
}

Plan plan_message(Engine &engine, const Source &src)
{
    Segment seg;
    seg.msg_end = seg.next = src.size();
    if (engine.wants_index()) engine.index({src, seg, 1, false, 0});
    return engine.plan({src, seg, 1, false, 0});
}

Plan plan_message(Engine &engine, std::string_view bytes, const std::string &name)
{
    return plan_message(engine, Source::from_bytes(bytes, name));
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
        auto text = edit_text(*e, reader_of(bytes));
        if (!text) throw std::runtime_error(text.error().message);
        out += *text;
        at = e->end;
    }
    out.append(bytes.substr(static_cast<std::size_t>(at)));
    return out;
}

} // namespace mimeuri
