// `mimeuri archive`: pages made from the state (views.hh).
#include "views.hh"

#include "address.hh"
#include "state.hh"

#include <ctime>

namespace mimeuri::archive {

namespace {

// The head every page of the archive's own starts with: the policy first (no script, nothing
// from the network; styles from the archive), then the charset and the stylesheet at up.
std::string head(const std::string &title, const std::string &up)
{
    return "<!DOCTYPE html>\n<html><head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'self'; form-action 'none'; base-uri 'none'\">\n<meta charset=\"utf-8\">\n<title>" +
           title + "</title>\n<link rel=\"stylesheet\" href=\"" + up + "mimeuri.css\">\n</head>\n<body>\n";
}

std::string link(const std::string &href, const std::string &text, const char *rel = nullptr)
{
    return std::string("<a ") + (rel ? std::string("rel=\"") + rel + "\" " : "") + "href=\"" + href + "\">" + text + "</a>";
}

std::string page_of(const std::string &addr) { return "../" + addr + "/index.html"; }

} // namespace

Shown shown(const std::string &addr, const std::string &record)
{
    Shown s;
    auto got = read_archive_records(record);
    if (!got.empty()) s.e = std::move(got.front());
    s.e.address = addr;
    s.month = month_of(s.e.epoch);
    return s;
}

std::string nav_html(const Nav &n)
{
    std::string out;
    if (!n.prev_thread.empty()) out += link(page_of(n.prev_thread), "previous in thread", "prev");
    if (!n.next_thread.empty()) out += link(page_of(n.next_thread), "next in thread", "next");
    if (!n.prev_date.empty()) out += link(page_of(n.prev_date), "previous by date");
    if (!n.next_date.empty()) out += link(page_of(n.next_date), "next by date");
    out += link("../threads/" + n.thread + ".html", "thread");
    out += link("../threads/" + n.thread + ".mbox", "thread as mbox");
    out += link("../by-date/" + n.month + ".html", "month");
    return out;
}

std::optional<std::string> with_nav(std::string_view page, const std::string &nav)
{
    const std::size_t m = page.find(kNavMarker), body = page.find("<main");
    if (m == std::string_view::npos || (body != std::string_view::npos && body < m)) return std::nullopt;
    const std::size_t from = m + kNavMarker.size();
    std::size_t to;
    if (page.substr(from, kNavRoom).find_first_not_of(' ') == std::string_view::npos && page.size() >= from + kNavRoom)
        to = from + kNavRoom;
    else if (const std::size_t e = page.find(kNavEnd, from); e != std::string_view::npos && (body == std::string_view::npos || e < body))
        to = e + kNavEnd.size();
    else
        return std::nullopt;
    std::string out(page.substr(0, from));
    out += nav;
    out += kNavEnd;
    out += page.substr(to);
    return out;
}

std::string thread_page(const std::string &root, const std::vector<ArchiveEntry> &members)
{
    const Threads t = thread_archive(members);
    const std::string subject = members.empty() ? std::string() : members[t.order.empty() ? 0 : t.order[0]].subject;
    std::string p = head("Thread: " + subject, "../");
    p += "<header class=\"mimeuri-header\"><nav class=\"mimeuri-nav\">" + link("../index.html", "index") +
         link(root + ".mbox", "thread as mbox") + "</nav><h1>" + subject + "</h1></header>\n<p class=\"mimeuri-fields\">" +
         std::to_string(members.size()) + " messages; dates in UTC</p>\n";
    p += thread_lists(members, t, "../");
    return p + "</body></html>\n";
}

std::string date_page(const std::string &month, const std::vector<Shown> &messages)
{
    std::string p = head("Messages of " + month, "../");
    p += "<header class=\"mimeuri-header\"><nav class=\"mimeuri-nav\">" + link("../index.html", "index") +
         link("../by-thread/" + month + ".html", "by thread") +
         "</nav><h1>Messages of " + month + "</h1></header>\n<ul class=\"mimeuri-thread\">";
    for (const Shown &s : messages)
        p += "<li>" + link(page_of(s.e.address), s.e.subject) + " <span class=\"from\">" + s.e.from +
             "</span> <span class=\"date\">" + (s.e.date.empty() ? std::string("(no date)") : s.e.date) + "</span></li>";
    return p + "</ul>\n</body></html>\n";
}

std::string month_threads_page(const std::string &month, const std::vector<std::vector<ArchiveEntry>> &threads)
{
    std::string p = head("Threads of " + month, "../");
    p += "<header class=\"mimeuri-header\"><nav class=\"mimeuri-nav\">" + link("../index.html", "index") +
         link("../by-date/" + month + ".html", "by date") + "</nav><h1>Threads last written to in " + month +
         "</h1></header>\n";
    for (const auto &members : threads) p += thread_lists(members, thread_archive(members), "../");
    if (threads.empty()) p += "<p class=\"mimeuri-fields\">No thread was last written to in this month.</p>\n";
    return p + "</body></html>\n";
}

std::string top_page(long long messages, const std::vector<std::pair<std::string, long long>> &months,
                     const std::vector<std::vector<ArchiveEntry>> &newest_threads)
{
    std::string p = head("Archive", "");
    p += "<header class=\"mimeuri-header\"><nav class=\"mimeuri-nav\">" + link("feed.atom", "feed (Atom)") +
         "</nav><h1>Archive</h1></header>\n<p class=\"mimeuri-fields\">" + std::to_string(messages) +
         " messages; dates in UTC</p>\n<h2>Months</h2>\n<ul>";
    for (const auto &[m, n] : months)
        p += "<li>" + m + ": " + link("by-date/" + m + ".html", "by date") + " " + link("by-thread/" + m + ".html", "by thread") +
             " <span class=\"from\">" + std::to_string(n) + " messages</span></li>";
    p += "</ul>\n<h2>Newest threads</h2>\n";
    for (const auto &members : newest_threads) {
        std::string list = thread_lists(members, thread_archive(members), "");
        p += list;
    }
    return p + "</body></html>\n";
}

std::string rfc3339(long long epoch)
{
    const std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    if (!::gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) return "1970-01-01T00:00:00Z";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string name_uuid(std::string_view name)
{
    std::string h = sha256_hex(name).substr(0, 32);
    h[12] = '5';                                           // version
    h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) & 3]; // variant
    return "urn:uuid:" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
           h.substr(20, 12);
}

