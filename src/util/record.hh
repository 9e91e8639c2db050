// Length-prefixed fields: the records a run's workers send back (src/run/workers.cc), the plan
// on the wire (src/mime/plan_wire.cc), what --in-place's workers and the taker hold.
#pragma once

#include <string>

namespace mimeuri {

// Fields, each a 64-bit length and its bytes; get() throws std::runtime_error past the end.
class Record {
public:
    Record() = default;
    explicit Record(std::string bytes) : buf_(std::move(bytes)) {}
    void put(const std::string &s);
    void put(std::size_t v) { put(std::to_string(v)); }
    std::string get();
    std::size_t get_size() { return static_cast<std::size_t>(std::stoull(get())); }
    std::string take() { return std::move(buf_); }
    std::size_t size() const { return buf_.size(); }

private:
    std::string buf_;
    std::size_t pos_{0};
};

} // namespace mimeuri
