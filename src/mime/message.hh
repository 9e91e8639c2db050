// One message of a run: its parse tree, the walk over it, and the edits passes record.
//
// Edits are byte-range replacements on the original input. The writer copies every byte
// outside them as read, so untouched parts, folding, line endings, preamble and epilogue
// stay byte-identical, and a message with no edit is its original bytes.
#pragma once

#include "deadline.hh"
#include "gobj.hh"
#include "mbox.hh"
#include "report.hh"
#include "result.hh"
#include "source.hh"

#include <gmime/gmime.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

namespace mimeuri {

enum class Eol { LF, CRLF, CR };

// The deepest --max-depth: GMime itself stops at 512 levels of message/rfc822 and 1024 of
// multipart, treating deeper structure as content; the walk's limit must bind before that.
constexpr int kMaxDepth = 500;

// A message of at most this many bytes in a file is read into memory with one read and
// parsed from there (Source::window); a larger one is parsed from the file, so that memory
// stays bounded whatever the message's size.
constexpr std::int64_t kWindowMax = 8 << 20;

struct Limits {
    int max_depth{64};
    std::size_t max_parts{10000};           // entities visited per message
    std::size_t max_header_bytes{1u << 20}; // one header block
    std::size_t max_header_fields{10000};   // fields in one header block; 10x in a message
    double max_seconds{60};                 // passes' time per message
};

// One entity of the tree, in document order.
struct Node {
    enum class Kind { Multipart, MessagePart, Leaf };
    GMimeObject *object{nullptr};  // borrowed from the message tree
    GMimeMessage *message{nullptr}; // the message this entity belongs to (top or embedded)
    std::string section;           // IMAP (RFC 3501) section: "TEXT", "1", "2.1", "3.TEXT"
    int depth{0};                  // 0 for the top-level entity
    int parent{-1};                // index into nodes(), -1 for the top-level entity
    Kind kind{Kind::Leaf};
    bool top_level() const { return parent < 0; }
};

// Where a message is, in one place: its input (the run's input_no-th, named source), its
// number there (1-based) and the offset of its first byte (an mbox message's "From " line).
// The report writes a copy of source, number and offset.
struct MessageCoordinates {
    std::string source;
    std::size_t input_no{0};
    std::size_t number{1};
    std::int64_t offset{0};
};

struct StreamedBody; // streamed_body.hh

struct Edit {
    std::int64_t begin{0};
    std::int64_t end{0};
    std::string text; // final bytes, already in the message's line-ending convention
    // Or (text empty) bytes made when the output is written: a leaf's body too large to
    // hold (write_edit, streamed_body.hh).
    std::shared_ptr<const StreamedBody> streamed{};
    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.begin, e.end, e.text, e.streamed); }
};

// The Content-IDs of a message as its structure walk read them (src/mime/inert.cc), for a
// pass's InertHint::nothing_to_edit: each as GMime gives it (every one was of the plain form
// "<local@domain>"), and whether one is inside a multipart/related.
struct InertIds {
    std::vector<std::string> ids;
    bool related{false};
};

// What lets MessageContext::parse copy a message without a full parse (Engine): the media
// types the run's passes may edit (a message that provably holds none cannot change), and
// of those the ones a pass edits only where a reference may be (Pass::inert_hint(),
// InertHint::references_up_to): a message holding them cannot change either when its bytes
// show no possible reference, none of them is base64 or otherwise encoded, and it is at
// most scan_max bytes.
struct InertCheck {
    std::vector<std::string> types;
    std::vector<std::string> scanned_types;
    std::size_t scan_max{0};
    // The scanning passes' check (InertHint::may_hold_reference): false only when bytes can hold
    // nothing that makes any of them edit. Empty: every message with scanned types is parsed.
    std::function<bool(std::string_view)> may_hold_reference;
    // Where may_hold_reference finds something in a decoded text/html part, or a Content-ID
    // is inside a multipart/related: true only when every scanning pass proves the part
    // (its decoded bytes, its charset parameter) gives it nothing to edit, report as not
    // found or wait for (InertHint::nothing_to_edit). Empty: the message is parsed.
    std::function<bool(std::string_view, std::string_view, const InertIds &)> nothing_to_edit;
    // The run keeps an index of Message-IDs and Content-IDs (Engine::wants_index): a message
    // with a Content-ID or an embedded message is then parsed, for what the index lists.
    bool index{true};
};

