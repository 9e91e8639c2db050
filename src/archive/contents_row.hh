// --cid=extract: a message's row in the extract folder's index.html (extract_write.hh writes
// the page): its date, sender and subject, as a reader shows them (RFC 2047 words decoded),
// each escaped as HTML text, so that no header can put markup into the page.
#pragma once

#include "message.hh"

#include <cstddef>
#include <string>
#include <string_view>

namespace mimeuri::refs {

// text (any bytes) as HTML text: invalid UTF-8 made valid, controls (C0, C1, DEL) made
// spaces, & < > " ' escaped.
std::string html_text(std::string_view text);

// The message's record for the archive's contents page (archive_contents.hh), its
// page in folder N: date (UTC), sender and subject as HTML text, Message-ID, and the ids it
// replies to.
std::string contents_row(const MessageContext &ctx, std::size_t folder);

} // namespace mimeuri::refs
