// The DKIM body hash as first written (src/mime/signatures.cc before it read runs): one byte at a
// time through the ">From " unquoting, the line ends and RFC 6376 3.4.3/3.4.4, then a string
// append. Kept only as the test oracle that dkim::BodyHash is compared with (tests/
// test_body_hash.cc, fuzz/fuzz_body_hash.cc): it is slow, and plainly right.
#pragma once

#include "dkim_body_hash.hh"

namespace mimeuri::dkim_oracle {

class BodyHash {
public:
    BodyHash(GChecksumType type, dkim::Canon canon, std::optional<std::uint64_t> limit, bool unquote_from);
    ~BodyHash();
    BodyHash(const BodyHash &) = delete;
    BodyHash &operator=(const BodyHash &) = delete;
    void update(std::string_view bytes);
    std::vector<std::string> finish();

private:
    void byte(char c);   // after ">From " unquoting
    void canon(char c);  // line ends
    void newline();
    void content(char c); // RFC 6376 3.4.3 / 3.4.4
    void out(std::string_view s);
    void flush();
    static std::string digest(GChecksum *sum);
    GChecksum *sum_;
    dkim::Canon canon_;
    std::optional<std::uint64_t> limit_;
    bool unquote_;
    std::uint64_t total_{0};
    std::uint64_t crlfs_{0}; // line ends after the last content, not yet written
    bool wsp_{false};        // relaxed: white space not yet written
    bool cr_{false};         // a CR not yet known to end a line
    bool any_{false};        // content written
    std::string buf_;        // canonical bytes not yet hashed
    std::string prefix_;     // start of a line while it may still be ">+From "
    bool line_start_{true};
};

} // namespace mimeuri::dkim_oracle
