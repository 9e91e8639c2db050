// The per-message report: typed entries the passes fill, written as one JSON object per
// message (JSON Lines) by to_json(), the only place the report becomes JSON.
#pragma once

#include "error_code.hh"
#include "report_section.hh"
#include "result.hh"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mimeuri {

// A "refs" entry: one reference found in an HTML part (README, references).
struct RefEntry {
    enum class Kind { Cid, Mid, Location };
    enum class Status { Resolved, Dangling, Ambiguous };
    enum class Action { None, Repaired, Inlined, Extracted, Rewritten, Kept };

    std::string part; // the HTML part's section
    std::string attr; // "element@attribute", or "style"
    std::string url;  // as written
    Kind kind{Kind::Cid};
    Status status{Status::Dangling};
    std::string matched;              // how it matched when not as written ("content-location", ...); absent when empty
    Action action{Action::None};
    std::string reason;               // why the mode did not act ("type", "size", ...); absent when empty
    std::optional<std::string> kept;  // the signature kind, with Action::Kept
    std::optional<std::string> target;         // the target's section; null when none
    std::optional<std::string> target_message; // the target's Message-ID (mid:); null otherwise
    std::optional<std::string> target_source;  // mid: where that message lives (its input); null
    std::optional<std::int64_t> target_offset; // when unknown or several messages have the id

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.attr, e.url, e.kind, e.status, e.matched, e.action, e.reason, e.kept, e.target, e.target_message,
           e.target_source, e.target_offset);
    }
};

// An "external_bodies" entry: one message/external-body part (README, RFC 2017).
struct ExternalBodyEntry {
    enum class Status { Ok, Normalized, Mapped, Converted, Disallowed, Invalid, Kept };
    // Header fields or parameters in the order first met; a later one of the same name
    // replaces the value in its place.
    using Fields = std::vector<std::pair<std::string, std::string>>;

    std::string part;
    std::optional<std::string> access_type; // lower case; null when there is none
    std::optional<std::string> url;         // the URL as written after the run; null when none
    std::optional<std::string> url_before;  // access-type=URL: the URL as read
    std::optional<Fields> inner;    // the phantom header block's content-type, content-id,
                                    // content-md5, content-transfer-encoding (lower-case names)
    std::optional<Fields> original; // legacy access types: the parameters (lower-case names)
    std::optional<std::string> kept;        // signed content: the signature kind
    std::optional<Status> status;           // none when the pass stopped before deciding
    std::string reason;                     // with a status; null when empty

    static void set_field(Fields &fields, const std::string &name, const std::string &value);

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.access_type, e.url, e.url_before, e.inner, e.original, e.kept, e.status, e.reason);
    }
};

// A "labels" entry: the Content-Type-URI label of one part.
struct LabelEntry {
    std::string part;
    std::string label;
    std::optional<std::string> kept; // signed content: the label is not written

    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.part, e.label, e.kept); }
};

// An "errors" entry: a problem with the message or one of its parts.
struct ErrorEntry {
    std::string part; // "" for the message
    ErrorCode code{ErrorCode::Internal}; // its word: json_name (error_code.hh)
    std::string message;

    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.part, e.code, e.message); }
};

// A "kept" entry: an edit a pass left out because signed content is kept (src/mime/signatures.cc).
// References, labels and external bodies say so in their own entries instead.
struct KeptEntry {
    std::string part;
    std::string edit; // "content-id", "drop", "summary-header"
    std::string kept; // the signature kind

    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.part, e.edit, e.kept); }
};

// An "unreferenced" entry: a part of a multipart/related that nothing references.
struct UnreferencedEntry {
    std::string part;
    std::string related; // the multipart/related's section

    template <class Io, class Self> static void fields(Io &io, Self &e) { io(e.part, e.related); }
};

// A "signatures" entry: one signature and its state as the message leaves.
struct SignatureEntry {
    enum class State { Intact, Broken, Unverifiable };
    std::string kind; // dkim, arc, smime, pgp, encrypted, signed
    std::string part;
    State state{State::Unverifiable};
    bool kept{false};
    std::string domain;   // absent when empty
    std::string selector; // absent when empty
    std::string detail;   // absent when empty

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.kind, e.part, e.state, e.kept, e.domain, e.selector, e.detail);
    }
};

// A "pages" entry: a page --cid=extract wrote of an HTML part, and what the sanitiser took
// out of it (src/html/html_sanitize.hh says what each count counts).
struct PageEntry {
    std::string part; // the HTML part's section
    std::string file; // the page, relative to the message's folder
    std::size_t scripts{0}, handlers{0}, urls{0}, refresh{0}, base{0}, frames{0}, forms{0}, remote{0};

    template <class Io, class Self> static void fields(Io &io, Self &e)
    {
        io(e.part, e.file, e.scripts, e.handlers, e.urls, e.refresh, e.base, e.frames, e.forms, e.remote);
    }
};

const char *json_name(RefEntry::Kind k);
const char *json_name(RefEntry::Status s);
const char *json_name(RefEntry::Action a);
const char *json_name(ExternalBodyEntry::Status s);
const char *json_name(SignatureEntry::State s);

// The values each enum of the report has: a worker's record is read back only when its enum
// fields hold one (wire.hh).
constexpr bool wire_valid(RefEntry::Kind v) { return v <= RefEntry::Kind::Location; }
constexpr bool wire_valid(RefEntry::Status v) { return v <= RefEntry::Status::Ambiguous; }
constexpr bool wire_valid(RefEntry::Action v) { return v <= RefEntry::Action::Kept; }
constexpr bool wire_valid(ExternalBodyEntry::Status v) { return v <= ExternalBodyEntry::Status::Kept; }
constexpr bool wire_valid(SignatureEntry::State v) { return v <= SignatureEntry::State::Unverifiable; }

