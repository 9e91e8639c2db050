// The data: pass's section of the report (report_section.hh): "data", one entry per data:
// URI of an HTML or CSS part.
#pragma once

#include "report_section.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// A "data" entry: one data: URI of an HTML or CSS part (--data, data.hh).
struct DataEntry {
    enum class Action { None, Attached, Kept };
    std::string part;                // the HTML (or CSS) part's section
    std::string attr;                // "element@attribute", "style" text, or "css" (a text/css part)
    std::string type;                // the media type the URI declares, lower case ("text/plain" when none)
    std::optional<std::int64_t> size; // decoded bytes; null when the payload does not decode
    std::string sniffed;             // the bytes' own image type where it differs; absent when empty
    Action action{Action::None};
    std::string reason;              // why it was left ("not-image", "size", "base64", ...); absent when empty
    std::optional<std::string> kept; // signed content: the signature kind, with Action::Kept
    std::string cid;                 // attached: the new part's Content-ID; absent when empty

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.attr, e.type, e.size, e.sniffed, e.action, e.reason, e.kept, e.cid);
    }
};

const char *json_name(DataEntry::Action a);
constexpr bool wire_valid(DataEntry::Action v) { return v <= DataEntry::Action::Kept; }
void write_json(JsonWriter &w, const DataEntry &d);

// Made when the pass meets its first data: URI, so that a message with none reports as before.
class DataReport final : public EntryList<DataReport, DataEntry> {
public:
    static constexpr std::string_view kName = "data";
    // data: URIs made cid: references (--data=attach): ", data: images attached=N" on the log
    // line, " attached=N" in --summary-header's field, the service's "data" edits.
    std::size_t attached() const;
    void describe(std::string &line) const override;
    void summary_words(std::string &value) const override;
    std::size_t edits() const override { return attached(); }
};

} // namespace mimeuri
