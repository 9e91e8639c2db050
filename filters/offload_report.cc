// The offload pass's section of the report (offload_report.hh).
#include "offload_report.hh"

namespace mimeuri {

const char *json_name(OffloadEntry::Action a)
{
    switch (a) {
    case OffloadEntry::Action::Left: return "left";
    case OffloadEntry::Action::Offloaded: return "offloaded";
    case OffloadEntry::Action::Restored: return "restored";
    }
    return "";
}

// The members in the order the pass wrote them before its section was its own: part,
// action, then those that apply.
void write_json(JsonWriter &w, const OffloadEntry &e)
{
    w.begin_object();
    w.key("part").string(e.part);
    w.key("action").string(json_name(e.action));
    if (!e.name.empty()) w.key("name").string(e.name);
    if (e.size) w.key("size").integer(*e.size);
    if (!e.url.empty()) w.key("url").string(e.url);
    if (!e.reason.empty()) w.key("reason").string(e.reason);
    if (e.kept) w.key("kept").string(*e.kept);
    w.end_object();
}

std::size_t OffloadReport::edits() const
{
    return count_if([](const OffloadEntry &e) { return e.action != OffloadEntry::Action::Left; });
}

void OffloadReport::edits_dropped()
{
    for (OffloadEntry &e : entries)
        if (e.action != OffloadEntry::Action::Left) {
            e.action = OffloadEntry::Action::Left;
            e.url.clear(); // the message as it came holds no link
            e.reason = "dropped";
        }
}

} // namespace mimeuri
