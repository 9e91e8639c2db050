// The plan on the wire (engine.hh: serialize, deserialize): what a worker process sends back
// for a message (--jobs, the milter service) and what the run holds in its spool. Every
// field of the Plan, of its report, its edits and its work at take time, by the field lists
// declared beside each type (Plan::fields, MessageReport::fields, ...), read and written by
// wire.hh, so the two directions cannot drift apart and an enum value a worker sends is
// checked, never cast.
#include "engine.hh"
#include "streamed_body.hh"
#include "wire.hh"

namespace mimeuri {

std::string serialize(const Plan &p) { return wire::encode(p); }

Plan deserialize(std::string bytes) { return wire::decode<Plan>(std::move(bytes)); }

} // namespace mimeuri
