// RFC 2017: for any URL u, reading what is written gives encode(u), in words of <= 40.
#include "external_body.hh"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mimeuri;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string u(reinterpret_cast<const char *>(data), size);
    std::string p = rfc2017::parameter(u);
    if (p.compare(0, 5, "URL=\"") != 0 || p.back() != '"') std::abort();
    std::size_t word = 0;
    for (std::size_t i = 5; i + 1 < p.size(); ++i) {
        char c = p[i];
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) >= 128) std::abort(); // all encoded
        if (c == '\n' || c == '\t') word = 0;
        else if (++word > rfc2017::max_word) std::abort();
    }
    if (rfc2017::extract(p.substr(4)) != rfc2017::encode(u)) std::abort();
    return 0;
}
