// What the steps of a run share (src/run/run.cc puts them together; docs/design.md has the map):
// the inputs, the outputs, the engine, the totals and how the run is to end.
#pragma once

#include "engine.hh"
#include "faults.hh"
#include "mbox.hh"
#include "options.hh"
#include "output.hh"
#include "progress.hh"
#include "run.hh"
#include "syslog.hh"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

// How the run ends so far: the worst exit code seen, and whether a write to the shared
// output failed, which ends the run at once (nothing after it can land).
struct Outcome {
    Code worst{Code::Ok};
    bool tempfail{false};   // some input was not done and must be retried (75)
    std::optional<int> ended;
    template <class Io, class Self> static void fields(Io &io, Self &o) { io(o.worst, o.tempfail, o.ended); }
    void worsen(Code c);
    // One line on stderr, and the code counted.
    void fail(const Error &e);
    // A failed write to the shared output: logged, and the run ends with its status.
    void end(const Error &e);
};

// The run's inputs: Maildirs expanded to their files, standard input read once (it is kept
// for a second sweep), each input's format.
class Inputs {
public:
    Inputs(const Options &opts, int in_fd);
    const std::vector<std::string> &names() const { return names_; }
    std::size_t size() const { return names_.size(); }
    const std::string &operator[](std::size_t k) const { return names_[k]; }
    // A Maildir's file renamed by an IMAP server since the Maildir was listed (flags
    // changed, new/ -> cur/) is found again by its unique part and opened under its new
    // name, which names_[k] takes from then on. One that no file holds any more was
    // expunged: NoInput, and expunged(k) says so.
    Result<Source> open(std::size_t k);
    bool expunged(std::size_t k) const { return expunged_[k]; }
    Result<Format> format_of(const Source &src) const;
    std::int64_t total_bytes() const;
    // Several inputs to one output: mboxes may follow each other, single messages not.
    Status check_one_output();

private:
    const Options &opts_;
    int in_fd_;
    std::vector<std::string> names_;
    std::vector<bool> in_maildir_; // names_[k] was listed from a Maildir
    std::vector<bool> expunged_;
    std::optional<std::string> stop_before_open_; // MIMEURI_FAULT=stop-open:NAME (docs/testing.md)
    std::optional<Result<Source>> stdin_;
};

// A file in a Maildir's cur/ or new/: the Maildir's tmp/ (for its rewrite), else "".
std::string maildir_tmp(const std::string &path);

// Everything the steps of one run share.
struct RunState {
    const Options &opts;
    Engine &engine;
    Inputs &inputs;
    RunStats &st;
    Faults faults;
    Outcome outcome;
    std::optional<Sink> out;    // standard output or -o (not with --check or --in-place)
    std::optional<Sink> report; // --report, or standard output with --check
    std::optional<Syslog> syslog;
    int changed_list_fd{-1};    // --changed-list
    Progress progress;
    std::int64_t done_bytes{0};
    TakeHook *take_hook{nullptr}; // a plan's at_take work, done when it is taken (engine.hh)
    // In a worker taking whole files (--in-place --jobs): report lines go back to the parent.
    std::optional<std::string> captured_report;

    RunState(const Options &o, Engine &e, Inputs &in, RunStats &s);
    ~RunState();
    RunState(const RunState &) = delete;
    RunState &operator=(const RunState &) = delete;
    Status write_report(const std::string &lines);
    int jobs() const; // processes that plan messages
};

// The steps (each in a file of its own).
// src/run/run_input.cc: one input split, planned (here or in workers), taken, written.
void run_input(RunState &rs, std::size_t input_no, int jobs);
// src/run/index_sweep.cc: several inputs: the whole run indexed before any message is planned.
void index_inputs(RunState &rs);
// src/run/inplace.cc: --in-place follows no symbolic link, as Postfix's safe_open: the name is
// checked before the locks are taken (not_a_link), and the file opened for reading must be
// the one the name holds (opened_as_named: lstat against fstat). CantCreate (73) if not.
Status not_a_link(const std::string &input);
Status opened_as_named(const std::string &input, int fd);
// src/run/inplace.cc: --changed-list opened for appending by the same rules (no link followed,
// the file the name holds, one hard link), then emptied; /dev/stdout and the like as they
// are. The descriptor, or CantCreate.
Result<int> open_changed_list(const std::string &path);
// src/run/inplace.cc: a file rewritten in place with the held edits, once its messages are taken.
void commit_in_place(RunState &rs, const std::string &input, const Source &src, const struct stat &read,
                     const std::vector<const Edit *> &edits);
// src/run/inplace.cc: --in-place --jobs over many files: workers take whole files.
void run_files_forked(RunState &rs);

} // namespace mimeuri
