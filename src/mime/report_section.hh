// A pass's own section of the report (issue 49 item 1): the core keeps what is the core's
// (errors, the message's coordinates, signatures, kept edits, the edits); a pass that reports
// more declares its entry type and its section in its own files in filters/ (data_report.hh,
// related_report.hh) and hands the section's type to the pass registry in its row
// (PassRow::report). The core then writes the section as the JSON member of its name, sends
// it between processes, undoes it when the message's edits are dropped, and asks it for its
// counts: the log line's, --summary-header's and the service's counters'. It never names the
// entry type.
#pragma once

#include "json_writer.hh"
#include "wire.hh"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

class ReportSection;

// What the core knows of a kind of section: its JSON member's name (also its name on the
// wire and in "omitted") and how to make an empty one (a record read back fills it).
struct ReportSectionType {
    std::string_view name;
    std::unique_ptr<ReportSection> (*make)();
};

// The kinds of section in the order their counts are told (the log line, --summary-header):
// the registry's running order, since the registry registers every pass's kind when it is
// first read (src/app/registry.cc), in every process, before a record is read back.
// Registering a kind twice is registering it once.
void register_section_type(const ReportSectionType &t);
const std::vector<const ReportSectionType *> &section_types();
// Null for a name no pass registered.
const ReportSectionType *section_type(std::string_view name);

class ReportSection {
public:
    virtual ~ReportSection() = default;
    virtual const ReportSectionType &type() const = 0;
    virtual std::unique_ptr<ReportSection> clone() const = 0;
    // The entries: how many, one written as a JSON object, all as a record and back (throws
    // std::runtime_error on bytes that are not this section's).
    virtual std::size_t size() const = 0;
    virtual void write_entry(JsonWriter &w, std::size_t k) const = 0;
    virtual std::string save() const = 0;
    virtual void load(std::string bytes) = 0;
    // The message is written as it came after all (MessageReport::edits_dropped): what the
    // entries say was done is said undone.
    virtual void edits_dropped() {}
    // What the one-line summary of the message (--syslog) says of this section: ", what=N"
    // parts appended to line, none when nothing was done.
    virtual void describe(std::string &line) const { (void)line; }
    // What --summary-header's field counts of it: " what=N" words appended, none when
    // nothing was done.
    virtual void summary_words(std::string &value) const { (void)value; }
    // The edits it says were made (the service's counters, by pass).
    virtual std::size_t edits() const { return 0; }
};

// The section of most passes: a list of entries, each of a type that declares its wire
// fields (`fields`, wire.hh) and is written by `void write_json(JsonWriter &, const Entry &)`
// beside it. S is the section class itself: it names its JSON member (`static constexpr
// std::string_view kName`) and says its counts.
template <class S, class Entry> class EntryList : public ReportSection {
public:
    std::vector<Entry> entries;

    // S's kind: one object in the program (an inline function's static), known by its address.
    static const ReportSectionType &kind()
    {
        static const ReportSectionType k{S::kName, [] { return std::unique_ptr<ReportSection>(std::make_unique<S>()); }};
        return k;
    }
    const ReportSectionType &type() const override { return kind(); }
    std::unique_ptr<ReportSection> clone() const override { return std::make_unique<S>(static_cast<const S &>(*this)); }
    std::size_t size() const override { return entries.size(); }
    void write_entry(JsonWriter &w, std::size_t k) const override { write_json(w, entries[k]); }
    std::string save() const override { return wire::encode(entries); }
    void load(std::string bytes) override { entries = wire::decode<std::vector<Entry>>(std::move(bytes)); }
    // How many entries p holds.
    template <class Pred> std::size_t count_if(Pred p) const
    {
        std::size_t n = 0;
        for (const Entry &e : entries) n += p(e) ? 1 : 0;
        return n;
    }
};

// The pass sections of one report, in the order first made; a value (copied whole), and one
// field on the wire: each section's name and its record.
class ReportSections {
public:
    ReportSections() = default;
    ReportSections(const ReportSections &o);
    ReportSections &operator=(const ReportSections &o);
    ReportSections(ReportSections &&) = default;
    ReportSections &operator=(ReportSections &&) = default;

    const std::vector<std::unique_ptr<ReportSection>> &all() const { return list_; }
    ReportSection *find(const ReportSectionType &t) const;
    ReportSection &add(const ReportSectionType &t);

    std::string serialize() const;
    static ReportSections deserialize(std::string bytes); // throws std::runtime_error

private:
    std::vector<std::unique_ptr<ReportSection>> list_;
};

} // namespace mimeuri
