// Signed content is evidence. Before any pass runs, each signature a message carries is found
// and, unless the user asked for rewriting, protected in the message context, so that no pass
// can change what it covers:
// - RFC 1847 multipart/signed (S/MIME, RFC 8551; PGP/MIME, RFC 3156), S/MIME's
//   application/pkcs7-mime, and multipart/encrypted: the whole entity, headers and body;
// - DKIM-Signature (RFC 6376) and ARC-Message-Signature (RFC 8617 4.1.2) of the message and of
//   every embedded message/rfc822, while the body hash still matches (bh=): that message's
//   body, and every field whose name the signature lists in h=.
#pragma once

#include "dkim_body_hash.hh"
#include "message.hh"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mimeuri {

enum class SignedMode { Keep, Rewrite };

namespace dkim {

// The tags of a DKIM-Signature or ARC-Message-Signature field value (RFC 6376 3.2).
struct Signature {
    std::string a, bh, d, s, c;
    std::vector<std::string> h; // lower-case field names, in order
    std::optional<std::uint64_t> l;
};
std::optional<Signature> parse(std::string_view value);

} // namespace dkim

// A part with two or more Content-Type fields that disagree is read one way by GMime (the
// last field) and another by Python's email and Thunderbird (the first): no rule can make
// every reader see the same structure after an edit. Such a part is kept whole (protection
// reason "content-type-conflict") and reported, for every pass alike.
void protect_conflicting_types(MessageContext &ctx);

// What analyse() found in one message: its signatures and the protections that keep them.
class Signatures {
public:
    static Signatures analyse(MessageContext &ctx, SignedMode mode);
    // The report's "signatures" member: each signature's state once the passes have run.
    void report(MessageContext &ctx) const;

private:
    struct Found {
        std::string kind, part;
        SignatureEntry::State state{SignatureEntry::State::Unverifiable};
        std::string detail, domain, selector;
        std::vector<std::size_t> protections;
    };
    // analyse()'s steps: the DKIM and ARC signatures of one message (body_at: the node whose
    // entity it is, -1 for the top), and an entity kept whole (a signed or encrypted one).
    void message_signatures(MessageContext &ctx, GMimeMessage *msg, const std::string &part, int body_at);
    void crypto_entity(MessageContext &ctx, std::size_t i, const std::string &kind, bool inline_pgp);
    std::vector<Found> found_;
    SignedMode mode_{SignedMode::Keep};
};

} // namespace mimeuri