// Bytes borrowed from a message's window (valid while its MessageContext lives) or owned.
class Content {
public:
    Content() = default;
    static Content borrowed(std::string_view v)
    {
        Content c;
        c.view_ = v;
        return c;
    }
    static Content owned(std::string s)
    {
        Content c;
        c.own_ = std::move(s);
        c.owned_ = true;
        return c;
    }
    std::string_view view() const { return owned_ ? std::string_view(own_) : view_; }
    std::size_t size() const { return view().size(); }
    const char *data() const { return view().data(); }
    std::string take() && { return owned_ ? std::move(own_) : std::string(view_); }

private:
    std::string own_;
    std::string_view view_;
    bool owned_{false};
};

class MessageContext {
public:
    // Parses one segment of src. A message GMime cannot parse gives a context with no
    // message and an "unparseable" error in its report: it is carried through unchanged.
    // inert (or null): when the bytes prove that GMime can find in the message no entity of
    // its types (or only of its scanned types, and nothing a reference could be made of),
    // no Content-ID, no embedded message, no two Content-Type fields and no more parts than
    // the limits allow, only the header
    // block is read (headers_only()): no pass can change the message, and the run's index
    // needs no more than its Message-ID (report().message_id). A plain header block is read
    // without GMime (message() is then null), any other by GMime's parser.
    // input_no: the source's place among the run's inputs (at()).
    static std::unique_ptr<MessageContext> parse(const Source &src, const Segment &seg, std::size_t index,
                                                 bool in_mbox, const Limits &limits,
                                                 const InertCheck *inert = nullptr, std::size_t input_no = 0);
    bool headers_only() const { return headers_only_; }

    // The message's bytes: a window of the input read into memory (below kWindowMax), or
    // the input itself; offsets are the input's either way.
    const Source &source() const { return *src_; }
    const Segment &segment() const { return seg_; }
    const MessageCoordinates &at() const { return at_; }
    GMimeMessage *message() const { return message_.get(); }
    const std::vector<Node> &nodes() const { return nodes_; }
    Eol eol() const { return eol_; }
    MessageReport &report() { return report_; }
    const MessageReport &report() const { return report_; }

    // The owning header list of a node: for the top-level entity, headers live both on the
    // message and on its MIME part; this returns the list that carries Content-* headers.
    static GMimeHeaderList *headers_of(const Node &n);

    // The bytes of one header as read, from its name to the end of its last folded line.
    Result<std::string> raw_header(GMimeHeader *h) const;

    // --- Edits. raw_value is the text after the colon, LF-separated, e.g. " a;\n\tb=c\n".
    // Folded lines must start with SP or HTAB; a CR, NUL or unfolded LF is refused (no
    // header injection, whatever a pass decoded); each line must be at most 998 octets.
    Status replace_header(GMimeHeader *h, std::string_view raw_value);
    // Adds "name:raw_value" at the end of the node's header block.
    Status add_header(const Node &n, std::string_view name, std::string_view raw_value);
    // Makes "name:raw_value" the only field of that name in the node's header block: an
    // equal one (white space aside) is left alone, another is replaced, and any further
    // copies are removed, so that a sender cannot plant a result header beside ours (as
    // RFC 8601 section 5 has receivers do with Authentication-Results).
    Status set_sole_header(const Node &n, std::string_view name, std::string_view raw_value);
    // Replaces the body of a leaf part with already-encoded content: LF line ends that
    // become the message's, or (convert_eol false) bytes written exactly as given. A body
    // with a line that starts with the delimiter of an enclosing multipart is refused: a
    // pass must never change the message's structure, whatever it decoded. Taken by value:
    // an encoder's result moves into the edit (a rewritten part is not held twice).
    Status replace_body(const Node &n, std::string encoded, bool convert_eol = true);
    // The same with content made when the output is written (streamed_body.hh): its
    // encoding, base64 or quoted-printable, makes the checks above true by construction.
    // finish() makes it text where a Content-Length must count it or an insertion follows it.
    Status replace_body(const Node &n, StreamedBody body);
    // Removes a part of a multipart: its delimiter line, headers and body.
    Status remove_part(const Node &n);
    // Where a part of a multipart starts: its first header, or the empty line of an empty
    // header block (remove_part checks the delimiter line before it).
    Result<std::int64_t> part_start(const Node &n) const;
    // Replaces the input's bytes [begin, end) with text written exactly as given (the
    // offload pass swaps a whole part for one it made, and back). The caller's text is in
    // the message's line ends and holds no delimiter line of an enclosing multipart and no
    // From_ line: it is made of the message's own bytes, base64 and lines the caller wrote.
    Status replace_span(std::int64_t begin, std::int64_t end, std::string text) { return add_edit(begin, end, std::move(text)); }
    // The same with bytes made as the output is written (a StreamedBody with a File: a part
    // given back from the offload store is never held whole).
    Status replace_span(std::int64_t begin, std::int64_t end, StreamedBody body);
    // Inserts whole lines (LF line ends, made the message's) at the start of a line of the
    // input, inside the message: new parts before a closing delimiter (src/mime/entity_insert.cc).
    Status insert_lines(std::int64_t at, std::string_view lf_text);

