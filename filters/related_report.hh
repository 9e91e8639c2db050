// The related pass's section of the report (report_section.hh): "related", one entry per
// part an HTML part references outside its multipart/related or not inline.
#pragma once

#include "report_section.hh"

#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// A "related" entry: a part an HTML part references that sits outside the HTML part's
// multipart/related, or whose disposition is not inline (--related, related.hh).
struct RelatedEntry {
    enum class Action { None, Moved, Marked, Kept };
    std::string part;                   // the HTML part's section
    std::string url;                    // the reference, as the HTML has it
    std::string target;                 // the referenced part's section
    std::optional<std::string> related; // the HTML part's multipart/related; null when none
    bool outside{false};                // the target is outside it
    std::optional<std::string> disposition; // the target's disposition as read, lower case; null when none
    Action action{Action::None};
    std::string reason;                 // why it was left ("shared", "message", ...); absent when empty
    std::optional<std::string> kept;    // signed content: the signature kind, with Action::Kept

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.url, e.target, e.related, e.outside, e.disposition, e.action, e.reason, e.kept);
    }
};

const char *json_name(RelatedEntry::Action a);
constexpr bool wire_valid(RelatedEntry::Action v) { return v <= RelatedEntry::Action::Kept; }
void write_json(JsonWriter &w, const RelatedEntry &r);

// Made when the pass meets its first such part, so that a message with none reports as before.
class RelatedReport final : public EntryList<RelatedReport, RelatedEntry> {
public:
    static constexpr std::string_view kName = "related";
    // Parts moved into their HTML's related set, and parts in it only marked inline
    // (--related=repair): ", parts moved=N, parts marked inline=N" on the log line, " moved=N
    // marked=N" in --summary-header's field, both the service's "related" edits.
    std::size_t moved() const;
    std::size_t marked() const;
    void describe(std::string &line) const override;
    void summary_words(std::string &value) const override;
    std::size_t edits() const override { return moved() + marked(); }
    // Moved and marked parts said not moved after all ("dropped": the error says why).
    void edits_dropped() override;
};

} // namespace mimeuri
