// Splitting an input into messages: one message, or an mbox (mboxo/mboxrd).
#pragma once

#include "id_census.hh"
#include "message_id.hh"
#include "result.hh"
#include "source.hh"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace mimeuri {

enum class Format { Auto, Message, Mbox };

// mboxcl2 (Dovecot, some MUAs): the message at msg_begin has a header "Content-Length: N"
// and its body of N bytes ends exactly where the input does or where the next From_ line
// (after an optional empty line) starts; "From " lines inside it are body.
struct ContentLength {
    std::int64_t length;     // N, the value that counts (the last valid one)
    std::int64_t body_begin; // after the empty line that ends the header block
    std::int64_t end;        // body_begin + N
};

// One message of an input. Bytes outside [msg_begin, msg_end) — the "From " line and the
// blank separator line of an mbox — belong to the container and are copied as read.
struct Segment {
    std::int64_t begin{0};     // start of the "From " line, or of the message
    std::int64_t msg_begin{0}; // first byte of the message itself
    std::int64_t msg_end{0};   // one past its last byte
    std::int64_t next{-1};     // where the next segment begins (the input's end for the last)
    // In an mbox: the message's mboxcl2 Content-Length, found when the input was split (it
    // looks past the message), so that MessageContext never reads it again.
    std::optional<ContentLength> length_split{};
    // In an mbox: the message's header block as plain_message_id reads it, where the split's
    // reading of the block for a Content-Length found it plain (read_head), so that the
    // inert copy does not read it again.
    std::optional<PlainHead> head{};
};

std::optional<ContentLength> mboxcl2_length(const Source &src, std::int64_t msg_begin);
// Whether the header block at the start of head may hold what mboxcl2_length looks for: false
// only when head holds the whole block (to its empty line) and no line in it starts with
// "Content-Length:", when mboxcl2_length would find none either; it reads nothing.
bool may_have_content_length(std::string_view head);

// True when the input starts with an mbox "From " line.
Result<bool> looks_like_mbox(const Source &src);

// With Format::Mbox, a message starts at a line beginning "From " at the start of the
// input or right after an empty line (the mboxo/mboxrd rule; ">From " quoting is left as
// read). The empty line before each "From " line is the separator and not part of the
// preceding message. Data before the first "From " line becomes a message of its own.
Result<std::vector<Segment>> split(const Source &src, Format format);

// The same split a piece at a time, so that work on the first messages can start while the
// rest of a large mbox is still being read. step() scans about `budget` more bytes and
// appends the segments it has finished; it returns true once the whole input is split.
// An explicit state machine (State), a method per state: step_length (a message just begun:
// its mboxcl2 Content-Length), step_line (a line: does it open a message), step_end (the
// input's end: the last segment).
class Splitter {
public:
    Splitter(const Source &src, Format format) : src_(src), format_(format) {}
    // Splits from off on, as if the input started there (`mimeuri index` reading only what
    // was appended to an mbox: off is the start of a "From " line after an empty line).
    void start_at(std::int64_t off)
    {
        start_ = line_ = buf_off_ = off;
        cl_from_ = -1;
        state_ = State::Line;
        block_.reset();
        buf_ = {};
    }
    Result<bool> step(std::vector<Segment> &out, std::int64_t budget);
    bool done() const { return state_ == State::Done; }
    // Every line split from here on goes to c too (before the first step).
    void census(IdCensus *c) { census_ = c; }

private:
    struct Start { // a "From " line that opens a message
        std::int64_t from_line, separator, message;
        std::optional<ContentLength> length{}; // its mboxcl2 Content-Length, once read
        std::optional<PlainHead> head{};       // its header block, where plain
    };
    enum class State { Length, Line, End, Done };
    enum class Next { On, Pause }; // a state's method: go on, or end this step (returns false)
    Result<Next> step_length();
    Result<Next> step_line();
    bool skip_lines(); // the lines that cannot open a message, in one search
    Result<Next> step_end();
    Result<Next> find_line_end(std::int64_t &nl);
    Status tell_census(std::int64_t next);
    Status census_range(std::int64_t from, std::int64_t end);
    // A message found in this step while the input is still arriving: the step ends here
    // rather than wait.
    bool end_step_here() const { return out_->size() > found_before_ && src_.known_size() < 0; }
    Result<Next> reach(std::int64_t want);
    void opened(Start s);
    Result<bool> fill(std::int64_t off); // the buffer from off on (at most 1 MiB)
    HeadRead head_at(std::int64_t msg_begin) const;
    std::optional<ContentLength> length_at(std::int64_t msg_begin) const;
    int byte_at(std::int64_t off) const;

    const Source &src_;
    Format format_;
    State state_{State::Line};
    // This step's: where its segments go, how many were there, where its budget ends, and how
    // far the input goes as far as is known (`size` is the input's end only once `complete`).
    std::vector<Segment> *out_{nullptr};
    std::size_t found_before_{0};
    std::int64_t stop_{0};
    std::int64_t size_{0};
    bool complete_{false};
    std::unique_ptr<GBytes, void (*)(GBytes *)> block_{nullptr, g_bytes_unref}; // from src_.read_block()
    std::string_view buf_;      // block_'s bytes
    std::int64_t buf_off_{0};   // source offset of buf_[0]
    std::int64_t line_{0};      // start of the current line
    std::int64_t prev_line_{-1}; // start of the previous line
    bool prev_empty_{true};     // the start of input counts as "after an empty line"
    bool any_{false};           // a "From " line was found
    std::int64_t start_{0};     // where splitting started
    Start last_{};              // the latest, whose message's end is not known yet
    std::int64_t cl_from_{-1};  // a message just begun, its Content-Length (mboxcl2) not yet read
    IdCensus *census_{nullptr};
};

} // namespace mimeuri
