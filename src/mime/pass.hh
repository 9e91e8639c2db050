// The interface every rewriting pass implements. A pass reads the message context,
// records edits and report entries on it, and knows nothing about the command line. Four
// calls and the destructor; what only a pass that resolves references across messages needs
// is its CrossMessageIndex, which other passes do not have.
#pragma once

#include "message.hh"
#include "result.hh"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

// What a pass tells the inert copy (MessageContext::parse, Engine): which messages it
// cannot change, so that they are copied through with only their header block parsed.
struct InertHint {
    // The media types ("type/subtype", lower case) of the entities this pass may edit, or
    // whose presence alone lets it edit anything; empty: it may change any message.
    std::vector<std::string> edited_types;
    // Nonzero for a pass that edits entities of its edited_types only where their decoded
    // content (in an ASCII-compatible charset, up to this many bytes) shows what
    // may_hold_reference looks for, and that no Content-Location steers: a message whose
    // bytes, raw and quoted-printable decoded, show nothing of the kind is copied through as
    // well (InertCheck).
    std::size_t references_up_to{0};
    // For such a pass: false only when bytes (a message's, raw or decoded) cannot hold what
    // makes it edit an entity of its edited_types. The core asks it, never the pass's own
    // headers.
    std::function<bool(std::string_view)> may_hold_reference;
    // For such a pass, optional: true only when a decoded text/html part (its bytes and its
    // charset parameter, in a message whose Content-IDs are those of InertIds) certainly
    // gives it nothing to edit, nothing to report as dangling or ambiguous and nothing to
    // wait for; the engine asks it where may_hold_reference finds something (InertCheck).
    std::function<bool(std::string_view, std::string_view, const InertIds &)> nothing_to_edit;
    // A pass that only reports (changes no byte with these settings): where nothing is
    // reported (no report, no log line), the engine does not run it.
    bool reports_only{false};
};

// A pass that resolves references across messages (mid:) sees every message of the run once,
// through this index, before any is rewritten.
class CrossMessageIndex {
public:
    virtual ~CrossMessageIndex() = default;
    // Whether what the index tells the pass can change a message or the files it writes, not
    // only what the report, a log line or a summary says of it. When it cannot and nothing
    // is reported, the run keeps no index (Engine::wants_index).
    virtual bool edits_from_index() const = 0;
    // Adds a message: what it offers to be referenced (it cannot fail).
    virtual void add(const MessageContext &) = 0;
    // With --jobs, workers index their share: the index travels to the parent as bytes.
    virtual std::string save() const = 0;
    virtual void merge(const std::string &) = 0;
    // Whether the index now knows a key a message waited for (MessageContext::wait_for).
    virtual bool now_known(const std::string &) const = 0;
};

class Pass {
public:
    virtual ~Pass() = default;
    virtual std::string_view name() const = 0;
    // Records this pass's edits and report entries for one message. An Error means the
    // pass failed on this message; the run then applies the --on-error policy.
    virtual Status apply(MessageContext &ctx) = 0;
    // What the inert copy may skip for this pass; the default: nothing (it may change any
    // message).
    virtual InertHint inert_hint() const { return {}; }
    // The pass's index across messages, when it keeps one with these settings; null for the
    // passes that read each message alone.
    virtual CrossMessageIndex *cross_message() { return nullptr; }
};

} // namespace mimeuri
