// The reference pass, step 1: what a message offers to be referenced. Per entity, its
// Content-ID (as GMime cleaned it, and as written), its Content-Location resolved against
// its base (RFC 2557 4, 5), and per message (the top one and each embedded one) its
// Message-ID. Also the run's index of Message-IDs that mid: looks up (RFC 2392).
// Plain data: the resolver (ref_resolver.hh) reads it without GMime.
#pragma once

#include "message.hh"
#include "mid_store.hh"

#include <functional>
#include <glib.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mimeuri::refs {

// --- Text of ids and URLs.
std::string trim(std::string_view s);
// A msg-id without its angle brackets and surrounding white space.
std::string strip_brackets(std::string s);
// %XX undone; s itself when that gives no valid string.
std::string unescape(const std::string &s);
// ref resolved against base (RFC 3986), or "" when it cannot be.
std::string resolve(const std::string &base, const std::string &ref);
// local@domain with the domain compared case-insensitively (RFC 5322 msg-id).
bool same_id_ci_domain(const std::string &a, const std::string &b);

// A node's media type, "type/subtype" in lower case ("text/plain" without a Content-Type).
std::string mime_type(const Node &n);
// The image type a content's first bytes show (PNG, JPEG, GIF, WebP: the WHATWG MIME
// Sniffing standard's image patterns, 6.1, as browsers apply them), or "" for none.
std::string sniff_image(std::string_view head);

struct IndexedPart {
    int parent{-1};          // index into MessageIndex::parts, -1 for the top-level entity
    std::string section;     // IMAP section
    bool related{false};     // a multipart/related
    bool alternative{false}; // a multipart/alternative
    int message{0};          // index into MessageIndex::messages
    std::string cid_clean;   // the Content-ID as GMime decodes it
    std::string cid_raw;     // the Content-ID as written, without brackets
    std::string location;    // Content-Location, absolute where it resolves (RFC 2557 4.4)
    std::string location_unescaped; // the same with %XX decoded, as a reference is compared to it
    std::string base;        // what relative URLs in this entity resolve against
    std::string filename;    // a leaf's Content-Disposition filename, as GMime decodes it
    std::string name;        // a leaf's Content-Type name
};

struct IndexedMessage {
    bool has_id{false};
    std::string message_id; // as GMime decodes it
    std::string section;    // "" for the top-level message, else its message/rfc822 part
    int node{0};            // the entity mid:ID (without a content-id) names
    // Borrowed: the context's (the index lives no longer). Its In-Reply-To and References are
    // read only when a cid: names no part of the message (MessageIndex::answers): reading
    // them for every message cost 1% of the references pass's instructions.
    GMimeMessage *gmime{nullptr};
};

// How many of the ids a message answers are read: a sender's 20,000 References cost no more.
inline constexpr std::size_t kMaxAnswered = 32;
// The ids In-Reply-To and References (raw values; null for none) name, the nearest first:
// In-Reply-To's, then References' from the last; each once, none that skip() refuses, at most
// kMaxAnswered. MessageIndex::answers and `mimeuri archive` (src/archive/intake.cc) read them so.
std::vector<std::string> answered_ids(const char *in_reply_to, const char *references,
                                      const std::function<bool(const std::string &)> &skip);

struct MessageIndex {
    std::vector<IndexedPart> parts; // one per node, in document order
    std::vector<IndexedMessage> messages; // the top-level message first, then embedded ones
    bool any_location{false};
    bool any_related_id{false}; // a part inside a multipart/related has a Content-ID

    // The nearest multipart/related enclosing node, or -1.
    int related_of(int node) const;

    // Whether node is ancestor or inside it.
    bool is_descendant(int node, int ancestor) const;

