// Records held in order for later: in memory up to a budget, then appended to an unlinked
// temporary file, so that holding many of them (the plans that wait for a whole mbox to be
// indexed) does not make memory grow with the input.
#pragma once

#include "result.hh"

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

namespace mimeuri {

class RecordSpool {
public:
    explicit RecordSpool(std::size_t memory_budget = 4u << 20);
    RecordSpool(const RecordSpool &) = delete;
    RecordSpool &operator=(const RecordSpool &) = delete;
    ~RecordSpool();

    // An error means the records can no longer be spilled to the temporary file (a full or
    // unwritable TMPDIR); the record is held all the same, in memory, and drain() still gives
    // back every record pushed.
    Status push(std::string_view record);
    std::size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    bool spilled() const { return fd_ >= 0; }
    // Calls f with each record in the order pushed, until f returns false; the spool is
    // empty afterwards. An error (the temporary file could not be read back) means the
    // records from the failing one on were not given to f.
    Status drain(const std::function<bool(std::string &&)> &f);

private:
    std::size_t budget_;
    std::deque<std::string> memory_;
    std::size_t memory_bytes_{0};
    std::size_t count_{0};
    int fd_{-1};           // the temporary file, once the budget is spent
    std::string pending_;  // bytes for the file, written in blocks
    std::size_t pending_records_{0}; // records in pending_
    std::size_t file_records_{0};    // records wholly written to the file
    Status flush();
};

} // namespace mimeuri
