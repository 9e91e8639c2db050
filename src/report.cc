#include "report.hh"

#include "gobj.hh"

#include <json-glib/json-glib.h>

#include <algorithm>

namespace mimeuri {

const char *json_name(RefEntry::Kind k)
{
    switch (k) {
    case RefEntry::Kind::Cid: return "cid";
    case RefEntry::Kind::Mid: return "mid";
    case RefEntry::Kind::Location: return "location";
    }
    return "";
}

const char *json_name(RefEntry::Status s)
{
    switch (s) {
    case RefEntry::Status::Resolved: return "resolved";
    case RefEntry::Status::Dangling: return "dangling";
    case RefEntry::Status::Ambiguous: return "ambiguous";
    }
    return "";
}

const char *json_name(RefEntry::Action a)
{
    switch (a) {
    case RefEntry::Action::None: return "none";
    case RefEntry::Action::Repaired: return "repaired";
    case RefEntry::Action::Inlined: return "inlined";
    case RefEntry::Action::Extracted: return "extracted";
    case RefEntry::Action::Rewritten: return "rewritten";
    case RefEntry::Action::Kept: return "kept";
    }
    return "";
}

const char *json_name(ExternalBodyEntry::Status s)
{
    switch (s) {
    case ExternalBodyEntry::Status::Ok: return "ok";
    case ExternalBodyEntry::Status::Normalized: return "normalized";
    case ExternalBodyEntry::Status::Mapped: return "mapped";
    case ExternalBodyEntry::Status::Converted: return "converted";
    case ExternalBodyEntry::Status::Disallowed: return "disallowed";
    case ExternalBodyEntry::Status::Invalid: return "invalid";
    case ExternalBodyEntry::Status::Kept: return "kept";
    }
    return "";
}

void ExternalBodyEntry::set_field(Fields &fields, const std::string &name, const std::string &value)
{
    for (auto &[n, v] : fields)
        if (n == name) {
            v = value;
            return;
        }
    fields.emplace_back(name, value);
}

void MessageReport::add_error(const std::string &part, const std::string &code, const std::string &message)
{
    errors.push_back({part, code, message});
}

void MessageReport::mark(Extra e)
{
    if (std::find(extras_.begin(), extras_.end(), e) == extras_.end()) extras_.push_back(e);
}

void MessageReport::add_kept(const std::string &part, const std::string &edit, const std::string &reason)
{
    mark(Extra::Kept);
    kept_.push_back({part, edit, reason});
}

void MessageReport::set_unreferenced(std::vector<UnreferencedEntry> entries)
{
    mark(Extra::Unreferenced);
    unreferenced_ = std::move(entries);
}

void MessageReport::set_signatures(std::vector<SignatureEntry> entries)
{
    mark(Extra::Signatures);
    signatures_ = std::move(entries);
}

void MessageReport::restore_extras(std::vector<Extra> order, std::vector<KeptEntry> kept,
                                   std::vector<UnreferencedEntry> unref, std::vector<SignatureEntry> sigs)
{
    extras_ = std::move(order);
    kept_ = std::move(kept);
    unreferenced_ = std::move(unref);
    signatures_ = std::move(sigs);
}

std::size_t MessageReport::dangling() const
{
    return static_cast<std::size_t>(
        std::count_if(refs.begin(), refs.end(), [](const RefEntry &r) { return r.status == RefEntry::Status::Dangling; }));
}

std::size_t MessageReport::dangling_mid() const
{
    return static_cast<std::size_t>(std::count_if(refs.begin(), refs.end(), [](const RefEntry &r) {
        return r.status == RefEntry::Status::Dangling && r.kind == RefEntry::Kind::Mid;
    }));
}

void MessageReport::extraction_failed(const std::string &cause)
{
    changed = false;
    for (RefEntry &r : refs)
        if (r.action == RefEntry::Action::Extracted) {
            r.action = RefEntry::Action::None;
            r.reason = "extract"; // the error says why
        }
    add_error("", "extract", cause);
}

void MessageReport::edits_dropped()
{
    changed = false;
    for (RefEntry &r : refs)
        if (r.action != RefEntry::Action::Kept && r.action != RefEntry::Action::None) {
            r.action = RefEntry::Action::None;
            r.reason = "dropped"; // the message passes as it came; the error says why
        }
    for (ExternalBodyEntry &e : external_bodies) {
        using S = ExternalBodyEntry::Status;
        if (e.status != S::Normalized && e.status != S::Mapped && e.status != S::Converted) continue;
        e.status.reset();
        e.url = e.url_before; // what the output holds (none for a legacy access type)
    }
}

// --- JSON: json-glib, strings made valid UTF-8 first (header bytes from the wild may be
// anything; json-glib requires UTF-8).

namespace {

void set_string(JsonObject *o, const char *member, const std::string &value)
{
    GCharPtr valid(g_utf8_make_valid(value.data(), static_cast<gssize>(value.size())));
    json_object_set_string_member(o, member, valid.get());
}

void set_nullable(JsonObject *o, const char *member, const std::optional<std::string> &value)
{
    if (value) set_string(o, member, *value);
    else json_object_set_null_member(o, member);
}

JsonObject *fields_object(const ExternalBodyEntry::Fields &fields)
{
    JsonObject *o = json_object_new();
    for (const auto &[n, v] : fields) set_string(o, n.c_str(), v);
    return o;
}

JsonObject *object(const RefEntry &r)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", r.part);
    set_string(o, "attr", r.attr);
    set_string(o, "url", r.url);
    json_object_set_string_member(o, "kind", json_name(r.kind));
    json_object_set_string_member(o, "status", json_name(r.status));
    if (!r.matched.empty()) set_string(o, "matched", r.matched);
    json_object_set_string_member(o, "action", json_name(r.action));
    if (!r.reason.empty()) set_string(o, "reason", r.reason);
    if (r.kept) set_string(o, "kept", *r.kept);
    set_nullable(o, "target", r.target);
    set_nullable(o, "target_message", r.target_message);
    set_nullable(o, "target_source", r.target_source);
    if (r.target_offset) json_object_set_int_member(o, "target_offset", static_cast<gint64>(*r.target_offset));
    else json_object_set_null_member(o, "target_offset");
    return o;
}

JsonObject *object(const ExternalBodyEntry &e)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", e.part);
    set_nullable(o, "access_type", e.access_type);
    set_nullable(o, "url", e.url);
    set_nullable(o, "url_before", e.url_before);
    if (e.inner) json_object_set_object_member(o, "inner", fields_object(*e.inner));
    if (e.original) json_object_set_object_member(o, "original", fields_object(*e.original));
    if (e.kept) set_string(o, "kept", *e.kept);
    if (e.status) {
        json_object_set_string_member(o, "status", json_name(*e.status));
        set_nullable(o, "reason", e.reason.empty() ? std::nullopt : std::optional<std::string>(e.reason));
    }
    return o;
}

