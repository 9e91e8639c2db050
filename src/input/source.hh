// Input sources: a file read in place, or standard input held in memory up to a
// threshold and spooled to an unlinked temporary file beyond it. The spool fills as the
// input arrives (a thread moves it), and what has arrived is read while the rest comes.
#pragma once

#include "gobj.hh"
#include "result.hh"

#include <gmime/gmime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mimeuri {

class Source {
public:
    // A regular file is read in place; anything else (a FIFO, a terminal, /dev/stdin)
    // goes through the same bounded spooling as standard input.
    static Result<Source> open_path(const std::string &path, std::size_t spool_threshold);
    // Reads all of fd (not closed; the spool reads a duplicate of it). Kept in memory up to
    // spool_threshold bytes, spooled to an unlinked temporary file beyond it, so memory stays
    // bounded. A spooled input is returned as soon as the threshold is passed: a thread moves
    // the rest to the spool as it arrives (reach(), settle()), so that the first messages are
    // filtered while the sender is still writing the last.
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
    // The whole input's size: for a spooled input still arriving, once all of it has (waits).
    // Should the spool fail, what arrived; every read past it then fails with settle()'s error.
    std::int64_t size() const;
    // The size when it is known without waiting (the whole input has arrived), else -1 (also
    // when the spool failed: the whole input never arrives).
    std::int64_t known_size() const;
    // How many bytes have arrived so far, without waiting (the size, for any other source).
    std::int64_t arrived() const;
    // Waits until at least `want` bytes have arrived or the input has ended, and returns how
    // many have (fewer than want only at the end), or why the spool failed.
    Result<std::int64_t> reach(std::int64_t want) const;
    // Waits for the whole input (and the spool's thread to end: before a fork), and returns
    // its size, or why the spool failed.
    Result<std::int64_t> settle() const;
    bool in_memory() const { return mem_ != nullptr; }
    bool spooled() const { return spooled_; }
    bool window() const { return bytes_ != nullptr; }

    // The bytes themselves (from offset 0) when held in memory, else nullptr (a window
    // too); the file descriptor otherwise.
    const char *memory() const { return mem_ ? reinterpret_cast<const char *>(mem_->data) : nullptr; }
    int fd() const { return fd_; }

    // The whole input as a GMime stream; parse substreams of it. A window's is made when first
    // asked for: most messages are copied without GMime (its making and freeing were 2% of the
    // default job's instructions, issue 53).
    GMimeStream *stream() const;

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
    struct Spool; // the thread moving a piped input to the spool file, and what it has moved
    static Result<Source> spool_rest(int in, int tmp, std::int64_t spooled, const std::string &name);
    std::string name_;
    mutable std::int64_t size_{0}; // with spool_, what has arrived when last asked
    std::shared_ptr<Spool> spool_; // a spooled piped input (shared with its reopened handles)
    int fd_{-1};                    // for pread; the stream holds a dup of it
    GByteArray *mem_{nullptr};      // owned by stream_ when in memory (unless borrowed)
    bool spooled_{false};
    GBytes *bytes_{nullptr};        // a window's bytes, from offset base_
    mutable GBytes *blocks_[2]{nullptr, nullptr}; // the last two read_block()s, newest first
    mutable std::int64_t block_off_[2]{0, 0};
    void drop_blocks() const;
    std::int64_t base_{0};
    mutable GPtr<GMimeStream> stream_; // (a window's: made by stream())
    // A reopened in-memory source reads its original's buffer, which the original's
    // stream owns: it keeps that stream (and so the buffer) alive as long as it lives.
    GPtr<GMimeStream> keep_;
};

} // namespace mimeuri
