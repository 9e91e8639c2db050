<?php
// Roundcube's HTML washer with remote content blocked, as its message view runs it
// (rcmail_action_mail_index::wash_html, program/actions/mail/index.php, Roundcube 1.6.5 from
// Debian's roundcube-core): rcube_washtml with allow_remote=false, blocked_src the local
// blocked.gif, inline_html (the body becomes a div), and the view's callbacks for <style>
// (copied: remote url()/@import drop the whole sheet, else rcube_utils::mod_css_styles),
// <body> (its bgcolor and text kept as a style, as the view does) and <form>. Not copied:
// the link callback (remote <link> is not an allowed element inline), the charset
// conversion (the pages are UTF-8 already) and plugins.
// Usage: php roundcube_wash.php MANIFEST   (lines "IN.html<TAB>OUT.html"); prints the seconds
// spent in wash() in all, and the messages Roundcube flagged as holding remote content.
define('RCUBE_CHARSET', 'UTF-8');
define('RCUBE_INSTALL_PATH', '/usr/share/roundcube/');
$lib = '/usr/share/roundcube/program/lib/Roundcube/';
// Its classes as Roundcube's own autoloader finds them (rcube_washtml needs rcube_utils,
// rcube_charset, html, rcube_base_replacer...).
spl_autoload_register(function ($class) use ($lib) {
    if (is_file($lib . $class . '.php')) require_once $lib . $class . '.php';
});

class View
{
    static $body_style = [];

    static function callback($tagname, $attrib, $content, $washtml)
    {
        switch ($tagname) {
        case 'form':
            return html::div('form', $content);
        case 'style':
            if (substr_count($content, "\n") > 5000) return '';
            $decoded = rcube_utils::xss_entity_decode($content);
            $stripped = preg_replace('/[^a-zA-Z\(:;]/', '', $decoded);
            $out = '';
            if (!preg_match('/expression|behavior|javascript:|import[^a]/i', $stripped)) {
                if (!$washtml->get_config('allow_remote') && preg_match('/url\((?!data:image)/', $stripped)) $washtml->extlinks = true;
                else $out = $decoded;
            }
            if (strlen($out)) $out = html::tag('style', ['type' => 'text/css'], rcube_utils::mod_css_styles($out, 'message-htmlpart', false, 'v1'));
            return $out;
        case 'body':
            $style = [];
            foreach (html::parse_attrib_string($attrib) as $name => $value) {
                $name = strtolower($name);
                if ($name == 'bgcolor' && preg_match('/^([a-z0-9#]+)$/i', $value)) $style[] = "background-color: $value";
                if ($name == 'text' && preg_match('/^([a-z0-9#]+)$/i', $value)) $style[] = "color: $value";
            }
            return html::div(['id' => 'message-htmlpart', 'style' => implode('; ', $style)], $content);
        }
        return '';
    }
}

$total = 0.0;
$flagged = 0;
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
    [$in, $out] = explode("\t", $line);
    $html = preg_replace('/^\xEF\xBB\xBF/', '', file_get_contents($in)); // the bench's byte-order mark
    $start = microtime(true);
    // What wash_html does first: the charset in a <meta> of the head.
    $meta = '<meta charset="UTF-8" />';
    $html = preg_replace('/<meta[^>]+charset=[a-z0-9_"-]+[^>]*>/Ui', '', $html);
    $html = preg_replace('/(<head[^>]*>)/Ui', '\\1' . $meta, $html, -1, $rcount);
    if (!$rcount) {
        if (($pos = stripos($html, '<html')) === false) $html = '<html><head>' . $meta . '</head>' . $html;
        else $html = substr_replace($html, '<head>' . $meta . '</head>', strpos($html, '>', $pos) + 1, 0);
    }
    $washer = new rcube_washtml([
        'show_washed' => false, 'add_comments' => true, 'allow_remote' => false,
        'blocked_src' => 'program/resources/blocked.gif', 'charset' => 'UTF-8', 'cid_map' => [],
        'html_elements' => ['body'], 'css_prefix' => 'v1', 'container_id' => 'message-htmlpart',
    ]);
    foreach (['body', 'form', 'style'] as $tag) $washer->add_callback($tag, 'View::callback');
    $washed = $washer->wash(rcube_charset::clean($html));
    $total += microtime(true) - $start;
    $flagged += $washer->extlinks ? 1 : 0;
    // As the view shows it: inside a page of its own (the reader's page is the webmail's).
    file_put_contents($out, "<!DOCTYPE html><html><head><meta charset=\"UTF-8\"></head><body>$washed</body></html>");
}
printf("%.6f %d\n", $total, $flagged);
