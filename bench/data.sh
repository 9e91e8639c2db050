#!/usr/bin/env bash
# --data=attach beside the converters applications use (issue 40): PHPMailer's msgHTML
# (Debian's libphp-phpmailer, php-cli) and nodemailer's attachDataUrls (npm, installed into
# bench/.node) on the same HTML pages (bench/make_data.py: data: images in every place the
# issue lists). For each: the data: images left in the HTML it sends, the parts it made, and
# the time for all the pages (interleaved rounds, whole processes: start-up included).
# mimeuri's counts are read from its output by Python's email, not from its report.
# Usage: bash bench/data.sh [BUILD_DIR]   (RUNS=5, COUNT=200 pages)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
count=${COUNT:-200}
d=$out/data
rm -rf "$d"
python3 bench/make_data.py "$d" "$count"
if [ ! -d bench/.node/node_modules/nodemailer ] || [ ! -d bench/.node/node_modules/mailparser ]; then
  mkdir -p bench/.node
  (cd bench/.node && npm install --no-audit --no-fund --silent nodemailer@7.0.5 mailparser@3.14.2 >/dev/null)
fi
export NODE_PATH=$PWD/bench/.node/node_modules
command -v php >/dev/null && [ -f /usr/share/php/libphp-phpmailer/autoload.php ] ||
  { echo "needs php-cli and libphp-phpmailer (apt-get install php-cli libphp-phpmailer)"; exit 1; }
echo "pages: $count, $(du -b "$d/all.mbox" | cut -f1) bytes of mbox; PHPMailer $(dpkg-query -W -f '${Version}' libphp-phpmailer)," \
     "nodemailer $(node -p 'require("nodemailer/package.json").version'), node $(node --version), php $(php -r 'echo PHP_VERSION;')"
echo "load before: $(uptime)"
printf '%-12s %6s %10s %6s\n' tool pages data-left parts
read -r f l p _ < <(php bench/data_phpmailer.php "$d"/*.html); printf '%-12s %6s %10s %6s\n' PHPMailer "$f" "$l" "$p"
read -r f l p _ < <(node bench/data_nodemailer.js "$d"/*.html); printf '%-12s %6s %10s %6s\n' nodemailer "$f" "$l" "$p"
"$bin" --data=attach "$d/all.mbox" > "$d/out.mbox"
python3 - "$d/out.mbox" <<'PY'
import mailbox, re, sys, email.policy
left = parts = pages = 0
for m in mailbox.mbox(sys.argv[1], factory=lambda f: __import__("email").message_from_binary_file(f, policy=email.policy.default)):
    pages += 1
    for p in m.walk():
        if p.get_content_type() == "text/html":
            left += len(re.findall(r"data:image/", p.get_content(), re.I))  # as the other two are counted
        elif p["Content-ID"] and p.get_content_disposition() == "inline":
            parts += 1
print(f"{'mimeuri':<12} {pages:>6} {left:>10} {parts:>6}")
PY
echo
echo "time for all $count pages, $runs interleaved rounds: label median best worst cpu_median rss_KiB"
rounds_median "$runs" \
  PHPMailer "php bench/data_phpmailer.php $d/*.html" \
  nodemailer "TIME_ONLY=1 node bench/data_nodemailer.js $d/*.html" \
  mimeuri "$bin --data=attach $d/all.mbox"
echo "load after: $(uptime)"
