// An offloaded attachment's link, followed in headless Chromium (issue 51): the extracted page
// of the offloaded message is opened as a file; what it offers for the part is read (its
// links and text); a link to the stored file, where the page has one, is clicked; and the
// link the message's note gives (what a mail reader shows) is opened. The server sends the
// file as a download (Content-Disposition: attachment), as a user clicking it gets it:
// Chromium saves it into the manifest's folders, for offload_link.py to compare with the
// stored bytes.
// Usage: node offload_link.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "page": PATH, "url": URL, "clicked": DIR, "opened": DIR}
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start();
const cdp = await browser.target().createCDPSession();

// Navigates as go() does with downloads saved into dir; the download's state at its end.
async function download(dir, go) {
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, eventsEnabled: true });
  const done = new Promise((resolve) => {
    const seen = (e) => {
      if (e.state === 'completed' || e.state === 'canceled') {
        cdp.off('Browser.downloadProgress', seen);
        resolve(e.state);
      }
    };
    cdp.on('Browser.downloadProgress', seen);
  });
  await go().catch(() => {}); // a navigation that becomes a download is aborted
  return await Promise.race([done, new Promise((resolve) => setTimeout(() => resolve('timeout'), 20000))]);
}
const page = await browser.newPage();
// Only the page's own files and the store's server on 127.0.0.1: nothing else may load.
const others = [];
await page.setRequestInterception(true);
page.on('request', (req) => {
  const u = req.url();
  if (u.startsWith('file:') || u.startsWith('http://127.0.0.1:')) return req.continue();
  others.push(u);
  req.abort();
});
await page.goto(pathToFileURL(manifest.page).href, { waitUntil: 'load', timeout: 20000 });
const offered = await page.evaluate((url) => ({
  links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
  parts: [...document.querySelectorAll('.mimeuri-parts li')].map((li) => li.textContent),
  urlAsText: document.body.innerText.includes(url),
}), manifest.url);
let clicked = null;
if (offered.links.includes(manifest.url)) {
  // The link as a user follows it: a click.
  clicked = await download(manifest.clicked, () =>
    page.evaluate((url) => [...document.querySelectorAll('a[href]')].find((a) => a.href === url).click(), manifest.url));
}
const note = await browser.newPage();
const opened = await download(manifest.opened, () => note.goto(manifest.url, { timeout: 20000 }));
await browser.close();
writeFileSync(resultsPath, JSON.stringify({ offered, clicked, opened, others }));
