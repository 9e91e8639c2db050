// The front's copy of one message as the MTA sends it (header lines, then body chunks),
// rebuilt as bytes: each header line as "name:value" with CRLF line ends, the empty line,
// the body (CRLF already). In memory up to the spool threshold, then in an unlinked
// temporary file; handed to a worker as a descriptor.
#pragma once

#include "milter_edit.hh"
#include "result.hh"

#include <cstdint>
#include <string>

namespace mimeuri::milter {

class Message {
public:
    Message(bool leadspc_, std::size_t spool_threshold) : leadspc(leadspc_), threshold_(spool_threshold) {}
    Message(const Message &) = delete;
    Message &operator=(const Message &) = delete;
    ~Message();
    // The MTA keeps the space after the colon in the value (SMFIP_HDR_LEADSPC negotiated).
    const bool leadspc;

    Status header(const char *name, const char *value);
    Status end_of_header();
    Status body(const unsigned char *p, std::size_t n);
    // The message as a file descriptor the worker can read (made at the end of the message).
    Result<int> finish();
    std::int64_t size() const { return size_; }
    MessageSplit split() const { return {header_end_, header_end_ + 2}; }
    // The message's bytes at off, and past its end those a worker wrote into its file.
    Result<std::size_t> read_at(std::int64_t off, char *buf, std::size_t len) const;

private:
    Status append(const char *p, std::size_t n);
    std::size_t threshold_;
    std::string mem_;
    int fd_{-1};
    std::int64_t size_{0};
    std::int64_t header_end_{-1};
};

} // namespace mimeuri::milter
