#include "source.hh"

#include "fdio.hh"
#include "input_stream.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace mimeuri {

namespace {

Error errno_error(Code code, const std::string &what, int err)
{
    return Error{code, what + ": " + g_strerror(err)};
}


} // namespace

Source::Source(Source &&o) noexcept
    : name_(std::move(o.name_)), size_(o.size_), fd_(std::exchange(o.fd_, -1)),
      mem_(std::exchange(o.mem_, nullptr)), spooled_(o.spooled_), bytes_(std::exchange(o.bytes_, nullptr)), base_(o.base_),
      stream_(std::move(o.stream_)), keep_(std::move(o.keep_))
{
    for (int k = 0; k < 2; ++k) {
        blocks_[k] = std::exchange(o.blocks_[k], nullptr);
        block_off_[k] = o.block_off_[k];
    }
}

void Source::drop_blocks() const
{
    for (GBytes *&b : blocks_)
        if (b) g_bytes_unref(std::exchange(b, nullptr));
}

Source &Source::operator=(Source &&o) noexcept
{
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        if (bytes_) g_bytes_unref(bytes_);
        name_ = std::move(o.name_);
        size_ = o.size_;
        fd_ = std::exchange(o.fd_, -1);
        mem_ = std::exchange(o.mem_, nullptr);
        spooled_ = o.spooled_;
        bytes_ = std::exchange(o.bytes_, nullptr);
        base_ = o.base_;
        stream_ = std::move(o.stream_);
        keep_ = std::move(o.keep_);
        drop_blocks();
        for (int k = 0; k < 2; ++k) {
            blocks_[k] = std::exchange(o.blocks_[k], nullptr);
            block_off_[k] = o.block_off_[k];
        }
    }
    return *this;
}

Source::~Source()
{
    if (fd_ >= 0) ::close(fd_);
    if (bytes_) g_bytes_unref(bytes_);
    drop_blocks();
}


Result<Source> Source::open_path(const std::string &path, std::size_t spool_threshold)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return errno_error(err == ENOENT || err == EACCES || err == ENOTDIR ? Code::NoInput
                                                                             : Code::IoErr,
                           "cannot open " + path, err);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return errno_error(Code::IoErr, "cannot stat " + path, err);
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return Error{Code::NoInput, "cannot read " + path + ": is a directory"};
    }
    if (!S_ISREG(st.st_mode)) {
        auto r = read_fd(fd, path, spool_threshold);
        ::close(fd);
        return r;
    }
    Source s;
    s.name_ = path;
    s.size_ = st.st_size;
    s.fd_ = fd;
    int sfd = ::dup(fd);
    if (sfd < 0) return errno_error(Code::IoErr, "cannot dup " + path, errno);
    s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new_with_bounds(sfd, 0, st.st_size));
    return s;
}

Result<Source> Source::read_fd(int fd, const std::string &name, std::size_t spool_threshold)
{
    GByteArray *buf = g_byte_array_new();
    std::vector<char> chunk(64 * 1024);
    int tmp = -1;
    std::int64_t total = 0;
    bool can_splice = true, eof = false;
    // A GByteArray's length is a guint: past 4 GiB it would wrap (or GLib abort), so a
    // larger --spool-threshold spools from there on.
    const std::size_t memory_max = std::min<std::size_t>(spool_threshold, G_MAXUINT - chunk.size());
    auto fail = [&](Error e) -> Result<Source> {
        g_byte_array_unref(buf);
        if (tmp >= 0) ::close(tmp);
        return e;
    };
    for (;;) {
        ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(errno_error(Code::IoErr, "cannot read " + name, errno));
        }
        if (n == 0) break;
        total += n;
        if (tmp < 0 && buf->len + static_cast<std::size_t>(n) <= memory_max) {
            g_byte_array_append(buf, reinterpret_cast<guint8 *>(chunk.data()), static_cast<guint>(n));
            continue;
        }
        if (tmp < 0) {
            // Past the threshold: spool to an unlinked temporary file.
            GError *gerr = nullptr;
            char *tmpname = nullptr;
            tmp = g_file_open_tmp("mimeuri-spool-XXXXXX", &tmpname, &gerr);
            if (tmp < 0)
                return fail(Error::from_gerror(Code::TempFail, gerr, "cannot spool " + name));
            ::unlink(tmpname);
            g_free(tmpname);
            if (!write_all(tmp, buf->data, buf->len)) {
                int err = errno;
                return fail(errno_error(Code::TempFail, "cannot spool " + name, err));
            }
            g_byte_array_set_size(buf, 0);
        }
        if (!write_all(tmp, chunk.data(), static_cast<std::size_t>(n))) {
            int err = errno;
            return fail(errno_error(Code::TempFail, "cannot spool " + name, err));
        }
        // The rest moves from the pipe to the spool inside the kernel (no copy through this
        // process); what splice cannot take (not a pipe) is read and written as above.
        while (can_splice) {
            ssize_t m = ::splice(fd, nullptr, tmp, nullptr, 1 << 20, SPLICE_F_MOVE);
            if (m > 0) {
                total += m;
                continue;
            }
            if (m == 0) {
                eof = true;
                break;
            }
            if (errno == EINTR) continue;
            if (errno == EINVAL || errno == ENOSYS) {
                can_splice = false;
                break;
            }
            const int err = errno;
            if (err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO)
                return fail(errno_error(Code::TempFail, "cannot spool " + name, err));
            return fail(errno_error(Code::IoErr, "cannot read " + name, err));
        }
        if (eof) break;
    }
    Source s;
    s.name_ = name;
    s.size_ = total;
    if (tmp >= 0) {
        g_byte_array_unref(buf);
        s.fd_ = tmp;
        s.spooled_ = true;
        int sfd = ::dup(tmp);
        if (sfd < 0) return errno_error(Code::TempFail, "cannot dup spool file", errno);
        s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new_with_bounds(sfd, 0, total));
        return s;
    }
    s.mem_ = buf;
    GMimeStream *ms = g_mime_stream_mem_new_with_byte_array(buf); // takes buf
    s.stream_ = GPtr<GMimeStream>::adopt(ms);
    return s;
}