    // The messages messages[k] answers, the nearest first: In-Reply-To's ids, then
    // References' from the last (RFC 5322 3.6.4), each once, none of this message's own ids
    // (nor of the messages embedded in it: a loop in References), at most kMaxAnswered. A
    // cid: that names no part of the message is looked for in them (Resolver::cid,
    // "matched":"thread").
    std::vector<std::string> answers(int k) const;
};

// The index of one parsed message; parts[i] describes ctx.nodes()[i].
MessageIndex index_message(const MessageContext &ctx);

// --cid=extract: the part a message's page (DIR/N/index.html) is made of, its first
// text/html leaf; -1 when it has none (then it has no page).
int page_node(const MessageContext &ctx);

// The run's messages by Message-ID, as mid: sees them (RFC 2392: mid:message-id[/content-id]).
// Every message of a run is in it, so it is kept small (about 150 bytes a message, where a map
// of Entry took 450: on the virtual machines mail runs on each new page of heap costs a fault
// of 25-40 us, and indexing was a third of an unchanged message's cost): the ids' bytes in a
// GStringChunk, a fixed-size record each, the input's name once per input, and a section and
// Content-IDs only for the messages that have them.
class RunIndex {
public:
    struct Entry {
        std::size_t index{0};                    // the message's number in its input
        std::string section;                     // "" for a top-level message, else its part
        std::map<std::string, std::string> cids; // cleaned Content-ID -> section
        int count{0};                            // how many messages carry this Message-ID
        std::size_t input_no{0};                 // run order, so that the first one wins
        std::string source;                      // where the message lives: its input
        std::int64_t offset{0};                  // ... and its offset there
        bool html{false};                        // a top-level message with a text/html part:
                                                 // --cid=extract gives it a page (page_node)
        std::string page; // an index's: the page an earlier --cid=extract run wrote for it
        // Between a run's workers (save, merge), every field but page, which only an index on
        // disk (--mid-index) gives, never a message a worker read.
        template <class Io, class Self> static void fields(Io &io, Self &e)
        {
            io(e.index, e.section, e.count, e.input_no, e.source, e.offset, e.html, e.cids);
        }
    };
    static Entry entry_of(StoredMessage m, int count);
    // The id as indexed, and its entry.
    using Found = std::optional<std::pair<std::string, Entry>>;

    RunIndex();
    ~RunIndex();
    RunIndex(const RunIndex &) = delete;
    RunIndex &operator=(const RunIndex &) = delete;

    // Indexes the message and the messages embedded in it; pages: --cid=extract, each
    // entry says whether its message has a page (Entry::html).
    void add_message(const MessageContext &ctx, bool pages);
    void add(const std::string &id, Entry e);
    // The entry of exactly id; with ci, of id with its domain compared case-insensitively.
    Found find(const std::string &id, bool ci) const;
    std::size_t size() const { return by_id_.size(); }
    std::string save() const;
    void merge(const std::string &bytes);

private:
    struct Slot {
        std::uint64_t index{0};
        std::int64_t offset{0};
        std::uint32_t input_no : 31;
        std::uint32_t html : 1;
        std::uint32_t source{0}; // in sources_
        std::int32_t count{0};
        std::uint32_t extra{0};  // 1 + its place in extras_; 0: a top-level message with no Content-ID
    };
    struct Extra {
        std::string section;
        std::map<std::string, std::string> cids;
    };
    std::string_view keep(std::string_view s); // s's bytes, stored for the index's life
    Slot slot_of(Entry &&e);
    Entry entry_at(const Slot &s) const;

    GStringChunk *bytes_;                                 // every id's (and ci key's) bytes
    std::unordered_map<std::string_view, Slot> by_id_;    // by cleaned Message-ID
    // local part + lower-case domain -> the by_id_ key it stands for (RFC 5322 msg-id: the
    // domain compares case-insensitively)
    std::unordered_map<std::string_view, std::string_view> ci_;
    std::vector<Extra> extras_;
    std::vector<std::string> sources_; // the inputs' names; a few
};

} // namespace mimeuri::refs