std::string atom_feed(const std::string &feed_id, const std::vector<Shown> &newest)
{
    // RFC 4287 4.1.1: id, title and updated; an author for the feed (4.1.1, as some entry
    // may have none of its own); each entry its id, title, updated, author and alternate link.
    const long long updated = newest.empty() ? 0 : newest.front().e.epoch;
    std::string f = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<id>" + feed_id +
                    "</id>\n<title>Archive</title>\n<updated>" + rfc3339(updated) +
                    "</updated>\n<author><name>mimeuri archive</name></author>\n<link rel=\"self\" href=\"feed.atom\"/>\n"
                    "<link rel=\"alternate\" type=\"text/html\" href=\"index.html\"/>\n";
    for (const Shown &s : newest) {
        f += "<entry>\n<id>" + name_uuid(feed_id + "/" + s.e.address) + "</id>\n<title>" + s.e.subject + "</title>\n<updated>" +
             rfc3339(s.e.epoch) + "</updated>\n<author><name>" + (s.e.from.empty() ? std::string("(unknown)") : s.e.from) +
             "</name></author>\n<link rel=\"alternate\" type=\"text/html\" href=\"" + s.e.address + "/index.html\"/>\n</entry>\n";
    }
    return f + "</feed>\n";
}

std::string mbox_chunk(const std::string &from_line, std::string_view bytes, bool quoted, const std::string &tail,
                       long long epoch)
{
    if (quoted) {
        std::string out = from_line;
        out.append(bytes);
        if (!tail.empty()) return out + tail;
        // The input's last message: it ends the mbox, with its empty line or without.
        while (out.size() < 2 || out.compare(out.size() - 2, 2, "\n\n") != 0) out += '\n';
        return out;
    }
    const std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    char date[64] = "Thu Jan  1 00:00:00 1970";
    if (::gmtime_r(&t, &tm)) std::strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", &tm);
    std::string out = "From MAILER-DAEMON " + std::string(date) + "\n";
    // mboxrd: every line that is ">*From " gets one more '>' (undone by taking one off).
    for (std::size_t at = 0; at < bytes.size();) {
        std::size_t end = bytes.find('\n', at);
        end = end == std::string_view::npos ? bytes.size() : end + 1;
        const std::string_view line = bytes.substr(at, end - at);
        const std::size_t gt = line.find_first_not_of('>');
        if (gt != std::string_view::npos && line.substr(gt, 5) == "From ") out += '>';
        out.append(line);
        at = end;
    }
    if (!bytes.empty() && bytes.back() != '\n') out += '\n';
    return out + "\n";
}

} // namespace mimeuri::archive
