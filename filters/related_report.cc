// The related pass's section of the report (related_report.hh).
#include "related_report.hh"

namespace mimeuri {

const char *json_name(RelatedEntry::Action a)
{
    switch (a) {
    case RelatedEntry::Action::None: return "none";
    case RelatedEntry::Action::Moved: return "moved";
    case RelatedEntry::Action::Marked: return "marked";
    case RelatedEntry::Action::Kept: return "kept";
    }
    return "";
}

void write_json(JsonWriter &w, const RelatedEntry &r)
{
    w.begin_object();
    w.key("part").string(r.part);
    w.key("url").string(r.url);
    w.key("target").string(r.target);
    if (r.related) w.key("related").string(*r.related);
    else w.key("related").null();
    w.key("outside").boolean(r.outside);
    if (r.disposition) w.key("disposition").string(*r.disposition);
    else w.key("disposition").null();
    w.key("action").string(json_name(r.action));
    if (!r.reason.empty()) w.key("reason").string(r.reason);
    if (r.kept) w.key("kept").string(*r.kept);
    w.end_object();
}

std::size_t RelatedReport::moved() const
{
    return count_if([](const RelatedEntry &e) { return e.action == RelatedEntry::Action::Moved; });
}

std::size_t RelatedReport::marked() const
{
    return count_if([](const RelatedEntry &e) { return e.action == RelatedEntry::Action::Marked; });
}

void RelatedReport::describe(std::string &line) const
{
    if (auto n = moved()) line += ", parts moved=" + std::to_string(n);
    if (auto n = marked()) line += ", parts marked inline=" + std::to_string(n);
}

void RelatedReport::summary_words(std::string &value) const
{
    if (auto n = moved()) value += " moved=" + std::to_string(n);
    if (auto n = marked()) value += " marked=" + std::to_string(n);
}

void RelatedReport::edits_dropped()
{
    for (RelatedEntry &r : entries)
        if (r.action == RelatedEntry::Action::Moved || r.action == RelatedEntry::Action::Marked) {
            r.action = RelatedEntry::Action::None;
            r.reason = "dropped";
        }
}

} // namespace mimeuri
