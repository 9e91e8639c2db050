// `mimeuri archive`: the files of the archive, each written whole under a temporary name
// and renamed into place, so that a reader (or a run killed at any point) never sees half
// of one. Everything is opened relative to the archive folder's descriptor and no symbolic
// link is followed.
#pragma once

#include "result.hh"

#include <optional>
#include <string>
#include <string_view>

namespace mimeuri::archive {

class Folder {
public:
    // The archive folder, made (0755) if missing; refused when it is a symbolic link or not
    // a directory.
    static Result<Folder> open(const std::string &path);
    Folder(Folder &&o) noexcept : path_(std::move(o.path_)), fd_(o.fd_), scratch_fd_(o.scratch_fd_)
    {
        o.fd_ = -1;
        o.scratch_fd_ = -1;
    }
    Folder(const Folder &) = delete;
    Folder &operator=(const Folder &) = delete;
    Folder &operator=(Folder &&) = delete;
    ~Folder();

    const std::string &path() const { return path_; }
    int fd() const { return fd_; }

    // From now on put() writes its temporary files in rel (a folder under this one, made and
    // emptied here) instead of beside their targets, so that a run killed between a write and
    // its rename leaves nothing in the published tree. Only under the run's lock: another
    // run's temporaries would be removed.
    Status use_scratch(const std::string &rel);
    // rel ("a/b.html": one level of folder at most, made as needed) replaced by bytes through
    // a temporary file and a rename; when it already holds exactly those bytes it is left
    // alone (its mtime too) and false is returned.
    Result<bool> put(const std::string &rel, std::string_view bytes) const;
    // rel's bytes, or nullopt when it does not exist.
    Result<std::optional<std::string>> get(const std::string &rel) const;
    bool exists(const std::string &rel) const;
    // A file or a whole folder (not following links) removed; missing is fine.
    Status remove(const std::string &rel) const;
    // from (a folder) renamed to to; a folder already at to is first renamed to trash, then removed.
    Status move_folder(const std::string &from, const std::string &to, const std::string &trash) const;
    Status mkdir(const std::string &rel) const;
    // Everything written reaches the disk before the journal says it is done (syncfs).
    Status sync() const;

private:
    Folder(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::string path_;
    int fd_{-1};
    int scratch_fd_{-1};
};

// MIMEURI_ARCHIVE_KILL=STEP: the run kills itself (SIGKILL) at that step, for the tests.
void maybe_killed(const char *step);

// Removes the folder at (dirfd, name) and everything in it, following no link.
Status remove_tree(int dirfd, const std::string &name);

} // namespace mimeuri::archive