struct MessageReport {
    // Where the message is, as reported: a copy of its coordinates (MessageContext::at()).
    std::size_t number{0}; // 1-based position of the message in its source (written as "index")
    std::string source;   // file name, or "-" for standard input
    std::string queue_id; // the MTA's queue id (the service); written only when set
    std::string policy;   // the service's [policy:NAME] that chose the settings; written only when set
    std::int64_t offset{0}; // of the message in its source: an mbox message's "From " line
    std::string message_id; // null when empty
    bool changed{false};
    // --summary-header wrote its field (the log line says so; the JSON does not, the field is
    // in the message).
    bool summary_header_set{false};
    std::vector<RefEntry> refs;
    std::vector<ExternalBodyEntry> external_bodies;
    std::vector<LabelEntry> labels;
    std::vector<ErrorEntry> errors;

    void add_error(const std::string &part, ErrorCode code, const std::string &message);
    std::size_t error_count() const { return errors.size(); }

    // The members after the four arrays above, each present once set and written in the
    // order first set: "kept" (from its first entry), "unreferenced" (once the references
    // pass ran), "signatures" (once the signatures are reported), "pages" (from its first
    // entry: --cid=extract's sanitised pages; gone again when the pages are not written
    // after all), and each pass's own section (report_section.hh: "data", "related", ...)
    // from when the pass first asks for it, so that a message it found nothing in reports
    // as before.
    enum class Extra { Kept, Unreferenced, Signatures, Pages, Section };
    void add_kept(const std::string &part, const std::string &edit, const std::string &reason);
    void set_unreferenced(std::vector<UnreferencedEntry> entries);
    void set_signatures(std::vector<SignatureEntry> entries);
    void add_page(PageEntry entry);
    const std::vector<PageEntry> &pages() const { return pages_; }
    // A pass's section of kind S (S::kind()): made, and its member placed, when first asked for.
    template <class S> S &section() { return static_cast<S &>(section(S::kind())); }
    ReportSection &section(const ReportSectionType &t);
    // S's section when the pass made one; null otherwise.
    template <class S> const S *find() const { return static_cast<const S *>(find_section(S::kind())); }
    const ReportSection *find_section(const ReportSectionType &t) const { return sections_.find(t); }
    // The sections, in the order first made.
    const std::vector<std::unique_ptr<ReportSection>> &sections() const { return sections_.all(); }
    const std::vector<KeptEntry> &kept() const { return kept_; }
    const std::vector<UnreferencedEntry> &unreferenced() const { return unreferenced_; }
    const std::vector<SignatureEntry> &signatures() const { return signatures_; }
    const std::vector<Extra> &extras() const { return extras_; }

    // References to no part: all, and those with a mid: URL (a later message may resolve them).
    std::size_t dangling() const;
    std::size_t dangling_mid() const;
    // References rewritten (repaired, inlined, extracted, rewritten), and message/external-body
    // parts rewritten (normalized, mapped, converted): what the log line and the service's
    // counters count.
    std::size_t refs_rewritten() const;
    std::size_t external_bodies_rewritten() const;
    // What the passes' sections say of themselves, in the order their kinds were registered
    // (report_section.hh): the log line's parts, --summary-header's words.
    void describe_sections(std::string &line) const;
    void summary_words(std::string &value) const;

    // The "pages" entries removed: the pages they name were not written after all.
    void drop_pages();

    // The message is written as it came after all (a pass failed or stopped at a limit, or
    // its edits could not stand): nothing it reports was done. References go back to
    // "none", an external body's rewrite to no status with its URL as it is, and the message
    // is not changed. What was kept for a signature stays said.
    void edits_dropped();

    // The most entries of one list (refs, errors, data, ...) a line of the service's log
    // holds: a message with more (a 9 MB one had 28.6 MB of them) has its first ones written
    // and, in an "omitted" object after the lists, how many more each such list has; the
    // counts in memory (the summary, the service's counters) keep them all. A run on the
    // command line writes every entry unless --report-max says otherwise (list_max below).
    static constexpr std::size_t kListMax = 500;
    static constexpr std::size_t kNoListMax = SIZE_MAX;

    // One line of JSON, without the trailing newline, at most list_max entries of a list.
    std::string to_json(std::size_t list_max = kListMax) const;
    // The same appended to out; with flush, out is handed to it (which empties it) whenever
    // it holds 64 KiB or more between two entries, so that the line is never held whole.
    // flush's first error is returned, and nothing more is handed on after it.
    Status write_json(std::string &out, const std::function<Status(std::string &)> *flush,
                      std::size_t list_max = kListMax) const;

    // On the wire (wire.hh): every field, the extras' order included (queue_id is the
    // service front's own, set after the worker's plan is read, and so is policy).
    template <class Io, class Self> static void fields(Io &io, Self &r)
    {
        io(r.number, r.source, r.offset, r.message_id, r.changed, r.refs, r.external_bodies, r.labels, r.errors);
        io(r.extras_, r.kept_, r.unreferenced_, r.signatures_, r.sections_, r.pages_, r.summary_header_set);
    }

private:
    void mark(Extra e);
    std::vector<KeptEntry> kept_;
    std::vector<UnreferencedEntry> unreferenced_;
    std::vector<SignatureEntry> signatures_;
    ReportSections sections_;
    std::vector<PageEntry> pages_;
    std::vector<Extra> extras_;
};

constexpr bool wire_valid(MessageReport::Extra v) { return v <= MessageReport::Extra::Section; }

} // namespace mimeuri
