#include "report.hh"

#include "gobj.hh"

namespace mimeuri {

// json-glib requires UTF-8; header bytes from the wild may be anything.
void json_set_string(JsonObject *o, const char *member, const std::string &value)
{
    GCharPtr valid(g_utf8_make_valid(value.data(), static_cast<gssize>(value.size())));
    json_object_set_string_member(o, member, valid.get());
}

void MessageReport::add_error(const std::string &part, const std::string &code,
                              const std::string &message)
{
    JsonObject *o = json_object_new();
    json_set_string(o, "part", part);
    json_set_string(o, "code", code);
    json_set_string(o, "message", message);
    json_array_add_object_element(errors.get(), o);
}

void MessageReport::add_kept(const std::string &part, const std::string &edit, const std::string &reason)
{
    JsonArray *kept = nullptr;
    for (auto &[n, a] : extra)
        if (n == "kept") kept = a.get();
    if (!kept) {
        kept = json_array_new();
        extra.emplace_back("kept", JsonArrayPtr(kept));
    }
    JsonObject *o = json_object_new();
    json_set_string(o, "part", part);
    json_set_string(o, "edit", edit);
    json_set_string(o, "kept", reason);
    json_array_add_object_element(kept, o);
}

void MessageReport::set_extra(const std::string &name, JsonArray *array)
{
    for (auto &[n, a] : extra)
        if (n == name) {
            a.reset(array);
            return;
        }
    extra.emplace_back(name, JsonArrayPtr(array));
}

std::string MessageReport::to_json() const
{
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "index", static_cast<gint64>(index));
    json_set_string(o, "source", source);
    if (message_id.empty())
        json_object_set_null_member(o, "message_id");
    else
        json_set_string(o, "message_id", message_id);
    json_object_set_boolean_member(o, "changed", changed);
    json_object_set_array_member(o, "refs", json_array_ref(refs.get()));
    json_object_set_array_member(o, "external_bodies", json_array_ref(external_bodies.get()));
    json_object_set_array_member(o, "labels", json_array_ref(labels.get()));
    json_object_set_array_member(o, "errors", json_array_ref(errors.get()));
    for (const auto &[name, array] : extra) json_object_set_array_member(o, name.c_str(), json_array_ref(array.get()));
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, o);
    GCharPtr text(json_to_string(node, FALSE));
    json_node_unref(node);
    return text.get();
}

} // namespace mimeuri
