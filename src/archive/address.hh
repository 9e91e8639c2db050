// `mimeuri archive`: a message's permanent address, the name of its folder in the archive.
//
// Decided (docs/archives.md, "Permanent addresses"): the Message-ID itself (without <>)
// when it is a plain address a URL and a file system take as they are: at most 96 bytes,
// only ASCII letters, digits and "@._+-=", exactly one "@", neither first nor last, and no
// "." first (a hidden file) nor ".." anywhere. Anything else (a long id, an id with "/",
// "%", "~", spaces, non-ASCII, no "@", no Message-ID at all) is "id-" and the first 32 hex
// digits (128 bits) of the SHA-256 of the id as written. The archive's own files (index.html,
// feed.atom, mimeuri.css, by-date/, by-thread/, threads/) have no "@" and do not start with
// "id-", so no address can be one of them. A second message with the same Message-ID but
// other bytes gets the same address with "~" and the first 16 hex digits of the SHA-256 of
// its bytes after it ("~" is in no plain address). The address depends on the id (and the
// bytes) only: the same on every rebuild, add or merge.
#pragma once

#include <string>
#include <string_view>

namespace mimeuri::archive {

// The lower-case hex SHA-256 of bytes.
std::string sha256_hex(std::string_view bytes);

// The folder of a message whose Message-ID (without <>, may be empty) is message_id; with
// bytes_hex (sha256_hex of its bytes) when another message of that id came first.
std::string address_of(std::string_view message_id, std::string_view bytes_hex = {});

// Whether name is an address address_of can make (what --remove and the checks accept).
bool is_address(std::string_view name);

} // namespace mimeuri::archive
