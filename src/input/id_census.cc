// id_census: the Message-IDs an mbox may give its run's index (id_census.hh).
#include "id_census.hh"

#include "message_id.hh"
#include "text.hh"

#include <glib.h>

#include <algorithm>
#include <functional>

namespace mimeuri {

namespace {

// "Message-ID", any case, then blanks, then a colon: where its raw value starts; npos if not.
std::size_t message_id_value_at(std::string_view text)
{
    constexpr std::string_view name = "message-id";
    if (text.empty() || (text[0] != 'M' && text[0] != 'm')) return std::string_view::npos;
    if (text.size() <= name.size() || g_ascii_strncasecmp(text.data(), name.data(), name.size()) != 0)
        return std::string_view::npos;
    std::size_t at = name.size();
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    return at < text.size() && text[at] == ':' ? at + 1 : std::string_view::npos;
}

} // namespace

void IdCensus::line(std::string_view text)
{
    if (open_) {
        if (!text.empty() && (text[0] == ' ' || text[0] == '\t')) { // folded: the field goes on
            if (field_.size() + text.size() > kMaxField) unsure_ = true;
            else field_.append(text);
            return;
        }
        close_field();
    }
    const std::size_t value = message_id_value_at(text);
    if (value == std::string_view::npos) return;
    open_ = true;
    if (text.size() > kMaxField) unsure_ = true;
    else field_.assign(text.substr(value));
}

void IdCensus::close_field()
{
    open_ = false;
    // What plain_message_id reads (plain_bytes), which tests/test_inert.cc and fuzz_filter
    // hold against GMime's parse; 8-bit bytes and encoded words are decoded there as GMime
    // does (the run's parser options are GMime's defaults).
    if (unsure_ || !plain_bytes(field_)) {
        unsure_ = true;
        return;
    }
    if (const std::string id = message_id_of_value(field_); !id.empty()) keys_.push_back(key(id));
    field_.clear();
}

void IdCensus::end()
{
    if (open_) close_field();
    std::sort(keys_.begin(), keys_.end());
    for (std::size_t i = 1; i < keys_.size(); ++i)
        if (keys_[i] == keys_[i - 1] && (repeated_.empty() || repeated_.back() != keys_[i])) repeated_.push_back(keys_[i]);
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    ended_ = true;
}

bool IdCensus::rules_out(const std::vector<std::string> &ids) const
{
    if (!complete() || ids.empty()) return false;
    for (const std::string &id : ids)
        if (id.empty() || std::binary_search(keys_.begin(), keys_.end(), key(id))) return false;
    return true;
}

std::uint64_t IdCensus::key(std::string_view id) { return std::hash<std::string>{}(text::ascii_lower(id)); }

bool IdCensus::rules_out_repeats(const std::vector<std::string> &ids) const
{
    if (!complete() || ids.empty()) return false;
    for (const std::string &id : ids)
        if (id.empty() || std::binary_search(repeated_.begin(), repeated_.end(), key(id))) return false;
    return true;
}

} // namespace mimeuri
