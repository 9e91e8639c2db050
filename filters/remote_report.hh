// The remote pass's section of the report (report_section.hh): "remote", one entry per
// network fetch of an HTML or CSS part (--remote, remote.hh; docs/remote.md, "The report").
#pragma once

#include "report_section.hh"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// A "remote" entry: one place an HTML or CSS part makes a reader fetch from the network.
struct RemoteEntry {
    enum class Kind { Image, Style, Other };
    enum class Action { None, Blocked, Proxied, Removed, Kept };
    std::string part;                   // the HTML (or CSS) part's section
    std::string attr;                   // "element@attribute", "style", "style@text", "css", ...
    std::string url;                    // as a browser's URL parser reads it
    std::string host;                   // lower case; "" when the URL names none
    Kind kind{Kind::Other};
    std::optional<std::string> tracker; // "shape", "hidden", "list"; null when none
    Action action{Action::None};
    // Why it was left ("keep-host", "charset", "edited", "dropped", ...), or with
    // Action::Kept the signature kind; absent when empty.
    std::string reason;

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.attr, e.url, e.host, e.kind, e.tracker, e.action, e.reason);
    }
};

const char *json_name(RemoteEntry::Kind k);
const char *json_name(RemoteEntry::Action a);
constexpr bool wire_valid(RemoteEntry::Kind v) { return v <= RemoteEntry::Kind::Other; }
constexpr bool wire_valid(RemoteEntry::Action v) { return v <= RemoteEntry::Action::Kept; }
void write_json(JsonWriter &w, const RemoteEntry &e);

// Made when the pass meets its first fetch, so that a message with none reports as before.
class RemoteReport final : public EntryList<RemoteReport, RemoteEntry> {
public:
    static constexpr std::string_view kName = "remote";
    // Fetches found and trackers among them, then fetches made inert, images sent through
    // camo, start tags (tracker images, remote link, meta refresh, base) removed:
    // ", remote fetches=N, trackers=N, blocked=N, proxied=N, removed=N" on the log line,
    // " trackers=N blocked=N proxied=N removed=N" in --summary-header's field, each where not
    // 0; blocked, proxied and removed the service's "remote" edits.
    std::size_t count(RemoteEntry::Action a) const;
    void describe(std::string &line) const override;
    void summary_words(std::string &value) const override;
    std::size_t edits() const override;
    // Blocked, proxied and removed fetches said left after all (action none, reason
    // "dropped": the error says why).
    void edits_dropped() override;
};

} // namespace mimeuri
