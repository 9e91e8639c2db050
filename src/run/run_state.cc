// run_state: what the steps of a run share (run_state.hh).
//
// SYNOPSIS  Inputs: the FILE arguments (Maildirs expanded), each opened (open), its format
//           (format_of), their size (total_bytes), the one-output rule (check_one_output);
//           maildir_tmp; RunState: the outputs, the engine and the totals a run's steps share.
#include "run_state.hh"

#include "maildir.hh"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri {

namespace {

// Lower rank wins when several outcomes compete for the exit status.
int rank(Code c)
{
    switch (c) {
    case Code::IoErr: return 1;
    case Code::CantCreate: return 2;
    case Code::TempFail: return 3;
    case Code::Software: return 4;
    case Code::NoInput: return 5;
    case Code::DataErr: return 6;
    case Code::Usage: return 7;
    case Code::Config: return 8; // only at load, before any input: never competes in practice
    case Code::Ok: return 100;
    }
    return 99;
}

// FILE arguments: a Maildir (a folder with cur/ or new/) stands for the files in them
// (in_maildir: which names came from one).
std::vector<std::string> expand_inputs(const std::vector<std::string> &in, std::vector<bool> &in_maildir)
{
    std::vector<std::string> out;
    for (const auto &path : in) {
        if (path == "-" || !maildir::is_maildir(path)) {
            out.push_back(path);
            in_maildir.push_back(false);
            continue;
        }
        auto files = maildir::message_files(path);
        out.insert(out.end(), files.begin(), files.end());
        in_maildir.resize(out.size(), true);
    }
    if (out.empty()) {
        out.emplace_back("-");
        in_maildir.push_back(false);
    }
    return out;
}

} // namespace

void Outcome::worsen(Code c)
{
    if (c == Code::TempFail) tempfail = true;
    if (rank(c) < rank(worst)) worst = c;
}

void Outcome::fail(const Error &e)
{
    g_warning("%s", e.message.c_str());
    worsen(e.code);
}

void Outcome::end(const Error &e)
{
    g_warning("%s", e.message.c_str());
    if (!ended) ended = exit_status(e.code);
}

Inputs::Inputs(const Options &opts, int in_fd) : opts_(opts), in_fd_(in_fd), stop_before_open_(Faults::from_env().stop_open)
{
    names_ = expand_inputs(opts.inputs, in_maildir_);
    expunged_.assign(names_.size(), false);
}

Result<Source> Inputs::open(std::size_t k)
{
    std::string &input = names_[k];
    if (input != "-") {
        if (stop_before_open_ && input.size() >= stop_before_open_->size() &&
            input.compare(input.size() - stop_before_open_->size(), std::string::npos, *stop_before_open_) == 0 &&
            (input.size() == stop_before_open_->size() || input[input.size() - stop_before_open_->size() - 1] == '/')) {
            stop_before_open_.reset(); // once: the test renames the file, then continues us
            ::raise(SIGSTOP);
        }
        auto src = Source::open_path(input, opts_.spool_threshold);
        // Between the listing and this open an IMAP server may have renamed the file (and
        // may again: a few tries). Its unique part names the message (Maildir's promise).
        for (int attempt = 0; !src && in_maildir_[k] && attempt < 3; ++attempt) {
            if (struct stat st {}; ::lstat(input.c_str(), &st) == 0 || errno != ENOENT) break;
            std::string now = maildir::find_renamed(input);
            if (now.empty()) {
                expunged_[k] = true;
                return Error{Code::NoInput, input + ": expunged from its Maildir since it was listed (no file in cur/ "
                                                    "or new/ has its unique name); nothing to do"};
            }
            input = std::move(now);
            src = Source::open_path(input, opts_.spool_threshold);
        }
        return src;
    }
    if (!stdin_) stdin_.emplace(Source::read_fd(in_fd_, "-", opts_.spool_threshold));
    if (!*stdin_) return stdin_->error();
    return (*stdin_)->reopen();
}

Result<Format> Inputs::format_of(const Source &src) const
{
    if (opts_.format != Format::Auto) return opts_.format;
    auto m = looks_like_mbox(src);
    if (!m) return m.error();
    return *m ? Format::Mbox : Format::Message;
}

std::int64_t Inputs::total_bytes() const
{
    std::int64_t total = 0;
    for (const auto &in : names_) {
        struct stat sb {};
        if (in != "-" && ::stat(in.c_str(), &sb) == 0) total += sb.st_size;
    }
    return total;
}

// Single messages would run together into one that no reader could split. Refused before
// anything is written.
Status Inputs::check_one_output()
{
    if (names_.size() < 2) return ok();
    std::size_t readable = 0;
    const std::string *single = nullptr;
    for (std::size_t k = 0; k < names_.size(); ++k) {
        auto src = open(k);
        if (!src || src->size() == 0) continue; // reported when it is processed
        ++readable;
        auto format = format_of(*src);
        if (format && *format == Format::Message && !single) single = &names_[k];
    }
    if (single && readable > 1)
        return Error{Code::Usage, *single + " is a single message: several inputs go to one output only as mboxes "
                                            "(--format=mbox); use --in-place, or one run per message"};
    return ok();
}

std::string maildir_tmp(const std::string &path)
{
    namespace fs = std::filesystem;
    fs::path p(path), dir = p.parent_path();
    std::error_code ec;
    if ((dir.filename() == "cur" || dir.filename() == "new") && fs::is_directory(dir.parent_path() / "tmp", ec))
        return (dir.parent_path() / "tmp").string();
    return {};
}

RunState::RunState(const Options &o, Engine &e, Inputs &in, RunStats &s)
    : opts(o), engine(e), inputs(in), st(s), faults(Faults::from_env()), progress(o.progress, in.total_bytes())
{
}

RunState::~RunState()
{
    if (changed_list_fd >= 0) ::close(changed_list_fd);
}

Status RunState::write_report(const std::string &lines)
{
    if (captured_report) {
        *captured_report += lines;
        return ok();
    }
    return report->write(lines);
}

int RunState::jobs() const { return std::max(1, opts.jobs); }

} // namespace mimeuri
