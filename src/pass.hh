// The interface every rewriting pass implements. A pass reads the message context,
// records edits and report entries on it, and knows nothing about the command line.
#pragma once

#include "message.hh"
#include "result.hh"

#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

class Pass {
public:
    virtual ~Pass() = default;
    virtual std::string_view name() const = 0;

    // Passes that resolve references across messages (mid:) see every message of the run
    // once before any is rewritten.
    virtual bool wants_index() const { return false; }
    // Whether what the index tells such a pass can change a message or the files it writes,
    // not only what the report, a log line or a summary says of it. When it cannot and
    // nothing is reported, the run keeps no index (Engine::wants_index).
    virtual bool edits_from_index() const { return wants_index(); }
    // A pass whose results depend on the order messages are planned in (--cid=extract
    // numbers its folders so): the run plans its messages in one process.
    virtual bool ordered() const { return false; }
    virtual Status index(const MessageContext &) { return ok(); }
    // With --jobs, workers index their share: the index travels to the parent as bytes.
    virtual std::string save_index() const { return {}; }
    virtual void merge_index(const std::string &) {}
    // Whether the index now knows a key a message waited for (MessageContext::wait_for).
    virtual bool now_known(const std::string &) const { return true; }
    // The media types ("type/subtype", lower case) of the entities this pass may edit, or
    // whose presence alone lets it edit anything; empty: it may change any message. A message
    // that provably holds none of the run's passes' types is copied through with only its
    // header block parsed (MessageContext::parse, Engine).
    virtual std::vector<std::string> edited_types() const { return {}; }
    // Nonzero for a pass that edits entities of its edited_types() only where their decoded
    // content (in an ASCII-compatible charset, up to this many bytes) shows what
    // may_hold_reference() looks for, and that no Content-Location steers: a message
    // whose bytes, raw and quoted-printable decoded, show nothing of the kind is copied
    // through as well (MessageContext::parse, InertCheck).
    virtual std::size_t edits_only_references_up_to() const { return 0; }
    // For such a pass: false only when bytes (a message's, raw or decoded) cannot hold what
    // makes it edit an entity of its edited_types(). The core asks it, never the pass's own
    // headers.
    virtual bool may_hold_reference(std::string_view) const { return true; }

    // Records this pass's edits and report entries for one message. An Error means the
    // pass failed on this message; the run then applies the --on-error policy.
    virtual Status apply(MessageContext &ctx) = 0;
};

} // namespace mimeuri
