// Opens pages of an extracted archive in headless Chromium, as files, and says what each did:
// every request that is not file: or data: (aborted and counted: none may leave), dialogs,
// whether a script set the global __xss, and what the DOM holds that could run (script-like
// elements, on* attributes, javascript:/vbscript: URLs as the browser parses them, forms,
// refreshes), and whether the page's first <head> element is its Content-Security-Policy.
// Usage: node hostile_pages.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "pages": [PATH...], "shots": [[PATH, PNG]...]}
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

// No traffic of the browser's own, so that every request counted is the page's.
const { manifest, resultsPath, browser } = await start([
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-default-apps', '--disable-domain-reliability']);

const results = [];
for (const path of manifest.pages) {
  const page = await browser.newPage();
  const requests = [], dialogs = [], refused = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u.startsWith('file:') || u.startsWith('data:')) req.continue();
    else {
      requests.push(u.slice(0, 160));
      req.abort();
    }
  });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) refused.push(m.text().slice(0, 160)); });
  let error = null, dom = null;
  try {
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 20000 });
    // Handlers that need a user: hover, focus and click every element (a click on a link,
    // an image map or a button would leave the page: their URLs are checked as parsed).
    await page.evaluate(() => {
      for (const el of document.querySelectorAll('body *')) {
        for (const t of ['mouseover', 'mouseenter', 'focus', 'animationstart'])
          el.dispatchEvent(new Event(t, { bubbles: true }));
        if (!el.closest('a, map') && !/^(BUTTON|INPUT|IMG|AREA)$/.test(el.tagName)) el.click?.();
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    dom = await page.evaluate(() => {
      const out = { xss: typeof window.__xss === 'undefined' ? null : String(window.__xss), active: [], handlers: [],
                    scriptUrls: [], forms: document.querySelectorAll('form').length, cspFirst: false };
      const first = document.head && document.head.firstElementChild;
      out.cspFirst = !!first && first.tagName === 'META' &&
        /^content-security-policy$/i.test(first.getAttribute('http-equiv') || '') &&
        /default-src 'none'/.test(first.getAttribute('content') || '');
      for (const el of document.querySelectorAll('script, iframe, frame, frameset, object, embed, applet, base, portal, meta[http-equiv="refresh" i]'))
        out.active.push(el.outerHTML.slice(0, 100));
      for (const el of document.querySelectorAll('*')) {
        for (const a of el.attributes) {
          if (/^on/i.test(a.name)) out.handlers.push(`${el.tagName} ${a.name}`);
          if (/^(href|src|action|formaction|data|xlink:href|poster|background|codebase|cite)$/i.test(a.name)) {
            let proto = '';
            try { proto = new URL(a.value, location.href).protocol; } catch (e) { /* not a URL */ }
            if (/^(javascript|vbscript|livescript):$/.test(proto) ||
                (proto === 'data:' && /^(href|xlink:href|action|formaction)$/i.test(a.name)))
              out.scriptUrls.push(`${el.tagName} ${a.name}=${a.value.slice(0, 60)}`);
          }
        }
      }
      return out;
    });
  } catch (e) {
    error = String(e).slice(0, 300);
  }
  results.push({ path, error, requests, dialogs, refused: refused.length, dom });
  await page.close();
}
// Screenshots for the test log.
for (const [path, png] of manifest.shots || []) {
  const page = await browser.newPage();
  await page.setRequestInterception(true);
  page.on('request', (req) => (req.url().startsWith('file:') || req.url().startsWith('data:') ? req.continue() : req.abort()));
  try {
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 20000 });
    await page.screenshot({ path: png, fullPage: true });
  } catch (e) { /* the crawl says what is wrong with the page */ }
  await page.close();
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
