// `mimeuri archive`: the journal completed (archive.hh, finish). Each step can be done again
// with the same result, and a file whose bytes would not change is not written again, so a
// run killed anywhere here is completed by the next one and leaves what an uninterrupted run
// leaves.
#include "archive.hh"

#include "archive_contents.hh"
#include "pages.hh"
#include "views.hh"

#include <glib.h>

#include <csignal>
#include <algorithm>
#include <cstring>
#include <set>

namespace mimeuri::archive {

namespace {

// A page the stage lost (it cannot, but for a stage removed by hand): planned again alone.
Status replan(const Folder &top, State &st, const std::string &addr)
{
    auto bytes = st.bytes_of(addr);
    if (!bytes) return bytes.error();
    auto stage = Folder::open(top.path() + "/" + kStage);
    if (!stage) return stage.error();
    auto pages = plan_pages({*bytes}, {addr}, stage->path());
    if (!pages.front().cause.empty()) return Error{Code::DataErr, addr + ": " + pages.front().cause};
    if (Status s = stage->mkdir(addr); !s) return s;
    for (const OutputFile &f : pages.front().files)
        if (auto w = stage->put(addr + "/" + f.name, f.bytes); !w) return w.error();
    return st.set_nav(addr, "");
}

// The journal's entries of one kind done, in one transaction ("pending": the pages moved).
Status done_all(State &st, const std::string &kind, const std::vector<std::string> &keys)
{
    if (keys.empty()) return ok();
    if (Status s = st.begin(); !s) return s;
    Status s = ok();
    for (const std::string &k : keys)
        if (s) s = kind == "pending" ? st.done_pending(k) : st.done_dirty(kind, k);
    if (!s) {
        st.rollback();
        return s;
    }
    return st.commit();
}

Status move_pending(const Folder &top, State &st)
{
    auto pending = st.pending();
    if (!pending) return pending.error();
    if (Status s = top.mkdir(kStage); !s) return s;
    const std::string trash = std::string(kStage) + "/.old";
    for (std::size_t k = 0; k < pending->size(); ++k) {
        const std::string &addr = (*pending)[k];
        const std::string staged = std::string(kStage) + "/" + addr;
        if (!top.exists(staged) && !top.exists(addr + "/index.html"))
            if (Status s = replan(top, st, addr); !s) return s;
        if (top.exists(staged))
            if (Status s = top.move_folder(staged, addr, trash); !s) return s;
        if (k == pending->size() / 2) maybe_killed("mid-move");
    }
    // Moving again finds nothing staged: the journal's entries go in one transaction.
    if (Status s = done_all(st, "pending", *pending); !s) return s;
    auto gone = st.dirty("gone");
    if (!gone) return gone.error();
    for (const std::string &addr : *gone)
        if (Status s = top.remove(addr); !s) return s;
    return done_all(st, "gone", *gone);
}

std::vector<ArchiveEntry> entries_of(const std::vector<Stored> &members)
{
    std::vector<ArchiveEntry> out;
    for (const Stored &m : members) out.push_back(shown(m.addr, m.record).e);
    return out;
}

struct Updates {
    std::vector<std::pair<std::string, std::string>> navs; // address, navigation written
    std::vector<std::pair<std::string, std::optional<long long>>> newest; // thread, its newest date now
    std::set<std::string> thread_months;
};

// A thread's page, its mbox and its messages' navigation, written again.
Status write_thread(const Folder &top, State &st, const std::string &root, Updates &u)
{
    auto members = st.thread_members(root);
    if (!members) return members.error();
    if (members->empty()) {
        for (const std::string &f : {"threads/" + root + ".html", "threads/" + root + ".mbox"})
            if (Status s = top.remove(f); !s) return s;
    } else {
        const std::vector<ArchiveEntry> entries = entries_of(*members);
        if (auto w = top.put("threads/" + root + ".html", thread_page(root, entries)); !w) return w.error();
        std::string mbox;
        for (const Stored &m : *members) {
            auto bytes = st.bytes_of(m.addr);
            if (!bytes) return bytes.error();
            mbox += mbox_chunk(m.from_line, *bytes, m.quoted, m.tail, m.epoch);
        }
        if (auto w = top.put("threads/" + root + ".mbox", mbox); !w) return w.error();
        const Threads t = thread_archive(entries);
        for (std::size_t k = 0; k < t.order.size(); ++k) {
            const Stored &m = (*members)[t.order[k]];
            auto nb = st.date_neighbours(m.epoch, m.addr);
            if (!nb) return nb.error();
            Nav n;
            n.prev_thread = k > 0 ? (*members)[t.order[k - 1]].addr : "";
            n.next_thread = k + 1 < t.order.size() ? (*members)[t.order[k + 1]].addr : "";
            n.prev_date = nb->first, n.next_date = nb->second, n.thread = root, n.month = month_of(m.epoch);
            const std::string nav = nav_html(n);
            if (nav == m.nav) continue;
            auto page = top.get(m.addr + "/index.html");
            if (!page) return page.error();
            if (!*page) continue;
            if (auto with = with_nav(**page, nav))
                if (auto w = top.put(m.addr + "/index.html", *with); !w) return w.error();
            u.navs.emplace_back(m.addr, nav);
        }
    }
    // The months whose thread pages list it, before and now; recorded with the rest once
    // every thread is written, so a run killed before that finds the months as they were.
    auto was = st.thread_newest(root);
    if (!was) return was.error();
    std::optional<long long> now;
    for (const Stored &m : *members) now = std::max(now.value_or(m.epoch), m.epoch);
    for (const auto &when : {*was, now})
        if (when) u.thread_months.insert(month_of(*when));
    u.newest.emplace_back(root, now);
    return ok();
}

Status write_threads(const Folder &top, State &st)
{
    auto roots = st.dirty("thread");
    if (!roots) return roots.error();
    if (roots->empty()) return ok();
    Updates u;
    for (const std::string &root : *roots)
        if (Status s = write_thread(top, st, root, u); !s) return s;
    maybe_killed("mid-derived");
    if (Status s = top.sync(); !s) return s;
    if (Status s = st.begin(); !s) return s;
    Status s = ok();
    for (const auto &[addr, nav] : u.navs)
        if (s) s = st.set_nav(addr, nav);
    for (const std::string &m : u.thread_months)
        if (s) s = st.add_dirty("tmonth", m);
    for (const auto &[root, newest] : u.newest)
        if (s) s = st.record_thread(root, newest);
    for (const std::string &root : *roots)
        if (s) s = st.done_dirty("thread", root);
    if (!s) {
        st.rollback();
        return s;
    }
    return st.commit();
}

Result<std::vector<std::vector<ArchiveEntry>>> threads_of(State &st, const std::vector<std::string> &roots)
{
    std::vector<std::vector<ArchiveEntry>> out;
    for (const std::string &r : roots) {
        auto members = st.thread_members(r);
        if (!members) return members.error();
        out.push_back(entries_of(*members));
    }
    return out;
}

Status write_month(const Folder &top, State &st, const std::string &kind, const std::string &month)
{
    if (kind == "dmonth") {
        auto msgs = st.month_messages(month);
        if (!msgs) return msgs.error();
        if (msgs->empty()) return top.remove("by-date/" + month + ".html");
        std::vector<Shown> shown_list;
        for (const Stored &m : *msgs) shown_list.push_back(shown(m.addr, m.record));
        auto w = top.put("by-date/" + month + ".html", date_page(month, shown_list));
        return w ? ok() : Status(w.error());
    }
    // Every month with messages has its page of threads (the top page links it), even when
    // no thread was last written to in it.
    auto roots = st.month_threads(month);
    if (!roots) return roots.error();
    if (roots->empty()) {
        auto msgs = st.month_messages(month);
        if (!msgs) return msgs.error();
        if (msgs->empty()) return top.remove("by-thread/" + month + ".html");
    }
    auto threads = threads_of(st, *roots);
    if (!threads) return threads.error();
    auto w = top.put("by-thread/" + month + ".html", month_threads_page(month, *threads));
    return w ? ok() : Status(w.error());
}

Status write_top(const Folder &top, State &st, const Settings &set)
{
    auto count = st.count();
    auto months = st.months();
    auto roots = st.newest_threads(set.newest_threads);
    auto newest = st.newest_messages(set.feed_size);
    auto feed_id = st.meta("feed-id");
    if (!count || !months || !roots || !newest || !feed_id) return Error{Code::IoErr, "archive state: cannot read the index"};
    auto threads = threads_of(st, *roots);
    if (!threads) return threads.error();
    std::vector<Shown> entries;
    for (const Stored &m : *newest) entries.push_back(shown(m.addr, m.record));
    for (const auto &[name, bytes] : {std::pair<std::string, std::string>{"index.html", top_page(*count, *months, *threads)},
                                      {"feed.atom", atom_feed(*feed_id, entries)},
                                      {"mimeuri.css", archive_stylesheet()}})
        if (auto w = top.put(name, bytes); !w) return w.error();
    return ok();
}

// The month pages and the top, once the threads are written.
Status write_indexes(const Folder &top, State &st, const Settings &set)
{
    std::vector<std::pair<std::string, std::string>> done;
    std::set<std::string> thread_months;
    for (const char *kind : {"dmonth", "tmonth"}) {
        auto dirty = st.dirty(kind);
        if (!dirty) return dirty.error();
        for (const std::string &m : *dirty) {
            if (kind[0] == 'd') {
                if (Status s = write_month(top, st, kind, m); !s) return s;
            }
            thread_months.insert(m); // a month that comes or goes has its page of threads too
            done.emplace_back(kind, m);
        }
    }
    for (const std::string &m : thread_months)
        if (Status s = write_month(top, st, "tmonth", m); !s) return s;
    auto top_dirty = st.dirty("top");
    if (!top_dirty) return top_dirty.error();
    if (!top_dirty->empty() || !done.empty()) {
        if (Status s = write_top(top, st, set); !s) return s;
        done.emplace_back("top", "");
    }
    if (Status s = top.sync(); !s) return s;
    if (Status s = st.begin(); !s) return s;
    Status s = ok();
    for (const auto &[kind, key] : done)
        if (s) s = st.done_dirty(kind, key);
    if (!s) {
        st.rollback();
        return s;
    }
    return st.commit();
}

} // namespace

Status finish(const Folder &top, State &st, const Settings &set)
{
    maybe_killed("after-commit");
    if (Status s = move_pending(top, st); !s) return s;
    if (Status s = write_threads(top, st); !s) return s;
    if (Status s = write_indexes(top, st, set); !s) return s;
    return top.remove(kStage);
}

} // namespace mimeuri::archive
