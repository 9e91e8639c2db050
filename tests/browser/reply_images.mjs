// A reply's images on its archive page (issue 50, "replies whose images come back"), read by
// headless Chromium over HTTP: for each page of the manifest, every <img> with its alt text,
// whether it loaded and its natural width, and every request that left the archive's origin
// (aborted, and listed).
// Usage: node reply_images.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "origin": "http://127.0.0.1:PORT", "pages": [URL...]}
import { writeFileSync } from 'node:fs';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start();
const results = [];
for (const url of manifest.pages) {
  const page = await browser.newPage();
  const outside = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url().startsWith(manifest.origin + '/')) return req.continue();
    outside.push(req.url());
    return req.abort();
  });
  await page.goto(url, { waitUntil: 'load', timeout: 20000 });
  const images = await page.evaluate(async () =>
    Promise.all([...document.images].map(async (img) => {
      const loads = await img.decode().then(() => true, () => false);
      return { alt: img.alt, src: img.getAttribute('src'), loads, width: img.naturalWidth };
    })));
  results.push({ url, images, outside });
  await page.close();
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
