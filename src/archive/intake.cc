// `mimeuri archive`: what an add reads and records (archive.hh, intake and remove_id).
#include "archive.hh"

#include "address.hh"
#include "gobj.hh"
#include "header_lines.hh"
#include "maildir.hh"
#include "mbox.hh"
#include "message_id.hh"
#include "pages.hh"
#include "ref_index.hh"
#include "text.hh"
#include "views.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace mimeuri::archive {

namespace {

// One message as it came: from an mbox its From_ line, its bytes as the mbox held them
// (From-quoted) and what followed them (the separator); from a file, its bytes alone.
struct Incoming {
    std::string bytes, from_line, tail, source, id, sha, addr;
    bool quoted{false};
};

// The Message-ID GMime reads (without <>): from a plain header block without a parse,
// else from GMime's.
std::string id_of(std::string_view bytes)
{
    if (auto id = plain_message_id(bytes)) return *id;
    GPtr<GMimeStream> s = GPtr<GMimeStream>::adopt(g_mime_stream_mem_new_with_buffer(bytes.data(), bytes.size()));
    GPtr<GMimeParser> p = GPtr<GMimeParser>::adopt(g_mime_parser_new_with_stream(s.get()));
    GPtr<GMimeMessage> m = GPtr<GMimeMessage>::adopt(g_mime_parser_construct_message(p.get(), nullptr));
    const char *id = m ? g_mime_message_get_message_id(m.get()) : nullptr;
    return id ? id : "";
}

Result<Incoming> file_message(const std::string &path)
{
    gchar *data = nullptr;
    gsize size = 0;
    GError *err = nullptr;
    if (!g_file_get_contents(path.c_str(), &data, &size, &err)) {
        Error e{Code::NoInput, "cannot read " + path + ": " + (err ? err->message : "error")};
        g_clear_error(&err);
        return e;
    }
    Incoming m;
    m.bytes.assign(data, size);
    g_free(data);
    m.source = path;
    return m;
}

// The inputs' messages one at a time: a Maildir's files are listed and an mbox is split
// (offsets only) when it is reached, and each message is read when it is asked for, so an
// add holds one batch of messages in memory, never a whole input.
class Reader {
public:
    explicit Reader(const std::vector<std::string> &inputs) : inputs_(inputs) {}
    // The next message; nullopt at the end.
    Result<std::optional<Incoming>> next();

private:
    Status open(const std::string &path);
    Result<Incoming> mbox_message(const Segment &g) const;
    const std::vector<std::string> &inputs_;
    std::size_t input_{0};
    std::vector<std::string> files_;
    std::optional<Source> src_;
    std::vector<Segment> segs_;
    std::size_t at_{0};
};

Status Reader::open(const std::string &path)
{
    files_.clear(), segs_.clear(), src_.reset(), at_ = 0;
    if (maildir::is_maildir(path)) {
        files_ = maildir::message_files(path);
        return ok();
    }
    auto src = Source::open_path(path, std::size_t{1} << 20);
    if (!src) return Error{Code::NoInput, src.error().message};
    auto mbox = looks_like_mbox(*src);
    if (!mbox) return mbox.error();
    if (!*mbox) {
        files_.push_back(path);
        return ok();
    }
    auto segs = split(*src, Format::Mbox);
    if (!segs) return segs.error();
    segs_ = std::move(*segs);
    src_.emplace(std::move(*src));
    return ok();
}

Result<Incoming> Reader::mbox_message(const Segment &g) const
{
    const std::string &path = inputs_[input_ - 1];
    Incoming m;
    auto from = src_->slice(g.begin, g.msg_begin), bytes = src_->slice(g.msg_begin, g.msg_end),
         tail = src_->slice(g.msg_end, g.next < 0 ? g.msg_end : g.next);
    if (!from || !bytes || !tail) return Error{Code::IoErr, "cannot read " + path};
    m.from_line = std::move(*from), m.bytes = std::move(*bytes), m.tail = std::move(*tail);
    // The input's last message keeps the empty line that ends the mbox as its bytes; it
    // is the separator any other message has after it, so the same message is the same
    // bytes wherever it stood.
    if (m.tail.empty() && m.bytes.size() >= 2 && m.bytes.compare(m.bytes.size() - 2, 2, "\n\n") == 0) {
        m.bytes.pop_back();
        m.tail.push_back('\n'); // (tail is empty here)
    }
    m.quoted = true;
    m.source = path;
    return m;
}

Result<std::optional<Incoming>> Reader::next()
{
    for (;;) {
        if (src_ && at_ < segs_.size()) {
            auto m = mbox_message(segs_[at_++]);
            if (!m) return m.error();
            return std::optional<Incoming>(std::move(*m));
        }
        if (!src_ && at_ < files_.size()) {
            auto m = file_message(files_[at_++]);
            if (!m) return m.error();
            return std::optional<Incoming>(std::move(*m));
        }
        if (input_ == inputs_.size()) return std::optional<Incoming>();
        if (Status s = open(inputs_[input_++]); !s) return s.error();
    }
}

// The new messages of a batch, each with its address: one already there (same id, same
// bytes: an earlier batch's are there) or met before in this batch is left out.
Result<std::vector<Incoming>> new_messages(State &st, std::vector<Incoming> all, Added &a)
{
    a.read += all.size();
    std::vector<Incoming> fresh;
    std::set<std::pair<std::string, std::string>> seen;
    std::set<std::string> addrs;
    for (Incoming &m : all) {
        m.id = id_of(m.bytes);
        m.sha = sha256_hex(m.bytes);
        auto there = st.has(m.id, m.sha);
        if (!there) return there.error();
        if (*there || !seen.emplace(m.id, m.sha).second) {
            ++a.already;
            continue;
        }
        m.addr = address_of(m.id);
        auto taken = st.addr_taken(m.addr);
        if (!taken) return taken.error();
        if (*taken || addrs.count(m.addr)) m.addr = address_of(m.id, m.sha); // the same id, other bytes
        addrs.insert(m.addr);
        fresh.push_back(std::move(m));
    }
    return fresh;
}

// The ids a message answers, read as the references pass reads them (answered_ids).
std::vector<std::string> answered_ids_of(std::string_view bytes, const std::set<std::string> &batch)
{
    HeaderFields fields(bytes);
    Field f;
    std::string irt, refs;
    while (fields.next(f)) {
        // (a field with an empty name has no data: never handed to a C string function)
        if (f.name.size() == 11 && text::ci_at(f.name, 0, "in-reply-to")) irt = f.value;
        else if (f.name.size() == 10 && text::ci_at(f.name, 0, "references")) refs = f.value;
    }
    return refs::answered_ids(irt.empty() ? nullptr : irt.c_str(), refs.empty() ? nullptr : refs.c_str(),
                        [&](const std::string &id) { return batch.count(id) > 0; });
}

// The ids a message's bytes may name in mid: URLs (RFC 2392: "mid:" and the URL-encoded
// id, up to a "/" or the URL's end), the batch's own left out. A candidate list, not a
// reading of the HTML: the references pass decides what is a link. It reads the bytes as
// they are (HTML in quoted-printable without a soft break or an "=3D" in the id, or plain):
// a mid: in base64 HTML is not seen here and stays as written when it names an earlier add.
std::vector<std::string> mid_ids_of(std::string_view bytes, const std::set<std::string> &batch)
{
    std::vector<std::string> ids;
    // One pass over the bytes: each ':' preceded by "mid" in any case (a URL scheme is
    // case-insensitive, RFC 3986 3.1) and not by a letter or digit.
    for (std::size_t at = 0; ids.size() < refs::kMaxAnswered && at < bytes.size();) {
        const void *colon = std::memchr(bytes.data() + at, ':', bytes.size() - at);
        if (!colon) break;
        const std::size_t p = static_cast<std::size_t>(static_cast<const char *>(colon) - bytes.data());
        at = p + 1;
        if (p < 3 || !text::ci_at(bytes, p - 3, "mid") || (p > 3 && g_ascii_isalnum(bytes[p - 4]))) continue;
        std::size_t e = at;
        while (e < bytes.size() && e - at < 998 && !std::strchr("/\"'<>() \t\r\n?#&", bytes[e])) ++e;
        if (e == at) continue;
        GCharPtr id(g_uri_unescape_string(std::string(bytes.substr(at, e - at)).c_str(), nullptr));
        if (id && *id.get() && !batch.count(id.get()) && std::find(ids.begin(), ids.end(), id.get()) == ids.end())
            ids.emplace_back(id.get());
    }
    return ids;
}

// The messages an earlier add (or batch) wrote that the new ones answer or name by mid:
// read back, so that a reply's images come back from them and a mid: link goes to their
// pages (pages.hh).
Result<std::vector<KnownMessage>> answered_known(State &st, const std::vector<Incoming> &fresh)
{
    std::set<std::string> batch, seen;
    for (const Incoming &m : fresh) batch.insert(m.id);
    std::vector<KnownMessage> known;
    for (const Incoming &m : fresh) {
        std::vector<std::string> ids = answered_ids_of(m.bytes, batch);
        for (std::string &id : mid_ids_of(m.bytes, batch)) ids.push_back(std::move(id));
        for (const std::string &id : ids) {
            auto addrs = st.addrs_of_id(id);
            if (!addrs) return addrs.error();
            for (const std::string &a : *addrs) {
                if (!seen.insert(a).second) continue;
                auto bytes = st.bytes_of(a);
                if (!bytes) return bytes.error();
                known.push_back({std::move(*bytes), a});
            }
        }
    }
    return known;
}

// The thread a new message joins: that of the nearest parent the archive holds, else its own.
Result<std::string> thread_for(State &st, const Shown &sh)
{
    for (const std::string &p : sh.e.parents) {
        auto addrs = st.addrs_of_id(p);
        if (!addrs) return addrs.error();
        if (addrs->empty()) continue;
        auto got = st.get(addrs->front());
        if (!got) return got.error();
        if (*got) return (*got)->thread;
    }
    return sh.e.address;
}

// The threads of the messages before and after by date: their pages' links change.
Status dirty_neighbours(State &st, long long epoch, const std::string &addr)
{
    auto nb = st.date_neighbours(epoch, addr);
    if (!nb) return nb.error();
    for (const std::string &n : {nb->first, nb->second}) {
        if (n.empty()) continue;
        auto got = st.get(n);
        if (!got) return got.error();
        if (*got)
            if (Status s = st.add_dirty("thread", (*got)->thread); !s) return s;
    }
    return ok();
}

Status record(State &st, const Incoming &m, const std::string &row)
{
    const Shown sh = shown(m.addr, row);
    auto thread = thread_for(st, sh);
    if (!thread) return thread.error();
    Stored s;
    s.addr = m.addr, s.message_id = m.id, s.sha = m.sha, s.thread = *thread, s.record = row;
    s.from_line = m.from_line, s.quoted = m.quoted, s.epoch = sh.e.epoch, s.tail = m.tail;
    if (Status r = st.insert(s, m.bytes, sh.e.parents); !r) return r;
    // Replies that came before this message: their threads join its thread.
    auto naming = st.threads_naming(m.id);
    if (!naming) return naming.error();
    for (const std::string &t : *naming) {
        if (t == *thread) continue;
        if (Status r = st.retag_thread(t, *thread); !r) return r;
        if (Status r = st.add_dirty("thread", t); !r) return r;
    }
    for (Status r : {st.add_dirty("thread", *thread), st.add_pending(m.addr), st.add_dirty("dmonth", month_of(s.epoch)),
                     dirty_neighbours(st, s.epoch, m.addr)})
        if (!r) return r;
    return ok();
}

// One batch: its new messages' pages planned into the stage, then recorded (with the
// journal's entries) in one transaction.
Status add_batch(const Folder &top, State &st, std::vector<Incoming> batch, Added &a)
{
    auto fresh = new_messages(st, std::move(batch), a);
    if (!fresh) return fresh.error();
    if (fresh->empty()) return ok();
    std::vector<std::string_view> views;
    std::vector<std::string> addrs;
    for (const Incoming &m : *fresh) views.push_back(m.bytes), addrs.push_back(m.addr);
    if (Status s = top.mkdir(kStage); !s) return s;
    auto stage = Folder::open(top.path() + "/" + kStage);
    if (!stage) return stage.error();
    auto known = answered_known(st, *fresh);
    if (!known) return known.error();
    std::vector<PlannedPage> pages = plan_pages(views, addrs, stage->path(), *known);
    std::vector<bool> staged(pages.size(), false);
    for (std::size_t k = 0; k < pages.size(); ++k) {
        if (!pages[k].cause.empty()) {
            g_warning("%s: message <%s>: not added: %s", (*fresh)[k].source.c_str(), (*fresh)[k].id.c_str(),
                      pages[k].cause.c_str());
            ++a.failed;
            continue;
        }
        if (Status s = stage->mkdir(addrs[k]); !s) return s;
        for (const OutputFile &f : pages[k].files)
            if (auto w = stage->put(addrs[k] + "/" + f.name, f.bytes); !w) return w.error();
        staged[k] = true;
    }
    // The one transaction that decides the batch.
    if (Status s = st.begin(); !s) return s;
    std::size_t added = 0;
    for (std::size_t k = 0; k < pages.size(); ++k) {
        if (!staged[k]) continue;
        if (Status s = record(st, (*fresh)[k], pages[k].row); !s) {
            st.rollback();
            return s;
        }
        ++added;
    }
    if (Status s = st.add_dirty("top", ""); !s) {
        st.rollback();
        return s;
    }
    if (Status s = st.commit(); !s) return s;
    a.added += added;
    return ok();
}

} // namespace

