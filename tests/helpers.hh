// Test helpers: temporary files, file contents, and running the mimeuri binary.
#pragma once

#include <doctest/doctest.h>
#include <glib.h>
#include <gmime/gmime.h>
#include <glib/gstdio.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace testing {

// A test that cannot run here (no corpus, no tmpfs, no tr_TR locale, no python3) calls
// skip(why) and returns: the reason is printed and counted (main lists the skips at the end,
// since doctest counts such a test as passed), and with MIMEURI_STRICT_TESTS=1 (CI) the
// skip fails the test instead, so that no suite passes by skipping.
inline std::vector<std::string> &skips()
{
    static std::vector<std::string> s;
    return s;
}
inline bool strict_tests()
{
    const char *v = g_getenv("MIMEURI_STRICT_TESTS");
    return v && std::string(v) == "1";
}
inline void skip(const std::string &why)
{
    if (strict_tests()) {
        FAIL_CHECK("cannot run here, and MIMEURI_STRICT_TESTS=1 forbids skipping: " << why);
        return;
    }
    MESSAGE("skipped: " << why);
    skips().push_back(why);
}

inline std::string read_file(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline void write_file(const std::string &path, const std::string &bytes)
{
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
    if (!f) throw std::runtime_error("cannot write " + path);
}

// A temporary directory removed with its contents at scope exit.
struct TempDir {
    std::string path;
    TempDir()
    {
        GError *err = nullptr;
        char *p = g_dir_make_tmp("mimeuri-test-XXXXXX", &err);
        if (!p) throw std::runtime_error(err->message);
        path = p;
        g_free(p);
    }
    ~TempDir()
    {
        std::string cmd = "rm -rf '" + path + "'";
        if (std::system(cmd.c_str()) != 0) { /* best effort */
        }
    }
    std::string file(const std::string &name, const std::string &bytes) const
    {
        std::string p = path + "/" + name;
        write_file(p, bytes);
        return p;
    }
    std::string operator/(const std::string &name) const { return path + "/" + name; }
};

struct Proc {
    int status{-1}; // exit status, or -1 when killed by a signal
    std::string out;
    std::string err;
};

// Runs a shell command line, capturing stdout and stderr.
inline Proc sh(const std::string &cmdline)
{
    Proc p;
    char *out = nullptr, *err = nullptr;
    int wait_status = 0;
    GError *gerr = nullptr;
    const char *argv[] = {"/bin/sh", "-c", cmdline.c_str(), nullptr};
    // Text only: binary output is captured through files (see mimeuri() below).
    if (!g_spawn_sync(nullptr, const_cast<char **>(argv), nullptr, G_SPAWN_DEFAULT, nullptr, nullptr, &out, &err,
                      &wait_status, &gerr))
        throw std::runtime_error(gerr->message);
    p.out = out ? out : "";
    p.err = err ? err : "";
    g_free(out);
    g_free(err);
    p.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    return p;
}

// Rows of ../shared/corpus/INDEX.tsv (columns split at tabs), header row dropped; empty
// when the corpus is absent.
inline std::vector<std::vector<std::string>> corpus_index()
{
    std::vector<std::vector<std::string>> rows;
    std::ifstream index(std::string(MIMEURI_CORPUS) + "/INDEX.tsv");
    std::string line;
    std::getline(index, line);
    while (std::getline(index, line)) {
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, '\t')) cols.push_back(c);
        rows.push_back(std::move(cols));
    }
    return rows;
}

inline std::string quote(const std::string &s)
{
    char *q = g_shell_quote(s.c_str());
    std::string r = q;
    g_free(q);
    return r;
}

inline std::string bin() { return quote(MIMEURI_BIN); }

// --print-config's settings from its first group on, without the "# from FILE:LINE" lines that
// say where each came from (they name the file read, not the settings).
inline std::string printed_settings(const std::string &text)
{
    std::string out;
    std::istringstream in(text.substr(text.find("\n[")));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("# from ", 0) != 0) out += line + "\n";
    return out;
}

// AddressSanitizer maps terabytes of shadow memory: a sanitized build cannot run under an
// address-space limit, so there the limit is left out (and tests that need it skip it).
#ifdef MIMEURI_SANITIZED
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
// A sanitized build runs several times slower: a bound on a release build's time is this
// many times as long there (a quadratic cost still passes it by far).
constexpr double time_scale = sanitized ? 10 : 1;
inline std::string address_limit(const std::string &kb) { return sanitized ? std::string() : "ulimit -v " + kb + "; "; }
// LeakSanitizer cannot run in a process that strace traces (it stops the world with ptrace
// itself): a command under strace leaves leak checking out in a sanitized build.
inline std::string ptrace_env() { return sanitized ? "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 " : ""; }

// Runs mimeuri with args, its standard output captured byte-exactly through a file.
// stdin_path: a file to pipe in through cat (a real pipe), or empty for none.
inline Proc mimeuri(const std::string &args, const std::string &stdin_path = {}, bool pipe = true)
{
    TempDir d;
    std::string outp = d / "stdout", errp = d / "stderr";
    std::string cmd;
    if (stdin_path.empty()) cmd = bin() + " " + args + " </dev/null";
    else if (pipe) cmd = "cat " + quote(stdin_path) + " | " + bin() + " " + args;
    else cmd = bin() + " " + args + " < " + quote(stdin_path);
    cmd += " >" + quote(outp) + " 2>" + quote(errp) + "; echo $?";
    Proc r = sh(cmd);
    Proc p;
    p.status = std::stoi(r.out);
    p.out = read_file(outp);
    p.err = read_file(errp);
    return p;
}

// lf with every LF made CRLF.
inline std::string crlf(const std::string &lf)
{
    std::string out;
    for (char c : lf) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

// The MIME structure GMime reads: every entity's content type in order, and each leaf's
// content decoded.
struct MimeTree {
    std::vector<std::string> types;
    std::vector<std::string> leaves;
};

inline MimeTree mime_tree(const std::string &bytes)
{
    MimeTree t;
    GMimeStream *s = g_mime_stream_mem_new_with_buffer(bytes.data(), bytes.size());
    GMimeParser *p = g_mime_parser_new_with_stream(s);
    GMimeMessage *m = g_mime_parser_construct_message(p, nullptr);
    g_object_unref(p);
    g_object_unref(s);
    if (!m) throw std::runtime_error("GMime cannot parse the message");
    GMimePartIter *it = g_mime_part_iter_new(GMIME_OBJECT(m));
    do {
        GMimeObject *o = g_mime_part_iter_get_current(it);
        if (!o) break;
        gchar *ct = g_mime_content_type_get_mime_type(g_mime_object_get_content_type(o));
        t.types.push_back(ct);
        g_free(ct);
        if (GMIME_IS_PART(o)) {
            GMimeStream *out = g_mime_stream_mem_new();
            if (GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o))) g_mime_data_wrapper_write_to_stream(w, out);
            GByteArray *a = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out));
            t.leaves.emplace_back(reinterpret_cast<const char *>(a->data), a->len);
            g_object_unref(out);
        }
    } while (g_mime_part_iter_next(it));
    g_mime_part_iter_free(it);
    g_object_unref(m);
    return t;
}

} // namespace testing
