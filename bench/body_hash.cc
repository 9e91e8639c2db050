// The DKIM/ARC body hash in process, MB/s: dkim::BodyHash (src/mime/dkim_body_hash.cc, reading
// runs), the byte-at-a-time oracle (tests/dkim_oracle.cc), and over the same bytes alone:
// GLib's SHA-256 (GChecksum, plain C), src/util/sha256.hh's (nettle, as mimeuri calls it), and
// nettle's where nettle-dev is installed. With MIMEURI_SHA256_PLAIN=1 the body hash uses GLib's
// SHA-256 too (what the canonicalization alone gives). Each message is hashed on its own, as mimeuri
// hashes a body, in 64 KiB pieces (src/mime/signatures.cc reads a file so). Rounds interleaved,
// best of ROUNDS. Usage: body_hash ROUNDS FILE...
#include "dkim_body_hash.hh"
#include "dkim_oracle.hh"
#include "sha256.hh"

#ifdef WITH_NETTLE
#include <nettle/sha2.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace mimeuri;

namespace {

constexpr std::size_t kPiece = 65536;

template <class Hash> std::size_t run_hash(const std::vector<std::string> &msgs, dkim::Canon canon)
{
    std::size_t sink = 0;
    for (const std::string &m : msgs) {
        Hash h(G_CHECKSUM_SHA256, canon, std::nullopt, false);
        for (std::size_t at = 0; at < m.size(); at += kPiece) h.update(std::string_view(m).substr(at, kPiece));
        sink += h.finish().front()[0];
    }
    return sink;
}

std::size_t run_glib(const std::vector<std::string> &msgs)
{
    std::size_t sink = 0;
    for (const std::string &m : msgs) {
        GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
        for (std::size_t at = 0; at < m.size(); at += kPiece)
            g_checksum_update(c, reinterpret_cast<const guchar *>(m.data() + at),
                              static_cast<gssize>(std::min(kPiece, m.size() - at)));
        guint8 d[32];
        gsize len = sizeof d;
        g_checksum_get_digest(c, d, &len);
        g_checksum_free(c);
        sink += d[0];
    }
    return sink;
}

#ifdef WITH_NETTLE
std::size_t run_nettle(const std::vector<std::string> &msgs)
{
    std::size_t sink = 0;
    for (const std::string &m : msgs) {
        sha256_ctx c;
        sha256_init(&c);
        sha256_update(&c, m.size(), reinterpret_cast<const uint8_t *>(m.data()));
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_digest(&c, sizeof d, d);
        sink += d[0];
    }
    return sink;
}
#endif

std::size_t run_ours(const std::vector<std::string> &msgs)
{
    std::size_t sink = 0;
    for (const std::string &m : msgs) {
        Sha256 h;
        for (std::size_t at = 0; at < m.size(); at += kPiece) h.update(m.data() + at, std::min(kPiece, m.size() - at));
        sink += static_cast<unsigned char>(h.digest()[0]);
    }
    return sink;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: body_hash ROUNDS FILE...\n");
        return 64;
    }
    const int rounds = std::atoi(argv[1]);
    std::vector<std::string> msgs;
    std::size_t bytes = 0;
    for (int i = 2; i < argc; ++i) {
        std::ifstream f(argv[i], std::ios::binary);
        std::ostringstream ss;
        ss << f.rdbuf();
        msgs.push_back(ss.str());
        bytes += msgs.back().size();
    }
    struct Row {
        const char *name;
        std::function<std::size_t()> fn;
        double best{1e30};
    };
    std::vector<Row> rows = {
        {"glib-sha256-alone", [&] { return run_glib(msgs); }},
#ifdef WITH_NETTLE
        {"nettle-sha256-alone", [&] { return run_nettle(msgs); }},
#endif
        {"mimeuri-sha256-alone", [&] { return run_ours(msgs); }},
        {"runs-simple", [&] { return run_hash<dkim::BodyHash>(msgs, dkim::Canon::Simple); }},
        {"runs-relaxed", [&] { return run_hash<dkim::BodyHash>(msgs, dkim::Canon::Relaxed); }},
        {"oracle-simple", [&] { return run_hash<dkim_oracle::BodyHash>(msgs, dkim::Canon::Simple); }},
        {"oracle-relaxed", [&] { return run_hash<dkim_oracle::BodyHash>(msgs, dkim::Canon::Relaxed); }},
    };
    std::size_t sink = 0;
    for (int r = 0; r < rounds; ++r)
        for (Row &row : rows) {
            const auto s = std::chrono::steady_clock::now();
            sink += row.fn();
            const std::chrono::duration<double> d = std::chrono::steady_clock::now() - s;
            row.best = std::min(row.best, d.count());
        }
    std::printf("%zu messages, %.1f MB, best of %d interleaved rounds (checksum %zu)\n", msgs.size(), bytes / 1e6, rounds,
                sink);
    const double glib = bytes / 1e6 / rows[0].best;
    for (const Row &row : rows)
        std::printf("%-20s %9.1f MB/s  %6.2fx GLib's SHA-256\n", row.name, bytes / 1e6 / row.best,
                    bytes / 1e6 / row.best / glib);
    const auto speed = [&](const char *n) {
        for (const Row &row : rows)
            if (std::string(row.name) == n) return bytes / 1e6 / row.best;
        return 0.0;
    };
    std::printf("runs / oracle: simple %.1fx, relaxed %.1fx\n", speed("runs-simple") / speed("oracle-simple"),
                speed("runs-relaxed") / speed("oracle-relaxed"));
    return 0;
}
