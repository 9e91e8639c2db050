// mimeuri --milter=SOCKET: a libmilter service for Postfix and Sendmail.
//
// Three kinds of process:
// - the supervisor (the process started): opens the socket, drops to --user, holds the
//   configuration (reloaded on SIGHUP), and forks the others; single-threaded, so forking
//   is safe. SIGTERM stops the service; a front that dies is started again on the same
//   listening socket.
// - the front: libmilter's threads, one per MTA connection. It collects each message
//   (in memory up to --spool-threshold, in an unlinked temporary file beyond), asks the
//   supervisor for a worker, and turns the worker's plan into libmilter requests. No
//   GMime here.
// - a worker per message, forked by the supervisor: the engine plans the message and the
//   worker hands the plan back. A crash or a hang (killed past --max-time) fails only that
//   message, per --on-error.
#pragma once

#include "options.hh"
#include "pass.hh"
#include "registry.hh"

#include <memory>
#include <vector>

namespace mimeuri {

// Runs the service until SIGTERM; returns the exit status. argv is kept to read the
// configuration again on SIGHUP.
int run_milter(int argc, char **argv, const Options &opts, std::vector<std::unique_ptr<Pass>> passes);

} // namespace mimeuri