// The inputs in batches of at most batch_size messages (and about 64 MiB of them), each its
// own transaction: a large first import holds one batch in memory, and a run killed between
// batches keeps the batches it committed (the next run finds them there). A reply in a later
// batch shows the images of a message of an earlier one as in one batch (answered_known);
// a mid: link between two batches stays as written, as between two adds.
Result<Added> intake(const Folder &top, State &st, const std::vector<std::string> &inputs, std::size_t batch_size)
{
    constexpr std::size_t kBatchBytes = std::size_t{64} << 20;
    Added a;
    Reader r(inputs);
    for (bool more = true; more;) {
        std::vector<Incoming> batch;
        std::size_t bytes = 0;
        while (batch.size() < batch_size && bytes < kBatchBytes) {
            auto m = r.next();
            if (!m) return m.error();
            if (!*m) {
                more = false;
                break;
            }
            bytes += (*m)->bytes.size();
            batch.push_back(std::move(**m));
        }
        if (batch.empty()) break;
        if (Status s = add_batch(top, st, std::move(batch), a); !s) return s.error();
    }
    return a;
}

Result<std::size_t> remove_id(State &st, const std::string &message_id)
{
    auto addrs = st.addrs_of_id(message_id);
    if (!addrs) return addrs.error();
    if (Status s = st.begin(); !s) return s.error();
    auto step = [&](const std::string &addr) -> Status {
        auto got = st.get(addr);
        if (!got) return got.error();
        if (!*got) return ok();
        const Stored m = **got;
        if (Status s = dirty_neighbours(st, m.epoch, addr); !s) return s;
        for (Status s : {st.remove(addr), st.add_dirty("gone", addr), st.add_dirty("thread", m.thread),
                         st.add_dirty("dmonth", month_of(m.epoch)), st.add_dirty("top", "")})
            if (!s) return s;
        if (addr != m.thread) return ok();
        // The thread's first message removed: the next one names the thread.
        auto rest = st.thread_members(m.thread);
        if (!rest) return rest.error();
        if (rest->empty()) return ok();
        if (Status s = st.retag_thread(m.thread, rest->front().addr); !s) return s;
        return st.add_dirty("thread", rest->front().addr);
    };
    for (const std::string &a : *addrs)
        if (Status s = step(a); !s) {
            st.rollback();
            return s.error();
        }
    if (Status s = st.commit(); !s) return s.error();
    return addrs->size();
}

} // namespace mimeuri::archive
