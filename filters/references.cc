// The reference pass over one message: the steps (see references.hh) in order, and what is
// left for the whole message once every HTML part is done.
#include "references.hh"

#include "extract_index.hh"
#include "html_refs.hh"
#include "ref_extract.hh"
#include "ref_part.hh"
#include "ref_resolver.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <map>

namespace mimeuri {

namespace {

using refs::Tally;

// Generated Content-IDs for targets that had none (a location made cid:, a cid: that named
// a Content-Location).
Status add_content_ids(MessageContext &ctx, const Tally &tally)
{
    const auto &nodes = ctx.nodes();
    for (auto &[node, id] : tally.new_content_ids) {
        const Node &n = nodes[static_cast<std::size_t>(node)];
        if (auto why = ctx.kept(n, "Content-ID")) {
            ctx.report().add_kept(n.section, "content-id", *why);
            continue;
        }
        Status s = ctx.add_header(n, "Content-ID", " <" + id + ">\n");
        if (!s) {
            if (s.error().code == Code::Software) return s;
            ctx.report().add_error(n.section, ErrorCode::Rewrite, s.error().message);
        }
    }
    return ok();
}

// --drop-inlined: parts every reference of which was inlined.
Status drop_inlined(MessageContext &ctx, const Tally &tally)
{
    const auto &nodes = ctx.nodes();
    std::map<int, std::vector<int>> by_parent;
    for (int node : tally.inlined_targets)
        if (!tally.kept_targets.count(node)) by_parent[nodes[static_cast<std::size_t>(node)].parent].push_back(node);
    for (auto &group : by_parent) {
        const int parent = group.first; // not a structured binding: clang 14 cannot capture one
        auto &drops = group.second;
        // RFC 2046 5.1.1: a multipart has at least one body part. One that would lose
        // every part keeps its first (readers report a multipart with none as broken).
        auto children = std::count_if(nodes.begin(), nodes.end(), [&](const Node &c) { return c.parent == parent; });
        if (static_cast<std::ptrdiff_t>(drops.size()) >= children) drops.erase(drops.begin());
        for (int node : drops) {
            const Node &n = nodes[static_cast<std::size_t>(node)];
            if (auto why = ctx.kept(n)) {
                ctx.report().add_kept(n.section, "drop", *why);
                continue;
            }
            Status s = ctx.remove_part(n);
            if (!s) {
                if (s.error().code == Code::Software) return s;
                ctx.report().add_error(n.section, ErrorCode::Drop, s.error().message);
            }
        }
    }
    return ok();
}

// Parts of a multipart/related that nothing references (the root aside, RFC 2387 3.2).
void report_unreferenced(MessageContext &ctx, const refs::MessageIndex &ix, const Tally &tally)
{
    const auto &nodes = ctx.nodes();
    std::vector<UnreferencedEntry> unref;
    for (std::size_t ri = 0; ri < nodes.size(); ++ri) {
        const Node &r = nodes[ri];
        if (r.kind != Node::Kind::Multipart || !ix.parts[ri].related) continue;
        std::vector<int> children;
        for (std::size_t c = ri + 1; c < nodes.size(); ++c)
            if (nodes[c].parent == static_cast<int>(ri)) children.push_back(static_cast<int>(c));
        if (children.empty()) continue;
        int root = children[0];
        if (const char *start = g_mime_object_get_content_type_parameter(r.object, "start")) {
            GCharPtr want(g_mime_utils_decode_message_id(start)); // compared as a msg-id
            for (int c : children)
                if (want && ix.parts[static_cast<std::size_t>(c)].cid_clean == want.get()) root = c;
        }
        for (int c : children) {
            if (c == root) continue;
            bool used = false;
            for (int t : tally.referenced) used = used || ix.is_descendant(t, c);
            if (used) continue;
            unref.push_back({nodes[static_cast<std::size_t>(c)].section, r.section});
        }
    }
    ctx.report().set_unreferenced(std::move(unref));
}

// --summary-header: the only Mimeuri-Refs of the message (a copy a sender planted is removed).
Status set_summary(MessageContext &ctx, const Tally &tally)
{
    std::string value = " resolved=" + std::to_string(tally.resolved) + " dangling=" + std::to_string(tally.dangling) +
                        " ambiguous=" + std::to_string(tally.ambiguous) + "\n";
    if (auto why = ctx.kept(ctx.nodes().front(), "Mimeuri-Refs")) {
        ctx.report().add_kept("", "summary-header", *why);
        return ok();
    }
    Status s = ctx.set_sole_header(ctx.nodes().front(), "Mimeuri-Refs", value);
    if (!s && s.error().code == Code::Software) return s;
    return ok();
}

} // namespace

std::string canonical_cid_url(const std::string &content_id)
{
    // RFC 2392: the addr-spec, URL-encoded; "/" encoded too, as mid: requires.
    GCharPtr e(g_uri_escape_string(content_id.c_str(), "!$&'()*+,;=:@", FALSE));
    return std::string("cid:") + e.get();
}

ReferencesPass::ReferencesPass(RefOptions opts) : opts_(std::move(opts))
{
    for (const std::string &path : opts_.mid_indexes) externals_.push_back(refs::open_mid_index(path));
    if (!opts_.notmuch.empty())
        if (auto nm = refs::open_notmuch(opts_.notmuch)) externals_.push_back(std::move(nm));
}

Status ReferencesPass::index(const MessageContext &ctx)
{
    pages_.saw(ctx.report().input_no, ctx.report().index);
    run_index_.add_message(ctx, extracting());
    return ok();
}

std::string ReferencesPass::save_index() const { return run_index_.save(); }

void ReferencesPass::merge_index(const std::string &bytes) { run_index_.merge(bytes); }

bool ReferencesPass::may_hold_reference(std::string_view bytes) const { return html::may_hold_reference(bytes); }

Status ReferencesPass::apply(MessageContext &ctx)
{
    if (opts_.cid == RefOptions::Cid::Off && opts_.mid == RefOptions::Mid::Off) return ok();
    const refs::MessageIndex ix = refs::index_message(ctx);
    const refs::Resolver resolver(ix, run_index_, &externals_);
    // The indexes' read transactions end with the message, however it ends; the message's
    // deadline holds inside their lookups.
    for (auto &e : externals_) e->set_deadline([&ctx] { return ctx.out_of_time(); });
    struct Done {
        refs::ExternalIndexes &x;
        ~Done()
        {
            for (auto &e : x) {
                e->set_deadline({});
                e->done();
            }
        }
    } done{externals_};
    Tally tally;
    if (extracting()) {
        tally.pages = &pages_;
        tally.page_node = refs::page_node(ctx);
        tally.folder = pages_.folder(ctx.report().input_no, ctx.report().index);
        GCharPtr top(g_canonicalize_filename(opts_.extract_dir.c_str(), nullptr));
        tally.folder_path = std::string(top.get()) + "/" + std::to_string(tally.folder);
    }
    try {
        // Stylesheets first: a page that inlines one inlines it with its own references inlined.
        for (std::size_t i = 0; i < ctx.nodes().size(); ++i)
            if (Status s = refs::rewrite_css_part(ctx, opts_, ix, resolver, static_cast<int>(i), tally); !s) return s;
        for (std::size_t i = 0; i < ctx.nodes().size(); ++i)
            if (Status s = refs::rewrite_html_part(ctx, opts_, ix, resolver, static_cast<int>(i), tally); !s) return s;
    } catch (const refs::TimeLimit &e) { // a lookup stopped at the deadline
        if (Status t = ctx.check_time(); !t) return t;
        return Error::limit(e.what());
    }
    if (Status s = add_content_ids(ctx, tally); !s) return s;
    if (opts_.drop_inlined)
        if (Status s = drop_inlined(ctx, tally); !s) return s;
    report_unreferenced(ctx, ix, tally);
    if (opts_.summary_header)
        if (Status s = set_summary(ctx, tally); !s) return s;
    // --- extract: the receiving agent of RFC 2387 section 6. The files are written when
    // the run takes the message (src/extract.hh), never while it is planned.
    // Every message gets its folder and its page (index.html), listed in the archive's index.
    auto files = refs::plan_extraction(ctx, ix, tally.extracts, opts_.extract_dir, tally.page_node,
                                       refs::PageOptions{extracting(), opts_.extract_remote_images});
    if (extracting() && !ctx.output_files().empty()) {
        ctx.output_number = tally.folder;
        ctx.output_row = refs::index_row(ctx, tally.folder);
        pages_.planned(tally.folder, std::move(files));
    }
    return ok();
}

bool ReferencesPass::now_known(const std::string &key) const
{
    return key.empty() || run_index_.find(key, false) || run_index_.find(key, true);
}

} // namespace mimeuri