JsonObject *object(const LabelEntry &l)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", l.part);
    set_string(o, "label", l.label);
    if (l.kept) set_string(o, "kept", *l.kept);
    return o;
}

JsonObject *object(const ErrorEntry &e)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", e.part);
    set_string(o, "code", e.code);
    set_string(o, "message", e.message);
    return o;
}

JsonObject *object(const KeptEntry &k)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", k.part);
    set_string(o, "edit", k.edit);
    set_string(o, "kept", k.kept);
    return o;
}

JsonObject *object(const UnreferencedEntry &u)
{
    JsonObject *o = json_object_new();
    set_string(o, "part", u.part);
    set_string(o, "related", u.related);
    return o;
}

JsonObject *object(const SignatureEntry &s)
{
    JsonObject *o = json_object_new();
    set_string(o, "kind", s.kind);
    set_string(o, "part", s.part);
    set_string(o, "state", s.state);
    json_object_set_boolean_member(o, "kept", s.kept);
    if (!s.domain.empty()) set_string(o, "domain", s.domain);
    if (!s.selector.empty()) set_string(o, "selector", s.selector);
    if (!s.detail.empty()) set_string(o, "detail", s.detail);
    return o;
}

template <class T> JsonArray *array(const std::vector<T> &entries)
{
    JsonArray *a = json_array_sized_new(static_cast<guint>(entries.size()));
    for (const T &e : entries) json_array_add_object_element(a, object(e));
    return a;
}

} // namespace

std::string MessageReport::to_json() const
{
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "index", static_cast<gint64>(index));
    set_string(o, "source", source);
    if (!queue_id.empty()) set_string(o, "queue_id", queue_id);
    json_object_set_int_member(o, "offset", static_cast<gint64>(offset));
    set_nullable(o, "message_id", message_id.empty() ? std::nullopt : std::optional<std::string>(message_id));
    json_object_set_boolean_member(o, "changed", changed);
    json_object_set_array_member(o, "refs", array(refs));
    json_object_set_array_member(o, "external_bodies", array(external_bodies));
    json_object_set_array_member(o, "labels", array(labels));
    json_object_set_array_member(o, "errors", array(errors));
    for (Extra e : extras_) {
        switch (e) {
        case Extra::Kept: json_object_set_array_member(o, "kept", array(kept_)); break;
        case Extra::Unreferenced: json_object_set_array_member(o, "unreferenced", array(unreferenced_)); break;
        case Extra::Signatures: json_object_set_array_member(o, "signatures", array(signatures_)); break;
        }
    }
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, o);
    GCharPtr text(json_to_string(node, FALSE));
    json_node_unref(node);
    return text.get();
}

} // namespace mimeuri
