// The Content-Type <-> URI mapping: whatever parses maps, and maps back equivalently.
#include "cturi.hh"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mimeuri::cturi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::string in(reinterpret_cast<const char *>(data), size);
    // Content-Type -> URI -> Content-Type
    if (auto ct = parse_content_type(in); ct) {
        if (auto header = format_content_type(*ct); header) {
            auto reparsed = parse_content_type(*header);
            if (!reparsed || !equivalent(*reparsed, *ct)) std::abort();
            if (auto uri = ct2uri(*ct); uri) {
                auto back = uri2ct(*uri);
                if (back && !equivalent(*back, *ct)) std::abort();
                // Section 6: nothing bound for a header carries a raw CR, LF or NUL.
                if (back)
                    if (auto text = format_content_type(*back); text && text->find_first_of(std::string("\r\n\0", 3)) != std::string::npos)
                        std::abort();
            }
        }
    }
    // URI -> Content-Type -> URI
    if (auto ct = uri2ct(in); ct) {
        auto header = format_content_type(*ct);
        if (header && header->find_first_of(std::string("\r\n\0", 3)) != std::string::npos) std::abort();
        if (auto uri = ct2uri(*ct); uri && !equivalent_uri(*uri, in)) {
            // Closure holds for URIs in normal form; a URI with redundant escapes or upper-case
            // MIME types maps to an equivalent one, which must then be a fixed point.
            auto again = uri2ct(*uri);
            if (!again) std::abort();
            auto uri2 = ct2uri(*again);
            if (!uri2 || !equivalent_uri(*uri2, *uri)) std::abort();
        }
    }
    return 0;
}
