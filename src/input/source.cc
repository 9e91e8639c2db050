// source: an input's bytes (source.hh).
//
// SYNOPSIS  Source::open_path, Source::read_fd: a file read in place, or a pipe (standard input)
//           held in memory and spooled beyond a threshold (a thread moves it as it arrives);
//           reach, settle: wait for what has arrived; view, slice, read_at, read_block,
//           window: the bytes of a range.
#include "source.hh"

#include "fdio.hh"
#include "input_stream.hh"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <limits>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace mimeuri {

namespace {

Error errno_error(Code code, const std::string &what, int err)
{
    return Error{code, what + ": " + g_strerror(err)};
}


// The most a read asks to have arrived beyond its offset (a length is a size_t).
constexpr std::size_t kMaxWant = std::size_t(1) << 40;

} // namespace

// A piped input past the threshold: a thread moves the rest from the pipe to the spool file,
// at explicit offsets (the file's position is the GMime stream's, which reads through a
// duplicate of the same description), and says how far it has got. The thread owns its two
// descriptors; the Source waits for it (its end of input) before letting go of the spool.
struct Source::Spool {
    std::mutex m;
    std::condition_variable grew;
    std::atomic<std::int64_t> arrived{0}; // bytes in the file, readable
    std::atomic<bool> ended{false};       // set under m, with failure
    std::optional<Error> failure;         // written under m before ended; read freely once ended
    std::thread thread;

    ~Spool()
    {
        if (thread.joinable()) thread.join();
    }
    void run(int in, int tmp, std::string name);
    void add(std::int64_t n)
    {
        {
            std::lock_guard<std::mutex> l(m);
            arrived.store(arrived.load(std::memory_order_relaxed) + n, std::memory_order_release);
        }
        grew.notify_all();
    }
    void end(std::optional<Error> e)
    {
        {
            std::lock_guard<std::mutex> l(m);
            failure = std::move(e);
            ended.store(true, std::memory_order_release);
        }
        grew.notify_all();
    }
};

namespace {

// A fork while a spool's thread runs would leave the child a spool that never grows (the
// thread is not copied): every fork in the process waits for running spools to end first.
std::mutex spools_m;
std::condition_variable spools_ended;
int spools_running = 0;

void wait_for_spools()
{
    std::unique_lock<std::mutex> l(spools_m);
    spools_ended.wait(l, [] { return spools_running == 0; });
}

} // namespace

void Source::Spool::run(int in, int tmp, std::string name)
{
    bool can_splice = true;
    std::vector<char> chunk;
    std::optional<Error> why;
    const auto cannot_spool = [&](int err) { return errno_error(Code::TempFail, "cannot spool " + name, err); };
    for (;;) {
        loff_t at = arrived.load(std::memory_order_relaxed);
        ssize_t got;
        if (can_splice) {
            // From the pipe to the spool inside the kernel (no copy through this process).
            got = ::splice(in, nullptr, tmp, &at, 1 << 20, SPLICE_F_MOVE);
            if (got < 0 && (errno == EINVAL || errno == ENOSYS)) { // not a pipe: read and write
                can_splice = false;
                continue;
            }
            if (got < 0 && errno != EINTR) {
                // splice does not say which side failed: a full disk is the spool's, the rest the input's
                const int err = errno;
                why = err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO ? cannot_spool(err)
                                                                                   : errno_error(Code::IoErr, "cannot read " + name, err);
                break;
            }
        } else {
            chunk.resize(64 * 1024);
            got = ::read(in, chunk.data(), chunk.size());
            if (got < 0 && errno != EINTR) {
                why = errno_error(Code::IoErr, "cannot read " + name, errno);
                break;
            }
            if (got > 0 && !pwrite_all(tmp, chunk.data(), static_cast<std::size_t>(got), at)) {
                why = cannot_spool(errno);
                break;
            }
        }
        if (got < 0) continue; // EINTR
        if (got == 0) break;   // end of input
        add(got);
    }
    ::close(in);
    ::close(tmp);
    end(std::move(why));
    {
        std::lock_guard<std::mutex> l(spools_m);
        --spools_running;
    }
    spools_ended.notify_all();
}

