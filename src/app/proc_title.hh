// Process titles by role and state (issue 54 item 3), as Postfix's children ("smtpd -n smtp
// -t inet") and amavis's ("amavisd (ch4-avail)") have them: the service's supervisor keeps its
// command line (systemd, pkill -f and the logrotate snippet find it so), its front and each
// worker say what they are and, for a worker, what it is doing, in `ps` (the command line,
// written over argv's memory) and in `top` (the 15-byte name, prctl PR_SET_NAME).
//   init()  from main: the memory argv's strings hold, the most a title can use
//   set()   the title: "mimeuri: worker (planning 3 of 1000)"; cut to the room argv left
#pragma once

#include <string>

namespace mimeuri::proc_title {

void init(int argc, char **argv);
// name: the process name `top` shows (15 bytes at most, "mimeuri-worker"); empty keeps it.
void set(const std::string &title, const char *name = nullptr);

} // namespace mimeuri::proc_title
