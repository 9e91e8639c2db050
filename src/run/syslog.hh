// One line per message to syslog, facility mail, through the C library's syslog(3): it
// reconnects when the daemon behind /dev/log (rsyslogd, journald) was restarted, so the lines
// go on after a package upgrade restarts it.
#pragma once

#include <string>

namespace mimeuri {

class Syslog {
public:
    // openlog("mimeuri", LOG_PID, LOG_MAIL). MIMEURI_SYSLOG_SOCKET=PATH (tests): a datagram
    // socket of our own at PATH instead, connected again after a failed send, as syslog(3)
    // does with /dev/log.
    Syslog();
    ~Syslog();
    Syslog(const Syslog &) = delete;
    Syslog &operator=(const Syslog &) = delete;
    void info(const std::string &line) { send(6, line); }
    void notice(const std::string &line) { send(5, line); }
    void warning(const std::string &line) { send(4, line); }

private:
    void send(int severity, const std::string &line);
    bool connect_test_socket();
    std::string test_path_;
    int fd_{-1};
};

// Whether standard error is systemd's journal stream (JOURNAL_STREAM names its device and
// inode): what is written there is in the journal already, and must not be written twice.
bool stderr_is_journal();

} // namespace mimeuri