Source Source::from_bytes(std::string_view bytes, const std::string &name)
{
    Source s;
    s.name_ = name;
    s.size_ = static_cast<std::int64_t>(bytes.size());
    s.mem_ = g_byte_array_sized_new(static_cast<guint>(bytes.size()));
    g_byte_array_append(s.mem_, reinterpret_cast<const guint8 *>(bytes.data()),
                        static_cast<guint>(bytes.size()));
    s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_mem_new_with_byte_array(s.mem_));
    return s;
}

namespace {

// Window and block buffers, reused: a message's window is freed before the next one is read,
// a block of the mbox splitter's once two newer ones are read, and a fresh buffer costs a page
// fault per 4 KiB the read writes (25-40 us each on the virtual machines mail runs on). Each
// thread keeps up to kSpares freed buffers (of at most kSpareMax each; the largest are kept)
// for the next reads that fit in them. A buffer's capacity is stored in front of its bytes.
constexpr std::size_t kSpareMax = 2u << 20;
constexpr std::size_t kSpares = 4;
constexpr std::size_t kHead = 16;

std::size_t capacity_of(const char *block)
{
    std::size_t cap;
    std::memcpy(&cap, block, sizeof cap);
    return cap;
}

struct Spares {
    char *blocks[kSpares]{}; // each kHead bytes (the capacity), then the buffer; or null
    ~Spares()
    {
        for (char *b : blocks) g_free(b);
    }
};
thread_local Spares spares;

char *take_buffer(std::size_t len)
{
    char **best = nullptr; // the smallest spare that fits
    for (char *&b : spares.blocks)
        if (b && capacity_of(b) >= len && (!best || capacity_of(b) < capacity_of(*best))) best = &b;
    if (best) return std::exchange(*best, nullptr) + kHead;
    const std::size_t cap = std::max<std::size_t>(len, 4096);
    char *block = static_cast<char *>(g_malloc(cap + kHead));
    std::memcpy(block, &cap, sizeof cap);
    return block + kHead;
}

void give_back(gpointer data)
{
    char *block = static_cast<char *>(data) - kHead;
    if (capacity_of(block) > kSpareMax) {
        g_free(block);
        return;
    }
    char **smallest = nullptr; // an empty slot, else the smallest spare, if smaller than block
    for (char *&b : spares.blocks)
        if (!b || !smallest || (*smallest && capacity_of(b) < capacity_of(*smallest))) {
            smallest = &b;
            if (!b) break;
        }
    if (*smallest && capacity_of(*smallest) >= capacity_of(block)) {
        g_free(block);
        return;
    }
    g_free(std::exchange(*smallest, block));
}

} // namespace

Result<GBytes *> Source::read_block(std::int64_t off, std::size_t len) const
{
    if (off < 0 || off > size_) return Error{Code::Software, "bad block in " + name_};
    len = std::min(len, static_cast<std::size_t>(size_ - off));
    const bool cache = !mem_ && !bytes_; // (a source in memory has its bytes at hand already)
    if (cache && blocks_[1]) g_bytes_unref(std::exchange(blocks_[1], nullptr)); // its buffer for this read
    char *buf = take_buffer(len);
    auto r = read_at(off, buf, len);
    if (!r) {
        give_back(buf);
        return r.error();
    }
    GBytes *block = g_bytes_new_with_free_func(buf, *r, give_back, buf);
    if (cache) {
        blocks_[1] = std::exchange(blocks_[0], g_bytes_ref(block));
        block_off_[1] = std::exchange(block_off_[0], off);
    }
    return block;
}