    // The exact byte span of a leaf's content: from after the blank line that ends its
    // headers to the line break before the next delimiter (or the end of the message).
    // GMime's window can be a byte short when a delimiter line's ending differs from the
    // message's (an LF message with a CRLF delimiter line); this one is checked.
    Result<std::pair<std::int64_t, std::int64_t>> content_span(const Node &n) const;
    // A leaf's content with its transfer encoding undone, at most cap bytes (a DataErr
    // beyond), read from content_span(): content with no transfer encoding to undo is
    // borrowed from the message's window (or the input held in memory), not copied.
    Result<Content> decoded_content(const Node &n, std::size_t cap) const;
    // The same bytes in pieces, never held whole: read and decoded `block` bytes at a time,
    // each piece handed to sink (which returns false to stop). The same limits and errors as
    // decoded_content (checked as the pieces come: a DataErr beyond cap may follow pieces);
    // uuencoded content comes in one piece.
    Status decoded_pieces(const Node &n, std::size_t cap, const std::function<bool(std::string_view)> &sink,
                          std::size_t block = std::size_t{256} << 10) const;

    // Edits that follow from the others, made once every pass has run: a field added after
    // a header block that ended with no line break loses the line break add_header put before
    // it where the output has one there already (that block's last field removed or
    // replaced), so that it never follows an empty line; and in an mbox, a Content-Length
    // that split the input (mboxcl2) is set to the body's new length, so that every reader
    // splits the result as it split the input.
    Status finish();

    // A header's value as passes left it: the raw value a pass replaced it with, else
    // GMime's raw value (LF line ends).
    std::string header_value(GMimeHeader *h) const;

    const std::vector<Edit> &edits() const { return edits_; }
    // Edits that must stand or fall together: take a mark, and roll back to it on failure.
    struct EditMark {
        std::size_t edits, replaced;
    };
    EditMark edit_mark() const { return {edits_.size(), replaced_.size()}; }
    void rollback(EditMark m)
    {
        edits_.resize(m.edits);
        replaced_.resize(m.replaced);
        report_.changed = !edits_.empty();
    }
    bool changed() const { return !edits_.empty(); }
    void drop_edits() { edits_.clear(); replaced_.clear(); at_take_.clear(); report_.changed = false; }

    // Work a pass leaves for when the run takes the message's plan (in message order, by the
    // process that takes plans), never done while it plans: bytes only the TakeHook the entry
    // point gave the run reads (engine.hh). Gone with the edits.
    std::string &at_take() { return at_take_; }
    const std::string &at_take() const { return at_take_; }

    // Keys (a mid: Message-ID not in the run's index yet) this message's plan depends on:
    // it is planned again, once the whole input is indexed, only if a pass knows one of
    // them then (CrossMessageIndex::now_known). An empty key: planned again whatever.
    void wait_for(std::string key) { waits_.push_back(std::move(key)); }
    const std::vector<std::string> &waits() const { return waits_; }

