// What the pass registry (src/app/registry.cc) knows of a pass: one PassRow, made by the
// pass's own *_options.cc, with its name, its option table, how to make it, what to check
// at load and its own section of the report. Every pass's settings live in one PassOptions, each in the pass's own struct.
#pragma once

#include "option_table.hh"
#include "pass.hh"
#include "result.hh"

#include <any>
#include <map>
#include <string>
#include <memory>
#include <string_view>
#include <typeindex>
#include <vector>

namespace mimeuri {

// Every pass's settings, one struct per pass (RefOptions, LabelOptions, ...), each made with
// its defaults when first asked for. A value: copied whole (the service keeps the settings of
// its last good load while it loads new ones).
class PassOptions {
public:
    template <typename T> T &of()
    {
        std::any &slot = slots_[std::type_index(typeid(T))];
        if (!slot.has_value()) slot = T{};
        return std::any_cast<T &>(slot);
    }
    template <typename T> const T &of() const
    {
        static const T defaults{};
        auto it = slots_.find(std::type_index(typeid(T)));
        return it == slots_.end() ? defaults : std::any_cast<const T &>(it->second);
    }

private:
    std::map<std::type_index, std::any> slots_;
};

// The envelope's recipients (RCPT TO, as the MTA gave them) of the message being planned,
// where the service knows them: a milter worker sets them on its copy of the settings for
// each message; empty in a command-line run. Read by the remote pass's per-recipient rule.
struct EnvelopeRecipients {
    std::vector<std::string> addresses;
};

// The files a pass with some settings writes beside the run: work it leaves for when the run
// takes a plan (MessageContext::at_take), written into a folder of its own.
struct FilesBeside {
    std::string setting;       // the setting that makes it write them ("--cid=extract"); "": none
    std::string folder_option; // the option naming their folder ("--extract-dir"), and the
    std::string folder;        // folder; "": none named
    // What it writes depends on the order messages are planned in (--cid=extract's pages
    // know the files of the pages planned before them): the entry point plans them in one
    // process (--jobs=1).
    bool one_process{false};
};

struct PassRow {
    std::string_view name;                 // what --passes names
    OptionTable (*options)(PassOptions &); // its options, in the order --help shows them
    // The pass for these settings; null when they turn it off.
    std::unique_ptr<Pass> (*make)(const PassOptions &);
    // What is checked once, when the settings are loaded (an index that must open); null:
    // nothing.
    Status (*check)(const PassOptions &) = nullptr;
    // Its own section of the report (report_section.hh), when it has one: registered when the
    // registry is first read; what it counts is the pass's in the log line, --summary-header
    // and the service's counters.
    const ReportSectionType *report = nullptr;
    // The files it writes beside the run with these settings: the service, which has no run
    // to write them at, refuses the setting, and --check-config checks the folder. Null: none.
    FilesBeside (*files_beside)(const PassOptions &) = nullptr;
    // A pass whose entries the core's report holds (references, external bodies, labels):
    // the edits they say were made, for the service's counters.
    std::size_t (*edits)(const MessageReport &) = nullptr;
};

// The row every pass has: its settings are O, read by Table; it is made as P from them
// unless Off says they turn it off; check as above.
template <class P, class O, OptionTable (*Table)(O &), bool (*Off)(const O &)>
PassRow pass_row(std::string_view name, Status (*check)(const PassOptions &) = nullptr)
{
    return {name, [](PassOptions &p) { return Table(p.of<O>()); },
            [](const PassOptions &p) -> std::unique_ptr<Pass> {
                const O &o = p.of<O>();
                if (Off(o)) return nullptr;
                return std::make_unique<P>(o);
            },
            check};
}

} // namespace mimeuri