Result<Source> Source::window(const Source &src, std::int64_t begin, std::int64_t end)
{
    if (begin < 0 || end < begin || end > src.size_) return Error{Code::Software, "bad window in " + src.name_};
    const auto len = static_cast<std::size_t>(end - begin);
    GBytes *bytes = nullptr;
    for (int k = 0; k < 2 && !bytes; ++k)
        if (GBytes *b = src.blocks_[k]; b && begin >= src.block_off_[k] &&
                                        end <= src.block_off_[k] + static_cast<std::int64_t>(g_bytes_get_size(b)))
            bytes = g_bytes_new_from_bytes(b, static_cast<gsize>(begin - src.block_off_[k]), len);
    if (!bytes) {
        char *buf = take_buffer(len);
        auto r = src.read_at(begin, buf, len);
        if (!r) {
            give_back(buf);
            return r.error();
        }
        if (*r < len) { // the file shrank since it was opened
            give_back(buf);
            return Error{Code::IoErr, src.name_ + " ended before the message did (it shrank while being read)"};
        }
        bytes = g_bytes_new_with_free_func(buf, len, give_back, buf);
    }
    Source s;
    s.name_ = src.name_;
    s.size_ = end;
    s.base_ = begin;
    s.bytes_ = bytes;
    s.stream_ = GPtr<GMimeStream>::adopt(input_stream_new(s.bytes_, begin));
    return s;
}

Result<Source> Source::reopen() const
{
    if (bytes_) return Error{Code::Software, "a window is not reopened"};
    Source s;
    s.name_ = name_;
    s.size_ = size_;
    s.spooled_ = spooled_;
    if (mem_) {
        s.mem_ = mem_;
        GMimeStream *ms = g_mime_stream_mem_new_with_byte_array(mem_);
        g_mime_stream_mem_set_owner(GMIME_STREAM_MEM(ms), FALSE); // the original's stream owns it
        s.stream_ = GPtr<GMimeStream>::adopt(ms);
        s.keep_ = GPtr<GMimeStream>::borrow(keep_ ? keep_.get() : stream_.get());
        return s;
    }
    std::string self = "/proc/self/fd/" + std::to_string(fd_);
    int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error(Code::IoErr, "cannot reopen " + name_, errno);
    s.fd_ = fd;
    int sfd = ::dup(fd);
    if (sfd < 0) return errno_error(Code::IoErr, "cannot dup " + name_, errno);
    s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new_with_bounds(sfd, 0, size_));
    return s;
}

Result<std::size_t> Source::read_at(std::int64_t off, char *buf, std::size_t len) const
{
    if (off < base_ || off > size_) return Error{Code::Software, "read outside " + name_};
    std::size_t avail = static_cast<std::size_t>(size_ - off);
    if (len > avail) len = avail;
    if (len == 0) return std::size_t{0};
    if (bytes_) {
        std::memcpy(buf, static_cast<const char *>(g_bytes_get_data(bytes_, nullptr)) + (off - base_), len);
        return len;
    }
    if (mem_) {
        std::memcpy(buf, mem_->data + off, len);
        return len;
    }
    std::size_t done = 0;
    while (done < len) {
        ssize_t n = ::pread(fd_, buf + done, len - done, off + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_error(Code::IoErr, "cannot read " + name_, errno);
        }
        if (n == 0) break; // the file shrank under us
        done += static_cast<std::size_t>(n);
    }
    if (done != len) return Error{Code::TempFail, name_ + " changed while being read"};
    return done;
}

std::string_view Source::view(std::int64_t begin, std::int64_t end) const
{
    if (begin < base_ || end < begin || end > size_) return {};
    const auto len = static_cast<std::size_t>(end - begin);
    if (bytes_) return {static_cast<const char *>(g_bytes_get_data(bytes_, nullptr)) + (begin - base_), len};
    if (mem_) return {reinterpret_cast<const char *>(mem_->data) + begin, len};
    return {};
}

Result<std::string> Source::slice(std::int64_t begin, std::int64_t end) const
{
    if (begin < base_ || end < begin || end > size_) return Error{Code::Software, "bad range in " + name_};
    std::string out(static_cast<std::size_t>(end - begin), '\0');
    auto r = read_at(begin, out.data(), out.size());
    if (!r) return r.error();
    return out;
}

} // namespace mimeuri
