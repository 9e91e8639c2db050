// The data: pass's section of the report (data_report.hh).
#include "data_report.hh"

namespace mimeuri {

const char *json_name(DataEntry::Action a)
{
    switch (a) {
    case DataEntry::Action::None: return "none";
    case DataEntry::Action::Attached: return "attached";
    case DataEntry::Action::Kept: return "kept";
    }
    return "";
}

void write_json(JsonWriter &w, const DataEntry &d)
{
    w.begin_object();
    w.key("part").string(d.part);
    w.key("attr").string(d.attr);
    w.key("type").string(d.type);
    if (d.size) w.key("size").integer(*d.size);
    else w.key("size").null();
    if (!d.sniffed.empty()) w.key("sniffed").string(d.sniffed);
    w.key("action").string(json_name(d.action));
    if (!d.reason.empty()) w.key("reason").string(d.reason);
    if (d.kept) w.key("kept").string(*d.kept);
    if (!d.cid.empty()) w.key("cid").string(d.cid);
    w.end_object();
}

std::size_t DataReport::attached() const
{
    return count_if([](const DataEntry &e) { return e.action == DataEntry::Action::Attached; });
}

void DataReport::describe(std::string &line) const
{
    if (auto n = attached()) line += ", data: images attached=" + std::to_string(n);
}

void DataReport::summary_words(std::string &value) const
{
    if (auto n = attached()) value += " attached=" + std::to_string(n);
}

} // namespace mimeuri
