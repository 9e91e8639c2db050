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
#include "views.hh"

#include <gmime/gmime.h>

#include <algorithm>
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

Status read_file_message(const std::string &path, std::vector<Incoming> &out)
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
    out.push_back(std::move(m));
    return ok();
}

Status read_input(const std::string &path, std::vector<Incoming> &out)
{
    if (maildir::is_maildir(path)) {
        for (const std::string &f : maildir::message_files(path))
            if (Status s = read_file_message(f, out); !s) return s;
        return ok();
    }
    auto src = Source::open_path(path, std::size_t{1} << 20);
    if (!src) return Error{Code::NoInput, src.error().message};
    auto mbox = looks_like_mbox(*src);
    if (!mbox) return mbox.error();
    if (!*mbox) return read_file_message(path, out);
    auto segs = split(*src, Format::Mbox);
    if (!segs) return segs.error();
    for (const Segment &g : *segs) {
        Incoming m;
        auto from = src->slice(g.begin, g.msg_begin), bytes = src->slice(g.msg_begin, g.msg_end),
             tail = src->slice(g.msg_end, g.next < 0 ? g.msg_end : g.next);
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
        out.push_back(std::move(m));
    }
    return ok();
}

// The new messages of the inputs, each with its address: one already there (same id, same
// bytes) or met before in this add is left out.
Result<std::vector<Incoming>> new_messages(State &st, const std::vector<std::string> &inputs, Added &a)
{
    std::vector<Incoming> all;
    for (const std::string &in : inputs)
        if (Status s = read_input(in, all); !s) return s.error();
    a.read = all.size();
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
        if (g_ascii_strncasecmp(f.name.data(), "In-Reply-To", f.name.size()) == 0 && f.name.size() == 11) irt = f.value;
        else if (g_ascii_strncasecmp(f.name.data(), "References", f.name.size()) == 0 && f.name.size() == 10) refs = f.value;
    }
    return refs::answered_ids(irt.empty() ? nullptr : irt.c_str(), refs.empty() ? nullptr : refs.c_str(),
                        [&](const std::string &id) { return batch.count(id) > 0; });
}

// The messages an earlier add wrote that the new ones answer: read back, so that a reply's
// images come back from them (pages.hh).
Result<std::vector<KnownMessage>> answered_known(State &st, const std::vector<Incoming> &fresh)
{
    std::set<std::string> batch, seen;
    for (const Incoming &m : fresh) batch.insert(m.id);
    std::vector<KnownMessage> known;
    for (const Incoming &m : fresh)
        for (const std::string &id : answered_ids_of(m.bytes, batch)) {
            auto addrs = st.addrs_of_id(id);
            if (!addrs) return addrs.error();
            for (const std::string &a : *addrs) {
                if (!seen.insert(a).second) continue;
                auto bytes = st.bytes_of(a);
                if (!bytes) return bytes.error();
                known.push_back({std::move(*bytes), a});
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

} // namespace

Result<Added> intake(const Folder &top, State &st, const std::vector<std::string> &inputs)
{
    Added a;
    auto fresh = new_messages(st, inputs, a);
    if (!fresh) return fresh.error();
    if (fresh->empty()) return a;
    std::vector<std::string_view> views;
    std::vector<std::string> addrs;
    for (const Incoming &m : *fresh) views.push_back(m.bytes), addrs.push_back(m.addr);
    if (Status s = top.mkdir(kStage); !s) return s.error();
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
        if (Status s = stage->mkdir(addrs[k]); !s) return s.error();
        for (const OutputFile &f : pages[k].files)
            if (auto w = stage->put(addrs[k] + "/" + f.name, f.bytes); !w) return w.error();
        staged[k] = true;
    }
    // The one transaction that decides the add.
    if (Status s = st.begin(); !s) return s.error();
    for (std::size_t k = 0; k < pages.size(); ++k) {
        if (!staged[k]) continue;
        if (Status s = record(st, (*fresh)[k], pages[k].row); !s) {
            st.rollback();
            return s.error();
        }
        ++a.added;
    }
    if (Status s = st.add_dirty("top", ""); !s) {
        st.rollback();
        return s.error();
    }
    if (Status s = st.commit(); !s) return s.error();
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
