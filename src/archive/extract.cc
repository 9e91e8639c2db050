// --cid=extract above the passes (extract.hh).
#include "extract.hh"

#include "contents_row.hh"
#include "folder_plan.hh"
#include "wire.hh"

#include <glib.h>

#include <optional>

namespace mimeuri::archive {

FolderFiles folder_of(const std::string &at_take) { return wire::decode<FolderFiles>(at_take); }

namespace {

class ExtractPages final : public refs::Pages {
public:
    ExtractPages(std::string top, bool allow_remote_images) : top_(std::move(top)), remote_images_(allow_remote_images) {}

    void saw(std::size_t input_no, std::size_t number) override
    {
        if (counts_.size() <= input_no) counts_.resize(input_no + 1, 0);
        counts_[input_no] = std::max(counts_[input_no], number);
    }

    std::size_t folder(std::size_t input_no, std::size_t number) const override
    {
        std::size_t before = 0;
        for (std::size_t k = 0; k < input_no && k < counts_.size(); ++k) before += counts_[k];
        return before + number;
    }

    std::optional<std::string> file(std::size_t folder, const std::string &section) const override
    {
        auto page = files_.find(folder);
        if (page == files_.end()) return std::nullopt;
        auto f = page->second.find(section);
        if (f == page->second.end()) return std::nullopt;
        return f->second;
    }

    void plan(MessageContext &ctx, const refs::MessageIndex &ix, const std::vector<refs::PendingExtract> &extracts,
              int page_node, std::size_t folder) override
    {
        refs::PlannedFolder planned = refs::plan_folder(ctx, ix, extracts, page_node, remote_images_);
        if (planned.files.empty()) return;
        FolderFiles x{top_, std::move(planned.files), folder, refs::contents_row(ctx, folder)};
        ctx.at_take() = wire::encode(x);
        files_[folder] = std::move(planned.written);
    }

private:
    const std::string top_;
    const bool remote_images_;
    std::vector<std::size_t> counts_; // per input: the highest number met
    std::map<std::size_t, std::map<std::string, std::string>> files_;
};

// The folder could not be written: the references the plan claimed are not extracted after
// all, its pages not written, the message not changed, and the error says why.
void extraction_failed(MessageReport &rep, const std::string &cause)
{
    rep.changed = false;
    for (RefEntry &r : rep.refs)
        if (r.action == RefEntry::Action::Extracted) {
            r.action = RefEntry::Action::None;
            r.reason = "extract"; // the error says why
        }
    rep.drop_pages();
    rep.add_error("", ErrorCode::Extract, cause);
}

} // namespace

std::unique_ptr<refs::Pages> extract_pages(const std::string &dir, bool allow_remote_images)
{
    return std::make_unique<ExtractPages>(dir, allow_remote_images);
}

Status ExtractFiles::take(Plan &plan)
{
    FolderFiles x;
    try {
        x = folder_of(plan.at_take);
    } catch (const std::exception &e) {
        return Error{Code::Software, std::string("references: the plan's folder could not be read: ") + e.what()};
    }
    if (x.files.empty()) return ok();
    const std::size_t number = x.number ? x.number : ++folders_;
    auto wrote = write_extraction(x.top, number, x.files);
    if (!wrote) {
        if (plan.report) extraction_failed(*plan.report, wrote.error().message);
        return Error{wrote.error().code, "references: " + wrote.error().message};
    }
    top_ = x.top;
    rows_ += x.row;
    // (an id that would break the line is left out: a later run cannot name its page)
    if (!x.row.empty() && !plan.message_id.empty() && plan.message_id.find_first_of("\t\r\n") == std::string::npos)
        pages_ += std::to_string(number) + "\t" + plan.message_id + "\n";
    return ok();
}

Status ExtractFiles::finish()
{
    if (rows_.empty()) return ok(); // no folder written: no top files
    return write_top_files(top_, rows_, pages_);
}

} // namespace mimeuri::archive
