// The remote pass's section of the report (remote_report.hh).
#include "remote_report.hh"

namespace mimeuri {

namespace {

using A = RemoteEntry::Action;

// The actions that change the message, with their words in the log line and the field.
constexpr A kEdits[] = {A::Blocked, A::Proxied, A::Removed};

bool edited(A a) { return a == A::Blocked || a == A::Proxied || a == A::Removed; }

} // namespace

const char *json_name(RemoteEntry::Kind k)
{
    switch (k) {
    case RemoteEntry::Kind::Image: return "image";
    case RemoteEntry::Kind::Style: return "style";
    case RemoteEntry::Kind::Other: return "other";
    }
    return "";
}

const char *json_name(RemoteEntry::Action a)
{
    switch (a) {
    case A::None: return "none";
    case A::Blocked: return "blocked";
    case A::Proxied: return "proxied";
    case A::Removed: return "removed";
    case A::Kept: return "kept";
    }
    return "";
}

void write_json(JsonWriter &w, const RemoteEntry &e)
{
    w.begin_object();
    w.key("part").string(e.part);
    w.key("attr").string(e.attr);
    w.key("url").string(e.url);
    w.key("host").string(e.host);
    w.key("kind").string(json_name(e.kind));
    w.key("tracker").nullable(e.tracker);
    w.key("action").string(json_name(e.action));
    if (!e.reason.empty()) w.key("reason").string(e.reason);
    w.end_object();
}

std::size_t RemoteReport::count(RemoteEntry::Action a) const
{
    return count_if([a](const RemoteEntry &e) { return e.action == a; });
}

// What a mail admin reads first on the log line: how many fetches the message's HTML and CSS
// make (found in every mode, check too) and how many of them track, then what was done.
void RemoteReport::describe(std::string &line) const
{
    const char *sep = ", remote ";
    const std::size_t trackers = count_if([](const RemoteEntry &e) { return e.tracker.has_value(); });
    for (auto [word, n] : {std::pair{"fetches", entries.size()}, std::pair{"trackers", trackers}})
        if (n) {
            line += sep + std::string(word) + "=" + std::to_string(n);
            sep = ", ";
        }
    for (A a : kEdits)
        if (auto n = count(a)) {
            line += sep + std::string(json_name(a)) + "=" + std::to_string(n);
            sep = ", ";
        }
}

void RemoteReport::summary_words(std::string &value) const
{
    // A filter rule's word ("trackers=" in Mimeuri-Refs): the message tried to track its reader.
    if (auto n = count_if([](const RemoteEntry &e) { return e.tracker.has_value(); })) value += " trackers=" + std::to_string(n);
    for (A a : kEdits)
        if (auto n = count(a)) value += " " + std::string(json_name(a)) + "=" + std::to_string(n);
}

std::size_t RemoteReport::edits() const
{
    return count_if([](const RemoteEntry &e) { return edited(e.action); });
}

void RemoteReport::edits_dropped()
{
    for (RemoteEntry &e : entries)
        if (edited(e.action)) {
            e.action = A::None;
            e.reason = "dropped";
        }
}

} // namespace mimeuri
