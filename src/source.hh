// Input sources: a file read in place, or standard input held in memory up to a
// threshold and spooled to an unlinked temporary file beyond it.
#pragma once

#include "gobj.hh"
#include "result.hh"

#include <gmime/gmime.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mimeuri {

class Source {
public:
    // A regular file is read in place; anything else (a FIFO, a terminal, /dev/stdin)
    // goes through the same bounded spooling as standard input.
    static Result<Source> open_path(const std::string &path, std::size_t spool_threshold);
    // Reads all of fd (not closed). Kept in memory up to spool_threshold bytes,
    // spooled to an unlinked temporary file beyond it, so memory stays bounded.
    static Result<Source> read_fd(int fd, const std::string &name, std::size_t spool_threshold);
    // For tests: a source over bytes held in memory.
    static Source from_bytes(std::string_view bytes, const std::string &name);
    // The bytes [begin, end) of src, read once into memory: a source with src's offsets
    // (reads outside [begin, end) are refused) whose stream() is served from memory, so
    // that GMime parses one message without a read and a seek per 4 KiB block.
    static Result<Source> window(const Source &src, std::int64_t begin, std::int64_t end);

    // An independent handle on the same bytes, for another thread: its own file
    // description (a stream's reads seek), or the same memory, borrowed.
    Result<Source> reopen() const;

    Source(Source &&) noexcept;
    Source &operator=(Source &&) noexcept;
    Source(const Source &) = delete;
    Source &operator=(const Source &) = delete;
    ~Source();

    const std::string &name() const { return name_; }
    std::int64_t size() const { return size_; }
    bool in_memory() const { return mem_ != nullptr; }
    bool spooled() const { return spooled_; }
    bool window() const { return bytes_ != nullptr; }

    // The bytes themselves (from offset 0) when held in memory, else nullptr (a window
    // too); the file descriptor otherwise.
    const char *memory() const { return mem_ ? reinterpret_cast<const char *>(mem_->data) : nullptr; }
    int fd() const { return fd_; }

    // The whole input as a GMime stream; parse substreams of it.
    GMimeStream *stream() const { return stream_.get(); }

    // [begin, end) where it is, for a window or a source in memory (empty for a file).
    std::string_view view(std::int64_t begin, std::int64_t end) const;
    // Reads up to len bytes at off; returns the count read (short only at end of input).
    Result<std::size_t> read_at(std::int64_t off, char *buf, std::size_t len) const;
    // [begin, end) as a string; for small ranges (headers, HTML parts).
    Result<std::string> slice(std::int64_t begin, std::int64_t end) const;
    // Up to len bytes at off (short only at end of input), read once and shared: a window
    // made later that lies inside one of the last two blocks read is served from it, with no
    // read of its own (the mbox splitter reads its blocks so, and the messages it finds are
    // then read from memory). Returns a new reference.
    Result<GBytes *> read_block(std::int64_t off, std::size_t len) const;

private:
    Source() = default;
    std::string name_;
    std::int64_t size_{0};
    int fd_{-1};                    // for pread; the stream holds a dup of it
    GByteArray *mem_{nullptr};      // owned by stream_ when in memory (unless borrowed)
    bool spooled_{false};
    GBytes *bytes_{nullptr};        // a window's bytes, from offset base_
    mutable GBytes *blocks_[2]{nullptr, nullptr}; // the last two read_block()s, newest first
    mutable std::int64_t block_off_[2]{0, 0};
    void drop_blocks() const;
    std::int64_t base_{0};
    GPtr<GMimeStream> stream_;
    // A reopened in-memory source reads its original's buffer, which the original's
    // stream owns: it keeps that stream (and so the buffer) alive as long as it lives.
    GPtr<GMimeStream> keep_;
};

} // namespace mimeuri