Result<Source> Source::spool_rest(int in_fd, int tmp, std::int64_t spooled, const std::string &name)
{
    const int in = ::fcntl(in_fd, F_DUPFD_CLOEXEC, 0), out = ::fcntl(tmp, F_DUPFD_CLOEXEC, 0);
    const int stream_fd = ::fcntl(tmp, F_DUPFD_CLOEXEC, 0);
    if (in < 0 || out < 0 || stream_fd < 0) {
        const int err = errno;
        for (int fd : {in, out, stream_fd, tmp})
            if (fd >= 0) ::close(fd);
        return errno_error(Code::TempFail, "cannot spool " + name, err);
    }
    Source s;
    s.name_ = name;
    s.size_ = spooled;
    s.fd_ = tmp;
    s.spooled_ = true;
    s.spool_ = std::make_shared<Spool>();
    s.spool_->arrived = spooled;
    // The stream is unbounded (the file grows); GMime reads it through substreams of each
    // message, which have arrived whole before they are parsed.
    s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new_with_bounds(stream_fd, 0, -1));
    // No signal reaches the thread: the run's handlers stay on the thread that runs it.
    sigset_t all, was;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &was);
    static std::once_flag guard;
    std::call_once(guard, [] { pthread_atfork(wait_for_spools, nullptr, nullptr); });
    {
        std::lock_guard<std::mutex> l(spools_m);
        ++spools_running;
    }
    // MIMEURI_FAULT=no-thread (tests): as when no thread can be had.
    const char *fault = g_getenv("MIMEURI_FAULT");
    bool started = false;
    if (!fault || std::strcmp(fault, "no-thread") != 0) {
        try {
            s.spool_->thread = std::thread(&Spool::run, s.spool_.get(), in, out, name);
            started = true;
        } catch (const std::system_error &) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &was, nullptr);
    // No thread (a tight address-space limit, say: a thread's stack is reserved whole): the
    // rest is spooled here before the first message is read, as before there was a thread.
    if (!started) s.spool_->run(in, out, name);
    return s;
}

std::int64_t Source::known_size() const
{
    if (!spool_) return size_;
    // `failure` is set before `ended` is released and never again: no lock needed to read it.
    if (!spool_->ended.load(std::memory_order_acquire)) return -1;
    if (spool_->failure) return -1; // never all of it
    return size_ = spool_->arrived.load(std::memory_order_acquire);
}

std::int64_t Source::arrived() const
{
    return spool_ ? spool_->arrived.load(std::memory_order_acquire) : size_;
}

Result<std::int64_t> Source::reach(std::int64_t want) const
{
    if (!spool_) return size_;
    std::int64_t now = spool_->arrived.load(std::memory_order_acquire);
    if (now < want) {
        std::unique_lock<std::mutex> l(spool_->m);
        spool_->grew.wait(l, [&] { return spool_->arrived.load() >= want || spool_->ended.load(); });
        now = spool_->arrived.load();
        if (now < want && spool_->failure) return *spool_->failure;
    }
    return size_ = now;
}

Result<std::int64_t> Source::settle() const
{
    if (!spool_) return size_;
    auto r = reach(std::numeric_limits<std::int64_t>::max());
    if (spool_->thread.joinable()) spool_->thread.join();
    return r;
}

std::int64_t Source::size() const
{
    if (spool_) (void)settle();
    return size_;
}

