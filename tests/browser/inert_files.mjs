// Opens each URL of the manifest in headless Chromium and says whether a script of it ran:
// the global __xss set, or a dialog. A URL Chromium takes for a download (no document) ran
// nothing. Four tabs at a time (the pages are small; the time is Chromium's round trips).
// Usage: node inert_files.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "urls": [URL...]}
import { writeFileSync } from 'node:fs';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start(['--disable-background-networking', '--disable-component-update']);
const results = [];
let next = 0;
async function tab() {
  const page = await browser.newPage();
  let dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  while (next < manifest.urls.length) {
    const url = manifest.urls[next++];
    dialogs = [];
    let xss = null, error = null;
    try {
      await page.goto(url, { waitUntil: 'load', timeout: 10000 });
      xss = await page.evaluate(() => (typeof window.__xss === 'undefined' ? null : String(window.__xss)));
    } catch (e) {
      error = String(e).slice(0, 160); // a download aborts the navigation: nothing ran
    }
    results.push({ url, xss, error, dialogs: [...dialogs] });
    if (results.length % 1000 === 0) console.error(`${results.length} of ${manifest.urls.length}`);
  }
  await page.close();
}
await Promise.all([tab(), tab(), tab(), tab()]);
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
