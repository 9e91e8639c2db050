// The per-message report: one JSON object per message, written as JSON Lines.
#pragma once

#include <json-glib/json-glib.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mimeuri {

struct JsonArrayDeleter {
    void operator()(JsonArray *a) const { json_array_unref(a); }
};
using JsonArrayPtr = std::unique_ptr<JsonArray, JsonArrayDeleter>;

// Sets a string member, replacing invalid UTF-8 so the JSON stays valid.
void json_set_string(JsonObject *o, const char *member, const std::string &value);

struct MessageReport {
    std::size_t index{0}; // 1-based position of the message in its source
    std::size_t input_no{0}; // position of its source among the run's inputs (not reported)
    std::string source;   // file name, or "-" for standard input
    std::string message_id;
    bool changed{false};
    JsonArrayPtr refs{json_array_new()};
    JsonArrayPtr external_bodies{json_array_new()};
    JsonArrayPtr labels{json_array_new()};
    JsonArrayPtr errors{json_array_new()};

    // Appends {"part", "code", "message"} to errors.
    void add_error(const std::string &part, const std::string &code, const std::string &message);
    // An edit a pass left out because signed content is kept (src/signatures.cc): appends
    // {"part", "edit", "kept": reason} to the "kept" member. Refs, labels and external
    // bodies say so in their own entries instead.
    void add_kept(const std::string &part, const std::string &edit, const std::string &reason);
    // Further members, after the standard ones (takes the array).
    void set_extra(const std::string &name, JsonArray *array);
    std::vector<std::pair<std::string, JsonArrayPtr>> extra;
    std::size_t error_count() const { return json_array_get_length(errors.get()); }

    // One line of JSON, without the trailing newline.
    std::string to_json() const;
};

} // namespace mimeuri