Source::Source(Source &&o) noexcept
    : name_(std::move(o.name_)), size_(o.size_), spool_(std::move(o.spool_)), fd_(std::exchange(o.fd_, -1)),
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
        spool_ = std::move(o.spool_);
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
    std::int64_t total = 0;
    // A GByteArray's length is a guint: past 4 GiB it would wrap (or GLib abort), so a
    // larger --spool-threshold spools from there on.
    const std::size_t memory_max = std::min<std::size_t>(spool_threshold, G_MAXUINT - chunk.size());
    for (;;) {
        ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            g_byte_array_unref(buf);
            return errno_error(Code::IoErr, "cannot read " + name, err);
        }
        if (n == 0) break;
        total += n;
        if (buf->len + static_cast<std::size_t>(n) <= memory_max) {
            g_byte_array_append(buf, reinterpret_cast<guint8 *>(chunk.data()), static_cast<guint>(n));
            continue;
        }
        // Past the threshold: spool to an unlinked temporary file, what was read first, and
        // the rest as it arrives.
        GError *gerr = nullptr;
        char *tmpname = nullptr;
        int tmp = g_file_open_tmp("mimeuri-spool-XXXXXX", &tmpname, &gerr);
        if (tmp < 0) {
            g_byte_array_unref(buf);
            return Error::from_gerror(Code::TempFail, gerr, "cannot spool " + name);
        }
        ::unlink(tmpname);
        g_free(tmpname);
        const bool written = write_all(tmp, buf->data, buf->len) && write_all(tmp, chunk.data(), static_cast<std::size_t>(n));
        const int err = errno;
        g_byte_array_unref(buf);
        if (!written) {
            ::close(tmp);
            return errno_error(Code::TempFail, "cannot spool " + name, err);
        }
        return spool_rest(fd, tmp, total, name);
    }
    Source s;
    s.name_ = name;
    s.size_ = total;
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
    // Of a piped input still arriving, what has arrived (at least a byte, unless it has ended):
    // the splitter reads on as the sender writes, not a whole block later.
    auto arrived = reach(off + (len > 0 ? 1 : 0));
    if (!arrived) return arrived.error();
    if (off < 0 || off > *arrived) return Error{Code::Software, "bad block in " + name_};
    len = std::min(len, static_cast<std::size_t>(*arrived - off));
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
    auto arrived = src.reach(end);
    if (!arrived) return arrived.error();
    if (begin < 0 || end < begin || end > *arrived) return Error{Code::Software, "bad window in " + src.name_};
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
    return s;
}

GMimeStream *Source::stream() const
{
    if (!stream_ && bytes_) stream_ = GPtr<GMimeStream>::adopt(input_stream_new(bytes_, base_));
    return stream_.get();
}

Result<Source> Source::reopen() const
{
    if (bytes_) return Error{Code::Software, "a window is not reopened"};
    Source s;
    s.name_ = name_;
    // Still arriving (or failed): the handle shares the spool and waits for it as this one does.
    const std::int64_t whole = known_size();
    if (whole < 0) s.spool_ = spool_;
    s.size_ = whole < 0 ? arrived() : whole;
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
    s.stream_ = GPtr<GMimeStream>::adopt(g_mime_stream_fs_new_with_bounds(sfd, 0, s.spool_ ? -1 : size_));
    return s;
}

Result<std::size_t> Source::read_at(std::int64_t off, char *buf, std::size_t len) const
{
    auto arrived = reach(off + static_cast<std::int64_t>(std::min<std::size_t>(len, kMaxWant)));
    if (!arrived) return arrived.error();
    if (off < base_ || off > *arrived) return Error{Code::Software, "read outside " + name_};
    std::size_t avail = static_cast<std::size_t>(*arrived - off);
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
    auto arrived = reach(end);
    if (!arrived) return arrived.error();
    if (begin < base_ || end < begin || end > *arrived) return Error{Code::Software, "bad range in " + name_};
    std::string out(static_cast<std::size_t>(end - begin), '\0');
    auto r = read_at(begin, out.data(), out.size());
    if (!r) return r.error();
    return out;
}

} // namespace mimeuri
