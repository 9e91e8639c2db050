// The report's JSON, written as it goes (no tree): a member at a time into one string,
// strings made valid UTF-8 first (header bytes from the wild may be anything) and escaped by
// table. The core's members (report.cc) and each pass's own section (report_section.hh) write
// their entries with it. The bytes are those json-glib's generator wrote before
// (tests/test_report.cc holds the two side by side), but for U+001F, which json-glib wrote
// raw (invalid JSON) and this escapes.
#pragma once

#include "result.hh"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mimeuri {

// One JSON object or array after another, members separated by commas: begin and end what
// is open, name each member. Adding a field to an entry is one more call.
class JsonWriter {
public:
    explicit JsonWriter(std::string &out, const std::function<Status(std::string &)> *flush = nullptr)
        : out_(out), flush_(flush)
    {
    }
    // Between entries: what is written so far handed on once it is 64 KiB, so that a line
    // with many entries is never held whole. The first error sticks and stops the handing on.
    void entry_done()
    {
        if (flush_ && status_ && out_.size() >= (std::size_t{64} << 10)) status_ = (*flush_)(out_);
    }
    const Status &status() const { return status_; }

    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }
    // A member's name; the value follows.
    JsonWriter &key(std::string_view name)
    {
        separate();
        quoted(name);
        out_ += ':';
        pending_value_ = true;
        return *this;
    }
    void string(std::string_view v)
    {
        separate();
        quoted(v);
    }
    void null()
    {
        separate();
        out_ += "null";
    }
    void nullable(const std::optional<std::string> &v) { v ? string(*v) : null(); }
    void boolean(bool v)
    {
        separate();
        out_ += v ? "true" : "false";
    }
    void integer(std::int64_t v)
    {
        separate();
        out_ += std::to_string(v);
    }

private:
    void open(char c)
    {
        separate();
        out_ += c;
        first_ = true;
    }
    void close(char c)
    {
        out_ += c;
        first_ = false;
    }
    // A comma before every value in an object or array but its first; none after a key.
    void separate()
    {
        if (pending_value_) pending_value_ = false;
        else if (!first_) out_ += ',';
        first_ = false;
    }
    void quoted(std::string_view v);
    bool escaped(std::string_view v, bool ascii);

    std::string &out_;
    const std::function<Status(std::string &)> *flush_;
    Status status_ = ok();
    bool first_{true};
    bool pending_value_{false};
};

} // namespace mimeuri
