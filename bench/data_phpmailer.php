<?php
// PHPMailer's msgHTML over each HTML file named (Debian's libphp-phpmailer): builds the
// message (preSend) and prints one line: files, data: images left in the HTML it sends,
// parts it embedded, seconds. The HTML scanned for what is left is the Body as built.
require '/usr/share/php/libphp-phpmailer/autoload.php';
use PHPMailer\PHPMailer\PHPMailer;
$left = 0; $parts = 0; $t0 = microtime(true);
foreach (array_slice($argv, 1) as $f) {
    $m = new PHPMailer(true);
    $m->setFrom('bench@example.org');
    $m->addAddress('you@example.net');
    $m->Subject = 'page';
    $m->msgHTML(file_get_contents($f));
    $m->preSend();
    $parts += count($m->getAttachments());
    $left += preg_match_all('/data:image\//i', $m->Body);
}
printf("%d %d %d %.3f\n", $argc - 1, $left, $parts, microtime(true) - $t0);
