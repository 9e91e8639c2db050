#include "offload_store.hh"

#include "fdio.hh"
#include "sha256.hh"

#include <glib.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mimeuri::offload {

namespace {

constexpr std::size_t kBlock = std::size_t{256} << 10;

Error io_error(Code code, const std::string &what, const std::string &path)
{
    return Error{code, what + " " + path + ": " + std::strerror(errno)};
}

std::string hex(const unsigned char *d, std::size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        out += digits[d[i] >> 4];
        out += digits[d[i] & 15];
    }
    return out;
}

std::string hex_digest(hmac_sha256_ctx &mac)
{
    unsigned char d[SHA256_DIGEST_SIZE];
    hmac_sha256_digest(&mac, sizeof d, d);
    return hex(d, sizeof d);
}

// Syncs a folder, so that a rename or a new file in it survives a crash (notmuch-insert.c).
Status sync_dir(const std::string &dir)
{
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return io_error(Code::TempFail, "cannot open", dir);
    int r = ::fsync(fd);
    int e = errno;
    ::close(fd);
    errno = e;
    if (r != 0) return io_error(Code::TempFail, "cannot sync", dir);
    return ok();
}

Result<std::string> read_key(const std::string &path)
{
    gchar *text = nullptr;
    gsize len = 0;
    GError *err = nullptr;
    if (!g_file_get_contents(path.c_str(), &text, &len, &err)) {
        std::string why = err->message;
        g_error_free(err);
        return Error{Code::Config, "offload key: " + why};
    }
    std::string key(text, len);
    g_free(text);
    if (key.size() < 16) return Error{Code::Config, "offload key " + path + ": fewer than 16 octets"};
    return key;
}

// The store's own key: made once, written whole under a temporary name and linked to .key,
// so that two runs starting at once end up with the same key (the second's link fails).
Result<std::string> own_key(const std::string &dir)
{
    const std::string path = dir + "/.key";
    if (::access(path.c_str(), F_OK) == 0) return read_key(path);
    std::string key(32, '\0');
    if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size()))
        return io_error(Code::TempFail, "no random octets for the key of", dir);
    std::string tmp = dir + "/.key-XXXXXX";
    int fd = ::mkstemp(tmp.data()); // mode 0600
    if (fd < 0) return io_error(Code::CantCreate, "cannot write a key in", dir);
    bool good = write_all(fd, key.data(), key.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!good) {
        ::unlink(tmp.c_str());
        return io_error(Code::CantCreate, "cannot write", tmp);
    }
    int linked = ::link(tmp.c_str(), path.c_str());
    ::unlink(tmp.c_str());
    if (linked != 0 && errno != EEXIST) return io_error(Code::CantCreate, "cannot write", path);
    if (Status s = sync_dir(dir); !s) return s.error();
    return read_key(path);
}

} // namespace

bool is_name(std::string_view name)
{
    if (name.size() != 2 * SHA256_DIGEST_SIZE) return false;
    for (char c : name)
        if (!g_ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
    return true;
}

Result<Store> Store::open(const std::string &dir, const std::string &key_file, bool create_key)
{
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Error{Code::Config, "--offload-dir " + dir + " is not a folder"};
    Store s;
    s.dir_ = dir;
    Result<std::string> key = !key_file.empty() ? read_key(key_file)
                              : create_key     ? own_key(dir)
                                               : read_key(dir + "/.key");
    if (!key) return key.error();
    s.key_ = std::move(*key);
    return s;
}

hmac_sha256_ctx Store::keyed() const
{
    hmac_sha256_ctx mac;
    hmac_sha256_set_key(&mac, key_.size(), reinterpret_cast<const uint8_t *>(key_.data()));
    return mac;
}

Store::Writer::Writer(const Store &s, int fd, std::string tmp) : store_(&s), fd_(fd), tmp_(std::move(tmp)), mac_(s.keyed())
{
}

Store::Writer::Writer(Writer &&o) noexcept
    : store_(o.store_), fd_(std::exchange(o.fd_, -1)), tmp_(std::move(o.tmp_)), mac_(o.mac_), size_(o.size_)
{
    o.tmp_.clear();
}

Store::Writer::~Writer()
{
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Result<Store::Writer> Store::writer() const
{
    std::string tmp = dir_ + "/.tmp-XXXXXX";
    int fd = ::mkstemp(tmp.data());
    if (fd < 0) return io_error(Code::TempFail, "cannot write in", dir_);
    // Readable by the web server that serves the links, as a file the user made would be.
    mode_t mask = ::umask(0);
    ::umask(mask);
    (void)::fchmod(fd, 0644 & ~mask);
    return Writer(*this, fd, std::move(tmp));
}

Status Store::Writer::feed(std::string_view piece)
{
    hmac_sha256_update(&mac_, piece.size(), reinterpret_cast<const uint8_t *>(piece.data()));
    if (!write_all(fd_, piece.data(), piece.size())) return io_error(Code::TempFail, "cannot write", tmp_);
    size_ += piece.size();
    return ok();
}

Result<std::string> Store::Writer::commit()
{
    if (::fsync(fd_) != 0) return io_error(Code::TempFail, "cannot sync", tmp_);
    ::close(std::exchange(fd_, -1));
    const std::string name = hex_digest(mac_);
    const std::string final_path = store_->path(name);
    // The same bytes stored before: kept, unless that file is no longer theirs (its size
    // tells a truncated or replaced file at no cost; restore checks the bytes themselves).
    struct stat st {};
    if (::stat(final_path.c_str(), &st) == 0 && static_cast<std::size_t>(st.st_size) == size_) {
        ::unlink(tmp_.c_str());
        tmp_.clear();
        return name;
    }
    if (::rename(tmp_.c_str(), final_path.c_str()) != 0) return io_error(Code::TempFail, "cannot rename to", final_path);
    tmp_.clear();
    if (Status s = sync_dir(store_->dir_); !s) return s.error();
    return name;
}

Result<Store::Hashed> Store::hash_file(const std::string &path) const
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error(errno == ENOENT ? Code::NoInput : Code::IoErr, "cannot open", path);
    hmac_sha256_ctx mac = keyed();
    Sha256 sha;
    Hashed h{path, 0, {}, {}};
    std::string buf(kBlock, '\0');
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            errno = e;
            return io_error(Code::IoErr, "cannot read", path);
        }
        if (n == 0) break;
        hmac_sha256_update(&mac, static_cast<std::size_t>(n), reinterpret_cast<const uint8_t *>(buf.data()));
        sha.update(buf.data(), static_cast<std::size_t>(n));
        h.size += static_cast<std::size_t>(n);
    }
    ::close(fd);
    h.name = hex_digest(mac);
    h.sha256 = sha.digest();
    return h;
}

Result<std::string> Store::name_of_file(const std::string &path) const
{
    auto h = hash_file(path);
    if (!h) return h.error();
    return std::move(h->name);
}

Result<Store::Hashed> Store::checked(std::string_view name) const
{
    auto h = hash_file(path(name));
    if (!h) return h.error();
    if (h->name != name) return Error{Code::DataErr, "file " + h->path + " does not match its name"};
    return h;
}

} // namespace mimeuri::offload
