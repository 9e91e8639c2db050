// id_census: the Message-IDs an mbox may give its run's index, gathered while it is split.
//
// SYNOPSIS  splitter.census(&c); ...split...; c.complete(); c.rules_out(plan.waits)
//
// A plan whose mid: reference dangles waits (ForwardHold) until the whole input is indexed,
// in case a later message carries that id; every plan after it waits too, since the output
// keeps the input's order. The census lets such a plan go at once when no message of the
// input can carry any id it waits for. It is a superset of what the index will learn: every
// line of the input that starts a Message-ID field ("Message-ID", any case, optional blanks,
// a colon), with its folded lines, wherever it stands (the header of a message, of an
// embedded message/rfc822, or a body line that looks like one), read with the functions
// GMime's message uses (message_id_of_value). GMime reads an embedded message from its part's
// bytes as they stand (a base64 or quoted-printable message/rfc822 gives it no Message-ID:
// checked on this machine), so every id the index learns comes from such a line. Where the
// census cannot be sure what GMime would make of a field (a NUL, a bare CR, a field over
// 8 KiB: what plain_message_id does not read either) or the split skipped lines (an mboxcl2
// body), it rules nothing out and the plans wait for the input's end, as before. Ids are kept as 64-bit
// hashes of their lower-cased form (the index also answers an id whose domain differs in
// case); a collision only makes a plan wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

class IdCensus {
public:
    static constexpr std::size_t kMaxField = 8192;
    // The splitter's side, each line of the input in order. wants(): whether line() needs
    // this one (a line starting with M or m, or any line while a field is open).
    bool wants(unsigned char first) const { return open_ || first == 'M' || first == 'm'; }
    // A line, its LF included when it has one; at most kMaxField + 1 bytes of it are needed.
    void line(std::string_view text);
    // The split passed over lines without reading them: nothing can be ruled out.
    void skipped() { unsure_ = true; }
    // The input's end: the census is whole.
    void end();

    bool complete() const { return ended_ && !unsure_; }
    // Whether, the census whole, no id in ids can be known to the run's index once the input
    // is indexed; false for an empty list (a plan that did not say what it waits for) or an
    // empty id (which waits for whatever comes).
    bool rules_out(const std::vector<std::string> &ids) const;
    // Whether, the census whole, each id in ids can be known to the run's index at most once
    // (no second copy, no variant in the domain's case): what a reference already answered
    // by the messages indexed so far needs to be final. False for an empty list or id.
    bool rules_out_repeats(const std::vector<std::string> &ids) const;
    std::size_t size() const { return keys_.size(); }

private:
    void close_field();
    static std::uint64_t key(std::string_view id);

    std::string field_; // the open field's raw value: after its colon, through its lines so far
    bool open_{false};
    bool unsure_{false};
    bool ended_{false};
    std::vector<std::uint64_t> keys_; // sorted once ended
    std::vector<std::uint64_t> repeated_; // once ended: the keys met more than once, sorted
};

} // namespace mimeuri
