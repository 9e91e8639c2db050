#include "registry.hh"

#include "data.hh"
#include "extract.hh"
#include "external_body.hh"
#include "labels.hh"
#include "offload.hh"
#include "references.hh"
#include "related.hh"
#include "remote.hh"

#include <algorithm>

namespace mimeuri {

namespace {

// Every pass, in running order: a pass is its files in filters/ and its row here. Their
// report sections are registered as the rows are first read, in this order, by every process
// (each reads its settings, so the rows, before it reads a plan another process wrote).
const std::vector<PassRow> &rows()
{
    // Last: data and related leave a part another pass rewrote (edits are splices on the input);
    // offload last of all: it leaves a part another pass edited, and swaps whole parts.
    static const std::vector<PassRow> r = [] {
        std::vector<PassRow> all{references_row(), external_body_row(), labels_row(), data_row(), related_row(), remote_row(),
                                  offload_row()};
        for (const PassRow &row : all)
            if (row.report) register_section_type(*row.report);
        return all;
    }();
    return r;
}

// Whether --passes names the pass `name` (or all of them).
bool wanted(const Options &opts, std::string_view name)
{
    for (const auto &n : opts.passes)
        if (n == "all" || n == name) return true;
    return false;
}

} // namespace

OptionTable pass_option_table(PassOptions &o)
{
    OptionTable t;
    for (const PassRow &row : rows()) t += row.options(o);
    return t;
}

const std::vector<std::string> &pass_names()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const PassRow &row : rows()) n.emplace_back(row.name);
        return n;
    }();
    return names;
}

Status check_passes(const Options &opts, const PassOptions &pass_opts)
{
    const auto &known = pass_names();
    bool none = false;
    for (const auto &n : opts.passes) {
        if (n == "none") none = true;
        else if (n != "all" && std::find(known.begin(), known.end(), n) == known.end())
            return Error{Code::Usage, "unknown pass '" + n + "' in --passes"};
    }
    if (none && opts.passes.size() > 1) return Error{Code::Usage, "--passes=none cannot be combined with names"};
    if (none) return ok();
    for (const PassRow &row : rows())
        if (row.check && wanted(opts, row.name))
            if (Status s = row.check(pass_opts); !s) return s;
    return ok();
}

std::vector<std::unique_ptr<Pass>> build_passes(const Options &opts, const PassOptions &pass_opts)
{
    // The references pass's pages (--cid=extract) are planned and written above the passes
    // (src/archive/extract.hh): it is given them here, and the run its take hook by main.
    if (pass_opts.of<RefOptions>().cid == RefOptions::Cid::Extract && !pass_opts.of<RefOptions>().pages) {
        PassOptions with = pass_opts;
        with.of<RefOptions>().pages = &archive::extract_pages;
        return build_passes(opts, with);
    }
    std::vector<std::unique_ptr<Pass>> passes;
    for (const PassRow &row : rows())
        if (wanted(opts, row.name))
            if (auto p = row.make(pass_opts)) passes.push_back(std::move(p));
    return passes;
}

std::vector<std::size_t> pass_edits(const MessageReport &report)
{
    std::vector<std::size_t> n;
    for (const PassRow &row : rows()) {
        const ReportSection *s = row.report ? report.find_section(*row.report) : nullptr;
        n.push_back(s ? s->edits() : row.edits ? row.edits(report) : 0);
    }
    return n;
}

std::vector<FilesBeside> files_beside(const PassOptions &pass_opts)
{
    std::vector<FilesBeside> all;
    for (const PassRow &row : rows())
        if (row.files_beside) all.push_back(row.files_beside(pass_opts));
    return all;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const Options &opts, const PassOptions &pass_opts)
{
    if (Status s = check_passes(opts, pass_opts); !s) return s.error();
    return build_passes(opts, pass_opts);
}

} // namespace mimeuri
