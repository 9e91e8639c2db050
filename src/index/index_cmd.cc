// `mimeuri index -o INDEX FILE...`: the Message-IDs of mboxes, messages and Maildirs, with
// where each message lives and the Content-IDs of its parts, into a persistent index
// (src/index/mid_store.hh) that --mid-index reads. Merges into an existing index; a file with the
// size and mtime it had when indexed is not read again, a Maildir file renamed by an IMAP
// server is moved, one deleted is forgotten: a nightly run costs what arrived.
#include "index_cmd.hh"

#include "faults.hh"
#include "gobj.hh"
#include "maildir.hh"
#include "mbox.hh"
#include "message.hh"
#include "mid_store.hh"
#include "source.hh"

#include <gmime/gmime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <sys/stat.h>

namespace mimeuri {

namespace {

struct Listed {
    std::string path;
    struct stat st {};
};

std::int64_t mtime_ns(const struct stat &st)
{
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string without_trailing_slash(std::string p)
{
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

// Where a failure came from, said where it happens rather than read back from its text or
// code: an input (that input is reported and skipped; the others go on, a Maildir's other
// files too) or the index itself (locked, full, unwritable: nothing more can go in, the run
// stops). A temporary failure of an input (a pipe that cannot be spooled) is an input's.
struct Failure {
    enum class Origin { Input, Index } origin;
    Error error;
};
using Outcome = std::optional<Failure>; // nullopt: done

Outcome input_failure(const Error &e) { return Failure{Failure::Origin::Input, e}; }
Outcome index_failure(const Error &e) { return Failure{Failure::Origin::Index, e}; }

struct Totals {
    std::size_t inputs{0}, read{0}, unchanged{0}, appended{0}, moved{0}, forgotten{0}, messages{0}, ids{0}, failed{0};
    Code worst{Code::Ok};
    void fail(const Error &e)
    {
        std::fprintf(stderr, "mimeuri: index: %s\n", e.message.c_str());
        ++failed;
        // The first failure decides the exit status; a temporary one (a locked index) wins.
        if (worst == Code::Ok || e.code == Code::TempFail) worst = e.code;
    }
};

// A digest of the file's first and last bytes up to `size` (4 KiB each) and of size itself:
// the next run tells from it whether an mbox only grew since (its indexed bytes still
// there). A mail client that rewrites the mbox (a message expunged, flags written back)
// shifts or changes those bytes, and the file is read again whole.
Result<std::string> digest_of(const Source &src, std::int64_t size)
{
    constexpr std::int64_t kEnds = 4096;
    auto head = src.slice(0, std::min(size, kEnds));
    if (!head) return head.error();
    auto bytes = src.slice(std::max<std::int64_t>(0, size - kEnds), size);
    if (!bytes) return bytes.error();
    *bytes += "|" + *head + "|" + std::to_string(size);
    GCharPtr sum(g_compute_checksum_for_data(G_CHECKSUM_SHA256, reinterpret_cast<const guchar *>(bytes->data()), bytes->size()));
    return std::string(sum.get());
}

// Whether the mbox `src` is `was` with messages appended: its indexed bytes end as they did,
// with an empty line, and a "From " line starts right after them (where a read of the whole
// file would open a message too).
Result<bool> only_appended(const Source &src, const MidStore::FileState &was)
{
    if (was.tail.empty() || was.messages < 1 || was.size < 2 || src.size() <= was.size) return false;
    auto digest = digest_of(src, was.size);
    if (!digest) return digest.error();
    if (*digest != was.tail) return false;
    auto before = src.slice(std::max<std::int64_t>(0, was.size - 3), was.size);
    if (!before) return before.error();
    auto after = src.slice(was.size, std::min(src.size(), was.size + 5));
    if (!after) return after.error();
    const std::string_view b(*before);
    return (b.ends_with("\n\n") || b.ends_with("\n\r\n")) && std::string_view(*after).starts_with("From ");
}

class Indexer {
public:
    Indexer(MidStore &store, Totals &t, const Faults &faults = Faults::from_env())
        : store_(store), t_(t), fault_(faults.index_input), throw_on_(faults.index_throw)
    {
    }

    // One mbox or message file; maildir/unique set for a Maildir's file. was: what the index
    // knows of it, if anything: an mbox that only grew is read from where it ended.
    Outcome file(const std::string &path, const struct stat &st, const std::string &maildir = {},
                 const std::string &unique = {}, const MidStore::FileState *was = nullptr)
    {
        auto src = Source::open_path(path, std::size_t{8} << 20);
        if (!src) return input_failure(src.error());
        if (fault_ && path.substr(path.rfind('/') + 1) == *fault_)
            return input_failure({Code::IoErr, "cannot read " + path + ": Input/output error (MIMEURI_FAULT)"});
        if (throw_on_ && path.substr(path.rfind('/') + 1) == *throw_on_)
            throw std::runtime_error("injected exception reading " + path + " (MIMEURI_FAULT)");
        Format format = Format::Message;
        if (maildir.empty()) {
            auto m = looks_like_mbox(*src);
            if (!m) return input_failure(m.error());
            if (*m) format = Format::Mbox;
        }
        bool appended = false;
        if (was && format == Format::Mbox) {
            auto a = only_appended(*src, *was);
            if (!a) return input_failure(a.error());
            appended = *a;
        }
        auto id = appended ? store_.grow_file(was->id, src->size(), mtime_ns(st))
                           : store_.begin_file(path, src->size(), mtime_ns(st), maildir, unique);
        if (!id) return index_failure(id.error());
        // Whatever fails from here on leaves the file as the index had it.
        struct Abandon {
            MidStore &store;
            bool armed{true};
            ~Abandon()
            {
                if (armed) store.abandon_file();
            }
        } abandon{store_};
        Splitter splitter(*src, format);
        std::size_t number = 0;
        if (appended) {
            splitter.start_at(was->size);
            number = static_cast<std::size_t>(was->messages);
            ++t_.appended;
        }
        std::vector<Segment> segs;
        for (bool done = false; !done;) {
            auto r = splitter.step(segs, std::int64_t{1} << 20);
            if (!r) return input_failure(r.error());
            done = *r;
            for (const Segment &seg : segs) {
                ++number;
                ++t_.messages;
                // Parsed whole (no inert shortcut): the Content-IDs of every part are wanted.
                auto ctx = MessageContext::parse(*src, seg, number, format == Format::Mbox, limits_);
                if (!ctx->message()) continue;
                for (const StoredMessage &m : messages_of(*ctx)) {
                    if (Status s = store_.add(*id, m); !s) return index_failure(s.error());
                    ++t_.ids;
                }
            }
            segs.clear();
        }
        ++t_.read;
        std::string tail;
        if (format == Format::Mbox) {
            auto t = digest_of(*src, src->size());
            if (!t) return input_failure(t.error());
            tail = std::move(*t);
        }
        Status s = store_.end_file(*id, static_cast<std::int64_t>(number), tail);
        abandon.armed = !s;
        if (!s) return index_failure(s.error());
        return std::nullopt;
    }

    // A Maildir: each file's failure is that file's (reported, the others indexed); the
    // index failing ends it.
    Outcome maildir(const std::string &dir)
    {
        std::vector<Listed> files; // sorted, as listed
        for (std::string &path : maildir::message_files(dir)) {
            Listed l;
            l.path = std::move(path);
            if (::stat(l.path.c_str(), &l.st) == 0) files.push_back(std::move(l)); // else gone since
        }
        auto known = store_.maildir_files(dir);
        if (!known) return index_failure(known.error());
        std::map<std::string, std::size_t> by_path;
        std::multimap<std::string, std::size_t> by_unique;
        for (std::size_t k = 0; k < known->size(); ++k) {
            by_path.emplace((*known)[k].second.path, k);
            by_unique.emplace((*known)[k].first, k);
        }
        std::vector<bool> seen(known->size(), false);
        std::set<std::string> listed;
        for (const Listed &f : files) listed.insert(f.path);
        for (const Listed &f : files) {
            const std::string unique(maildir::unique_part(f.path.substr(f.path.rfind('/') + 1)));
            std::optional<std::size_t> match;
            if (auto p = by_path.find(f.path); p != by_path.end()) match = p->second;
            else
                for (auto [it, end] = by_unique.equal_range(unique); it != end && !match; ++it)
                    if (!seen[it->second] && !listed.count((*known)[it->second].second.path)) match = it->second;
            if (match) {
                seen[*match] = true;
                const MidStore::FileState &old = (*known)[*match].second;
                const bool same = old.size == f.st.st_size && old.mtime_ns == mtime_ns(f.st);
                if (same && old.path == f.path) {
                    ++t_.unchanged;
                    continue;
                }
                if (same) { // renamed by the IMAP server: the same message
                    if (Status s = store_.rename_file(old.id, f.path); !s) return index_failure(s.error());
                    ++t_.moved;
                    continue;
                }
                if (old.path != f.path)
                    if (Status s = store_.forget_file(old.id); !s) return index_failure(s.error());
            }
            Outcome o = file(f.path, f.st, dir, unique);
            if (o && o->origin == Failure::Origin::Input && o->error.code == Code::NoInput) {
                // Renamed between the listing and the read: found again by its inode.
                std::string now = maildir::locate(f.path, f.st.st_dev, f.st.st_ino);
                struct stat st {};
                if (!now.empty() && ::stat(now.c_str(), &st) == 0) o = file(now, st, dir, unique);
            }
            if (o) {
                if (o->origin == Failure::Origin::Index) return o;
                t_.fail(o->error); // this file only
            }
        }
        for (std::size_t k = 0; k < known->size(); ++k)
            if (!seen[k]) { // expunged
                if (Status s = store_.forget_file((*known)[k].second.id); !s) return index_failure(s.error());
                ++t_.forgotten;
            }
        return std::nullopt;
    }

private:
    MidStore &store_;
    Totals &t_;
    Limits limits_;
    std::optional<std::string> fault_;    // MIMEURI_FAULT=index-input:NAME (docs/testing.md)
    std::optional<std::string> throw_on_; // MIMEURI_FAULT=index-throw:NAME
};

// --pages=DIR: each line "N<TAB>Message-ID" of DIR/pages.tsv (src/archive/extract_write.hh) records
// DIR/N/index.html, absolute, as that message's page.
Status record_pages(MidStore &store, const std::string &dir)
{
    const std::string list = dir + "/pages.tsv";
    gchar *text = nullptr;
    gsize size = 0;
    GError *err = nullptr;
    if (!g_file_get_contents(list.c_str(), &text, &size, &err)) {
        Error e{Code::NoInput, list + ": " + err->message};
        g_error_free(err);
        return e;
    }
    GCharPtr owned(text);
    GCharPtr top(g_canonicalize_filename(dir.c_str(), nullptr));
    const std::string_view all(text, size);
    for (std::size_t at = 0; at < all.size();) {
        std::size_t end = all.find('\n', at);
        if (end == std::string_view::npos) end = all.size();
        const std::string_view line = all.substr(at, end - at);
        at = end + 1;
        const std::size_t tab = line.find('\t');
        const std::string_view number = line.substr(0, tab);
        if (tab == std::string_view::npos || number.empty() || number.size() > 18 ||
            number.find_first_not_of("0123456789") != std::string_view::npos || tab + 1 == line.size())
            return Error{Code::DataErr, list + ": not a line of pages.tsv: " + std::string(line.substr(0, 80))};
        const std::string path = std::string(top.get()) + "/" + std::string(number) + "/index.html";
        if (Status s = store.add_page(std::string(line.substr(tab + 1)), path); !s) return s;
    }
    return ok();
}

struct IndexArgs {
    GCharPtr output; // -o INDEX
    bool quiet{false};
    std::vector<std::string> inputs;
    std::vector<std::string> pages; // --pages=DIR
};

// mimeuri index's command line: 0 and the arguments, or 64 (said on standard error).
int index_arguments(int argc, char **argv, IndexArgs &a)
{
    gchar *output = nullptr;
    gchar **page_dirs = nullptr;
    gboolean quiet = FALSE;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The index to write (created, or merged into)", "INDEX"},
        {"pages", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &page_dirs,
         "Also record the pages a --cid=extract run wrote into DIR (its pages.tsv), so that later runs' mid: links "
         "name them (repeatable)", "DIR"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No summary line", nullptr},
        {nullptr, 0, 0, G_OPTION_ARG_NONE, nullptr, nullptr, nullptr},
    };
    std::unique_ptr<GOptionContext, decltype(&g_option_context_free)> octx(g_option_context_new("FILE..."),
                                                                           g_option_context_free);
    g_option_context_set_summary(octx.get(),
                                 "Writes the Message-IDs of mboxes, messages and Maildirs (with where each message lives "
                                 "and the Content-IDs of its parts) into INDEX, for --mid-index. Merges into an existing "
                                 "INDEX: files unchanged since they were indexed are not read again.");
    g_option_context_add_main_entries(octx.get(), entries, nullptr);
    GError *err = nullptr;
    if (!g_option_context_parse(octx.get(), &argc, &argv, &err)) {
        std::fprintf(stderr, "mimeuri: index: %s (see mimeuri index --help)\n", err->message);
        g_error_free(err);
        return 64;
    }
    a.output.reset(output);
    a.quiet = quiet;
    std::unique_ptr<gchar *, decltype(&g_strfreev)> pages_owned(page_dirs, g_strfreev);
    std::vector<std::string> &inputs = a.inputs, &pages = a.pages;
    for (int i = 1; i < argc; ++i) inputs.emplace_back(argv[i]);
    for (gchar **p = page_dirs; p && *p; ++p) pages.emplace_back(*p);
    if (!output) {
        std::fprintf(stderr, "mimeuri: index: -o INDEX is needed (see mimeuri index --help)\n");
        return 64;
    }
    if (inputs.empty() && pages.empty()) {
        std::fprintf(stderr, "mimeuri: index: no FILE to index (see mimeuri index --help)\n");
        return 64;
    }
    for (const auto &in : inputs)
        if (in == "-") {
            std::fprintf(stderr, "mimeuri: index: standard input has no place to point at; index files\n");
            return 64;
        }
    return 0;
}

// The inputs an index already has, by name; one given under another name (./a.mbox for
// a.mbox, a link, an absolute path) would hold every message twice, and make each of their
// Message-IDs ambiguous. Each name, and what it names now (a stat each, once); names given
// in this run join them. Files the index has under a name that names nothing now are
// `gone`: an mbox moved (mv keeps its size, its mtime and its bytes) is found among them by
// those and by the digest of its ends, and renamed in the index instead of read again: read
// again, every Message-ID in it would be in the index twice, each ambiguous.
class KnownInputs {
public:
    KnownInputs(MidStore &store, const std::vector<std::string> &had) : store_(store), names_(had.begin(), had.end())
    {
        for (const std::string &name : had) {
            if (struct stat o {}; ::stat(name.c_str(), &o) == 0) by_inode_.emplace(std::make_pair(o.st_dev, o.st_ino), name);
            else if (errno == ENOENT)
                if (auto f = store_.file(name); f && *f && !(*f)->tail.empty()) gone_.push_back(**f);
        }
    }
    // The name the index has this file under already, or "" (path joins the names).
    std::string indexed_as(const std::string &path, const struct stat &st)
    {
        const auto key = std::make_pair(st.st_dev, st.st_ino);
        if (names_.insert(path).second) {
            auto [at, fresh] = by_inode_.emplace(key, path);
            if (!fresh) return at->second;
        }
        return {};
    }
    // Whether path is a file the index had under a name that names nothing now (moved);
    // renamed in the index if so. `moved` says which.
    Outcome moved_here(const std::string &path, const struct stat &st, bool &moved)
    {
        moved = false;
        for (auto it = gone_.begin(); it != gone_.end(); ++it) {
            if (it->size != st.st_size || it->mtime_ns != mtime_ns(st)) continue;
            auto src = Source::open_path(path, std::size_t{8} << 20);
            if (!src) return input_failure(src.error());
            auto digest = digest_of(*src, it->size);
            if (!digest) return input_failure(digest.error());
            if (*digest != it->tail) continue;
            if (Status s = store_.rename_file(it->id, path); !s) return index_failure(s.error());
            gone_.erase(it);
            moved = true;
            return std::nullopt;
        }
        return std::nullopt;
    }

private:
    MidStore &store_;
    std::set<std::string> names_;
    std::map<std::pair<dev_t, ino_t>, std::string> by_inode_;
    std::vector<MidStore::FileState> gone_;
};

} // namespace

int run_index_command(int argc, char **argv)
{
    IndexArgs args;
    if (int usage = index_arguments(argc, argv, args)) return usage;
    const char *output = args.output.get();
    const std::vector<std::string> &inputs = args.inputs, &pages = args.pages;
    auto store = MidStore::open_write(output);
    if (!store) {
        std::fprintf(stderr, "mimeuri: index: %s\n", store.error().message.c_str());
        return exit_status(store.error().code);
    }
    Totals t;
    Indexer ix(*store, t);
    // The inputs the index already has, by name; one given under another name (./a.mbox for
    // a.mbox, a link, an absolute path) would hold every message twice, and make each of
    // their Message-IDs ambiguous: refused, naming the name it has.
    auto had = store->inputs();
    if (!had) {
        std::fprintf(stderr, "mimeuri: index: %s\n", had.error().message.c_str());
        return exit_status(had.error().code);
    }
    KnownInputs indexed(*store, *had);
    for (const std::string &given : inputs) {
        ++t.inputs;
        const std::string path = without_trailing_slash(given);
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            t.fail({errno == ENOENT ? Code::NoInput : Code::IoErr, path + ": " + std::strerror(errno)});
            continue;
        }
        if (std::string other = indexed.indexed_as(path, st); !other.empty()) {
            t.fail({Code::Usage, path + ": the index has this " + (S_ISDIR(st.st_mode) ? "Maildir" : "file") +
                                     " already, as " + other + "; give it the name it has there"});
            continue;
        }
        Outcome o;
        if (S_ISDIR(st.st_mode)) {
            if (!maildir::is_maildir(path)) {
                t.fail({Code::NoInput, path + ": a folder that is not a Maildir (no cur/ nor new/)"});
                continue;
            }
            o = ix.maildir(path);
        } else {
            auto known = store->file(path);
            bool moved = false;
            if (!known) o = index_failure(known.error());
            else if (*known && (*known)->size == st.st_size && (*known)->mtime_ns == mtime_ns(st)) ++t.unchanged;
            else if (!*known && S_ISREG(st.st_mode) && ((o = indexed.moved_here(path, st, moved)) || moved)) t.moved += moved;
            else o = ix.file(path, st, {}, {}, *known ? &**known : nullptr);
        }
        if (o) {
            t.fail(o->error);
            // The index itself failing (locked, full, unwritable): nothing more can go in.
            if (o->origin == Failure::Origin::Index) break;
        }
    }
    for (const std::string &dir : pages)
        if (Status s = record_pages(*store, dir); !s) t.fail(s.error());
    if (Status s = store->commit(); !s) t.fail(s.error());
    if (!args.quiet) {
        auto total = store->count_messages();
        std::fprintf(stderr,
                     "mimeuri: index: %s: %zu messages read (%zu Message-IDs) from %zu files (%zu of them mboxes read "
                     "from where they had ended); %zu unchanged, %zu moved, %zu gone; %lld Message-IDs in the index\n",
                     output, t.messages, t.ids, t.read, t.appended, t.unchanged, t.moved, t.forgotten,
                     static_cast<long long>(total ? *total : -1));
    }
    return t.worst == Code::Ok ? 0 : exit_status(t.worst);
}

} // namespace mimeuri
