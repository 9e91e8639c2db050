# Throw-away Postfix instances (loopback only) for the tests and bench/milter.sh. Needs root
# and the postfix package. Each instance lives in a folder of its own: etc/ (main.cf,
# master.cf, aliases), queue/, data/, out/ (bob.mbox, carol/Maildir/, postmaster.mbox),
# maillog.

# pf_setup DIR PORT MAIN_EXTRA SMTPD_OPTIONS MASTER_EXTRA: writes the instance's
# configuration and starts it; returns once its smtpd accepts connections.
pf_setup() {
  local P=$1 port=$2 main_extra=$3 smtpd_options=$4 master_extra=$5
  mkdir -p "$P/etc" "$P/queue" "$P/data" "$P/out/carol"
  chown postfix "$P/data"; chown -R nobody "$P/out"
  cat > "$P/etc/main.cf" <<EOC
compatibility_level = 3.6
queue_directory = $P/queue
data_directory = $P/data
mail_owner = postfix
setgid_group = postdrop
myhostname = localhost.localdomain
mydomain = localdomain
myorigin = \$myhostname
mydestination = localhost, localhost.localdomain
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
relayhost =
default_transport = error:external delivery disabled in test
relay_transport = error:external delivery disabled in test
alias_maps = hash:$P/etc/aliases
alias_database = hash:$P/etc/aliases
local_recipient_maps = \$alias_maps
biff = no
mailbox_size_limit = 0
message_size_limit = 0
maillog_file = $P/maillog
maillog_file_prefixes = $(dirname "$P")
queue_run_delay = 300s
smtpd_error_sleep_time = 0
$main_extra
EOC
  printf 'bob: %s/out/bob.mbox\ncarol: %s/out/carol/Maildir/\npostmaster: %s/out/postmaster.mbox\n' "$P" "$P" "$P" > "$P/etc/aliases"
  cat > "$P/etc/master.cf" <<EOC
127.0.0.1:$port inet n - n - - smtpd $smtpd_options
pickup    unix  n - n 60 1 pickup
cleanup   unix  n - n -  0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n -  - trivial-rewrite
bounce    unix  - - n -  0 bounce
defer     unix  - - n -  0 bounce
trace     unix  - - n -  0 bounce
verify    unix  - - n -  1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n -  - proxymap
showq     unix  n - n -  - showq
error     unix  - - n -  - error
retry     unix  - - n -  - error
discard   unix  - - n -  - discard
local     unix  - n n -  - local
anvil     unix  - - n -  1 anvil
scache    unix  - - n -  1 scache
postlog   unix-dgram n - n - 1 postlogd
$master_extra
EOC
  postalias -c "$P/etc" "$P/etc/aliases"
  # sendmail with a non-default configuration folder (run by root, or by nobody from a pipe
  # filter): postdrop takes it only when /etc/postfix/main.cf lists it (pf_restore undoes it).
  [ -e /etc/postfix/main.cf ] || { echo "# mimeuri integration test" > /etc/postfix/main.cf; PF_CREATED_MAIN_CF=1; }
  postconf -c /etc/postfix -e "alternate_config_directories = $P/etc"
  touch -d '1 minute ago' "$P/etc/main.cf"   # a "hot" main.cf costs every command 2 s
  script -qec "postfix -c $P/etc check" /dev/null >/dev/null
  postfix -c "$P/etc" start >/dev/null 2>&1
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# pf_stop DIR: SIGTERM to the instance's master; waits until it is gone (or a zombie).
pf_stop() {
  local pidfile=$1/queue/pid/master.pid
  [ -f "$pidfile" ] || return 0
  local pid st; pid=$(tr -d ' ' < "$pidfile")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 50); do
    st=$(ps -o stat= -p "$pid" 2>/dev/null); [ -z "$st" ] || [ "${st#Z}" != "$st" ] && break; sleep 0.1
  done
}

# Undoes pf_setup's change to /etc/postfix/main.cf.
pf_restore() {
  postconf -c /etc/postfix -X alternate_config_directories 2>/dev/null
  [ -n "${PF_CREATED_MAIN_CF:-}" ] && rm -f /etc/postfix/main.cf
  return 0
}
