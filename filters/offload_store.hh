// The offload store (--offload-dir, issue 51): files named by a keyed hash of their bytes,
// HMAC-SHA-256 (RFC 2104) under a key only the store's owner holds, so that the same bytes
// are stored once and nobody without the key can tell from a name whether a file was
// received (MIMEDefang's replace_with_url salts its names for the same reason). A file is
// written to a temporary name, synced, renamed and its folder synced before the message
// that points to it is written: a message never points to a file that was not durably there.
#pragma once

#include "result.hh"

#include <nettle/hmac.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace mimeuri::offload {

// The names are 64 lower-case hex digits.
bool is_name(std::string_view name);

class Store {
public:
    // The store in dir with the key read from key_file, or (key_file empty) the key the store
    // keeps in dir/.key, made once (32 random octets, mode 0600) when there is none.
    static Result<Store> open(const std::string &dir, const std::string &key_file, bool create_key);
    const std::string &dir() const { return dir_; }
    std::string path(std::string_view name) const { return dir_ + "/" + std::string(name); }

    // One file being written: pieces fed, then committed under its name (or dropped, its
    // temporary file removed, when it is destroyed uncommitted).
    class Writer {
    public:
        Writer(Writer &&o) noexcept;
        Writer &operator=(Writer &&) = delete;
        ~Writer();
        Status feed(std::string_view piece);
        // The file's name; the file is durably there when this returns it.
        Result<std::string> commit();
        std::size_t size() const { return size_; }

    private:
        friend class Store;
        Writer(const Store &s, int fd, std::string tmp);
        const Store *store_;
        int fd_;
        std::string tmp_;
        hmac_sha256_ctx mac_;
        std::size_t size_{0};
    };
    Result<Writer> writer() const;

    // A file as one read found it: its name (its HMAC), size and SHA-256 (32 octets).
    struct Hashed {
        std::string path;
        std::size_t size;
        std::string name, sha256;
    };
    // The file of that name, read once and checked against its name: what the output then
    // copies of it is checked against size and sha256 (StreamedBody::File), so a file that
    // changes afterwards is never used. NoInput when it is missing, DataErr when it does not match.
    Result<Hashed> checked(std::string_view name) const;
    // The name the bytes of a file have (its HMAC), without using them.
    Result<std::string> name_of_file(const std::string &path) const;

private:
    hmac_sha256_ctx keyed() const;
    Result<Hashed> hash_file(const std::string &path) const;
    std::string dir_;
    std::string key_;
};

} // namespace mimeuri::offload
