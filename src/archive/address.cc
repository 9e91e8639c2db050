// `mimeuri archive`: permanent addresses (address.hh).
#include "address.hh"

#include "sha256.hh"
#include "text.hh"

#include <glib.h>

namespace mimeuri::archive {

namespace {

constexpr std::size_t kPlainMax = 96;
constexpr std::size_t kIdHex = 32;
constexpr std::size_t kBytesHex = 16;

bool plain_char(char c)
{
    return g_ascii_isalnum(c) || c == '@' || c == '.' || c == '_' || c == '+' || c == '-' || c == '=';
}

bool plain_id(std::string_view id)
{
    if (id.empty() || id.size() > kPlainMax || id.front() == '.' || id.find("..") != std::string_view::npos)
        return false;
    const std::size_t at = id.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == id.size() || id.find('@', at + 1) != std::string_view::npos)
        return false;
    for (char c : id)
        if (!plain_char(c)) return false;
    return true;
}

bool hex(std::string_view s)
{
    for (char c : s)
        if (!g_ascii_isxdigit(c) || g_ascii_isupper(c)) return false;
    return true;
}

} // namespace

std::string sha256_hex(std::string_view bytes)
{
    Sha256 h;
    h.update(bytes.data(), bytes.size());
    return text::lower_hex(h.digest());
}

std::string address_of(std::string_view message_id, std::string_view bytes_hex)
{
    std::string a;
    if (plain_id(message_id)) {
        a = message_id;
    } else {
        a = "id-";
        a += sha256_hex(message_id).substr(0, kIdHex);
    }
    if (!bytes_hex.empty()) {
        a += '~';
        a += bytes_hex.substr(0, kBytesHex);
    }
    return a;
}

bool is_address(std::string_view name)
{
    std::string_view base = name, dup;
    if (const std::size_t t = name.find('~'); t != std::string_view::npos) {
        base = name.substr(0, t);
        dup = name.substr(t + 1);
        if (dup.size() != kBytesHex || !hex(dup)) return false;
    }
    if (base.size() == 3 + kIdHex && base.substr(0, 3) == "id-") return hex(base.substr(3));
    return plain_id(base);
}

} // namespace mimeuri::archive
