# Dovecot Pigeonhole: rewrite each message with mimeuri (vnd.dovecot.filter).
# Used as a test, a failing filter leaves the message as it came, and it is kept.
require ["vnd.dovecot.filter"];
if filter "mimeuri" {
  keep;
}
