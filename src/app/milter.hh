// mimeuri --milter=SOCKET: a libmilter service for Postfix and Sendmail.
//
// Three kinds of process:
// - the supervisor (the process started): opens the socket, drops to --user, holds the
//   configuration (reloaded on SIGHUP), and forks the others; single-threaded, so forking
//   is safe. SIGTERM stops the service; a front that dies is started again on the same
//   listening socket.
// - the front: libmilter's threads, one per MTA connection. It collects each message
//   (in memory up to --spool-threshold, in an unlinked temporary file beyond), hands it to a
//   free worker (forked by the supervisor), and turns the worker's plan into libmilter requests. No
//   GMime here.
// - a worker per message, forked by the supervisor: the engine plans the message and the
//   worker hands the plan back. A crash or a hang (killed past --max-time) fails only that
//   message, per --on-error.
// A file per role: milter.cc (the supervisor), milter_front.cc, milter_message.cc,
// milter_dispatch.cc, milter_worker.cc; milter_chan.cc and milter_socket.cc between them
// (docs/design.md).
#pragma once

#include "settings.hh"

#include <memory>

namespace mimeuri {

// Runs the service until SIGTERM with the settings `first` that `loader` made; returns the
// exit status. On SIGHUP it loads again with the same loader (the same files, the same
// command line); the socket, the user, --jobs and --spool-threshold keep their first values.
int run_milter(const SettingsLoader &loader, std::unique_ptr<Settings> first);

} // namespace mimeuri
