// The offload pass's section of the report (report_section.hh): "offload", one entry per
// part the pass offloaded, restored or left (and why).
#pragma once

#include "report_section.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// An "offload" entry: a leaf part at least --offload-min bytes (offloaded or left), or a
// part the pass made that --offload-restore met (restored or left).
struct OffloadEntry {
    enum class Action { Left, Offloaded, Restored };
    std::string part; // the part's section
    Action action{Action::Left};
    std::string name;                 // the stored file's name (its keyed hash); absent when empty
    std::optional<std::int64_t> size; // offloaded: the decoded bytes stored; absent when null
    std::string url;                  // offloaded: the URL= written; absent when empty
    std::string reason;               // why it was left ("html", "signed", "missing", ...); absent when empty
    std::optional<std::string> kept;  // left under a kept signature: its kind

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.action, e.name, e.size, e.url, e.reason, e.kept);
    }
};

const char *json_name(OffloadEntry::Action a);
constexpr bool wire_valid(OffloadEntry::Action v) { return v <= OffloadEntry::Action::Restored; }
void write_json(JsonWriter &w, const OffloadEntry &e);

// Made when the pass meets its first part to report, so that a message with none reports as
// before.
class OffloadReport final : public EntryList<OffloadReport, OffloadEntry> {
public:
    static constexpr std::string_view kName = "offload";
    // Parts offloaded and parts restored: the service's "offload" edits. (The log line and
    // --summary-header say nothing of them, as before the registry.)
    std::size_t edits() const override;
    // Offloaded and restored parts said left after all ("dropped": the error says why; an
    // offloaded part's file stays in the store, which offload-verify lists as an orphan).
    void edits_dropped() override;
};

} // namespace mimeuri
