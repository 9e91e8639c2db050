// NAME
//   milter_policy: the service's policies by envelope, the [policy:NAME] groups of
//   mimeuri.conf (amavis's policy banks, opendkim's InternalHosts and ExemptDomains).
// SYNOPSIS
//   [policy:internal]
//   client = 10.0.0.0/8, 192.168.0.0/16, fd00::/8
//   passes = none
// DESCRIPTION
//   A policy holds match keys (client, sender-domain, recipient-domain, authenticated, and
//   the MTA's listener: daemon-name, daemon-port, as opendkim's MacroList and amavis's policy
//   banks by port choose) and any key [milter] takes, read over [milter] (settings.cc loads
//   one Settings per policy). A list key written "!LIST" holds where the key without it would
//   not (for recipient-domain: no recipient in LIST).
//   Every match key given must hold; the first policy in file order whose keys all hold
//   chooses the message's settings; none: the service's own. A policy chosen by recipient
//   needs every recipient of the message to match (the one copy of the message goes to
//   all of them: a policy meant for one domain's mailboxes must not decide for the others').
//   The worker chooses, from the envelope the front collected (client address from the
//   connection, MAIL FROM, each RCPT TO, the {auth_authen} macro).
#pragma once

#include "gobj.hh"

#include <gio/gio.h>

#include <optional>
#include <string>
#include <vector>

namespace mimeuri {

// One message's envelope as the MTA gave it.
struct Envelope {
    std::string client;                  // the client's address ("" unknown: no client policy matches)
    std::string sender;                  // MAIL FROM's address, angle brackets and all
    std::vector<std::string> recipients; // RCPT TO's, each
    std::string auth_authen;             // the {auth_authen} macro: the SMTP AUTH login, "" when none
    std::string daemon_name;             // the {daemon_name} macro: the listener (Postfix's master.cf service)
    std::string daemon_port;             // the {daemon_port} macro: the port it listens on
    // Whether the front asked for it: a connection negotiated while no policy was loaded
    // (before the reload that brought the first one) has none, and matches no policy.
    bool known{true};

    // On the channel from the front to a worker: fields separated by NUL bytes.
    std::string serialize() const;
    static Envelope deserialize(const std::string &bytes);
};

// What a policy's match keys ask for; an absent key asks nothing.
struct PolicyMatch {
    std::vector<GPtr<GInetAddressMask>> clients;
    std::vector<std::string> sender_domains;    // lower case; ".example.org": it and its subdomains
    std::vector<std::string> recipient_domains; // the same
    std::optional<bool> authenticated;
    std::vector<std::string> daemon_names;      // as the MTA names its listeners (case kept)
    std::vector<std::string> daemon_ports;      // decimal
    // Each list key written "!LIST": it holds where the key without "!" would not.
    bool not_client{false}, not_sender{false}, not_recipient{false}, not_daemon_name{false}, not_daemon_port{false};

    bool matches(const Envelope &env) const;
};

// The domain of an envelope address ("<a@Example.ORG.>" gives "example.org"), "" for the
// null sender or an address without one.
std::string envelope_domain(const std::string &address);

// Reads the match keys of `group` ("policy:NAME") of the key file `path`; each problem (a
// bad CIDR, an empty list, a boolean that is none, no match key at all) is appended to
// `problems` as one line naming the file and the group.
PolicyMatch read_policy_match(const std::string &path, const std::string &group, std::vector<std::string> &problems);

// The keys a policy may not set: what is the service's as a whole (its report, its workers)
// or a run's (its files), not a message's.
const std::vector<std::string> &policy_denied_keys();

} // namespace mimeuri
