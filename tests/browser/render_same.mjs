// Screenshots of pairs of HTML pages in headless Chromium, compared pixel for pixel: each page
// opened as a file with the network off, at one viewport, after its images loaded; says for
// each pair whether the two screenshots are the same bytes (the same encoder over the same
// pixels), and how many of each page's images did not load.
// Usage: node render_same.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "pairs": [{"id", "a", "b"}], "shots": DIR (screenshots of pairs that differ)}
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start(['--force-device-scale-factor=1', '--hide-scrollbars']);

async function shot(path) {
  const page = await browser.newPage();
  await page.setViewport({ width: 640, height: 400 });
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u.startsWith('file:') || u.startsWith('data:')) req.continue();
    else req.abort();
  });
  await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 20000 });
  const broken = await page.evaluate(async () => {
    await Promise.all([...document.images].map((img) => (img.complete ? null : img.decode().catch(() => null))));
    return [...document.images].filter((img) => !img.complete || img.naturalWidth === 0).length;
  });
  const png = await page.screenshot({ type: 'png', fullPage: true });
  await page.close();
  return { png: Buffer.from(png), broken };
}

const results = [];
for (const p of manifest.pairs) {
  const a = await shot(p.a);
  const b = await shot(p.b);
  const same = a.png.equals(b.png);
  if (!same && manifest.shots) {
    writeFileSync(`${manifest.shots}/${p.id}-a.png`, a.png);
    writeFileSync(`${manifest.shots}/${p.id}-b.png`, b.png);
  }
  results.push({ id: p.id, same, broken_a: a.broken, broken_b: b.broken });
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify(results));
