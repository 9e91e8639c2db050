// A mail's <body> colours and background on its archive page, against the mail itself, both
// read by headless Chromium (the second reader): for each case the original HTML and the
// extracted page are opened as files, network off; the original's body and the page's <div>
// in its place (the parent of the element with id "m") give their computed background colour,
// the text colour of #m, and whether a background image is set and loads.
// Usage: node body_colours.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "cases": [{"id", "orig", "page"}]}
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start();

async function colours(path, onBody) {
  const page = await browser.newPage();
  await page.setRequestInterception(true);
  page.on('request', (req) => (req.url().startsWith('file:') ? req.continue() : req.abort()));
  await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 20000 });
  const r = await page.evaluate(async (onBody) => {
    const m = document.getElementById('m');
    const box = onBody ? document.body : m.parentElement;
    const s = getComputedStyle(box);
    const bg = s.backgroundImage;
    let loads = null;
    const u = /^url\("(.*)"\)$/.exec(bg);
    if (u) {
      const img = new Image();
      img.src = u[1];
      loads = await img.decode().then(() => img.naturalWidth > 0, () => false);
    }
    return { background: s.backgroundColor, color: getComputedStyle(m).color, image: bg !== 'none', loads };
  }, onBody);
  await page.close();
  return r;
}

const results = [];
for (const c of manifest.cases) {
  results.push({ id: c.id, orig: await colours(c.orig, true), page: await colours(c.page, false) });
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
