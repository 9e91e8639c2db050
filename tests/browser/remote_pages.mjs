// Opens HTML files in headless Chromium, images on, and says what each asked the network
// for: every request that is not file:, data:, cid:, mid:, about: or blob:. A request to the page's `allow` prefix (a
// camo on 127.0.0.1) goes through; every other is aborted and counted. With `images`, what
// the page's <img> elements show (their natural size: 0 for none). With "layout" in the
// manifest (bench/remote_peers.py), also the page's text (innerText), how many <img> keep a
// box (a rendered width and height above 0) and the page's height.
// Usage: node remote_pages.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "pages": [{"path": PATH, "allow": PREFIX|null}...]}
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

// No traffic of the browser's own, so that every request counted is the page's.
const { manifest, resultsPath, browser } = await start([
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-default-apps', '--disable-domain-reliability', '--autoplay-policy=no-user-gesture-required']);

const results = [];
for (const { path, allow } of manifest.pages) {
  const page = await browser.newPage();
  const requests = [], allowed = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u.startsWith('file:') || u.startsWith('data:')) return req.continue();
    // A part of the message (cid:, mid:) is no network request: a page opened as a file
    // cannot resolve it.
    if (/^(cid|mid|about|blob):/i.test(u)) return req.abort();
    if (allow && u.startsWith(allow)) {
      allowed.push(u.slice(0, 300));
      return req.continue();
    }
    requests.push(u.slice(0, 300));
    req.abort();
  });
  let error = null, images = [], layout = {};
  try {
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 10000 });
    await new Promise((r) => setTimeout(r, 500));
    images = await page.evaluate(() => [...document.images].map((i) => ({ alt: i.alt, w: i.naturalWidth, src: i.currentSrc })));
    if (manifest.layout) {
      layout = await page.evaluate(() => ({
        text: document.body ? document.body.innerText : '',
        boxes: [...document.images].filter((i) => { const r = i.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
        height: document.documentElement.scrollHeight,
        href: location.href, // a page that navigated away (meta refresh) is not the message's
      }));
      images = [];
    }
  } catch (e) {
    error = String(e).slice(0, 300);
  }
  results.push({ path, requests, allowed, images, error, ...layout });
  await page.close();
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