    // --- Protection: signed content is evidence (src/mime/signatures.cc). A protection is a byte
    // range no edit may touch, or (names) the header block [begin, end] (end inclusive: fields
    // are added there) of which no field with one of these lower-case names may be added,
    // replaced or removed. add_edit refuses an edit that breaks an enforced one; one that is
    // not enforced (--signed=rewrite) is only checked afterwards, by touched().
    struct Protection {
        std::int64_t begin{0}, end{0};
        std::vector<std::string> names;
        std::string reason; // what it keeps: "dkim", "arc", "smime", "pgp", "encrypted"
        bool enforce{true};
    };
    std::size_t protect(Protection p);
    // Protections made on first need: the engine defers the signature analysis until a pass
    // asks kept() or records an edit (or touched() is asked), so that a message no pass
    // edits never pays for it (a DKIM body hash reads the whole body). The answers are the
    // same as if it had run first: it runs before the first question or edit is answered.
    void defer_protections(std::function<void()> make) { deferred_ = std::move(make); }
    // A step a pass leaves until every pass has run (the references pass's summary field,
    // which counts what the passes after it did). The engine runs them in order unless a
    // pass failed or stopped.
    void after_passes(std::function<Status()> step) { after_passes_.push_back(std::move(step)); }
    std::vector<std::function<Status()>> take_after_passes() { return std::exchange(after_passes_, {}); }
    // The bytes edit i writes, replaced (the same range): such a step counting what the passes
    // after it did in a field its pass added.
    void amend_edit_text(std::size_t i, std::string text) { edits_.at(i).text = std::move(text); }
    // Whether the edits made so far touch protection i.
    bool touched(std::size_t i) const;
    // What passes ask before they edit: the reason a leaf's content, or with a name the
    // field of that name in the node's header block, is kept; nullopt when it may change.
    std::optional<std::string> kept(const Node &n, std::string_view header = {}) const;
    // In an mbox that quotes "From " lines (not mboxcl2), the bytes as read may hold quoting.
    bool from_quoted() const { return in_mbox_ && !length_split_; }

    // What the passes share about this message, made by the first that asks and gone with it:
    // one decode and one scan of an HTML part for every pass that reads it
    // (filters/html_share.hh). Type-erased: the core knows nothing of what a pass keeps.
    std::shared_ptr<void> &shared() { return shared_; }

    // The time limit: passes ask between units of work and stop with a "time-limit" error.
    void start_clock() { deadline_ = deadline_after(limits_.max_seconds); }
    bool out_of_time() const { return std::chrono::steady_clock::now() > deadline_; }
    Status check_time() const;

private:
    // The byte the output holds just before edits_[insertion] (an insertion), or NUL at the
    // message's start.
    char output_byte_before(std::size_t insertion) const;
    MessageContext(const Source &src, const Segment &seg) : src_(&src), seg_(seg) {}
    // The steps of parse(), in order.
    void open(bool in_mbox, const Limits &limits);
    void detect_eol();
    bool parseable();
    bool copy_inert(const InertCheck &inert);
    GPtr<GMimeMessage> construct(std::int64_t end) const;
    void walk(GMimeObject *obj, GMimeMessage *msg, const std::string &section, int depth, int parent);
    Result<std::int64_t> header_end(std::int64_t offset) const;
    struct LimitHit {
        ErrorCode code;
        std::string message; // as reported
    };
    Result<std::optional<LimitHit>> prescan() const;
    Result<std::int64_t> header_block_end(const Node &n) const;
    Status add_edit(std::int64_t begin, std::int64_t end, std::string text);
    std::string to_eol(std::string_view lf_text) const;
    const Protection *protection_for(std::int64_t begin, std::int64_t end, const std::string &field, bool enforced_only) const;
    std::string edited_field(std::int64_t begin, std::string_view text) const;

    std::optional<Source> window_; // the message read into memory, when it is
    const Source *src_;            // window_ or the run's source
    Segment seg_;
    MessageCoordinates at_;
    bool in_mbox_{false};
    std::optional<ContentLength> length_split_; // an mboxcl2 Content-Length that ends this message
    Limits limits_;
    GPtr<GMimeMessage> message_;
    std::vector<Node> nodes_;
    Eol eol_{Eol::LF};
    MessageReport report_;
    std::vector<Edit> edits_;
    std::vector<std::pair<GMimeHeader *, std::string>> replaced_;
    std::string at_take_;
    std::vector<std::string> waits_;
    std::vector<Protection> protections_;
    bool headers_only_{false};
    mutable std::function<void()> deferred_; // see defer_protections
    std::vector<std::function<Status()>> after_passes_;
    std::shared_ptr<void> shared_; // see shared()
    void protections_ready() const
    {
        if (!deferred_) return;
        auto make = std::move(deferred_);
        deferred_ = nullptr; // the analysis itself calls protect()
        make();
    }
    std::chrono::steady_clock::time_point deadline_{std::chrono::steady_clock::time_point::max()};
};

// Validates a header's raw value as described at MessageContext::replace_header.
Status check_header_value(std::string_view name, std::string_view raw_value);

} // namespace mimeuri
