// Length-prefixed fields (record.hh).
#include "record.hh"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace mimeuri {

void Record::put(const std::string &s)
{
    std::uint64_t len = s.size();
    buf_.append(reinterpret_cast<const char *>(&len), sizeof len);
    buf_ += s;
}

std::string Record::get()
{
    std::uint64_t len = 0;
    if (pos_ + sizeof len > buf_.size()) throw std::runtime_error("short worker record");
    std::memcpy(&len, buf_.data() + pos_, sizeof len);
    pos_ += sizeof len;
    if (pos_ + len > buf_.size()) throw std::runtime_error("short worker record");
    std::string out = buf_.substr(pos_, len);
    pos_ += len;
    return out;
}

} // namespace mimeuri
